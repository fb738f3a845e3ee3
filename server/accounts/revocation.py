"""Revoking every token of a player ("sign out everywhere", ``protocol/ACCOUNTS.md``).

A token is signed, not stored (``server.auth``), so a revocation is a fact about its
player: a *not before* (Unix seconds) under which every token issued earlier is refused.
:func:`revoke_tokens` writes it in two places:

* ``player:{id}:not_before`` (string): the authoritative value, read wherever a token is
  issued (a new token counts as issued no earlier, so it is never born revoked) and by
  renewal.  It expires :data:`KEEP_SECONDS` after the revocation, once every token it
  refuses has expired anyway.
* ``tokens:revoked`` (stream; fields ``player``, ``not_before``): the feed each process
  reads every :data:`POLL_INTERVAL` seconds into memory (:class:`Revocations`), so that
  checking a token on a request is a dictionary lookup: the move path makes no Redis
  call for it.  Entries older than a token's lifetime are trimmed.

The feed grows by one entry per revocation: ``--revocations-per-hour`` bounds them per
player, and each process keeps one entry per player revoked in the last 31 days (about
100 bytes each).

The bound: a revoked token is refused by every process within :data:`REFUSAL_BOUND`
seconds (a poll interval, and the poll's own time), and a process's sockets authenticated
with it get a ``token_revoked`` error frame and are closed in the same pass.  A process
that could not read the feed for :data:`STALE_AFTER` seconds refuses every token with
``store_unavailable`` until it can again, rather than trust what it may have missed.

:func:`revoke_tokens` is the one way to revoke: ``DELETE /v1/players/me/tokens``, the
deletion of an account, and the operators' "revoke-tokens" action all call it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from server.auth import TOKEN_LIFETIME, Claims
from server.errors import ApiError
from server.players import player_key
from server.redisconn import stop_task

log = logging.getLogger("server.accounts")

FEED_KEY = "tokens:revoked"
#: Seconds between two reads of the feed by a process.
POLL_INTERVAL = 1.0
#: Seconds within which every process refuses a revoked token (and closes its sockets).
REFUSAL_BOUND = 2.0
#: A process whose last read of the feed is older than this refuses every token.
STALE_AFTER = 10.0
#: Entries read from the feed per round trip.
FEED_BATCH = 1000
#: Seconds a player's not-before value is kept: past it, every token it refused expired.
KEEP_SECONDS = TOKEN_LIFETIME + 24 * 3600

# KEYS: the player's not-before.  ARGV: the new value, its lifetime in seconds.
# Never lowered (two revocations in a row keep the later).
REVOKE_SCRIPT = """
local old = tonumber(redis.call('GET', KEYS[1]) or '0')
local value = math.max(old, tonumber(ARGV[1]))
redis.call('SET', KEYS[1], value, 'EX', ARGV[2])
return value
"""

#: Called with the player's new not-before value (this process's sockets listen).
Listener = Callable[[int], None]


def not_before_key(player_id: str) -> str:
    return f"{player_key(player_id)}:not_before"


async def not_before(redis: Any, player_id: str) -> int:
    """The player's not-before value (0: never revoked), read from Redis."""
    value = await redis.get(not_before_key(player_id))
    return 0 if value is None else int(value)


async def revoke_tokens(redis: Any, player_id: str, now: float) -> int:
    """Revoke every token of ``player_id`` issued up to ``now`` (Unix seconds): its new
    not-before value.  Written first where tokens are issued, then to the feed; a call
    that fails part-way is repeated by its caller (its 503 says to retry)."""
    script = redis.register_script(REVOKE_SCRIPT)
    value = int(await script(keys=[not_before_key(player_id)], args=[int(now) + 1, KEEP_SECONDS]))
    entry_id = await redis.xadd(FEED_KEY, {"player": player_id, "not_before": value})
    written_ms = int((entry_id.decode() if isinstance(entry_id, bytes) else entry_id).split("-")[0])
    await redis.xtrim(FEED_KEY, minid=written_ms - KEEP_SECONDS * 1000, approximate=True)
    return value


class Revocations:
    """This process's copy of the revocation feed (``app.state.revocations``)."""

    def __init__(self, redis: Any, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis
        #: Unix seconds (the service's clock: tests move it).
        self.clock = clock
        #: player id -> not-before, for revocations newer than a token's lifetime.
        self.not_before: dict[str, int] = {}
        self._last_id = "0-0"
        #: Monotonic time of the last complete read of the feed; None: not started (a
        #: service without an app, as in some tests, checks only what it revoked itself).
        self._synced_at: float | None = None
        self._listeners: dict[str, set[Listener]] = {}
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Read the whole feed, then keep reading it in the background."""
        await self.sync()
        self._task = asyncio.create_task(self._run(), name="revocations")

    async def stop(self) -> None:
        if self._task is not None:
            await stop_task(self._task)
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(POLL_INTERVAL)
            try:
                await self.sync()
            except (RedisError, OSError) as error:
                log.warning("reading the token revocations failed (%s); trying again", error)
            except Exception:  # the loop must go on: past STALE_AFTER every token is refused
                log.exception("reading the token revocations failed; trying again")

    async def sync(self) -> None:
        """Read the feed's new entries; drop the ones no live token can be under."""
        while True:
            entries = await self.redis.xrange(
                FEED_KEY, min=f"({self._last_id}", max="+", count=FEED_BATCH
            )
            for entry_id, fields in entries:
                self._last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                try:
                    player_id, value = fields[b"player"].decode(), int(fields[b"not_before"])
                except (KeyError, ValueError, UnicodeDecodeError):
                    log.error("skipping a malformed token revocation entry %s", self._last_id)
                    continue
                self.note(player_id, value)
            if len(entries) < FEED_BATCH:
                break
        self._synced_at = time.monotonic()
        oldest = self.clock() - TOKEN_LIFETIME
        for player_id in [p for p, value in self.not_before.items() if value < oldest]:
            del self.not_before[player_id]

    def note(self, player_id: str, value: int) -> None:
        """Take in a revocation (from the feed, or made here) and tell the player's
        sockets on this process."""
        if value <= self.not_before.get(player_id, 0):
            return
        self.not_before[player_id] = value
        for listener in list(self._listeners.get(player_id, ())):
            listener(value)

    def check(self, claims: Claims) -> None:
        """``token_revoked`` for a token issued before its player's latest revocation."""
        if self._synced_at is not None and time.monotonic() - self._synced_at > STALE_AFTER:
            raise ApiError("store_unavailable", "token revocations cannot be read now; retry later")
        if claims.issued < self.not_before.get(claims.player_id, 0):
            raise ApiError(
                "token_revoked", "this token was revoked (signed out everywhere); sign in again"
            )

    async def revoke(self, player_id: str, now: float) -> int:
        """Revoke the player's tokens; this process refuses them at once."""
        value = await revoke_tokens(self.redis, player_id, now)
        self.note(player_id, value)
        return value

    def watch(self, player_id: str, listener: Listener) -> None:
        self._listeners.setdefault(player_id, set()).add(listener)

    def unwatch(self, player_id: str, listener: Listener) -> None:
        listeners = self._listeners.get(player_id)
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self._listeners[player_id]
