"""Is the memory taken by WebSocket connections returned after they close? (issue 9)

Run from the repository root::

    .venv/bin/python -m benchmarks.connections_memory [--connections 3000] [--rounds 2]

It starts a throwaway ``redis-server`` and one ``python -m server`` worker (one process:
its RSS is the worker's) on loopback ports, with the rate limits off and room for every
socket.  Each round opens ``--connections`` WebSockets in batches; each authenticates,
subscribes to one shared game and pings.  It prints the worker's RSS (``/proc/PID/status``)
before the first round, with the sockets open, and a few seconds after they all closed.
``--arena-max N`` runs the worker with ``MALLOC_ARENA_MAX=N`` (glibc) to compare.
Results go in ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import time

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect

from server.testing import RedisProcess, free_port

START_TIMEOUT = 20.0
#: The server secret of the run (at least 32 bytes).
SECRET = "connections-memory-secret-of-at-least-32-bytes"
BATCH = 200
SETTLE_SECONDS = 5.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def open_one(url: str, token: str, game_id: str) -> ClientConnection:
    connection = await connect(url, open_timeout=30, max_size=None)
    for message in (
        {"type": "auth", "token": token},
        {"type": "subscribe", "game_id": game_id},
        {"type": "ping", "nonce": 1},
    ):
        await connection.send(msgpack.packb(message))
    while True:
        reply = msgpack.unpackb(await asyncio.wait_for(connection.recv(), 30))
        if reply["type"] == "pong":
            return connection
        if reply["type"] == "error":
            raise RuntimeError(f"refused: {reply}")


async def run(args: argparse.Namespace) -> None:
    port = free_port()
    with RedisProcess() as redis_server:
        env = dict(os.environ)
        if args.arena_max:
            env["MALLOC_ARENA_MAX"] = str(args.arena_max)
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
            "--rate-limits",
            "off",
            "--max-connections-per-address",
            str(args.connections * 2),
            "--log-level",
            "warning",
        ]
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
        base_url = f"http://127.0.0.1:{port}"
        ws_url = f"ws://127.0.0.1:{port}/v1/ws"
        try:
            async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
                deadline = time.monotonic() + START_TIMEOUT
                while True:
                    with contextlib.suppress(httpx.TransportError):
                        if (await http.get("/healthz")).status_code == 200:
                            break
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise RuntimeError("python -m server did not start")
                    await asyncio.sleep(0.1)
                token = (await http.post("/v1/players")).json()["token"]
                created = await http.post(
                    "/v1/games",
                    json={"game": "balcony", "seed": "abc"},
                    headers={"Authorization": f"Bearer {token}"},
                )
                game_id = created.json()["id"]
            print(
                f"{args.connections} WebSockets per round, {args.rounds} rounds, "
                f"MALLOC_ARENA_MAX={args.arena_max or 'unset'}"
            )
            print(f"{'moment':32} {'worker RSS MB':>14}")
            print(f"{'before':32} {rss_mb(process.pid):14.1f}")
            for round_number in range(1, args.rounds + 1):
                sockets: list[ClientConnection] = []
                started = time.monotonic()
                for first in range(0, args.connections, BATCH):
                    count = min(BATCH, args.connections - first)
                    sockets += await asyncio.gather(
                        *(open_one(ws_url, token, game_id) for _ in range(count))
                    )
                opened = time.monotonic() - started
                label = f"round {round_number}: {len(sockets)} open ({opened:.1f} s)"
                print(f"{label:32} {rss_mb(process.pid):14.1f}")
                await asyncio.gather(*(socket.close() for socket in sockets))
                sockets.clear()
                await asyncio.sleep(SETTLE_SECONDS)
                label = f"round {round_number}: all closed +{SETTLE_SECONDS:.0f} s"
                print(f"{label:32} {rss_mb(process.pid):14.1f}")
        finally:
            process.terminate()
            process.wait(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.connections_memory", description=__doc__
    )
    parser.add_argument("--connections", type=int, default=3000, help="sockets per round (3000)")
    parser.add_argument("--rounds", type=int, default=2, help="open-and-close rounds (2)")
    parser.add_argument("--arena-max", type=int, default=0, help="MALLOC_ARENA_MAX (unset)")
    asyncio.run(run(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
