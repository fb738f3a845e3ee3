"""The WebSocket messages' schemas (server/ws_schema.py): ws.py checks the client's fields
by them, and the frame check of the test support (which every WebSocket test runs on every
frame it receives) refuses a frame outside them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from server_support import check_frame

from server import schema
from server.codec import check_fields
from server.errors import ApiError
from server.openapi import openapi_document
from server.ws import FIELDS
from server.ws_schema import CLIENT_MESSAGES, CLIENT_SCHEMAS, WS_SCHEMAS

VALID_CLIENT_MESSAGES: dict[str, dict[str, Any]] = {
    "auth": {"type": "auth", "token": "v1.p_x.sig"},
    "subscribe": {"type": "subscribe", "game_id": "g_1", "version": 3},
    "unsubscribe": {"type": "unsubscribe", "game_id": "g_1"},
    "move": {
        "type": "move",
        "game_id": "g_1",
        "move": "t3>f0",
        "version": 0,
        "move_id": "m1",
        "client_time": 1,
    },
    "ping": {"type": "ping", "nonce": "n"},
}


def _code(check: Any, message: dict[str, Any]) -> str | None:
    try:
        check(message)
    except ApiError as error:
        return error.code
    return None


def test_every_schema_is_in_the_openapi_document() -> None:
    components = openapi_document()["components"]["schemas"]
    assert all(components[name] == schema for name, schema in WS_SCHEMAS.items())


@pytest.mark.parametrize("kind", sorted(CLIENT_SCHEMAS))
def test_ws_field_checks_agree_with_the_schema(kind: str) -> None:
    """The same verdict from ws.py's check and from the schema, on valid messages, each
    required field missing, an unknown field and each field of the wrong type."""
    by_schema = CLIENT_MESSAGES[CLIENT_SCHEMAS[kind]]
    checks = [
        lambda message: check_fields(copy.deepcopy(message), *FIELDS[kind]),
        lambda message: schema.check(copy.deepcopy(message), by_schema),
    ]
    valid = VALID_CLIENT_MESSAGES[kind]
    cases = [valid, {"type": kind}, {**valid, "extra": 1}]
    for name in by_schema["properties"]:
        cases.append({key: value for key, value in valid.items() if key != name})
        cases.append({**valid, name: [1]})
        cases.append({**valid, name: True})
    for optional in set(by_schema["properties"]) - set(by_schema["required"]):
        cases.append({**valid, optional: None})
    for message in cases:
        verdicts = [_code(check, message) for check in checks]
        assert verdicts[0] == verdicts[1], (message, verdicts)
    assert _code(checks[0], valid) is None


def test_the_frame_check_refuses_frames_outside_the_schema() -> None:
    pong = {"type": "pong", "nonce": 1, "server_time": 5}
    check_frame(pong)
    for bad in (
        {"type": "pong", "nonce": 1},
        {**pong, "server_time": "5"},
        {**pong, "extra": 1},
        {**pong, "type": "pang"},
        {"type": "error", "in_reply_to": None, "game_id": None, "code": "nope", "message": ""},
        {
            "type": "accepted",
            "move_id": "m1",
            "game_id": "g_1",
            "version": 1,
            "applied_version": 1,
            "duplicate": False,
            "status": "playing",
            "score": 0,
            "legal_moves": [],
            "patch": {"g": "g_1", "v": 1, "m": "deal"},
        },
    ):
        with pytest.raises(AssertionError):
            check_frame(bad)
