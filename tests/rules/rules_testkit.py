"""Helpers for the rules-engine tests: build positions from card texts, check moves.

The tests import these directly (``from rules_testkit import set_piles``).  This is not a
``conftest.py`` on purpose: other test folders import helpers with ``from conftest
import …``, and a second rootless ``conftest`` module would shadow theirs whenever both
folders are collected in one run.  Card texts are the
protocol's (``"10H"``, ``"AS"``); piles are listed bottom first, so the last text of a
pile is its top card, and for the stock the last text is the next card dealt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest

from protocol.cards import RANKS, card_text, parse_card
from protocol.rng import shuffled_deck
from server.rules import Game, IllegalMove
from server.rules.game import PLAYING

__all__ = [
    "assert_illegal",
    "deck_texts",
    "legal",
    "rank_of",
    "run",
    "set_piles",
    "table_texts",
    "texts",
]

PileSpec = Mapping[int, Sequence[str]] | Sequence[Sequence[str]]


def texts(card_ids: Iterable[int]) -> list[str]:
    """Card texts of card ids, in order."""
    return [card_text(card) for card in card_ids]


def deck_texts(seed: str, decks: int) -> list[str]:
    """The shuffled deck of ``seed`` as texts, front (first dealt) first."""
    return texts(shuffled_deck(seed, decks))


def rank_of(text: str) -> int:
    """Rank 1..13 of a card text."""
    return RANKS.index(text[:-1]) + 1


def run(start: str, count: int, step: int, suits: str, wrap: bool = True) -> list[str]:
    """``count`` card texts from rank ``start`` going by ``step``, cycling through ``suits``.

    ``run("5", 4, +1, "DC") == ["5D", "6C", "7D", "8C"]``; with ``wrap`` a K is followed by
    an A going up (an A by a K going down).
    """
    rank = RANKS.index(start) + 1
    cards = []
    for i in range(count):
        if not 1 <= rank <= 13:
            assert wrap, "run went past A or K without wrap"
            rank = (rank - 1) % 13 + 1
        cards.append(RANKS[rank - 1] + suits[i % len(suits)])
        rank += step
    return cards


def _pile_items(spec: PileSpec | None) -> list[tuple[int, Sequence[str]]]:
    if spec is None:
        return []
    if isinstance(spec, Mapping):
        return list(spec.items())
    return list(enumerate(spec))


def set_piles(
    game: Game,
    *,
    foundations: PileSpec | None = None,
    tableau: PileSpec | None = None,
    reserve: Sequence[str] | None = None,
    stock: Sequence[str] | None = None,
    waste: Sequence[str] | None = None,
    bouquet: Sequence[str] | None = None,
    base_rank: str | None = None,
    redeals_left: int | None = None,
    clear: bool = False,
) -> Game:
    """Put cards (texts, bottom first) on the given piles and recompute the status.

    Piles not given keep their cards, or are emptied when ``clear`` is true.  Each text gets
    the id of a copy of that card not used elsewhere on the table.  ``base_rank`` is a rank
    text ("5"); ``redeals_left`` sets Matrimony's counter.  Returns the game.
    """
    chosen: dict[int, Sequence[str]] = {}
    for index, cards in _pile_items(foundations):
        chosen[game.slot("foundation", index)] = cards
    for index, cards in _pile_items(tableau):
        chosen[game.slot("tableau", index)] = cards
    for kind, cards in (
        ("reserve", reserve),
        ("stock", stock),
        ("waste", waste),
        ("bouquet", bouquet),
    ):
        if cards is not None:
            chosen[game.slot(kind)] = cards
    if clear:
        for slot in range(len(game.piles)):
            chosen.setdefault(slot, [])
    used = {card for slot, pile in enumerate(game.piles) if slot not in chosen for card in pile}
    for slot, cards in chosen.items():
        pile = []
        for text in cards:
            face = parse_card(text)
            copies = (face + 52 * deck for deck in range(game.decks))
            card = next((c for c in copies if c not in used), None)
            if card is None:
                raise ValueError(f"more than {game.decks} copies of {text} on the table")
            used.add(card)
            pile.append(card)
        game.piles[slot][:] = pile
    if base_rank is not None:
        game.base_rank = RANKS.index(base_rank) + 1
    if redeals_left is not None:
        game.redeals_left = redeals_left
    game.status = PLAYING
    game._refresh_status()
    return game


def table_texts(game: Game, kind: str, index: int | None = None) -> list[str]:
    """The texts of one pile, bottom first."""
    return texts(game.pile(kind, index))


def legal(game: Game) -> set[str]:
    """The legal moves as a set of texts."""
    return {str(move) for move in game.legal_moves()}


def assert_illegal(game: Game, move: str, *words: str, code: str | None = None) -> IllegalMove:
    """``move`` raises IllegalMove whose reason contains ``words``, and changes nothing."""
    before, legal_before = game.to_bytes(), game.legal_moves()
    assert move not in legal_before
    with pytest.raises(IllegalMove) as caught:
        game.play(move)
    for word in words:
        assert word in caught.value.reason, (word, caught.value.reason)
    if code is not None:
        assert caught.value.code == code, caught.value.code
    assert game.to_bytes() == before
    assert game.legal_moves() == legal_before
    return caught.value
