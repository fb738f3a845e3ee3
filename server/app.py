"""The Starlette application: routes, error handling, start-up and shut-down."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import mimetypes
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Match, Mount, NoMatchFound, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from server import metrics, rest, web
from server.accounts import routes as accounts
from server.accounts.identity import IdentityVerifier
from server.asyncapi import asyncapi_document
from server.codec import respond, wants_msgpack
from server.config import Settings, WeakSecret
from server.daily.selection import DailySelector
from server.errors import ApiError
from server.hub import Hub
from server.keys import MIN_SECRET_BYTES
from server.limits import AuditPool, HintPool, Limiter, RateLimits, retry_after_header
from server.logs import RequestIds
from server.openapi import openapi_document
from server.operator import routes as operator
from server.operator.actions import Operations
from server.operator.postclose import PostCloseAuditor
from server.operator.suspension import SWEEP_SECONDS
from server.redisconn import connect, stop_task, wait_for_redis
from server.service import GameService
from server.store import Store
from server.ws import retired_endpoint, websocket_endpoint

log = logging.getLogger("server")

SECRET_KEY = "server:secret"


async def shared_secret(redis: Redis, configured: str) -> bytes:
    """The configured secret, or one created once in Redis for every instance
    (:data:`~server.keys.MIN_SECRET_BYTES` random bytes)."""
    if configured:
        return configured.encode()
    await redis.set(SECRET_KEY, secrets.token_bytes(MIN_SECRET_BYTES), nx=True)
    value = await redis.get(SECRET_KEY)
    assert isinstance(value, bytes)
    if len(value) < MIN_SECRET_BYTES:
        raise WeakSecret(
            f"the secret kept in Redis under {SECRET_KEY!r} is {len(value)} bytes, under "
            f"{MIN_SECRET_BYTES}: delete it (a new one is made) or set --secret / SERVER_SECRET"
        )
    return value


#: Seconds between re-drives of board entries left pending (the first is at start).
REDRIVE_INTERVAL = 60.0


async def redrive_outboxes(service: GameService) -> None:
    """Record the board entries a stopped process left in ranked games' outboxes: at
    start, then every :data:`REDRIVE_INTERVAL` (``protocol/REDIS.md``, "Outbox")."""
    while True:
        try:
            drained = await service.redrive_outboxes()
        except (RedisError, OSError) as error:
            log.warning("re-driving board entries failed (%s); trying again later", error)
        else:
            if drained:
                log.info("recorded %d pending board entries", drained)
        await asyncio.sleep(REDRIVE_INTERVAL)


async def lift_ended_suspensions(operations: Operations) -> None:
    """Show again the entries of players whose suspension ended, every
    :data:`~server.operator.suspension.SWEEP_SECONDS` (``protocol/OPERATOR.md``)."""
    while True:
        try:
            lifted = await operations.lift_expired()
        except (RedisError, OSError) as error:
            log.warning("lifting ended suspensions failed (%s); trying again later", error)
        else:
            if lifted:
                log.info("lifted %d ended suspensions", lifted)
        await asyncio.sleep(SWEEP_SECONDS)


#: Seconds between sweeps of the names of expired players (the first is at start).
NAME_SWEEP_INTERVAL = 3600.0


async def sweep_names(service: GameService) -> None:
    """Release the display names of expired players, at start and then every
    :data:`NAME_SWEEP_INTERVAL` (``protocol/REDIS.md``)."""
    while True:
        try:
            released = await service.players.sweep_names()
        except (RedisError, OSError) as error:
            log.warning("sweeping names failed (%s); trying again later", error)
        else:
            if released:
                log.info("released %d names of expired players", released)
        await asyncio.sleep(NAME_SWEEP_INTERVAL)


class NegotiateAccept:
    """Answers ``406 not_acceptable`` to a ``/v1`` request whose Accept allows neither
    JSON nor msgpack, before the route runs (so nothing is created or played)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/"):
            request = Request(scope)
            try:
                wants_msgpack(request)
            except ApiError as error:
                response = respond(request, {"error": error.body()}, error.status)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    try:
        await request.app.state.store.ping()
    except (RedisError, OSError) as error:
        return JSONResponse(
            {
                "status": "unavailable",
                "error": {"code": "store_unavailable", "message": str(error)},
            },
            503,
        )
    return JSONResponse({"status": "ready"})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


async def asyncapi(request: Request) -> Response:
    return JSONResponse(asyncapi_document())


async def api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    response = respond(request, {"error": error.body()}, error.status)
    if "retry_after_ms" in error.details:
        response.headers["Retry-After"] = retry_after_header(error.details["retry_after_ms"])
    return response


async def store_error(request: Request, error: Exception) -> Response:
    log.warning("redis unavailable: %s", error)
    body = {"code": "store_unavailable", "message": "the store is unreachable; retry later"}
    return respond(request, {"error": body}, 503)


async def http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "malformed")
    body = {"code": code, "message": str(error.detail)}
    response = respond(request, {"error": body}, error.status_code)
    response.headers.update(error.headers or {})
    if error.status_code == 405:
        response.headers["Allow"] = allowed_methods(request, error.headers or {})
    return response


def allowed_methods(request: Request, headers: Mapping[str, str]) -> str:
    """The ``Allow`` of a 405: every method of every route on the path (Starlette names
    only the first route's, and a path such as ``/v1/games`` has a route per method);
    the web client's pages and files take ``GET`` and ``HEAD``."""
    methods: set[str] = set()
    for route in ROUTES:
        if isinstance(route, Route) and route.path_regex.match(request.url.path):
            methods |= route.methods or set()
    if not methods:
        return headers.get("Allow", "GET, HEAD")
    return ", ".join(sorted(methods))


#: The status logged for a request whose client left before the answer (nginx's).
CLIENT_CLOSED = 499


async def client_gone(request: Request, error: Exception) -> Response:
    """The client closed its connection mid-body (or ``server.http`` gave its body up): an
    ordinary event, for the access line alone; the answer goes nowhere."""
    return Response(status_code=CLIENT_CLOSED)


async def internal_error(request: Request, error: Exception) -> Response:
    log.exception("unexpected error", exc_info=error)
    body = {"code": "internal", "message": "an unexpected server error"}
    return respond(request, {"error": body}, 500)


#: The browser client (``clients/web``): its page and its files.
#: ``WEB_ROOT`` overrides it where the server runs from an installed package (the image).
WEB_ROOT = Path(
    os.environ.get("WEB_ROOT") or Path(__file__).resolve().parent.parent / "clients" / "web"
)
#: The TypeScript SDK's browser build (clients/ts, built by scripts/install), which the web
#: client is built on; the image puts it at the same place beside WEB_ROOT.
SDK_BROWSER = WEB_ROOT.parent / "ts" / "dist" / "browser"
# Browsers run an ES module only if it is served as JavaScript, whatever the system knows.
mimetypes.add_type("text/javascript", ".mjs")


class WebPage(BaseRoute):
    """``GET``/``HEAD`` of exactly ``path`` answers the file ``file`` (the web client's page).

    A page, not an API route: it is neither in the OpenAPI document nor in REST.md (a
    ``Mount`` would catch every path and turn the API's 405s into 404s).
    """

    def __init__(self, path: str, file: Path) -> None:
        self.path = path
        self.file = file

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["path"] != self.path:
            return Match.NONE, {}
        if scope["method"] in ("GET", "HEAD"):
            return Match.FULL, {}
        return Match.PARTIAL, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            raise HTTPException(405, headers={"Allow": "GET, HEAD"})
        if not self.file.is_file():
            raise HTTPException(404, f"{self.file.name} is not installed")
        response = FileResponse(self.file, headers={"Cache-Control": "no-cache"})
        await response(scope, receive, send)


ROUTES: list[Any] = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/readyz", readyz, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/asyncapi.json", asyncapi, methods=["GET"]),
    Route("/metrics", metrics.endpoint, methods=["GET"]),
    Route("/v1/players", rest.create_player, methods=["POST"]),
    Route("/v1/players/me", rest.get_me, methods=["GET"]),
    Route("/v1/players/me", rest.put_me, methods=["PUT", "PATCH"]),
    Route("/v1/players/me", accounts.delete_account, methods=["DELETE"]),
    Route("/v1/players/me/export", accounts.export_account, methods=["GET"]),
    Route("/v1/players/me/games", rest.get_my_games, methods=["GET"]),
    Route("/v1/players/me/stats", rest.get_my_stats, methods=["GET"]),
    Route("/v1/players/me/token", accounts.renew_token, methods=["POST"]),
    Route("/v1/players/me/tokens", accounts.revoke_tokens, methods=["DELETE"]),
    Route("/v1/players/login", accounts.login, methods=["POST"]),
    Route("/v1/players/me/identity", accounts.link_identity, methods=["POST"]),
    Route("/v1/players/me/transfer", accounts.create_transfer_code, methods=["POST"]),
    Route("/v1/players/transfer", accounts.redeem_transfer_code, methods=["POST"]),
    Route("/v1/games", rest.list_games, methods=["GET"]),
    Route("/v1/games", rest.create_game, methods=["POST"]),
    Route("/v1/games/{id}", rest.get_game, methods=["GET"]),
    Route("/v1/games/{id}/moves", rest.post_move, methods=["POST"]),
    Route("/v1/games/{id}/hint", rest.post_hint, methods=["POST"]),
    Route("/v1/games/{id}/restart", rest.restart_game, methods=["POST"]),
    Route("/v1/games/{id}/log", rest.get_log, methods=["GET"]),
    Route("/v1/games/{id}/replay", rest.get_replay, methods=["GET"]),
    Route("/v1/games/{id}/verdict", rest.get_verdict, methods=["GET"]),
    Route("/v1/daily/{game}", rest.get_daily, methods=["GET"]),
    Route("/v1/daily/{game}", rest.start_daily, methods=["POST"]),
    Route("/v1/daily/{game}/{date}", rest.get_daily, methods=["GET"]),
    Route("/v1/leaderboards/{game}/{date}", rest.get_leaderboard, methods=["GET"]),
    Route("/v1/leaderboards/{game}/{date}/me", rest.get_my_rank, methods=["GET"]),
    Route("/v1/audit", rest.post_audit, methods=["POST"]),
    Route("/v1/operator/actions", operator.list_actions, methods=["GET"]),
    Route("/v1/operator/attempts", operator.list_attempts, methods=["GET"]),
    Route("/v1/operator/attempts/{game_id}/void", operator.void_attempt, methods=["POST"]),
    Route(
        "/v1/operator/attempts/{game_id}/reinstate", operator.reinstate_attempt, methods=["POST"]
    ),
    Route("/v1/operator/players/{player_id}/suspend", operator.suspend_player, methods=["POST"]),
    Route(
        "/v1/operator/players/{player_id}/unsuspend", operator.unsuspend_player, methods=["POST"]
    ),
    Route("/v1/operator/players/{player_id}/reset-name", operator.reset_name, methods=["POST"]),
    Route(
        "/v1/operator/players/{player_id}/revoke-tokens", operator.revoke_tokens, methods=["POST"]
    ),
    Route("/v1/operator/reviews", operator.list_reviews, methods=["GET"]),
    Route("/v1/operator/reviews/{id}", operator.decide_review, methods=["POST"]),
    # The web client (clients/web). Directories that are missing (node_modules before
    # `npm ci`) answer 404 rather than stop the server.
    WebPage("/", WEB_ROOT / "index.html"),
    # The operators' page: its own sign-in, linked from no player page (OPERATOR.md).
    WebPage("/operator", WEB_ROOT / "operator.html"),
    Mount("/static/sdk", StaticFiles(directory=SDK_BROWSER, check_dir=False)),
    Mount("/static", StaticFiles(directory=WEB_ROOT / "static", check_dir=False)),
]


def websocket_app(endpoint: Callable[[WebSocket], Awaitable[None]]) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await endpoint(WebSocket(scope, receive=receive, send=send))

    return app


#: The WebSocket endpoints (``protocol/WEBSOCKET.md``), served by :class:`App` directly.
WEBSOCKETS = {"/v2/ws": websocket_endpoint, "/v1/ws": retired_endpoint}


class App(Starlette):
    """The Starlette application, with :data:`WEBSOCKETS` served before its middleware and
    router: a socket's handler stays suspended for the socket's whole life, and so does
    every ASGI layer above it (13 frames and closures, 6.5 KB a socket, BENCHMARKS.md, for
    middleware with nothing to do for a WebSocket). Only the connection id and log
    (:class:`RequestIds`) and the connection gauge (``metrics``) wrap them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.websockets = {
            path: RequestIds(metrics.MetricsMiddleware(websocket_app(endpoint)))
            for path, endpoint in WEBSOCKETS.items()
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        direct = self.websockets.get(scope["path"]) if scope["type"] == "websocket" else None
        if direct is None:
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        await direct(scope, receive, send)


def create_app(settings: Settings | None = None, redis: Redis | None = None) -> App:
    """The application, on ``redis`` or else a client of ``settings.redis_url`` (``python
    -m server`` sets it to the embedded store's when none is configured)."""
    settings = settings or Settings.from_environment()
    if redis is None and not settings.redis_url:
        raise ValueError("no Redis: give a redis_url (python -m server starts one without)")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        metrics.count_logged_exceptions()
        app.state.settings = settings
        client: Any = redis
        if client is None and settings.redis_url:
            client = connect(settings.redis_url, settings.redis_cluster)
        assert client is not None
        await wait_for_redis(client)
        store = Store(
            client,
            player_idle_ttl=settings.player_idle_ttl,
            durable=settings.durability == "replica",
        )
        app.state.store = store
        service = GameService(
            store,
            await shared_secret(client, settings.secret),
            ranked_min_account_age=settings.ranked_min_account_age,
        )
        app.state.service = service
        await service.revocations.start()
        service.ranked_requires_identity = settings.ranked_requires_identity
        app.state.identity = None
        if settings.identity_issuer:
            app.state.identity = IdentityVerifier(
                settings.identity_issuer, settings.identity_audience, settings.identity_jwks
            )
            await app.state.identity.start()
        service.max_moves_per_game = settings.limits.max_moves_per_game
        app.state.limits = Limiter(client, settings.limits, store.batcher)
        app.state.audit_pool = AuditPool(settings.limits)
        app.state.hint_pool = HintPool(settings.limits)
        # The service's clock is read at each pass (tests move it).
        app.state.dailies = DailySelector(
            client, service.secret, settings.daily, lambda: service.clock()
        )
        app.state.hub = Hub(store.nodes, store.watcher)
        service.deliver_unpublished = app.state.hub.deliver
        await app.state.hub.start()
        redrive = asyncio.create_task(redrive_outboxes(service), name="outbox")
        names = asyncio.create_task(sweep_names(service), name="names")
        app.state.operations = Operations(service, settings.operator_trail_days)
        suspensions = asyncio.create_task(
            lift_ended_suspensions(app.state.operations), name="suspensions"
        )
        tallies = asyncio.create_task(metrics.flush_every(), name="metrics")
        app.state.dailies.start()
        app.state.postclose = PostCloseAuditor(
            app.state.operations, settings.review_budget_seconds, lambda: service.clock()
        )
        app.state.postclose.start()
        try:
            yield
        finally:
            await app.state.postclose.stop()
            await app.state.dailies.stop()
            app.state.hint_pool.stop()
            await stop_task(redrive)
            await stop_task(names)
            await stop_task(suspensions)
            await stop_task(tallies)
            await service.revocations.stop()
            await app.state.hub.stop()
            await app.state.limits.stop()
            app.state.audit_pool.stop()
            await store.nodes.aclose()
            if redis is None:
                await client.aclose()
            metrics.worker_exited(os.getpid())

    return App(
        routes=ROUTES,
        lifespan=lifespan,
        # Outermost first: ids and metrics see every answer, the browser headers every
        # answer but theirs.
        middleware=[
            Middleware(RequestIds),
            Middleware(metrics.MetricsMiddleware),
            *web.middleware(settings.cors_origins),
            Middleware(NegotiateAccept),
            Middleware(RateLimits),
        ],
        exception_handlers={
            ApiError: api_error,
            RedisError: store_error,
            OSError: store_error,
            HTTPException: http_error,
            ClientDisconnect: client_gone,
            Exception: internal_error,
        },
    )


#: Young collections between two full ones at most (CPython's default is 10).
FULL_COLLECTION_SPACING = 1000


def app_from_environment() -> App:
    """Factory for ``uvicorn --factory`` (each worker process builds its own app).

    A full garbage collection stops the worker: with a thousand sockets and games it
    walks 100,000-300,000 objects, 130-325 ms on this project's benchmark machine, and
    by default one comes every few seconds while the sockets and games grow
    (BENCHMARKS.md, "Move path").  So the objects alive by now (modules, classes,
    functions: about 50,000) are frozen out of the collector's sight, and a full
    collection waits for a hundred times more young ones than by default (minutes
    under load instead of seconds; the young generations, where most cyclic garbage
    dies, are collected as before, and the memory release after a burst of closed
    sockets collects in full anyway)."""
    app = create_app(Settings.from_environment())
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_SPACING)
    return app
