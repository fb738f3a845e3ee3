"""Prometheus metrics, all defined here (``GET /metrics``).

With ``PROMETHEUS_MULTIPROC_DIR`` set (``python -m server`` sets it for every run), the
client library keeps each worker's values in files there and ``/metrics`` sums every
worker's; without it (an app served in-process, as in tests) the values are this
process's.  Other modules call the small functions below; none imports the client
library itself.

Counts and observations are tallied in the process and handed to the client library
once a second (:func:`flush_every`) and before every exposition: in multiprocess mode
each of the library's additions writes a file-backed value (a ``getpid``, a lock, a
struct), 1.3-1.8 µs, and every move made four of them.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import hmac
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ParamSpec, TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.errors import ApiError

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

MOVES = Counter(
    "solitaire_moves_total",
    "Moves answered: outcome accepted or rejected, code the error code (empty if accepted)",
    ["transport", "outcome", "code"],
)
MOVE_SECONDS = Histogram(
    "solitaire_move_seconds",
    "Time from a move's arrival to its reply, by transport (websocket, rest)",
    ["transport"],
    buckets=LATENCY_BUCKETS,
)
CONNECTIONS = Gauge(
    "solitaire_websocket_connections",
    "Open WebSocket connections",
    multiprocess_mode="livesum",
)
HTTP_REQUESTS = Counter(
    "solitaire_http_requests_total", "HTTP requests answered, by status", ["status"]
)
PATCHES = Counter(
    "solitaire_patches_fanned_out_total", "Patch frames handed to local WebSocket subscribers"
)
REDIS_SECONDS = Histogram(
    "solitaire_redis_command_seconds",
    "Redis round trips (one command, or one pipeline), by command",
    ["command"],
    buckets=LATENCY_BUCKETS,
)
REDIS_ERRORS = Counter(
    "solitaire_redis_errors_total", "Redis calls that failed, by error class", ["error"]
)
RATE_LIMITED = Counter(
    "solitaire_rate_limited_total", "Requests and messages refused by a rate limit", ["kind"]
)
UNHANDLED_EXCEPTIONS = Counter(
    "solitaire_unhandled_exceptions_total",
    "Exceptions nothing expected, logged with their traceback, by the logger that logged "
    "them (uvicorn.error: in a request or WebSocket; asyncio: in a task; server.*: a part "
    "of the server that carries on)",
    ["location"],
)
IDENTITY_FAILURES = Counter(
    "solitaire_identity_verification_failures_total",
    "ID tokens refused (POST /v1/players/login, /v1/players/me/identity), by reason",
    ["reason"],
)
AUDIT_QUEUE = Gauge(
    "solitaire_audit_queue",
    "Audits waiting for or running in the pool",
    multiprocess_mode="livesum",
)

POSTCLOSE_AUDITS = Counter(
    "solitaire_postclose_audits_total",
    "Ranked attempts audited after their day closed, by outcome (cleared, flagged, voided)",
    ["outcome"],
)
REVIEW_FLAGS = Counter(
    "solitaire_review_flags_total",
    "Fair-play signals that put an attempt in the review queue, by signal",
    ["signal"],
)
VOIDS = Counter(
    "solitaire_voids_total", "Ranked attempts voided, by kind (auto: integrity; manual)", ["kind"]
)
REVIEW_QUEUE = Gauge(
    "solitaire_review_queue",
    "Attempts waiting in the review queue (flagged), every day (as last read)",
    multiprocess_mode="max",
)
POSTCLOSE_LAG = Gauge(
    "solitaire_postclose_audit_lag_seconds",
    "Seconds from a day's close to the end of its post-close audit (the latest day done)",
    multiprocess_mode="max",
)


# -- calls from the rest of the server ----------------------------------------------


@functools.cache
def child(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, looked up once: every move counts and times itself, and
    the client library's lookup (a lock and a dict) costs more than the count. The label
    values come from fixed sets (transports, error codes, command names)."""
    return metric.labels(*labels)


#: Counter child -> the amount not yet handed to it.
_counts: dict[Any, float] = {}
#: Histogram child -> [sum, count per bucket] not yet handed to it.
_observations: dict[Any, list[float]] = {}
#: Seconds between two hand-overs of the tallies to the client library.
FLUSH_INTERVAL = 1.0


def count(counter: Any, amount: float = 1) -> None:
    """Add ``amount`` to ``counter`` (a child, from :func:`child`, or a label-less one)."""
    _counts[counter] = _counts.get(counter, 0) + amount


def observe(histogram: Any, value: float) -> None:
    """Observe ``value`` in ``histogram`` (a child, from :func:`child`)."""
    tally = _observations.get(histogram)
    if tally is None:
        tally = _observations[histogram] = [0.0] * (1 + len(histogram._upper_bounds))
    tally[0] += value
    # The library's own rule: the first bucket whose upper bound is >= value (+Inf last).
    tally[1 + bisect.bisect_left(histogram._upper_bounds, value)] += 1


def flush() -> None:
    """Hand the tallies to the client library (what ``inc`` and ``observe`` would have
    written, in one addition per value)."""
    counts, observations = list(_counts.items()), list(_observations.items())
    _counts.clear()
    _observations.clear()
    for counter, amount in counts:
        counter.inc(amount)
    for histogram, tally in observations:
        histogram._sum.inc(tally[0])
        for bucket, number in zip(histogram._buckets, tally[1:], strict=True):
            if number:
                bucket.inc(number)


async def flush_every(interval: float = FLUSH_INTERVAL) -> None:
    """Flush the tallies every ``interval`` seconds, and once more when cancelled."""
    try:
        while True:
            await asyncio.sleep(interval)
            flush()
    finally:
        flush()


def rate_limited(kind: str) -> None:
    """One refusal by the rate limit ``kind`` (e.g. ``request``, ``move``, ``connection``)."""
    count(child(RATE_LIMITED, kind))


def identity_refused(reason: str) -> None:
    """One ID token refused, for ``reason`` (``server.accounts.identity.REASONS``)."""
    count(child(IDENTITY_FAILURES, reason))


def audit_queue(delta: int) -> None:
    """The audit queue grew (+1) or shrank (-1)."""
    AUDIT_QUEUE.inc(delta)


class ExceptionCounter(logging.Handler):
    """Counts each record logged at error level with an exception (``log.exception``,
    uvicorn's "Exception in ASGI application", asyncio's "Task exception was never
    retrieved") by its logger's name: whatever catches an exception nothing expected
    logs it so, and an operator's alert sees the count."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            count(child(UNHANDLED_EXCEPTIONS, record.name))


_exception_counter = ExceptionCounter()


def count_logged_exceptions() -> None:
    """Count unexpected exceptions (:class:`ExceptionCounter`) from now on (once a
    process, after its logging is configured: ``dictConfig`` replaces the root's
    handlers)."""
    root = logging.getLogger()
    if _exception_counter not in root.handlers:
        root.addHandler(_exception_counter)


def postclose_audited(outcome: str, signals: list[str]) -> None:
    count(child(POSTCLOSE_AUDITS, outcome))
    for signal in signals:
        count(child(REVIEW_FLAGS, signal))


def void_made(kind: str) -> None:
    count(child(VOIDS, kind))


def review_queue(length: int) -> None:
    REVIEW_QUEUE.set(length)


def postclose_lag(seconds: float) -> None:
    POSTCLOSE_LAG.set(seconds)


def patches_fanned_out(number: int) -> None:
    count(PATCHES, number)


def redis_round_trip(command: str, seconds: float) -> None:
    """One Redis command (or pipeline, ``command`` "pipeline") took ``seconds``."""
    observe(child(REDIS_SECONDS, command), seconds)


def redis_error(error: Exception) -> None:
    count(child(REDIS_ERRORS, type(error).__name__))


P = ParamSpec("P")
R = TypeVar("R")


def measure_move(
    transport: str,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Decorates a move handler: counts its outcome (an :class:`ApiError`'s code when it
    raises one) and times it from arrival to reply."""

    def decorate(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(handler)
        async def measured(*args: P.args, **kwargs: P.kwargs) -> R:
            started = time.perf_counter()
            code = "internal"
            try:
                result = await handler(*args, **kwargs)
                code = ""
                return result
            except ApiError as error:
                code = error.code
                raise
            except RedisError:
                code = "store_unavailable"
                raise
            finally:
                outcome = "accepted" if code == "" else "rejected"
                count(child(MOVES, transport, outcome, code))
                observe(child(MOVE_SECONDS, transport), time.perf_counter() - started)

        return measured

    return decorate


# -- Redis ----------------------------------------------------------------------------


class MeasuredPipeline(Pipeline):
    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        started = time.perf_counter()
        try:
            return await super().execute(raise_on_error)
        except RedisError as error:
            redis_error(error)
            raise
        finally:
            redis_round_trip("pipeline", time.perf_counter() - started)


class MeasuredRedis(Redis):
    """A Redis client that times every command and pipeline and counts failures."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().execute_command(*args, **options)
        except RedisError as error:
            redis_error(error)
            raise
        finally:
            name = args[0] if args else "?"
            name = name.decode() if isinstance(name, bytes) else str(name)
            redis_round_trip(name.upper(), time.perf_counter() - started)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return MeasuredPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )


# -- HTTP -----------------------------------------------------------------------------


class MetricsMiddleware:
    """Counts HTTP answers by status and keeps the open WebSocket gauge."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":

            async def send_counted(message: Message) -> None:
                if message["type"] == "http.response.start":
                    count(child(HTTP_REQUESTS, str(message["status"])))
                await send(message)

            await self.app(scope, receive, send_counted)
        elif scope["type"] == "websocket":
            accepted = False

            async def send_watched(message: Message) -> None:
                nonlocal accepted
                if message["type"] == "websocket.accept" and not accepted:
                    accepted = True
                    CONNECTIONS.inc()
                await send(message)

            try:
                await self.app(scope, receive, send_watched)
            finally:
                if accepted:
                    CONNECTIONS.dec()
        else:
            await self.app(scope, receive, send)


def exposition() -> bytes:
    """Every worker's metrics in multiprocess mode (this one's up to now, the others' up
    to their last flush), else this process's."""
    flush()
    if os.environ.get(MULTIPROCESS_DIR):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest()


def authorized(authorization: str | None, token: str) -> bool:
    """Whether a request's Authorization header carries ``token`` (any, if empty)."""
    if not token:
        return True
    given = (authorization or "").encode()
    return hmac.compare_digest(given, f"Bearer {token}".encode())


#: The answer to a scrape without the token.
UNAUTHORIZED = b'{"error":{"code":"unauthorized","message":"/metrics needs its bearer token"}}'
NOT_HERE = b'{"error":{"code":"not_found","message":"/metrics is served on its own port"}}'
#: The answer on the API's port when neither ``--metrics-port`` nor ``--metrics-token`` is
#: set: the API's port is public, and an anonymous scrape costs a full exposition.
OFF = (
    b'{"error":{"code":"not_found","message":"/metrics is off on this port:'
    b' set --metrics-port or --metrics-token"}}'
)


async def endpoint(request: Request) -> Response:
    """``GET /metrics`` on the API's port: 404 when ``--metrics-port`` serves it or
    neither it nor ``--metrics-token`` is set (never anonymous on the public port), 401
    without ``--metrics-token``'s token."""
    settings = request.app.state.settings
    if settings.metrics_port:
        return Response(NOT_HERE, 404, media_type="application/json")
    if not settings.metrics_token:
        return Response(OFF, 404, media_type="application/json")
    if not authorized(request.headers.get("authorization"), settings.metrics_token):
        return Response(UNAUTHORIZED, 401, media_type="application/json")
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST)


def serve_listener(host: str, port: int, token: str) -> ThreadingHTTPServer:
    """``GET /metrics`` on a listener of its own (``--metrics-port``), in a thread of
    ``python -m server``'s main process: every worker's values, from the multiprocess
    files (each worker hands its tallies over once a second)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.split("?", 1)[0] != "/metrics":
                self._answer(404, NOT_HERE, "application/json")
            elif not authorized(self.headers.get("Authorization"), token):
                self._answer(401, UNAUTHORIZED, "application/json")
            else:
                self._answer(200, exposition(), CONTENT_TYPE_LATEST)

        def _answer(self, status: int, body: bytes, media: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # scrapes are not logged (Prometheus makes one every few seconds)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server


def worker_exited(pid: int) -> None:
    """Drop an exited worker's live gauges (multiprocess mode only)."""
    if os.environ.get(MULTIPROCESS_DIR):
        multiprocess.mark_process_dead(pid)
