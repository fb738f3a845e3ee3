"""How well the clairvoyance signals tell cheats from honest players (issue 26).

Run from the repository root (the full evaluation; ``--games 20`` for a quicker one)::

    nice -n 10 .venv/bin/python -m benchmarks.stock_luck --games 50 --jobs 2

Two signals are measured on the same lines: **stock luck**
(:func:`server.audit.stock_luck.stock_luck`, its z score) and the audit's **clairvoyance**
examination (:func:`server.audit.clairvoyance.examine`, its score, what
``python -m server.audit --clairvoyance`` and the leaderboard audit report);
``--signal`` picks one.

Pure: no server, no Redis.  For each game with a face-down stock (Balcony, Colorado,
Empress of Italy, Matrimony; Gloucestershire has no hidden card) and each of ``--games``
deals (seeds ``luck-<game>-<i>``, fixed), four players play the deal:

* **cheat, solver**: knows the whole deal.  Plays 0-3 random legal moves (so its line is
  one of many), then replays the line our solver finds with the real stock order (the
  winning line, or the best-scoring one when the budget runs out);
* **cheat, DFS**: knows the whole deal; its line comes from a different method, a
  randomised depth-first search over the rules engine with the real stock (random move
  order, foundation moves first, states never revisited);
* **honest, hints**: follows the fair solver's hint (``advise`` from its view, its own
  random samples) at every move;
* **honest, heuristic**: a simple player: a move to a foundation when there is one, else a
  random move that does not repeat a table, dealing only when stuck.

Every line is examined by each signal; the cheats are the positives.  Per game and
signal it prints the ROC AUC of the scores, the true-positive rate at the signal's
threshold (stock luck: z >= 3 over at least 8 reveals; clairvoyance: score >= 3 over at
least 5 decision points) with the false-positive rate there, and the true-positive rate at
the best threshold with <= 2 % false positives.  Results go in ``BENCHMARKS.md``
("Clairvoyance on the issue's protocol").
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from server.audit.clairvoyance import MIN_POINTS as CLAIRVOYANCE_MIN_POINTS
from server.audit.clairvoyance import SCORE_THRESHOLD, examine
from server.audit.stock_luck import MIN_REVEALS, Z_THRESHOLD, stock_luck
from server.rules import PLAYING, RESIGN, Game, new_game
from server.solver import Budget, solve
from server.solver.fair import advise

GAMES = ("balcony", "colorado", "empress_of_italy", "matrimony")
KINDS = ("cheat-solver", "cheat-dfs", "honest-hints", "honest-heuristic")
#: The cheat's solver budget (positions) for its line.
SOLVE_NODES = 50_000
#: The DFS cheat's budget (positions).
DFS_NODES = 5_000
#: The hint follower's advice: samples and positions per sample (small, for speed).
HINT_SAMPLES = 2
HINT_NODES = 150
#: Honest players stop (resign) after this many moves.
MAX_MOVES = 250


def _unseen(game: Game, seen: set[str]) -> list[str]:
    moves: list[str] = []
    for move in game.legal_moves():
        if move == RESIGN:
            continue
        after = game.copy()
        after.play(move)
        if after.state_hash() not in seen:
            moves.append(move)
    return moves


def cheat_solver(name: str, seed: str, rng: random.Random) -> list[str]:
    game = new_game(name, seed)
    moves: list[str] = []
    for _ in range(rng.randint(0, 3)):
        legal = [m for m in game.legal_moves() if m != RESIGN]
        if not legal or game.status != PLAYING:
            break
        move = rng.choice(legal)
        game.play(move)
        moves.append(move)
    result = solve(game, Budget(nodes=SOLVE_NODES))
    return moves + list(result.moves if result.moves is not None else result.best_line)


def cheat_dfs(name: str, seed: str, rng: random.Random) -> list[str]:
    """A randomised depth-first search over the engine, with the real stock."""
    root = new_game(name, seed)
    seen = {root.state_hash()}
    best: tuple[int, list[str]] = (root.score, [])
    stack: list[tuple[Game, list[str]]] = [(root, [])]
    nodes = 0
    while stack and nodes < DFS_NODES:
        game, line = stack.pop()
        nodes += 1
        if game.score > best[0]:
            best = (game.score, line)
        if game.status != PLAYING:
            if game.status == "won":
                return line
            continue
        children = []
        for move in game.legal_moves():
            if move == RESIGN:
                continue
            after = game.copy()
            after.play(move)
            key = after.state_hash()
            if key in seen:
                continue
            seen.add(key)
            children.append((">foundation" in move, rng.random(), after, [*line, move]))
        children.sort(key=lambda child: (child[0], child[1]))  # foundation moves popped first
        stack.extend((after, moves) for _, _, after, moves in children)
    return best[1]


def honest(name: str, seed: str, rng: random.Random, hints: bool) -> list[str]:
    game = new_game(name, seed)
    seen = {game.state_hash()}
    moves: list[str] = []
    while game.status == PLAYING and len(moves) < MAX_MOVES:
        legal = _unseen(game, seen)
        if not legal:
            break
        if hints:
            advice = advise(name, game.view(), rng, samples=HINT_SAMPLES, sample_nodes=HINT_NODES)
            move = advice.move if advice.move in legal else legal[0]
        else:
            to_foundation = [m for m in legal if ">foundation" in m]
            others = [m for m in legal if m not in ("deal", "redeal")]
            if to_foundation:
                move = rng.choice(to_foundation)
            elif others and rng.random() < 0.7:
                move = rng.choice(others)
            else:
                move = next((m for m in legal if m in ("deal", "redeal")), rng.choice(legal))
        game.play(move)
        moves.append(move)
        seen.add(game.state_hash())
    return moves


SIGNALS = ("stock-luck", "clairvoyance")
#: Each signal's threshold (its score must reach it, given its minimum of evidence).
THRESHOLD = {"stock-luck": Z_THRESHOLD, "clairvoyance": SCORE_THRESHOLD}


@dataclass(frozen=True)
class Verdict:
    """One signal on one line: its score (0 below the signal's minimum of evidence), the
    evidence (reveals or decision points) and the CPU seconds it took."""

    score: float
    evidence: int
    seconds: float


def run(job: tuple[str, str, int, tuple[str, ...]]) -> tuple[str, str, int, dict[str, Verdict]]:
    """(game, kind, index, each signal's verdict)."""
    name, kind, index, signals = job
    seed = f"luck-{name}-{index}"
    rng = random.Random(f"{kind}-{seed}")
    if kind == "cheat-solver":
        moves = cheat_solver(name, seed, rng)
    elif kind == "cheat-dfs":
        moves = cheat_dfs(name, seed, rng)
    else:
        moves = honest(name, seed, rng, hints=kind == "honest-hints")
    versioned = list(enumerate(moves, 1))
    verdicts: dict[str, Verdict] = {}
    for signal in signals:
        started = time.process_time()
        if signal == "stock-luck":
            luck = stock_luck(name, seed, versioned)
            evidence = len(luck.reveals)
            score = luck.z if evidence >= MIN_REVEALS else 0.0
        else:
            found = examine(name, seed, versioned)
            evidence = len(found.points)
            score = found.score if evidence >= CLAIRVOYANCE_MIN_POINTS else 0.0
        verdicts[signal] = Verdict(score, evidence, time.process_time() - started)
    return name, kind, index, verdicts


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    pairs = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return pairs / (len(positives) * len(negatives))


def tpr_at_fpr(positives: Sequence[float], negatives: Sequence[float], fpr: float) -> float:
    """The best true-positive rate over thresholds flagging at most ``fpr`` of negatives."""
    allowed = int(fpr * len(negatives))
    cut = sorted(negatives, reverse=True)[allowed] if allowed < len(negatives) else -1e9
    return sum(p > cut for p in positives) / len(positives)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=50, help="deals per game and player")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--game", action="append", choices=GAMES, help="default: all four")
    parser.add_argument("--signal", action="append", choices=SIGNALS, help="default: both")
    args = parser.parse_args(argv)
    names = args.game or list(GAMES)
    signals = tuple(args.signal or SIGNALS)
    jobs = [(n, k, i, signals) for n in names for i in range(args.games) for k in KINDS]
    results: list[tuple[str, str, int, dict[str, Verdict]]] = []
    with multiprocessing.Pool(args.jobs) as pool:
        for result in pool.imap_unordered(run, jobs):
            results.append(result)
    print(f"command: python -m benchmarks.stock_luck {' '.join(sys.argv[1:])}".rstrip())
    print(
        "| game | signal | cheats / honest | AUC | TPR at threshold (FPR) | TPR at <=2 % FPR "
        "| score cheats median | score honest max | evidence median | CPU s median |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for signal in signals:
            rows = [(kind, verdicts[signal]) for game, kind, _, verdicts in results if game == name]
            pos = [v.score for kind, v in rows if kind.startswith("cheat")]
            neg = [v.score for kind, v in rows if kind.startswith("honest")]
            threshold = THRESHOLD[signal]
            flagged = {
                kind: sum(v.score >= threshold for k, v in rows if k == kind) for kind in KINDS
            }
            print(
                f"| {name} | {signal} | {len(pos)} / {len(neg)} | {roc_auc(pos, neg):.3f} "
                f"| {sum(z >= threshold for z in pos) / len(pos):.0%} "
                f"({sum(z >= threshold for z in neg) / len(neg):.0%}) "
                f"| {tpr_at_fpr(pos, neg, 0.02):.0%} "
                f"| {sorted(pos)[len(pos) // 2]:.1f} | {max(neg):.1f} "
                f"| {sorted(v.evidence for _, v in rows)[len(rows) // 2]} "
                f"| {sorted(v.seconds for _, v in rows)[len(rows) // 2]:.2f} |"
            )
            print(f"  {name} {signal} flagged per player: {flagged}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
