"""The ``"deals"`` part of ``protocol/vectors.json``: deals and short playouts of each game.

:func:`build_deal_vectors` is called by ``python -m tools.vectors``, which writes the
whole file. Everything here comes from the rules engine as it is now, so whenever the
engine's behaviour changes the file must be regenerated with that one command (and
``python -m tools.vectors --check`` tells whether it is up to date).

Shape (see ``protocol/DEALS.md``, ``VIEW.md``, ``DIFF.md`` and ``STATE.md``)::

    {"games": {name: {"title", "decks", "foundations", "tableau", "piles",
                      "foundation_size", "stock_face_up"}},
     "deals": [{"game", "seed", "table", "view", "status", "score", "state_hash",
                "legal_moves"}, ...],
     "playouts": [{"game", "seed", "policy", "moves": [move texts],
                   "after": [{"ops", "view", "status", "score", "state_hash"}
                             (one per move)]}, ...]}

A playout starts from the deal of (game, seed) and plays ``moves`` in order; ``after[i]``
is what the engine reports once ``moves[i]`` is played: the ops ``Game.play`` returned,
then the client view, status, score and state hash of the new position.

Playout policies say only how the moves were chosen (a replay just plays ``moves``); each
playout stops after its number of moves (:data:`PLAYOUTS`) or when the game is over:

* ``"stride7"``: move ``step`` (0-based) is ``legal[(step * 7) % len(legal)]`` of the
  current ``legal_moves()`` list;
* ``"last"``: always the last legal move (``deal``/``redeal`` whenever legal, since
  ``legal_moves()`` lists them last), then ``"resign"`` if the game is still being played;
* ``"first"``: always the first legal move (card moves before ``deal``/``redeal``);
* ``"greedy"``: the first legal move to a foundation, else the last legal move.
"""

from __future__ import annotations

from typing import Any

from server.rules import GAME_NAMES, GAMES, PLAYING, RESIGN, Game, Move, new_game

#: Seeds dealt for every game, followed by ``"vector-<game>"``.
DEAL_SEEDS: tuple[str, ...] = ("abc", "0", "daily:2026-11-29")

#: Further deals: Gloucestershire's ``"playout-last"`` is stuck before any move (status
#: ``"stuck"``, no legal move), which about 4% of Gloucestershire deals are.
EXTRA_DEALS: tuple[tuple[str, str], ...] = (("gloucestershire", "playout-last"),)

#: The playouts: (game, seed, policy, most moves). The ``"stride7"`` seeds were chosen so
#: that the first 30 moves reach most kinds of move (most Gloucestershire seeds are stuck
#: within a few moves). Colorado's ``"last"`` playout runs until the stock is empty (a
#: ``reveal`` of ``null``); Matrimony's deals the stock out and uses the 16 redeals (``set``
#: ops); Matrimony's ``"first"`` playout redeals an empty pile (a ``set`` of ``[]``);
#: Balcony's ``"greedy"`` playout is won. (Gloucestershire's ``"playout-last"`` deal is
#: stuck before any move, so its ``"last"`` playout uses another seed.)
PLAYOUTS: tuple[tuple[str, str, str, int], ...] = (
    ("empress_of_italy", "playout-1", "stride7", 30),
    ("empress_of_italy", "playout-2", "stride7", 30),
    ("empress_of_italy", "playout-10", "stride7", 30),
    ("empress_of_italy", "playout-last", "last", 30),
    ("colorado", "playout-1", "stride7", 30),
    ("colorado", "playout-2", "stride7", 30),
    ("colorado", "playout-3", "stride7", 30),
    ("colorado", "playout-last", "last", 90),
    ("gloucestershire", "playout-3", "stride7", 30),
    ("gloucestershire", "playout-5", "stride7", 30),
    ("gloucestershire", "playout-7", "stride7", 30),
    ("gloucestershire", "playout-3", "last", 30),
    ("matrimony", "playout-1", "stride7", 30),
    ("matrimony", "playout-2", "stride7", 30),
    ("matrimony", "playout-3", "stride7", 30),
    ("matrimony", "playout-last", "last", 30),
    ("matrimony", "playout-14", "first", 40),
    ("balcony", "playout-2", "stride7", 30),
    ("balcony", "playout-3", "stride7", 30),
    ("balcony", "playout-6", "stride7", 30),
    ("balcony", "playout-last", "last", 30),
    ("balcony", "win-103", "greedy", 200),
)
STRIDE = 7


def choose_move(policy: str, step: int, legal: list[Move]) -> Move:
    """The move a playout policy picks from the non-empty ``legal`` list (module doc)."""
    if policy == "stride7":
        return legal[(step * STRIDE) % len(legal)]
    if policy == "last":
        return legal[-1]
    if policy == "first":
        return legal[0]
    if policy == "greedy":
        return next((move for move in legal if ">foundation[" in move), legal[-1])
    raise ValueError(f"unknown policy {policy!r}")


def game_metadata(cls: type[Game]) -> dict[str, Any]:
    """The layout facts a client needs besides the deal steps."""
    return {
        "title": cls.title,
        "decks": cls.decks,
        "foundations": cls.foundation_count,
        "tableau": cls.tableau_count,
        "piles": list(cls.single_piles),
        "foundation_size": cls.foundation_size,
        "stock_face_up": cls.stock_face_up,
    }


def deal_vector(name: str, seed: str) -> dict[str, Any]:
    """The freshly dealt game ``name`` from ``seed``."""
    game = new_game(name, seed)
    return {
        "game": name,
        "seed": seed,
        "table": game.table(),
        "view": game.view(),
        "status": game.status,
        "score": game.score,
        "state_hash": game.state_hash(),
        "legal_moves": [str(move) for move in game.legal_moves()],
    }


def _after(game: Game, ops: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ops": ops,
        "view": game.view(),
        "status": game.status,
        "score": game.score,
        "state_hash": game.state_hash(),
    }


def playout_vector(name: str, seed: str, policy: str, limit: int) -> dict[str, Any]:
    """Play ``name`` from ``seed``, at most ``limit`` moves chosen by ``policy``."""
    game = new_game(name, seed)
    moves: list[str] = []
    after: list[dict[str, Any]] = []
    for step in range(limit):
        legal = game.legal_moves()
        if not legal:
            break
        move = choose_move(policy, step, legal)
        ops = game.play(move)
        moves.append(str(move))
        after.append(_after(game, ops))
    if policy == "last" and game.status == PLAYING:
        ops = game.play(RESIGN)
        moves.append(str(RESIGN))
        after.append(_after(game, ops))
    return {"game": name, "seed": seed, "policy": policy, "moves": moves, "after": after}


def build_deal_vectors() -> dict[str, Any]:
    """The ``"deals"`` object of ``protocol/vectors.json`` (shape in the module doc)."""
    deals = [
        deal_vector(name, seed) for name in GAME_NAMES for seed in (*DEAL_SEEDS, f"vector-{name}")
    ]
    deals += [deal_vector(name, seed) for name, seed in EXTRA_DEALS]
    playouts = [playout_vector(*playout) for playout in PLAYOUTS]
    return {
        "games": {name: game_metadata(GAMES[name]) for name in GAME_NAMES},
        "deals": deals,
        "playouts": playouts,
    }
