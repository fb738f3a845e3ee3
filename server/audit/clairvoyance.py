"""The ``clairvoyance`` fair-play signal: did the player play as if they knew the stock order?

Only a game whose seed is known can be checked (the real stock order comes from the
seed), and only a game with a face-down stock has anything to be clairvoyant about
(Gloucestershire has none: the signal never fires there).  Matrimony is not examined
either (:data:`NOT_EXAMINED`): measured, the signal accused honest players there.

The replay is walked move by move.  At each **position with a choice** (at least two legal
moves; the move played is not ``resign``), up to :data:`MAX_POSITIONS` of them, every legal
move is valued twice, by the best score the solver reaches after it:

* **clairvoyant** (perfect information): the solver knows the real stock order
  (:data:`SOLVE_NODES` positions searched after each move);
* **fair**: the mean over :data:`FAIR_SAMPLES` stock orders drawn from the player's view
  alone (:data:`FAIR_NODES` positions after each move in each), the stock orders drawn by a
  :class:`random.Random` seeded from the deal's seed and the version, so every audit of a
  game draws the same ones (:func:`advice_rng`).

The fair mode recommends its best-valued move (the first on a tie).  When that move is also
among the clairvoyant mode's best, knowing the stock does not change the best move and the
position tells nothing.  Otherwise it is a **decision point**, and the player's move agrees
with the ``clairvoyant`` mode (it is among the best with the real stock), the ``fair`` mode
(it is the fair recommendation) or ``neither``.

**Score.** Comparing the modes move by move (not the first moves of two searches' lines) is
what lets a small budget see the stock: a search's first move is mostly its move ordering.
At a decision point the fair recommendation is not among the clairvoyant best, so a fair
player picks a clairvoyant-best move only by luck or by reasoning the fair mode misses;
:data:`FAIR_BASELINE` bounds how often, generously (a fair bot does it about half as often:
``BENCHMARKS.md``).  With ``k`` clairvoyant agreements at ``n`` decision points the score is
``-log10 P(X >= k)`` for ``X ~ Binomial(n, FAIR_BASELINE)``: how surprising that many
clairvoyant choices are for a fair player.  The signal fires at :data:`SCORE_THRESHOLD` and
:data:`MIN_POINTS` decision points or more.

**Cost** is bounded in positions searched, not in time, so the answer does not depend on
the machine: at most ``MAX_POSITIONS`` positions, each ``legal moves * (SOLVE_NODES +
FAIR_SAMPLES * FAIR_NODES)`` searched positions at most, and :data:`MAX_NODES` over the
whole game.  The signal is not in :data:`~server.audit.core.EXPORT_SIGNALS`: the leaderboard
audit and ``python -m server.audit --clairvoyance`` run it (:data:`WITH_CLAIRVOYANCE`), see
``protocol/AUDIT.md``.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.audit.core import EXPORT_SIGNALS, Signal, SignalCheck
from server.rules import GAMES, PLAYING, RESIGN, Game, IllegalMove, Move, new_game
from server.solver import Budget, game_from_view, solve
from server.solver.fair import hidden_cards

#: Positions with a choice examined per game, at most.
MAX_POSITIONS = 24
#: Positions the perfect-information solver searches after each legal move.
SOLVE_NODES = 1_000
#: The fair mode's sampled stock orders per position, and positions searched after each
#: legal move in each sample.
FAIR_SAMPLES = 4
FAIR_NODES = 250
#: Positions searched over the whole game, at most (counting every search at its full
#: budget): some 30 s of one core at the solver's speed.
MAX_NODES = 2_000_000
#: The probability that a fair player picks a clairvoyant-best move at a decision point,
#: bounded from above (the fair bot of ``benchmarks/clairvoyance.py`` measures lower).
FAIR_BASELINE = 0.3
#: The score (``-log10`` of the binomial tail) at which the signal fires...
SCORE_THRESHOLD = 3.0
#: ...given at least this many decision points.
MIN_POINTS = 5
#: Versions of decision points listed in the evidence, at most.
MAX_EXAMPLES = 10

CLAIRVOYANT, FAIR, NEITHER = "clairvoyant", "fair", "neither"


@dataclass(frozen=True)
class DecisionPoint:
    """A position where knowing the stock changes the best move, and what was played.

    ``version``: the version the player's move produced; ``played``, ``clairvoyant`` (the
    first of the moves best with the real stock), ``fair`` (the fair recommendation, not
    among those) move texts; ``agrees``: ``"clairvoyant"``, ``"fair"`` or ``"neither"``.
    """

    version: int
    played: str
    clairvoyant: str
    fair: str
    agrees: str


@dataclass(frozen=True)
class Examination:
    """What the walk through one game found."""

    points: list[DecisionPoint]
    #: Positions with a choice examined.
    positions: int
    #: Positions searched (solver nodes; the fair mode's counted at its budget).
    nodes: int

    def count(self, agrees: str) -> int:
        return sum(point.agrees == agrees for point in self.points)

    @property
    def fires(self) -> bool:
        return len(self.points) >= MIN_POINTS and self.score >= SCORE_THRESHOLD

    @property
    def score(self) -> float:
        return clairvoyance_score(self.count(CLAIRVOYANT), len(self.points))


def has_hidden_stock(name: str) -> bool:
    """Whether a game of ``name`` has a face-down stock (only then can anyone be
    clairvoyant)."""
    return "stock" in GAMES[name].single_piles


#: Games with a hidden stock that are not examined, as the signal is measured to accuse
#: honest players there: on Matrimony it caught none of 50 cheats and fired on 3 of 50
#: honest games (``BENCHMARKS.md``, "Clairvoyance on the issue's protocol"), whose plain
#: moves to a foundation counted as clairvoyant where the fair mode's samples preferred
#: dealing by a fraction of a card.
NOT_EXAMINED = frozenset({"matrimony"})


def is_examined(name: str) -> bool:
    """Whether the examination runs on games of ``name``: a hidden stock, and not in
    :data:`NOT_EXAMINED`."""
    return has_hidden_stock(name) and name not in NOT_EXAMINED


def binomial_tail(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)``."""
    return min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def clairvoyance_score(agreements: int, points: int) -> float:
    """``-log10 P(X >= agreements)``, ``X ~ Binomial(points, FAIR_BASELINE)``; 0 for no
    point."""
    if points == 0:
        return 0.0
    return max(0.0, -math.log10(binomial_tail(agreements, points, FAIR_BASELINE)))


def advice_rng(seed: str, version: int) -> random.Random:
    """The fair mode's sampler for the position before ``version``: a function of the
    deal's seed and the version only.  Every audit of a game draws the same samples, and
    every attempt at one daily deal is measured with the same yardstick; nobody can know
    the samples before the seed is revealed."""
    digest = hashlib.sha256(f"clairvoyance\n{seed}\n{version}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def examine(name: str, seed: str, moves: list[tuple[int, str]]) -> Examination:
    """Walk the replay of ``moves`` (``(version, move text)`` in version order) from the deal
    of ``seed`` and collect its decision points (see the module docstring).  Pure and
    deterministic; stops at an illegal move (the integrity checks report it)."""
    game = new_game(name, seed)
    points: list[DecisionPoint] = []
    positions = nodes = 0
    if not is_examined(name):
        return Examination(points, positions, nodes)
    for version, text in moves:
        if game.status != PLAYING or positions >= MAX_POSITIONS or nodes >= MAX_NODES:
            break
        try:
            played = Move(text)
        except ValueError:
            break
        if played == RESIGN:
            break
        legal = game.legal_moves()
        if len(legal) >= 2 and played in legal:
            positions += 1
            point, cost = _decision(game, version, played, legal)
            nodes += cost
            if point is not None:
                points.append(point)
        try:
            game.play(played)
        except IllegalMove:
            break
    return Examination(points, positions, nodes)


def clairvoyant_values(game: Game, legal: Sequence[str], nodes: int = SOLVE_NODES) -> list[int]:
    """For each legal move, the best score the perfect-information solver reaches after it
    (the whole deck when it wins), with the real stock order."""
    values = []
    for move in legal:
        after = game.copy()
        after.play(move)
        values.append(solve(after, Budget(nodes=nodes)).best_score)
    return values


def fair_values(
    game: Game,
    legal: Sequence[str],
    rng: random.Random,
    samples: int = FAIR_SAMPLES,
    nodes: int = FAIR_NODES,
) -> list[float]:
    """For each legal move, the mean best score the solver reaches after it over ``samples``
    stock orders drawn with ``rng`` from the player's view alone (never the real stock)."""
    view = game.view()
    hidden = hidden_cards(game.name, view)
    totals = [0.0] * len(legal)
    for _ in range(samples):
        stock = list(hidden)
        rng.shuffle(stock)
        sample = game_from_view(game.name, view, stock)
        for index, move in enumerate(legal):
            after = sample.copy()
            after.play(move)
            totals[index] += solve(after, Budget(nodes=nodes)).best_score
    return [total / samples for total in totals]


def _decision(
    game: Game, version: int, played: str, legal: Sequence[str]
) -> tuple[DecisionPoint | None, int]:
    """The decision point at ``game`` (None if it is not one) and its search budget."""
    cost = len(legal) * (SOLVE_NODES + FAIR_SAMPLES * FAIR_NODES)
    real = clairvoyant_values(game, legal)
    fair = fair_values(game, legal, advice_rng(game.seed, version))
    best = max(real)
    fair_move = max(range(len(legal)), key=lambda index: (fair[index], -index))
    if real[fair_move] == best:
        return None, cost
    clairvoyant_move = real.index(best)
    played_value = real[legal.index(played)]
    if played_value == best:
        agrees = CLAIRVOYANT
    elif played == legal[fair_move]:
        agrees = FAIR
    else:
        agrees = NEITHER
    point = DecisionPoint(version, played, legal[clairvoyant_move], legal[fair_move], agrees)
    return point, cost


def clairvoyance(export: dict[str, Any], entries: list[dict[str, Any]]) -> Signal | None:
    """The ``clairvoyance`` signal of a well-formed export (a :data:`SignalCheck`): None
    without a seed, for a game that is not examined (:func:`is_examined`), or when the
    score stays under :data:`SCORE_THRESHOLD`."""
    seed, name = export["seed"], export["game"]
    if seed is None or not is_examined(name):
        return None
    try:
        found = examine(
            name,
            seed,
            [(entry["version"], entry["move"]) for entry in entries],
        )
    except ValueError:  # a seed the RNG refuses: the integrity checks report it
        return None
    if not found.fires:
        return None
    return Signal(
        "clairvoyance",
        next(point.version for point in found.points if point.agrees == CLAIRVOYANT),
        describe(found),
        evidence(found),
    )


def evidence(found: Examination) -> dict[str, Any]:
    """The signal's evidence (``protocol/AUDIT.md`` §5a)."""
    clairvoyant = [point.version for point in found.points if point.agrees == CLAIRVOYANT]
    fair = [point.version for point in found.points if point.agrees == FAIR]
    return {
        "positions_examined": found.positions,
        "decision_points": len(found.points),
        "clairvoyant_agreements": len(clairvoyant),
        "fair_agreements": len(fair),
        "neither": found.count(NEITHER),
        "score": round(found.score, 3),
        "threshold": SCORE_THRESHOLD,
        "fair_baseline": FAIR_BASELINE,
        "nodes": found.nodes,
        "clairvoyant_versions": clairvoyant[:MAX_EXAMPLES],
        "fair_versions": fair[:MAX_EXAMPLES],
    }


def describe(found: Examination) -> str:
    n, k = len(found.points), found.count(CLAIRVOYANT)
    return (
        f"at {n} decision points (where the move best with the real stock order is not the "
        f"one the player's view suggests), the player chose a move best with the real stock "
        f"{k} times and the fair recommendation {found.count(FAIR)} times; a fair player "
        f"does that {k} times in {n} with probability 10^-{found.score:.1f} (threshold "
        f"10^-{SCORE_THRESHOLD:g})"
    )


#: The default signals and this one: what the leaderboard audit and ``--clairvoyance`` run.
WITH_CLAIRVOYANCE: tuple[SignalCheck, ...] = (*EXPORT_SIGNALS, clairvoyance)
