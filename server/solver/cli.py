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

::

    python -m server.solver table --deals N [--deals-of GAME=M ...] --budget SECONDS
                                  --results DIR [--out FILE] [--jobs J] [--games G ...]

runs ``stats`` for each game (``DIR/GAME.jsonl``, resumed; ``--deals-of`` gives a game
another number of deals) and writes ``docs/WINRATES.md``: the table of every game and the
command that regenerates it.
"""

from __future__ import annotations

import argparse
import contextlib
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
    span = f"{args.prefix}1..{args.prefix}{args.deals}"
    deals = f"{len(seeds)} deals {span}"
    if args.unknown_in:
        earlier = [r for r in read_jsonl(args.unknown_in) if r.get("game") == args.game]
        unknown = {r["seed"] for r in earlier if r["verdict"] == UNKNOWN}
        seeds = [seed for seed in seeds if seed in unknown]
        deals = f"the {len(seeds)} deals of {span} unknown in {args.unknown_in}"
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
    print(f"{args.game}: {deals}, budget {args.budget:g} s CPU per deal")
    print(summary(done[seed] for seed in seeds))
    return 0


#: What each game's seed document (``/work/shared/seeds``, RULES.md) claims, quoted.
SEED_CLAIMS = {
    "balcony": '90 % ("90 % des parties se terminent par une victoire")',
    "colorado": '50 % ("se gagne environ 50 % du temps")',
    "empress_of_italy": 'no figure ("un jeu patient et réfléchi")',
    "gloucestershire": 'no figure ("le jeu est difficile")',
    "matrimony": 'no figure ("l\'un des … plus difficiles"); near 1 % elsewhere',
}
#: A plain note per game, printed under the table.
TABLE_NOTES = {
    "gloucestershire": (
        "Gloucestershire is almost never winnable under the rules as RULES.md states them: "
        "only the bouquet's last card is exposed and every move moves one card, so the "
        "foundations rarely get past their aces; nearly every deal is proven lost within "
        "milliseconds by a complete search. On these deals the best line reaches {best}."
    ),
    "balcony": (
        "Balcony and Empress of Italy: a foundation's top card may always come back to the "
        "tableau, so a complete search is out of reach and no loss is ever proven; their "
        "unknown deals are deals not won in budget. Balcony: the seed's 90 % {claim}."
    ),
    "matrimony": (
        "Matrimony: a loss is only provable by searching every interleaving of plays with "
        "the deals and redeals; its unknown deals are neither won nor proven lost."
    ),
    "colorado": (
        "Colorado: no loss is proven in budget (the stock's 84 cards each go on a "
        "foundation or any of 20 piles); its unknown deals are neither won nor proven "
        "lost. The seed's 50 % {claim}."
    ),
}
#: The win rates the seeds claim that a note sets against the table's interval.
CLAIMED_RATES = {"colorado": 0.5, "balcony": 0.9}


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _time_and_nodes(records: list[dict[str, Any]], verdict: str) -> str:
    seconds = _median([r["seconds"] for r in records if r["verdict"] == verdict])
    nodes = _median([r["nodes"] for r in records if r["verdict"] == verdict])
    if seconds is None or nodes is None:
        return "–"
    return f"{seconds:.3f} s, {nodes:,.0f}"


def _win_interval(records: list[dict[str, Any]]) -> tuple[float, float]:
    """The win rate's 95 % interval: the Wilson lower bound of the won share to the Wilson
    upper bound of won + unknown (an unknown deal may be either)."""
    won = sum(1 for r in records if r["verdict"] == SOLVED)
    unknown = sum(1 for r in records if r["verdict"] == UNKNOWN)
    return wilson(won, len(records))[0], wilson(won + unknown, len(records))[1]


def _against_interval(claim: float, records: list[dict[str, Any]]) -> str:
    low, high = _win_interval(records)
    if claim < low:
        return "lies below the interval: more deals are winnable than it says"
    if claim > high:
        return "lies above the interval: fewer deals are winnable than it says"
    return "lies inside the interval but is not confirmed"


def table_row(name: str, records: list[dict[str, Any]]) -> str:
    """One game's row of ``docs/WINRATES.md``."""
    total = len(records)
    counts = {v: sum(1 for r in records if r["verdict"] == v) for v in VERDICTS}

    def share(count: int) -> str:
        return f"{count} ({100 * count / total:.1f} %)" if total else "0"

    won = counts[SOLVED]
    low, high = _win_interval(records)
    rate = f"{100 * won / total:.1f} % [{100 * low:.1f} %, {100 * high:.1f} %]" if total else "–"
    return (
        f"| {name} | {total} | {share(won)} | {share(counts[LOST])} | {share(counts[UNKNOWN])} "
        f"| {rate} | {_time_and_nodes(records, SOLVED)} | {_time_and_nodes(records, LOST)} "
        f"| {SEED_CLAIMS[name]} |"
    )


def render_table(results: dict[str, list[dict[str, Any]]], command: str, budget: float) -> str:
    """``docs/WINRATES.md``: the table of every game in ``results`` and how it was made."""
    lines = [
        "# Win rates of the five games",
        "",
        "Generated by (do not edit by hand; the same command regenerates it, solving only the",
        "deals missing from its results files):",
        "",
        "```sh",
        command,
        "```",
        "",
        f"Deals are seeds `{DEFAULT_PREFIX}1` … `{DEFAULT_PREFIX}N` of each game, each solved by "
        f"`server.solver.solve` with perfect information for at most {budget:g} s of CPU "
        f"(so a full regeneration costs at most deals × {budget:g} s of CPU a game, "
        "and a rerun only solves the deals missing from the results files).",
        "*Won*: a winning line was found and replayed by the rules engine; *lost*: a complete "
        "search found none (no budget cut); *unknown*: the budget ran out first.",
        "*Win rate*: the won share, then a 95 % interval from the Wilson lower bound of the "
        "won share to the Wilson upper bound of won + unknown (an unknown deal may be "
        "either). Medians are CPU seconds and positions searched, over the won (or lost) "
        "deals.",
        "",
        "| game | deals | won | lost | unknown | win rate [95 %] | median won (s, positions) "
        "| median lost (s, positions) | the seed's claim |",
        "|---|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    lines += [table_row(name, records) for name, records in results.items()]
    lines.append("")
    for name, records in results.items():
        if name in TABLE_NOTES:
            scores = [r["best_score"] for r in records]
            best = f"{max(scores)} cards at most (median {_median(scores):g})" if scores else "–"
            rate = CLAIMED_RATES.get(name)
            claim = "" if rate is None else _against_interval(rate, records)
            lines.append(f"* {TABLE_NOTES[name].format(best=best, claim=claim)}")
    return "\n".join(lines) + "\n"


def table(args: argparse.Namespace) -> int:
    os.makedirs(args.results, exist_ok=True)
    results = {}
    deals_of = dict(args.deals_of)
    for name in args.games:
        deals = deals_of.get(name, args.deals)
        path = os.path.join(args.results, f"{name}.jsonl")
        run = argparse.Namespace(
            game=name,
            deals=deals,
            budget=args.budget,
            jobs=args.jobs,
            prefix=DEFAULT_PREFIX,
            jsonl=path,
            nodes=None,
            unknown_in=None,
        )
        with contextlib.redirect_stdout(sys.stderr):  # the summary is progress here
            stats(run)
        seeds = {f"{DEFAULT_PREFIX}{i}" for i in range(1, deals + 1)}
        records = {r["seed"]: r for r in read_jsonl(path) if r.get("game") == name}
        results[name] = [record for seed, record in records.items() if seed in seeds]
    command = f"python -m server.solver table --deals {args.deals} "
    command += "".join(f"--deals-of {name}={deals} " for name, deals in args.deals_of)
    command += f"--budget {args.budget:g} --results {args.results} --out {args.out or '-'}"
    if list(args.games) != list(GAME_NAMES):
        command += " --games " + " ".join(args.games)
    text = render_table(results, command, args.budget)
    if args.out and args.out != "-":
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        print(text, end="")
    return 0


def _game_deals(text: str) -> tuple[str, int]:
    """``GAME=N`` of ``--deals-of``."""
    name, _, count = text.partition("=")
    if name not in GAME_NAMES or not count.isdigit():
        raise argparse.ArgumentTypeError(f"expected GAME=N with GAME one of {GAME_NAMES}")
    return name, int(count)


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
    run.add_argument(
        "--unknown-in",
        metavar="FILE",
        help="only the deals an earlier results file left unknown (a change on the hard deals)",
    )
    made = commands.add_parser("table", help="docs/WINRATES.md: the win-rate table")
    made.add_argument("--deals", type=int, required=True, help="deals per game (N)")
    made.add_argument(
        "--deals-of",
        type=_game_deals,
        action="append",
        default=[],
        metavar="GAME=N",
        help="another number of deals for GAME (repeatable)",
    )
    made.add_argument("--budget", type=float, required=True, help="CPU seconds per deal")
    made.add_argument("--jobs", type=int, default=1, help="deals solved at once (processes)")
    made.add_argument("--results", required=True, help="folder of GAME.jsonl (resumed)")
    made.add_argument("--out", help="the Markdown file to write (default: stdout)")
    made.add_argument("--games", nargs="+", choices=GAME_NAMES, default=list(GAME_NAMES))
    args = parser.parse_args(argv)
    if args.deals < 0 or args.budget <= 0 or args.jobs < 1:
        parser.error("--deals must be ≥ 0, --budget > 0 and --jobs ≥ 1")
    return stats(args) if args.command == "stats" else table(args)
