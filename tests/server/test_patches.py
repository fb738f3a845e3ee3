"""The compact patch encoding (``server/patches.py``): every op kind round-trips, and
status and redeals_left travel only when they change."""

from __future__ import annotations

import random

import pytest

from server.patches import (
    compact_move,
    compact_op,
    compact_patch,
    expand,
    expand_op,
    normal_move,
    pile_address,
    pile_code,
)
from server.rules import GAME_NAMES, UNDO, Timeline, new_game


def test_pile_codes() -> None:
    addresses = [f"foundation[{i}]" for i in range(16)] + [f"tableau[{i}]" for i in range(20)]
    addresses += ["reserve", "stock", "waste", "bouquet"]
    codes = [pile_code(address) for address in addresses]
    assert codes[:2] == ["f0", "f1"] and codes[16] == "t0" and codes[-4:] == list("rswb")
    assert len(set(codes)) == len(codes)
    assert [pile_address(code) for code in codes] == addresses
    for bad in ("t07", "x1", "tableau", "f", "t1 "):
        with pytest.raises(ValueError):
            pile_address(bad)


def test_move_texts() -> None:
    assert compact_move("tableau[3]>foundation[0]") == "t3>f0"
    assert compact_move("stock>waste") == "s>w"
    for word in ("deal", "redeal", "resign", "undo"):
        assert compact_move(word) == normal_move(word) == word
    assert normal_move("t3>f0") == "tableau[3]>foundation[0]"
    assert normal_move(" b > t19 ") == "bouquet>tableau[19]"
    # Not compact: left to the engine, which judges it.
    assert normal_move("tableau[3] > foundation[0]") == "tableau[3] > foundation[0]"
    assert normal_move("t3>x0") == "t3>x0"


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_op_round_trips_and_fields_travel_only_on_change(name: str) -> None:
    chooser = random.Random(name)
    seen: set[str] = set()
    for deal in range(8):
        timeline = Timeline(new_game(name, f"compact-{deal}"))
        for version in range(300):
            game = timeline.game
            if game.status != "playing":
                break
            status, redeals = game.status, game.redeals_left
            if timeline.undoable and chooser.random() < 0.2:
                move = UNDO
            else:
                legal = game.legal_moves()
                preferred = [m for m in ("redeal", "deal") if m in legal]
                move = preferred[0] if preferred and chooser.random() < 0.5 else None
                move = move or chooser.choice(legal)
            ops = timeline.play(move)
            game = timeline.game
            patch = compact_patch("g_x", version, move, ops, game, status, redeals)
            assert (patch["g"], patch["v"], patch["m"]) == ("g_x", version + 1, compact_move(move))
            assert ("s" in patch) == (game.status != status)
            assert ("r" in patch) == (game.redeals_left != redeals)
            for op in ops:
                seen.add(op["op"] if op["op"] != "reveal" or op["card"] else "reveal null")
                if op["op"] != "redeals_left":
                    assert expand_op(compact_op(op)) == op
            long = expand(patch, game)
            assert long["ops"] == ops
            assert (long["from"], long["to"], long["move"]) == (version, version + 1, move)
            assert (long["status"], long["score"]) == (game.status, game.score)
            if move == "redeal":
                assert patch["r"] == game.redeals_left == redeals - 1
    assert "move" in seen
    if name == "colorado":
        assert {"reveal", "reveal null"} <= seen
    if name == "matrimony":
        assert {"set", "redeals_left"} <= seen, "no undone redeal: raise the counts"
