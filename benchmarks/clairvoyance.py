"""How well the ``clairvoyance`` audit signal separates cheats from fair players (issue 10).

Run from the repository root::

    nice -n 19 .venv/bin/python -m benchmarks.clairvoyance --games 100 --jobs 2

Pure: no server, no Redis.  For each of ``--games`` seeds it plays the same deal twice,
with the engine, and builds each game's replay export directly (hash chain, state hashes,
``server_time`` paced like a person: log-normal think times, median 2.5 s, at least 0.6 s):

* a **clairvoyant** bot knows the stock order: at each position it plays the move after
  which the perfect-information solver scores best (``clairvoyant_values`` with
  :data:`BOT_SOLVE_NODES`, twice the audit's budget), except that with probability
  ``--noise`` (0.2) it plays its fair choice instead, as a cheat who does not follow the
  stock slavishly would;
* a **fair** bot sees only its view: it plays the move the fair valuation scores best
  (``fair_values``: stock orders sampled from its view, with its own random samples, not
  the audit's).

Both prefer a move to a foundation among equals, never repeat a table (a person does not
shuffle a card back and forth) and resign after :data:`MAX_MOVES` moves (the audit looks
at 24 positions at most).  Each export is audited (integrity must pass and no timing signal
fire), then the clairvoyance examination gives its score.  It prints a line per game, the
ROC AUC of the scores (clairvoyant positive), and at the signal's threshold the
false-positive rate (fair games flagged) and the true-positive rate (clairvoyant games
flagged), with the decision points found and the CPU time of each examination.  Ctrl-C
prints the figures of the games done so far.

``--game`` picks the game: ``colorado`` (default), ``balcony``, ``matrimony`` or
``empress_of_italy``, the four with a face-down stock; Gloucestershire has none, so there is
nothing to be clairvoyant about.  Colorado is where the stock order matters most to the
choices (where to put each stock card, on any of 20 piles); in Balcony and Matrimony the
fair valuation nearly always finds a move that is also best with the real stock.  Results
go in ``BENCHMARKS.md`` ("Clairvoyance signal (issue 10)").
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from protocol import chain
from server.audit import EXPORT_SIGNALS, audit
from server.audit.clairvoyance import (
    CLAIRVOYANT,
    FAIR,
    MIN_POINTS,
    SCORE_THRESHOLD,
    clairvoyant_values,
    examine,
    fair_values,
    is_examined,
)
from server.rules import GAME_NAMES, PLAYING, RESIGN, Game, new_game

#: The clairvoyant bot's search after each legal move (twice the audit's).
BOT_SOLVE_NODES = 2_000
#: A bot resigns after this many moves.
MAX_MOVES = 24
#: Think times: log-normal with this median (ms) and sigma, at least MIN_THINK_MS.
THINK_MEDIAN_MS = 2_500
THINK_SIGMA = 0.6
MIN_THINK_MS = 600
START_MS = 1_773_482_400_000  # 2026-03-14 10:00 UTC
DAY = "2026-03-14"


def fair_move(game: Game, legal: Sequence[str], rng: random.Random) -> str:
    """The fair bot's choice: the move the fair mode values best, with its own samples."""
    values = fair_values(game, legal, rng)
    return legal[
        max(range(len(legal)), key=lambda index: (values[index], *_progress(legal, index)))
    ]


def clairvoyant_move(game: Game, legal: Sequence[str]) -> str:
    """The clairvoyant bot's choice: the move after which the solver, knowing the stock,
    scores best."""
    values = clairvoyant_values(game, legal, BOT_SOLVE_NODES)
    return legal[
        max(range(len(legal)), key=lambda index: (values[index], *_progress(legal, index)))
    ]


def _progress(legal: Sequence[str], index: int) -> tuple[bool, int]:
    """Among equally valued moves a person prefers one to a foundation, then the first."""
    return legal[index].endswith("]") and ">foundation" in legal[index], -index


def play(
    name: str,
    seed: str,
    clairvoyant: bool,
    noise: float,
    rng: random.Random,
    max_moves: int = MAX_MOVES,
) -> list[str]:
    """The moves of one bot's game of ``name`` dealt from ``seed``, resigned after
    ``max_moves``."""
    game = new_game(name, seed)
    seen = {game.state_hash()}
    moves: list[str] = []
    while game.status == PLAYING and len(moves) < max_moves:
        legal: list[str] = []
        for option in game.legal_moves():
            after = game.copy()
            after.play(option)
            if after.state_hash() not in seen:  # a person does not go round in circles
                legal.append(option)
        move: str
        if not legal:
            move = RESIGN
        elif len(legal) == 1:
            move = legal[0]
        elif clairvoyant and rng.random() >= noise:
            move = clairvoyant_move(game, legal)
        else:
            move = fair_move(game, legal, rng)
        game.play(move)
        moves.append(move)
        seen.add(game.state_hash())
    if game.status == PLAYING:
        game.play(RESIGN)
        moves.append(RESIGN)
    return moves


def export_of(name: str, seed: str, game_id: str, moves: list[str], rng: random.Random) -> dict:
    """The replay export of ``moves``, paced like a person."""
    game = new_game(name, seed)
    deal_hash = game.state_hash()
    link = chain.genesis(game_id, name, deal_hash)
    now = START_MS
    entries = []
    for version, move in enumerate(moves, 1):
        game.play(move)
        now += max(MIN_THINK_MS, int(THINK_MEDIAN_MS * math.exp(rng.gauss(0, THINK_SIGMA))))
        state_hash = game.state_hash()
        link = chain.next_link(link, version, move, now, state_hash)
        entries.append(
            {
                "version": version,
                "move": move,
                "server_time": now,
                "client_time": None,
                "state_hash": state_hash,
                "hash": link,
            }
        )
    return {
        "format": "solitaire-replay/1",
        "game_id": game_id,
        "game": name,
        "daily": DAY,
        "owner": "p_bench",
        "seed": seed,
        "deal_hash": deal_hash,
        "created_at": START_MS,
        "finished_at": now if game.status != PLAYING and entries else None,
        "status": game.status,
        "score": game.score,
        "moves": entries,
        "chain_head": link,
    }


def run_one(task: tuple[str, int, bool, float]) -> dict[str, Any]:
    """Play one game, audit it, examine it; the figures of it."""
    name, index, clairvoyant, noise = task
    kind = CLAIRVOYANT if clairvoyant else FAIR
    seed = f"clairvoyance-{index}"
    rng = random.Random(f"{kind}-{index}")
    moves = play(name, seed, clairvoyant, noise, rng)
    export = export_of(name, seed, f"g_{kind}_{index}", moves, rng)
    verdict = audit(export, signals=EXPORT_SIGNALS)
    started = time.process_time()
    found = examine(name, seed, [(e["version"], e["move"]) for e in export["moves"]])
    seconds = time.process_time() - started
    points = len(found.points)
    return {
        "kind": kind,
        "index": index,
        "status": export["status"],
        "moves": len(moves),
        "integrity": verdict.integrity,
        "timing_signals": [signal.name for signal in verdict.signals],
        "points": points,
        "clairvoyant": found.count(CLAIRVOYANT),
        "fair": found.count(FAIR),
        "score": found.score,
        "fires": found.fires,
        "seconds": seconds,
        "nodes": found.nodes,
    }


def roc_auc(positives: list[float], negatives: list[float]) -> float:
    """P(a positive scores above a negative), ties counting one half (Mann-Whitney)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def rate(rows: list[dict[str, Any]], key: str) -> float:
    return sum(bool(row[key]) for row in rows) / len(rows)


def summary(kind: str, rows: list[dict[str, Any]]) -> str:
    won = sum(row["status"] == "won" for row in rows)
    points = [row["points"] for row in rows]
    agree = sum(row["clairvoyant"] for row in rows)
    total = sum(points) or 1
    seconds = [row["seconds"] for row in rows]
    return (
        f"{kind:>11}: {len(rows)} games, {won} won; decision points per game median "
        f"{statistics.median(points):g} (max {max(points)}), clairvoyant agreements "
        f"{agree}/{sum(points)} ({agree / total:.0%}); flagged {rate(rows, 'fires'):.1%}; "
        f"audit CPU per game median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.clairvoyance", description=__doc__)
    parser.add_argument("--games", type=int, default=100, help="games per bot (default 100)")
    parser.add_argument("--game", default="colorado", choices=GAME_NAMES)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument(
        "--noise",
        type=float,
        default=0.2,
        help="how often the clairvoyant bot plays the fair move instead (default 0.2)",
    )
    args = parser.parse_args(argv)
    if not is_examined(args.game):
        parser.error(
            f"the audit does not examine {args.game}: no face-down stock, or in"
            " server.audit.clairvoyance.NOT_EXAMINED"
        )
    tasks = [
        (args.game, index, clairvoyant, args.noise)
        for index in range(1, args.games + 1)
        for clairvoyant in (True, False)
    ]
    print(
        f"clairvoyance benchmark: {args.game}, {args.games} games per bot, noise "
        f"{args.noise}, {args.jobs} jobs; Python {platform.python_version()}",
        flush=True,
    )
    started = time.monotonic()
    rows = []
    try:
        with multiprocessing.Pool(args.jobs) as pool:
            for done, row in enumerate(pool.imap_unordered(run_one, tasks), 1):
                rows.append(row)
                print(
                    f"  [{done}/{len(tasks)}] {row['kind']} {row['index']}: {row['moves']} "
                    f"moves, {row['points']} decision points, {row['clairvoyant']} "
                    f"clairvoyant, {row['fair']} fair, score {row['score']:.2f}, audit "
                    f"{row['seconds']:.1f} s, {time.monotonic() - started:.0f} s",
                    flush=True,
                )
    except KeyboardInterrupt:  # Ctrl-C: the figures of the games done so far
        print(f"interrupted after {len(rows)} of {len(tasks)} games", flush=True)
    if not any(row["kind"] == CLAIRVOYANT for row in rows) or not any(
        row["kind"] == FAIR for row in rows
    ):
        return 1
    bad = [row for row in rows if row["integrity"] != "pass" or row["timing_signals"]]
    for row in bad:
        print(f"unexpected: {row}", file=sys.stderr)
    cheats = [row for row in rows if row["kind"] == CLAIRVOYANT]
    fair = [row for row in rows if row["kind"] == FAIR]
    auc = roc_auc([row["score"] for row in cheats], [row["score"] for row in fair])
    print(summary(CLAIRVOYANT, cheats))
    print(summary(FAIR, fair))
    print(
        f"ROC AUC {auc:.3f}; at the threshold (score >= {SCORE_THRESHOLD:g}, >= {MIN_POINTS} "
        f"decision points): false positives {rate(fair, 'fires'):.1%} "
        f"({sum(row['fires'] for row in fair)}/{len(fair)}), true positives "
        f"{rate(cheats, 'fires'):.1%} ({sum(row['fires'] for row in cheats)}/{len(cheats)}); "
        f"integrity passed and no timing signal in {len(rows) - len(bad)}/{len(rows)} games; "
        f"{time.monotonic() - started:.0f} s wall"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
