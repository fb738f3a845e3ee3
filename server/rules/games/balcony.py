"""Balcony (1 deck): a Canfield cousin with alternating-colour foundations."""

from __future__ import annotations

from server.rules import cards
from server.rules.game import EMPTY_TABLEAU
from server.rules.games.base_rank import BaseRankGame


class Balcony(BaseRankGame):
    name = "balcony"
    title = "Balcony"
    decks = 1
    foundation_count = 4
    tableau_count = 7
    single_piles = ("reserve", "stock", "waste")
    routes = {
        "reserve": ("foundation", EMPTY_TABLEAU),
        "waste": ("tableau", "foundation"),
        "tableau": ("tableau", "foundation"),
        "foundation": ("tableau",),
    }
    #: One line per pile kind: what it takes, for the client's pile labels and rules panel.
    pile_hints = {
        "foundation": "builds up in alternating colour from the base rank, K→A wraps, "
        "13 cards each",
        "tableau": "builds down in alternating colour; any card fills an empty pile",
        "reserve": "its top card goes to a foundation or to an empty tableau pile",
        "stock": "deal turns one card onto the waste; one pass",
        "waste": "its top card goes to the tableau or a foundation",
    }
    summary = (
        "1 deck. Foundations build up in alternating colour from the first card's rank, "
        "wrapping K→A; the tableau builds down in alternating colour; any card may fill an "
        "empty tableau pile; the reserve's top goes to a foundation or an empty tableau pile; "
        "one pass through the stock."
    )

    def deal_table(self, deck: list[int]) -> None:
        """1 card to foundation[0] (the base rank), 7 to the reserve, 1 to each
        tableau pile, 37 to the stock (its next card is the deck's next)."""
        self.foundations[0].append(deck[0])
        self.base_rank = cards.rank(deck[0])
        self.reserve.extend(deck[1:8])
        for index, pile in enumerate(self.tableau):
            pile.append(deck[8 + index])
        self.stock.extend(reversed(deck[15:]))
