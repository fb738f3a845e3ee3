"""The WebSocket proxy between the client under test and the real server, where each case's
faults happen (the server's own move path is never touched).

A client opens ``ws://<proxy>/runs/<run>/v2/ws`` (or ``/v1/ws``); the proxy opens the same
path on the real server and relays every frame, decoding each (msgpack) to record it and to
show it to the run's case first. A case hook may drop a frame, answer in the server's
place, close the socket with a code, or cut the TCP connection (the client sees 1006).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Protocol

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.http11 import Request, Response
from websockets.protocol import State

#: ``/runs/<run id>/v2/ws`` or ``/runs/<run id>/v1/ws``.
PATH = re.compile(r"^/runs/(?P<run>[A-Za-z0-9_-]+)(?P<path>/v[12]/ws)$")
#: The server's frames are up to 1 MiB (``WEBSOCKET.md``).
MAX_FRAME = 2**20
#: The close code a client's library reports when the TCP connection died unclosed.
ABNORMAL = 1006
#: Bound on opening or closing the socket to the server, in seconds.
UPSTREAM_TIMEOUT = 5.0


def pack(message: dict[str, Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def decode(frame: bytes | str) -> Any:
    """The message a frame holds; ``None`` for a text frame or bytes that are not msgpack."""
    if not isinstance(frame, bytes):
        return None
    try:
        return msgpack.unpackb(frame, raw=False)
    except (ValueError, msgpack.UnpackException):
        return None


class Hooks(Protocol):
    """What a run lets its case decide about each socket and frame."""

    async def on_connect(self, link: Link) -> bool:
        """Before the socket to the server is opened; False: the hook answered (and closed)."""

    async def client_frame(self, link: Link, message: dict[str, Any]) -> bool:
        """A frame from the client; True: relay it to the server."""

    async def server_frame(self, link: Link, message: dict[str, Any]) -> bool:
        """A frame from the server; True: relay it to the client."""

    def record(self, entry: dict[str, Any]) -> None:
        """Keep one frame or socket event for the report."""


class Link:
    """One client socket through the proxy (the run's ``index``-th) and its socket to the
    server."""

    def __init__(self, index: int, path: str, client: ServerConnection, hooks: Hooks) -> None:
        self.index = index
        self.path = path
        self.client = client
        self.hooks = hooks
        self.upstream: ClientConnection | None = None
        self.closed = False

    def record(self, direction: str, message: Any, **extra: Any) -> None:
        entry = {"link": self.index, "dir": direction, "t": time.monotonic(), "message": message}
        self.hooks.record({**entry, **extra})

    async def to_client(self, message: dict[str, Any]) -> None:
        """Send ``message`` to the client in the server's place."""
        self.record("recv", message, injected=True)
        with contextlib.suppress(ConnectionClosed):
            await self.client.send(pack(message))

    async def close(self, code: int, reason: str = "") -> None:
        """Close the client's socket with ``code`` (and the one to the server)."""
        self.record("event", {"close": code, "reason": reason}, injected=True)
        self.closed = True
        with contextlib.suppress(ConnectionClosed):
            await self.client.close(code, reason)
        if self.upstream is not None:
            with contextlib.suppress(ConnectionClosed):
                await self.upstream.close()

    def abort(self) -> None:
        """Cut both TCP connections with no close frame (the client's library says 1006)."""
        self.record("event", {"close": ABNORMAL, "reason": "connection cut"}, injected=True)
        self.closed = True
        self.client.transport.abort()
        if self.upstream is not None:
            self.upstream.transport.abort()


class Proxy:
    """The proxy server: ``lookup(run_id)`` gives the hooks of a run (or ``None``)."""

    def __init__(self, upstream: str, lookup: Callable[[str], Hooks | None]) -> None:
        #: ``ws://127.0.0.1:<port>`` of the real server.
        self.upstream = upstream
        self.lookup = lookup
        self.port = 0
        self._server: Server | None = None
        self._links: dict[str, int] = {}

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = await serve(
            self._handle,
            host,
            port,
            process_request=self._route,
            max_size=MAX_FRAME,
            ping_interval=None,
            compression=None,
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), UPSTREAM_TIMEOUT)

    def _route(self, connection: ServerConnection, request: Request) -> Response | None:
        match = PATH.match(request.path)
        if match is None or self.lookup(match["run"]) is None:
            return connection.respond(HTTPStatus.NOT_FOUND, "no such run\n")
        return None

    async def _handle(self, client: ServerConnection) -> None:
        assert client.request is not None
        match = PATH.match(client.request.path)
        assert match is not None
        hooks = self.lookup(match["run"])
        if hooks is None:
            return
        index = self._links.get(match["run"], 0)
        self._links[match["run"]] = index + 1
        link = Link(index, match["path"], client, hooks)
        link.record("event", {"connect": match["path"]})
        if not await hooks.on_connect(link):
            return
        try:
            link.upstream = await connect(
                self.upstream + match["path"],
                max_size=MAX_FRAME,
                open_timeout=UPSTREAM_TIMEOUT,
                close_timeout=UPSTREAM_TIMEOUT,
                ping_interval=None,
                compression=None,
            )
        except (OSError, InvalidHandshake, TimeoutError):
            link.abort()
            return
        pumps = [
            asyncio.create_task(self._from_client(link)),
            asyncio.create_task(self._from_server(link)),
        ]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            await self._finish(link)

    async def _from_client(self, link: Link) -> None:
        assert link.upstream is not None
        with contextlib.suppress(ConnectionClosed):
            async for frame in link.client:
                message = decode(frame)
                link.record("send", message if message is not None else repr(frame)[:200])
                if isinstance(message, dict) and not await link.hooks.client_frame(link, message):
                    continue
                if not link.closed:
                    await link.upstream.send(frame)

    async def _from_server(self, link: Link) -> None:
        assert link.upstream is not None
        with contextlib.suppress(ConnectionClosed):
            async for frame in link.upstream:
                message = decode(frame)
                if isinstance(message, dict) and not await link.hooks.server_frame(link, message):
                    link.record("recv", message, dropped=True)
                    continue
                link.record("recv", message)
                if not link.closed:
                    await link.client.send(frame)

    async def _finish(self, link: Link) -> None:
        """One side went away: end the other side the same way."""
        if link.closed:
            return
        link.closed = True
        upstream = link.upstream
        assert upstream is not None
        if link.client.state is State.CLOSED:
            link.record("event", {"closed_by_client": link.client.close_code})
            with contextlib.suppress(ConnectionClosed, TimeoutError):
                await asyncio.wait_for(upstream.close(), UPSTREAM_TIMEOUT)
            return
        code = upstream.close_code
        if code is None or code == ABNORMAL:
            link.record("event", {"close": ABNORMAL, "reason": "the server dropped the socket"})
            link.client.transport.abort()
            return
        # The server closed (1008 after protocol_retired, ...): pass its code on.
        reason = upstream.close_reason or ""
        link.record("event", {"close": code, "reason": reason})
        with contextlib.suppress(ConnectionClosed):
            await link.client.close(code, reason)
