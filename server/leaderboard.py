"""Daily leaderboards in Redis sorted sets (``protocol/DAILY.md``).

One board per game per day.  Every member has score 0 and sorts by its
text (Redis orders equal scores lexicographically), which encodes the
ranking order as fixed-width fields, best first::

    <999 - score:03d>.<0 if won else 1>.<moves:08d>.<elapsed_ms:012d>.<finished_at:013d>.<player_id>

So: more cards on the foundations first; then a win before a non-win; then
fewer moves; then less elapsed time (from the attempt's start to its end);
then the earlier finish.  The player id only
makes members unique.  ``ZRANK`` gives a player's rank in O(log N).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from redis.asyncio import Redis

# KEYS: board, entries.  ARGV: member, player id, entry JSON.
# An entry is written once: a ranked game ends once.
RECORD_SCRIPT = """
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
return 1
"""


@dataclass(frozen=True)
class Entry:
    player_id: str
    game_id: str
    score: int
    won: bool
    moves: int
    elapsed_ms: int
    finished_at: int

    def member(self) -> str:
        return (
            f"{999 - self.score:03d}.{0 if self.won else 1}.{self.moves:08d}."
            f"{self.elapsed_ms:012d}.{self.finished_at:013d}.{self.player_id}"
        )

    def public(self, rank: int) -> dict[str, Any]:
        # Field by field, not dataclasses.asdict (which deep-copies every value): that
        # was some 40 % of the CPU time of a top(100) read.
        return {
            "rank": rank,
            "player_id": self.player_id,
            "game_id": self.game_id,
            "score": self.score,
            "won": self.won,
            "moves": self.moves,
            "elapsed_ms": self.elapsed_ms,
            "finished_at": self.finished_at,
            "replay": f"/v1/games/{self.game_id}/replay",
        }


def board_keys(game: str, date: str) -> list[str]:
    tag = f"{{lb:{game}:{date}}}"
    return [f"lb:{tag}", f"lb:{tag}:entries"]


def player_of_member(member: bytes | str) -> str:
    text = member.decode() if isinstance(member, bytes) else member
    return text.rsplit(".", 1)[1]


class Leaderboards:
    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._record = redis.register_script(RECORD_SCRIPT)

    async def record(self, game: str, date: str, entry: Entry, ttl: int) -> bool:
        """Add a finished ranked game; False if the player already has an entry."""
        keys = board_keys(game, date)
        added = await self._record(
            keys=keys, args=[entry.member(), entry.player_id, json.dumps(asdict(entry))]
        )
        for key in keys:
            await self.redis.expire(key, ttl)
        return bool(added)

    async def _entries(
        self, game: str, date: str, members: list[bytes], first_rank: int
    ) -> list[dict[str, Any]]:
        if not members:
            return []
        players = [player_of_member(member) for member in members]
        values = await self.redis.hmget(board_keys(game, date)[1], players)
        return [
            Entry(**json.loads(value)).public(first_rank + offset)
            for offset, value in enumerate(values)
            if value is not None
        ]

    async def top(self, game: str, date: str, limit: int) -> list[dict[str, Any]]:
        members = await self.redis.zrange(board_keys(game, date)[0], 0, limit - 1)
        return await self._entries(game, date, members, 1)

    async def size(self, game: str, date: str) -> int:
        return int(await self.redis.zcard(board_keys(game, date)[0]))

    async def entry(self, game: str, date: str, player_id: str) -> Entry | None:
        value = await self.redis.hget(board_keys(game, date)[1], player_id)
        return None if value is None else Entry(**json.loads(value))

    async def around(
        self, game: str, date: str, player_id: str, radius: int
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
        return index + 1, await self._entries(game, date, members, start + 1)
