"""The SDK's op applier (DIFF.md §5) against the protocol vectors, and GameCopy's rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clients.python import (
    GameCopy,
    Gap,
    OutOfSync,
    apply_ops,
    expand_ops,
    genesis,
    move_text,
    next_link,
    score_of,
    state_hash,
)
from server.rules import new_game

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors.json"
PLAYOUTS = json.loads(VECTORS.read_text())["deals"]["playouts"]


@pytest.mark.parametrize(
    "playout", PLAYOUTS, ids=[f"{p['game']}-{p['seed']}-{i}" for i, p in enumerate(PLAYOUTS)]
)
def test_ops_of_every_playout_rebuild_its_views(playout: dict[str, Any]) -> None:
    view = new_game(playout["game"], playout["seed"]).view()
    for move, after in zip(playout["moves"], playout["after"], strict=True):
        before = json.dumps(view)
        new_view = apply_ops(view, after["ops"], move)
        assert json.dumps(view) == before, "apply_ops changed its argument"
        assert new_view == after["view"], move
        assert score_of(new_view) == after["score"]
        view = new_view


@pytest.mark.parametrize(
    "playout", PLAYOUTS, ids=[f"{p['game']}-{p['seed']}-{i}" for i, p in enumerate(PLAYOUTS)]
)
def test_compact_forms_of_every_playout_keep_a_game_copy_exact(playout: dict[str, Any]) -> None:
    """The vectors' ``compact`` forms, fed to a GameCopy as v2 ``patch`` frames."""
    copy = GameCopy("g")
    copy.on_message(
        {
            "type": "subscribed",
            "game_id": "g",
            "role": "spectator",
            "version": 0,
            "legal_moves": None,
        }
    )
    game = new_game(playout["game"], playout["seed"])
    copy.on_message(
        {
            "type": "snapshot",
            "game_id": "g",
            "snapshot": {
                "id": "g",
                "game": game.name,
                "version": 0,
                "status": game.status,
                "score": game.score,
                "view": game.view(),
                "legal_moves": None,
                "daily": None,
                "assisted": False,
            },
        }
    )
    for version, after in enumerate(playout["after"], 1):
        assert copy.on_message({"type": "patch", "g": "g", "v": version, **after["compact"]})
        assert (copy.view, copy.status, copy.score) == (
            after["view"],
            after["status"],
            after["score"],
        )


CHAINED = [p for p in PLAYOUTS if "chain" in p]


@pytest.mark.parametrize("playout", CHAINED, ids=[p["game"] for p in CHAINED])
def test_full_tables_state_hashes_and_chain_of_the_undo_playouts(playout: dict[str, Any]) -> None:
    """Full-table mode (DIFF.md §5): the ops replayed on the full table give each step's
    table and state hash; the links of the hash chain follow (AUDIT.md §2)."""
    game = new_game(playout["game"], playout["seed"])
    table = game.table()
    link = genesis(playout["chain"]["game_id"], game.name, game.state_hash())
    assert link == playout["chain"]["genesis"]
    steps = zip(playout["moves"], playout["after"], strict=True)
    for version, (move, after) in enumerate(steps, 1):
        table = apply_ops(table, after["ops"], move)
        assert table == after["table"], move
        digest = state_hash(game.name, playout["seed"], after["status"], table)
        assert digest == after["state_hash"]
        link = next_link(link, version, move, after["server_time"], digest)
        assert link == after["hash"]


def balcony_view() -> dict[str, Any]:
    return new_game("balcony", "abc").view()


@pytest.mark.parametrize(
    ("ops", "move"),
    [
        ([{"op": "move", "from": "tableau[0]", "to": "foundation[1]", "card": "KS"}], "x"),
        ([{"op": "move", "from": "waste", "to": "tableau[0]", "card": "AS"}], "x"),
        ([{"op": "move", "from": "tableau[9]", "to": "foundation[1]", "card": "9H"}], "x"),
        ([{"op": "redeals_left", "count": 3}], "x"),
        ([{"op": "reveal", "pile": "stock", "card": "AS"}], "x"),
        ([{"op": "teleport"}], "x"),
        ([], "redeal"),
    ],
)
def test_ops_that_do_not_fit_are_out_of_sync(ops: list[dict[str, Any]], move: str) -> None:
    view = balcony_view()
    with pytest.raises(OutOfSync):
        apply_ops(view, ops, move)
    assert view == balcony_view()


def test_an_undo_puts_cards_back_on_the_stock_and_gives_redeals_back() -> None:
    view = balcony_view()
    deal = {"op": "move", "from": "stock", "to": "waste", "card": "AS"}
    dealt = apply_ops(view, [deal], "deal")
    undone = apply_ops(dealt, [{**deal, "from": "waste", "to": "stock"}], "undo")
    assert undone == view
    matrimony = new_game("matrimony", "abc").view()
    given_back = apply_ops(matrimony, [{"op": "redeals_left", "count": 17}], "undo")
    assert given_back["redeals_left"] == 17 and matrimony["redeals_left"] == 16


def test_an_empty_stock_gives_no_card() -> None:
    view = balcony_view()
    view["stock"]["count"] = 0
    with pytest.raises(OutOfSync):
        apply_ops(view, [{"op": "move", "from": "stock", "to": "waste", "card": "AS"}], "deal")


def snapshot_message(version: int = 0) -> dict[str, Any]:
    return {
        "type": "snapshot",
        "game_id": "g",
        "snapshot": {
            "id": "g",
            "game": "balcony",
            "version": version,
            "status": "playing",
            "score": 1,
            "view": balcony_view(),
            "legal_moves": ["deal"],
            "daily": None,
        },
    }


def deal_patch(start: int, card: str = "AS") -> dict[str, Any]:
    return {"type": "patch", "g": "g", "v": start + 1, "m": "deal", "o": [["m", "s", "w", card]]}


def test_game_copy_applies_patches_in_order_and_ignores_repeats() -> None:
    copy = GameCopy("g")
    assert not copy.on_message(deal_patch(0))  # no state yet: wait for the snapshot
    copy.on_message({"type": "subscribed", "game_id": "g", "role": "owner", "version": 0,
                     "legal_moves": ["deal"]})  # fmt: skip
    assert copy.on_message(snapshot_message())
    assert copy.legal_moves == ["deal"]
    copy.on_message({"type": "accepted", "game_id": "g", "move_id": "m", "version": 1,
                     "duplicate": False, "status": "playing", "score": 1,
                     "legal_moves": ["waste>tableau[0]", "deal"]})  # fmt: skip
    assert copy.version == 0 and copy.legal_moves == ["deal"]  # learnt for version 1
    assert copy.on_message(deal_patch(0))
    assert copy.version == 1 and copy.view is not None and copy.view["waste"] == ["AS"]
    assert copy.legal_moves == ["waste>tableau[0]", "deal"]
    assert not copy.on_message(deal_patch(0))  # a repeat
    with pytest.raises(Gap):
        copy.on_message(deal_patch(2))
    assert copy.on_message(deal_patch(1, "JD"))
    assert copy.legal_moves is None  # nobody said them for version 2
    assert copy.needs_legal_moves


def test_a_finished_game_has_no_legal_moves() -> None:
    copy = GameCopy("g")
    copy.on_message({"type": "subscribed", "game_id": "g", "role": "owner", "version": 0,
                     "legal_moves": ["deal"]})  # fmt: skip
    copy.on_message(snapshot_message())
    resign = {**deal_patch(0), "m": "resign", "o": [], "s": "resigned"}
    copy.on_message(resign)
    assert copy.status == "resigned" and copy.legal_moves == []


def test_a_duplicate_reply_gives_the_legal_moves_of_now() -> None:
    copy = GameCopy("g")
    copy.on_message({"type": "subscribed", "game_id": "g", "role": "owner", "version": 0,
                     "legal_moves": ["deal"]})  # fmt: skip
    copy.on_message(snapshot_message())
    copy.on_message(deal_patch(0))
    copy.on_message(deal_patch(1, "JD"))
    assert copy.legal_moves is None
    copy.on_message({"type": "accepted", "game_id": "g", "move_id": "m", "version": 2,
                     "applied_version": 1, "duplicate": True, "status": "playing",
                     "score": 1, "legal_moves": ["deal"]})  # fmt: skip
    assert copy.legal_moves == ["deal"]


def test_an_accepted_carries_its_patch() -> None:
    """Protocol v2: the mover gets no patch frame; its ``accepted`` brings the copy on."""
    copy = GameCopy("g")
    copy.on_message({"type": "subscribed", "game_id": "g", "role": "owner", "version": 0,
                     "legal_moves": ["deal"]})  # fmt: skip
    copy.on_message(snapshot_message())
    patch = {key: value for key, value in deal_patch(0).items() if key != "type"}
    assert copy.on_message({"type": "accepted", "game_id": "g", "move_id": "m", "version": 1,
                            "applied_version": 1, "duplicate": False, "status": "playing",
                            "score": 1, "legal_moves": ["deal"], "patch": patch})  # fmt: skip
    assert copy.version == 1 and copy.view is not None and copy.view["waste"] == ["AS"]
    assert copy.legal_moves == ["deal"] and copy.score == score_of(copy.view)
    assert not copy.on_message(deal_patch(0))  # the patch frame, had it come: a repeat


def test_compact_ops_expand_to_the_ops_of_diff_md() -> None:
    assert expand_ops([["m", "t19", "f15", "KS"], ["r", None], ["s", "t3", ["4D", "5H"]]]) == [
        {"op": "move", "from": "tableau[19]", "to": "foundation[15]", "card": "KS"},
        {"op": "reveal", "pile": "stock", "card": None},
        {"op": "set", "pile": "tableau[3]", "cards": ["4D", "5H"]},
    ]
    assert move_text("b>t0") == "bouquet>tableau[0]" and move_text("redeal") == "redeal"
    for bad in (["x"], ["m", "t07", "f0", "KS"], ["s", "t1"], "m"):
        with pytest.raises(OutOfSync):
            expand_ops([bad])
