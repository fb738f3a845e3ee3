"""Helpers for the solver tests: constructed positions and a plain exhaustive search.

Imported directly (``from solver_testkit import …``), not a ``conftest.py``: see
``tests/rules/rules_testkit.py`` for why.
"""

from __future__ import annotations

import random

from server.rules import PLAYING, WON, Game, new_game


def won_position(name: str, seed: str) -> Game:
    """A won game of ``name`` (every card on a foundation), dealt from ``seed`` for its base
    rank, the foundations filled greedily through the engine's own ``foundation_wants``."""
    game = new_game(name, seed)
    cards = sorted(card for pile in game.piles for card in pile)
    for pile in game.piles:
        pile.clear()
    for slot in range(game.foundation_count):
        while len(game.foundations[slot]) < game.foundation_size:
            wanted = game.foundation_wants(slot)
            card = next(c for c in cards if c % 52 in wanted)
            cards.remove(card)
            game.foundations[slot].append(card)
    assert not cards
    game._refresh_status()
    assert game.status == WON
    return game


def late_position(name: str, seed: str, off: int, rng: random.Random) -> Game:
    """A winnable late position: ``off`` cards taken back, each from a random foundation's
    top onto a random tableau pile (playing them back in reverse order wins)."""
    game = won_position(name, seed)
    for _ in range(off):
        source = rng.choice([f for f in game.foundations if f])
        rng.choice(game.tableau).append(source.pop())
    if game.redeals_left is not None:
        game.redeals_left = 2  # keep Matrimony's plain search small
    game.status = PLAYING
    game._refresh_status()
    return game


def reversed_tableau(game: Game) -> Game:
    """``game`` with every tableau pile turned upside down (the cards the foundations want
    next now lie at the bottom) and Matrimony down to one redeal: often no longer
    winnable."""
    copy = game.copy()
    for pile in copy.tableau:
        pile.reverse()
    if copy.redeals_left is not None:
        copy.redeals_left = 1
    copy._refresh_status()
    return copy


def plain_search(game: Game, limit: int = 200_000) -> bool | None:
    """Whether ``game`` can be won: exhaustive depth-first search on the engine itself
    (``legal_moves`` and ``play`` on copies), no symmetry, no safe moves, positions
    compared card id by card id.  ``None`` when more than ``limit`` positions would be
    needed."""
    seen: set[object] = set()

    def key(position: Game) -> object:
        return (tuple(map(tuple, position.piles)), position.redeals_left)

    stack = [game]
    seen.add(key(game))
    while stack:
        position = stack.pop()
        if position.status == WON:
            return True
        for move in position.legal_moves():
            child = position.copy()
            child.play(move)
            child_key = key(child)
            if child_key not in seen:
                seen.add(child_key)
                stack.append(child)
        if len(seen) > limit:
            return None
    return False
