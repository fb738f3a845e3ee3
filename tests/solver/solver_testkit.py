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


def plain_search(
    game: Game, limit: int = 200_000, interchangeable_tableau: bool = False
) -> bool | None:
    """Whether ``game`` can be won: exhaustive depth-first search on the engine itself
    (``legal_moves`` and ``play`` on copies), no safe moves, positions compared card id
    by card id, and no symmetry unless ``interchangeable_tableau`` (positions that differ
    by the order of the tableau piles are then one, as RULES.md makes them for every
    game but Matrimony).  ``None`` when more than ``limit`` positions would be needed."""
    seen: set[object] = set()
    tableau = type(game).tableau_slots

    def key(position: Game) -> object:
        piles = tuple(map(tuple, position.piles))
        if interchangeable_tableau:
            piles = (
                *sorted(piles[slot] for slot in tableau),
                *piles[: tableau[0]],
                *piles[tableau[-1] + 1 :],
            )
        return (piles, position.redeals_left)

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


def colorado_spades_across() -> Game:
    """Colorado, spades only left (17 cards): the ace pile holds A-4, the king pile K-9,
    so the last 9, 10, J, Q, K must go up and the last A-4 down.  ``tableau[0]`` is a 5
    under the 9, ``tableau[1]`` the other 5 under the 10, ``tableau[4]`` and the stock
    6, 7, 8 (8 on top), the rest in order.  Lost: the 9 waits for a 5 and the 10 for the
    9, across piles."""
    spade = 3

    def card(rank: int, copy: int) -> int:
        return spade * 13 + rank - 1 + 52 * copy

    game = new_game("colorado", "across")
    for suit in range(4):
        up = range(1, 14) if suit != spade else range(1, 5)
        down = range(13, 0, -1) if suit != spade else range(13, 8, -1)
        slot = (suit + 1) % 4  # spades on the first pile of each kind
        game.foundations[slot][:] = [suit * 13 + rank - 1 for rank in up]
        game.foundations[4 + slot][:] = [suit * 13 + rank - 1 + 52 for rank in down]
    for pile in game.tableau:
        pile.clear()
    game.tableau[0][:] = [card(5, 0), card(9, 0)]
    game.tableau[1][:] = [card(5, 1), card(10, 0)]
    game.tableau[2][:] = [card(13, 0), card(12, 0), card(11, 0)]
    game.tableau[3][:] = [card(1, 1), card(2, 1), card(3, 1), card(4, 1)]
    game.tableau[4][:] = [card(6, 0), card(7, 0), card(8, 0)]
    game.stock[:] = [card(6, 1), card(7, 1), card(8, 1)]
    game._refresh_status()
    return game
