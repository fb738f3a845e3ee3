"""Compact search models of the five games, one class per game.

The rules engine (:mod:`server.rules`) is the authority; these models restate its rules
on a representation built for search speed, and every winning line they find is replayed
by the engine before it is reported (:func:`server.solver.search.solve`).

A **state** is a tuple of piles in the engine's slot order (foundations, tableau, then the
game's single piles), each pile a tuple of card *faces* (``id % 52``) bottom first.  Two
copies of a card are different ids but the rules only look at faces, so the search treats
them as one (Balcony and Empress of Italy go further: their rules see only rank and
colour, see :class:`BaseRankModel`).  Matrimony appends one pseudo-pile holding the
redeals left.

A **move** is an int: ``source * 64 + target`` (slots) for a card move, or :data:`DEAL`,
:data:`REDEAL`.  :meth:`Model.text` turns it into the engine's move text.

Each model supplies, besides the rules:

* ``moves(state)``: the moves worth trying, best first, with moves that lead to the same
  position up to symmetry listed once (e.g. one empty pile stands for all of them); or a
  single *safe* move (see :meth:`Model.moves` and ``server/solver/README.md``), which the
  search then plays without branching;
* ``key(state)``: the canonical key of the transposition table, equal for positions that
  differ only by a permutation of interchangeable piles (``RULES.md`` makes a game's
  tableau piles interchangeable when every pile follows the same rules and nothing
  depends on a pile's index, and likewise its foundations), and leaving out what the rest
  determines (a pile that only ever loses its top card is known from its length).
"""

from __future__ import annotations

from collections.abc import Sequence

from server.rules import Game, cards
from server.rules.games.matrimony import FIRST_CARDS, REDEALS
from server.rules.moves import Pile

State = tuple[tuple[int, ...], ...]

DEAL = -1
REDEAL = -2

_DOWN_ALT_WRAP = cards.DOWN_ALTERNATE_WRAP
_UP_SUIT_WRAP = cards.UP_IN_SUIT_WRAP
_DOWN_SUIT_WRAP = cards.DOWN_IN_SUIT_WRAP


def _with_move(state: State, source: int, target: int) -> list[tuple[int, ...]]:
    piles = list(state)
    pile = piles[source]
    piles[source] = pile[:-1]
    piles[target] = (*piles[target], pile[-1])
    return piles


class Model:
    """The rules of one game, on compact states (see the module docstring)."""

    game_class: type[Game]

    def __init__(self, game: Game) -> None:
        cls = type(game)
        self.foundations = range(cls.foundation_count)
        self.nf = cls.foundation_count
        self.tableau = cls.tableau_slots
        self.total = game.total_cards
        self._texts = cls._move_table

    def state_of(self, game: Game) -> State:
        return tuple(tuple(card % 52 for card in pile) for pile in game.piles)

    def text(self, move: int) -> str:
        """The engine's text of a move."""
        if move == DEAL:
            return "deal"
        if move == REDEAL:
            return "redeal"
        text = self._texts[move >> 6][move & 63]
        assert text is not None, move
        return str(text)

    def score(self, state: State) -> int:
        return sum(len(state[slot]) for slot in self.foundations)

    #: The unit of the Luby restart lengths, in positions (see
    #: :func:`server.solver.search._restarts`): about the length of a line that plays the
    #: deal out, times the few backtracks a run needs once its first moves are right.
    restart_unit = 500

    #: The longest restart, in restart units; None lets the Luby lengths grow without
    #: bound.  Where a win comes within the first few hundred positions of a run or not
    #: at all (Colorado), longer runs only backtrack under a dive that has failed.
    longest_restart: int | None = None

    #: The share of the budget past its first slice that the complete run keeps beside the
    #: restarts (see :func:`server.solver.search._restarts`): for games whose deals are
    #: mostly lost, as only a complete search proves a loss.  Below 1.
    complete_share = 0.0

    def moves(self, state: State) -> list[int]:
        """The moves to try from ``state``, best first; ``[m]`` alone when ``m`` is safe
        (playing it cannot turn a winnable position into a lost one)."""
        raise NotImplementedError

    def play(self, state: State, move: int) -> State:
        raise NotImplementedError

    def key(self, state: State) -> object:
        raise NotImplementedError


# -- Balcony and Empress of Italy ---------------------------------------------------


#: Each card's stand-in where the rules see only rank and colour: the diamond of its rank
#: for a red card, the club for a black one.
_SAME_COLOUR = tuple(face % 13 + (13 if face // 13 in cards.RED_SUITS else 0) for face in range(52))


#: On same-colour faces: the face that goes on each face on a foundation (up one rank,
#: wrapping, the other colour), and the face that goes on it on the tableau (down one
#: rank, no wrap, the other colour; -1 under an ace).
_ABOVE_ON_FOUNDATION = tuple(_SAME_COLOUR[cards.UP_ALTERNATE_WRAP[face][0]] for face in range(52))
_BELOW_ON_TABLEAU = tuple(
    _SAME_COLOUR[cards.DOWN_ALTERNATE[face][0]] if cards.DOWN_ALTERNATE[face] else -1
    for face in range(52)
)


class BaseRankModel(Model):
    """Balcony and Empress of Italy: foundations up in alternating colour from the base
    rank (wrap, 13 cards, top card may go back to the tableau), tableau down in
    alternating colour without wrap, a reserve, a one-pass stock onto a waste.

    Interchangeable cards: the rules see a card's rank and colour only, never its suit,
    so the state holds each card as the face of its rank and colour in one suit
    (:data:`_SAME_COLOUR`): positions that differ by swapping two cards of a rank and
    colour are one position, and the search sees only one of them.

    Interchangeable piles: all foundations (same rule, the base rank, for each) and all
    tableau piles.  The reserve and the stock only lose their top card, so their lengths
    stand for them in the key.  No safe moves: a foundation's top card may come back, and
    whether a card is better on a foundation or kept as a tableau base depends on cards
    not yet seen, so every move branches.
    """

    #: Whether the reserve's top may go onto a non-empty tableau pile (Empress).
    reserve_builds = False
    #: Whether an emptied tableau pile is refilled from the stock, then the waste (Empress).
    refills = False
    #: Whether a *swap* (a tableau card moved onto a top of the same face as the card it
    #: leaves: the tops stay the same, only the stacks beneath trade places) is tried
    #: after a deal rather than with the other moves between piles (Empress).
    swaps_late = False

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        assert game.base_rank is not None
        self.base_faces = frozenset(cards.faces_of_rank(game.base_rank))
        slot = type(game).slot_of
        self.reserve = slot[Pile("reserve")]
        self.stock = slot[Pile("stock")]
        self.waste = slot[Pile("waste")]
        self.nt = len(self.tableau)

    def state_of(self, game: Game) -> State:
        colour = _SAME_COLOUR
        return tuple(tuple(colour[card % 52] for card in pile) for pile in game.piles)

    def moves(self, state: State) -> list[int]:
        nf = self.nf
        tableau = self.tableau
        above, below = _ABOVE_ON_FOUNDATION, _BELOW_ON_TABLEAU
        # Foundations with the same top are the same pile (its rank gives its length from
        # the base rank, and colours alternate down to its first card), so one of them
        # stands for all: as the target of the card that goes on it, and as the source of
        # its top card going back; the first empty one stands for all empty ones.
        takes: dict[int, int] = {}
        tops: list[int] = []
        top_slots: list[int] = []
        empty_foundation = -1
        for slot in range(nf):
            pile = state[slot]
            if not pile:
                if empty_foundation < 0:
                    empty_foundation = slot
                continue
            top = pile[-1]
            if top in tops:
                continue
            tops.append(top)
            top_slots.append(slot)
            if len(pile) < 13:
                takes[above[top]] = slot
        builds: dict[int, list[int]] = {}
        empty_tableau = -1
        for slot in tableau:
            pile = state[slot]
            if pile:
                face = below[pile[-1]]
                if face >= 0:
                    builds.setdefault(face, []).append(slot)
            elif empty_tableau < 0:
                empty_tableau = slot
        base = self.base_faces
        to_foundation: list[int] = []
        from_reserve: list[int] = []
        from_waste: list[int] = []
        between: list[int] = []
        swaps: list[int] = []
        to_empty: list[int] = []
        reserve = state[self.reserve]
        if reserve:
            card = reserve[-1]
            source = self.reserve << 6
            if card in takes:
                to_foundation.append(source | takes[card])
            elif empty_foundation >= 0 and card in base:
                to_foundation.append(source | empty_foundation)
            if self.reserve_builds:
                for slot in builds.get(card, ()):
                    from_reserve.append(source | slot)
            if empty_tableau >= 0:
                from_reserve.append(source | empty_tableau)
        waste = state[self.waste]
        if waste:
            card = waste[-1]
            source = self.waste << 6
            if card in takes:
                to_foundation.append(source | takes[card])
            elif empty_foundation >= 0 and card in base:
                to_foundation.append(source | empty_foundation)
            for target in builds.get(card, ()):
                from_waste.append(source | target)
            if empty_tableau >= 0:
                from_waste.append(source | empty_tableau)
        swaps_late = self.swaps_late
        for slot in tableau:
            pile = state[slot]
            if not pile:
                continue
            card = pile[-1]
            source = slot << 6
            if card in takes:
                to_foundation.append(source | takes[card])
            elif empty_foundation >= 0 and card in base:
                to_foundation.append(source | empty_foundation)
            # -1 is no face: with swaps_late off every move between piles is in between.
            under = pile[-2] if swaps_late and len(pile) > 1 else -1
            for target in builds.get(card, ()):
                if target != slot:
                    if state[target][-1] == under:
                        swaps.append(source | target)
                    else:
                        between.append(source | target)
            # A lone card moved to another empty pile gives the same position.
            if empty_tableau >= 0 and len(pile) > 1:
                to_empty.append(source | empty_tableau)
        back: list[int] = []
        for top, slot in zip(tops, top_slots, strict=True):
            source = slot << 6
            for target in builds.get(top, ()):
                back.append(source | target)
            if empty_tableau >= 0:
                back.append(source | empty_tableau)
        moves = to_foundation + from_waste + between + from_reserve + to_empty
        if state[self.stock]:
            moves.append(DEAL)
        return moves + swaps + back

    def play(self, state: State, move: int) -> State:
        if move == DEAL:
            piles = _with_move(state, self.stock, self.waste)
            return tuple(piles)
        source, target = move >> 6, move & 63
        piles = _with_move(state, source, target)
        if self.refills and not piles[source] and source in self.tableau:
            for feeder in (self.stock, self.waste):
                if piles[feeder]:
                    card = piles[feeder][-1]
                    piles[feeder] = piles[feeder][:-1]
                    piles[source] = (card,)
                    break
        return tuple(piles)

    def key(self, state: State) -> object:
        nf, nt = self.nf, self.nt
        return (
            tuple(sorted(state[:nf])),
            tuple(sorted(state[nf : nf + nt])),
            len(state[self.reserve]),
            len(state[self.stock]),
            state[self.waste],
        )


class BalconyModel(BaseRankModel):
    """Balcony: the reserve's top goes to a foundation or an empty pile only; no refills."""


class EmpressModel(BaseRankModel):
    reserve_builds = True
    refills = True
    swaps_late = True
    # A won line is about 400 positions; wins come within 400-2,400 positions of a run.
    restart_unit = 600
    longest_restart = 4


# -- Colorado -------------------------------------------------------------------------

_ACES = range(0, 4)
_KINGS = range(4, 8)
#: Each face's suit and rank (1 to 13).
_SUIT_RANK = [(face // 13, face % 13 + 1) for face in range(52)]


class ColoradoModel(Model):
    """Colorado: 4 ace piles up in suit, 4 king piles down in suit (one suit per pile of
    a kind; no card leaves), 20 tableau piles that only the stock's top card may cover,
    an emptied pile refilled at once from the stock.

    Interchangeable piles: the ace piles among themselves, the king piles among
    themselves, and all tableau piles.  Each suit's 26 cards fill its ace pile and its
    king pile, one copy of each rank in each.

    Safe moves (played alone, without trying the alternatives):

    * a tableau top card ``c`` to the foundation ``F`` that takes it, when the other copy
      of ``c`` is already on the other pile of its suit (so ``c`` can only ever go to
      ``F``, and ``F`` waits for it) and the move empties no pile while the stock has
      cards (so it triggers no refill).  Any winning line from before the move still
      works after it, with its own move of ``c`` to ``F`` left out: ``F`` takes nothing
      else until then, every other top card is the same, and stock cards that the line
      puts on ``c`` land on the card below it instead, which the line never touches
      before ``c`` leaves.
    * the stock's card ``c`` to the foundation ``F`` that takes it, on the same
      condition.  A winning line from before puts ``c`` on some pile ``P`` (or on ``F``:
      the same move) and later moves it to ``F``, as nothing else can take it; after the
      move the same line wins with those two moves left out: ``F`` waits for ``c`` alone,
      the next stock card comes up at the same point of the line, and what the line
      puts on ``c`` meanwhile lands on ``P``'s card below it, which the line does not
      touch before ``c`` leaves.

    Lost positions (:meth:`_lost`): a tableau card that must wait for a card lying
    under it, whichever foundation it goes to (directly, or through cards in other
    piles), never leaves; the model offers no move from such a position.
    """

    restart_unit = 150
    longest_restart = 2

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        self.stock = type(game).stock_slot

    @staticmethod
    def _foundations(state: State) -> tuple[list[int], list[int], list[int], list[int]]:
        """Per suit: the rank its ace pile has reached (0: not started), the rank its king
        pile has come down to (14: not started), and the slot of each of the two (for a
        suit not started, the first empty pile of the kind: one is always free, as no two
        piles of a kind hold the same suit)."""
        ups, downs = [0, 0, 0, 0], [14, 14, 14, 14]
        up_slots, down_slots = [-1, -1, -1, -1], [-1, -1, -1, -1]
        free_up = free_down = -1
        for slot in _ACES:
            pile = state[slot]
            if pile:
                suit = pile[0] // 13
                ups[suit], up_slots[suit] = len(pile), slot
            elif free_up < 0:
                free_up = slot
        for slot in _KINGS:
            pile = state[slot]
            if pile:
                suit = pile[0] // 13
                downs[suit], down_slots[suit] = 14 - len(pile), slot
            elif free_down < 0:
                free_down = slot
        for suit in range(4):
            if up_slots[suit] < 0:
                up_slots[suit] = free_up
            if down_slots[suit] < 0:
                down_slots[suit] = free_down
        return ups, downs, up_slots, down_slots

    @staticmethod
    def _distance(ups: list[int], downs: list[int], face: int, twin_in_reach: bool) -> int:
        """How many cards of the suit must reach the foundations before ``face`` is
        needed: on the sooner of its two piles, or on the later when its other copy is in
        reach too (another pile's top or the stock's card), as that copy can go first."""
        suit, rank = _SUIT_RANK[face]
        reached, lowest = ups[suit], downs[suit]
        up = rank - reached - 1 if rank > reached else 99
        down = lowest - rank - 1 if rank < lowest else 99
        if twin_in_reach and up < 99 and down < 99:
            return up if up > down else down
        return up if up < down else down

    def _lost(self, state: State, ups: list[int], downs: list[int]) -> bool:
        """Whether no play clears the tableau, shown on easier rules.

        The easier rules: every stock card is at hand from the start and covers nothing,
        and a foundation passes a rank as soon as one copy of it is at hand (taken off
        the tableau, or in the stock), so one copy may serve both piles of its suit.  A
        tableau card leaves, once uncovered, when a pile of its suit that does not hold
        its face yet has reached its rank.  Every real play is a play on these rules
        with every pile at least as far on, so a card that never leaves on them never
        leaves at all.  The copies make it strong: a face already on one pile of its
        suit has one copy left, which only the other pile takes, in its turn (once the
        king pile holds an 8♠ and a 9♠, a 9♠ lying on the last 8♠ never leaves).
        """
        up_next = [up + 1 for up in ups]
        down_next = [down - 1 for down in downs]
        at_hand = [0, 0, 0, 0]  # per suit, a bit for each rank with a copy at hand
        for face in state[self.stock]:
            suit, rank = _SUIT_RANK[face]
            at_hand[suit] |= 1 << rank
        for suit in range(4):
            ranks = at_hand[suit]
            while ranks >> up_next[suit] & 1:
                up_next[suit] += 1
            while ranks >> down_next[suit] & 1:
                down_next[suit] -= 1
        piles = [list(state[slot]) for slot in self.tableau if state[slot]]
        left = sum(map(len, piles))
        progress = True
        while progress and left:
            progress = False
            for pile in piles:
                while pile:
                    suit, rank = _SUIT_RANK[pile[-1]]
                    if not (
                        ups[suit] < rank <= up_next[suit] or down_next[suit] <= rank < downs[suit]
                    ):
                        break
                    pile.pop()
                    left -= 1
                    progress = True
                    ranks = at_hand[suit] = at_hand[suit] | 1 << rank
                    while ranks >> up_next[suit] & 1:
                        up_next[suit] += 1
                    while ranks >> down_next[suit] & 1:
                        down_next[suit] -= 1
        return left > 0

    def moves(self, state: State) -> list[int]:
        # A face (suit, rank from 1) goes up when its ace pile has reached rank - 1, down
        # when its king pile has come down to rank + 1; it is *placed* on the other pile
        # of its suit when the ace pile has reached it or the king pile come down to it.
        ups, downs, up_slots, down_slots = self._foundations(state)
        if self._lost(state, ups, downs):
            return []
        stock = state[self.stock]
        moves: list[int] = []
        in_reach: dict[int, int] = {}  # copies of each face on tableau tops (and stock)
        for slot in self.tableau:
            pile = state[slot]
            if not pile:
                continue
            top = pile[-1]
            in_reach[top] = in_reach.get(top, 0) + 1
            suit, rank = _SUIT_RANK[top]
            up, down = ups[suit] == rank - 1, downs[suit] == rank + 1
            if not (up or down):
                continue
            no_refill = len(pile) > 1 or not stock
            if up:
                move = slot << 6 | up_slots[suit]
                if no_refill and rank >= downs[suit]:
                    return [move]
                moves.append(move)
            if down:
                move = slot << 6 | down_slots[suit]
                if no_refill and rank <= ups[suit]:
                    return [move]
                moves.append(move)
        if not stock:
            return moves
        card = stock[-1]
        source = self.stock << 6
        suit, rank = _SUIT_RANK[card]
        up, down = ups[suit] == rank - 1, downs[suit] == rank + 1
        if up:
            if rank >= downs[suit]:
                return [source | up_slots[suit]]
            moves.append(source | up_slots[suit])
        if down:
            if rank <= ups[suit]:
                return [source | down_slots[suit]]
            moves.append(source | down_slots[suit])
        # The stock's card on a tableau pile: bury the top card needed last first;
        # piles with the same cards give the same position, so one of them is tried.
        distance = self._distance
        in_reach[card] = in_reach.get(card, 0) + 1
        seen: set[tuple[int, ...]] = set()
        ranked = []
        need = distance(ups, downs, card, in_reach[card] > 1)
        for slot in self.tableau:
            pile = state[slot]
            if pile in seen:
                continue
            seen.add(pile)
            if not pile:  # only in a constructed position: buries nothing, so first
                ranked.append(((-1, 0), slot))
                continue
            top = pile[-1]
            covered = distance(ups, downs, top, in_reach[top] > 1)
            ranked.append(((0, covered) if covered > need else (1, -covered), slot))
        ranked.sort()
        moves.extend(source | slot for _, slot in ranked)
        return moves

    def play(self, state: State, move: int) -> State:
        source, target = move >> 6, move & 63
        piles = _with_move(state, source, target)
        stock = self.stock
        if source != stock and not piles[source] and piles[stock]:
            card = piles[stock][-1]
            piles[stock] = piles[stock][:-1]
            piles[source] = (card,)
        return tuple(piles)

    def key(self, state: State) -> object:
        # A foundation is its suit and length (which pile of its kind holds a suit does
        # not matter); the stock its length.
        heights = [0] * 8
        for slot in range(8):
            pile = state[slot]
            if pile:
                heights[(slot & 4) | pile[0] // 13] = len(pile)
        return (tuple(heights), tuple(sorted(state[8:28])), len(state[self.stock]))


# -- Gloucestershire --------------------------------------------------------------------


class GloucestershireModel(Model):
    """Gloucestershire: 4 foundations up in suit from an ace, twice round (26 cards, one
    pile per suit, top card may go back), 8 tableau piles down in alternating colour
    with wrap, any card onto an empty pile, and the bouquet whose last card is exposed.

    Interchangeable piles: the foundations (same rule for each) and the tableau piles.
    A foundation is its first card and length; the bouquet its length.  No safe moves:
    a card on the foundation may come back, and with wrap every card can host another.
    Nearly every deal is lost, so the complete run keeps half of the budget.
    """

    complete_share = 0.5

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        self.bouquet = type(game).slot_of[Pile("bouquet")]

    def moves(self, state: State) -> list[int]:
        takes: dict[int, int] = {}
        held = []
        empty_foundation = -1
        for slot in range(4):
            pile = state[slot]
            if pile:
                held.append(pile[0] // 13)
                if len(pile) < 26:
                    takes[_UP_SUIT_WRAP[pile[-1]][0]] = slot
            elif empty_foundation < 0:
                empty_foundation = slot
        if empty_foundation >= 0:
            for suit in range(4):
                if suit not in held:
                    takes[13 * suit] = empty_foundation
        builds: dict[int, list[int]] = {}
        empty_tableau = -1
        for slot in self.tableau:
            pile = state[slot]
            if pile:
                for face in _DOWN_ALT_WRAP[pile[-1]]:
                    builds.setdefault(face, []).append(slot)
            elif empty_tableau < 0:
                empty_tableau = slot
        to_foundation: list[int] = []
        to_tableau: list[int] = []
        to_empty: list[int] = []
        bouquet = state[self.bouquet]
        if bouquet:
            card = bouquet[-1]
            source = self.bouquet << 6
            if card in takes:
                to_foundation.append(source | takes[card])
            for target in builds.get(card, ()):
                to_tableau.append(source | target)
            if empty_tableau >= 0:
                to_empty.append(source | empty_tableau)
        for slot in self.tableau:
            pile = state[slot]
            if not pile:
                continue
            card = pile[-1]
            source = slot << 6
            if card in takes:
                to_foundation.append(source | takes[card])
            for target in builds.get(card, ()):
                if target != slot:
                    to_tableau.append(source | target)
            if empty_tableau >= 0 and len(pile) > 1:
                to_empty.append(source | empty_tableau)
        back: list[int] = []
        for slot in range(4):
            pile = state[slot]
            if pile:
                source = slot << 6
                for target in builds.get(pile[-1], ()):
                    back.append(source | target)
                if empty_tableau >= 0:
                    back.append(source | empty_tableau)
        return to_foundation + to_tableau + to_empty + back

    def play(self, state: State, move: int) -> State:
        return tuple(_with_move(state, move >> 6, move & 63))

    def key(self, state: State) -> object:
        return (
            tuple(sorted((p[0], len(p)) for p in state[0:4] if p)),
            tuple(sorted(state[4:12])),
            len(state[self.bouquet]),
        )


# -- Matrimony ----------------------------------------------------------------------------

_PAIRS = ((2, 3), (4, 5), (6, 7))
#: The other foundation that takes the same faces (the two diamond piles, and each pair).
_PARTNER = (1, 0, 3, 2, 5, 4, 7, 6)


def _positions(slot: int) -> dict[int, int]:
    """Where each face of its suit lies in foundation ``slot`` (0 = its first card)."""
    step = _UP_SUIT_WRAP if slot == 0 else _DOWN_SUIT_WRAP
    face, positions = FIRST_CARDS[slot], {}
    for position in range(13):
        positions[face] = position
        face = step[face][0]
    return positions


_POSITION = tuple(_positions(slot) for slot in range(8))


class MatrimonyModel(Model):
    """Matrimony: 8 fixed foundations (no card leaves), 16 tableau piles whose top cards
    go to the foundations only, ``deal`` (one card on each pile) at any time while the
    stock lasts, then 16 redeals.  The state's last pseudo-pile holds the redeals left.

    Interchangeable piles: the two J♥ foundations, the two 10♠ and the two 10♣ (same first
    card, same direction).  A foundation is its length (its cards follow from its first
    card).  The tableau piles are not interchangeable (deals and redeals go by index).
    Safe move: a tableau top card ``c`` to the foundation ``F`` that wants it, when the
    other foundation of its suit already holds ``c``'s face (so ``c`` can only ever go to
    ``F``, which takes nothing else until then), the stock is empty and no redeal left
    will pick up ``c``'s pile (redeals pick up ``tableau[redeals_left - 1]`` down to
    ``tableau[0]``).  A winning line from before the move still works after it with its
    own move of ``c`` left out: the cards that redeals lay on ``c`` land on the card below
    it instead, and as the pile is never picked up, no packet changes.  Earlier, taking a
    card off a pile changes the packets that later redeals lay out, so every choice
    branches.
    """

    # Its wins, too, come within 125-267 positions of a run (BENCHMARKS.md, stop 38).
    restart_unit = 150
    longest_restart = 2

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        self.stock = type(game).stock_slot
        self.redeals = self.stock + 1
        self.first_tableau = self.tableau.start

    def state_of(self, game: Game) -> State:
        redeals = REDEALS if game.redeals_left is None else game.redeals_left
        return (*super().state_of(game), (redeals,))

    def moves(self, state: State) -> list[int]:
        wants: list[int] = []
        for slot in range(8):
            pile = state[slot]
            if not pile:
                wants.append(FIRST_CARDS[slot])
            elif len(pile) < 13:
                step = _UP_SUIT_WRAP if slot == 0 else _DOWN_SUIT_WRAP
                wants.append(step[pile[-1]][0])
            else:
                wants.append(-1)
        for first, second in _PAIRS:
            if wants[first] == wants[second]:
                wants[second] = -1
        moves: list[int] = []
        # Piles no redeal will pick up again (none while the stock lasts).
        settled = self.first_tableau + (16 if state[self.stock] else state[self.redeals][0])
        for slot in self.tableau:
            pile = state[slot]
            if pile:
                card = pile[-1]
                for target in range(8):
                    if wants[target] == card:
                        move = slot << 6 | target
                        if slot >= settled:
                            partner = _PARTNER[target]
                            if len(state[partner]) > _POSITION[partner][card]:
                                return [move]
                        moves.append(move)
        if state[self.stock]:
            moves.append(DEAL)
        elif state[self.redeals][0]:
            moves.append(REDEAL)
        return moves

    def play(self, state: State, move: int) -> State:
        if move >= 0:
            return tuple(_with_move(state, move >> 6, move & 63))
        piles = list(state)
        first = self.first_tableau
        if move == DEAL:
            stock = list(piles[self.stock])
            for index in range(16):
                if not stock:
                    break
                piles[first + index] = (*piles[first + index], stock.pop())
            piles[self.stock] = tuple(stock)
            return tuple(piles)
        start = piles[self.redeals][0] - 1
        piles[self.redeals] = (start,)
        packet = piles[first + start]
        piles[first + start] = ()
        for offset, card in enumerate(packet):
            slot = first + (start + offset) % 16
            piles[slot] = (*piles[slot], card)
        return tuple(piles)

    def key(self, state: State) -> object:
        lengths = [len(state[slot]) for slot in range(8)]
        for first, second in _PAIRS:
            if lengths[first] > lengths[second]:
                lengths[first], lengths[second] = lengths[second], lengths[first]
        return (
            tuple(lengths),
            state[self.first_tableau : self.stock],
            len(state[self.stock]),
            state[self.redeals][0],
        )


MODELS: dict[str, type[Model]] = {
    "balcony": BalconyModel,
    "empress_of_italy": EmpressModel,
    "colorado": ColoradoModel,
    "gloucestershire": GloucestershireModel,
    "matrimony": MatrimonyModel,
}


def model_for(game: Game) -> Model:
    return MODELS[game.name](game)


__all__: Sequence[str] = ["DEAL", "MODELS", "REDEAL", "Model", "State", "model_for"]
