"""The protocol documents agree with the code they describe."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from server import schema, ws
from server.app import ROUTES
from server.errors import ERROR_CODES, WEBSOCKET_ONLY, ApiError
from server.openapi import SCHEMAS
from server.patches import compact_op
from server.rules import new_game
from server.rules.moves import IllegalMove
from server.rules.undo import Timeline
from server.ws import HANDLERS
from server.ws_schema import (
    CLIENT_SCHEMAS,
    CLOSE_CODES,
    COMPACT_OP_SCHEMAS,
    OP_SCHEMAS,
    SERVER_SCHEMAS,
)

PROTOCOL = Path(__file__).resolve().parent.parent / "protocol"


def test_errors_md_lists_every_error_code_with_its_http_status() -> None:
    text = (PROTOCOL / "ERRORS.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}|—) \|", text, re.M)
    assert {code for code, _ in rows} == set(ERROR_CODES)
    assert {code: int(status) for code, status in rows if status != "—"} == {
        code: status for code, (status, _) in ERROR_CODES.items() if code not in WEBSOCKET_ONLY
    }


def test_rest_md_lists_every_http_route() -> None:
    text = (PROTOCOL / "REST.md").read_text()
    for route in ROUTES:
        for method in getattr(route, "methods", None) or ():
            if method == "HEAD":
                continue
            documented = re.search(rf"`{method} {re.escape(route.path)}[`?]", text)
            assert documented, f"{method} {route.path}"


def test_websocket_md_documents_every_client_message_type() -> None:
    text = (PROTOCOL / "WEBSOCKET.md").read_text()
    for kind in HANDLERS:
        assert f"| `{kind}` |" in text, kind


def test_every_websocket_message_type_has_a_schema() -> None:
    """WEBSOCKET.md's message types are those of server/ws_schema.py, both directions."""
    text = (PROTOCOL / "WEBSOCKET.md").read_text()
    client_part, server_part = text.split("## Server → client")
    client_part = client_part.split("## Client → server")[1]
    documented_client = set(re.findall(r"^\| `([a-z_]+)` \|", client_part, re.M))
    documented_server = set(re.findall(r"^### `([a-z_]+)`$", server_part, re.M))
    assert documented_client == set(CLIENT_SCHEMAS) == set(HANDLERS)
    assert documented_server == set(SERVER_SCHEMAS)


# -- the findings of issue 27: each claim checked against the code -------------------------

DOCS = sorted(PROTOCOL.glob("*.md")) + [PROTOCOL / "sessions" / "README.md"]


def test_error_codes_only_sent_on_a_websocket_have_no_http_status() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| — \|", (PROTOCOL / "ERRORS.md").read_text(), re.M)
    assert set(rows) == WEBSOCKET_ONLY
    assert "protocol_retired" in rows  # it was documented as HTTP 410, which nothing answers


def test_no_protocol_document_points_into_the_server_code() -> None:
    """A client team reads protocol/ only: the rules, the undo order and the keys are
    written out there, never deferred to a server module."""
    for doc in DOCS:
        found = re.findall(r"\bserver/[\w./]*", doc.read_text())
        assert not found, f"{doc.name}: {found}"


def test_every_document_a_protocol_document_cites_exists() -> None:
    names = {p.name for p in [*PROTOCOL.glob("*.md"), *PROTOCOL.parent.glob("*.md")]}
    assert "RULES.md" in names
    for doc in DOCS:
        for cited in re.findall(r"`(?:protocol/)?([A-Z]+\.md)`", doc.read_text()):
            assert cited in names, f"{doc.name} cites {cited}"


def test_a_patch_status_is_never_playing_again() -> None:
    """WEBSOCKET.md: `s` is only ever won, stuck or resigned: an undo is refused once the
    game is over, so no patch brings a game back to playing."""
    text = (PROTOCOL / "WEBSOCKET.md").read_text()
    values = re.search(r"^\* `s`: the status, \*\*only when it changes\*\* \(([^)]*)\)", text, re.M)
    assert values is not None
    listed = set(re.findall(r'`"([a-z]+)"`', values.group(1)))
    assert listed == {"won", "stuck", "resigned"}
    timeline = Timeline(new_game("balcony", "abc"))
    timeline.play("deal")
    timeline.play("resign")
    with pytest.raises(IllegalMove) as refused:
        timeline.play("undo")
    assert refused.value.code == "game_over"


def test_redeals_left_is_changed_by_the_undo_op_as_documented() -> None:
    """VIEW.md and DIFF.md agree: a redeal's ops never carry redeals_left, the undo of a
    redeal ends with a redeals_left op (and the v2 patch carries it as `r`)."""
    for name in ("VIEW.md", "DIFF.md"):
        assert not re.search(r"No op (changes|carries)", (PROTOCOL / name).read_text()), name
    game = new_game("matrimony", "playout-last")
    timeline = Timeline(game)
    while timeline.game.can_deal() is None:
        timeline.play("deal")
    redeal_ops = timeline.play("redeal")
    assert all(op["op"] == "set" for op in redeal_ops)
    undo_ops = timeline.play("undo")
    assert undo_ops[-1] == {"op": "redeals_left", "count": 16}


def test_view_md_says_what_an_undo_tells_of_the_stock() -> None:
    text = (PROTOCOL / "VIEW.md").read_text().split("## 2.")[0]
    assert "undo" in text and "stock" in text
    game = new_game("balcony", "abc")
    timeline = Timeline(game)
    dealt = timeline.play("deal")[0]["card"]
    # The undo hands the card back to the stock, face up, so a client knows the stock top.
    assert timeline.play("undo") == [{"op": "move", "from": "waste", "to": "stock", "card": dealt}]


def test_daily_md_says_ranked_games_take_no_undo_and_casual_ones_do() -> None:
    text = (PROTOCOL / "DAILY.md").read_text()
    assert "offers no undo" not in text
    assert "undo_ranked" in text and "casual" in text


def test_websocket_md_lists_every_close_code_the_server_uses() -> None:
    text = (PROTOCOL / "WEBSOCKET.md").read_text()
    table = text.split("## Close codes")[1].split("\n## ")[0]
    documented = {int(code) for code in re.findall(r"^\| (\d{4}) \|", table, re.M)}
    used = {value for name, value in vars(ws).items() if name.startswith("CLOSE_")}
    assert used <= documented
    assert documented == set(CLOSE_CODES) == used | {1000, 1006, 1009}


def test_every_op_of_the_vectors_is_valid_under_the_typed_op_schemas() -> None:
    """The OpenAPI `Patch` is typed: its ops (`Op`) and the v2 compact ops (`CompactOp`)
    take every op the vectors hold, and refuse what is not an op."""
    vectors = json.loads((PROTOCOL / "vectors.json").read_text())
    op_schema = {"anyOf": [SCHEMAS[name] for name in OP_SCHEMAS]}
    compact_schema = {"anyOf": [SCHEMAS[name] for name in COMPACT_OP_SCHEMAS]}
    kinds = set()
    for playout in vectors["deals"]["playouts"]:
        for step in playout["after"]:
            for op in step["ops"]:
                schema.check(op, op_schema)
                kinds.add(op["op"])
                if op["op"] != "redeals_left":
                    schema.check(compact_op(op), compact_schema)
    assert kinds >= {"move", "reveal", "set"}
    for bad in (
        {"op": "move", "from": "tableau[3]", "to": "t0", "card": "JC"},
        {"op": "move", "from": "tableau[3]", "to": "foundation[0]", "card": "1C"},
        {"op": "set", "pile": "stock", "cards": ["JC"], "extra": 1},
    ):
        with pytest.raises(ApiError):
            schema.check(bad, op_schema)
    for bad_compact in (["m", "t3", "f0"], ["m", "t3", "f0", "ZZ"], ["x", "JC"], ["r", "s", "JC"]):
        with pytest.raises(ApiError):
            schema.check(bad_compact, compact_schema)
