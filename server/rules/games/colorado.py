"""Colorado (2 decks): twenty storage piles fed from a face-up stock."""

from __future__ import annotations

from collections.abc import Sequence

from server.rules import cards
from server.rules.game import ANY, NOTHING, Game, Op

ACE_PILES = range(0, 4)
KING_PILES = range(4, 8)


class Colorado(Game):
    name = "colorado"
    title = "Colorado"
    decks = 2
    foundation_wants_read_all = True  # an empty foundation takes a suit not yet begun
    foundation_count = 8
    tableau_count = 20
    single_piles = ("stock",)
    stock_face_up = True
    routes = {
        "stock": ("tableau", "foundation"),
        "tableau": ("foundation",),
    }
    rule_texts = {
        "foundation": "foundations 0-3 build up in suit from A to K, foundations 4-7 build "
        "down in suit from K to A",
        "empty foundation": "an empty ace pile (0-3) takes an ace, an empty king pile (4-7) "
        "a king, of a suit no other pile of its kind holds",
        "tableau": "the tableau does not build; only the stock's card may go on it",
    }
    #: One line per pile kind: what it takes, for the client's pile labels and rules panel.
    pile_hints = {
        "foundation": "the first four build up in suit from an ace, the last four down in "
        "suit from a king",
        "tableau": "takes only the stock's card; its top card goes to a foundation; an "
        "emptied pile is refilled from the stock",
        "stock": "its face-up card goes to any tableau pile or a foundation; one pass",
    }
    summary = (
        "2 decks. Foundations 0-3 build up in suit from any ace, 4-7 down in suit from any "
        "king, one pile per suit each. The 20 tableau piles do not build: the stock's face-up "
        "top card may go on any of them or on a foundation; an emptied pile is refilled at "
        "once from the stock. One pass, no waste."
    )

    def deal_table(self, deck: list[int]) -> None:
        """1 card to each of tableau[0..19]; 84 to the stock, top card face up."""
        for index, pile in enumerate(self.tableau):
            pile.append(deck[index])
        self.stock.extend(reversed(deck[20:]))

    def foundation_wants(self, index: int) -> Sequence[int]:
        pile = self.foundations[index]
        piles_of_kind = ACE_PILES if index in ACE_PILES else KING_PILES
        if not pile:
            start = 1 if index in ACE_PILES else 13
            taken = {
                cards.suit(self.foundations[i][0]) for i in piles_of_kind if self.foundations[i]
            }
            return cards.faces_of_rank(start, tuple(s for s in range(4) if s not in taken))
        if len(pile) >= self.foundation_size:
            return NOTHING
        step = cards.UP_IN_SUIT if index in ACE_PILES else cards.DOWN_IN_SUIT
        return step[pile[-1] % 52]

    def tableau_wants(self, index: int) -> Sequence[int]:
        return ANY  # routes let only the stock's card come here

    def after_move(self, source: int, target: int) -> list[Op]:
        """An emptied tableau pile takes the stock's top card at once; the stock's
        new top card is then shown."""
        stock = self.stock_slot
        ops = []
        emptied = not self.piles[source] and self.piles_of_layout[source].kind == "tableau"
        if emptied and self.piles[stock]:
            ops += self._move_card(stock, source)
        if source == stock or ops:
            pile = self.piles[stock]
            ops.append(
                {"op": "reveal", "pile": "stock", "card": cards.text(pile[-1]) if pile else None}
            )
        return ops
