"""Matrimony (2 decks): eight fixed foundations, a stock dealt in rounds, 16 redeals."""

from __future__ import annotations

from collections.abc import Sequence

from server.rules import cards
from server.rules.game import NOTHING, Game, Op

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
QUEEN, JACK, TEN = 12, 11, 10

#: The first card of each foundation; foundation[0] builds up, the others down.
FIRST_CARDS = tuple(
    cards.face(rank, suit)
    for rank, suit in (
        (QUEEN, DIAMONDS),
        (JACK, DIAMONDS),
        (JACK, HEARTS),
        (JACK, HEARTS),
        (TEN, SPADES),
        (TEN, SPADES),
        (TEN, CLUBS),
        (TEN, CLUBS),
    )
)
REDEALS = 16


class Matrimony(Game):
    name = "matrimony"
    title = "Matrimony"
    decks = 2
    foundation_count = 8
    tableau_count = 16
    single_piles = ("stock",)
    routes = {"tableau": ("foundation",)}
    rule_texts = {
        "foundation": "foundation[0] builds up in suit from Q♦ (Q, K, A … J); the others build "
        "down in suit with wrap (… A, K, Q …), 13 cards each",
        "empty foundation": "foundation[0] takes only Q♦, [1] J♦, [2] and [3] J♥, [4] and [5] "
        "10♠, [6] and [7] 10♣",
    }
    #: One line per pile kind: what it takes, for the client's pile labels and rules panel.
    pile_hints = {
        "foundation": "Q♦ builds up; J♦, J♥, J♥, 10♠, 10♠, 10♣, 10♣ build down; in suit, "
        "with wrap, 13 cards each",
        "tableau": "its top card goes to a foundation only",
        "stock": "deal puts one card on each of the 16 piles; then 16 redeals gather the "
        "piles last to first and deal them out again",
    }
    summary = (
        "2 decks. Foundations start Q♦ (builds up) and J♦, J♥, J♥, 10♠, 10♠, 10♣, 10♣ (build "
        "down), in suit, with wrap, 13 cards each. Tableau top cards go to foundations only. "
        "'deal' puts one card on each of the 16 tableau piles; once the stock is empty, 16 "
        "redeals pick up the piles last to first and deal them out again."
    )

    def deal_table(self, deck: list[int]) -> None:
        """The first Q♦ to foundation[0], the first J♦ to foundation[1], 1 card to
        each tableau pile, 86 to the stock (its next card is the deck's next)."""
        rest = list(deck)
        for pile, first in zip(self.foundations[:2], FIRST_CARDS[:2], strict=True):
            card = next(c for c in rest if c % 52 == first)
            rest.remove(card)
            pile.append(card)
        for index, pile in enumerate(self.tableau):
            pile.append(rest[index])
        self.stock.extend(reversed(rest[16:]))
        self.redeals_left = REDEALS

    def foundation_wants(self, index: int) -> Sequence[int]:
        pile = self.foundations[index]
        if not pile:
            return (FIRST_CARDS[index],)
        if len(pile) >= self.foundation_size:
            return NOTHING
        step = cards.UP_IN_SUIT_WRAP if index == 0 else cards.DOWN_IN_SUIT_WRAP
        return step[pile[-1] % 52]

    def tableau_wants(self, index: int) -> Sequence[int]:
        return NOTHING  # the tableau does not build

    def can_deal(self) -> str | None:
        return None if self.stock else "the stock is empty; use redeal"

    def deal(self) -> list[Op]:
        """One card on each tableau pile in order, while the stock lasts."""
        stock = self.stock_slot
        ops: list[Op] = []
        for index in range(self.tableau_count):
            if not self.piles[stock]:
                break
            ops += self._move_card(stock, self.tableau_slots[index])
        return ops

    def can_redeal(self) -> str | None:
        if self.stock:
            return "redeals start once the stock is empty"
        if not self.redeals_left:
            return "all 16 redeals are used"
        return None

    def redeal(self) -> list[Op]:
        """Redeal k picks up tableau[16-k], turns it over (its bottom card first) and
        deals it one card a pile, from that pile on, wrapping to tableau[0]."""
        assert self.redeals_left
        start = self.redeals_left - 1
        self.redeals_left -= 1
        packet = list(self.tableau[start])
        self.tableau[start].clear()
        self._forget_kept()  # piles changed in place
        touched = []
        for offset, card in enumerate(packet):
            index = (start + offset) % self.tableau_count
            self.tableau[index].append(card)
            if index not in touched:
                touched.append(index)
        if start not in touched:
            touched.append(start)
        return [
            {
                "op": "set",
                "pile": f"tableau[{i}]",
                "cards": [cards.text(c) for c in self.tableau[i]],
            }
            for i in sorted(touched)
        ]
