"""Load test of the game server's WebSocket move path against a bare baseline.

    .venv/bin/python -m benchmarks.server [--clients 200] [--seconds 20] [--workers 2]
                                          [--game empress_of_italy] [--procs 1]

Everything runs on 127.0.0.1 and is started here, as real processes:

* a throwaway ``redis-server`` on a free port (``--save "" --appendonly no``);
* the game server, ``python -m server --workers W`` (uvicorn worker processes
  sharing one port);
* the baseline, ``python -m benchmarks.baseline --workers W``: a bare Starlette
  WebSocket endpoint doing one ``EVALSHA`` per message (see that module);
* ``--procs`` load-generator processes with the ``websockets`` asyncio client,
  the clients split evenly between them.

Each game client creates a player and a game over REST, connects to ``/v2/ws``,
authenticates and subscribes, then plays random legal moves one at a time: it
sends a move and waits for its ``accepted``/``rejected`` reply (protocol v2: the
``accepted`` carries the move's patch, which is counted and measured as the ``patch``
frame the game's other subscribers get; ``patch`` frames that arrive meanwhile are
counted too, not awaited).  ``--think-ms`` paces each client like a human player.  A game that ends,
or reaches 300 moves, is replaced by a new one.  Baseline clients run the same
closed loop with a move-sized message.  After a warm-up, replies received
during ``--seconds`` are counted and their latencies (send to reply) kept.

Then a few real games of the same kind are played by one client that
re-subscribes without a version every 10 moves, to measure the ``snapshot``
frame that a (re)joining client gets against the ``patch`` frames of the same
games (as a spectator gets them: the ``accepted``'s patch with its ``type``).
Every process started is stopped on exit, error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import multiprocessing
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect

from benchmarks import QUIET_DAILIES

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
#: A rate no benchmark client reaches (``--rate-limits on`` measures the checks' cost).
UNREACHED = 10**9
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"

#: A game is replaced by a new one after this many moves.
MAX_GAME_MOVES = 300
#: The snapshot sampler re-subscribes (getting a snapshot) every this many moves.
SNAPSHOT_EVERY = 10
#: Seconds a client waits for one reply before giving up on its connection.
REPLY_TIMEOUT = 15.0
#: Frames read while waiting for one reply (patches of this and earlier moves).
MAX_FRAMES_PER_REPLY = 1_000
#: One patch in this many that ``accepted`` messages carry is sized for the report.
PATCH_SIZE_SAMPLE = 16
#: Consecutive errors after which a client gives up.
MAX_FAILURES = 20
#: Iterations of one client's loop (the time limit is what normally ends it).
MAX_LOOP = 5_000_000
#: Seconds for a process to come up, for the clients to connect, to stop.
START_TIMEOUT = 60.0
SETUP_TIMEOUT = 180.0
STOP_TIMEOUT = 10.0
#: Concurrent set-up steps (player, game, connect) per load-generator process.
SETUP_CONCURRENCY = 32

TARGET_RATIO = 0.7
#: The moonshot of issue 12: the move path as fast as the bare baseline.
MOONSHOT_RATIO = 1.0
TARGET_P99_MS = 50.0
TARGET_PATCH_RATIO = 0.1
TARGET_CLIENTS = 200
TARGET_GAME = "empress_of_italy"

#: Moves for the baseline's move-shaped messages.
BASELINE_MOVES = ("tableau[3]>foundation[12]", "reserve>tableau[7]", "waste>foundation[2]", "deal")


# -- processes -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class Processes:
    """Every process this benchmark starts, each in its own process group, so
    that stopping one stops its children (uvicorn's workers) too."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log_dir / f"{name}.log", "wb") as log:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append((name, process))
        return process

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.log_dir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def log_summary(self, names: tuple[str, ...], top: int = 5) -> list[str]:
        """The most frequent lines the servers logged (at warning level and above)."""
        lines = []
        for name in names:
            path = self.log_dir / f"{name}.log"
            if not path.exists():
                continue
            counts = Counter(
                line[:160] for line in path.read_text(errors="replace").splitlines() if line
            )
            if counts:
                lines.append(f"{name} log: {sum(counts.values())} lines, most frequent:")
                lines += [f"  {n} x {line}" for line, n in counts.most_common(top)]
        return lines

    def stop_all(self) -> None:
        for _, process in reversed(self.started):
            stop_group(process)
        self.started.clear()


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process's group, wait, then SIGKILL whatever is left of it."""
    group = process.pid  # start_new_session: the process leads its own group
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(STOP_TIMEOUT)
    deadline = time.monotonic() + STOP_TIMEOUT
    for _ in range(int(STOP_TIMEOUT * 10)):
        if not group_alive(group) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(STOP_TIMEOUT)


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_http(url: str, process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout * 10)):
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


def wait_redis(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    for _ in range(int(START_TIMEOUT * 10)):
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), 1.0) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(64).startswith(b"+PONG"):
                return
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    raise RuntimeError("redis-server did not answer PING")


# -- CPU accounting from /proc ---------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces; the fields after it are plain.
    return text[text.rindex(")") + 2 :].split()


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants, as they are now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry))
    tree, todo = [], [root]
    for _ in range(10_000):
        if not todo:
            break
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by these processes (not their children)."""
    total = 0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


def connections_per_process(pids: list[int], port: int) -> list[int]:
    """Established TCP connections on local ``port`` held by each process: how
    the kernel spread the clients over uvicorn's workers."""
    inodes = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rpartition(":")[2], 16) == port and fields[3] == "01":
                inodes.add(fields[9])
    counts = []
    for pid in pids:
        count = 0
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:[") and link[8:-1] in inodes:
                        count += 1
        counts.append(count)
    return counts


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (every core, every process)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def wait_until_quiet(limit: float, seconds: float) -> float:
    """Wait (at most ``seconds``) until the machine is nearly idle: other people's
    processes on this box skew every figure.  Returns the busy cores last seen."""
    busy = float("nan")
    deadline = time.monotonic() + seconds
    for _ in range(int(seconds) + 1):
        before, wall = machine_busy(), time.monotonic()
        time.sleep(1.0)
        busy = (machine_busy() - before) / (time.monotonic() - wall)
        if busy <= limit or time.monotonic() > deadline:
            break
    return busy


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return (
        f"{model}, {os.cpu_count()} cores, Linux {platform.release()}, "
        f"Python {platform.python_version()}"
    )


# -- load generator ----------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """What one load-generator process does (sent to it pickled)."""

    kind: str  # "server" or "baseline"
    port: int
    clients: int
    first_client: int
    game: str
    warmup: float
    seconds: float
    think_ms: float
    compression: str | None
    seed: int


@dataclass
class Stats:
    """What one load-generator process saw during the measured window."""

    window_start: float = 0.0
    window_end: float = 0.0
    moves: int = 0
    rejected: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    patch_frames: int = 0
    #: Frames sized (every PATCH_SIZE_SAMPLE-th patch an ``accepted`` carries, which is
    #: packed again to size it) and their bytes.
    patch_sized: int = 0
    patch_bytes: int = 0
    games_created: int = 0
    connected: int = 0
    failed_clients: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, int] = field(default_factory=dict)

    def in_window(self, moment: float) -> bool:
        return self.window_start <= moment <= self.window_end

    def error(self, error: BaseException) -> None:
        name = f"{type(error).__name__}: {str(error)[:120]}"
        self.errors[name] = self.errors.get(name, 0) + 1


def ws_url(port: int) -> str:
    return f"ws://{HOST}:{port}/v2/ws"


def pack(message: dict[str, Any]) -> bytes:
    frame: bytes = msgpack.packb(message, use_bin_type=True)
    return frame


def patch_frame(patch: dict[str, Any]) -> bytes:
    """The ``patch`` frame other subscribers get of the patch an ``accepted`` carries."""
    return pack({"type": "patch", **patch})


class ServerError(Exception):
    """An ``error`` message from the server."""


class Client:
    """One WebSocket client: a closed loop of request, reply."""

    def __init__(self, work: Work, index: int, http: httpx.AsyncClient, stats: Stats) -> None:
        self.work = work
        self.index = index
        self.http = http
        self.stats = stats
        self.rng = random.Random(work.seed * 1_000_003 + index)
        self.ws: ClientConnection | None = None
        self.sent = 0

    async def connect(self) -> None:
        self.ws = await connect(
            ws_url(self.work.port),
            compression=self.work.compression,
            max_size=2**20,
            open_timeout=30,
            ping_interval=None,
            close_timeout=2,
        )

    async def send(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(pack(message))

    async def receive(self, kinds: tuple[str, ...], move_id: str | None = None) -> dict[str, Any]:
        """The next message of one of ``kinds`` (and ``move_id``); patches meanwhile
        are counted."""
        assert self.ws is not None
        async with asyncio.timeout(REPLY_TIMEOUT):
            for _ in range(MAX_FRAMES_PER_REPLY):
                frame = await self.ws.recv(decode=False)
                message = msgpack.unpackb(frame)
                kind = message.get("type")
                if kind == "patch":
                    if self.stats.in_window(time.perf_counter()):
                        self.stats.patch_frames += 1
                        self.stats.patch_sized += 1
                        self.stats.patch_bytes += len(frame)
                    continue
                patched = kind == "accepted" and message.get("patch") is not None
                if patched and self.stats.in_window(time.perf_counter()):
                    self.stats.patch_frames += 1
                    # Sized on a sample: packing each again would cost the load generator,
                    # on the cores the server runs on, more than the baseline's clients.
                    if self.stats.patch_frames % PATCH_SIZE_SAMPLE == 0:
                        self.stats.patch_sized += 1
                        self.stats.patch_bytes += len(patch_frame(message["patch"]))
                if kind in kinds and (move_id is None or message.get("move_id") == move_id):
                    return dict(message)
                if kind == "error":
                    raise ServerError(f"{message.get('code')} (in reply to {kinds})")
        raise RuntimeError(f"no {kinds} reply in {MAX_FRAMES_PER_REPLY} frames")

    async def setup(self) -> None:
        await self.connect()

    async def step(self) -> None:
        raise NotImplementedError

    async def run(self, stop_at: float) -> None:
        think = self.work.think_ms / 1000
        failures = 0
        for _ in range(MAX_LOOP):
            if time.perf_counter() >= stop_at:
                break
            try:
                await self.step()
                failures = 0
            except (ServerError, httpx.HTTPStatusError) as error:
                # The server answered with an error: note it, start afresh, go on.
                self.stats.error(error)
                self.restart()
                failures += 1
                if failures >= MAX_FAILURES:
                    self.stats.failed_clients += 1
                    return
                await asyncio.sleep(0.01 * failures)
            except Exception as error:  # a lost connection: this client stops
                self.stats.error(error)
                self.stats.failed_clients += 1
                return
            if think:
                await asyncio.sleep(think * self.rng.uniform(0.5, 1.5))

    def restart(self) -> None:
        """After an error: begin a new game at the next step."""

    async def timed(self, message: dict[str, Any], move_id: str) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        await self.send(message)
        reply = await self.receive(("accepted", "rejected"), move_id)
        done = time.perf_counter()
        if self.stats.in_window(done):
            self.stats.latencies_ms.append((done - started) * 1000)
            if reply["type"] == "accepted":
                self.stats.moves += 1
            else:
                self.stats.rejected += 1
                code = str(reply.get("code"))
                self.stats.rejections[code] = self.stats.rejections.get(code, 0) + 1
        return done, reply

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)


class GameClient(Client):
    """A player of real games on the game server."""

    def __init__(self, work: Work, index: int, http: httpx.AsyncClient, stats: Stats) -> None:
        super().__init__(work, index, http, stats)
        self.token = ""
        self.game_id: str | None = None
        self.version = 0
        self.status = "playing"
        self.legal: list[str] = []
        self.moves_in_game = 0

    async def setup(self) -> None:
        response = await self.http.post("/v1/players", json={})
        response.raise_for_status()
        self.token = response.json()["token"]
        await self.connect()
        await self.send({"type": "auth", "token": self.token})
        await self.receive(("authenticated",))
        await self.new_game()

    async def new_game(self) -> None:
        response = await self.http.post(
            "/v1/games",
            json={"game": self.work.game},
            headers={"Authorization": f"Bearer {self.token}"},
        )
        response.raise_for_status()
        snapshot = response.json()
        if self.stats.in_window(time.perf_counter()):
            self.stats.games_created += 1
        if self.game_id is not None:
            await self.send({"type": "unsubscribe", "game_id": self.game_id})
        self.game_id = snapshot["id"]
        self.version = snapshot["version"]
        self.status = snapshot["status"]
        self.legal = list(snapshot["legal_moves"] or [])
        self.moves_in_game = 0
        await self.send({"type": "subscribe", "game_id": self.game_id, "version": self.version})
        await self.receive(("subscribed",))

    async def step(self) -> None:
        if self.status != "playing" or not self.legal or self.moves_in_game >= MAX_GAME_MOVES:
            await self.new_game()
            return
        self.sent += 1
        move_id = f"c{self.index}-{self.sent}"
        message = {
            "type": "move",
            "game_id": self.game_id,
            "move": self.rng.choice(self.legal),
            "version": self.version,
            "move_id": move_id,
            "client_time": int(time.time() * 1000),
        }
        _, reply = await self.timed(message, move_id)
        if reply["type"] == "accepted":
            self.version = reply["version"]
            self.status = reply["status"]
            self.legal = list(reply["legal_moves"] or [])
            self.moves_in_game += 1
        else:
            self.restart()

    def restart(self) -> None:
        self.status = "restart"


class BaselineClient(Client):
    """The same loop shape against the baseline endpoint."""

    game_id = ""

    async def setup(self) -> None:
        self.game_id = f"g_{self.rng.getrandbits(72):018x}"[:18]
        await self.connect()

    async def step(self) -> None:
        self.sent += 1
        move_id = f"c{self.index}-{self.sent}"
        message = {
            "type": "move",
            "game_id": self.game_id,
            "move": self.rng.choice(BASELINE_MOVES),
            "version": self.sent - 1,
            "move_id": move_id,
            "client_time": int(time.time() * 1000),
        }
        await self.timed(message, move_id)


async def run_clients(work: Work, control: Connection) -> Stats:
    stats = Stats(window_start=float("inf"), window_end=float("-inf"))
    kind = GameClient if work.kind == "server" else BaselineClient
    limits = httpx.Limits(max_connections=SETUP_CONCURRENCY)
    async with httpx.AsyncClient(
        base_url=f"http://{HOST}:{work.port}", timeout=30, limits=limits
    ) as http:
        clients = [kind(work, work.first_client + i, http, stats) for i in range(work.clients)]
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def setup(client: Client) -> None:
            async with gate:
                await client.setup()

        outcomes = await asyncio.gather(*(setup(c) for c in clients), return_exceptions=True)
        ready = []
        for client, outcome in zip(clients, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                stats.error(outcome)
                stats.failed_clients += 1
                await client.close()
            else:
                ready.append(client)
        stats.connected = len(ready)
        control.send(("ready", len(ready)))
        if not await asyncio.to_thread(control.poll, SETUP_TIMEOUT):
            raise RuntimeError("no start signal")
        start_wall = control.recv()
        # The window in this process's perf_counter time.
        offset = time.perf_counter() - time.time()
        stats.window_start = start_wall + work.warmup + offset
        stats.window_end = stats.window_start + work.seconds
        try:
            await asyncio.gather(*(client.run(stats.window_end) for client in ready))
        finally:
            await asyncio.gather(*(client.close() for client in ready))
    return stats


def load_process(work: Work, control: Connection) -> None:
    """Entry point of a load-generator process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    try:
        stats = asyncio.run(run_clients(work, control))
        control.send(("result", asdict(stats)))
    except BaseException as error:
        with contextlib.suppress(Exception):
            control.send(("error", f"{type(error).__name__}: {error}"))
        raise


# -- one measured phase ----------------------------------------------------------------


@dataclass
class Phase:
    kind: str
    clients: int
    connected: int
    seconds: float
    rate: float
    p50: float
    p95: float
    p99: float
    mean_ms: float
    moves: int
    rejected: int
    failed_clients: int
    errors: dict[str, int]
    rejections: dict[str, int]
    patch_frames: int
    patch_mean_bytes: float
    games_created: int
    #: CPU used during the window, in cores (CPU seconds / wall seconds).
    cpu: dict[str, float]
    #: Client connections each worker held during the window.
    spread: list[int]
    profile: list[str] = field(default_factory=list)
    round: int = 1

    @property
    def app_us(self) -> float:
        """The app's CPU time per message (µs): little changed by other load."""
        return 1e6 * self.cpu.get("app", 0) / self.rate if self.rate else float("nan")

    @property
    def redis_us(self) -> float:
        return 1e6 * self.cpu.get("redis", 0) / self.rate if self.rate else float("nan")

    #: Busy cores on the machine just before the phase (other people's jobs).
    busy_before: float = 0.0


def percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list (nan when empty)."""
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def run_phase(
    kind: str,
    port: int,
    args: argparse.Namespace,
    watched: dict[str, list[int]],
    profile_pids: list[int],
    profile_dir: Path | None,
    label: str,
) -> Phase:
    context = multiprocessing.get_context("spawn")
    procs: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    spies: list[subprocess.Popen[bytes]] = []
    try:
        first = 0
        for index, count in enumerate(split(args.clients, args.procs)):
            work = Work(
                kind=kind,
                port=port,
                clients=count,
                first_client=first,
                game=args.game,
                warmup=args.warmup,
                seconds=args.seconds,
                think_ms=args.think_ms,
                compression=None if args.compression == "none" else args.compression,
                seed=args.seed + index,
            )
            first += count
            parent_end, child_end = context.Pipe()
            loader = context.Process(
                target=load_process, args=(work, child_end), name=f"load-{kind}-{index}"
            )
            loader.start()
            procs.append((loader, parent_end))
        connected = 0
        for process, control in procs:
            if not control.poll(SETUP_TIMEOUT):
                raise RuntimeError(f"{process.name} did not set up its clients")
            tag, value = control.recv()
            if tag != "ready":
                raise RuntimeError(f"{process.name}: {value}")
            connected += value
        start = time.time() + 0.2
        for _, control in procs:
            control.send(start)
        loaders = [process.pid for process, _ in procs if process.pid is not None]
        groups = {**watched, "load generator": loaders}
        time.sleep(max(0.0, start + args.warmup - time.time()))
        before = {name: cpu_seconds(pids) for name, pids in groups.items()}
        before["machine"] = machine_busy()
        spread = connections_per_process(profile_pids, port)
        wall = time.monotonic()
        if profile_dir is not None:
            spies = start_profilers(label, profile_pids, args.seconds, profile_dir)
        time.sleep(max(0.0, start + args.warmup + args.seconds - time.time()))
        elapsed = time.monotonic() - wall
        cpu = {
            name: round((cpu_seconds(pids) - before[name]) / elapsed, 2)
            for name, pids in groups.items()
        }
        cpu["machine"] = round((machine_busy() - before["machine"]) / elapsed, 2)
        # Everything else: other people's jobs on the box (and this script's parent).
        cpu["other"] = round(cpu["machine"] - sum(cpu[name] for name in groups), 2)
        results = []
        for process, control in procs:
            if not control.poll(REPLY_TIMEOUT + 30):
                raise RuntimeError(f"{process.name} sent no result")
            tag, value = control.recv()
            if tag != "result":
                raise RuntimeError(f"{process.name}: {value}")
            results.append(value)
        profile = finish_profilers(spies, profile_dir, label) if profile_dir else []
    finally:
        for spy in spies:
            if spy.poll() is None:
                spy.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    spy.wait(STOP_TIMEOUT)
                if spy.poll() is None:
                    spy.kill()
        for process, control in procs:
            process.join(STOP_TIMEOUT)
            if process.is_alive():
                process.terminate()
                process.join(STOP_TIMEOUT)
            if process.is_alive():
                process.kill()
                process.join(STOP_TIMEOUT)
            control.close()
    latencies = sorted(x for result in results for x in result["latencies_ms"])
    errors: Counter[str] = Counter()
    rejections: Counter[str] = Counter()
    for result in results:
        errors.update(result["errors"])
        rejections.update(result["rejections"])
    moves = sum(r["moves"] for r in results)
    patch_frames = sum(r["patch_frames"] for r in results)
    patch_sized = sum(r["patch_sized"] for r in results)
    patch_bytes = sum(r["patch_bytes"] for r in results)
    return Phase(
        kind=kind,
        clients=args.clients,
        connected=connected,
        seconds=args.seconds,
        rate=moves / args.seconds,
        p50=percentile(latencies, 0.50),
        p95=percentile(latencies, 0.95),
        p99=percentile(latencies, 0.99),
        mean_ms=sum(latencies) / len(latencies) if latencies else float("nan"),
        moves=moves,
        rejected=sum(r["rejected"] for r in results),
        failed_clients=sum(r["failed_clients"] for r in results),
        errors=dict(errors),
        rejections=dict(rejections),
        patch_frames=patch_frames,
        patch_mean_bytes=patch_bytes / patch_sized if patch_sized else float("nan"),
        games_created=sum(r["games_created"] for r in results),
        cpu=cpu,
        spread=spread,
        profile=profile,
    )


# -- profiling (optional: --profile DIR) ------------------------------------------------


def start_profilers(
    kind: str, pids: list[int], seconds: float, directory: Path
) -> list[subprocess.Popen[bytes]]:
    """``py-spy record`` on each worker for the measured window."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    directory.mkdir(parents=True, exist_ok=True)
    spies = []
    for pid in pids:
        command = [
            spy,
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(max(1, int(seconds))),
            "--rate",
            "100",
            "--nonblocking",
            "--format",
            "raw",
            "--output",
            str(directory / f"{kind}-{pid}.txt"),
        ]
        spies.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    return spies


def finish_profilers(
    spies: list[subprocess.Popen[bytes]], directory: Path | None, label: str, top: int = 25
) -> list[str]:
    """Wait for the profilers, then summarise their samples: self time by function
    and by package, and total time of the project's own functions."""
    for spy in spies:
        with contextlib.suppress(subprocess.TimeoutExpired):
            spy.wait(60)
    if directory is None:
        return []
    own: Counter[str] = Counter()
    package: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for path in sorted(directory.glob(f"{label}-*.txt")):
        for line in path.read_text(errors="replace").splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack or not count_text.isdigit():
                continue
            count = int(count_text)
            # "function (path/file.py:line)" -> "function (path/file.py)"
            frames = [re.sub(r":\d+\)$", ")", frame) for frame in stack.split(";")]
            samples += count
            own[frames[-1]] += count
            source = frames[-1].rpartition("(")[2]
            package[source.split("/")[0] if "/" in source else source.rstrip(")")] += count
            for frame in set(frames):
                if frame.rpartition("(")[2].startswith("server/"):
                    total[frame] += count
    if not samples:
        return [f"{label}: no samples (is py-spy installed and allowed to attach?)"]

    def share(n: int) -> str:
        return f"{100 * n / samples:5.1f}%"

    lines = [f"profile of the {label} workers: {samples} samples; self time by function:"]
    lines += [f"  {share(n)}  {frame}" for frame, n in own.most_common(top)]
    lines.append("self time by package (uvloop's native time shows as asyncio Runner.run):")
    lines += [f"  {share(n)}  {name}" for name, n in package.most_common(12)]
    lines.append("total time of the project's functions (themselves and what they call):")
    lines += [f"  {share(n)}  {frame}" for frame, n in total.most_common(top)]
    return lines


# -- snapshot and patch frame sizes -----------------------------------------------------


@dataclass
class Sizes:
    game: str
    games: int
    moves: int
    patch_frames: int
    patch_mean: float
    snapshot_frames: int
    snapshot_mean: float
    snapshot_min: int
    snapshot_max: int
    #: Estimated payload on the wire with permessage-deflate as uvicorn sets it up
    #: (context takeover, 12-bit window, memLevel 5): the frames' msgpack bytes
    #: run through one zlib stream in arrival order.
    patch_wire_mean: float
    snapshot_wire_mean: float

    @property
    def ratio(self) -> float:
        return self.patch_mean / self.snapshot_mean if self.snapshot_mean else float("nan")


async def sample_sizes(port: int, game: str, games: int, seed: int) -> Sizes:
    """Play ``games`` real games; every 10 moves re-subscribe with no version to get
    a ``snapshot`` frame; measure it and every ``patch`` frame of those games."""
    rng = random.Random(seed)
    patches: list[int] = []
    snapshots: list[int] = []
    wire: dict[str, list[int]] = {"patch": [], "snapshot": []}
    deflate = zlib.compressobj(wbits=-12, memLevel=5)
    moves = 0
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=30) as http:
        response = await http.post("/v1/players", json={})
        response.raise_for_status()
        token = response.json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        async with connect(ws_url(port), max_size=2**20, open_timeout=30) as ws:

            async def receive(kind: str, move_id: str | None = None) -> dict[str, Any]:
                async with asyncio.timeout(REPLY_TIMEOUT):
                    for _ in range(MAX_FRAMES_PER_REPLY):
                        frame = await ws.recv(decode=False)
                        message = msgpack.unpackb(frame)
                        kind_of_size = message["type"]
                        if kind_of_size == "accepted" and message["patch"] is not None:
                            # Measured as the patch frame the game's spectators get.
                            frame, kind_of_size = patch_frame(message["patch"]), "patch"
                        # What permessage-deflate sends: the stream flushed, less 4 bytes.
                        compressed = deflate.compress(frame) + deflate.flush(zlib.Z_SYNC_FLUSH)
                        if kind_of_size in wire:
                            wire[kind_of_size].append(len(compressed) - 4)
                        if kind_of_size == "patch":
                            patches.append(len(frame))
                        elif kind_of_size == "snapshot":
                            snapshots.append(len(frame))
                        if message["type"] == kind and message.get("move_id") == move_id:
                            return dict(message)
                        if message["type"] in ("error", "rejected"):
                            raise RuntimeError(f"unexpected reply {message}")
                raise RuntimeError(f"no {kind} reply")

            await ws.send(pack({"type": "auth", "token": token}))
            await receive("authenticated")
            for number in range(games):
                response = await http.post("/v1/games", json={"game": game}, headers=headers)
                response.raise_for_status()
                snapshot = response.json()
                game_id, version = snapshot["id"], snapshot["version"]
                legal, status = snapshot["legal_moves"], snapshot["status"]
                for played in range(MAX_GAME_MOVES + 1):
                    if played % SNAPSHOT_EVERY == 0:
                        await ws.send(pack({"type": "subscribe", "game_id": game_id}))
                        await receive("snapshot")
                    if status != "playing" or not legal or played == MAX_GAME_MOVES:
                        break
                    move_id = f"s{number}-{played}"
                    move = {
                        "type": "move",
                        "game_id": game_id,
                        "move": rng.choice(legal),
                        "version": version,
                        "move_id": move_id,
                    }
                    await ws.send(pack(move))
                    reply = await receive("accepted", move_id)
                    version, status, legal = reply["version"], reply["status"], reply["legal_moves"]
                    moves += 1
                await ws.send(pack({"type": "unsubscribe", "game_id": game_id}))
                await receive("unsubscribed")
    return Sizes(
        game=game,
        games=games,
        moves=moves,
        patch_frames=len(patches),
        patch_mean=sum(patches) / len(patches) if patches else float("nan"),
        snapshot_frames=len(snapshots),
        snapshot_mean=sum(snapshots) / len(snapshots) if snapshots else float("nan"),
        snapshot_min=min(snapshots, default=0),
        snapshot_max=max(snapshots, default=0),
        patch_wire_mean=mean(wire["patch"]),
        snapshot_wire_mean=mean(wire["snapshot"]),
    )


def mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else float("nan")


# -- the whole run ---------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def summary(phases: list[Phase], kind: str) -> dict[str, float]:
    """Medians over the rounds of one endpoint's figures."""
    chosen = [phase for phase in phases if phase.kind == kind]
    return {
        name: median([getattr(phase, name) for phase in chosen])
        for name in ("rate", "p50", "p95", "p99", "mean_ms", "app_us", "redis_us")
    }


def report(
    args: argparse.Namespace,
    phases: list[Phase],
    sizes: list[Sizes],
    logs: list[str],
    started: datetime.datetime,
) -> dict[str, Any]:
    server = summary(phases, "server")
    baseline = summary(phases, "baseline")
    ratio = server["rate"] / baseline["rate"] if baseline["rate"] else float("nan")
    print()
    print(f"Server benchmark: python -m benchmarks.server {' '.join(sys.argv[1:])}")
    print(f"date: {started.isoformat(timespec='seconds')}")
    print(f"machine: {machine()}")
    print(
        f"clients: {args.clients} | workers: {args.workers} | game: {args.game} | "
        f"warm-up {args.warmup:g} s, measured {args.seconds:g} s x {args.rounds} round(s) | "
        f"load generator: {args.procs} process(es), websockets asyncio client on uvloop, "
        f"compression {args.compression} | think time {args.think_ms:g} ms"
        + (f" | server Redis URL options: {args.server_redis}" if args.server_redis else "")
    )
    print()
    print(
        "| round | endpoint | msgs/s | p50 ms | p95 ms | p99 ms | mean ms | rejected | failed "
        "| connections per worker | CPU cores: app / redis / load gen / other (machine) "
        "| CPU µs per msg: app / redis |"
    )
    print("|" + "---|" * 12)
    for phase in phases:
        cpu = phase.cpu
        print(
            f"| {phase.round} | {phase.kind} | {phase.rate:,.0f} | {phase.p50:.1f} | "
            f"{phase.p95:.1f} | {phase.p99:.1f} | {phase.mean_ms:.1f} | {phase.rejected} | "
            f"{phase.failed_clients} | {'/'.join(map(str, phase.spread))} | "
            f"{cpu.get('app', 0):.2f} / {cpu.get('redis', 0):.2f} / "
            f"{cpu.get('load generator', 0):.2f} / {cpu.get('other', 0):.2f} "
            f"({cpu.get('machine', 0):.2f}) | {phase.app_us:.0f} / {phase.redis_us:.0f} |"
        )
    for phase in phases:
        if phase.errors or phase.rejections or phase.connected < phase.clients:
            print(
                f"round {phase.round} {phase.kind}: {phase.connected}/{phase.clients} clients "
                f"connected; rejected moves (window) {phase.rejections}; "
                f"client errors (warm-up and window) {phase.errors}"
            )
    for line in logs:
        print(line)
    print()
    if args.rounds > 1:
        for kind, figures in (("baseline", baseline), ("server", server)):
            print(
                f"median of {args.rounds} rounds, {kind}: {figures['rate']:,.0f} msgs/s, "
                f"p50 {figures['p50']:.1f} / p95 {figures['p95']:.1f} / "
                f"p99 {figures['p99']:.1f} ms"
            )
    served = [phase for phase in phases if phase.kind == "server"]
    patch_frames = sum(phase.patch_frames for phase in served)
    patch_mean = (
        sum(phase.patch_mean_bytes * phase.patch_frames for phase in served) / patch_frames
        if patch_frames
        else float("nan")
    )
    if baseline["app_us"] == baseline["app_us"]:  # not nan
        print(
            f"app CPU per message: server {server['app_us']:.0f} µs, baseline "
            f"{baseline['app_us']:.0f} µs; baseline/server CPU cost "
            f"{baseline['app_us'] / server['app_us']:.2f} (the throughput ratio when the "
            "app's CPU is the bottleneck, whatever else runs on the box)"
        )
    print(
        f"moves/s / baseline msgs/s: {ratio:.2f} (target >= {TARGET_RATIO}); "
        f"games created during the windows: {sum(phase.games_created for phase in served)}; "
        f"patch frames received under load: {patch_frames}, mean {patch_mean:.0f} B"
    )
    for size in sizes:
        print(
            f"{size.game}: {size.games} games, {size.moves} moves: mean patch frame "
            f"{size.patch_mean:.0f} B ({size.patch_frames} frames), mean snapshot frame "
            f"{size.snapshot_mean:.0f} B ({size.snapshot_frames} frames, "
            f"{size.snapshot_min}-{size.snapshot_max} B); patch/snapshot = {size.ratio:.3f}"
        )
        print(
            f"  on the wire with permessage-deflate (estimated): patch {size.patch_wire_mean:.0f}"
            f" B, snapshot {size.snapshot_wire_mean:.0f} B, ratio "
            f"{size.patch_wire_mean / size.snapshot_wire_mean:.3f}"
        )
    print()
    note = "" if args.clients >= TARGET_CLIENTS else f" (set for {TARGET_CLIENTS} clients)"
    targets: list[tuple[str, bool]] = []
    if not args.skip_baseline:
        targets.append((f"moves/s >= {TARGET_RATIO} x baseline{note}", ratio >= TARGET_RATIO))
        targets.append(
            (f"moonshot: moves/s >= {MOONSHOT_RATIO} x baseline{note}", ratio >= MOONSHOT_RATIO)
        )
    targets.append((f"p99 < {TARGET_P99_MS:g} ms{note}", server["p99"] < TARGET_P99_MS))
    for size in sizes:
        if size.game == TARGET_GAME:
            targets.append(
                (f"patch <= 1/10 snapshot ({TARGET_GAME})", size.ratio <= TARGET_PATCH_RATIO)
            )
    for text, ok in targets:
        print(f"  {verdict(ok)}  {text}")
    for phase in phases:
        if phase.profile:
            print()
            print("\n".join(phase.profile))
    return {
        "command": f"python -m benchmarks.server {' '.join(sys.argv[1:])}",
        "date": started.isoformat(timespec="seconds"),
        "machine": machine(),
        "arguments": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "phases": [asdict(phase) | {"latencies_ms": None} for phase in phases],
        "server": server,
        "baseline": baseline,
        "ratio": ratio,
        "sizes": [asdict(size) | {"ratio": size.ratio} for size in sizes],
        "targets": dict(targets),
    }


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.server",
        description="Load-test the game server's WebSocket moves against a bare baseline.",
    )
    parser.add_argument("--clients", type=int, default=200, help="concurrent clients (200)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds (20)")
    parser.add_argument("--warmup", type=float, default=5.0, help="warm-up seconds (5)")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes (2)")
    parser.add_argument("--game", default=TARGET_GAME, help=f"game kind ({TARGET_GAME})")
    parser.add_argument("--procs", type=int, default=1, help="load-generator processes (1)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="baseline and server phases, alternating; figures are medians (1)",
    )
    parser.add_argument(
        "--think-ms", type=float, default=0.0, help="mean pause between a reply and the next move"
    )
    parser.add_argument(
        "--compression",
        choices=("deflate", "none"),
        default="deflate",
        help="permessage-deflate offer of the clients (deflate, as browsers do)",
    )
    parser.add_argument("--sample-games", type=int, default=5, help="games for frame sizes (5)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the clients")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="seconds to wait, before each phase, for the machine to be idle (60)",
    )
    parser.add_argument(
        "--server-redis",
        default="",
        metavar="QUERY",
        help="options appended to the game server's Redis URL, e.g. max_connections=1000",
    )
    parser.add_argument("--skip-baseline", action="store_true", help="measure the server only")
    parser.add_argument(
        "--rate-limits",
        choices=("on", "off"),
        default="off",
        help="the server's rate limits (off); 'on' measures their cost: every bucket is "
        "checked, with rates no client reaches",
    )
    parser.add_argument(
        "--profile", type=Path, help="py-spy record the workers during each window, into here"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    for name in ("clients", "workers", "procs", "sample_games", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 < args.seconds <= 600 or not 0 <= args.warmup <= 120 or args.rounds > 20:
        parser.error("--seconds is in (0, 600], --warmup in [0, 120], --rounds at most 20")
    if not 0 <= args.quiet_wait <= 600:
        parser.error("--quiet-wait is in [0, 600]")
    args.procs = min(args.procs, args.clients)
    return args


def start_server(
    processes: Processes, name: str, command: list[str], port: int
) -> subprocess.Popen[bytes]:
    process = processes.start(name, command)
    try:
        wait_http(f"http://{HOST}:{port}/healthz", process)
    except RuntimeError:
        print(processes.log_tail(name), file=sys.stderr)
        raise
    return process


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def workers_of(process: subprocess.Popen[bytes], expected: int) -> list[int]:
    """The uvicorn worker processes under ``process`` (itself with one worker)."""
    if expected == 1:
        return [process.pid]
    deadline = time.monotonic() + START_TIMEOUT
    children: list[int] = []
    for _ in range(int(START_TIMEOUT * 10)):
        children = [
            pid
            for pid in process_tree(process.pid)
            if pid != process.pid and "resource_tracker" not in command_line(pid)
        ]
        if len(children) >= expected or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    return children


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def measure(
    args: argparse.Namespace, processes: Processes, temp: str
) -> tuple[list[Phase], list[Sizes]]:
    """Start Redis, the server and the baseline; run the phases; sample frame sizes."""
    python = sys.executable
    redis_port = free_port()
    redis = processes.start(
        "redis",
        [
            REDIS_SERVER,
            "--port",
            str(redis_port),
            "--bind",
            HOST,
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            temp,
        ],
    )
    wait_redis(redis_port, redis)
    ports = {"server": free_port(), "baseline": free_port()}
    commands = {
        "server": [
            python,
            "-m",
            "server",
            "--host",
            HOST,
            "--port",
            str(ports["server"]),
            "--redis-url",
            f"redis://{HOST}:{redis_port}/0"
            + (f"?{args.server_redis}" if args.server_redis else ""),
            "--secret",
            "6b618459e8ca9573a83cfe5d0ec2c14ef8b64fceb473c9e8dcc02bf2fc29478d",
            "--workers",
            str(args.workers),
            "--log-level",
            "warning",
            # Every client comes from one address: the limits would measure themselves.
            "--rate-limits",
            args.rate_limits,
            "--max-connections-per-address",
            str(max(64, 2 * args.clients)),
            # With the limits on, every check runs but none refuses: their cost alone.
            "--players-per-hour",
            str(UNREACHED),
            "--address-moves-per-minute",
            str(UNREACHED),
            "--player-moves-per-minute",
            str(UNREACHED),
            "--address-requests-per-minute",
            str(UNREACHED),
            "--message-credits",
            str(UNREACHED),
            "--message-credits-per-second",
            str(UNREACHED),
            *QUIET_DAILIES,
        ],
        "baseline": [
            python,
            "-m",
            "benchmarks.baseline",
            "--host",
            HOST,
            "--port",
            str(ports["baseline"]),
            "--redis-url",
            f"redis://{HOST}:{redis_port}/1",
            "--workers",
            str(args.workers),
        ],
    }
    kinds = ["server"] if args.skip_baseline else ["baseline", "server"]
    apps = {kind: start_server(processes, kind, commands[kind], ports[kind]) for kind in kinds}
    workers = {kind: workers_of(app, args.workers) for kind, app in apps.items()}
    phases = []
    for number in range(1, args.rounds + 1):
        # Alternate the order (ABBA...) so that drift in the machine's load cancels out.
        for kind in kinds if number % 2 else kinds[::-1]:
            busy = wait_until_quiet(0.3, args.quiet_wait)
            print(
                f"round {number}, {kind}: {args.clients} clients, {args.warmup:g}+"
                f"{args.seconds:g} s (machine busy before: {busy:.2f} cores)",
                flush=True,
            )
            phase = run_phase(
                kind,
                ports[kind],
                args,
                {"app": process_tree(apps[kind].pid), "redis": [redis.pid]},
                workers[kind],
                args.profile,
                f"{kind}-{number}",
            )
            phase.round, phase.busy_before = number, busy
            phases.append(phase)
            print(
                f"  {phase.rate:,.0f} msgs/s, p50 {phase.p50:.1f} p99 {phase.p99:.1f} ms, "
                f"other load {phase.cpu.get('other', 0):.2f} cores",
                flush=True,
            )
            for name, process in apps.items():
                if process.poll() is not None:
                    print(processes.log_tail(name), file=sys.stderr)
                    raise RuntimeError(f"the {name} exited with {process.returncode}")
    games = [args.game] + ([TARGET_GAME] if args.game != TARGET_GAME else [])
    print(f"frame sizes: {args.sample_games} games of {', '.join(games)}", flush=True)
    sizes = []
    for game in games:
        try:
            sizes.append(
                asyncio.run(sample_sizes(ports["server"], game, args.sample_games, args.seed))
            )
        except Exception as error:  # report the load figures all the same
            print(f"  frame sizes of {game} failed: {error!r}", file=sys.stderr)
    return phases, sizes


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    started = datetime.datetime.now().astimezone()
    with (
        sigterm_as_interrupt(),
        tempfile.TemporaryDirectory(prefix="bench-server-") as temp,
    ):
        processes = Processes(Path(temp))
        try:
            phases, sizes = measure(args, processes, temp)
        except KeyboardInterrupt:
            print("interrupted: stopping every process started", file=sys.stderr)
            return 130
        finally:
            processes.stop_all()
            logs = processes.log_summary(("server", "baseline"))
    figures = report(args, phases, sizes, logs, started)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
