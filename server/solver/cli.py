"""``python -m server.solver stats``: win rates of a game over numbered deals.

The one module of the solver with I/O, a clock and processes::

    python -m server.solver stats GAME --deals N --budget SECONDS [--jobs J]
                                  [--prefix P] [--jsonl FILE] [--nodes NODES]

solves the deals of ``GAME`` with seeds ``P1`` … ``PN`` (``--prefix`` defaults to
``stats-``), each for at most ``--budget`` seconds of CPU time (the process's own time, so
that a loaded machine does not shrink the search) and, with ``--nodes``, at most that many
positions.  ``--jobs`` solves that many deals at once in worker processes (default 1).
Progress goes to stderr, one line per deal.  With ``--jsonl`` each result is appended to
FILE as one JSON line as soon as it is known, and a later run with the same FILE skips
the seeds already in it (resume).  A line holds ``game``, ``seed``, ``verdict``
(``won``, ``lost``, ``unknown``), ``seconds`` (CPU), ``nodes``, ``best_score`` and, for a
won deal, ``moves`` (the winning line's move texts, in order, replayed by the engine).

At the end it prints, for the N seeds, how many were won, proven lost and unknown, each
with its 95 % Wilson score interval.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

from server.rules import GAME_NAMES, new_game
from server.solver.search import LOST, SOLVED, UNKNOWN, Budget, solve

DEFAULT_PREFIX = "stats-"
VERDICTS = (SOLVED, LOST, UNKNOWN)
#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``(0, 1)`` for no trials)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials)) / (1 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)


def solve_seed(job: tuple[str, str, float, int | None]) -> dict[str, Any]:
    """Solve one deal; the JSON line of its result."""
    name, seed, seconds, nodes = job
    game = new_game(name, seed)
    start = time.process_time()
    end = start + seconds
    result = solve(game, Budget(nodes=nodes, out_of_time=lambda: time.process_time() > end))
    record: dict[str, Any] = {
        "game": name,
        "seed": seed,
        "verdict": result.verdict,
        "seconds": round(time.process_time() - start, 3),
        "nodes": result.nodes,
        "best_score": result.best_score,
    }
    if result.moves is not None:
        record["moves"] = list(result.moves)
    return record


def read_jsonl(path: str) -> list[dict[str, Any]]:
    """The complete records of a results file; a line cut short by a crash is dropped
    (and the file rewritten without it, so that appending goes on cleanly)."""
    if not os.path.exists(path):
        return []
    records, broken = [], False
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                broken = True
                continue
            if isinstance(record, dict) and "seed" in record and "verdict" in record:
                records.append(record)
    if broken:
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(r) + "\n" for r in records)
    return records


def _results(jobs: list[tuple[str, str, float, int | None]], workers: int) -> Iterator[dict]:
    if workers <= 1:
        yield from map(solve_seed, jobs)
        return
    with multiprocessing.Pool(workers) as pool:
        yield from pool.imap_unordered(solve_seed, jobs)


def summary(records: Iterable[dict[str, Any]]) -> str:
    """The won / lost / unknown table of some results."""
    records = list(records)
    total = len(records)
    lines = [f"{'verdict':<8} {'deals':>6} {'share':>7}   95 % interval"]
    for verdict in VERDICTS:
        count = sum(1 for r in records if r["verdict"] == verdict)
        low, high = wilson(count, total)
        share = 100 * count / total if total else 0.0
        lines.append(
            f"{verdict:<8} {count:>6} {share:>6.1f} %   [{100 * low:.1f} %, {100 * high:.1f} %]"
        )
    seconds = sorted(r["seconds"] for r in records)
    if seconds:
        lines.append(
            f"seconds per deal (CPU): median {seconds[len(seconds) // 2]:.2f}, "
            f"max {seconds[-1]:.2f}"
        )
    return "\n".join(lines)


def stats(args: argparse.Namespace) -> int:
    seeds = [f"{args.prefix}{i}" for i in range(1, args.deals + 1)]
    done: dict[str, dict[str, Any]] = {}
    if args.jsonl:
        for record in read_jsonl(args.jsonl):
            if record.get("game") == args.game:
                done[record["seed"]] = record
    todo = [(args.game, seed, args.budget, args.nodes) for seed in seeds if seed not in done]
    print(
        f"{args.game}: {len(seeds)} deals, {len(seeds) - len(todo)} already in "
        f"{args.jsonl}, {len(todo)} to solve",
        file=sys.stderr,
    )
    out = open(args.jsonl, "a", encoding="utf-8") if args.jsonl else None  # noqa: SIM115
    try:
        for count, record in enumerate(_results(todo, args.jobs), 1):
            done[record["seed"]] = record
            if out is not None:
                out.write(json.dumps(record) + "\n")
                out.flush()
            print(
                f"[{count}/{len(todo)}] {record['seed']} {record['verdict']} "
                f"score {record['best_score']} {record['seconds']:.2f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        if out is not None:
            out.close()
    print(
        f"{args.game}: {len(seeds)} deals {args.prefix}1..{args.prefix}{args.deals}, "
        f"budget {args.budget:g} s CPU per deal"
    )
    print(summary(done[seed] for seed in seeds))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.solver")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("stats", help="win rates over the deals P1 … PN")
    run.add_argument("game", choices=GAME_NAMES)
    run.add_argument("--deals", type=int, required=True, help="how many deals (N)")
    run.add_argument("--budget", type=float, required=True, help="CPU seconds per deal")
    run.add_argument("--jobs", type=int, default=1, help="deals solved at once (processes)")
    run.add_argument("--prefix", default=DEFAULT_PREFIX, help="seed prefix P (default stats-)")
    run.add_argument("--jsonl", help="results file: appended to, and resumed from")
    run.add_argument("--nodes", type=int, help="also stop a deal after this many positions")
    args = parser.parse_args(argv)
    if args.deals < 0 or args.budget <= 0 or args.jobs < 1:
        parser.error("--deals must be ≥ 0, --budget > 0 and --jobs ≥ 1")
    return stats(args)
