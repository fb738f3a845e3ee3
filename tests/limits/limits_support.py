"""Helpers for the limit tests: the app served with chosen limits, REST and WebSocket
clients.  Every server runs in-process on a loopback port against the test Redis."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect

from server.app import create_app
from server.config import Limits, Settings
from server.testing import TEST_DAILY, TEST_SECRET, dailies_idle, preload_dailies, serve_app

WAIT = 5.0


@dataclass
class Server:
    base_url: str
    ws_url: str
    app: Any


@contextlib.asynccontextmanager
async def running(redis_url: str, **limits: Any) -> AsyncIterator[Server]:
    """The app with these :class:`Limits` (the rest at their defaults)."""
    settings = Settings(
        redis_url=redis_url, secret=TEST_SECRET, limits=Limits(**limits), daily=TEST_DAILY
    )
    await preload_dailies(redis_url, TEST_SECRET)
    app = create_app(settings)
    async with serve_app(app) as port:
        await dailies_idle(app)  # the tests see only their own requests' Redis calls
        yield Server(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/v2/ws", app)


@contextlib.asynccontextmanager
async def client(server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=WAIT * 2) as http:
        yield http


async def new_player(http: httpx.AsyncClient) -> dict[str, str]:
    """A new player's ``Authorization`` header."""
    response = await http.post("/v1/players")
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


async def new_game(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    """A Balcony game on a fixed deal: its snapshot."""
    response = await http.post(
        "/v1/games", json={"game": "balcony", "seed": "abc"}, headers=headers
    )
    assert response.status_code == 201, response.text
    snapshot: dict[str, Any] = response.json()
    return snapshot


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    return error


def assert_rate_limited(response: httpx.Response, limit: str) -> int:
    """A 429 ``rate_limited`` of ``limit`` with a ``Retry-After``: its retry ms."""
    assert response.status_code == 429, response.text
    error = error_of(response)
    assert error["code"] == "rate_limited" and error["limit"] == limit, error
    assert int(response.headers["Retry-After"]) >= 1
    assert int(response.headers["Retry-After"]) * 1000 >= error["retry_after_ms"] > 0
    return int(error["retry_after_ms"])


class Socket:
    """A msgpack WebSocket client."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    async def send(self, message: dict[str, Any]) -> None:
        await self.connection.send(msgpack.packb(message, use_bin_type=True))

    async def recv(self) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.connection.recv(), WAIT)
        assert isinstance(frame, bytes)
        message: dict[str, Any] = msgpack.unpackb(frame)
        return message

    async def request(self, message: dict[str, Any], *kinds: str) -> dict[str, Any]:
        """Send ``message``; the first reply of one of ``kinds`` (others skipped)."""
        await self.send(message)
        while True:
            reply = await self.recv()
            if reply["type"] in kinds:
                return reply

    async def ping(self, nonce: int = 0) -> None:
        reply = await self.request({"type": "ping", "nonce": nonce}, "pong", "error")
        assert reply["type"] == "pong", reply


@contextlib.asynccontextmanager
async def sockets(server: Server) -> AsyncIterator[Any]:
    """``await open_socket()``: WebSocket clients, all closed at the end."""
    opened: list[ClientConnection] = []

    async def open_socket() -> Socket:
        connection = await asyncio.wait_for(connect(server.ws_url, open_timeout=WAIT), WAIT)
        opened.append(connection)
        return Socket(connection)

    try:
        yield open_socket
    finally:
        for connection in opened:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.close(), WAIT)
