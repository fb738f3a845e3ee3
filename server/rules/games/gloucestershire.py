"""Gloucestershire (2 decks): Flower Garden doubled, with wrapping ranks."""

from __future__ import annotations

from collections.abc import Sequence

from server.rules import cards
from server.rules.game import ANY, NOTHING, Game

STAIRCASE = (3, 4, 5, 6, 7, 8, 9, 10)


class Gloucestershire(Game):
    name = "gloucestershire"
    title = "Gloucestershire"
    decks = 2
    foundation_wants_read_all = True  # an empty foundation takes a suit not yet begun
    foundation_count = 4
    tableau_count = 8
    single_piles = ("bouquet",)
    foundation_size = 26
    routes = {
        "bouquet": ("foundation", "tableau"),
        "tableau": ("tableau", "foundation"),
        "foundation": ("tableau",),
    }
    rule_texts = {
        "foundation": "foundations build up in suit, an A following the K, to 26 cards",
        "empty foundation": "an empty foundation takes only an ace of a suit no other "
        "foundation holds",
        "tableau": "the tableau builds down by one rank in alternating colour, a K going on an A",
    }
    #: One line per pile kind: what it takes, for the client's pile labels and rules panel.
    pile_hints = {
        "foundation": "builds up in suit from an ace, twice round (A after K), 26 cards each",
        "tableau": "builds down in alternating colour, K on A; any card fills an empty pile",
        "bouquet": "only its last card (marked) plays, to a foundation or the tableau",
    }
    summary = (
        "2 decks. Foundations build up in suit from the ace, twice round (A after K), one per "
        "suit, 26 cards each. The 8 tableau piles (3 to 10 cards) build down in alternating "
        "colour with wrap (K on A); any card may fill an empty pile. Only the bouquet's "
        "exposed card may be played."
    )

    def deal_table(self, deck: list[int]) -> None:
        """tableau[0..7] get 3..10 cards, pile by pile; the 52 left form the bouquet,
        the last one exposed."""
        position = 0
        for pile, size in zip(self.tableau, STAIRCASE, strict=True):
            pile.extend(deck[position : position + size])
            position += size
        self.bouquet.extend(deck[position:])

    def foundation_wants(self, index: int) -> Sequence[int]:
        pile = self.foundations[index]
        if not pile:
            taken = {cards.suit(f[0]) for f in self.foundations if f}
            return cards.faces_of_rank(1, tuple(s for s in range(4) if s not in taken))
        if len(pile) >= self.foundation_size:
            return NOTHING
        return cards.UP_IN_SUIT_WRAP[pile[-1] % 52]

    def tableau_wants(self, index: int) -> Sequence[int]:
        pile = self.tableau[index]
        return cards.DOWN_ALTERNATE_WRAP[pile[-1] % 52] if pile else ANY
