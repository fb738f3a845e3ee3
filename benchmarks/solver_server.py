"""The solver's server uses: hint latency, and the time to choose a daily, per game.

Run from the repository root (one core: the process is pinned to CPU 0 when it can be)::

    nice -n 19 .venv/bin/python -m benchmarks.solver_server hints [--positions N]
    nice -n 19 .venv/bin/python -m benchmarks.solver_server dailies [--dates D ...]

* **hints**: ``server.hints.hint`` (what ``POST /v1/games/{id}/hint`` runs in its worker
  thread) on ``--positions`` positions per game: the deal of seeds ``hint-bench-1`` …, then
  a seeded random number (0-30) of random legal moves.  p50 and p95 of the wall time and of
  the CPU time (``time.process_time``), against the target p95 ≤ 1 s on one core; the
  baseline of the same run is the engine's ``new_game`` + ``legal_moves`` of the same
  positions (ratio: hint time / baseline time).
* **dailies**: ``server.daily.selection.choose`` with the default budgets
  (``--daily-candidate-nodes`` etc., overridable here) for each game on each date, with a
  random 32-byte secret per run: candidates tried, the chosen k, verdict, proven score and
  seconds.

Results go in ``BENCHMARKS.md`` ("Hints and daily selection (issue 10)").
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import secrets
import statistics
import time

from server.config import DailySelection
from server.daily.selection import choose
from server.hints import HINT_SAMPLE_NODES, HINT_SAMPLES, HINT_SECONDS, hint
from server.rules import GAMES, Game, new_game


def pin_to_one_core() -> None:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {0})


def positions(name: str, count: int) -> list[Game]:
    games = []
    for index in range(1, count + 1):
        rng = random.Random(index)
        game = new_game(name, f"hint-bench-{index}")
        for _ in range(rng.randrange(31)):
            legal = game.legal_moves()
            if game.is_over or not legal:
                break
            candidate = game.copy()
            candidate.play(rng.choice(legal))
            if candidate.is_over:
                break  # keep a position still in play (a hint needs one)
            game = candidate
        if not game.is_over:
            games.append(game)
    return games


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def bench_hints(count: int) -> None:
    print(f"hint: {HINT_SAMPLES} samples x {HINT_SAMPLE_NODES} nodes, stop after {HINT_SECONDS} s")
    print(
        "game              positions  wall p50  wall p95  cpu p50  cpu p95  max   "
        "baseline  p95/baseline"
    )
    for name in GAMES:
        games = positions(name, count)
        walls, cpus, baselines = [], [], []
        for index, game in enumerate(games):
            view = game.view()
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            advice = hint(name, view, f"g_bench{index}", index)
            cpus.append(time.process_time() - start_cpu)
            walls.append(time.perf_counter() - start_wall)
            assert advice.move in game.legal_moves(), (name, advice)
            start = time.perf_counter()
            new_game(name, f"hint-bench-{index + 1}").legal_moves()
            baselines.append(time.perf_counter() - start)
        base = statistics.median(baselines)
        print(
            f"{name:<18}{len(games):>9}  {percentile(walls, 0.5) * 1000:>6.0f} ms"
            f" {percentile(walls, 0.95) * 1000:>6.0f} ms {percentile(cpus, 0.5) * 1000:>5.0f} ms"
            f" {percentile(cpus, 0.95) * 1000:>5.0f} ms {max(walls) * 1000:>5.0f} ms"
            f" {base * 1000:>6.2f} ms {percentile(walls, 0.95) / base:>10.0f}x",
            flush=True,
        )


def bench_dailies(dates: list[str], selection: DailySelection) -> None:
    print(
        f"selection: {selection.candidate_nodes} nodes per candidate, at most "
        f"{selection.candidates} candidates and {selection.seconds} s per game and day"
    )
    print("date        game              tried  chosen  verdict  score      seconds")
    secret = secrets.token_bytes(32)
    for date in dates:
        for name in GAMES:
            choice = choose(secret, name, date, selection)
            print(
                f"{date}  {name:<18}{choice.candidates:>5}  {choice.k:>6}  {choice.verdict:<7}"
                f"  {choice.score:>3}/{choice.total:<4}  {choice.seconds:>8.1f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.solver_server")
    commands = parser.add_subparsers(dest="command", required=True)
    hints = commands.add_parser("hints", help="hint latency per game")
    hints.add_argument("--positions", type=int, default=40)
    dailies = commands.add_parser("dailies", help="daily selection time per game")
    dailies.add_argument("--dates", nargs="+", default=["2026-12-01", "2026-12-02"])
    defaults = DailySelection()
    dailies.add_argument("--candidate-nodes", type=int, default=defaults.candidate_nodes)
    dailies.add_argument("--candidates", type=int, default=defaults.candidates)
    dailies.add_argument("--seconds", type=float, default=defaults.seconds)
    args = parser.parse_args()
    pin_to_one_core()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    if args.command == "hints":
        bench_hints(args.positions)
    else:
        selection = DailySelection(args.candidate_nodes, args.candidates, args.seconds)
        bench_dailies(args.dates, selection)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
