"""Helpers and fixtures for the game-server tests.

Every test talks to a real Redis (``redis_url`` from ``tests/conftest.py``) and to a real
server: an in-process uvicorn (the ``server`` fixture) or ``python -m server`` child
processes (:class:`ServerProcess`).  Clients are ``httpx.AsyncClient`` and
``websockets.asyncio.client``; WebSocket frames are msgpack.  Every wait is bounded.

Test modules import the helpers with ``from server_support import ...``; ``conftest.py``
only registers the fixtures (a second module named ``conftest`` could shadow it).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import re
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgpack
import pytest
from log_check import watch
from redis.asyncio import Redis, RedisCluster
from starlette.applications import Starlette
from websockets.asyncio.client import ClientConnection, connect

from server import redisconn, schema
from server.app import create_app
from server.asyncapi import asyncapi_document
from server.config import Settings
from server.errors import ApiError
from server.openapi import SCHEMAS
from server.rules import Game, load_game
from server.testing import (
    TEST_DAILY,
    UNLIMITED,
    dailies_idle,
    free_port,
    preload_dailies,
    serve_app,
)
from server.ws_schema import SERVER_SCHEMAS

ROOT = Path(__file__).resolve().parents[2]
SECRET = "3debcf72726874b5a80870dbed77b780f3e4a3dbe61e25a7c4e14769c8517e76"
#: Default bound on waiting for one message, response or start-up, in seconds.
WAIT = 5.0
#: What the transport accepts (as ``python -m server`` runs it).
WS_TRANSPORT_LIMIT = 1024 * 1024
#: Environment variables the server reads; removed from child processes' environments.
SERVER_ENV = tuple(Settings().to_environment()) + ("PROMETHEUS_MULTIPROC_DIR",)

CARD_RE = re.compile(r"(A|[2-9]|10|J|Q|K)[CDHS]")


# -- in-process server ----------------------------------------------------------------


@dataclass
class RunningServer:
    app: Starlette
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v2/ws"


@contextlib.asynccontextmanager
async def run_app(
    redis_url: str,
    secret: str = SECRET,
    app: Starlette | None = None,
    redis_cluster: bool = False,
    durability: str = "none",
    ws_compression: str = "message",
) -> AsyncIterator[RunningServer]:
    """``create_app`` served by uvicorn on a free loopback port, as an asyncio task
    (accounts may play ranked at once; the rate limits are off)."""
    settings = Settings(
        redis_url=redis_url,
        secret=secret,
        ranked_min_account_age=0,
        redis_cluster=redis_cluster,
        durability=durability,
        limits=UNLIMITED,
        daily=TEST_DAILY,
    )
    if app is None:
        await preload_dailies(redis_url, secret, redis_cluster)
        app = create_app(settings)
    async with serve_app(app, ws_compression) as port:
        await dailies_idle(app)  # the tests see only their own requests' Redis keys
        yield RunningServer(app, port)


@pytest.fixture
async def server(redis_url: str, redis_cluster: bool) -> AsyncIterator[RunningServer]:
    async with run_app(redis_url, redis_cluster=redis_cluster) as running:
        yield running


@pytest.fixture
async def http(server: RunningServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=WAIT * 2) as client:
        yield client


@pytest.fixture
async def redis_client(redis_url: str, redis_cluster: bool) -> AsyncIterator[Redis]:
    client = redisconn.connect(redis_url, redis_cluster)
    try:
        yield client
    finally:
        await client.aclose()


#: Keys of the background daily selection (``server.daily.selection``), which may run at any time
#: (every instance sharing the test Redis looks again every few minutes): no request's.
SELECTION_KEYS = (b"daily-lock:", b"daily-choice:")


async def all_keys(client: Any) -> list[bytes]:
    """Every key but the daily selection's, sorted, read on the primaries only: a cluster
    client sends ``KEYS`` to every node by default, and a replica may lag behind its
    primary."""
    if isinstance(client, RedisCluster):
        keys = await client.keys("*", target_nodes=RedisCluster.PRIMARIES)
    else:
        keys = await client.keys("*")
    return sorted(key for key in keys if not key.startswith(SELECTION_KEYS))


async def kill_pubsub_connections(client: Any) -> int:
    """Close every connection subscribed to a (shard) channel on the Redis (on each
    primary of a cluster), as a network failure would: how many.  By id: ``CLIENT KILL
    TYPE pubsub`` misses RESP3 subscribers."""
    nodes: list[Any] = [None]
    if isinstance(client, RedisCluster):
        await client.initialize()  # a cluster client learns its nodes at first use
        nodes = client.get_primaries()
    killed = 0
    for node in nodes:
        options = {} if node is None else {"target_nodes": node}
        for entry in await client.client_list(**options):
            if int(entry.get("sub", 0)) + int(entry.get("ssub", 0)) > 0:
                killed += int(await client.client_kill_filter(_id=entry["id"], **options))
    return killed


# -- REST -----------------------------------------------------------------------------


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def error_code(response: httpx.Response) -> str:
    """The ``error.code`` of an error response (JSON or msgpack)."""
    if response.headers.get("content-type", "").startswith("application/msgpack"):
        body = msgpack.unpackb(response.content)
    else:
        body = response.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"].get("message"), str), body
    return str(body["error"]["code"])


@dataclass
class Player:
    player_id: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return bearer(self.token)


class Api:
    """The REST API, asserting the success status of each call."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def player(self) -> Player:
        response = await self.http.post("/v1/players")
        assert response.status_code == 201, response.text
        body = response.json()
        assert set(body) == {"player_id", "token", "name"}, body
        return Player(body["player_id"], body["token"])

    async def create_game(self, player: Player, game: str, seed: str | None = None) -> Any:
        body: dict[str, Any] = {"game": game}
        if seed is not None:
            body["seed"] = seed
        response = await self.http.post("/v1/games", json=body, headers=player.headers)
        assert response.status_code == 201, response.text
        return response.json()

    async def move(
        self, player: Player, game_id: str, move: str, version: int, **extra: Any
    ) -> Any:
        response = await self.http.post(
            f"/v1/games/{game_id}/moves",
            json={"move": move, "version": version, **extra},
            headers=player.headers,
        )
        assert response.status_code == 200, response.text
        return response.json()

    async def get(self, game_id: str, player: Player | None = None) -> Any:
        headers = player.headers if player else {}
        response = await self.http.get(f"/v1/games/{game_id}", headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def log(self, game_id: str) -> Any:
        response = await self.http.get(f"/v1/games/{game_id}/log")
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture
def api(http: httpx.AsyncClient) -> Api:
    return Api(http)


# -- WebSocket ------------------------------------------------------------------------


def inline_refs(node: Any, schemas: dict[str, Any] = SCHEMAS) -> Any:
    """``node`` with each ``$ref`` to a component of ``schemas`` replaced by the component
    (what ``server/schema.py`` checks against has no references)."""
    if isinstance(node, list):
        return [inline_refs(item, schemas) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return inline_refs(schemas[node["$ref"].removeprefix("#/components/schemas/")], schemas)
    return {key: inline_refs(value, schemas) for key, value in node.items()}


def _payloads() -> dict[str, Any]:
    """The payload schema of each server message of the AsyncAPI document, by type."""
    components = asyncapi_document()["components"]
    return {
        kind: inline_refs(components["messages"][kind]["payload"], components["schemas"])
        for kind in SERVER_SCHEMAS
    }


#: The schema of each server message, by its type, as ``/asyncapi.json`` publishes it
#: (generated from server/ws_schema.py): every frame a test receives is checked.
FRAME_SCHEMAS = _payloads()


def check_frame(message: Any) -> None:
    """Fail unless ``message`` is a server message valid under its AsyncAPI schema."""
    assert isinstance(message, dict) and message.get("type") in FRAME_SCHEMAS, message
    try:
        schema.check(message, FRAME_SCHEMAS[message["type"]])
    except ApiError as error:
        raise AssertionError(f"frame outside its schema: {error.message}: {message}") from None


class WSClient:
    """A msgpack WebSocket client that keeps the messages it skipped, and every frame."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.buffer: list[dict[str, Any]] = []
        #: Every message received, in order (for the hidden-information checks).
        self.received: list[dict[str, Any]] = []
        self._nonce = 0

    async def send(self, message: dict[str, Any]) -> None:
        await self.connection.send(msgpack.packb(message, use_bin_type=True))

    async def send_raw(self, data: bytes | str) -> None:
        await self.connection.send(data)

    async def _next(self, timeout: float) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.connection.recv(), timeout)
        assert isinstance(frame, bytes), f"a text frame from the server: {frame!r}"
        message = msgpack.unpackb(frame)
        check_frame(message)  # so every WebSocket test checks server/ws_schema.py
        self.received.append(message)
        return message

    async def recv(self, type: str | None = None, timeout: float = WAIT) -> dict[str, Any]:
        """The next message (of ``type``, keeping the others for later calls)."""
        return await self.recv_matching(
            lambda message: type is None or message["type"] == type, type or "message", timeout
        )

    async def recv_matching(
        self, wanted: Callable[[dict[str, Any]], bool], what: str, timeout: float = WAIT
    ) -> dict[str, Any]:
        """The first message ``wanted`` accepts; the ones before it stay buffered."""
        for index, message in enumerate(self.buffer):
            if wanted(message):
                return self.buffer.pop(index)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise TimeoutError
                message = await self._next(remaining)
            except TimeoutError:
                raise AssertionError(
                    f"no {what} within {timeout}s; skipped: {self.buffer}"
                ) from None
            if wanted(message):
                return message
            self.buffer.append(message)

    async def request(self, message: dict[str, Any], type: str) -> dict[str, Any]:
        await self.send(message)
        return await self.recv(type)

    async def ping(self) -> list[dict[str, Any]]:
        """Ping and wait for the pong: the messages queued before it (a barrier)."""
        self._nonce += 1
        nonce = self._nonce
        await self.send({"type": "ping", "nonce": nonce})
        before = []
        while True:
            message = await self.recv()
            if message["type"] == "pong" and message["nonce"] == nonce:
                assert isinstance(message["server_time"], int)
                return before
            before.append(message)

    async def auth(self, player: Player) -> None:
        reply = await self.request({"type": "auth", "token": player.token}, "authenticated")
        assert reply["player_id"] == player.player_id

    async def subscribe(self, game_id: str, version: int | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "subscribe", "game_id": game_id}
        if version is not None:
            message["version"] = version
        return await self.request(message, "subscribed")

    async def move(
        self, game_id: str, move: str, version: int, move_id: str, **extra: Any
    ) -> dict[str, Any]:
        """Send a move; its ``accepted`` or ``rejected`` reply."""
        await self.send(
            {
                "type": "move",
                "game_id": game_id,
                "move": move,
                "version": version,
                "move_id": move_id,
                **extra,
            }
        )
        return await self.recv_matching(
            lambda message: (
                message["type"] in ("accepted", "rejected") and message.get("move_id") == move_id
            ),
            f"reply to move {move_id}",
        )

    async def close(self) -> None:
        await self.connection.close()


WSConnect = Callable[..., Awaitable[WSClient]]


@contextlib.asynccontextmanager
async def ws_clients(default_url: str) -> AsyncIterator[WSConnect]:
    """``await open_client(url=default_url)``: WebSocket clients, all closed at the end."""
    clients: list[WSClient] = []

    async def open_client(url: str | None = None) -> WSClient:
        connection = await asyncio.wait_for(
            connect(url or default_url, max_size=None, open_timeout=WAIT), WAIT
        )
        client = WSClient(connection)
        clients.append(client)
        return client

    try:
        yield open_client
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), WAIT)


@pytest.fixture
async def ws_connect(server: RunningServer) -> AsyncIterator[WSConnect]:
    """``await ws_connect()``: a new WebSocket client to the in-process server."""
    async with ws_clients(server.ws_url) as open_client:
        yield open_client


# -- views, patches, hidden cards -----------------------------------------------------


PILE_CODES = {"r": "reserve", "s": "stock", "w": "waste", "b": "bouquet"}


def pile_of(view: dict[str, Any], code: str) -> Any:
    """The pile of a compact pile code (``t3``, ``f0``, ``s``, ...)."""
    if code[0] in "ft":
        return view["foundations" if code[0] == "f" else "tableau"][int(code[1:])]
    return view[PILE_CODES[code]]


def apply_patch(view: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The client's view after a compact ``patch`` (a ``patch`` message or an
    ``accepted``'s ``patch``; op semantics of ``protocol/DIFF.md``)."""
    view = copy.deepcopy(view)
    for op in patch["o"]:
        kind = op[0]
        if kind == "m":
            _, source_code, target_code, card = op
            if source_code == "s":
                stock = view["stock"]
                assert stock["count"] > 0, (op, stock)
                stock["count"] -= 1
                if "top" in stock:  # Colorado: only the face-up top card may leave
                    assert card == stock["top"], (op, stock)
            else:
                source = pile_of(view, source_code)
                assert source and source[-1] == card, (op, source)
                source.pop()
            if target_code == "s":  # an undo puts a card back
                view["stock"]["count"] += 1
                if "top" in view["stock"]:
                    view["stock"]["top"] = card
            else:
                pile_of(view, target_code).append(card)
        elif kind == "r":
            view["stock"]["top"] = op[1]
        elif kind == "s":
            pile_of(view, op[1])[:] = op[2]
        else:
            raise AssertionError(f"unknown op {op!r}")
    if "r" in patch:  # a redeal, or the undo of one
        view["redeals_left"] = patch["r"]
    return view


def address_pile(view: dict[str, Any], address: str) -> Any:
    match = re.fullmatch(r"(foundation|tableau)\[(\d+)\]", address)
    if match:
        kind = "foundations" if match.group(1) == "foundation" else "tableau"
        return view[kind][int(match.group(2))]
    return view[address]


def apply_rest_patch(view: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The client's view after the long-form ``patch`` of a REST move answer (op semantics
    of ``protocol/DIFF.md``)."""
    view = copy.deepcopy(view)
    for op in patch["ops"]:
        kind = op["op"]
        if kind == "move":
            if op["from"] == "stock":
                stock = view["stock"]
                assert stock["count"] > 0, (op, stock)
                stock["count"] -= 1
                if "top" in stock:  # Colorado: only the face-up top card may leave
                    assert op["card"] == stock["top"], (op, stock)
            else:
                source = address_pile(view, op["from"])
                assert source and source[-1] == op["card"], (op, source)
                source.pop()
            if op["to"] == "stock":  # an undo puts a card back
                view["stock"]["count"] += 1
                if "top" in view["stock"]:
                    view["stock"]["top"] = op["card"]
            else:
                address_pile(view, op["to"]).append(op["card"])
        elif kind == "redeals_left":
            view["redeals_left"] = op["count"]
        elif kind == "reveal":
            view[op["pile"]]["top"] = op["card"]
        elif kind == "set":
            address_pile(view, op["pile"])[:] = op["cards"]
        else:
            raise AssertionError(f"unknown op {op!r}")
    if "redeals_left" in patch:
        view["redeals_left"] = patch["redeals_left"]
    return view


def face_down(game: Game) -> list[str]:
    """The texts of the game's face-down cards (its stock, but Colorado's top)."""
    table = game.table()
    stock = list(table.get("stock", []))
    if type(game).stock_face_up and stock:
        stock.pop()
    return stock


def face_up(game: Game) -> Counter[str]:
    """The multiset of the texts of every face-up card of the game."""
    table = game.table()
    cards: Counter[str] = Counter()
    for key, value in table.items():
        if key in ("foundations", "tableau"):
            for pile in value:
                cards.update(pile)
        elif isinstance(value, list):
            cards.update(value)
    stock = table.get("stock", [])
    if type(game).stock_face_up and stock:
        cards[stock[-1]] += 1
    return cards


def card_texts(value: Any) -> list[str]:
    """Every card text anywhere in a message (strings that are card texts)."""
    if isinstance(value, str):
        return [value] if CARD_RE.fullmatch(value) else []
    if isinstance(value, dict):
        return [text for item in value.values() for text in card_texts(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in card_texts(item)]
    return []


async def stored(redis: Redis, game_id: str) -> tuple[int, bytes]:
    """The stored game's (version, state bytes)."""
    version, state = await redis.hmget(f"game:{{{game_id}}}", ["version", "state"])
    assert version is not None, f"game {game_id} is not stored"
    return int(version), state


async def stored_game(redis: Redis, game_id: str) -> tuple[int, Game]:
    version, state = await stored(redis, game_id)
    return version, load_game(state)


# -- child processes ------------------------------------------------------------------


class ServerProcess:
    """``python -m server`` in a child process, its output collected line by line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.args = ["--host", "127.0.0.1", "--port", str(self.port), *args]
        self.env = env
        self.process: asyncio.subprocess.Process | None = None
        self.lines: list[str] = []
        self._reader: asyncio.Task[None] | None = None
        watch(lambda: self.output + "\n")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v2/ws"

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
        env["RATE_LIMITS"] = "off"  # tests with limits on say so in ``env``
        env["DAILY_CANDIDATE_NODES"] = str(TEST_DAILY.candidate_nodes)
        env["DAILY_CANDIDATES"] = str(TEST_DAILY.candidates)
        env["DAILY_SELECTION_SECONDS"] = str(TEST_DAILY.seconds)
        env.update(self.env or {})
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            *self.args,
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        self._reader = asyncio.create_task(self._read())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        async with httpx.AsyncClient(timeout=1) as client:
            while True:
                if self.process.returncode is not None:
                    await asyncio.wait_for(self._reader, WAIT)
                    pytest.fail(f"python -m server exited: {self.output}")
                with contextlib.suppress(httpx.TransportError):
                    response = await client.get(f"{self.base_url}/healthz")
                    if response.status_code == 200:
                        return
                if loop.time() > deadline:
                    pytest.fail(f"python -m server did not come up within 20 s: {self.output}")
                await asyncio.sleep(0.05)

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            self.lines.append(line.decode(errors="replace").rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    async def wait_for_line(self, text: str, timeout: float = WAIT) -> str:
        async with asyncio.timeout(timeout):
            while True:
                for line in self.lines:
                    if text in line:
                        return line
                await asyncio.sleep(0.02)

    async def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await asyncio.wait_for(process.wait(), WAIT)
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, WAIT)


@pytest.fixture
async def spawn_server() -> AsyncIterator[Callable[..., Awaitable[ServerProcess]]]:
    """``await spawn_server(*args, env=...)``: a started ``python -m server``."""
    started: list[ServerProcess] = []

    async def spawn(*args: str, env: dict[str, str] | None = None) -> ServerProcess:
        process = ServerProcess(*args, env=env)
        started.append(process)
        await process.start()
        return process

    yield spawn
    for process in started:
        await process.stop()
