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

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from server.rules import PLAYING, WON, Game
from server.solver.models import Model, State, model_for

SOLVED, LOST, UNKNOWN = "won", "lost", "unknown"  # verdicts

#: How often (in nodes) the search asks :attr:`Budget.out_of_time`.
CHECK_EVERY = 256


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


def search(model: Model, root: State, budget: Budget) -> _Outcome:
    """The depth-first search itself, on model states (see the module docstring)."""
    key, moves_of, play = model.key, model.moves, model.play
    nf, total = model.nf, model.total
    score = model.score(root)
    best, best_line = score, []
    if score == total:
        return _Outcome(SOLVED, [], 1, score, [])
    seen = {key(root)}
    limit = budget.nodes
    out_of_time = budget.out_of_time
    nodes = 1
    line: list[int] = []
    # One frame per position on the path: its state, score, moves and the next to try.
    states = [root]
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
            return _Outcome(UNKNOWN, None, nodes, best, best_line)
        states.append(child)
        scores.append(score)
        frames.append(moves_of(child))
        tried.append(0)
    return _Outcome(LOST, None, nodes, best, best_line)


def best_first(model: Model, root: State, budget: Budget) -> _Outcome:
    """Best-first search: always expand the open position the model values most
    (:meth:`Model.value`), the newest first among equals.  Same transposition table and
    the same verdicts as :func:`search` (exhaustive when the queue runs dry), but it is not
    trapped under an early bad move the way depth-first search is."""
    key, moves_of, play, value = model.key, model.moves, model.play, model.value
    nf, total = model.nf, model.total
    score = model.score(root)
    best, best_key = score, None
    if score == total:
        return _Outcome(SOLVED, [], 1, score, [])
    root_key = key(root)
    # Each position's key -> (its parent's key, the move from there); the root's is None.
    parents: dict[object, tuple[object, int] | None] = {root_key: None}
    limit = budget.nodes
    out_of_time = budget.out_of_time
    nodes = 1
    counter = 0
    queue = [(-value(root, score), 0, root, score, root_key)]

    def line_to(position: object) -> list[int]:
        moves = []
        step = parents[position]
        while step is not None:
            position, move = step
            moves.append(move)
            step = parents[position]
        moves.reverse()
        return moves

    pop, push = heapq.heappop, heapq.heappush
    while queue:
        _, _, state, score, state_key = pop(queue)
        for move in moves_of(state):
            child = play(state, move)
            child_key = key(child)
            if child_key in parents:
                continue
            parents[child_key] = (state_key, move)
            nodes += 1
            child_score = score
            if move >= 0:
                child_score += ((move & 63) < nf) - ((move >> 6) < nf)
            if child_score > best:
                best, best_key = child_score, child_key
                if child_score == total:
                    line = line_to(child_key)
                    return _Outcome(SOLVED, line, nodes, best, line)
            if (limit is not None and nodes >= limit) or (
                out_of_time is not None and nodes % CHECK_EVERY == 0 and out_of_time()
            ):
                best_line = [] if best_key is None else line_to(best_key)
                return _Outcome(UNKNOWN, None, nodes, best, best_line)
            counter -= 1
            push(queue, (-value(child, child_score), counter, child, child_score, child_key))
    return _Outcome(LOST, None, nodes, best, [] if best_key is None else line_to(best_key))


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
    strategy = best_first if model.best_first else search
    outcome = strategy(model, model.state_of(game), budget or Budget())
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
