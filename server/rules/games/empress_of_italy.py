"""Empress of Italy (4 decks): sixteen foundations from one random base rank."""

from __future__ import annotations

from server.rules import cards
from server.rules.game import Op
from server.rules.games.base_rank import BaseRankGame


class EmpressOfItaly(BaseRankGame):
    name = "empress_of_italy"
    title = "Empress of Italy"
    decks = 4
    foundation_count = 16
    tableau_count = 11
    single_piles = ("reserve", "stock", "waste")
    routes = {
        "reserve": ("tableau", "foundation"),
        "waste": ("tableau", "foundation"),
        "tableau": ("tableau", "foundation"),
        "foundation": ("tableau",),
    }
    #: One line per pile kind: what it takes, for the client's pile labels and rules panel.
    pile_hints = {
        "foundation": "builds up in alternating colour from the base rank, K→A wraps, "
        "13 cards each",
        "tableau": "builds down in alternating colour; an emptied pile is refilled from the "
        "stock, then the waste",
        "reserve": "its top card goes to the tableau or a foundation",
        "stock": "deal turns one card onto the waste; one pass",
        "waste": "its top card goes to the tableau or a foundation",
    }
    summary = (
        "4 decks. The first card fixes the base rank; the 16 cards of that rank start the 16 "
        "foundations, which build up in alternating colour, wrapping K→A, to 13 cards. The "
        "tableau builds down in alternating colour; an emptied tableau pile is refilled at once "
        "from the stock, then the waste. 19-card reserve; one pass through the stock."
    )

    def deal_table(self, deck: list[int]) -> None:
        """The first card fixes the base rank; the 16 cards of that rank go, in deck
        order, to foundation[0..15]; then 19 to the reserve, 1 to each tableau pile
        and 162 to the stock (its next card is the deck's next)."""
        self.base_rank = base = cards.rank(deck[0])
        bases = [card for card in deck if cards.rank(card) == base]
        rest = [card for card in deck if cards.rank(card) != base]
        for pile, card in zip(self.foundations, bases, strict=True):
            pile.append(card)
        self.reserve.extend(rest[:19])
        for index, pile in enumerate(self.tableau):
            pile.append(rest[19 + index])
        self.stock.extend(reversed(rest[30:]))

    def after_move(self, source: int, target: int) -> list[Op]:
        """An emptied tableau pile takes the stock's top card, or the waste's: an
        empty pile, which takes any card, exists only once both are empty."""
        if self.piles[source] or self.piles_of_layout[source].kind != "tableau":
            return []
        for feeder in (self.stock_slot, self.waste_slot):
            if self.piles[feeder]:
                return self._move_card(feeder, source)
        return []
