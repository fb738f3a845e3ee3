"""Daily leaderboards in Redis sorted sets (``protocol/DAILY.md``).

One board per game per day, with an entry for every ranked attempt from its
start: a playing attempt's entry follows its score, an ended one's is final.
Every member has score 0 and sorts by its text (Redis orders equal scores
lexicographically), which encodes the ranking order as fixed-width fields,
best first::

    <999 - score:03d>.<0 if won else 1>.<moves:08d>.<elapsed_ms:012d>.<finished_at:013d>.<player_id>

So: more cards on the foundations first; then a win before a non-win; then
fewer moves; then less elapsed time; then the earlier finish (an attempt not
finished counts as finishing last).  The player id only makes members unique.
``ZRANK`` gives a player's rank in O(log N).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from server.players import Players

#: Entry statuses: an attempt still on, or how it ended.  Publicly a ``playing`` entry
#: of a closed day reads ``closed`` (the close ended it).
STATUSES = ("playing", "won", "stuck", "resigned")
#: The finish time that sorts after every real one (an attempt that has not finished).
NOT_FINISHED = 10**13 - 1
#: Closed days the post-close audit (``server.operator.postclose``) takes: a closed board within
#: them shows the entries it has not reached as ``review: "pending"``.
REVIEW_WINDOW_DAYS = 7
#: Seconds a board's marks (voids, hidden entries) live when the board has no lifetime
#: (the boards' own: ``server.store.RANKED_TTL``).
MARK_TTL = 90 * 24 * 3600

# KEYS: board, entries, voided, hidden.  ARGV: member, player id, entry JSON (with its
# member), moves, ended ('1' or '0'), ttl.  A playing entry is replaced by one made after
# more moves, or by the attempt's end; an ended entry is final.  An entry voided or hidden
# by an operator (``server.operator``) is kept but stays off the ranking.
RECORD_SCRIPT = """
local old = redis.call('HGET', KEYS[2], ARGV[2])
if old then
  local entry = cjson.decode(old)
  if entry.status ~= 'playing' then return 0 end
  local moves = tonumber(ARGV[4])
  if moves < entry.moves or (moves == entry.moves and ARGV[5] == '0') then return 0 end
  redis.call('ZREM', KEYS[1], entry.member)
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local marked = redis.call('HEXISTS', KEYS[3], ARGV[2]) + redis.call('HEXISTS', KEYS[4], ARGV[2])
if marked == 0 then redis.call('ZADD', KEYS[1], 0, ARGV[1]) end
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('EXPIRE', KEYS[2], ARGV[6])
return 1
"""

# KEYS: board, entries, this mark's hash, the other mark's hash.  ARGV: player id, the
# mark's value, its lifetime if the board has none.  Marks an entry voided or hidden (its
# player suspended): off the ranking, kept in entries (a second mark of the same kind
# changes nothing).  Returns 1 when the mark is new.
MARK_SCRIPT = """
local new = redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[2])
local ttl = redis.call('TTL', KEYS[2])
redis.call('EXPIRE', KEYS[3], ttl > 0 and ttl or tonumber(ARGV[3]))
local value = redis.call('HGET', KEYS[2], ARGV[1])
if value then redis.call('ZREM', KEYS[1], cjson.decode(value).member) end
return new
"""

# KEYS: as MARK_SCRIPT.  ARGV: player id.  Takes the mark off; the entry is ranked again
# unless the other mark holds it.  Returns 1 when there was a mark.
UNMARK_SCRIPT = """
local removed = redis.call('HDEL', KEYS[3], ARGV[1])
local value = redis.call('HGET', KEYS[2], ARGV[1])
if value and redis.call('HEXISTS', KEYS[4], ARGV[1]) == 0 then
  redis.call('ZADD', KEYS[1], 0, cjson.decode(value).member)
end
return removed
"""


@dataclass(frozen=True)
class Entry:
    """A ranked attempt on its day's board.

    For an ended attempt ``moves`` and ``elapsed_ms`` (from its start) are those of
    its end; for one still playing, those at which it reached its score, and
    ``finished_at`` is 0.
    """

    player_id: str
    game_id: str
    score: int
    won: bool
    moves: int
    elapsed_ms: int
    finished_at: int
    status: str = ""

    def __post_init__(self) -> None:
        if not self.status:  # an entry written before entries had a status: an ended one
            object.__setattr__(self, "status", "won" if self.won else "resigned")

    @property
    def ended(self) -> bool:
        return self.status != "playing"

    def member(self) -> str:
        finished = self.finished_at if self.ended else NOT_FINISHED
        return (
            f"{999 - self.score:03d}.{0 if self.won else 1}.{self.moves:08d}."
            f"{self.elapsed_ms:012d}.{finished:013d}.{self.player_id}"
        )

    def public(
        self, rank: int, linked: bool, day_closed: bool, review: str | None = None
    ) -> dict[str, Any]:
        """The entry as the routes show it; ``linked``: with its game's id and replay
        (not for others while the day is open: that would show them the deal)."""
        # Field by field, not dataclasses.asdict (which deep-copies every value): that
        # was some 40 % of the CPU time of a top(100) read.
        status = "closed" if day_closed and not self.ended else self.status
        return {
            "rank": rank,
            "player_id": self.player_id,
            "game_id": self.game_id if linked else None,
            "status": status,
            "score": self.score,
            "won": self.won,
            "moves": self.moves,
            "elapsed_ms": self.elapsed_ms,
            "finished_at": self.finished_at if self.ended else None,
            "replay": f"/v1/games/{self.game_id}/replay" if linked else None,
            "review": review,
        }

    @classmethod
    def from_json(cls, text: bytes | str) -> Entry:
        fields = json.loads(text)
        fields.pop("member", None)
        return cls(**fields)


def board_keys(game: str, date: str) -> list[str]:
    tag = f"{{lb:{game}:{date}}}"
    return [f"lb:{tag}", f"lb:{tag}:entries"]


def mark_keys(game: str, date: str) -> list[str]:
    """The board's marks (same slot): ``voided`` (player id -> the void, JSON) and
    ``hidden`` (player id -> why: its player is suspended)."""
    tag = f"{{lb:{game}:{date}}}"
    return [f"lb:{tag}:voided", f"lb:{tag}:hidden"]


def player_of_member(member: bytes | str) -> str:
    text = member.decode() if isinstance(member, bytes) else member
    return text.rsplit(".", 1)[1]


def review_keys(game: str, date: str) -> list[str]:
    """The board's review (``server.operator.review``), same slot: states, items, done."""
    tag = f"{{lb:{game}:{date}}}"
    return [f"lb:{tag}:review", f"lb:{tag}:reviews", f"lb:{tag}:reviewed"]


class Leaderboards:
    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._record_sha = hashlib.sha1(RECORD_SCRIPT.encode()).hexdigest()
        self._mark = redis.register_script(MARK_SCRIPT)
        self._unmark = redis.register_script(UNMARK_SCRIPT)
        self.players = Players(redis)

    async def mark(self, game: str, date: str, player_id: str, kind: str, value: str) -> bool:
        """Take the player's entry off the ranking as ``kind`` (``voided`` or ``hidden``)
        says, at once for every reader; False when it was so marked already."""
        voided, hidden = mark_keys(game, date)
        marks = [voided, hidden] if kind == "voided" else [hidden, voided]
        keys = [*board_keys(game, date), *marks]
        return bool(await self._mark(keys=keys, args=[player_id, value, MARK_TTL]))

    async def unmark(self, game: str, date: str, player_id: str, kind: str) -> bool:
        """Lift a mark: the entry is ranked again unless the other mark holds it."""
        voided, hidden = mark_keys(game, date)
        marks = [voided, hidden] if kind == "voided" else [hidden, voided]
        keys = [*board_keys(game, date), *marks]
        return bool(await self._unmark(keys=keys, args=[player_id]))

    async def voids(self, game: str, date: str, player_ids: list[str]) -> list[str | None]:
        """Each player's void on the board (its JSON), None where there is none."""
        if not player_ids:
            return []
        values = await self.redis.hmget(mark_keys(game, date)[0], player_ids)
        return [None if value is None else value.decode() for value in values]

    async def record(self, game: str, date: str, entry: Entry, ttl: int) -> bool:
        """Add or update a ranked attempt's entry (one round trip); False when the
        board has it already as it is or later (an ended attempt's entry is final)."""
        member = entry.member()
        value = json.dumps({**asdict(entry), "member": member})
        ended = "1" if entry.ended else "0"
        keys = board_keys(game, date) + mark_keys(game, date)
        command = ("EVALSHA", self._record_sha, len(keys), *keys)
        args = (member, entry.player_id, value, entry.moves, ended, ttl)
        # EVALSHA straight through execute_command, as the move script (server/store.py).
        try:
            return bool(await self.redis.execute_command(*command, *args))
        except NoScriptError:
            await self.redis.script_load(RECORD_SCRIPT)
            return bool(await self.redis.execute_command(*command, *args))

    async def _entries(
        self,
        game: str,
        date: str,
        members: list[bytes],
        first_rank: int,
        viewer: str | None,
        day_closed: bool,
        review_pending: bool = False,
    ) -> list[dict[str, Any]]:
        if not members:
            return []
        players = [player_of_member(member) for member in members]
        values = await self.redis.hmget(board_keys(game, date)[1], players)
        # The post-close review (server.operator.review): flagged entries say so, and
        # those it has not reached yet are pending; cleared ones show nothing.
        states = await self.redis.hmget(review_keys(game, date)[0], players)
        review = {
            player: "flagged" if state == b"flagged" else "pending" if review_pending else None
            for player, state in zip(players, states, strict=True)
            if state != b"cleared"
        }
        entries = [
            (first_rank + offset, Entry.from_json(value))
            for offset, value in enumerate(values)
            if value is not None
        ]
        # Display names are the players' own (server.players), read with the page.
        names = await self.players.names([entry.player_id for _, entry in entries])
        return [
            {
                **entry.public(
                    rank,
                    day_closed or entry.player_id == viewer,
                    day_closed,
                    review.get(entry.player_id),
                ),
                "name": name,
            }
            for (rank, entry), name in zip(entries, names, strict=True)
        ]

    async def top(
        self,
        game: str,
        date: str,
        limit: int,
        viewer: str | None,
        day_closed: bool,
        review_pending: bool = False,
    ) -> list[dict[str, Any]]:
        members = await self.redis.zrange(board_keys(game, date)[0], 0, limit - 1)
        return await self._entries(game, date, members, 1, viewer, day_closed, review_pending)

    async def review_pending(self, game: str, date: str, closes: int, now: int) -> bool:
        """Whether the post-close audit of a closed day is still to reach some entries
        (it takes the days closed within :data:`REVIEW_WINDOW_DAYS`)."""
        if not closes <= now < closes + REVIEW_WINDOW_DAYS * 86_400_000:
            return False
        return not await self.redis.exists(review_keys(game, date)[2])

    async def size(self, game: str, date: str) -> int:
        return int(await self.redis.zcard(board_keys(game, date)[0]))

    async def entry(self, game: str, date: str, player_id: str) -> Entry | None:
        value = await self.redis.hget(board_keys(game, date)[1], player_id)
        return None if value is None else Entry.from_json(value)

    async def around(
        self,
        game: str,
        date: str,
        player_id: str,
        radius: int,
        day_closed: bool,
        review_pending: bool = False,
    ) -> tuple[int | None, list[dict[str, Any]]]:
        """A player's rank (1-based) and the entries within ``radius`` of it."""
        entry = await self.entry(game, date, player_id)
        if entry is None:
            return None, []
        board = board_keys(game, date)[0]
        index = await self.redis.zrank(board, entry.member())
        if index is None:
            return None, []
        start = max(0, index - radius)
        members = await self.redis.zrange(board, start, index + radius)
        entries = await self._entries(
            game, date, members, start + 1, player_id, day_closed, review_pending
        )
        return index + 1, entries
