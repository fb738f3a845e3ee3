"""Idle WebSockets per machine, their memory, and one move fanned out to many spectators.

Run from the repository root::

    .venv/bin/python -m benchmarks.connections [--connections 50000] [--spectators 10000]
        [--workers 4] [--modes message,off,context] [--moves 5]

For each ``--ws-compression`` mode in ``--modes`` it starts a throwaway ``redis-server``
and ``python -m server --workers N`` on loopback (rate limits off), then opens
``--connections`` WebSockets from ``--client-processes`` processes (each under the
per-process open-file limit, each from its own loopback address so the ephemeral ports
suffice).  Every socket offers what browsers offer (``permessage-deflate;
client_max_window_bits``), authenticates and subscribes: the first ``--spectators`` to
one game of Empress of Italy, the others spread over ``--games`` more games.  It prints:

- the server's memory (RSS of all its processes, ``/proc``) before, with every socket
  open and idle, and ``--settle`` seconds after they all closed; per socket, the growth
  divided by the sockets;
- for each of ``--moves`` moves of the spectated game (posted over REST): the time from
  posting it to its patch reaching the first, the median and the last spectator;
- the bytes on the wire of the snapshot and of each patch (frame headers included), the
  cost of each mode in bandwidth.

The clients speak just enough WebSocket (handshake, masked frames, pong) to stay cheap.
Results go in ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import multiprocessing
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, cast

import httpx
import msgpack

from benchmarks import QUIET_DAILIES
from server.__main__ import raise_open_file_limit
from server.testing import RedisProcess, free_port
from server.wstransport import protocol_path

START_TIMEOUT = 60.0
SECRET = "c55978c45e381953ce0c448ce42230baaa556a4b2060aecd377226fe261c7239"
WS_PATH = "/v2/ws"
#: What Chrome and Firefox offer.
BROWSER_EXTENSIONS = "permessage-deflate; client_max_window_bits"
#: Handshakes a client process has in flight at once.
OPENING_AT_ONCE = 50
#: Seconds a socket has to be subscribed, and a patch to arrive.
READY_TIMEOUT = 120.0
FANOUT_TIMEOUT = 30.0
#: Seconds the server has to let go of the sockets once the clients closed them.
CLOSE_TIMEOUT = 120.0
#: Game of the spectators (the largest snapshot) and of the idle sockets.
SPECTATED_GAME = "empress_of_italy"
IDLE_GAME = "balcony"
SYNC_TAIL = b"\x00\x00\xff\xff"


# -- the client side (one process per ``--client-processes``) ---------------------------


def client_frame(message: dict[str, Any]) -> bytes:
    """A masked binary frame (mask 0: the server unmasks all the same)."""
    payload = msgpack.packb(message)
    size = len(payload)
    if size < 126:
        header = bytes([0x82, 0x80 | size])
    else:
        header = bytes([0x82, 0x80 | 126]) + size.to_bytes(2, "big")
    return header + b"\0\0\0\0" + payload


class Socket(asyncio.Protocol):
    """One client WebSocket: handshake, auth, subscribe; then it notes each data frame."""

    def __init__(self, process: ClientProcess, token: str, game_id: str) -> None:
        self.process = process
        self.token = token
        self.game_id = game_id
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.handshaken = False
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.inflater: Any = None  # context takeover: one decompressor for every message
        self.per_message = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio.Transport, only alike.
        self.transport = cast(asyncio.Transport, transport)
        key = base64.b64encode(os.urandom(16)).decode()
        self.transport.write(
            (
                f"GET {WS_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: {BROWSER_EXTENSIONS}"
                "\r\n\r\n"
            ).encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if self.ready.done():
            self.process.lost += 1
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"closed before subscribed ({exc})"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.handshaken:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).decode("latin-1")
            del self.buffer[: end + 4]
            self.on_handshake(head)
        self.read_frames()

    def on_handshake(self, head: str) -> None:
        lines = head.split("\r\n")
        if " 101 " not in lines[0]:
            self.ready.set_exception(ConnectionError(lines[0]))
            return
        self.handshaken = True
        extensions = ""
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "sec-websocket-extensions":
                extensions = value.strip()
        self.process.extensions = extensions
        if extensions:
            self.per_message = "server_no_context_takeover" in extensions
            if not self.per_message:
                self.inflater = zlib.decompressobj(-15)
        assert self.transport is not None
        self.transport.write(
            client_frame({"type": "auth", "token": self.token})
            + client_frame({"type": "subscribe", "game_id": self.game_id})
        )

    def read_frames(self) -> None:
        buffer = self.buffer
        while len(buffer) >= 2:
            size, start = buffer[1] & 0x7F, 2
            if size == 126:
                if len(buffer) < 4:
                    return
                size, start = int.from_bytes(buffer[2:4], "big"), 4
            elif size == 127:
                if len(buffer) < 10:
                    return
                size, start = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < start + size:
                return
            first = buffer[0]
            payload = bytes(buffer[start : start + size])
            del buffer[: start + size]
            opcode = first & 0x0F
            if opcode == 0x9:  # ping: answer, or the server drops the socket
                assert self.transport is not None
                self.transport.write(bytes([0x8A, 0x80 | size]) + b"\0\0\0\0" + payload)
            elif opcode == 0x8:
                code = int.from_bytes(payload[:2], "big") if size >= 2 else 1005
                self.process.close_codes[code] = self.process.close_codes.get(code, 0) + 1
            elif opcode in (0x1, 0x2):
                self.on_message(first & 0x40 != 0, payload, start + size)

    def on_message(self, deflated: bool, payload: bytes, wire_size: int) -> None:
        if self.ready.done():  # subscribed: a patch
            self.process.arrived(wire_size)
            return
        if deflated:
            inflater = zlib.decompressobj(-15) if self.per_message else self.inflater
            payload = inflater.decompress(payload + SYNC_TAIL)
        elif self.inflater is not None:
            # A plain message is not in the deflate stream's history, nor is it ever.
            pass
        message = msgpack.unpackb(payload)
        if message["type"] == "error":
            self.ready.set_exception(RuntimeError(f"refused: {message}"))
        elif message["type"] == "snapshot":
            self.process.snapshot_bytes[self.game_id] = wire_size
            self.inflater = None  # later frames are only counted
            self.ready.set_result(None)


@dataclass
class ClientProcess:
    port: int
    source_address: str
    sockets: list[Socket] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    arrival_bytes: int = 0
    extensions: str = ""
    #: Subscribed sockets the server closed, and the codes of its close frames.
    lost: int = 0
    close_codes: dict[int, int] = field(default_factory=dict)
    #: Game -> bytes on the wire of its snapshot (the last one received).
    snapshot_bytes: dict[str, int] = field(default_factory=dict)

    def arrived(self, wire_size: int) -> None:
        self.arrivals.append(time.monotonic())
        self.arrival_bytes += wire_size

    async def open(self, plan: list[tuple[str, str]]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        at_once = asyncio.Semaphore(OPENING_AT_ONCE)
        failures: list[str] = []

        async def open_one(token: str, game_id: str) -> None:
            async with at_once:
                try:
                    _, socket = await loop.create_connection(
                        lambda: Socket(self, token, game_id),
                        "127.0.0.1",
                        self.port,
                        local_addr=(self.source_address, 0),
                    )
                    self.sockets.append(socket)
                    await asyncio.wait_for(socket.ready, READY_TIMEOUT)
                except (OSError, RuntimeError, TimeoutError) as error:
                    failures.append(repr(error))

        await asyncio.gather(*(open_one(token, game_id) for token, game_id in plan))
        return {
            "open": len(plan) - len(failures),
            "failures": failures[:3],
            "failed": len(failures),
            "extensions": self.extensions,
            "snapshot_bytes": self.snapshot_bytes,
        }

    async def wait_arrivals(self, game_id: str) -> dict[str, Any]:
        """The arrival times of a patch of ``game_id`` at each of its subscribed sockets."""
        expected = sum(
            1
            for socket in self.sockets
            if socket.game_id == game_id
            and socket.ready.done()
            and not socket.ready.cancelled()
            and not socket.ready.exception()
        )
        deadline = time.monotonic() + FANOUT_TIMEOUT
        while len(self.arrivals) < expected and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        arrivals, self.arrivals = self.arrivals, []
        wire, self.arrival_bytes = self.arrival_bytes, 0
        return {
            "arrivals": arrivals,
            "bytes": wire,
            "lost": self.lost,
            "close_codes": self.close_codes,
        }

    def close(self) -> int:
        for socket in self.sockets:
            if socket.transport is not None:
                socket.transport.abort()
        closed = len(self.sockets)
        self.sockets.clear()
        return closed

    async def serve(self, pipe: Connection) -> None:
        loop = asyncio.get_running_loop()
        while True:
            command, argument = await loop.run_in_executor(None, pipe.recv)
            if command == "open":
                pipe.send(await self.open(argument))
            elif command == "wait":
                pipe.send(await self.wait_arrivals(argument))
            elif command == "close":
                pipe.send(self.close())
            else:
                return


def client_main(pipe: Connection, port: int, source_address: str) -> None:
    raise_open_file_limit()
    # The loop the server runs on (uvicorn picks uvloop), as the load processes of
    # ``benchmarks.server`` do: the clients share the server's two cores, and the
    # default loop's cost per socket read would be counted in the fan-out.
    import uvloop

    uvloop.install()
    asyncio.run(ClientProcess(port, source_address).serve(pipe))


# -- the server side ---------------------------------------------------------------------


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (from ``/proc/*/stat``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/stat") as stat:
                parents[int(entry)] = int(stat.read().rpartition(")")[2].split()[1])
    tree, frontier = [root], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        tree += children
        frontier = children
    return tree


def rss_kb(pid: int) -> int:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_files(pid: int) -> int:
    with contextlib.suppress(OSError):
        return len(os.listdir(f"/proc/{pid}/fd"))
    return 0


def server_open_files(root: int) -> int:
    return sum(open_files(pid) for pid in process_tree(root))


def server_rss_mb(root: int) -> float:
    return sum(rss_kb(pid) for pid in process_tree(root)) / 1024


async def wait_healthy(http: httpx.AsyncClient, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        with contextlib.suppress(httpx.TransportError):
            if (await http.get("/healthz")).status_code == 200:
                return
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError("python -m server did not start")
        await asyncio.sleep(0.2)


async def ask(pipes: list[Connection], command: str, arguments: list[Any]) -> list[Any]:
    """Send each client process its command, and gather the answers (concurrently)."""
    for pipe, argument in zip(pipes, arguments, strict=True):
        pipe.send((command, argument))
    loop = asyncio.get_running_loop()
    return list(await asyncio.gather(*(loop.run_in_executor(None, pipe.recv) for pipe in pipes)))


def next_move(legal_moves: list[str]) -> str:
    """The first legal move that is neither an undo nor a resignation."""
    return next(move for move in legal_moves if move not in ("undo", "resign"))


@dataclass
class ModeResult:
    mode: str
    sockets: int = 0
    before_mb: float = 0.0
    open_mb: float = 0.0
    after_mb: float = 0.0
    opening_seconds: float = 0.0
    extensions: str = ""
    snapshot_bytes: int = 0
    patch_bytes: list[float] = field(default_factory=list)
    fanouts: list[tuple[float, float, float, int]] = field(default_factory=list)
    #: (pid, RSS MB, open files) of each process under the server's.
    workers: list[tuple[int, int, int]] = field(default_factory=list)
    lost: int = 0
    close_codes: list[dict[int, int]] = field(default_factory=list)
    #: The machine's one-minute load average at the end (other jobs skew the times).
    load: float = 0.0


async def run_mode(args: argparse.Namespace, mode: str) -> ModeResult:
    result = ModeResult(mode)
    port = free_port()
    with RedisProcess() as redis_server:
        command = [
            sys.executable,
            "-m",
            "server",
            "--port",
            str(port),
            "--redis-url",
            redis_server.url,
            "--secret",
            SECRET,
            "--workers",
            str(args.workers),
            "--ws-compression",
            mode,
            "--rate-limits",
            "off",
            "--max-connections-per-address",
            str(args.connections * 2),
            "--log-level",
            "warning",
            "--ws-ping-interval",
            str(args.ws_ping_interval),
            *QUIET_DAILIES,
        ]
        server = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
        context = multiprocessing.get_context("spawn")
        pipes: list[Connection] = []
        clients = []
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
                await wait_healthy(http, server)
                owner = (await http.post("/v1/players")).json()["token"]
                viewer = (await http.post("/v1/players")).json()["token"]
                headers = {"Authorization": f"Bearer {owner}"}
                spectated = (
                    await http.post(
                        "/v1/games", json={"game": SPECTATED_GAME, "seed": "s"}, headers=headers
                    )
                ).json()
                idle_games = [
                    (
                        await http.post(
                            "/v1/games", json={"game": IDLE_GAME, "seed": str(n)}, headers=headers
                        )
                    ).json()["id"]
                    for n in range(args.games)
                ]
                for number in range(args.client_processes):
                    parent, child = context.Pipe()
                    address = f"127.0.0.{10 + number}"
                    process = context.Process(target=client_main, args=(child, port, address))
                    process.start()
                    pipes.append(parent)
                    clients.append(process)
                plans: list[list[tuple[str, str]]] = [[] for _ in pipes]
                for number in range(args.connections):
                    game_id = (
                        spectated["id"]
                        if number < args.spectators
                        else idle_games[number % len(idle_games)]
                    )
                    plans[number % len(pipes)].append((viewer, game_id))
                await asyncio.sleep(3)  # the workers' start-up allocations are done
                result.before_mb = server_rss_mb(server.pid)
                started = time.monotonic()
                opened = await ask(pipes, "open", plans)
                result.opening_seconds = time.monotonic() - started
                result.sockets = sum(answer["open"] for answer in opened)
                for answer in opened:
                    if answer["failed"]:
                        print(f"  {answer['failed']} sockets failed: {answer['failures']}")
                result.extensions = opened[0]["extensions"]
                result.snapshot_bytes = opened[0]["snapshot_bytes"].get(spectated["id"], 0)
                await asyncio.sleep(args.settle)
                result.open_mb = server_rss_mb(server.pid)
                result.workers = [
                    (pid, rss_kb(pid) // 1024, open_files(pid))
                    for pid in process_tree(server.pid)[1:]
                ]
                snapshot = spectated
                for _ in range(args.moves):
                    move = next_move(snapshot["legal_moves"])
                    sent = time.monotonic()
                    reply = await http.post(
                        f"/v1/games/{spectated['id']}/moves",
                        json={"move": move, "version": snapshot["version"]},
                        headers=headers,
                    )
                    reply.raise_for_status()
                    answers = await ask(pipes, "wait", [spectated["id"]] * len(pipes))
                    arrivals = sorted(t - sent for answer in answers for t in answer["arrivals"])
                    result.lost = sum(answer["lost"] for answer in answers)
                    result.close_codes = [answer["close_codes"] for answer in answers]
                    received = len(arrivals)
                    if received:
                        median = statistics.median(arrivals)
                        result.fanouts.append((arrivals[0], median, arrivals[-1], received))
                        wire = sum(answer["bytes"] for answer in answers)
                        result.patch_bytes.append(wire / received)
                    snapshot = reply.json()["snapshot"]
                    await asyncio.sleep(0.5)
                await ask(pipes, "close", [None] * len(pipes))
                # Until the workers' open files stop falling (every socket let go; their
                # Redis pools keep what they grew), then the settling time.
                deadline = time.monotonic() + CLOSE_TIMEOUT
                held, previous = server_open_files(server.pid), -1
                while held != previous and time.monotonic() < deadline:
                    await asyncio.sleep(1.0)
                    held, previous = server_open_files(server.pid), held
                await asyncio.sleep(args.settle)
                result.after_mb = server_rss_mb(server.pid)
                result.load = os.getloadavg()[0]
        finally:
            for pipe in pipes:
                with contextlib.suppress(OSError):
                    pipe.send(("quit", None))
            for process in clients:
                process.join(10)
                if process.is_alive():
                    process.kill()
            os.killpg(server.pid, 15)
            server.wait(20)
    return result


def report(result: ModeResult, spectators: int) -> None:
    grown = result.open_mb - result.before_mb
    per_socket = grown * 1024 / result.sockets if result.sockets else float("nan")
    print(f"\n--ws-compression {result.mode}: negotiated {result.extensions or 'nothing'!r}")
    print(f"  load average at the end: {result.load:.1f} (over {os.cpu_count()} cores)")
    print(
        f"  {result.sockets:,} sockets open in {result.opening_seconds:.1f} s; processes "
        f"(pid, RSS MB, open files): {result.workers}"
    )
    print(
        f"  server RSS MB: before {result.before_mb:.1f}, open {result.open_mb:.1f}, "
        f"after close {result.after_mb:.1f}"
    )
    print(
        f"  per socket {per_socket:.1f} KB; kept after close "
        f"{result.after_mb - result.before_mb:.1f} MB of {grown:.1f} MB"
    )
    for number, (first, median, last, received) in enumerate(result.fanouts, 1):
        print(
            f"  move {number}: {received:,}/{spectators:,} spectators, first "
            f"{first * 1000:.0f} ms, median {median * 1000:.0f} ms, last {last * 1000:.0f} ms"
        )
    if result.lost:
        print(f"  {result.lost} subscribed sockets closed by the server: {result.close_codes}")
    if result.patch_bytes:
        mean_patch = statistics.mean(result.patch_bytes)
        print(
            f"  on the wire: snapshot {result.snapshot_bytes} B, patch {mean_patch:.0f} B "
            f"(mean of {len(result.patch_bytes)})"
        )


async def run(args: argparse.Namespace) -> None:
    print(
        f"{args.connections:,} sockets ({args.spectators:,} spectators of one game), "
        f"{args.workers} workers, {args.client_processes} client processes, "
        f"{os.cpu_count()} cores"
    )
    for mode in args.modes.split(","):
        protocol_path(mode)  # a mode the server knows
        report(await run_mode(args, mode), args.spectators)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.connections",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--connections", type=int, default=50_000, help="sockets (50000)")
    parser.add_argument("--spectators", type=int, default=10_000, help="of one game (10000)")
    parser.add_argument("--games", type=int, default=200, help="games of the others (200)")
    parser.add_argument("--workers", type=int, default=4, help="server workers (4)")
    parser.add_argument("--client-processes", type=int, default=4, help="(4)")
    parser.add_argument("--modes", default="message,off,context", help="(message,off,context)")
    parser.add_argument("--moves", type=int, default=5, help="moves fanned out (5)")
    parser.add_argument("--settle", type=float, default=6.0, help="seconds before RSS (6)")
    parser.add_argument(
        "--ws-ping-interval", type=float, default=20.0, help="the server's flag (20)"
    )
    args = parser.parse_args(argv)
    if args.spectators > args.connections:
        parser.error("--spectators is at most --connections")
    per_process = -(-args.connections // args.client_processes)
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if per_process > limit - 100:
        parser.error(f"{per_process} sockets per client process: over the {limit} open files")
    # A plain `kill` stops the run through its `finally` blocks (which stop the server).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
