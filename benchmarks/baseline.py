"""The floor the game server is measured against: a bare WebSocket + one Redis call.

``python -m benchmarks.baseline --port P --redis-url URL --workers W`` serves
``/v2/ws`` (and ``/healthz``) under uvicorn with the same WebSocket
implementation, frame limit and worker model as ``python -m server``.  For every
binary msgpack message it receives it runs ONE ``EVALSHA`` of a tiny Lua script
(``INCR`` on a per-connection key) and replies ``{"type": "accepted",
"version": n}``.  No auth, no rules, no pub/sub: what is left is the cost of
the framework, the WebSocket transport, msgpack and one Redis round trip.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import uvicorn
from redis.asyncio import BlockingConnectionPool, Redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

#: The same transport limit as ``server.__main__.WS_TRANSPORT_LIMIT``.
WS_TRANSPORT_LIMIT = 1024 * 1024
#: Messages one connection may send before the baseline closes it (a bound, not a limit
#: any benchmark reaches: 20 s at 10,000 messages/s is 200,000).
MAX_MESSAGES = 10_000_000
SCRIPT = "return redis.call('INCR', KEYS[1])"
#: Redis connections per worker: more concurrent calls wait for one (redis-py's
#: default pool instead fails with "Too many connections" past 100).
REDIS_CONNECTIONS = 64
REDIS_WAIT = 10.0


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def websocket_endpoint(websocket: WebSocket) -> None:
    await websocket.accept()
    script: Any = websocket.app.state.script
    key = f"baseline:{{{secrets.token_hex(8)}}}"
    try:
        for _ in range(MAX_MESSAGES):
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("bytes")
            if data is None:
                continue
            request = msgpack.unpackb(data, raw=False)
            version = await script(keys=[key])
            reply = {"type": "accepted", "version": version}
            if isinstance(request, dict) and "move_id" in request:
                reply["move_id"] = request["move_id"]
            await websocket.send_bytes(msgpack.packb(reply, use_bin_type=True))
        await websocket.close(1000)
    except WebSocketDisconnect:
        pass


def create_app() -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        pool = BlockingConnectionPool.from_url(
            os.environ["BASELINE_REDIS_URL"], max_connections=REDIS_CONNECTIONS, timeout=REDIS_WAIT
        )
        redis = Redis(connection_pool=pool)
        app.state.redis = redis
        app.state.script = redis.register_script(SCRIPT)
        try:
            yield
        finally:
            await redis.aclose()
            await pool.disconnect()

    return Starlette(
        routes=[Route("/healthz", healthz), WebSocketRoute("/v2/ws", websocket_endpoint)],
        lifespan=lifespan,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.baseline", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    os.environ["BASELINE_REDIS_URL"] = args.redis_url
    uvicorn.run(
        "benchmarks.baseline:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        ws_max_size=WS_TRANSPORT_LIMIT,
        ws="websockets-sansio",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
