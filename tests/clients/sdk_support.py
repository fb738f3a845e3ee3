"""Helpers and fixtures of the client tests: a real server on the real Redis of
``tests/conftest.py``, SDK clients, and a TCP proxy a test can cut to simulate a network
failure.

This is not a ``conftest.py`` on purpose: two modules named ``conftest`` shadow each other
when imported by name.  Test modules
import the fixtures they use from here (they are registered under their ``name=``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from clients.python import Client, GameCopy
from server.testing import serve

#: Bound on every wait of these tests, in seconds.
WAIT = 10.0


@pytest.fixture(name="server_url")
async def server_url_fixture(redis_url: str) -> AsyncIterator[str]:
    """The base URL of a server (``create_app`` under uvicorn) on a flushed Redis."""
    async with serve(redis_url) as url:
        yield url


@pytest.fixture(name="client")
async def client_fixture(server_url: str) -> AsyncIterator[Client]:
    """An SDK REST client with a fresh player."""
    async with Client(server_url, timeout=WAIT) as sdk:
        await sdk.create_player()
        yield sdk


@pytest.fixture(name="anonymous")
async def anonymous_fixture(server_url: str) -> AsyncIterator[Client]:
    """An SDK REST client with no token (sees what a spectator sees)."""
    async with Client(server_url, timeout=WAIT) as sdk:
        yield sdk


def state_of(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The client state part of a snapshot (what a :class:`GameCopy` holds)."""
    return {key: snapshot[key] for key in ("version", "status", "score", "view", "legal_moves")}


async def assert_in_step(copy: GameCopy, rest: Client) -> None:
    """The copy equals the server's snapshot of its game, as ``rest`` sees it."""
    assert copy.state() == state_of(await rest.get_game(copy.game_id))


def choose(rng: random.Random, game: str, legal: list[str]) -> str:
    """A random legal move; Matrimony prefers deals and redeals, to reach its redeals."""
    if game == "matrimony":
        for action in ("deal", "redeal"):
            if action in legal and rng.random() < 0.5:
                return action
    return rng.choice(legal)


class Proxy:
    """A TCP proxy to ``127.0.0.1:target`` that a test can break.

    ``kill()`` aborts every proxied connection; while ``refuse`` is set new connections
    are closed at once; while ``swallow`` is set what the server sends is dropped (the
    client's frames still reach the server).
    """

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = 0
        self.refuse = False
        self.swallow = False
        self.accepted = 0
        self._links: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def url(self, path: str = "/v2/ws") -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refuse:
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.target
            )
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        link = (writer, upstream_writer)
        self._links.add(link)
        try:
            await asyncio.gather(
                self._pipe(reader, upstream_writer, downstream=False),
                self._pipe(upstream_reader, writer, downstream=True),
                return_exceptions=True,
            )
        finally:
            self._links.discard(link)
            for side in link:
                side.transport.abort()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, downstream: bool
    ) -> None:
        try:
            while data := await reader.read(65536):
                if downstream and self.swallow:
                    continue
                writer.write(data)
                await writer.drain()
        finally:
            writer.transport.abort()

    def kill(self) -> None:
        for link in list(self._links):
            for side in link:
                side.transport.abort()

    async def stop(self) -> None:
        self.kill()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), WAIT)


@pytest.fixture(name="proxy")
async def proxy_fixture(server_url: str) -> AsyncIterator[Proxy]:
    """A breakable TCP proxy in front of the server."""
    running = Proxy(int(server_url.rsplit(":", 1)[1]))
    await running.start()
    try:
        yield running
    finally:
        await running.stop()


async def eventually(predicate: Any, what: str, timeout: float = WAIT) -> None:
    """Wait until ``predicate()`` (sync or async) is true, at most ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
