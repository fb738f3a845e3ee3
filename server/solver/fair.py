"""Fair mode: advice from the player's view alone (determinisation).

The player sees every card but the face-down stock's order (``protocol/VIEW.md``; in
Colorado the stock's top card is face up).  The hidden cards are exactly the game's
cards that the view does not show.  :func:`advise` deals them into the stock in random
orders drawn from the caller's :class:`random.Random`, solves each such *sample* with the
perfect-information search under a small budget, and recommends a move that wins in
most samples (see :func:`advise`).  Its input is the view, never a game: nothing here
can read the real stock.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.cards import RANKS, parse_card
from server.rules import Game, game_class
from server.rules.moves import Move
from server.solver.models import model_for
from server.solver.search import SOLVED, Budget, solve

#: Positions searched per sample by default, and samples per piece of advice: about
#: 0.3 s per piece of advice on one core (``benchmarks/solver.py``).
SAMPLE_NODES = 1_500
SAMPLES = 8
#: Fewest positions searched after each candidate move in each sample (per-move advice).
MIN_MOVE_NODES = 60
#: Samples a move may win fewer than the most-won move and still be preferred for its
#: progress (see :func:`_progress`).
WIN_SLACK = 1


@dataclass(frozen=True)
class Advice:
    """A recommended move and what the samples said.

    ``move``: a legal move text (``None`` when the game is over).  ``win_chance``: the
    fraction of samples in which the position was won (``wins`` of ``samples``; a sample
    whose search ran out of budget counts as not won, so this is a lower estimate).
    ``best_score``: the best score reached in any sample.  ``votes``: for each move that
    started a sample's winning or best line, ``(wins, total best score)`` of those samples.
    """

    move: str | None
    win_chance: float
    wins: int
    samples: int
    best_score: int
    votes: dict[str, tuple[int, int]] = field(default_factory=dict)


def _card_ids(texts: list[str], copies: Counter[int]) -> list[int]:
    """Card ids for card texts: the k-th copy of a face seen gets id ``face + 52*k``."""
    ids = []
    for text in texts:
        face = parse_card(text)
        ids.append(face + 52 * copies[face])
        copies[face] += 1
    return ids


def game_from_view(name: str, view: Mapping[str, Any], stock: list[int] | None = None) -> Game:
    """A game with the view's visible cards, and ``stock`` (card ids, bottom first like every
    pile: the last is dealt first) as the face-down part of the stock.

    ``stock=None`` leaves the stock's hidden part empty (for views without one).  Raises
    ``ValueError`` when the view is not a position of ``name`` or ``stock`` has the wrong
    number of cards.
    """
    cls = game_class(name)
    game = cls("fair-mode")
    copies: Counter[int] = Counter()
    for kind, count in (("foundations", cls.foundation_count), ("tableau", cls.tableau_count)):
        piles = view[kind]
        if len(piles) != count:
            raise ValueError(f"{name} has {count} {kind} piles, the view {len(piles)}")
        target = game.foundations if kind == "foundations" else game.tableau
        for pile, texts in zip(target, piles, strict=True):
            pile.extend(_card_ids(list(texts), copies))
    for kind in cls.single_piles:
        if kind == "stock":
            continue
        game.pile(kind).extend(_card_ids(list(view[kind]), copies))
    if "stock" in cls.single_piles:
        seen = view["stock"]
        top = _card_ids([seen["top"]], copies) if seen.get("top") else []
        hidden = list(stock or [])
        if len(hidden) + len(top) != seen["count"]:
            raise ValueError("the stock does not have the view's count of cards")
        game.stock.extend(hidden + top)
    if view.get("base_rank") is not None:
        game.base_rank = RANKS.index(view["base_rank"]) + 1
    if view.get("redeals_left") is not None:
        game.redeals_left = int(view["redeals_left"])
    game._refresh_status()
    return game


def hidden_cards(name: str, view: Mapping[str, Any]) -> list[int]:
    """The cards the view does not show (ids not used by its visible cards), in a fixed
    order: the cards that may be in the face-down stock."""
    cls = game_class(name)
    visible: Counter[int] = Counter()
    for kind in ("foundations", "tableau"):
        for texts in view[kind]:
            visible.update(map(parse_card, texts))
    for kind in cls.single_piles:
        if kind == "stock":
            top = view["stock"].get("top")
            if top:
                visible[parse_card(top)] += 1
        else:
            visible.update(map(parse_card, view[kind]))
    hidden: list[int] = []
    for face in range(52):
        missing = cls.decks - visible[face]
        if missing < 0:
            raise ValueError(f"the view shows {visible[face]} copies of one card")
        hidden.extend(face + 52 * (cls.decks - 1 - k) for k in range(missing))
    return hidden


def advise(
    name: str,
    view: Mapping[str, Any],
    rng: random.Random,
    *,
    samples: int = SAMPLES,
    sample_nodes: int = SAMPLE_NODES,
    out_of_time: Callable[[], bool] | None = None,
    per_move: bool = True,
) -> Advice:
    """Recommend a move for game ``name`` from the player's ``view`` (``Game.view()``).

    Draws ``samples`` stock orders with ``rng``.  With ``per_move`` (the default), every
    move the search model would try from the position is played in every sample and the
    position after it solved, the ``samples * sample_nodes`` positions shared among them:
    of the moves won in most samples, or in at most :data:`WIN_SLACK` fewer, the one that
    moves the game on most surely is recommended (:func:`_progress`; ties: more samples
    won, the highest total best score, the shortest winning lines, the model's order), so
    one sample's lucky line no longer decides.  Without it (the first version, kept as
    the benchmark's baseline), each sample is solved once and the first move of the
    winning lines found most often is recommended.  ``out_of_time`` (optional, the
    caller's clock) stops early, after at least one sample.  The same view, rng state and
    budget give the same advice.
    """
    hidden = hidden_cards(name, view)
    games = []
    for _ in range(samples):
        stock = list(hidden)
        rng.shuffle(stock)
        games.append(game_from_view(name, view, stock))
    first = games[0]
    if first.is_over:
        return Advice(None, 1.0 if first.status == "won" else 0.0, 0, 0, first.score)
    if per_move:
        return _advise_per_move(games, sample_nodes, out_of_time)
    return _advise_by_lines(games, sample_nodes, out_of_time)


def _candidates(game: Game) -> list[str]:
    """The distinct moves the search model tries from ``game`` (one stands for moves
    that give the same position up to symmetry), in its order; its safe move alone.
    Every legal move where the model tries none (a Colorado position it proves lost in
    every sample, as it looks only at which cards are hidden): they are then judged on
    the cards they put up."""
    model = model_for(game)
    texts = [model.text(move) for move in model.moves(model.state_of(game))]
    return list(dict.fromkeys(texts)) or [str(move) for move in game.legal_moves()]


def _advise_per_move(
    games: list[Game], sample_nodes: int, out_of_time: Callable[[], bool] | None
) -> Advice:
    candidates = _candidates(games[0])
    nodes = max(MIN_MOVE_NODES, sample_nodes // len(candidates))
    # per move: [wins, total best score, total winning-line length]
    tally = {move: [0, 0, 0] for move in candidates}
    done = best = 0
    for game in games:
        if done and out_of_time is not None and out_of_time():
            break
        if len(candidates) == 1:
            result = solve(game, Budget(nodes=sample_nodes, out_of_time=out_of_time))
            entry = tally[candidates[0]]
            entry[0] += result.won
            entry[1] += result.best_score
            best = max(best, result.best_score)
            done += 1
            continue
        for move in candidates:
            after = game.copy()
            after.play(move)
            result = solve(after, Budget(nodes=nodes, out_of_time=out_of_time))
            entry = tally[move]
            if result.won and result.moves is not None:
                entry[0] += 1
                entry[2] += len(result.moves)
            entry[1] += result.best_score
            best = max(best, result.best_score)
        done += 1
    # Win counts this close are noise (a search out of budget counts as not won).
    most = max(tally[m][0] for m in candidates)
    move = min(
        candidates,
        key=lambda m: (
            tally[m][0] < most - WIN_SLACK,
            -_progress(m),
            -tally[m][0],
            -tally[m][1],
            tally[m][2],
            candidates.index(m),
        ),
    )
    wins = tally[move][0]
    return Advice(
        move=move,
        win_chance=wins / done if done else 0.0,
        wins=wins,
        samples=done,
        best_score=best,
        votes={m: (tally[m][0], tally[m][1]) for m in candidates},
    )


#: Pile kinds that only ever lose cards: a move out of one cannot be undone.
_SHRINKING = frozenset({"reserve", "waste", "bouquet"})


def _progress(text: str) -> int:
    """How surely ``text`` moves the game on whatever the hidden order, for ties between
    moves won in as many samples: a card to a foundation (2), a card out of a pile that
    never grows again (1), a card from the stock (0), a move that can be undone (-1).

    A sample's search knows its own stock, so in it dealing costs nothing and the samples
    cannot tell a planned move from a card shuffled to and fro: without this, the hint
    dealt while a foundation move waited and swapped two piles' tops back and forth."""
    move = Move(text)
    if move.source is None or move.target is None:
        return 0 if text in ("deal", "redeal") else -1
    if move.target.kind == "foundation" and move.source.kind != "foundation":
        return 2
    if move.source.kind in _SHRINKING:
        return 1
    return 0 if move.source.kind == "stock" else -1


def _advise_by_lines(
    games: list[Game], sample_nodes: int, out_of_time: Callable[[], bool] | None
) -> Advice:
    votes: dict[str, list[int]] = {}
    order: list[str] = []
    wins = done = best = 0
    fallback = games[0].legal_moves()[0]
    for game in games:
        if done and out_of_time is not None and out_of_time():
            break
        result = solve(game, Budget(nodes=sample_nodes, out_of_time=out_of_time))
        done += 1
        best = max(best, result.best_score)
        line = result.moves if result.verdict == SOLVED else result.best_line
        if not line:
            continue
        if line[0] not in votes:
            votes[line[0]] = [0, 0]
            order.append(line[0])
        tally = votes[line[0]]
        if result.verdict == SOLVED:
            wins += 1
            tally[0] += 1
        tally[1] += result.best_score
    move = max(order, key=lambda m: (votes[m][0], votes[m][1], -order.index(m)), default=None)
    return Advice(
        move=move or fallback,
        win_chance=wins / done if done else 0.0,
        wins=wins,
        samples=done,
        best_score=best,
        votes={m: (votes[m][0], votes[m][1]) for m in order},
    )
