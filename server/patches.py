"""The compact patch of WebSocket protocol v2 (``protocol/WEBSOCKET.md``, "patch").

The engine's ops (``protocol/DIFF.md`` §3) name piles by address (``tableau[3]``) and
carry their kind as a map key; on the wire a patch is most of a move's cost, so v2 sends
each op as a short array with pile codes (``t3``) and leaves out what did not change.
:func:`expand` turns a compact patch back into the v1 form (what REST still answers).
"""

from __future__ import annotations

from typing import Any

from protocol.piles import CODE, pile_address, pile_code
from server.rules import Game, Op

#: Move texts that are no card move: the same in both forms.
WORD_MOVES = ("deal", "redeal", "resign", "undo")


def compact_move(move: str) -> str:
    """A move text in normal form (``DIFF.md`` §2) as the patch's ``m``."""
    if move in WORD_MOVES:
        return move
    source, target = move.split(">")
    return f"{pile_code(source)}>{pile_code(target)}"


def normal_move(move: str) -> str:
    """A move a client sent, in the normal form if it was compact (``t3>f0``); any other
    text unchanged (the engine judges it)."""
    source, arrow, target = move.partition(">")
    if arrow and CODE.fullmatch(source.strip()) and CODE.fullmatch(target.strip()):
        return f"{pile_address(source.strip())}>{pile_address(target.strip())}"
    return move


def compact_op(op: Op) -> list[Any]:
    kind = op["op"]
    if kind == "move":
        return ["m", pile_code(op["from"]), pile_code(op["to"]), op["card"]]
    if kind == "reveal":
        return ["r", op["card"]]
    if kind == "set":
        return ["s", pile_code(op["pile"]), list(op["cards"])]
    raise ValueError(f"op {kind!r} has no compact form")  # redeals_left: the patch's 'r'


def expand_op(op: list[Any]) -> Op:
    kind = op[0]
    if kind == "m":
        return {"op": "move", "from": pile_address(op[1]), "to": pile_address(op[2]), "card": op[3]}
    if kind == "r":
        return {"op": "reveal", "pile": "stock", "card": op[1]}
    if kind == "s":
        return {"op": "set", "pile": pile_address(op[1]), "cards": list(op[2])}
    raise ValueError(f"unknown compact op {kind!r}")


def compact_patch(
    game_id: str,
    version: int,
    move: str,
    ops: list[Op],
    game: Game,
    status_before: str,
    redeals_before: int | None,
) -> dict[str, Any]:
    """The patch message taking ``game_id`` from ``version`` to ``version + 1`` (``game``
    is the game after it; ``status_before`` and ``redeals_before`` what they were)."""
    patch: dict[str, Any] = {
        "type": "patch",
        "g": game_id,
        "v": version + 1,
        "m": compact_move(move),
        "o": [compact_op(op) for op in ops if op["op"] != "redeals_left"],
    }
    if game.status != status_before:
        patch["s"] = game.status
    if game.redeals_left != redeals_before:
        patch["r"] = game.redeals_left
    return patch


def expand(patch: dict[str, Any], game: Game) -> dict[str, Any]:
    """The v1 patch message of a compact patch (``game``: the game after it), as REST's
    move answer carries it (``protocol/REST.md``)."""
    ops = [expand_op(op) for op in patch["o"]]
    move = patch["m"]
    if move == "undo" and "r" in patch:
        ops.append({"op": "redeals_left", "count": patch["r"]})
    message = {
        "type": "patch",
        "game_id": patch["g"],
        "from": patch["v"] - 1,
        "to": patch["v"],
        "move": normal_move(move),
        "ops": ops,
        "status": game.status,
        "score": game.score,
    }
    if game.redeals_left is not None:
        message["redeals_left"] = game.redeals_left
    return message
