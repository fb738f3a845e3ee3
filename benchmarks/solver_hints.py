"""Hints worth following? A player who always takes the hint, beside perfect information.

Run from the repository root::

    .venv/bin/python -m benchmarks.solver_hints balcony --deals 20 --budget 3

For each deal ``P1`` … ``PN`` (``--prefix``, default ``stats-``, the deals of
``python -m server.solver stats``) of each game named:

* **perfect information**: ``solve`` knowing the stock, ``--budget`` CPU seconds a deal;
* **hint follower**: from the deal, play the move ``advise`` recommends from the player's
  view (the hint's samples and positions, ``random.Random(f"{seed}:{k}")`` at move k, so
  the run is deterministic), until the game is over or ``--max-moves`` moves (Balcony,
  Empress and Gloucestershire let cards go back and forth, so a follower may wander);
  twice, on the same deals: ``advise(per_move=False)`` (the first version, each sample's
  winning line votes for its first move: the baseline) and ``advise`` as the server
  calls it (every candidate move judged in every sample).  ``--only-per-move`` skips the
  baseline.

It prints, per game: deals, the perfect-information won / lost / unknown, the follower's
wins and mean score, and the CPU time per hint (p50, p95).  Times are the process's CPU
time.  Results go in ``BENCHMARKS.md`` ("Solver (issue 26)").
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from server.rules import GAME_NAMES, WON, new_game
from server.solver import Budget, advise, solve


def follow_hints(
    name: str, seed: str, max_moves: int, per_move: bool = True
) -> tuple[bool, int, list[float]]:
    """Play deal ``seed`` by the hints alone: (won, score, CPU seconds of each hint)."""
    game = new_game(name, seed)
    times = []
    for k in range(max_moves):
        if game.is_over:
            break
        start = time.process_time()
        advice = advise(name, game.view(), random.Random(f"{seed}:{k}"), per_move=per_move)
        times.append(time.process_time() - start)
        if advice.move is None:
            break
        game.play(advice.move)
    return game.status == WON, game.score, times


def perfect(name: str, seed: str, seconds: float) -> str:
    end = time.process_time() + seconds
    return solve(
        new_game(name, seed), Budget(out_of_time=lambda: time.process_time() > end)
    ).verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.solver_hints")
    parser.add_argument("games", nargs="+", choices=GAME_NAMES)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--budget", type=float, default=3.0, help="CPU s of solve a deal")
    parser.add_argument("--max-moves", type=int, default=600)
    parser.add_argument("--prefix", default="stats-")
    parser.add_argument("--first", type=int, default=1, help="first deal number")
    parser.add_argument(
        "--only-per-move", action="store_true", help="skip the baseline (by lines) follower"
    )
    args = parser.parse_args(argv)
    print(
        "| game | deals | perfect won / lost / unknown | hint | follower won "
        "| follower mean score | hint CPU p50 / p95 s |"
    )
    print("|---|---:|---|---|---:|---:|---|")
    for name in args.games:
        verdicts = [perfect(name, f"{args.prefix}{i}", args.budget) for i in seeds(args)]
        counts = " / ".join(str(verdicts.count(v)) for v in ("won", "lost", "unknown"))
        for label, per_move in (("by lines (baseline)", False), ("per move", True)):
            if args.only_per_move and not per_move:
                continue
            wins, scores, times = 0, [], []
            for i, verdict in zip(seeds(args), verdicts, strict=True):
                seed = f"{args.prefix}{i}"
                won, score, hint_times = follow_hints(name, seed, args.max_moves, per_move)
                wins += won
                scores.append(score)
                times += hint_times
                print(f"{name} {seed} {label}: {verdict}, follower {score}", file=sys.stderr)
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))] if times else 0.0
            print(
                f"| {name} | {args.deals} | {counts} | {label} | {wins} "
                f"| {statistics.fmean(scores):.1f} "
                f"| {statistics.median(times) if times else 0:.3f} / {p95:.3f} |",
                flush=True,
            )
    return 0


def seeds(args: argparse.Namespace) -> range:
    return range(args.first, args.first + args.deals)


if __name__ == "__main__":
    raise SystemExit(main())
