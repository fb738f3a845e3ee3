"""Empress of Italy (4 decks): sixteen foundations from one random base rank."""

from __future__ import annotations

from collections.abc import Sequence

from server.rules import cards
from server.rules.game import ANY, NOTHING, Game, Op


class EmpressOfItaly(Game):
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
    rule_texts = {
        "foundation": "foundations build up by one rank in alternating colour, wrapping K→A",
        "empty foundation": "an empty foundation takes only a card of rank {base}",
        "tableau": "the tableau builds down by one rank in alternating colour (nothing on an A)",
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

    def foundation_wants(self, index: int) -> Sequence[int]:
        pile = self.foundations[index]
        if not pile:
            assert self.base_rank is not None
            return cards.faces_of_rank(self.base_rank)
        if len(pile) >= self.foundation_size:
            return NOTHING
        return cards.UP_ALTERNATE_WRAP[pile[-1] % 52]

    def tableau_wants(self, index: int) -> Sequence[int]:
        pile = self.tableau[index]
        # An empty pile exists only once the stock and the waste are both empty.
        return cards.DOWN_ALTERNATE[pile[-1] % 52] if pile else ANY

    def after_move(self, source: int, target: int) -> list[Op]:
        """An emptied tableau pile takes the stock's top card, or the waste's."""
        if self.piles[source] or self.piles_of_layout[source].kind != "tableau":
            return []
        for feeder in (self.stock_slot, self.waste_slot):
            if self.piles[feeder]:
                return self._move_card(feeder, source)
        return []
