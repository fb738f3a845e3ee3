"""Solver benchmark: search speed, time to a verdict, and hint (fair advice) latency.

Run from the repository root::

    .venv/bin/python -m benchmarks.solver                 # 20 deals a game, 2 s budget
    .venv/bin/python -m benchmarks.solver --deals 5 --budget 0.5 --advice 5   # quick

For each game, on the deals ``bench-1`` … ``bench-N``:

* **nodes/s**: positions the perfect-information search generates per CPU second, over
  all the deals; beside it, as the baseline of the same run, the positions per second of
  a plain search on the rules engine itself (``legal_moves()``, ``copy()``, ``play()``,
  as ``tests/solver/solver_testkit.py`` does), and the ratio.
* **time to a verdict**: CPU seconds of ``solve`` per deal with a budget of ``--budget``
  CPU seconds; median and p95 over the deals (a deal that reaches the budget counts at
  the budget), with how many got a verdict (won or lost).
* **hint latency**: CPU seconds of ``advise`` with its default budget (the one meant for
  hints), on ``--advice`` positions per game (each deal after a few random legal moves);
  p50, p95 and max.  Target: p95 ≤ 1 s on one core.

Times are CPU time of this process (``time.process_time``), which other processes on a
shared machine barely disturb.  Results go in ``BENCHMARKS.md`` ("Solver (issue 10)").
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from collections.abc import Callable

from server.rules import GAME_NAMES, WON, Game, new_game
from server.solver import Budget, advise, solve

HINT_TARGET_S = 1.0


def cpu_deadline(end: float) -> Callable[[], bool]:
    """Whether this process's CPU time has passed ``end``."""
    return lambda: time.process_time() > end


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def engine_nodes_per_s(game: Game, nodes: int) -> float:
    """Positions per CPU second of a plain depth-first search on the engine."""
    start = time.process_time()
    seen = {tuple(map(tuple, game.piles))}
    stack = [game]
    while stack and len(seen) < nodes:
        position = stack.pop()
        if position.status == WON:
            break
        for move in position.legal_moves():
            child = position.copy()
            child.play(move)
            key = tuple(map(tuple, child.piles))
            if key not in seen:
                seen.add(key)
                stack.append(child)
    return len(seen) / max(time.process_time() - start, 1e-9)


def position(name: str, seed: str, rng: random.Random) -> Game:
    game = new_game(name, seed)
    for _ in range(rng.randrange(0, 6)):
        if game.is_over:
            break
        game.play(rng.choice(game.legal_moves()))
    return game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--budget", type=float, default=2.0, help="CPU seconds per deal")
    parser.add_argument("--advice", type=int, default=20, help="hint positions per game")
    args = parser.parse_args()
    print(f"CPython {platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    print(f"{args.deals} deals a game, {args.budget:g} s budget; {args.advice} hints a game")
    print()
    rows = []
    for name in GAME_NAMES:
        times, nodes, verdicts = [], 0, 0
        for i in range(1, args.deals + 1):
            game = new_game(name, f"bench-{i}")
            start = time.process_time()
            result = solve(game, Budget(out_of_time=cpu_deadline(start + args.budget)))
            times.append(min(time.process_time() - start, args.budget))
            nodes += result.nodes
            verdicts += result.verdict != "unknown"
        speed = nodes / sum(times)
        baseline = statistics.median(
            engine_nodes_per_s(new_game(name, f"bench-{i}"), 2_000) for i in range(1, 4)
        )
        rng = random.Random(f"bench-advice-{name}")
        latencies = []
        for i in range(1, args.advice + 1):
            game = position(name, f"bench-hint-{i}", rng)
            view = game.view()
            start = time.process_time()
            advice = advise(name, view, random.Random(i))
            latencies.append(time.process_time() - start)
            assert advice.move is None or game.is_legal(advice.move)
        rows.append((name, speed, baseline, times, verdicts, latencies))
        print(f"{name}: done", flush=True)
    print()
    print(
        "| game | nodes/s | engine search nodes/s | ratio | verdicts | median s | p95 s "
        "| hint p50 s | hint p95 s | hint max s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for name, speed, baseline, times, verdicts, latencies in rows:
        p95 = percentile(latencies, 0.95)
        worst = max(worst, p95)
        print(
            f"| {name} | {speed:,.0f} | {baseline:,.0f} | {speed / baseline:.1f} "
            f"| {verdicts}/{len(times)} | {statistics.median(times):.2f} "
            f"| {percentile(times, 0.95):.2f} | {statistics.median(latencies):.2f} "
            f"| {p95:.2f} | {max(latencies):.2f} |"
        )
    verdict = "pass" if worst <= HINT_TARGET_S else "miss"
    print(f"\nhint p95 ≤ {HINT_TARGET_S:g} s for every game: {verdict} (worst p95 {worst:.2f} s)")


if __name__ == "__main__":
    main()
