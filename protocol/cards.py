"""Card ids and their text form.

A game played with ``D`` decks has card ids ``0 .. 52*D - 1``. The initial (unshuffled) order
is deck-major, then suit (clubs, diamonds, hearts, spades), then rank ace to king::

    id = 52 * deck + 13 * suit + (rank - 1)

where ``deck`` is ``0 .. D-1``, ``suit`` is ``0 .. 3`` (index into :data:`SUITS`) and ``rank``
is ``1 .. 13`` (ace = 1, jack = 11, queen = 12, king = 13).

The *face* of a card is ``id % 52``: cards of different decks with the same face are
identical in play. A card's text is its rank text followed by its suit letter, e.g. id 0 is
``"AC"``, 12 is ``"KC"``, 13 is ``"AD"``, 51 is ``"KS"`` and 52 is ``"AC"`` again (second deck).
"""

from __future__ import annotations

SUITS = "CDHS"
"""Suit letters in id order: clubs, diamonds, hearts, spades."""

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
"""Rank texts in id order; ``RANKS[rank - 1]`` is the text of ``rank``."""

CARDS_PER_DECK = 52

_RED_SUITS = frozenset((1, 2))  # diamonds, hearts


def _check_id(card_id: int) -> int:
    if isinstance(card_id, bool) or not isinstance(card_id, int) or card_id < 0:
        raise ValueError(f"card id must be a non-negative int, got {card_id!r}")
    return card_id


def face_of(card_id: int) -> int:
    """The face ``0 .. 51`` of a card id (its id within one deck)."""
    return _check_id(card_id) % CARDS_PER_DECK


def deck_of(card_id: int) -> int:
    """The deck ``0 .. D-1`` a card id belongs to."""
    return _check_id(card_id) // CARDS_PER_DECK


def rank_of(card_id: int) -> int:
    """The rank ``1 .. 13`` of a card id (ace = 1, king = 13)."""
    return face_of(card_id) % 13 + 1


def suit_of(card_id: int) -> int:
    """The suit ``0 .. 3`` of a card id: clubs, diamonds, hearts, spades."""
    return face_of(card_id) // 13


def is_red(card_id: int) -> bool:
    """True for diamonds and hearts."""
    return suit_of(card_id) in _RED_SUITS


def card_text(card_id: int) -> str:
    """Rank text plus suit letter, e.g. ``card_text(0) == "AC"``, ``card_text(61) == "10C"``."""
    face = face_of(card_id)
    return RANKS[face % 13] + SUITS[face // 13]


def parse_card(text: str) -> int:
    """The face ``0 .. 51`` of a card text such as ``"AC"``, ``"10H"`` or ``"KS"``.

    Exact inverse of :func:`card_text` on faces; the text is case-sensitive and must be in
    the canonical form (``"10"``, not ``"T"``). Raises :class:`ValueError` otherwise.
    """
    if not isinstance(text, str) or len(text) < 2:
        raise ValueError(f"not a card text: {text!r}")
    rank_text, suit_letter = text[:-1], text[-1]
    if suit_letter not in SUITS or rank_text not in RANKS:
        raise ValueError(f"not a card text: {text!r}")
    return 13 * SUITS.index(suit_letter) + RANKS.index(rank_text)
