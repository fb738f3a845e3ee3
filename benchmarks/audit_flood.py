"""Game reads under a flood of audits (issue 9: audits never starve play).

Run from the repository root::

    .venv/bin/python -m benchmarks.audit_flood [--posters 32] [--reads 300]

It starts a throwaway ``redis-server`` and one ``python -m server`` worker on loopback ports
(rate limits off, so the flood reaches the audit pool: ``--audit-workers 1 --audit-queue 8``),
stores an honest 300-move Empress of Italy game (``benchmarks.audit.long_game``), then times
``GET /v1/games/{id}`` one at a time on the wall clock:

* **idle**: nothing else running;
* **flood of exports**: ``--posters`` clients post the game's replay export to
  ``POST /v1/audit`` back to back (audited in the pool's child process), each waiting
  ``Retry-After`` after a ``503 audit_busy`` (a client that ignores it is an HTTP flood,
  which the per-address request rate turns away);
* **flood by id**: the same with ``{"game_id"}`` (the stored audit, run by
  ``server.audit.audit_stored`` in a thread of the worker).

It prints p50/p99 of each phase, the p99 ratio to idle (target: at most 2 for the export
flood), and the audits answered 200 and ``503 audit_busy``.  Results go in ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import httpx
from redis.asyncio import Redis

from benchmarks import QUIET_DAILIES
from benchmarks.audit import FakeClock, long_game
from server.service import GameService
from server.store import Store
from server.testing import RedisProcess, free_port

TARGET_RATIO = 2.0
START_TIMEOUT = 20.0
#: The server secret of the run (at least 32 bytes).
SECRET = "9d4231572a6457786a866f5d12a3db7d30450f2dc86b33fa24936ff4988923c6"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def timed_reads(http: httpx.AsyncClient, path: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        response = await http.get(path)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.text
        await asyncio.sleep(0.005)  # a reader, not a flood of its own
    return times


async def flood(
    base_url: str, headers: dict[str, str], body: bytes, posters: int, stop: asyncio.Event
) -> Counter[int]:
    statuses: Counter[int] = Counter()

    async def poster() -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=60, headers=headers) as http:
            while not stop.is_set():
                response = await http.post("/v1/audit", content=body)
                statuses[response.status_code] += 1
                if response.status_code == 503:
                    await asyncio.sleep(int(response.headers["Retry-After"]))

    await asyncio.gather(*(poster() for _ in range(posters)))
    return statuses


async def phase(
    base_url: str,
    path: str,
    reads: int,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    posters: int = 0,
) -> tuple[list[float], Counter[int]]:
    stop = asyncio.Event()
    flooding = None
    if body is not None and headers is not None:
        flooding = asyncio.create_task(flood(base_url, headers, body, posters, stop))
        await asyncio.sleep(1.0)  # let the flood build up
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:
        times = await timed_reads(http, path, reads)
    stop.set()
    statuses = await flooding if flooding is not None else Counter()
    return times, statuses


async def run(args: argparse.Namespace) -> bool:
    port = free_port()
    with RedisProcess() as redis_server:
        redis = Redis.from_url(redis_server.url, socket_timeout=30)
        clock = FakeClock(random.Random(1))
        service = GameService(Store(redis), SECRET.encode(), clock=clock)
        game_id = await long_game(service, clock)
        await redis.aclose()
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
            "--audit-workers",
            "1",
            "--audit-queue",
            "8",
            "--log-level",
            "warning",
            *QUIET_DAILIES,
        ]
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        base_url = f"http://127.0.0.1:{port}"
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
                headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
                export = (await http.get(f"/v1/games/{game_id}/replay")).json()
                assert len(export["moves"]) == 300 and export["seed"], export.keys()
                warm = await http.post("/v1/audit", content=json.dumps(export), headers=headers)
                assert warm.status_code == 200, warm.text  # the pool's child process is up
            path = f"/v1/games/{game_id}"
            results: dict[str, Any] = {}
            idle, _ = await phase(base_url, path, args.reads)
            results["idle"] = (idle, Counter())
            exports = json.dumps(export).encode()
            results["flood of exports"] = await phase(
                base_url, path, args.reads, headers, exports, args.posters
            )
            by_id = json.dumps({"game_id": game_id}).encode()
            results["flood by id"] = await phase(
                base_url, path, args.reads, headers, by_id, args.posters
            )
        finally:
            process.terminate()
            process.wait(10)
    idle_p99 = percentile(idle, 0.99)
    print(f"GET /v1/games/{{id}}: {args.reads} reads per phase, {args.posters} audit posters")
    print(f"{'phase':18} {'p50 ms':>8} {'p99 ms':>8} {'p99/idle':>9} {'audits 200':>11} {'503':>6}")
    for name, (times, statuses) in results.items():
        p99 = percentile(times, 0.99)
        print(
            f"{name:18} {statistics.median(times):8.2f} {p99:8.2f} {p99 / idle_p99:9.2f} "
            f"{statuses[200]:11d} {statuses[503]:6d}"
        )
    ratio = percentile(results["flood of exports"][0], 0.99) / idle_p99
    print(f"target: p99 under the export flood at most {TARGET_RATIO}x idle: ", end="")
    print("met" if ratio <= TARGET_RATIO else "NOT met")
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    return ratio <= TARGET_RATIO


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.audit_flood", description=__doc__)
    parser.add_argument("--posters", type=int, default=32, help="concurrent audit posters (32)")
    parser.add_argument("--reads", type=int, default=300, help="timed game reads per phase (300)")
    return 0 if asyncio.run(run(parser.parse_args(argv))) else 1


if __name__ == "__main__":
    sys.exit(main())
