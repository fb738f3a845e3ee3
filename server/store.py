"""The Redis data model (``protocol/REDIS.md`` documents it for operators).

Every key of one game carries the ``{game_id}`` hash tag, so a game lives on
one Redis Cluster slot and the move script can touch all of its keys
atomically:

* ``game:{id}``          hash: game, seed, owner, daily (the UTC date of a
  ranked daily game, else empty), version, state (engine msgpack), status,
  score, moves, deal_hash, chain_head, created_at, updated_at, finished_at
  (Unix ms; 0 while playing); for a ranked game also client_hash and
  install_hash (the attempt's scouting trace, ``protocol/DAILY.md``); assisted
  ("1" once a hint was taken; absent before)
* ``game:{id}:log``      stream: one entry per move (version, move, move_id,
  client_time, server_time, state_hash after the move, chain link)
* ``game:{id}:patches``  sorted set: the last :data:`PATCH_HISTORY` patch
  messages (msgpack), scored by the version they lead to, for resync
* ``game:{id}:move_ids`` hash: client move id -> version it produced, so a
  move sent twice is applied once
* ``game:{id}:watchers`` sorted set: the server processes with a socket watching
  the game (their hub's name), scored by when the entry lapses (Unix ms) unless
  the process renews it
* ``game:{id}`` field ``outbox`` (ranked games): the board entry the game's last
  move (or its start) calls for, as JSON ``{"game", "date", "entry"}``, written by
  the same atomic step as the move; deleted once the board has it
* ``player:{id}``        hash: created_at; expires after ``player_idle_ttl`` seconds
  without a new game, or, once the player starts a ranked daily attempt, no sooner
  than that game and its leaderboard (:data:`RANKED_PLAYER_TTL`)
* ``daily:{game:date}:attempts`` hash: player id -> id of their ranked game
* ``game:{id}:verdict``  string: the JSON verdict of a finished game, once computed
* the player's history, stats and display name: ``server.players``

Patches are published on the shard channel ``game:{id}`` (``SPUBLISH``: on a
cluster only the shard owning the game's slot carries it) from inside the move
script, so every subscriber on every instance sees them in version order; but
only when a process other than the mover's watches the game (its watchers): a
game played with nobody else looking, the usual case, costs no pub/sub message,
and the mover's own process hands the patch to its sockets itself
(:attr:`MoveResult.published`).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgpack

from server.batcher import Batcher
from server.config import PLAYER_IDLE_TTL
from server.players import Players, player_key
from server.redisconn import RedisNodes

#: Length of the origin tag published in front of each patch: which socket made the move
#: (so that its worker does not send it the patch its ``accepted`` carried already).
ORIGIN_BYTES = 16
#: The origin of a move no socket made (REST).
NO_ORIGIN = bytes(ORIGIN_BYTES)
#: Patches kept per game for resync (up to PATCH_TRIM_EVERY - 1 more between trims); an
#: older gap gets a full snapshot.
PATCH_HISTORY = 200
#: The move script trims the patch history on every this many versions.
PATCH_TRIM_EVERY = 16
#: A move renews its game's expiry once it ran down by this many seconds.
EXPIRY_RENEW_AFTER = 3600
#: A game nobody moves in for this long expires (seconds).
IDLE_TTL = 30 * 24 * 3600
#: A finished casual game expires this long after its last move (seconds).
FINISHED_TTL = 7 * 24 * 3600
#: A ranked daily game (and its leaderboard) is kept this long for audits.
RANKED_TTL = 90 * 24 * 3600
#: With ``--durability replica``: how long a move waits for a replica to hold it (ms).
REPLICA_WAIT_MS = 1000
#: A player with a ranked attempt is kept as long as it (a day more: the day it is played).
RANKED_PLAYER_TTL = RANKED_TTL + 24 * 3600


def time_to_live(ranked: bool, finished: bool) -> int:
    """Seconds a game's keys live after its latest move."""
    if ranked:
        return RANKED_TTL
    return FINISHED_TTL if finished else IDLE_TTL


GAME_FIELDS = (
    "game",
    "seed",
    "owner",
    "daily",
    "version",
    "state",
    "status",
    "score",
    "moves",
    "deal_hash",
    "chain_head",
    "created_at",
    "updated_at",
    "finished_at",
    "client_hash",
    "install_hash",
)
#: The game hash's field holding the board entry still to be recorded (a ranked game).
OUTBOX_FIELD = "outbox"

#: Read with the others: ``assisted`` written only by :meth:`Store.mark_assisted` (absent:
#: no hint); ``restart_of`` only at the creation of a restart (absent: a fresh deal).
READ_FIELDS = (*GAME_FIELDS, "assisted", "restart_of")

# KEYS: game.  Marks an existing game assisted (never creates a stray key).
ASSIST_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'assisted', '1')
return 1
"""

# KEYS: game.  ARGV: ttl, then field, value, field, value, ...
# A game is created once: a retried creation of the same id changes nothing.
CREATE_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""

# KEYS: game, log, patches, move_ids, watchers (the game key is also the patch channel)
# ARGV[1]: one msgpack map (:meth:`Store.apply_move` packs it; one value to encode and
# send instead of seventeen): v expected version, h expected chain head, st state, m move
# text, t server time, sh state hash, c chain link, ttl, p patch frame, o origin, ph patch
# history (how many patches are kept), w the mover's process (its name among the
# watchers); and only
# when there is one: id move id, ct client time, s status and sc score (when they change),
# f true (the move finishes the game), r true (an undo reopens a stuck game), ob outbox
# (the board entry this move calls for, written with it).  Times travel as strings: Lua
# numbers are doubles.
# A duplicate rewrites its move id's entry, so that a WAIT after it (durability 'replica')
# waits for everything written before, the original move included.
# 'diverged': the version is the expected one but the chain head is not, so the state
# the move was computed on is not the stored one (the keys were restored or rewritten).
# The game's fields go in one HSET; the patch history is trimmed every TRIM_EVERY
# versions; the keys' expiry is renewed only when it ran down by RENEW_AFTER seconds,
# or on the first move, the first move with an id (the game's move_ids field says the
# hash exists) and a finishing move (a shorter ttl): each saved call is a saved
# microsecond of the one thread that runs every move.
# The patch is published with its origin in front (ORIGIN_BYTES), stored without it, when
# a process other than the mover's has a live watcher entry; the third value says whether.
MOVE_SCRIPT = """
local a = cmsgpack.unpack(ARGV[1])
local record = redis.call('HMGET', KEYS[1], 'version', 'chain_head', 'moves', 'move_ids')
local current = tonumber(record[1])
if not current then return {'missing', 0} end
if a.id then
  local seen = redis.call('HGET', KEYS[4], a.id)
  if seen then
    redis.call('HSET', KEYS[4], a.id, seen)
    return {'duplicate', tonumber(seen)}
  end
end
if current ~= a.v then return {'stale', current} end
if record[2] ~= a.h then return {'diverged', current} end
local version = current + 1
local fields = {'version', version, 'state', a.st, 'updated_at', a.t, 'chain_head', a.c,
                'moves', (tonumber(record[3]) or 0) + 1}
local function set(name, value) fields[#fields + 1] = name; fields[#fields + 1] = value end
if a.s then set('status', a.s) end
if a.sc then set('score', a.sc) end
if a.f then set('finished_at', a.t) end
if a.r then set('finished_at', 0) end
if a.ob then set('outbox', a.ob) end
local renew = a.f or a.r or version == 1 or redis.call('TTL', KEYS[1]) < a.ttl - RENEW_AFTER
if a.id and not record[4] then
  set('move_ids', 1)
  renew = true
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('XADD', KEYS[2], '*', 'version', version, 'move', a.m, 'move_id', a.id or '',
           'client_time', a.ct or '', 'server_time', a.t, 'state_hash', a.sh,
           'chain', a.c)
redis.call('ZADD', KEYS[3], version, a.p)
if version % TRIM_EVERY == 0 then redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -a.ph - 1) end
if a.id then redis.call('HSET', KEYS[4], a.id, version) end
if renew then
  for i = 1, 4 do redis.call('EXPIRE', KEYS[i], a.ttl) end
end
local live = redis.call('ZRANGEBYSCORE', KEYS[5], a.t, '+inf', 'LIMIT', 0, 2)
local others = live[1] ~= nil and (live[1] ~= a.w or live[2] ~= nil)
if others then redis.call('SPUBLISH', KEYS[1], a.o .. a.p) end
return {'ok', version, others and 1 or 0}
""".replace("RENEW_AFTER", str(EXPIRY_RENEW_AFTER)).replace("TRIM_EVERY", str(PATCH_TRIM_EVERY))


# KEYS: game.  ARGV: the outbox value drained.  Deletes it only if no later move
# replaced it meanwhile.
CLEAR_OUTBOX_SCRIPT = """
if redis.call('HGET', KEYS[1], 'outbox') == ARGV[1] then
  return redis.call('HDEL', KEYS[1], 'outbox')
end
return 0
"""


# KEYS: move_ids.  ARGV: move id.  The version the move id produced, its entry
# rewritten (so that a WAIT after it covers the original move, as a duplicate's does).
TOUCH_MOVE_ID_SCRIPT = """
local seen = redis.call('HGET', KEYS[1], ARGV[1])
if seen then redis.call('HSET', KEYS[1], ARGV[1], seen) end
return seen
"""


def game_key(game_id: str) -> str:
    return f"game:{{{game_id}}}"


def game_keys(game_id: str) -> list[str]:
    key = game_key(game_id)
    return [key, f"{key}:log", f"{key}:patches", f"{key}:move_ids"]


def attempts_key(game: str, date: str) -> str:
    """The hash of a day's ranked attempts: player id -> game id."""
    return f"daily:{{{game}:{date}}}:attempts"


def watchers_key(game_id: str) -> str:
    """The sorted set of the processes watching a game (in the slot of the game's keys)."""
    return f"{game_key(game_id)}:watchers"


def channel(game_id: str) -> str:
    """The shard channel of a game's patches (in the slot of the game's keys)."""
    return game_key(game_id)


def game_id_of_channel(name: str) -> str:
    return name[len("game:{") : -1]


@dataclass(frozen=True)
class StoredGame:
    id: str
    game: str
    seed: str
    owner: str
    daily: str
    version: int
    state: bytes
    status: str
    score: int
    moves: int
    deal_hash: str
    chain_head: str
    created_at: int
    updated_at: int
    finished_at: int
    client_hash: str = ""
    install_hash: str = ""
    #: A hint was taken in this game (``POST /v1/games/{id}/hint``).
    assisted: bool = False
    #: The casual game this one restarts on the same deal (``POST /v1/games/{id}/restart``).
    restart_of: str = ""

    @property
    def ranked(self) -> bool:
        return bool(self.daily)

    def after_move(
        self, state: bytes, status: str, score: int, chain_head: str, now: int, finished: bool
    ) -> StoredGame:
        """The game as the move script stores one more move on it: what
        ``dataclasses.replace`` makes, at a fifth of its cost (it runs every field through
        ``__init__``), as every move makes one."""
        moved = object.__new__(StoredGame)
        fields = moved.__dict__
        fields.update(self.__dict__)
        fields["version"] = self.version + 1
        fields["moves"] = self.moves + 1
        fields["state"], fields["status"], fields["score"] = state, status, score
        fields["chain_head"], fields["updated_at"] = chain_head, now
        fields["finished_at"] = now if finished else 0
        return moved


class MoveResult(NamedTuple):  # a tuple: every move makes one (a frozen dataclass is 1 µs)
    outcome: str  # ok, stale, diverged, duplicate, missing
    version: int
    #: With durability 'replica': False when no replica confirmed the write in time
    #: (it is on the primary; a retry with the same move id is answered as a duplicate).
    replicated: bool = True
    #: The patch went out on the game's channel. When not (no other process watches
    #: the game), the mover's process delivers it to its own sockets.
    published: bool = False


class Store:
    """The game server's use of Redis; one per process."""

    def __init__(
        self, redis: Any, player_idle_ttl: int = PLAYER_IDLE_TTL, durable: bool = False
    ) -> None:
        """``redis``: a ``Redis`` or ``RedisCluster`` client; ``durable``: a move is
        acknowledged only once a replica holds it (``WAIT``)."""
        self.redis: Any = redis  # redis-py's stubs type replies loosely
        self.player_idle_ttl = player_idle_ttl
        self.nodes = RedisNodes(redis)
        #: The move scripts of concurrent moves go to Redis in one pipeline per primary.
        self.batcher = Batcher(self.nodes)
        self.durable = durable
        #: This process's name in the games' watcher sets (:func:`watchers_key`): its hub
        #: enters it for each game it has sockets on, and the move script publishes a
        #: patch only if a process of another name is there.
        self.watcher = secrets.token_hex(8)
        self._move_sha = hashlib.sha1(MOVE_SCRIPT.encode()).hexdigest()
        self._create = redis.register_script(CREATE_SCRIPT)
        self._assist = redis.register_script(ASSIST_SCRIPT)
        self._clear_outbox = redis.register_script(CLEAR_OUTBOX_SCRIPT)
        self.players = Players(redis)

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def add_player(self, player_id: str, now_ms: int) -> None:
        key = player_key(player_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"created_at": now_ms})
            pipe.expire(key, self.player_idle_ttl)
            await pipe.execute()

    def player_ttl(self, ranked: bool = False) -> int:
        """Seconds a player's keys live after a new game (a ranked one: as long as it)."""
        return max(self.player_idle_ttl, RANKED_PLAYER_TTL if ranked else 0)

    async def touch_player(
        self, player_id: str, now_ms: int, ranked: bool = False, new_game: str = ""
    ) -> None:
        """Keep the player's keys at least ``player_ttl`` seconds more (never shortened),
        listing ``new_game`` (created ``now_ms``) in their history; one round trip."""
        ttl = self.player_ttl(ranked)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.expire(player_key(player_id), ttl, gt=True)
            if new_game:
                self.players.index_game(pipe, player_id, now_ms, new_game)
            self.players.keep(pipe, player_id, ttl, RANKED_TTL * 1000, now_ms)
            await pipe.execute()

    async def player_created_at(self, player_id: str, now_ms: int) -> int:
        """When the player's record was created; a player with no record (it may have
        expired) gets one created ``now_ms``."""
        key = player_key(player_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hsetnx(key, "created_at", now_ms)
            pipe.expire(key, self.player_idle_ttl, nx=True)
            pipe.hget(key, "created_at")
            _, _, created_at = await pipe.execute()
        return int(created_at)

    async def create_game(self, stored: StoredGame, outbox: str = "") -> bool:
        """Store a new game (and the board entry it calls for, ``outbox``); False (and
        nothing changes) if its id exists already."""
        fields = [item for name in GAME_FIELDS for item in (name, getattr(stored, name))]
        if outbox:
            fields += [OUTBOX_FIELD, outbox]
        if stored.restart_of:  # written only on a restart: other games keep their size
            fields += ["restart_of", stored.restart_of]
        ttl = time_to_live(stored.ranked, finished=False)
        created = bool(await self._create(keys=[game_key(stored.id)], args=[ttl, *fields]))
        # A new game is activity; a ranked one keeps its player as long as itself.
        # (Another slot than the game's: not in the game's script.)
        new_game = stored.id if created else ""
        await self.touch_player(stored.owner, stored.created_at, stored.ranked, new_game)
        return created

    async def load(self, game_id: str) -> StoredGame | None:
        return self._stored(game_id, await self.redis.hmget(game_key(game_id), READ_FIELDS))

    async def load_many(self, game_ids: list[str]) -> list[StoredGame | None]:
        """Several records in one pipelined round trip (in a cluster, one per slot)."""
        if not game_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hmget(game_key(game_id), READ_FIELDS)
            values = await pipe.execute()
        return [self._stored(game_id, row) for game_id, row in zip(game_ids, values, strict=True)]

    async def cached_verdict(self, game_id: str) -> bytes | None:
        """The stored verdict of a finished game, if one was computed."""
        value = await self.redis.get(f"{game_key(game_id)}:verdict")
        return None if value is None else bytes(value)

    async def forget_verdict(self, game_id: str) -> None:
        """Drop a verdict computed while the game was over (an undo reopened it)."""
        await self.redis.delete(f"{game_key(game_id)}:verdict")

    async def cache_verdict(self, game_id: str, verdict: bytes, ranked: bool) -> None:
        """Keep a finished game's verdict as long as the game itself is kept."""
        ttl = time_to_live(ranked, finished=True)
        await self.redis.set(f"{game_key(game_id)}:verdict", verdict, ex=ttl)

    async def load_with_log(self, game_id: str) -> tuple[StoredGame | None, list[dict[str, Any]]]:
        """The record and its move log, read in one atomic step (so they agree)."""
        key = game_key(game_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hmget(key, READ_FIELDS)
            pipe.xrange(f"{key}:log")
            values, entries = await pipe.execute()
        return self._stored(game_id, values), self._moves(entries)

    @staticmethod
    def _stored(game_id: str, values: list[Any]) -> StoredGame | None:
        if values[0] is None:
            return None
        fields = dict(zip(READ_FIELDS, values, strict=True))
        return StoredGame(
            id=game_id,
            game=fields["game"].decode(),
            seed=fields["seed"].decode(),
            owner=fields["owner"].decode(),
            daily=fields["daily"].decode(),
            client_hash=(fields["client_hash"] or b"").decode(),
            install_hash=(fields["install_hash"] or b"").decode(),
            version=int(fields["version"]),
            state=fields["state"],
            status=fields["status"].decode(),
            score=int(fields["score"]),
            moves=int(fields["moves"]),
            deal_hash=fields["deal_hash"].decode(),
            chain_head=fields["chain_head"].decode(),
            created_at=int(fields["created_at"]),
            updated_at=int(fields["updated_at"]),
            finished_at=int(fields["finished_at"]),
            assisted=fields["assisted"] == b"1",
            restart_of=(fields["restart_of"] or b"").decode(),
        )

    async def apply_move(
        self,
        game_id: str,
        *,
        expected_version: int,
        move_id: str,
        state: bytes,
        status: str | None,
        score: int | None,
        patch: bytes,
        origin: bytes,
        move: str,
        client_time: int | None,
        server_time: int,
        state_hash: str,
        chain: str,
        finished: bool,
        ranked: bool,
        expected_head: str,
        outbox: str = "",
        reopened: bool = False,
    ) -> MoveResult:
        """Compare-and-set: store the move only if the version is still ``expected_version``
        and the chain head still ``expected_head`` (the state the move was computed on).
        ``status`` and ``score``: None when the move leaves them as they were; ``origin``
        (:data:`ORIGIN_BYTES`) goes in front of the published patch; ``reopened``: an undo
        took a stuck casual game back into play (it is no longer finished)."""
        if len(origin) != ORIGIN_BYTES:
            raise ValueError(f"an origin is {ORIGIN_BYTES} bytes")
        args: dict[str, Any] = {
            "v": expected_version,
            "h": expected_head,
            "st": state,
            "m": move,
            "t": str(server_time),
            "sh": state_hash,
            "c": chain,
            "ttl": time_to_live(ranked, finished),
            "p": patch,
            "o": origin,
            "ph": PATCH_HISTORY,
            "w": self.watcher,
        }
        optional = {
            "id": move_id or None,
            "ct": None if client_time is None else str(client_time),
            "s": status,
            "sc": score,
            "f": True if finished else None,
            "ob": outbox or None,
            "r": True if reopened else None,
        }
        args.update((name, value) for name, value in optional.items() if value is not None)
        keys = [*game_keys(game_id), watchers_key(game_id)]
        # Bytes as msgpack str, not bin: the cmsgpack of Redis's Lua reads no bin type.
        packed = msgpack.packb(args, use_bin_type=False)
        command = ("EVALSHA", self._move_sha, len(keys), *keys, packed)
        if self.durable:
            reply, replicated = await self._write_and_wait(keys[0], command, MOVE_SCRIPT)
        else:
            # Pipelined with the other moves queued for the primary owning the game's slot.
            reply = await self.batcher.execute(keys[0], command, MOVE_SCRIPT)
            replicated = True
        outcome, version, *published = reply
        outcome = outcome.decode() if isinstance(outcome, bytes) else outcome
        return MoveResult(
            outcome,
            version,
            replicated or outcome not in ("ok", "duplicate"),
            published=bool(published and published[0]),
        )

    async def _write_and_wait(
        self, key: str, command: tuple[Any, ...], script: str
    ) -> tuple[Any, bool]:
        """``command`` (an EVALSHA of ``script``) then ``WAIT 1`` on one connection to
        the primary owning ``key`` (WAIT counts the writes of its own connection):
        (reply, whether a replica holds it)."""

        async def attempt() -> tuple[Any, bool]:
            client = self.nodes.node_client(self.nodes.owner(key))
            async with client.pipeline(transaction=False) as pipe:
                pipe.execute_command(*command)
                pipe.execute_command("WAIT", 1, REPLICA_WAIT_MS)
                reply, replicas = await pipe.execute(raise_on_error=False)
            if isinstance(reply, Exception):
                raise reply
            return reply, isinstance(replicas, int) and replicas >= 1

        return await self.nodes.run_script(key, script, attempt)

    async def outbox(self, game_id: str) -> str | None:
        """The board entry a ranked game still has to record, if any."""
        value = await self.redis.hget(game_key(game_id), OUTBOX_FIELD)
        return None if value is None else str(value.decode())

    async def outboxes(self, game_ids: list[str]) -> dict[str, str]:
        """The pending board entries of ``game_ids`` (those that have one)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hget(game_key(game_id), OUTBOX_FIELD)
            values = await pipe.execute()
        return {
            game_id: value.decode()
            for game_id, value in zip(game_ids, values, strict=True)
            if value is not None
        }

    async def clear_outbox(self, game_id: str, value: str) -> None:
        """Drop a recorded board entry, unless a later move replaced it meanwhile."""
        await self._clear_outbox(keys=[game_key(game_id)], args=[value])

    async def daily_attempts(self, game: str, date: str) -> list[str]:
        """The ids of every ranked game of the day."""
        return [value.decode() for value in await self.redis.hvals(attempts_key(game, date))]

    async def mark_assisted(self, game_id: str) -> bool:
        """Mark the game assisted (a hint was taken); False if it no longer exists."""
        return bool(await self._assist(keys=[game_key(game_id)]))

    async def daily_attempt(self, game: str, date: str, player_id: str) -> str | None:
        """The id of the player's ranked game of the day, if they started one."""
        existing = await self.redis.hget(attempts_key(game, date), player_id)
        return None if existing is None else str(existing.decode())

    async def index_daily_attempt(self, game: str, date: str, player_id: str, game_id: str) -> None:
        """List ``game_id`` as the player's ranked attempt of the day (its game exists)."""
        key = attempts_key(game, date)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, player_id, game_id)
            pipe.expire(key, RANKED_TTL)
            await pipe.execute()

    async def replicated_move_id_version(
        self, game_id: str, move_id: str
    ) -> tuple[int | None, bool]:
        """:meth:`move_id_version`, and (durability 'replica') whether a replica holds
        that move: what answering a duplicate needs."""
        if not self.durable:
            return await self.move_id_version(game_id, move_id), True
        key = f"{game_key(game_id)}:move_ids"
        sha = hashlib.sha1(TOUCH_MOVE_ID_SCRIPT.encode()).hexdigest()
        command = ("EVALSHA", sha, 1, key, move_id)
        version, replicated = await self._write_and_wait(key, command, TOUCH_MOVE_ID_SCRIPT)
        return (None if version is None else int(version)), replicated

    async def move_id_version(self, game_id: str, move_id: str) -> int | None:
        """The version a client move id produced, if it was applied."""
        version = await self.redis.hget(f"{game_key(game_id)}:move_ids", move_id)
        return None if version is None else int(version)

    async def patches_after(self, game_id: str, version: int) -> list[bytes] | None:
        """The stored patches from ``version`` on, in order; None when they no longer
        reach back that far (the client needs a snapshot)."""
        key = f"{game_key(game_id)}:patches"
        entries = await self.redis.zrangebyscore(key, f"({version}", "+inf", withscores=True)
        if entries and int(entries[0][1]) != version + 1:
            return None
        return [patch for patch, _ in entries]

    async def log(self, game_id: str) -> list[dict[str, Any]]:
        """The whole move log, oldest first (``protocol/REST.md``, "Log")."""
        return self._moves(await self.redis.xrange(f"{game_key(game_id)}:log"))

    async def log_page(
        self, game_id: str, after: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` moves of the log after the cursor ``after`` (None: from the
        first), oldest first, and the cursor of the next page (None after the last)."""
        start = "-" if after is None else f"({after}"
        entries = await self.redis.xrange(f"{game_key(game_id)}:log", start, "+", limit + 1)
        more = len(entries) > limit
        entries = entries[:limit]
        cursor = entries[-1][0].decode() if more else None
        return self._moves(entries), cursor

    @staticmethod
    def _moves(entries: list[Any]) -> list[dict[str, Any]]:
        return [
            {
                "version": int(fields[b"version"]),
                "move": fields[b"move"].decode(),
                "server_time": int(fields[b"server_time"]),
                "client_time": int(fields[b"client_time"]) if fields[b"client_time"] else None,
                "state_hash": fields[b"state_hash"].decode(),
                "hash": fields[b"chain"].decode(),
            }
            for _, fields in entries
        ]
