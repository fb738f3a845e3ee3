"""Foundations from one base rank, in alternating colour: Balcony and Empress of Italy."""

from __future__ import annotations

from collections.abc import Sequence

from server.rules import cards
from server.rules.game import ANY, NOTHING, Game


class BaseRankGame(Game):
    """Every foundation starts with a card of the game's base rank and builds up by
    one rank in alternating colour, wrapping K→A, to 13 cards; the tableau builds
    down by one rank in alternating colour, with no wrap; any card may go onto an
    empty tableau pile."""

    rule_texts = {
        "foundation": "foundations build up by one rank in alternating colour, wrapping K→A",
        "empty foundation": "an empty foundation takes only a card of rank {base}",
        "tableau": "the tableau builds down by one rank in alternating colour (nothing on an A)",
    }

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
        return cards.DOWN_ALTERNATE[pile[-1] % 52] if pile else ANY
