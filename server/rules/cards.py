"""Card arithmetic for the rules engine.

A card is an integer id (see ``protocol/RNG.md``): with D decks the ids are
``0 .. 52*D - 1`` and ``id % 52`` is the card's *face*, ``13 * suit + rank - 1``
with suits clubs, diamonds, hearts, spades.  Two copies of a card share a
face, and every rule here looks at faces only.

The tables below answer "which faces may come next on this pile?" in one
lookup, which is what keeps legal-move generation fast.
"""

from __future__ import annotations

import functools

from protocol.cards import RANKS, SUITS, card_text, is_red, rank_of, suit_of

SUIT_SYMBOLS = "♣♦♥♠"
RED_SUITS = (1, 2)
BLACK_SUITS = (0, 3)

#: Card text of each face, e.g. ``FACE_TEXT[0] == "AC"``.
FACE_TEXT = tuple(card_text(face) for face in range(52))


rank = rank_of
suit = suit_of


def text(card: int) -> str:
    """Protocol text of a card, e.g. ``"10H"``."""
    return FACE_TEXT[card % 52]


def pretty(card: int) -> str:
    """Human text with a suit symbol, for error messages, e.g. ``"10♥"``."""
    return RANKS[rank(card) - 1] + SUIT_SYMBOLS[suit(card)]


def rank_text(rank_number: int) -> str:
    return RANKS[rank_number - 1]


def face(rank_number: int, suit_index: int) -> int:
    return 13 * suit_index + rank_number - 1


@functools.cache
def faces_of_rank(rank_number: int, suits: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[int, ...]:
    """The faces of one rank in the given suits."""
    return tuple(face(rank_number, s) for s in suits)


def _step(rank_number: int, delta: int, wrap: bool) -> int | None:
    stepped = rank_number + delta
    if 1 <= stepped <= 13:
        return stepped
    return (stepped - 1) % 13 + 1 if wrap else None


def _table(delta: int, wrap: bool, same_suit: bool) -> tuple[tuple[int, ...], ...]:
    table: list[tuple[int, ...]] = []
    for card in range(52):
        stepped = _step(rank(card), delta, wrap)
        if stepped is None:
            table.append(())
        elif same_suit:
            table.append((face(stepped, suit(card)),))
        else:
            table.append(faces_of_rank(stepped, BLACK_SUITS if is_red(card) else RED_SUITS))
    return tuple(table)


# NEXT_<direction>_<colour rule>[_WRAP][face]: the faces that may go on top of ``face``.
UP_ALTERNATE_WRAP = _table(+1, wrap=True, same_suit=False)
DOWN_ALTERNATE = _table(-1, wrap=False, same_suit=False)
DOWN_ALTERNATE_WRAP = _table(-1, wrap=True, same_suit=False)
UP_IN_SUIT = _table(+1, wrap=False, same_suit=True)
UP_IN_SUIT_WRAP = _table(+1, wrap=True, same_suit=True)
DOWN_IN_SUIT = _table(-1, wrap=False, same_suit=True)
DOWN_IN_SUIT_WRAP = _table(-1, wrap=True, same_suit=True)

__all__ = [
    "BLACK_SUITS",
    "DOWN_ALTERNATE",
    "DOWN_ALTERNATE_WRAP",
    "DOWN_IN_SUIT",
    "DOWN_IN_SUIT_WRAP",
    "FACE_TEXT",
    "RANKS",
    "RED_SUITS",
    "SUITS",
    "UP_ALTERNATE_WRAP",
    "UP_IN_SUIT",
    "UP_IN_SUIT_WRAP",
    "face",
    "faces_of_rank",
    "is_red",
    "pretty",
    "rank",
    "rank_text",
    "suit",
    "text",
]
