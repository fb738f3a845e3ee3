"""Audit and leaderboard benchmark (issue 4).

Run from the repository root::

    .venv/bin/python -m benchmarks.audit            # full run (a minute or so)
    .venv/bin/python -m benchmarks.audit --quick    # a few seconds, smaller samples

It starts its own throwaway ``redis-server`` on a free loopback port (``--save ""
--appendonly no``) and stops it at the end, then measures:

* **Audits**: a 300-move honest Empress of Italy game (random legal moves, 299 of them then
  ``resign``, at human think times from a fake clock) is played through ``GameService`` into
  that Redis.  Timed: the pure ``audit(export)`` of its replay export (the export fetched
  once), and the end-to-end server audit by id, ``audit_stored(service, game_id)`` (reads the
  record, the log and the leaderboard, replays, compares the stored state).  All are run one
  at a time in this one process, in turn (round robin), so they use one core for the Python
  work and a change of load falls on each alike; the rate is given by this process's CPU
  time and by the wall clock.  Target: at least 100 audits/s.
  For scale, two parts are also timed: the *engine floor*, the bare replay (``new_game``
  then ``play`` and ``state_hash`` per move) that any audit must do, and reading the export
  from Redis (``service.replay``: the record and the log's ``XRANGE``).
* **Leaderboard reads**: one board filled with 100,000 ``Entry`` records by pipelined writes
  (the same keys and encoding as ``Leaderboards.record``), then 1,000 ``top(100)`` and 1,000
  ``around(player, 5)`` for random players through ``Leaderboards``, one at a time, each timed
  on the wall clock (a network round trip to Redis included).  Target: p99 under 5 ms each.
  Beside the percentiles: this process's CPU time per read (redis-py's reply parsing, JSON,
  the entry dicts) and Redis's own time per read (``INFO commandstats``), which show where a
  slow percentile comes from on a busy machine.

Results go in ``BENCHMARKS.md`` ("Audit and leaderboards (issue 4)").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any

from redis.asyncio import Redis

from server.audit import audit, audit_stored
from server.leaderboard import Entry, Leaderboards, board_keys
from server.rules import new_game
from server.service import GameService
from server.store import Store
from server.testing import RedisProcess

AUDITS_TARGET_PER_S = 100.0
READ_P99_TARGET_MS = 5.0
GAME = "empress_of_italy"
#: Moves of the audited game: random legal ones, then ``resign``.
GAME_MOVES = 300
#: Seeds tried for a deal that random play does not end before GAME_MOVES.
MAX_SEED_TRIES = 50
BOARD_GAME, BOARD_DATE = "colorado", "2026-03-14"
#: Entries written per pipeline round trip when filling the board.
FILL_BATCH = 5_000
START_TIMEOUT = 10.0


class FakeClock:
    """Human think times: 400-3000 ms between moves."""

    def __init__(self, rng: random.Random) -> None:
        self.now = 1_773_482_400_000  # 2026-03-14 10:00 UTC
        self.rng = rng

    def __call__(self) -> int:
        return self.now

    def step(self) -> None:
        self.now += self.rng.randint(400, 3000)


async def long_game(service: GameService, clock: FakeClock) -> str:
    """A stored honest game of exactly GAME_MOVES moves (the last one ``resign``)."""
    player = (await service.create_player())["player_id"]
    for attempt in range(MAX_SEED_TRIES):
        rng = random.Random(attempt)
        snapshot = await service.create_game(player, GAME, f"bench-{attempt}")
        version, status, legal = 0, snapshot["status"], snapshot["legal_moves"]
        while status == "playing" and version < GAME_MOVES - 1:
            clock.step()
            reply, _, game = await service.play(snapshot["id"], player, rng.choice(legal), version)
            version, status, legal = reply["version"], game.status, game.legal_moves()
        if status == "playing":
            clock.step()
            await service.play(snapshot["id"], player, "resign", version)
            return str(snapshot["id"])
    raise RuntimeError(f"no {GAME} deal lasted {GAME_MOVES} random moves")


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


async def timed_once(run: Callable[[], Awaitable[Any]] | Callable[[], Any]) -> tuple[float, float]:
    """``(cpu_s, wall_s)`` of one run (awaited when it returns a coroutine)."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = run()
    if asyncio.iscoroutine(result):
        await result
    return time.process_time() - cpu, time.perf_counter() - wall


async def bench_audits(service: GameService, game_id: str, count: int) -> dict[str, Any]:
    export = await service.replay(game_id, with_seed=True)
    assert len(export["moves"]) == GAME_MOVES
    verdict = audit(export)
    assert verdict.passed, verdict.findings
    assert (await audit_stored(service, game_id)).passed

    def floor() -> None:
        game = new_game(export["game"], export["seed"])
        game.state_hash()
        for entry in export["moves"]:
            game.play(entry["move"])
            game.state_hash()

    kinds: dict[str, Callable[[], Awaitable[Any]] | Callable[[], Any]] = {
        "engine_floor": floor,
        "pure": lambda: audit(export),
        "export_read": lambda: service.replay(game_id, with_seed=True),
        "by_id": lambda: audit_stored(service, game_id),
    }
    for run in kinds.values():  # warm-up
        await timed_once(run)
    # Round robin, so a change of load on a shared machine falls on every kind alike.
    cpu = dict.fromkeys(kinds, 0.0)
    wall = dict.fromkeys(kinds, 0.0)
    for _ in range(count):
        for name, run in kinds.items():
            cpu_s, wall_s = await timed_once(run)
            cpu[name] += cpu_s
            wall[name] += wall_s
    results: dict[str, Any] = {"moves": GAME_MOVES, "count": count}
    for name in kinds:
        results[name] = {
            "per_s_cpu": rate(count, cpu[name]),
            "per_s_wall": rate(count, wall[name]),
            "ms_each_cpu": cpu[name] / count * 1000,
        }
    return results


async def fill_board(redis: Redis, entries: int, rng: random.Random) -> list[str]:
    """``entries`` random finished games on one board; their player ids."""
    board, table = board_keys(BOARD_GAME, BOARD_DATE)
    await redis.delete(board, table)
    players = []
    for start in range(0, entries, FILL_BATCH):
        members: dict[str, int] = {}
        records: dict[Any, Any] = {}  # player id -> entry JSON
        for number in range(start, min(entries, start + FILL_BATCH)):
            score = rng.randint(0, 52)
            entry = Entry(
                player_id=f"p_{number:07d}",
                game_id=f"g_{number:07d}",
                score=score,
                won=score == 52,
                moves=rng.randint(20, 400),
                elapsed_ms=rng.randint(30_000, 3_600_000),
                finished_at=1_773_482_400_000 + rng.randint(0, 86_400_000),
            )
            members[entry.member()] = 0
            records[entry.player_id] = json.dumps(asdict(entry))
            players.append(entry.player_id)
        async with redis.pipeline(transaction=False) as pipe:
            pipe.zadd(board, members)
            pipe.hset(table, mapping=records)
            await pipe.execute()
    assert await redis.zcard(board) == entries
    return players


def percentiles(samples_s: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles([s * 1000 for s in samples_s], n=100, method="inclusive")
    return {"p50": cuts[49], "p95": cuts[94], "p99": cuts[98], "max": max(samples_s) * 1000}


async def bench_reads(redis: Redis, entries: int, reads: int) -> dict[str, Any]:
    rng = random.Random(4)
    fill_start = time.perf_counter()
    players = await fill_board(redis, entries, rng)
    fill_s = time.perf_counter() - fill_start
    boards = Leaderboards(redis)
    results: dict[str, Any] = {"entries": entries, "reads": reads, "fill_s": fill_s}

    async def top() -> None:
        assert len(await boards.top(BOARD_GAME, BOARD_DATE, 100, None, True)) == 100

    async def around() -> None:
        rank, near = await boards.around(BOARD_GAME, BOARD_DATE, rng.choice(players), 5, True)
        assert rank is not None and 6 <= len(near) <= 11

    for name, run in (("top_100", top), ("around_5", around)):
        for _ in range(max(1, reads // 10)):  # warm-up
            await run()
        await redis.config_resetstat()
        samples = []
        cpu = time.process_time()
        for _ in range(reads):
            started = time.perf_counter()
            await run()
            samples.append(time.perf_counter() - started)
        cpu = time.process_time() - cpu
        stats = await redis.info("commandstats")
        redis_us = sum(
            figures["usec"] for command, figures in stats.items() if command != "cmdstat_info"
        )
        results[name] = {
            **percentiles(samples),
            "cpu_ms": cpu / reads * 1000,
            "redis_ms": redis_us / reads / 1000,
        }
    return results


def verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def report(audits: dict[str, Any], reads: dict[str, Any]) -> bool:
    load = os.getloadavg()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}, CPython {platform.python_version()}, "
        f"load average {load[0]:.1f}"
    )
    print(f"\nAudits of a stored {audits['moves']}-move {GAME} game ({audits['count']} each):")
    print("| what | per s (CPU) | per s (wall) | ms each (CPU) | ≥ 100 audits/s |")
    print("|---|---:|---:|---:|---|")
    ok = True
    labels = {
        "engine_floor": "engine floor: deal + play + state_hash per move",
        "pure": "`audit(export)` (pure)",
        "export_read": "reading the export: `service.replay(id, with_seed=True)`",
        "by_id": "`audit_stored(service, id)` (end to end)",
    }
    untargeted = ("engine_floor", "export_read")
    for name, label in labels.items():
        figures = audits[name]
        passed = figures["per_s_cpu"] >= AUDITS_TARGET_PER_S
        target = "—" if name in untargeted else verdict(passed)
        if name not in untargeted:
            ok &= passed
        print(
            f"| {label} | {figures['per_s_cpu']:,.1f} | {figures['per_s_wall']:,.1f} | "
            f"{figures['ms_each_cpu']:.2f} | {target} |"
        )
    print(
        f"\nLeaderboard reads, one board of {reads['entries']:,} entries (filled in "
        f"{reads['fill_s']:.1f} s), {reads['reads']:,} reads each, wall clock:"
    )
    print(
        "| read | p50 ms | p95 ms | p99 ms | max ms | client CPU ms/read | Redis ms/read "
        "| p99 < 5 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, label in (("top_100", "`top(100)`"), ("around_5", "`around(player, 5)`")):
        figures = reads[name]
        passed = figures["p99"] < READ_P99_TARGET_MS
        ok &= passed
        print(
            f"| {label} | {figures['p50']:.2f} | {figures['p95']:.2f} | {figures['p99']:.2f} | "
            f"{figures['max']:.2f} | {figures['cpu_ms']:.2f} | {figures['redis_ms']:.3f} | "
            f"{verdict(passed)} |"
        )
    print(f"\noverall: {verdict(ok)}")
    return ok


async def run(args: argparse.Namespace) -> bool:
    server = RedisProcess()
    server.start()
    client = Redis.from_url(server.url, socket_timeout=30)
    try:
        clock = FakeClock(random.Random(1))
        service = GameService(
            Store(client),
            b"ab33d2c8073c438b6bc7f5fcdb25412c686f38fe5f3879b19caab5898200a922",
            clock=clock,
        )
        game_id = await long_game(service, clock)
        audits = await bench_audits(service, game_id, args.audits)
        reads = await bench_reads(client, args.entries, args.reads)
    finally:
        await client.aclose()
        server.stop()
    return report(audits, reads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.audit", description=__doc__)
    parser.add_argument("--audits", type=int, default=200, help="audits timed per kind")
    parser.add_argument("--entries", type=int, default=100_000, help="leaderboard entries")
    parser.add_argument("--reads", type=int, default=1_000, help="reads timed per kind")
    parser.add_argument("--quick", action="store_true", help="small samples, a few seconds")
    args = parser.parse_args(argv)
    if args.quick:
        args.audits, args.entries, args.reads = 20, 10_000, 200
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
