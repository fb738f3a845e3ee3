"""Applying a move's ops to a client view (``protocol/DIFF.md`` §5)."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from clients.python.errors import OutOfSync
from protocol import piles


def pile_address(code: Any) -> str:
    """The pile address (``tableau[3]``) of a compact pile code of protocol v2 (``t3``)."""
    if isinstance(code, str):
        with contextlib.suppress(ValueError):
            return piles.pile_address(code)
    raise OutOfSync(f"not a pile code: {code!r}")


def move_text(move: str) -> str:
    """A patch's move (``m``: ``t3>f0``, ``deal``...) in the normal form of ``DIFF.md`` §2
    (``tableau[3]>foundation[0]``)."""
    source, arrow, target = move.partition(">")
    return f"{pile_address(source)}>{pile_address(target)}" if arrow else move


def expand_ops(ops: list[Any]) -> list[dict[str, Any]]:
    """The ops of a compact patch (``["m", from, to, card]``, ``["r", card]``,
    ``["s", pile, cards]``) in the form :func:`apply_ops` takes (``DIFF.md`` §3)."""
    expanded: list[dict[str, Any]] = []
    for op in ops:
        kind = op[0] if isinstance(op, list) and op else None
        if kind == "m" and len(op) == 4:
            source, target = pile_address(op[1]), pile_address(op[2])
            expanded.append({"op": "move", "from": source, "to": target, "card": op[3]})
        elif kind == "r" and len(op) == 2:
            expanded.append({"op": "reveal", "pile": "stock", "card": op[1]})
        elif kind == "s" and len(op) == 3 and isinstance(op[2], list):
            expanded.append({"op": "set", "pile": pile_address(op[1]), "cards": op[2]})
        else:
            raise OutOfSync(f"unknown op {op!r}: this client is out of date")
    return expanded


def pile_at(view: dict[str, Any], address: Any) -> list[str]:
    """The pile (a list of card texts, bottom first) at a pile address of ``view``."""
    match = piles.ADDRESS.fullmatch(address) if isinstance(address, str) else None
    if match is None:
        raise OutOfSync(f"not a pile address: {address!r}")
    try:
        if match.group(3):
            pile = view[match.group(3)]
        else:
            key = "foundations" if match.group(1) == "foundation" else "tableau"
            pile = view[key][int(match.group(2))]
    except (KeyError, IndexError, TypeError):
        raise OutOfSync(f"no pile {address} in this view") from None
    if not isinstance(pile, list):
        raise OutOfSync(f"{address} is not a card pile here")
    return pile


def _take_from_stock(view: dict[str, Any], card: Any) -> None:
    stock = view.get("stock")
    if isinstance(stock, list):  # a full table (DIFF.md §5, "Full tables")
        if not stock or stock[-1] != card:
            raise OutOfSync(f"the stock's top is {stock[-1:]}, the op says {card}")
        stock.pop()
        return
    if not isinstance(stock, dict) or not stock.get("count", 0) > 0:
        raise OutOfSync("a card leaves an empty stock")
    if "top" in stock:  # Colorado: the face-up top card leaves; the next one is revealed later
        if stock["top"] != card:
            raise OutOfSync(f"the stock's top is {stock['top']}, the op says {card}")
        stock["top"] = None
    stock["count"] -= 1


def _put_on_stock(view: dict[str, Any], card: Any) -> None:
    """An ``undo`` puts a card back onto the stock (face down, but Colorado's top)."""
    stock = view.get("stock")
    if isinstance(stock, list):  # a full table
        stock.append(card)
        return
    if not isinstance(stock, dict):
        raise OutOfSync("this game has no stock")
    if "top" in stock:
        stock["top"] = card
    stock["count"] += 1


def apply_ops(view: dict[str, Any], ops: list[dict[str, Any]], move: str) -> dict[str, Any]:
    """The view after a move: ``ops`` applied in order to a copy of ``view`` (or of a full
    table, whose stock is the list of its cards: DIFF.md §5, "Full tables").

    ``view`` itself is never changed, so a failure leaves it intact.  After a ``redeal``
    ``redeals_left`` goes down by one.  Raises :class:`OutOfSync` when an op does not fit
    (the client should then ask the server for the full view).
    """
    view = copy.deepcopy(view)
    for op in ops:
        kind = op.get("op") if isinstance(op, dict) else None
        if kind == "move":
            if op["from"] == "stock":
                _take_from_stock(view, op["card"])
            else:
                source = pile_at(view, op["from"])
                if not source or source[-1] != op["card"]:
                    top = source[-1] if source else None
                    raise OutOfSync(f"the top of {op['from']} is {top}, the op says {op['card']}")
                source.pop()
            if op["to"] == "stock":
                _put_on_stock(view, op["card"])
            else:
                pile_at(view, op["to"]).append(op["card"])
        elif kind == "reveal" and isinstance(view.get("stock"), list):  # a full table
            if (view["stock"][-1] if view["stock"] else None) != op["card"]:
                raise OutOfSync(f"the stock's top is not {op['card']}")
        elif kind == "reveal":
            stock = view.get("stock")
            if op.get("pile") != "stock" or not isinstance(stock, dict) or "top" not in stock:
                raise OutOfSync(f"cannot reveal on {op.get('pile')!r} here")
            stock["top"] = op["card"]
        elif kind == "set":
            pile = pile_at(view, op["pile"])
            pile[:] = list(op["cards"])
        elif kind == "redeals_left":
            if "redeals_left" not in view:
                raise OutOfSync("this game has no redeals")
            view["redeals_left"] = op["count"]
        else:
            raise OutOfSync(f"unknown op {kind!r}: this client is out of date")
    if move == "redeal":
        if not view.get("redeals_left", 0) > 0:
            raise OutOfSync("a redeal with no redeal left")
        view["redeals_left"] -= 1
    return view


def score_of(view: dict[str, Any]) -> int:
    """The score of a view: the number of cards on the foundations."""
    return sum(len(pile) for pile in view["foundations"])
