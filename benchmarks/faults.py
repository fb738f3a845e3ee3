"""Fault campaign: players keep moving while workers, Redis and the server are killed.

    .venv/bin/python -m benchmarks.faults [--clients 20] [--workers 2] [--game balcony]
        [--pace-ms 40] [--settle 4] [--appendfsync always] [--faults F,F,...] [--json FILE]

Everything runs on 127.0.0.1 and is started here, as real processes: a ``redis-server``
(append-only, ``--appendfsync`` as given) on a free port and data directory, and the game
server (``python -m server --workers W``) on a free port.  ``--clients`` players, each on
its own self-healing SDK connection (``clients.python``), play random legal moves
``--pace-ms`` apart, start a new game when one ends, and retry a move whose reply was lost
or refused for a store outage with the same ``move_id`` until it is answered.  Each
acknowledged move (an ``accepted`` reply) is recorded with its game, the version it
produced and its text.

The faults, ``--settle`` seconds apart, in the order given:

* ``kill-worker``: SIGKILL one uvicorn worker process (uvicorn starts a new one);
* ``restart-redis``: stop Redis cleanly (SIGTERM) and start it again on the same port/dir;
* ``kill-redis``: SIGKILL Redis and start it again;
* ``restart-server``: SIGTERM the whole server and start it again on the same port.

Afterwards every game played is read back from Redis and the campaign prints: moves
acknowledged, acknowledged moves missing from the log (or logged with another move),
version gaps in the logs, games whose stored audit fails integrity, and per fault the
longest pause a client saw between two acknowledged moves around it.  Target: 0 / 0 / 0.
With ``--appendfsync everysec`` a SIGKILLed Redis may lose up to a second of writes: the
campaign shows it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from benchmarks import QUIET_DAILIES
from clients.python import ApiError, Client, ConnectionLost, MoveRejected
from server.audit import audit_stored
from server.service import GameService
from server.store import Store
from server.testing import START_TIMEOUT, free_port

FAULTS = ("kill-worker", "restart-redis", "kill-redis", "restart-server")
#: Refusals after which the same move (same move_id) is sent again.
RETRY_CODES = {"store_unavailable", "internal", "rate_limited"}
SECRET = "31718fdc2fc065ba7866818ebbc43785eff0436f559f9e3d2a4ba3cbf230c319"


@dataclass
class Ack:
    game_id: str
    version: int
    move: str
    at: float


@dataclass
class Tally:
    acks: list[Ack] = field(default_factory=list)
    games: set[str] = field(default_factory=set)
    retries: int = 0
    #: Per client, the monotonic times of its acknowledged moves.
    times: dict[int, list[float]] = field(default_factory=dict)


class RedisServer:
    """``redis-server`` on a loopback port with an append-only file in ``data_dir``."""

    def __init__(self, data_dir: Path, appendfsync: str) -> None:
        self.port = free_port()
        self.data_dir = data_dir
        self.appendfsync = appendfsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not on PATH")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "yes", "--appendfsync", self.appendfsync]
        args += ["--dir", str(self.data_dir), "--daemonize", "no"]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
        client = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT
        try:
            while True:
                with contextlib.suppress(redis.exceptions.RedisError):
                    if client.ping():
                        return
                if time.monotonic() > deadline:
                    raise SystemExit("redis-server did not answer")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(sig)
            process.wait(START_TIMEOUT)


class GameServer:
    """``python -m server`` with ``workers`` processes on a fixed loopback port."""

    def __init__(self, redis_url: str, workers: int) -> None:
        self.port = free_port()
        self.redis_url = redis_url
        self.workers = workers
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {**os.environ, "RATE_LIMITS": "off", "RANKED_MIN_ACCOUNT_AGE": "0"}
        args = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["--redis-url", self.redis_url, "--workers", str(self.workers)]
        args += ["--secret", SECRET, "--log-level", "warning", *QUIET_DAILIES]
        self.process = subprocess.Popen(
            args, env=env, stdin=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + START_TIMEOUT * 2
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return
            time.sleep(0.05)
        raise SystemExit("the game server did not become ready")

    def workers_pids(self) -> list[int]:
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(START_TIMEOUT * 2)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(START_TIMEOUT)


async def player(
    index: int, base: str, game: str, pace: float, tally: Tally, stop: asyncio.Event
) -> None:
    """One client: plays random legal moves until ``stop``, recording every ack."""
    rng = random.Random(index)
    times = tally.times.setdefault(index, [])

    async def retrying(call: Any) -> Any:
        while not stop.is_set():
            try:
                return await call()
            except (ApiError, httpx.HTTPError, OSError):
                tally.retries += 1
                await asyncio.sleep(0.2)
        return None

    async with Client(base, timeout=5) as client:
        await retrying(client.create_player)
        async with client.connection() as connection:
            number = 0
            while not stop.is_set():
                number += 1
                seed = f"faults-{index}-{number}"
                snapshot = await retrying(lambda seed=seed: client.new_game(game, seed=seed))
                if snapshot is None:
                    return
                game_id = snapshot["id"]
                tally.games.add(game_id)
                copy = await retrying(lambda game_id=game_id: connection.subscribe(game_id))
                while copy is not None and copy.status == "playing" and not stop.is_set():
                    moves = [m for m in (copy.legal_moves or []) if m != "resign"]
                    if not moves:
                        if copy.legal_moves is None:  # moved elsewhere: wait for resync
                            await asyncio.sleep(0.05)
                            continue
                        break
                    move, move_id, version = rng.choice(moves), uuid.uuid4().hex, copy.version
                    while not stop.is_set():
                        try:
                            reply = await connection.move(
                                copy.game_id, move, version=version, move_id=move_id
                            )
                        except MoveRejected as error:
                            if error.code not in RETRY_CODES:
                                break  # e.g. stale: the copy resyncs; choose again
                        except (ConnectionLost, TimeoutError, ApiError):
                            pass
                        else:
                            now = time.monotonic()
                            tally.acks.append(
                                Ack(copy.game_id, reply["applied_version"], move, now)
                            )
                            times.append(now)
                            break
                        tally.retries += 1
                        await asyncio.sleep(0.1)
                    await asyncio.sleep(pace * rng.uniform(0.5, 1.5))


def longest_pause(times: dict[int, list[float]], start: float, end: float) -> float:
    """The longest gap between two successive acks of one client that overlaps
    ``[start, end]`` (seconds)."""
    longest = 0.0
    for stamps in times.values():
        for before, after in zip(stamps, stamps[1:], strict=False):
            if after >= start and before <= end:
                longest = max(longest, after - before)
        if stamps and stamps[-1] < start:  # never acked again
            longest = max(longest, end - stamps[-1])
    return longest


async def verify(redis_url: str, tally: Tally) -> dict[str, Any]:
    """Acked moves missing from the logs, version gaps, and games failing integrity."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    store = Store(client)
    service = GameService(store, SECRET.encode())
    logs: dict[str, dict[int, str]] = {}
    gaps = 0
    failing: list[str] = []
    try:
        for game_id in sorted(tally.games):
            entries = await store.log(game_id)
            versions = [entry["version"] for entry in entries]
            gaps += sum(1 for i, v in enumerate(versions, start=1) if v != i)
            logs[game_id] = {entry["version"]: entry["move"] for entry in entries}
            verdict = await audit_stored(service, game_id)
            if integrity_failed(verdict):
                failing.append(game_id)
    finally:
        await client.aclose()
    lost = [
        ack
        for ack in tally.acks
        if logs.get(ack.game_id, {}).get(ack.version) not in (ack.move, normal(ack.move))
    ]
    return {"lost": lost, "gaps": gaps, "failing": failing}


def normal(move: str) -> str:
    return move.replace(" ", "")


def integrity_failed(verdict: Any) -> bool:
    """Whether the audit found anything but fair-play signals (timing: bots are fast)."""
    integrity = getattr(verdict, "integrity", None)
    if integrity is not None:
        return bool(integrity != "pass")
    timing = {"inhuman_speed", "inhuman_regularity"}
    return any(finding.check not in timing for finding in verdict.findings)


@contextlib.contextmanager
def processes(args: argparse.Namespace) -> Iterator[tuple[RedisServer, GameServer]]:
    with tempfile.TemporaryDirectory(prefix="faults-") as data:
        store = RedisServer(Path(data), args.appendfsync)
        store.start()
        server = GameServer(store.url, args.workers)
        try:
            server.start()
            yield store, server
        finally:
            server.stop()
            store.stop()


def inject(fault: str, store: RedisServer, server: GameServer) -> None:
    if fault == "kill-worker":
        os.kill(server.workers_pids()[0], signal.SIGKILL)
    elif fault == "restart-redis":
        store.stop(signal.SIGTERM)
        store.start()
    elif fault == "kill-redis":
        store.stop(signal.SIGKILL)
        store.start()
    elif fault == "restart-server":
        server.stop()
        server.start()


async def campaign(args: argparse.Namespace) -> dict[str, Any]:
    faults = args.faults.split(",")
    for fault in faults:
        if fault not in FAULTS:
            raise SystemExit(f"unknown fault {fault!r}; choose from {', '.join(FAULTS)}")
    tally = Tally()
    stop = asyncio.Event()
    windows: list[tuple[str, float, float]] = []
    with processes(args) as (store, server):
        players = [
            asyncio.create_task(player(i, server.base, args.game, args.pace_ms / 1000, tally, stop))
            for i in range(args.clients)
        ]
        await asyncio.sleep(args.settle)
        for fault in faults:
            print(f"{len(tally.acks):6d} acks; injecting {fault}", file=sys.stderr)
            start = time.monotonic()
            await asyncio.to_thread(inject, fault, store, server)
            await asyncio.sleep(args.settle)
            windows.append((fault, start, time.monotonic()))
        stop.set()
        done, pending = await asyncio.wait(players, timeout=START_TIMEOUT * 2)
        for task in pending:
            task.cancel()
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        checked = await verify(store.url, tally)
    return {
        "clients": args.clients,
        "workers": args.workers,
        "game": args.game,
        "appendfsync": args.appendfsync,
        "acked_moves": len(tally.acks),
        "games": len(tally.games),
        "retries": tally.retries,
        "acked_moves_lost": len(checked["lost"]),
        "version_gaps": checked["gaps"],
        "games_failing_integrity": len(checked["failing"]),
        "longest_pause_s": {
            fault: round(longest_pause(tally.times, start, end), 3) for fault, start, end in windows
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.faults", description=__doc__)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--game", default="balcony")
    parser.add_argument("--pace-ms", type=float, default=40.0, help="mean pause between moves")
    parser.add_argument("--settle", type=float, default=4.0, help="seconds between faults")
    parser.add_argument("--appendfsync", default="always", choices=["always", "everysec"])
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args(argv)
    result = asyncio.run(campaign(args))
    print(
        f"\nfault campaign: {args.clients} clients, {args.workers} workers, {args.game}, "
        f"appendfsync {args.appendfsync}"
    )
    width = max(len(key) for key in result)
    for key, value in result.items():
        if key == "longest_pause_s":
            for fault, pause in value.items():
                print(f"  {'longest pause, ' + fault:<{width + 16}} {pause:.3f} s")
        else:
            print(f"  {key:<{width + 16}} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    ok = not (result["acked_moves_lost"] or result["version_gaps"])
    ok = ok and not result["games_failing_integrity"]
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
