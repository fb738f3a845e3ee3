"""A solver for the five games: perfect-information proofs and fair-play advice.

Pure: no I/O, no clock (a caller's deadline comes in as a callable), no global random
state (fair mode takes a seeded :class:`random.Random`).  See ``server/solver/README.md``.

* :func:`solve` (perfect information, for the server's own use: it knows the stock
  order): ``"won"`` with a winning line the rules engine has replayed, ``"lost"`` after an
  exhaustive search, or ``"unknown"`` when the :class:`Budget` runs out; with the best
  score reached either way.
* :func:`advise` (fair: only what the player sees): a recommended move and the estimated
  chance of winning, by solving stock orders sampled from the player's view.
"""

from __future__ import annotations

from server.solver.fair import Advice, advise, game_from_view
from server.solver.search import LOST, SOLVED, UNKNOWN, Budget, Result, solve

WON = SOLVED

__all__ = [
    "LOST",
    "UNKNOWN",
    "WON",
    "Advice",
    "Budget",
    "Result",
    "advise",
    "game_from_view",
    "solve",
]
