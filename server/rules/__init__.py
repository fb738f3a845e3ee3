"""The rules engine: five patience games, played exactly as ``RULES.md`` says.

Pure: no I/O, no clock, no global random state.  A deal is a function of
(game, seed) only::

    >>> from server.rules import new_game
    >>> game = new_game("balcony", "abc")
    >>> move = game.legal_moves()[0]
    >>> changes = game.play(move)
"""

from __future__ import annotations

from server.rules.game import PLAYING, RESIGNED, STUCK, WON, Game, Op
from server.rules.games.balcony import Balcony
from server.rules.games.colorado import Colorado
from server.rules.games.empress_of_italy import EmpressOfItaly
from server.rules.games.gloucestershire import Gloucestershire
from server.rules.games.matrimony import Matrimony
from server.rules.moves import DEAL, REDEAL, RESIGN, IllegalMove, MalformedMove, Move, Pile
from server.rules.undo import UNDO, UNDOABLE, Timeline, moves_in_effect, undo_logged

GAMES: dict[str, type[Game]] = {
    cls.name: cls for cls in (EmpressOfItaly, Colorado, Gloucestershire, Matrimony, Balcony)
}
GAME_NAMES: tuple[str, ...] = tuple(GAMES)


class UnknownGame(ValueError):
    """A game name not in :data:`GAME_NAMES`."""


def game_class(name: str) -> type[Game]:
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise UnknownGame(f"unknown game {name!r}; games: {', '.join(GAME_NAMES)}") from None


def new_game(name: str, seed: str) -> Game:
    """Deal game ``name`` from ``seed`` (``protocol/RNG.md``, ``protocol/DEALS.md``)."""
    return game_class(name).new(seed)


def load_game(data: bytes) -> Game:
    """A game from :meth:`Game.to_bytes`."""
    import msgpack

    name = msgpack.unpackb(data)[1]
    return game_class(name).from_bytes(data)


__all__ = [
    "DEAL",
    "GAMES",
    "GAME_NAMES",
    "PLAYING",
    "REDEAL",
    "RESIGN",
    "RESIGNED",
    "STUCK",
    "UNDO",
    "UNDOABLE",
    "WON",
    "Game",
    "IllegalMove",
    "MalformedMove",
    "Move",
    "Op",
    "Pile",
    "Timeline",
    "UnknownGame",
    "game_class",
    "new_game",
    "load_game",
    "moves_in_effect",
    "undo_logged",
]
