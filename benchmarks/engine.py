"""Rules-engine benchmark: deals per second and moves per second, per game.

Run from the repository root::

    .venv/bin/python -m benchmarks.engine            # full run (a minute or two)
    .venv/bin/python -m benchmarks.engine --quick    # a few seconds, smaller samples

* **Deals**: ``new_game(name, seed)`` for distinct seeds (the SHA-256 shuffle, the deal and
  the first legal-move scan that decides the initial status), timed as a whole.
  Target: an Empress of Italy deal in under 1 ms.
* **Moves**: random playouts. Each step is ``legal_moves()`` then ``play(move)`` (which
  returns the ops), the move picked by a seeded ``random.Random``; a playout stops when the
  game is over or after ``--cap`` moves (some games can cycle for ever). Only the steps are
  timed (not the deals). Target: at least 20,000 moves per second for every game.

Every measurement is repeated ``--rounds`` times on the same workload (same seeds, same
moves) and timed two ways: by the CPU time of this process (``time.process_time``), which
other processes on a shared machine barely disturb, and by the wall clock
(``time.perf_counter``). The targets are judged on the median CPU-time round; the best
wall-clock round is shown beside it, with the load average before and after, as a check.

Results go in ``BENCHMARKS.md`` ("Rules engine (issue 2)").
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass

from server.rules import GAME_NAMES, new_game

DEAL_TARGET_US = {"empress_of_italy": 1000.0}
MOVES_TARGET_PER_S = 20_000.0


@dataclass
class Timing:
    cpu: float
    wall: float


@dataclass
class Result:
    game: str
    deals: int  # per round
    deal_rounds: list[Timing]
    moves: int  # per round
    playouts: int  # per round
    move_rounds: list[Timing]

    @property
    def us_per_deal(self) -> float:
        """Median CPU time of one deal, in microseconds."""
        return statistics.median(t.cpu for t in self.deal_rounds) / self.deals * 1e6

    @property
    def best_wall_us_per_deal(self) -> float:
        return min(t.wall for t in self.deal_rounds) / self.deals * 1e6

    @property
    def moves_per_s(self) -> float:
        """Moves per CPU second, median round."""
        return self.moves / statistics.median(t.cpu for t in self.move_rounds)

    @property
    def best_wall_moves_per_s(self) -> float:
        return self.moves / min(t.wall for t in self.move_rounds)

    @property
    def deal_ok(self) -> bool | None:
        target = DEAL_TARGET_US.get(self.game)
        return None if target is None else self.us_per_deal < target

    @property
    def moves_ok(self) -> bool:
        return self.moves_per_s >= MOVES_TARGET_PER_S


def bench_deals(name: str, count: int) -> Timing:
    """Time to deal ``count`` games with distinct seeds."""
    seeds = [f"bench-deal-{i}" for i in range(count)]
    cpu, wall = time.process_time(), time.perf_counter()
    for seed in seeds:
        new_game(name, seed)
    return Timing(time.process_time() - cpu, time.perf_counter() - wall)


def bench_moves(name: str, min_moves: int, cap: int, seed: int) -> tuple[int, int, Timing]:
    """Random playouts until at least ``min_moves`` moves: (moves, playouts, time).

    The workload depends only on the arguments, so repeated calls play the same moves.
    """
    chooser = random.Random(seed)
    moves = playouts = 0
    cpu = wall = 0.0
    process_time, perf_counter = time.process_time, time.perf_counter
    while moves < min_moves:
        game = new_game(name, f"bench-play-{playouts}")
        legal_moves, play, choice = game.legal_moves, game.play, chooser.choice
        steps = 0
        cpu_start, wall_start = process_time(), perf_counter()
        while steps < cap:
            legal = legal_moves()
            if not legal:
                break
            play(choice(legal))
            steps += 1
        cpu += process_time() - cpu_start
        wall += perf_counter() - wall_start
        moves += steps
        playouts += 1
    return moves, playouts, Timing(cpu, wall)


def machine() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")),
                "",
            )
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({model or platform.machine()}), "
        f"{platform.system()} {platform.release()}, "
        f"Python {platform.python_version()} ({platform.python_implementation()})"
    )


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("pass" if ok else "FAIL")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.engine",
        description="Rules-engine benchmark: deals/s and moves/s per game.",
    )
    parser.add_argument("--quick", action="store_true", help="small samples (a few seconds)")
    parser.add_argument("--deals", type=int, help="deals per game and round (500)")
    parser.add_argument("--moves", type=int, help="moves per game and round, at least (30000)")
    parser.add_argument("--rounds", type=int, help="rounds of each measurement (5)")
    parser.add_argument("--cap", type=int, default=1000, help="most moves per playout (1000)")
    parser.add_argument("--seed", type=int, default=2, help="seed of the move chooser (2)")
    args = parser.parse_args(argv)
    deals = args.deals or (100 if args.quick else 500)
    min_moves = args.moves or (5_000 if args.quick else 30_000)
    rounds = args.rounds or (2 if args.quick else 5)

    print(f"machine: {machine()}")
    print(f"load average (1, 5, 15 min) before: {load_average()}")
    print(
        f"per game and round: {deals} deals, >= {min_moves} moves (cap {args.cap} per "
        f"playout); {rounds} rounds; cpu = median round by process CPU time, "
        "wall = best round by wall clock"
    )
    print()
    header = (
        f"{'game':<17} {'us/deal':>8} {'deals/s':>8} {'wall us':>8} {'deal':>5} "
        f"{'playouts':>8} {'moves':>7} {'moves/s':>8} {'wall m/s':>8} {'moves':>5}"
    )
    print(header)
    print(
        f"{'':<17} {'(cpu)':>8} {'(cpu)':>8} {'(best)':>8} {'':>5} {'':>8} {'':>7} "
        f"{'(cpu)':>8} {'(best)':>8}"
    )
    print("-" * len(header))
    results = []
    for name in GAME_NAMES:
        bench_deals(name, 20)  # warm-up
        deal_rounds = [bench_deals(name, deals) for _ in range(rounds)]
        runs = [bench_moves(name, min_moves, args.cap, args.seed) for _ in range(rounds)]
        moves, playouts, _ = runs[0]
        assert all(run[:2] == (moves, playouts) for run in runs)
        result = Result(name, deals, deal_rounds, moves, playouts, [run[2] for run in runs])
        results.append(result)
        print(
            f"{name:<17} {result.us_per_deal:>8.1f} {1e6 / result.us_per_deal:>8,.0f} "
            f"{result.best_wall_us_per_deal:>8.1f} {verdict(result.deal_ok):>5} "
            f"{playouts:>8} {moves:>7} {result.moves_per_s:>8,.0f} "
            f"{result.best_wall_moves_per_s:>8,.0f} {verdict(result.moves_ok):>5}",
            flush=True,
        )
    print()
    print(f"load average after: {load_average()}")
    print(
        f"targets (cpu figures): Empress of Italy deal < {DEAL_TARGET_US['empress_of_italy']:.0f}"
        f" us; >= {MOVES_TARGET_PER_S:,.0f} moves/s for every game"
    )
    failed = [r.game for r in results if r.deal_ok is False or not r.moves_ok]
    print("all targets met" if not failed else f"targets missed: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
