"""``undo``: take back the last move still in effect (casual games; ``protocol/DIFF.md`` §2).

The one place undo's meaning lives: the server plays an ``undo`` with
:func:`undo_logged` (from the deal and the game's log), and the audit replays every log
through a :class:`Timeline` (which keeps the state before each move in effect). Pure,
like the rest of the engine, and on top of :class:`Game`'s API (a game itself knows
nothing of undo).

``undo`` reverts the last move that is not an ``undo`` and is still in effect: the
table, status, score and redeals return exactly to what they were before it, so
several undos in a row go further back. It is a move of a game being played or stuck
(stuck is not final while a move is in effect to take back; won and resigned are), and
only of a casual game.
"""

from __future__ import annotations

from collections.abc import Iterable

from server.rules import cards
from server.rules.game import PLAYING, STUCK, Game, Op
from server.rules.moves import IllegalMove

UNDO = "undo"
#: The statuses an undo may leave: a stuck game is not final while a move is in effect.
UNDOABLE = (PLAYING, STUCK)


class Timeline:
    """A game with the state before each of its moves still in effect."""

    def __init__(self, game: Game, ranked: bool = False) -> None:
        self.game = game
        self.ranked = ranked
        #: ``to_bytes`` of the game before each move still in effect, oldest first.
        self._before: list[bytes] = []

    @classmethod
    def replay(cls, game: Game, moves: Iterable[str], ranked: bool = False) -> Timeline:
        """``game`` (as dealt) after ``moves``, undos included; raises :class:`IllegalMove`."""
        timeline = cls(game, ranked)
        for move in moves:
            timeline.play(move)
        return timeline

    @property
    def undoable(self) -> int:
        """How many undos in a row the game takes now."""
        return len(self._before) if self.game.status in UNDOABLE else 0

    def play(self, move: str) -> list[Op]:
        """Play ``move`` (``undo`` included) on :attr:`game`; the ops it made (``DIFF.md``).

        :attr:`game` is a new object after an ``undo``.
        """
        if move != UNDO:
            before = self.game.to_bytes()
            ops = self.game.play(move)
            self._before.append(before)
            return ops
        if self.ranked:
            raise IllegalMove("undo is for casual games: a ranked game takes none", "undo_ranked")
        if self.game.status not in UNDOABLE:
            raise IllegalMove(f"the game is over ({self.game.status})", "game_over")
        if not self._before:
            raise IllegalMove("there is no move to undo", "nothing_to_undo")
        earlier = type(self.game).from_bytes(self._before.pop())
        ops = ops_between(self.game, earlier)
        self.game = earlier
        return ops


def moves_in_effect(moves: Iterable[str]) -> list[str]:
    """The moves of a log that no ``undo`` has taken back, in order (the log's undos were
    all accepted, so each takes back the last move still in effect)."""
    effect: list[str] = []
    for move in moves:
        if move != UNDO:
            effect.append(move)
        elif effect:
            effect.pop()
        else:
            raise IllegalMove("there is no move to undo", "nothing_to_undo")
    return effect


def undo_logged(current: Game, deal: Game, moves: Iterable[str]) -> tuple[Game, list[Op]]:
    """``undo`` in a game whose log is ``moves`` and which is now ``current``: the game as
    it was before the last move still in effect, and the ops that take ``current`` there.

    The server's undo: it replays from ``deal`` (the game as dealt, which it plays on)
    only the moves still in effect but the last, so it costs a rules move per move in
    effect and nothing per undone one; it ends in the state :class:`Timeline` gives.
    """
    if current.status not in UNDOABLE:
        raise IllegalMove(f"the game is over ({current.status})", "game_over")
    effect = moves_in_effect(moves)
    if not effect:
        raise IllegalMove("there is no move to undo", "nothing_to_undo")
    for move in effect[:-1]:
        deal.play(move)
    return deal, ops_between(current, deal)


def ops_between(current: Game, earlier: Game) -> list[Op]:
    """Ops that take the view (or the full table) of ``current`` to that of ``earlier``,
    the game as it was before the move being undone.

    First the cards that go back onto the stock, one ``move`` each from the pile whose
    top it is now (face up: nothing hidden is told), then a ``move`` back for each card
    that went from one pile to another, then a ``set`` for every other pile that
    differs (a redeal's), then ``redeals_left`` when it changes.
    """
    piles = [list(pile) for pile in current.piles]
    ops: list[Op] = []
    stock = current.stock_slot
    if stock >= 0:
        now, then = piles[stock], earlier.piles[stock]
        if then[: len(now)] != now:
            raise ValueError("the stock only ever lost cards from its top")
        for card in then[len(now) :]:
            source = next(
                slot for slot, pile in enumerate(piles) if slot != stock and pile[-1:] == [card]
            )
            piles[source].pop()
            now.append(card)
            ops.append(current.move_op(source, stock, card))
    # A card that left one pile for another goes back by a ``move`` (clients can show
    # it moving); what is left differs more and is ``set``.
    moved = True
    while moved:
        moved = False
        for source, pile in enumerate(piles):
            if len(pile) != len(earlier.piles[source]) + 1 or pile[:-1] != earlier.piles[source]:
                continue
            card = pile[-1]
            target = next(
                (
                    slot
                    for slot, other in enumerate(piles)
                    if slot != stock and earlier.piles[slot] == [*other, card]
                ),
                None,
            )
            if target is not None:
                piles[target].append(piles[source].pop())
                ops.append(current.move_op(source, target, card))
                moved = True
    for slot, pile in enumerate(piles):
        if pile != earlier.piles[slot]:
            texts = [cards.text(card) for card in earlier.piles[slot]]
            ops.append({"op": "set", "pile": str(current.piles_of_layout[slot]), "cards": texts})
    if earlier.redeals_left != current.redeals_left:
        ops.append({"op": "redeals_left", "count": earlier.redeals_left})
    return ops
