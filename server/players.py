"""Players' display names, game history and stats in Redis (``protocol/REST.md``, "Players").

Keys (``protocol/REDIS.md``); a player's own keys share the tag ``{player id}``, so they
sit in one Redis Cluster slot and each update of them is one atomic command or script:

* ``player:{id}``        hash: ``created_at``, ``name`` (the display name, if set)
* ``player:{id}:games``  sorted set, every score 0, members ``<created_at:013d>.<game id>``
  (lexical order is creation order); at most :data:`HISTORY_SIZE`, none older than the
  longest a game is kept; a member whose game expired is dropped when a page meets it
* ``player:{id}:stats``  hash: ``<game>:played``, ``:won``, ``:best_score``, ``:streak``,
  ``:best_streak``, updated once when a game of the player ends
* ``player:{id}:ended``  sorted set: the ids of the player's latest ended games (at most
  :data:`HISTORY_SIZE`) by end time, so a game is counted once
* ``names``              hash: a display name's key (:func:`name_key`) -> the id of its holder
* ``names:reserved``     hash: a name's key an operator reset -> the player who had it;
  never claimed again

Names are unique server-wide (so never two alike on one board), compared by their key
(:func:`name_key`): NFKC, case-folded, each character replaced by one representative of
the characters it can be taken for (Unicode TR39's confusables, as the
``confusable-homoglyphs`` package has them: Cyrillic ``А`` and Greek ``Α`` are Latin
``A``, ``I``, ``l`` and ``1`` are one, ``O`` and ``0``), spaces and ``._-`` at either end
dropped, runs of spaces made one, and, in a name mixing scripts (beyond the mixes TR39
deems safe: Latin with Han and kana, Bopomofo or Hangul), the letters of all but its main
script left out.  A claim is ``HSETNX`` on ``names``; a name whose holder's
record has expired, or no longer carries it (a rename stopped half-way), may be claimed
anew.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from confusable_homoglyphs import categories, confusables
from redis.asyncio import Redis

from server.errors import ApiError
from server.rules import GAME_NAMES

NAMES_KEY = "names"
#: Folded names an operator took off a player (``server.operator``): never claimed again.
RESERVED_NAMES_KEY = "names:reserved"
#: Entries of ``names`` read per step of :meth:`Players.sweep_names`.
SWEEP_BATCH = 500
NAME_MIN, NAME_MAX = 3, 24
#: Games listed per player (the newest).
HISTORY_SIZE = 1000
#: Games per page of ``GET /v1/players/me/games`` (the default and the most).
HISTORY_PAGE = 50, 200
STAT_FIELDS = ("played", "won", "best_score", "streak", "best_streak")

# KEYS: stats, ended.  ARGV: game, won ('1' or '0'), score, ttl, game id, finished at.
# One ended game of the player, counted once: a retried final move (the first answer was
# lost) finds its game id among the ended ones and changes nothing.
FINISH_SCRIPT = """
if redis.call('ZADD', KEYS[2], 'NX', ARGV[6], ARGV[5]) == 0 then return 0 end
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[7]) - 1)
local g = ARGV[1]
redis.call('HINCRBY', KEYS[1], g .. ':played', 1)
if ARGV[2] == '1' then
  redis.call('HDEL', KEYS[1], g .. ':lost', g .. ':lost_streak')
  redis.call('HINCRBY', KEYS[1], g .. ':won', 1)
  local streak = redis.call('HINCRBY', KEYS[1], g .. ':streak', 1)
  local best = tonumber(redis.call('HGET', KEYS[1], g .. ':best_streak') or '0')
  if streak > best then redis.call('HSET', KEYS[1], g .. ':best_streak', streak) end
else
  -- What the loss broke, kept (one game per kind) in case an undo reopens it.
  redis.call('HSET', KEYS[1], g .. ':lost', ARGV[5],
             g .. ':lost_streak', redis.call('HGET', KEYS[1], g .. ':streak') or '0')
  redis.call('HSET', KEYS[1], g .. ':streak', 0)
end
local best = redis.call('HGET', KEYS[1], g .. ':best_score')
if not best or tonumber(ARGV[3]) > tonumber(best) then
  redis.call('HSET', KEYS[1], g .. ':best_score', ARGV[3])
end
for i = 1, 2 do
  redis.call('EXPIRE', KEYS[i], ARGV[4], 'NX')
  redis.call('EXPIRE', KEYS[i], ARGV[4], 'GT')
end
return 1
"""

# KEYS: stats, ended.  ARGV: game name, game id.  An undo took the game, counted as a loss
# when it stuck, back into play: it leaves the count (played, and the streak it broke when
# it was the kind's last loss) until its next end counts it again.
REOPEN_SCRIPT = """
if redis.call('ZREM', KEYS[2], ARGV[2]) == 0 then return 0 end
local g = ARGV[1]
redis.call('HINCRBY', KEYS[1], g .. ':played', -1)
if redis.call('HGET', KEYS[1], g .. ':lost') == ARGV[2] then
  local streak = redis.call('HGET', KEYS[1], g .. ':lost_streak') or '0'
  redis.call('HSET', KEYS[1], g .. ':streak', streak)
  redis.call('HDEL', KEYS[1], g .. ':lost', g .. ':lost_streak')
end
return 1
"""

# KEYS: names.  ARGV: name key, expected holder, new holder ('' = release).
# Compare-and-set: the name changes hands only if it is still the expected holder's.
SWAP_SCRIPT = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1])
else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return 1
"""


def player_key(player_id: str) -> str:
    return f"player:{{{player_id}}}"


def games_key(player_id: str) -> str:
    return f"{player_key(player_id)}:games"


def stats_key(player_id: str) -> str:
    return f"{player_key(player_id)}:stats"


def ended_key(player_id: str) -> str:
    return f"{player_key(player_id)}:ended"


def history_member(created_at: int, game_id: str) -> str:
    return f"{created_at:013d}.{game_id}"


#: A display name as sent: 3-24 letters, digits (``\\w``: ``str.isalnum``), ``_``, ``.``,
#: ``-`` and spaces, no space first or last.  The OpenAPI document publishes it.
NAME_PATTERN = rf"^[\w.-][\w .-]{{{NAME_MIN - 2},{NAME_MAX - 2}}}[\w.-]$"
_NAME = re.compile(NAME_PATTERN)


#: Scripts whose letters a name key keeps together (TR39's "highly restrictive" mixes);
#: digits, spaces and ``._-`` are of none ("common").
SCRIPT_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
NO_SCRIPT = frozenset({"COMMON", "INHERITED"})


def valid_name(value: object) -> str:
    """The display name ``value`` as kept, or ``invalid_field``: its NFKC form (full-width
    ``Ｂｏｂ`` is ``Bob``) when that is a name too, else as sent (NFKC may lengthen a
    name, or make a character that is no letter, as ``½`` becomes ``1⁄2``)."""
    if not isinstance(value, str) or _NAME.fullmatch(value) is None:
        raise ApiError(
            "invalid_field",
            f"a name is {NAME_MIN}-{NAME_MAX} letters, digits, spaces or '_-.', "
            "with no space first or last",
            field="name",
        )
    name = unicodedata.normalize("NFKC", value)
    return name if _NAME.fullmatch(name) else value


@functools.cache
def _prototypes() -> dict[str, str]:
    """Character -> its TR39 prototype (``confusables.txt``: Cyrillic ``А`` -> ``A``,
    ``I`` and ``1`` -> ``l``, ``0`` -> ``O``, ``m`` -> ``rn``).  The package keeps each
    pair both ways; a character whose one lookalike is a prototype (which has several)
    maps to it."""
    path = Path(confusables.__file__).with_name("confusables.json")
    pairs: dict[str, list[dict[str, str]]] = json.loads(path.read_text(encoding="utf-8"))

    def lookalikes(text: str) -> list[str]:
        # Marks that keep a right-to-left lookalike apart in the file.
        return [entry["c"].strip("\u200e\u200f") for entry in pairs.get(text, [])]

    prototypes: dict[str, str] = {}
    for character in pairs:
        found = lookalikes(character)
        if len(character) != 1 or len(found) != 1:
            continue  # a sequence, or a prototype: several characters map to it
        (target,) = found
        if lookalikes(target) == [character] and character < target:
            continue  # a pair alone: the smaller is the prototype
        prototypes[character] = target
    return prototypes


def _skeleton(text: str) -> str:
    prototypes = _prototypes()
    return "".join(prototypes.get(character, character) for character in text)


_SPACES = re.compile(r" {2,}")


def name_key(name: str) -> str:
    """What names are compared by: ``Ann``, ``ANN``, ``Аnn`` (Cyrillic ``А``), ``Ann.``
    and ``Ann`` with a doubled space are one name; ``AIice`` (capital ``I``) and
    ``Alice`` too.  Each character counts as the case-folded skeleton of its capital
    (``i`` as ``I``, which is taken for ``l``), then the skeleton of that: one key for
    every case of a name, whose letters are taken for the same ones."""
    normal = unicodedata.normalize("NFKC", name)
    key = "".join(
        _skeleton(unicodedata.normalize("NFKC", _skeleton(character.upper()).casefold()))
        for character in normal
    )
    return _SPACES.sub(" ", _main_script(key).strip(" ._-"))


def _main_script(key: str) -> str:
    """``key`` without the letters of scripts other than its main one (the one with most
    letters), unless its scripts make a mix TR39 deems safe: a letter of another script
    (a Hebrew prefix) is how a lookalike hides, and what it adds is not seen."""
    scripts = [categories.alias(character) for character in key]
    letters = set(scripts) - NO_SCRIPT
    if len(letters) < 2 or any(letters <= mix for mix in SCRIPT_MIXES):
        return key
    main = max(sorted(letters), key=scripts.count)
    return "".join(
        character
        for character, script in zip(key, scripts, strict=True)
        if script == main or script in NO_SCRIPT
    )


def legacy_key(name: str) -> str:
    """The key of ``names`` before :func:`name_key` (NFKC and case folding only): the
    sweep moves such entries to their new key."""
    return unicodedata.normalize("NFKC", name.casefold())


def decode(value: bytes | None) -> str | None:
    return None if value is None else value.decode()


class Players:
    """The players' part of Redis; one per process."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._finish = redis.register_script(FINISH_SCRIPT)
        self._reopen = redis.register_script(REOPEN_SCRIPT)
        self._swap = redis.register_script(SWAP_SCRIPT)

    # -- names ----------------------------------------------------------------

    async def name(self, player_id: str) -> str | None:
        return decode(await self.redis.hget(player_key(player_id), "name"))

    async def names(self, player_ids: list[str]) -> list[str | None]:
        """Each player's display name (None: none set); one pipelined round trip (in a
        cluster, one command per player's slot)."""
        if not player_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.hget(player_key(player_id), "name")
            return [decode(value) for value in await pipe.execute()]

    async def set_name(self, player_id: str, name: str | None, now_ms: int, ttl: int) -> None:
        """Give ``player_id`` the display name ``name`` (None: none); ``name_taken``
        when another player holds it.  ``name`` is valid (:func:`valid_name`)."""
        old = await self.name(player_id)
        if name is not None and (old is None or name_key(old) != name_key(name)):
            await self._claim(player_id, name_key(name))
        key = player_key(player_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hsetnx(key, "created_at", now_ms)  # a record that expired comes back
            if name is None:
                pipe.hdel(key, "name")
            else:
                pipe.hset(key, "name", name)
            pipe.expire(key, ttl, nx=True)
            await pipe.execute()
        if old is not None and (name is None or name_key(old) != name_key(name)):
            await self._swap(keys=[NAMES_KEY], args=[name_key(old), player_id, ""])

    async def release_name(self, player_id: str) -> None:
        """Take the player's display name off it and free it (an account deleted)."""
        name = await self.name(player_id)
        if name is not None:
            await self.redis.hdel(player_key(player_id), "name")
            await self._swap(keys=[NAMES_KEY], args=[name_key(name), player_id, ""])

    async def sweep_names(self) -> int:
        """Release every name whose holder's record has expired: how many.  A claim
        takes such a name anyway; the sweep keeps ``names`` from growing with every player
        that ever took a name.  A holder whose record lives keeps its entry, even mid-way
        through a rename (claims sort that case out)."""
        released = 0
        cursor = 0
        while True:
            cursor, batch = await self.redis.hscan(NAMES_KEY, cursor, count=SWEEP_BATCH)
            entries = [(key.decode(), holder.decode()) for key, holder in batch.items()]
            async with self.redis.pipeline(transaction=False) as pipe:
                for _, holder in entries:
                    pipe.hget(player_key(holder), "name")
                    pipe.exists(player_key(holder))
                found = await pipe.execute()
            for index, (key, holder) in enumerate(entries):
                held, exists = decode(found[2 * index]), found[2 * index + 1]
                if not exists:
                    released += await self._swap(keys=[NAMES_KEY], args=[key, holder, ""])
                elif held is not None and key == legacy_key(held) != name_key(held):
                    await self._rekey(holder, key, name_key(held))
            if cursor == 0:
                return released

    async def _rekey(self, holder: str, old: str, new: str) -> None:
        """Move an entry of ``names`` made before :func:`name_key` to its key now (the
        first of two names that are one now keeps it; the other's name stays shown)."""
        await self.redis.hsetnx(NAMES_KEY, new, holder)
        await self._swap(keys=[NAMES_KEY], args=[old, holder, ""])

    async def reserve_name(self, key: str, player_id: str) -> None:
        """Keep the name key ``key`` from ever being claimed again (its holder keeps
        it until renamed)."""
        await self.redis.hset(RESERVED_NAMES_KEY, key, player_id)

    async def _claim(self, player_id: str, key: str) -> None:
        if await self.redis.hexists(RESERVED_NAMES_KEY, key):
            raise ApiError("name_taken", "this name is not available", field="name")
        for _ in range(3):  # a race with another claim of a stale name: look again
            if await self.redis.hsetnx(NAMES_KEY, key, player_id):
                return
            holder = decode(await self.redis.hget(NAMES_KEY, key))
            if holder is None:
                continue
            if holder == player_id:
                return
            held = await self.name(holder)
            if held is not None and name_key(held) == key:
                raise ApiError("name_taken", "another player has this name", field="name")
            if await self._swap(keys=[NAMES_KEY], args=[key, holder, player_id]):
                return  # its holder expired or renamed half-way: the name was free
        raise ApiError("name_taken", "another player is taking this name", field="name")

    # -- history --------------------------------------------------------------

    def index_game(self, pipe: Any, player_id: str, created_at: int, game_id: str) -> None:
        """Queue, on ``pipe``, listing a new game in its player's history."""
        key = games_key(player_id)
        pipe.zadd(key, {history_member(created_at, game_id): 0})
        pipe.zremrangebyrank(key, 0, -HISTORY_SIZE - 1)

    def keep(self, pipe: Any, player_id: str, ttl: int, max_age_ms: int, now_ms: int) -> None:
        """Queue keeping the player's history and stats at least ``ttl`` seconds (never
        shortened), and dropping history older than ``max_age_ms`` (those games expired)."""
        oldest = f"({history_member(max(0, now_ms - max_age_ms), '')}"
        pipe.zremrangebylex(games_key(player_id), "-", oldest)
        for key in (games_key(player_id), stats_key(player_id), ended_key(player_id)):
            pipe.expire(key, ttl, nx=True)
            pipe.expire(key, ttl, gt=True)

    async def history(
        self, player_id: str, cursor: str | None, limit: int
    ) -> tuple[list[str], str | None]:
        """Up to ``limit`` members (:func:`history_member`) of the player's games, newest
        first, after ``cursor``, and the cursor of the next page (None after the last)."""
        start = "+" if cursor is None else f"({cursor}"
        members = await self.redis.zrevrangebylex(games_key(player_id), start, "-", 0, limit + 1)
        page = [member.decode() for member in members[:limit]]
        return page, (page[-1] if len(members) > limit else None)

    async def forget_games(self, player_id: str, members: list[str]) -> None:
        if members:
            await self.redis.zrem(games_key(player_id), *members)

    # -- stats ----------------------------------------------------------------

    async def record_finish(
        self,
        player_id: str,
        game_id: str,
        game: str,
        won: bool,
        score: int,
        ended_at: int,
        ttl: int,
    ) -> bool:
        """Count an ended game in its player's stats; False when it was counted already."""
        keys = [stats_key(player_id), ended_key(player_id)]
        args = [game, "1" if won else "0", score, ttl, game_id, ended_at, HISTORY_SIZE]
        return bool(await self._finish(keys=keys, args=args))

    async def reopen(self, player_id: str, game_id: str, game: str) -> bool:
        """Take a stuck game an undo reopened out of the count; False if it was not in it."""
        keys = [stats_key(player_id), ended_key(player_id)]
        return bool(await self._reopen(keys=keys, args=[game, game_id]))

    async def stats(self, player_id: str) -> dict[str, dict[str, int | None]]:
        values = await self.redis.hgetall(stats_key(player_id))
        # The counts (a kind's last loss, kept for a reopening undo, is a game id).
        fields = {key.decode(): int(value) for key, value in values.items() if value.isdigit()}
        return {
            game: {
                "played": fields.get(f"{game}:played", 0),
                "won": fields.get(f"{game}:won", 0),
                "best_score": fields.get(f"{game}:best_score"),
                "current_streak": fields.get(f"{game}:streak", 0),
                "best_streak": fields.get(f"{game}:best_streak", 0),
            }
            for game in GAME_NAMES
        }
