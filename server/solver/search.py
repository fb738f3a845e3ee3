"""Perfect-information search: prove a position won (with a line) or lost, within a budget.

Depth-first search over the game's compact model (:mod:`server.solver.models`), moves
tried best first, with a transposition table of canonical keys.  The question asked is
reachability (is a won position reachable?), so a position seen before is never
searched again: it is either fully searched and lost, or on the current path and being
searched.  When the whole reachable graph has been searched without a win the deal is
**lost**; the only positions left out are those the models prove need no search (a
position equal to one seen up to a permutation of interchangeable piles, a move to an
empty pile when another empty pile was tried, a safe move played without trying its
alternatives), each argued in its model's docstring.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from server.rules import PLAYING, WON, Game
from server.solver.models import Model, State, model_for

SOLVED, LOST, UNKNOWN = "won", "lost", "unknown"  # verdicts

#: How often (in nodes) the search asks :attr:`Budget.out_of_time`.
CHECK_EVERY = 256
#: Positions of the complete run's first slice (see :func:`_restarts`).
FIRST_NODES = 5_000
#: Most keys the transposition table holds; past it the table keeps only the current
#: path's keys (positions searched before may be searched again: slower, still sound).
TABLE_LIMIT = 500_000


@dataclass(frozen=True)
class Budget:
    """How much search a caller allows.

    ``nodes``: at most this many positions (deterministic).  ``out_of_time``: a callable
    the search asks every :data:`CHECK_EVERY` positions, stopping when it answers true
    (the caller owns the clock, e.g. ``lambda: time.process_time() > end``).  With
    neither, the search runs until it has an answer.
    """

    nodes: int | None = None
    out_of_time: Callable[[], bool] | None = None


@dataclass(frozen=True)
class Result:
    """What :func:`solve` found.

    ``verdict``: ``"won"`` (``moves`` is a winning line of move texts, replayed by the
    engine before it is returned), ``"lost"`` (no play from this position wins; the
    search was exhaustive) or ``"unknown"`` (the budget ran out).  ``best_score``: the
    most cards on the foundations in any position reached (``best_line`` reaches it),
    a proven lower bound on what the position can score.
    """

    verdict: str
    moves: tuple[str, ...] | None
    nodes: int
    best_score: int
    best_line: tuple[str, ...]
    total_cards: int
    start_score: int = field(default=0)

    @property
    def won(self) -> bool:
        return self.verdict == SOLVED


@dataclass
class _Outcome:
    verdict: str
    line: list[int] | None
    nodes: int
    best_score: int
    best_line: list[int]


def _shaken(
    moves_of: Callable[[State], list[int]], rng: random.Random
) -> Callable[[State], list[int]]:
    """``moves_of`` with two of each position's moves swapped at random (lists of three
    or more): the same moves, so the search stays exhaustive, in another order."""

    def moves(state: State) -> list[int]:
        listed = moves_of(state)
        if len(listed) > 2:
            i, j = rng.randrange(len(listed)), rng.randrange(len(listed))
            listed[i], listed[j] = listed[j], listed[i]
        return listed

    return moves


def search(model: Model, root: State, budget: Budget, shake: int | None = None) -> _Outcome:
    """The depth-first search itself, on model states (see the module docstring).

    With ``shake``, each position's moves are reordered a little by ``random.Random(shake)``
    (a restart: still every move of every position, in another order)."""
    run = _steps(model, root, budget.nodes, budget.out_of_time, shake)
    try:
        return _advance(run, None)  # a pause ("unknown") means the budget ran out
    finally:
        run.close()


def _steps(
    model: Model,
    root: State,
    limit: int | None,
    out_of_time: Callable[[], bool] | None,
    shake: int | None = None,
) -> Generator[_Outcome, int | None, _Outcome]:
    """:func:`search` as a run that can be paused and resumed: it pauses when it has
    searched ``limit`` positions or ``out_of_time()`` answers true, yielding an
    ``"unknown"`` outcome (its positions and best score so far), and goes on from where it
    stopped, its transposition table and path intact, when sent a new ``limit`` (a
    total, counted from its start).  Returns its verdict."""
    key, play = model.key, model.play
    moves_of: Callable[[State], list[int]] = model.moves
    if shake is not None:
        moves_of = _shaken(moves_of, random.Random(shake))
    nf, total = model.nf, model.total
    score = model.score(root)
    best, best_line = score, []
    if score == total:
        return _Outcome(SOLVED, [], 1, score, [])
    root_key = key(root)
    seen = {root_key}
    table_limit = TABLE_LIMIT
    nodes = 1
    line: list[int] = []
    # One frame per position on the path: its state, score, moves and the next to try.
    states = [root]
    path_keys = [root_key]
    scores = [score]
    frames = [moves_of(root)]
    tried = [0]
    while frames:
        moves = frames[-1]
        index = tried[-1]
        if index == len(moves):
            frames.pop()
            tried.pop()
            states.pop()
            path_keys.pop()
            scores.pop()
            if line:
                line.pop()
            continue
        tried[-1] = index + 1
        move = moves[index]
        child = play(states[-1], move)
        child_key = key(child)
        if child_key in seen:
            continue
        seen.add(child_key)
        nodes += 1
        line.append(move)
        score = scores[-1]
        if move >= 0:
            score += ((move & 63) < nf) - ((move >> 6) < nf)
        if score > best:
            best, best_line = score, list(line)
            if score == total:
                return _Outcome(SOLVED, line, nodes, best, best_line)
        if (limit is not None and nodes >= limit) or (
            out_of_time is not None and nodes % CHECK_EVERY == 0 and out_of_time()
        ):
            finish = _to_foundations(model, moves_of, child, score)
            if finish is not None:
                line += finish
                return _Outcome(SOLVED, line, nodes, total, list(line))  # a playout, not searched
            limit = yield _Outcome(UNKNOWN, None, nodes, best, list(best_line))
        if len(seen) > table_limit:
            seen = set(path_keys)
            seen.add(child_key)
        states.append(child)
        path_keys.append(child_key)
        scores.append(score)
        frames.append(moves_of(child))
        tried.append(0)
    return _Outcome(LOST, None, nodes, best, best_line)


def _to_foundations(
    model: Model, moves_of: Callable[[State], list[int]], state: State, score: int
) -> list[int] | None:
    """The moves that win from ``state`` by sending cards to the foundations one after
    another, each the first such move the model lists, or None when that does not win.

    Asked where a run stops at its limit: a run cut in the last cascade of a deal (in
    Balcony the last cards go up one by one) would otherwise stop a few moves short of a
    win that it has all but found, and the restart that follows starts over elsewhere.
    Its positions are played, not searched, so they do not count against the budget."""
    nf, total = model.nf, model.total
    line: list[int] = []
    while score < total:
        move = next((m for m in moves_of(state) if m >= 0 and (m & 63) < nf <= m >> 6), None)
        if move is None:
            return None
        state = model.play(state, move)
        score += 1
        line.append(move)
    return line


def luby(index: int) -> int:
    """The ``index``-th term (from 1) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, …: the
    restart lengths that are within a constant factor of the best fixed schedule when
    nothing is known of the distribution of run lengths (Luby, Sinclair, Zuckerman 1993)."""
    size = 1
    while size < index:
        size = 2 * size + 1
    while True:
        if index == size:
            return (size + 1) // 2
        size //= 2
        if index > size:
            index -= size


def _advance(run: Generator[_Outcome, int | None, _Outcome], limit: int | None) -> _Outcome:
    """Start (``limit`` None) or resume a :func:`_steps` run up to ``limit`` positions; its
    outcome, ``"unknown"`` when it paused."""
    try:
        return next(run) if limit is None else run.send(limit)
    except StopIteration as finished:
        outcome: _Outcome = finished.value
        return outcome


def _restarts(model: Model, root: State, budget: Budget) -> _Outcome:
    """Two searches share the budget: the **complete run**, :func:`search` in the model's
    order, and **restarts** in shaken orders (``random.Random(k)`` for restart ``k``),
    restart ``k`` capped at ``luby(k) * model.restart_unit`` positions (at most
    ``model.longest_restart`` units, when the model sets it).

    The complete run goes first, for :data:`FIRST_NODES` positions, so a budget within
    that (hints, the audit) is one plain search.  The restarts find wins: a win is found
    quickly or very late (an early bad move buries depth-first search), and short runs in
    other orders find many of the late ones early.  A restart not cut is a complete
    search too, so its ``"lost"`` is a proof, but only a search of every reachable
    position proves a loss, and a run cut short proves nothing.  So for a model whose
    deals are mostly lost (:attr:`~server.solver.models.Model.complete_share`), the
    complete run is resumed after each restart where it paused, its transposition table
    intact, and keeps that share of the positions searched: a deal whose reachable
    positions number about half the budget is then proven lost, where the longest
    restart would have covered an eighth.

    Without any budget, the complete run alone goes to its verdict."""
    limit, out_of_time = budget.nodes, budget.out_of_time
    if limit is None and out_of_time is None:
        return search(model, root, budget)

    def spent(nodes: int) -> bool:
        return (limit is not None and nodes >= limit) or (out_of_time is not None and out_of_time())

    first = FIRST_NODES if limit is None else min(FIRST_NODES, limit)
    complete = _steps(model, root, first, out_of_time)
    try:
        outcome = best = _advance(complete, None)
        nodes = outcome.nodes
        share = model.complete_share
        k = 1
        while outcome.verdict == UNKNOWN and not spent(nodes):
            length = luby(k)
            if model.longest_restart is not None:
                length = min(length, model.longest_restart)
            cap = length * model.restart_unit
            run_cap = cap if limit is None else min(cap, limit - nodes)
            restart = search(model, root, Budget(run_cap, out_of_time), k)
            nodes += restart.nodes
            if restart.best_score > best.best_score:
                best = restart
            if restart.verdict != UNKNOWN or spent(nodes):
                return _Outcome(
                    restart.verdict, restart.line, nodes, best.best_score, best.best_line
                )
            k += 1
            if not share:
                continue
            allowance = max(1, round(restart.nodes * share / (1 - share)))
            if limit is not None:
                allowance = min(allowance, limit - nodes)
            searched = outcome.nodes
            outcome = _advance(complete, searched + allowance)
            nodes += outcome.nodes - searched
            if outcome.best_score > best.best_score:
                best = outcome
        return _Outcome(outcome.verdict, outcome.line, nodes, best.best_score, best.best_line)
    finally:
        complete.close()


def solve(game: Game, budget: Budget | None = None) -> Result:
    """Solve ``game`` from its current position, knowing the stock order.

    Does not change ``game``.  A ``"won"`` result's line has been replayed by the rules
    engine on a copy of ``game`` and wins.
    """
    if game.status == WON:
        return Result(SOLVED, (), 0, game.score, (), game.total_cards, game.score)
    if game.status != PLAYING:
        return Result(LOST, None, 0, game.score, (), game.total_cards, game.score)
    model = model_for(game)
    outcome = _restarts(model, model.state_of(game), budget or Budget())
    text = model.text
    moves = None if outcome.line is None else tuple(map(text, outcome.line))
    if moves is not None:
        replay = game.copy()
        for move in moves:
            replay.play(move)
        if replay.status != WON:
            raise AssertionError(f"solver line does not win {game!r}: {moves}")
    return Result(
        verdict=outcome.verdict,
        moves=moves,
        nodes=outcome.nodes,
        best_score=outcome.best_score,
        best_line=tuple(map(text, outcome.best_line)),
        total_cards=game.total_cards,
        start_score=game.score,
    )
