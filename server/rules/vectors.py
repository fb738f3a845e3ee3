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
                   "after": [{"ops", "compact", "view", "status", "score", "state_hash"}
                             (one per move)]}, ...]}

A playout starts from the deal of (game, seed) and plays ``moves`` in order; ``after[i]``
is what the engine reports once ``moves[i]`` is played: the ops ``Game.play`` returned,
``compact`` (the same move as the WebSocket v2 patch carries it: ``m``, ``o``, and ``s``,
``r`` only when they change), then the client view, status, score and state hash of the
new position.

The ``"last+undo"`` playouts (one per game) also play ``undo`` (``DIFF.md`` §4) and are
the full-table and hash-chain vectors: each has ``"chain": {"game_id", "genesis"}`` and
each of its steps also ``table`` (the full table after the move), ``server_time`` and
``hash`` (the move's link in the hash chain of ``AUDIT.md`` §2 for that game id).

Playout policies say only how the moves were chosen (a replay just plays ``moves``); each
playout stops after its number of moves (:data:`PLAYOUTS`) or when the game is over:

* ``"stride7"``: move ``step`` (0-based) is ``legal[(step * 7) % len(legal)]`` of the
  current ``legal_moves()`` list;
* ``"last"``: always the last legal move (``deal``/``redeal`` whenever legal, since
  ``legal_moves()`` lists them last), then ``"resign"`` if the game is still being played;
* ``"first"``: always the first legal move (card moves before ``deal``/``redeal``);
* ``"greedy"``: the first legal move to a foundation, else the last legal move;
* ``"last+undo"``: as ``"last"``, and after the policy's move number ``i`` (0-based) an
  ``undo`` when ``i % 3 == 2``, two in a row when ``i % 7 == 6`` (as many as there are
  moves in effect).
"""

from __future__ import annotations

from typing import Any

from protocol import chain
from server.rules import GAME_NAMES, GAMES, PLAYING, RESIGN, Game, Move, new_game
from server.rules.undo import UNDO, Timeline

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
    # Undo: of a deal (a card back onto the stock), of a refill, of a redeal (Matrimony's
    # stock runs out after 6 deals, then every move is a redeal), undos in a row.
    ("empress_of_italy", "playout-last", "last+undo", 24),
    ("colorado", "playout-last", "last+undo", 24),
    ("gloucestershire", "playout-3", "last+undo", 24),
    ("matrimony", "playout-last", "last+undo", 24),
    ("balcony", "playout-last", "last+undo", 24),
)
#: The hash-chain vectors: the game id of each ``"last+undo"`` playout, and the server time
#: of its move ``i`` (the first, then one second apart).
CHAIN_GAME_ID = "g_vectors_{game}"
CHAIN_FIRST_TIME = 1795980677456
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
    if policy == "last+undo":
        return legal[-1]
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


def compact_form(move: str, ops: list[dict[str, Any]], before: Game, game: Game) -> dict[str, Any]:
    """The move as a v2 patch carries it, without ``g`` and ``v`` (``WEBSOCKET.md``)."""
    # Imported here: server.patches imports this package.
    from server.patches import compact_move, compact_op

    compact: dict[str, Any] = {
        "m": compact_move(move),
        "o": [compact_op(op) for op in ops if op["op"] != "redeals_left"],
    }
    if game.status != before.status:
        compact["s"] = game.status
    if game.redeals_left != before.redeals_left:
        compact["r"] = game.redeals_left
    return compact


def _after(move: str, ops: list[dict[str, Any]], before: Game, game: Game) -> dict[str, Any]:
    return {
        "ops": ops,
        "compact": compact_form(move, ops, before, game),
        "view": game.view(),
        "status": game.status,
        "score": game.score,
        "state_hash": game.state_hash(),
    }


def playout_vector(name: str, seed: str, policy: str, limit: int) -> dict[str, Any]:
    """Play ``name`` from ``seed``, at most ``limit`` moves chosen by ``policy``."""
    timeline = Timeline(new_game(name, seed))
    moves: list[str] = []
    after: list[dict[str, Any]] = []

    def play(move: str) -> None:
        before = type(timeline.game).from_bytes(timeline.game.to_bytes())
        ops = timeline.play(move)
        moves.append(move)
        after.append(_after(move, ops, before, timeline.game))

    for step in range(limit):
        legal = timeline.game.legal_moves()
        if not legal:
            break
        play(str(choose_move(policy, step, legal)))
        if policy == "last+undo":
            undos = 2 if step % 7 == 6 else 1 if step % 3 == 2 else 0
            for _ in range(min(undos, timeline.undoable)):
                play(UNDO)
    if policy in ("last", "last+undo") and timeline.game.status == PLAYING:
        play(str(RESIGN))
    vector = {"game": name, "seed": seed, "policy": policy, "moves": moves, "after": after}
    if policy == "last+undo":
        _add_table_and_chain(vector)
    return vector


def _add_table_and_chain(vector: dict[str, Any]) -> None:
    """The full table after each step, and the hash chain of the moves (``AUDIT.md``)."""
    name, seed = vector["game"], vector["seed"]
    game_id = CHAIN_GAME_ID.format(game=name)
    link = chain.genesis(game_id, name, new_game(name, seed).state_hash())
    vector["chain"] = {"game_id": game_id, "genesis": link}
    timeline = Timeline(new_game(name, seed))
    for index, (move, step) in enumerate(zip(vector["moves"], vector["after"], strict=True)):
        timeline.play(move)
        server_time = CHAIN_FIRST_TIME + 1000 * index
        link = chain.next_link(link, index + 1, move, server_time, step["state_hash"])
        step.update(table=timeline.game.table(), server_time=server_time, hash=link)


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
