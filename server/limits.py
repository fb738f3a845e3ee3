"""The limits on what one client may consume (README.md, "Limits"; ``protocol/REST.md``).

* Rates (accounts, requests, moves, audits) are token buckets in Redis, so every
  instance shares them: one ``EVALSHA`` checks every bucket a request draws on and
  takes a token from each only if all have one.  A refusal is remembered locally
  until its retry time, so a client that keeps hammering costs no Redis call.
* Open WebSockets per address: a sorted set of connection ids per address in Redis,
  scored by expiry; each process refreshes its own sockets' entries (a heartbeat), so
  those of a crashed process drop out by themselves.
* Frames per WebSocket: :class:`Credits`, a local bucket per socket.
* The audit pool: :class:`AuditPool`, a bounded number of audits at once and in line;
  the hint pool: :class:`HintPool`, the same for hints (in threads).

Refusals are counted per kind by :meth:`Limiter.refused`, which also feeds the metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import hashlib
import math
import multiprocessing
import os
import secrets
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.asyncio import RedisCluster
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from server import metrics
from server.auth import bearer_token
from server.batcher import Batcher
from server.codec import respond
from server.config import Limits
from server.errors import ApiError
from server.operator import credentials

T = TypeVar("T")

# KEYS: the buckets.  ARGV: per bucket, its capacity then its refill per millisecond.
# Returns {0, 0} when a token was taken from every bucket, else {wait_ms, index} of the
# bucket that refills last (nothing is taken).  Time is Redis's, the same for every
# instance.  A bucket is a hash {t: tokens, at: ms}, expiring once it would be full.
TAKE_SCRIPT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local levels = {}
local wait, worst = 0, 0
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[2 * i - 1])
  local per_ms = tonumber(ARGV[2 * i])
  local bucket = redis.call('HMGET', KEYS[i], 't', 'at')
  local level = capacity
  if bucket[1] then
    level = math.min(capacity, tonumber(bucket[1]) + (now - tonumber(bucket[2])) * per_ms)
  end
  levels[i] = level
  if level < 1 then
    local needed = math.ceil((1 - level) / per_ms)
    if needed > wait then wait, worst = needed, i end
  end
end
if wait > 0 then return {wait, worst} end
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[2 * i - 1])
  local per_ms = tonumber(ARGV[2 * i])
  local level = levels[i] - 1
  redis.call('HSET', KEYS[i], 't', tostring(level), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil((capacity - level) / per_ms) + 1000)
end
return {0, 0}
"""

# KEYS: the address's connections.  ARGV: connection id, limit, lifetime ms.
# Returns 1 if the connection was added, 0 if the address is at its limit.
CONNECT_SCRIPT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
"""

#: Audit child processes run at this niceness: play comes first.
AUDIT_NICENESS = 10
PR_SET_PDEATHSIG = 1

#: Closed sockets after which (once closes pause for RELEASE_DELAY_SECONDS) the process
#: returns freed memory to the OS.
RELEASE_AFTER_CLOSES = 500
RELEASE_DELAY_SECONDS = 2.0
#: Entries of closed connections removed from Redis in one pipeline at most.
FORGET_BATCH = 500

#: A connection's entry lives this long unless its process refreshes it.
CONNECTION_LIFETIME_MS = 60_000
HEARTBEAT_SECONDS = CONNECTION_LIFETIME_MS / 3000
#: Refusals remembered locally (oldest forgotten first).
REMEMBERED_REFUSALS = 10_000

MINUTE_MS = 60_000
HOUR_MS = 3_600_000


@dataclass(frozen=True)
class Rate:
    """A bucket kind: ``count`` tokens, refilled at ``count`` per ``period_ms``."""

    kind: str
    count: int
    period_ms: int

    @property
    def per_ms(self) -> float:
        return self.count / self.period_ms


def rates(limits: Limits) -> dict[str, Rate]:
    """Every bucket kind, by name (README.md names the flags)."""
    table = [
        Rate("players", limits.players_per_hour, HOUR_MS),
        Rate("address_requests", limits.address_requests_per_minute, MINUTE_MS),
        Rate("player_requests", limits.player_requests_per_minute, MINUTE_MS),
        Rate("address_moves", limits.address_moves_per_minute, MINUTE_MS),
        Rate("player_moves", limits.player_moves_per_minute, MINUTE_MS),
        Rate("audits", limits.audits_per_minute, MINUTE_MS),
        Rate("hints", limits.hints_per_minute, MINUTE_MS),
        Rate("name_changes", limits.name_changes_per_hour, HOUR_MS),
        Rate("transfer_codes", limits.transfer_codes_per_hour, HOUR_MS),
        Rate("transfer_redeems", limits.transfer_redeems_per_hour, HOUR_MS),
        Rate("revocations", limits.revocations_per_hour, HOUR_MS),
        Rate("operator_requests", limits.operator_requests_per_minute, MINUTE_MS),
    ]
    return {rate.kind: rate for rate in table}


def bucket_key(kind: str, subject: str) -> str:
    """A rate bucket's key: hash-tagged, so its script touches one Redis Cluster slot."""
    return f"limit:{{{kind}:{subject}}}"


def rate_limited(kind: str, wait_ms: int) -> ApiError:
    return ApiError(
        "rate_limited",
        f"too many {kind.replace('_', ' ')}: retry in {wait_ms} ms",
        limit=kind,
        retry_after_ms=wait_ms,
    )


def retry_after_header(wait_ms: int) -> str:
    """``Retry-After`` is whole seconds: rounded up, so a client that waits it succeeds."""
    return str(max(1, math.ceil(wait_ms / 1000)))


class Limiter:
    """The shared limits of one process (``app.state.limits``)."""

    def __init__(self, redis: Any, limits: Limits, batcher: Batcher) -> None:
        self.redis = redis
        self.limits = limits
        #: The store's: the scripts of the limits ride in the moves' pipelines.
        self.batcher = batcher
        self.rates = rates(limits)
        self._take_sha = hashlib.sha1(TAKE_SCRIPT.encode()).hexdigest()
        self._connect_sha = hashlib.sha1(CONNECT_SCRIPT.encode()).hexdigest()
        #: bucket key -> monotonic time until which it is known to be empty.
        self._empty_until: dict[str, float] = {}
        #: connection id -> its address key (this process's open sockets).
        self._connections: dict[str, str] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        #: Closed connections whose entries are still to be removed, and the task doing it.
        self._departed: list[tuple[str, str]] = []
        self._forgetting: asyncio.Task[None] | None = None
        self._closed_since_release = 0
        self._release: asyncio.TimerHandle | None = None
        self.release_after_closes = RELEASE_AFTER_CLOSES
        #: Times freed connection memory was handed back to the OS.
        self.memory_releases = 0
        #: Refusals by kind since start (``players``, ``moves``…, ``connections``).
        self.refusals: Counter[str] = Counter()

    # -- token buckets -----------------------------------------------------------

    async def take(self, checks: Iterable[tuple[str, str]]) -> None:
        """One token from each ``(kind, subject)`` bucket, or ``rate_limited``."""
        if not self.limits.rate_limits:
            return
        buckets = [(self.rates[kind], bucket_key(kind, subject)) for kind, subject in checks]
        now = time.monotonic()
        for rate, key in buckets:
            until = self._empty_until.get(key)
            if until is not None:
                if until > now:
                    self.refused(rate.kind)
                    raise rate_limited(rate.kind, math.ceil((until - now) * 1000))
                del self._empty_until[key]
        # One script takes from every bucket or none; on a cluster the buckets are in
        # different slots, so one script each, in order: a refusal by a later bucket
        # leaves the token already taken from an earlier one (a request counts once more).
        groups = [buckets[index : index + 1] for index in range(len(buckets))]
        if not isinstance(self.redis, RedisCluster):
            groups = [buckets]
        for group in groups:
            await self._take_group(group, now)

    async def _take_group(self, buckets: list[tuple[Rate, str]], now: float) -> None:
        keys = [key for _, key in buckets]
        args: list[Any] = []
        for rate, _ in buckets:
            args += [rate.count, repr(rate.per_ms)]
        wait_ms, index = await self._evalsha(self._take_sha, TAKE_SCRIPT, keys, args)
        if wait_ms:
            rate, key = buckets[int(index) - 1]
            if len(self._empty_until) >= REMEMBERED_REFUSALS:
                self._empty_until.pop(next(iter(self._empty_until)))
            self._empty_until[key] = now + int(wait_ms) / 1000
            self.refused(rate.kind)
            raise rate_limited(rate.kind, int(wait_ms))

    def refused(self, kind: str) -> None:
        """Count a refusal (every limit's refusals come here, the frame credits' too)."""
        self.refusals[kind] += 1
        metrics.rate_limited(kind)

    async def _evalsha(self, sha: str, script: str, keys: list[str], args: list[Any]) -> Any:
        command = ("EVALSHA", sha, len(keys), *keys, *args)
        return await self.batcher.execute(keys[0], command, script)

    # -- connections -------------------------------------------------------------

    async def connect(self, address: str) -> str:
        """Take one of ``address``'s connection places: its id for :meth:`disconnect`,
        or ``too_many_connections``."""
        key = f"limit:connections:{address}"
        connection_id = secrets.token_hex(8)
        args = [connection_id, self.limits.max_connections_per_address, CONNECTION_LIFETIME_MS]
        if not await self._evalsha(self._connect_sha, CONNECT_SCRIPT, [key], args):
            self.refused("connections")
            raise ApiError(
                "too_many_connections",
                f"at most {self.limits.max_connections_per_address} WebSockets per address",
            )
        self._connections[connection_id] = key
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._refresh_connections())
        return connection_id

    def disconnect(self, connection_id: str) -> None:
        """Forget a closed connection: its entry goes in the next batch removed from Redis
        (:meth:`_forget_departed`), so a socket's objects are freed as it closes. Awaiting
        a pool connection for one ``ZREM`` each, a burst of 2,000 closes kept their
        sockets alive for 6-9 s, past the memory release, and some entries were left to
        expire."""
        key = self._connections.pop(connection_id)
        self._departed.append((key, connection_id))
        if self._forgetting is None or self._forgetting.done():
            self._forgetting = asyncio.create_task(self._forget_departed())
        self._closed_since_release += 1
        if self._closed_since_release >= self.release_after_closes and self._release is None:
            # Once the burst is over (no close for a moment), not at every close.
            self._release = asyncio.get_running_loop().call_later(
                RELEASE_DELAY_SECONDS, self._release_memory
            )
        elif self._release is not None:
            self._release.cancel()
            self._release = asyncio.get_running_loop().call_later(
                RELEASE_DELAY_SECONDS, self._release_memory
            )

    async def _forget_departed(self) -> None:
        """Remove the entries of closed connections, :data:`FORGET_BATCH` per pipeline.
        With Redis away they are dropped: unrefreshed, each expires within
        ``CONNECTION_LIFETIME_MS``."""
        while self._departed:
            batch = self._departed[:FORGET_BATCH]
            del self._departed[:FORGET_BATCH]
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key, connection_id in batch:
                        pipe.zrem(key, connection_id)
                    await pipe.execute()
            except (RedisError, OSError):
                self._departed.clear()
                return

    def _release_memory(self) -> None:
        self._release = None
        self._closed_since_release = 0
        release_memory()
        self.memory_releases += 1

    async def _refresh_connections(self) -> None:
        """Every HEARTBEAT_SECONDS, while this process has open connections: refresh them."""
        while self._connections:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            with contextlib.suppress(RedisError, OSError):  # the next beat tries again
                await self.refresh_connections()

    async def refresh_connections(self) -> None:
        """Push back the expiry of this process's open connections (one pipeline)."""
        deadline = int(time.time() * 1000) + CONNECTION_LIFETIME_MS
        async with self.redis.pipeline(transaction=False) as pipe:
            for connection_id, key in list(self._connections.items()):
                pipe.zadd(key, {connection_id: deadline}, xx=True)
                pipe.pexpire(key, CONNECTION_LIFETIME_MS)
            await pipe.execute()

    async def stop(self) -> None:
        if self._forgetting is not None:
            await self._forgetting  # bounded: one pipeline per FORGET_BATCH closes
        if self._release is not None:
            self._release.cancel()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat


def release_memory() -> None:
    """Hand memory freed by closed sockets back to the OS: collect the cycles they left,
    and trim glibc's heap (which keeps freed blocks until ``malloc_trim``; it holds the
    large buffers on pymalloc).  On jemalloc (``server.allocator``) the collection is what
    matters: jemalloc purges the freed pages itself within a second."""
    gc.collect()
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)


class Credits:
    """A WebSocket's frame allowance: ``burst`` frames, refilled at ``per_second``;
    ``refused`` counts each refusal (:meth:`Limiter.refused`)."""

    def __init__(self, limits: Limits, refused: Callable[[str], None]) -> None:
        self.refused = refused
        self.enabled = limits.rate_limits
        self.burst = float(limits.message_credits)
        self.per_second = float(limits.message_credits_per_second)
        self.level = self.burst
        self.at = time.monotonic()

    def spend(self) -> None:
        """Take a credit for one frame, or raise ``rate_limited``."""
        if not self.enabled:
            return
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.at) * self.per_second)
        self.at = now
        if self.level < 1:
            self.refused("messages")
            raise rate_limited("messages", math.ceil((1 - self.level) / self.per_second * 1000))
        self.level -= 1


def audit_process_setup() -> None:
    """In an audit child process: yield the CPU to the game server's event loops (nice),
    and die with the worker that started it (Linux), never outliving it."""
    os.nice(AUDIT_NICENESS)
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class AuditPool:
    """At most ``workers`` audits at once and ``queue`` more waiting; beyond, ``audit_busy``.

    Audits are CPU work: bounding them keeps the event loop (moves, reads) responsive
    under a flood of audit requests.  :meth:`run` runs a posted export's audit in a
    child process: a thread would hold the GIL and delay every event-loop turn.
    """

    def __init__(self, limits: Limits) -> None:
        self.workers = limits.audit_workers
        self.slots = asyncio.Semaphore(limits.audit_workers)
        self.room = limits.audit_workers + limits.audit_queue
        #: Audits running or waiting (the metrics' audit queue).
        self.taken = 0
        self._processes: ProcessPoolExecutor | None = None

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the pool's child processes (started at first use)."""
        if self._processes is None:
            context = multiprocessing.get_context("spawn")  # no fork of a running loop
            self._processes = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=audit_process_setup
            )
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._processes, function, *args
            )
        except BrokenProcessPool:
            self._processes = None  # a child died (killed?): a new pool next time
            raise ApiError(
                "audit_busy", "the audit worker stopped; retry", retry_after_ms=1000
            ) from None

    def stop(self) -> None:
        if self._processes is not None:
            # Waits for the audit running now, if any (at most a few seconds).
            self._processes.shutdown(wait=True, cancel_futures=True)
            self._processes = None

    def check_room(self) -> None:
        """``audit_busy`` when every slot and queue place is taken (checked before the
        body is read, so a refusal costs next to nothing)."""
        if self.taken >= self.room:
            raise ApiError(
                "audit_busy", "too many audits are running or waiting", retry_after_ms=1000
            )

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        self.check_room()
        self.taken += 1
        metrics.audit_queue(+1)
        try:
            async with self.slots:
                yield
        finally:
            self.taken -= 1
            metrics.audit_queue(-1)


class HintPool:
    """At most ``hint_workers`` hints at once (worker threads) and ``hint_queue`` more
    waiting; beyond, ``hints_busy``.  A hint is a second or less of solver work
    (``server.hints``): threads share the GIL with the event loop, which still gets its
    turn every switch interval, and need no child process per worker."""

    def __init__(self, limits: Limits) -> None:
        self.slots = asyncio.Semaphore(limits.hint_workers)
        self.room = limits.hint_workers + limits.hint_queue
        #: Hints running or waiting.
        self.taken = 0
        self._threads = ThreadPoolExecutor(limits.hint_workers, thread_name_prefix="hint")

    def check_room(self) -> None:
        if self.taken >= self.room:
            raise ApiError(
                "hints_busy", "too many hints are running or waiting", retry_after_ms=1000
            )

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker thread, in turn (``hints_busy`` when full)."""
        self.check_room()
        self.taken += 1
        try:
            async with self.slots:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(self._threads, function, *args)
        finally:
            self.taken -= 1

    def stop(self) -> None:
        self._threads.shutdown(wait=True, cancel_futures=True)


def client_address(scope: Scope) -> str:
    """The client's address as uvicorn reports it (behind a proxy, uvicorn's
    ``--forwarded-allow-ips`` decides whether ``X-Forwarded-For`` is believed)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class RateLimits:
    """REST middleware: each ``/v1`` request draws on its address's and its player's
    request buckets, plus the account, move or audit bucket its route draws on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        limiter: Limiter = state.limits
        if limiter.limits.rate_limits:
            request = Request(scope)
            address = client_address(scope)
            authorization = request.headers.get("authorization")
            player = token_player(state.service, authorization)
            operator = None
            if scope["path"].startswith("/v1/operator/"):
                operator = token_operator(state.service, authorization)
            checks = buckets(scope["method"], scope["path"], address, player, operator)
            try:
                await limiter.take(checks)
            except ApiError as error:
                response = respond(request, {"error": error.body()}, error.status)
                wait_ms = error.details["retry_after_ms"]
                response.headers["Retry-After"] = retry_after_header(wait_ms)
                await response(scope, receive, send)
                return
            except (RedisError, OSError):
                unavailable = ApiError("store_unavailable", "the store is unreachable; retry later")
                response = respond(request, {"error": unavailable.body()}, unavailable.status)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def token_player(service: Any, authorization: str | None) -> str | None:
    """The player of a valid bearer token, else None (the route answers the 401)."""
    try:
        token = bearer_token(authorization)
        return None if token is None else str(service.authenticate(token))
    except ApiError:
        return None


def token_operator(service: Any, authorization: str | None) -> str | None:
    """The operator of a well-signed operator token, else None (the route checks it)."""
    try:
        token = bearer_token(authorization)
    except ApiError:
        return None
    claims = None if token is None else credentials.signed_claims(service.secret, token)
    return None if claims is None else claims[0]


def buckets(
    method: str, path: str, address: str, player: str | None, operator: str | None = None
) -> list[tuple[str, str]]:
    """The ``(kind, subject)`` buckets a REST request draws on."""
    checks = [("address_requests", address)]
    if player is not None:
        checks.append(("player_requests", player))
    if path.startswith("/v1/operator/"):
        checks.append(("operator_requests", operator or address))
    if method in ("PUT", "PATCH") and path == "/v1/players/me":
        checks.append(("name_changes", player or address))
    if method == "DELETE" and path in ("/v1/players/me", "/v1/players/me/tokens"):
        checks.append(("revocations", player or address))
    if method == "POST":
        if path == "/v1/players":
            checks.append(("players", address))
        elif path == "/v1/players/me/transfer":
            checks.append(("transfer_codes", player or address))
        elif path == "/v1/players/transfer":
            checks.append(("transfer_redeems", address))
        elif path == "/v1/audit":
            checks.append(("audits", player or address))
        elif path.startswith("/v1/games/") and path.endswith("/hint"):
            checks.append(("hints", player or address))
        elif path.startswith("/v1/games/") and path.endswith("/moves"):
            checks.append(("address_moves", address))
            if player is not None:
                checks.append(("player_moves", player))
    return checks
