"""protocol/vectors.json is exactly what the code derives, and the protocol docs hold.

* The whole file is re-derived (``rng`` and ``deals`` parts) and compared byte for byte;
  ``python -m tools.vectors --check`` says the same.
* The deals are re-derived from ``protocol/DEALS.md`` by an independent implementation that
  shares no code with the rules engine (only the shuffle of ``protocol/rng.py``).
* Views follow ``protocol/VIEW.md``, state hashes ``protocol/STATE.md``, and every playout
  replays from its ops as ``protocol/DIFF.md`` §5 says, on the view and on the full table.

When the rules engine changes on purpose, regenerate: ``.venv/bin/python -m tools.vectors``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import card_text
from protocol.rng import shuffled_deck
from server.rules import GAME_NAMES, new_game
from server.rules.undo import Timeline
from server.rules.vectors import build_deal_vectors
from tools import vectors as vectors_module
from tools.vectors import VECTORS_PATH, build_vectors, dumps

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "protocol"
REGENERATE = "run `.venv/bin/python -m tools.vectors` to regenerate protocol/vectors.json"

RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
DECKS = {"empress_of_italy": 4, "colorado": 2, "gloucestershire": 2, "matrimony": 2, "balcony": 1}
FACE_UP_STOCK = {"colorado"}


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def deal_part(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["deals"]


# --- the file is what the code derives ---------------------------------------------------


def test_vectors_file_is_rederived_exactly() -> None:
    assert VECTORS_PATH.read_text(encoding="utf-8") == dumps(build_vectors()), REGENERATE


def test_deal_vectors_are_deterministic() -> None:
    assert build_deal_vectors() == build_deal_vectors()


def test_check_flag_accepts_the_current_file() -> None:
    assert vectors_module.main(["--check"]) == 0, REGENERATE


def test_check_flag_rejects_stale_or_missing_files(tmp_path: Path) -> None:
    target = tmp_path / "vectors.json"
    assert vectors_module.main(["--check", "--output", str(target)]) == 1  # missing
    stale = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    stale["deals"]["deals"][0]["state_hash"] = "0" * 64
    target.write_text(dumps(stale), encoding="utf-8")
    assert vectors_module.main(["--check", "--output", str(target)]) == 1  # stale
    assert target.read_text(encoding="utf-8") == dumps(stale)  # --check never writes
    assert vectors_module.main(["--output", str(target)]) == 0  # regenerate
    assert vectors_module.main(["--check", "--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == VECTORS_PATH.read_text(encoding="utf-8")


def test_regeneration_is_one_command(tmp_path: Path) -> None:
    target = tmp_path / "vectors.json"
    command = [sys.executable, "-m", "tools.vectors", "--output", str(target)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=60)
    check = subprocess.run(
        [sys.executable, "-m", "tools.vectors", "--check"],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert check.returncode == 0, REGENERATE
    assert target.read_bytes() == VECTORS_PATH.read_bytes()


def test_vectors_cover_every_game_and_seed(deal_part: dict[str, Any]) -> None:
    assert list(deal_part["games"]) == sorted(GAME_NAMES)
    pairs = {(d["game"], d["seed"]) for d in deal_part["deals"]}
    for game in GAME_NAMES:
        for seed in ("abc", "0", "daily:2026-11-29", f"vector-{game}"):
            assert (game, seed) in pairs
        assert sum(p["game"] == game for p in deal_part["playouts"]) >= 3
    for playout in deal_part["playouts"]:
        assert 0 < len(playout["moves"]) == len(playout["after"])


# --- DEALS.md, independently -------------------------------------------------------------


def spec_deal(game: str, seed: str) -> dict[str, Any]:
    """The table of DEALS.md §3-§4, written from the document (no rules-engine code)."""
    deck = shuffled_deck(seed, DECKS[game])
    rank = lambda card: card % 52 % 13 + 1  # noqa: E731
    table: dict[str, Any] = {}
    if game == "balcony":
        table["foundations"] = [[deck[0]], [], [], []]
        table["reserve"] = deck[1:8]
        table["tableau"] = [[deck[8 + i]] for i in range(7)]
        table["stock"] = deck[15:][::-1]
        table["waste"] = []
        table["base_rank"] = RANK_TEXT[rank(deck[0]) - 1]
    elif game == "empress_of_italy":
        base = rank(deck[0])
        bases = [c for c in deck if rank(c) == base]
        rest = [c for c in deck if rank(c) != base]
        assert len(bases) == 16 and len(rest) == 192
        table["foundations"] = [[c] for c in bases]
        table["reserve"] = rest[:19]
        table["tableau"] = [[rest[19 + i]] for i in range(11)]
        table["stock"] = rest[30:][::-1]
        assert len(table["stock"]) == 162
        table["waste"] = []
        table["base_rank"] = RANK_TEXT[base - 1]
    elif game == "colorado":
        table["foundations"] = [[] for _ in range(8)]
        table["tableau"] = [[deck[i]] for i in range(20)]
        table["stock"] = deck[20:][::-1]
    elif game == "gloucestershire":
        table["foundations"] = [[] for _ in range(4)]
        table["tableau"] = []
        position = 0
        for size in range(3, 11):
            table["tableau"].append(deck[position : position + size])
            position += size
        assert position == 52
        table["bouquet"] = deck[52:]
    elif game == "matrimony":
        rest = list(deck)
        queen = next(c for c in rest if c % 52 == 24)  # Q♦
        rest.remove(queen)
        jack = next(c for c in rest if c % 52 == 23)  # J♦
        rest.remove(jack)
        table["foundations"] = [[queen], [jack], [], [], [], [], [], []]
        table["tableau"] = [[rest[i]] for i in range(16)]
        table["stock"] = rest[16:][::-1]
        assert len(table["stock"]) == 86
        table["redeals_left"] = 16
    else:
        raise AssertionError(game)

    def texts(value: Any) -> Any:
        if isinstance(value, list):
            return [texts(v) for v in value]
        return card_text(value) if isinstance(value, int) else value

    return {
        key: texts(value) if key not in ("redeals_left", "base_rank") else value
        for key, value in table.items()
    }


def spec_view(game: str, table: dict[str, Any]) -> dict[str, Any]:
    """VIEW.md §2."""
    view = copy.deepcopy(table)
    if "stock" in table:
        view["stock"] = {"count": len(table["stock"])}
        if game in FACE_UP_STOCK:
            view["stock"]["top"] = table["stock"][-1] if table["stock"] else None
    return view


def spec_hash(game: str, seed: str, status: str, table: dict[str, Any]) -> str:
    """STATE.md §1."""
    document = {"game": game, "seed": seed, "status": status, "table": table}
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def test_deal_vectors_follow_deals_md(deal_part: dict[str, Any]) -> None:
    for vector in deal_part["deals"]:
        game, seed = vector["game"], vector["seed"]
        table = spec_deal(game, seed)
        assert vector["table"] == table, (game, seed)
        assert vector["view"] == spec_view(game, table), (game, seed)
        assert vector["state_hash"] == spec_hash(game, seed, vector["status"], table), (game, seed)
        assert vector["score"] == sum(len(pile) for pile in table["foundations"])
        assert vector["status"] in ("playing", "stuck")
        assert (vector["status"] == "stuck") == (not vector["legal_moves"])


@settings(max_examples=60, deadline=None)
@given(
    game=st.sampled_from(GAME_NAMES),
    seed=st.text(alphabet="abcXYZ019._:-", min_size=1, max_size=40),
)
def test_engine_deals_follow_deals_md(game: str, seed: str) -> None:
    engine = new_game(game, seed)
    table = spec_deal(game, seed)
    assert engine.table() == table
    assert engine.view() == spec_view(game, table)
    assert engine.state_hash() == spec_hash(game, seed, engine.status, table)


# --- DIFF.md: replaying ops --------------------------------------------------------------

_ADDRESS = re.compile(r"(foundation|tableau)\[(\d+)\]|(reserve|stock|waste|bouquet)")


def pile_at(state: dict[str, Any], address: str) -> list[str]:
    match = _ADDRESS.fullmatch(address)
    assert match is not None, address
    if match.group(3):
        pile = state[match.group(3)]
    else:
        key = "foundations" if match.group(1) == "foundation" else "tableau"
        pile = state[key][int(match.group(2))]
    assert isinstance(pile, list)
    return pile


def apply_ops(state: dict[str, Any], move: str, ops: list[dict[str, Any]]) -> None:
    """DIFF.md §5, on a view (stock = {count, ...}) or a full table (stock = list)."""
    for op in ops:
        if op["op"] == "move" and op["to"] == "stock":  # an undo puts a face-up card back
            assert pile_at(state, op["from"]).pop() == op["card"]
            if isinstance(state["stock"], dict):
                state["stock"]["count"] += 1
                if "top" in state["stock"]:
                    state["stock"]["top"] = op["card"]
            else:
                state["stock"].append(op["card"])
        elif op["op"] == "move":
            if op["from"] == "stock" and isinstance(state["stock"], dict):
                stock = state["stock"]
                assert stock["count"] > 0
                stock["count"] -= 1
                if "top" in stock:
                    assert stock["top"] == op["card"]
                    stock["top"] = None
            else:
                assert pile_at(state, op["from"]).pop() == op["card"]
            pile_at(state, op["to"]).append(op["card"])
        elif op["op"] == "reveal":
            assert op["pile"] == "stock"
            if isinstance(state["stock"], dict):
                state["stock"]["top"] = op["card"]
            else:
                assert (state["stock"][-1] if state["stock"] else None) == op["card"]
        elif op["op"] == "set":
            pile_at(state, op["pile"])[:] = op["cards"]
        elif op["op"] == "redeals_left":
            state["redeals_left"] = op["count"]
        else:
            raise AssertionError(f"unknown op {op}")
    if move == "redeal":
        state["redeals_left"] -= 1


def test_playouts_replay_from_their_ops(deal_part: dict[str, Any]) -> None:
    for playout in deal_part["playouts"]:
        game, seed = playout["game"], playout["seed"]
        table = spec_deal(game, seed)
        view = spec_view(game, table)
        for index, (move, after) in enumerate(zip(playout["moves"], playout["after"], strict=True)):
            apply_ops(view, move, after["ops"])
            apply_ops(table, move, after["ops"])
            where = (game, seed, index, move)
            assert view == after["view"], where
            assert spec_view(game, table) == after["view"], where
            assert spec_hash(game, seed, after["status"], table) == after["state_hash"], where
            assert after["score"] == sum(len(pile) for pile in view["foundations"]), where
            if "table" in after:  # the full-table vectors
                assert table == after["table"], where
            if index < len(playout["moves"]) - 1:
                assert after["status"] == "playing", where


def test_playouts_replay_through_the_engine(deal_part: dict[str, Any]) -> None:
    for playout in deal_part["playouts"]:
        timeline = Timeline(new_game(playout["game"], playout["seed"]))
        for move, after in zip(playout["moves"], playout["after"], strict=True):
            assert move in ("resign", "undo") or move in timeline.game.legal_moves()
            assert timeline.play(move) == after["ops"]
            assert timeline.game.view() == after["view"]
            assert timeline.game.state_hash() == after["state_hash"]


def test_compact_forms_are_the_ops_in_the_v2_patch_form(deal_part: dict[str, Any]) -> None:
    """WEBSOCKET.md "patch": `o` is the ops with pile codes (an undo's redeals_left op is
    `r`), `s` and `r` only when they change."""
    codes = {"reserve": "r", "stock": "s", "waste": "w", "bouquet": "b"}

    def code(address: str) -> str:
        match = _ADDRESS.fullmatch(address)
        assert match is not None
        return codes[match.group(3)] if match.group(3) else match.group(1)[0] + match.group(2)

    for playout in deal_part["playouts"]:
        status, redeals = "playing", 16 if playout["game"] == "matrimony" else None
        for move, after in zip(playout["moves"], playout["after"], strict=True):
            compact = after["compact"]
            source, _, target = move.partition(">")
            assert compact["m"] == (f"{code(source)}>{code(target)}" if target else move)
            expected = []
            for op in after["ops"]:
                if op["op"] == "move":
                    expected.append(["m", code(op["from"]), code(op["to"]), op["card"]])
                elif op["op"] == "reveal":
                    expected.append(["r", op["card"]])
                elif op["op"] == "set":
                    expected.append(["s", code(op["pile"]), op["cards"]])
            assert compact["o"] == expected
            assert compact.get("s") == (after["status"] if after["status"] != status else None)
            now = after["view"].get("redeals_left")
            assert compact.get("r") == (now if now != redeals else None)
            status, redeals = after["status"], now


def test_undo_playouts_cover_what_a_client_must_undo(deal_part: dict[str, Any]) -> None:
    undo = [p for p in deal_part["playouts"] if p["policy"] == "last+undo"]
    assert sorted(p["game"] for p in undo) == sorted(GAME_NAMES)
    steps = [(p, i) for p in undo for i, move in enumerate(p["moves"]) if move == "undo"]
    ops = [op for p, i in steps for op in p["after"][i]["ops"]]
    assert any(op["op"] == "move" and op["to"] == "stock" for op in ops)
    assert any(op["op"] == "redeals_left" for op in ops)  # an undone redeal
    assert any(p["moves"][i - 1] == "redeal" for p, i in steps)
    assert any(p["moves"][i - 1] == "undo" for p, i in steps)  # undos in a row
    colorado = next(p for p in undo if p["game"] == "colorado")
    assert any(
        op["to"] == "stock"
        for i, m in enumerate(colorado["moves"])
        if m == "undo"
        for op in colorado["after"][i]["ops"]
    )


def test_hash_chain_vectors_follow_audit_md(deal_part: dict[str, Any]) -> None:
    """AUDIT.md §2: genesis, then one link per move, computed here from the document."""

    def link(*fields: str) -> str:
        return hashlib.sha256("\n".join(fields).encode("ascii")).hexdigest()

    chained = [p for p in deal_part["playouts"] if "chain" in p]
    assert len(chained) == len(GAME_NAMES)
    for playout in chained:
        game, seed = playout["game"], playout["seed"]
        deal_hash = spec_hash(game, seed, "playing", spec_deal(game, seed))
        previous = link("genesis", playout["chain"]["game_id"], game, deal_hash)
        assert playout["chain"]["genesis"] == previous
        for version, (move, after) in enumerate(
            zip(playout["moves"], playout["after"], strict=True), 1
        ):
            previous = link(
                previous, str(version), move, str(after["server_time"]), after["state_hash"]
            )
            assert after["hash"] == previous


def test_ops_describe_every_change_in_random_games() -> None:
    """Beyond the vectors: replaying ops always gives the engine's view and table."""
    import random

    for game_name in GAME_NAMES:
        rng = random.Random(game_name)
        for n in range(6):
            game = new_game(game_name, f"ops-{n}")
            table, view = game.table(), game.view()
            for _ in range(300):
                legal = game.legal_moves()
                if not legal:
                    break
                move = rng.choice(legal)
                ops = game.play(move)
                apply_ops(table, move, ops)
                apply_ops(view, move, ops)
                assert table == game.table() and view == game.view(), (game_name, n, move)


# --- the docs' worked examples -----------------------------------------------------------


def test_state_md_worked_example() -> None:
    text = (PROTOCOL / "STATE.md").read_text(encoding="utf-8")
    block = text.split("the real text has no line breaks):\n\n```\n", 1)[1].split("```", 1)[0]
    canonical = block.replace("\n", "")
    game = new_game("balcony", "abc")
    document = {"game": game.name, "seed": "abc", "status": game.status, "table": game.table()}
    assert canonical == json.dumps(document, sort_keys=True, separators=(",", ":"))
    assert hashlib.sha256(canonical.encode("ascii")).hexdigest() == game.state_hash()
    assert game.state_hash() in text
    game.play("deal")
    assert game.state_hash() in text
    assert new_game("matrimony", "abc").state_hash() in text
    assert new_game("gloucestershire", "playout-last").state_hash() in text


def test_deals_md_balcony_example() -> None:
    text = (PROTOCOL / "DEALS.md").read_text(encoding="utf-8")
    block = text.split('`shuffled_deck("abc", 1)` as texts:\n\n```\n', 1)[1].split("```", 1)[0]
    assert block.split() == [card_text(c) for c in shuffled_deck("abc", 1)]
    table = new_game("balcony", "abc").table()
    for key in ("reserve", "stock", "tableau", "foundations"):
        assert json.dumps(table[key])[1:-1] in " ".join(text.split()), key
