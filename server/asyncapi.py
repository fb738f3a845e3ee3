"""The AsyncAPI 3 document of the WebSocket protocol v2, served at ``/asyncapi.json``.

One source for the WebSocket contract: every message's payload is the schema the server
checks client frames with and the test suite checks server frames with
(``server/ws_schema.py``), each with an example taken from the recorded sessions of
``protocol/sessions`` (real frames; the random ids and the clock, which the recordings
hold as placeholders, are given fixed values), and the close codes. CI validates it with
the AsyncAPI parser (``clients/ts/scripts/validate-asyncapi.mjs``) and checks every frame
the server sends in the suite against it (``tests/server/server_support.py``).

The schemas are written for OpenAPI 3.1 (JSON Schema 2020-12); AsyncAPI's default schema
format is draft-07, so a tuple's ``prefixItems`` becomes draft-07's ``items`` list here.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from server.openapi import SCHEMAS
from server.ws_schema import (
    CLIENT_MESSAGES,
    CLIENT_SCHEMAS,
    CLOSE_CODES,
    SERVER_MESSAGES,
    SERVER_SCHEMAS,
)

CHANNEL = "v2"
#: The replies each client message gets (WEBSOCKET.md, "Client → server").
REPLIES: dict[str, tuple[str, ...]] = {
    "auth": ("authenticated", "error"),
    "subscribe": ("subscribed", "snapshot", "patch", "error"),
    "unsubscribe": ("unsubscribed", "error"),
    "move": ("accepted", "rejected"),
    "ping": ("pong", "error"),
}
#: Fixed values for the placeholders of the recorded sessions (protocol/sessions/README.md).
PLACEHOLDER_VALUES: dict[str, Any] = {
    "<game_id>": "g_Qm9fX3NvbGl0YWly",
    "<player_id>": "p_cGxheWVyX2V4YW1w",
    "<token>": "v1.p_cGxheWVyX2V4YW1w.1798567200.c2lnbmF0dXJlX29mX3RoZV90b2tlbg",
    "<server_time>": 1795980677456,
}
#: The session whose frames are the examples (a small table: short snapshots).
EXAMPLE_GAMES = ("balcony", "colorado", "matrimony", "empress_of_italy", "gloucestershire")


def draft7(node: Any) -> Any:
    """``node`` with JSON Schema 2020-12's ``prefixItems`` written as draft-07 ``items``."""
    if isinstance(node, list):
        return [draft7(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: draft7(value) for key, value in node.items() if key != "prefixItems"}
    if "prefixItems" in node:
        converted["items"] = draft7(node["prefixItems"])
    return converted


def _referenced(names: list[str]) -> dict[str, Any]:
    """The components ``names`` and every component they reference, in draft-07."""
    found: dict[str, Any] = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found[name] = draft7(SCHEMAS[name])
        text = json.dumps(SCHEMAS[name])
        for part in text.split('"#/components/schemas/')[1:]:
            pending.append(part.split('"', 1)[0])
    return dict(sorted(found.items()))


def _fill(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _fill(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item) for item in value]
    if isinstance(value, str) and value in PLACEHOLDER_VALUES:
        return PLACEHOLDER_VALUES[value]
    if isinstance(value, str):
        for placeholder, real in PLACEHOLDER_VALUES.items():
            if placeholder in value and isinstance(real, str):
                value = value.replace(placeholder, real)
    return value


@cache
def recorded_examples() -> dict[tuple[str, str], dict[str, Any]]:
    """One recorded frame per (direction, message type): the first of the sessions, in
    :data:`EXAMPLE_GAMES` order (a ``patch`` with ops, an ``accepted`` with a patch)."""
    examples: dict[tuple[str, str], dict[str, Any]] = {}
    folder = resources.files("protocol.sessions")
    for game in EXAMPLE_GAMES:
        document = json.loads(folder.joinpath(f"{game}.json").read_text(encoding="utf-8"))
        for event in document["events"]:
            if event["dir"] not in ("send", "recv"):
                continue
            message = event["message"]
            if message["type"] == "accepted" and message["patch"] is None:
                continue
            if message["type"] == "patch" and not message["o"]:
                continue
            examples.setdefault((event["dir"], message["type"]), _fill(message))
    return examples


def _message(kind: str, component: str, direction: str) -> dict[str, Any]:
    schema = SCHEMAS[component]
    message: dict[str, Any] = {
        "name": kind,
        "title": component,
        "contentType": "application/msgpack",
        "payload": {"$ref": f"#/components/schemas/{component}"},
    }
    if "description" in schema:
        message["summary"] = schema["description"]
    example = recorded_examples().get((direction, kind))
    if example is not None:
        message["examples"] = [{"name": "recorded", "payload": example}]
    return message


def _ref(path: str) -> dict[str, str]:
    return {"$ref": path}


@cache
def asyncapi_document() -> dict[str, Any]:
    messages = {kind: _message(kind, name, "send") for kind, name in CLIENT_SCHEMAS.items()}
    messages |= {kind: _message(kind, name, "recv") for kind, name in SERVER_SCHEMAS.items()}
    channel_messages = {kind: _ref(f"#/components/messages/{kind}") for kind in messages}
    close_codes = [{"code": code, "meaning": meaning} for code, meaning in CLOSE_CODES.items()]

    def in_channel(kind: str) -> dict[str, str]:
        return _ref(f"#/channels/{CHANNEL}/messages/{kind}")

    operations: dict[str, Any] = {}
    for kind in CLIENT_SCHEMAS:
        operations[f"receive_{kind}"] = {
            "action": "receive",
            "summary": f"the client sends '{kind}'",
            "channel": _ref(f"#/channels/{CHANNEL}"),
            "messages": [in_channel(kind)],
            "reply": {
                "channel": _ref(f"#/channels/{CHANNEL}"),
                "messages": [in_channel(reply) for reply in REPLIES[kind]],
            },
        }
    for kind in SERVER_SCHEMAS:
        operations[f"send_{kind}"] = {
            "action": "send",
            "summary": f"the server sends '{kind}'",
            "channel": _ref(f"#/channels/{CHANNEL}"),
            "messages": [in_channel(kind)],
        }
    operations["send_retired"] = {
        "action": "send",
        "summary": "on /v1/ws, at once after the handshake: error protocol_retired, then "
        "close 1008",
        "channel": _ref("#/channels/v1"),
        "messages": [_ref("#/channels/v1/messages/error")],
    }
    description = (
        "Every frame is a binary WebSocket frame holding one msgpack map with a string "
        "'type'. Authenticate with 'auth' (token from POST /v1/players), then 'subscribe' "
        "to games; moves are answered by exactly one 'accepted' (carrying the move's "
        "compact patch) or 'rejected'. Close codes: "
        + "; ".join(f"{code}: {meaning}" for code, meaning in CLOSE_CODES.items())
        + ". See protocol/WEBSOCKET.md."
    )
    return {
        "asyncapi": "3.1.0",
        "info": {
            "title": "Solitaire game server: WebSocket protocol",
            "version": "2",
            "description": "The live half of the protocol (the REST half is /openapi.json). "
            "Generated from the schemas the server validates frames with.",
        },
        "defaultContentType": "application/msgpack",
        "servers": {
            "local": {
                "host": "localhost:8000",
                "protocol": "ws",
                "description": "the server's own host and port (wss behind TLS)",
            }
        },
        "channels": {
            CHANNEL: {
                "address": "/v2/ws",
                "title": "WebSocket protocol v2",
                "description": description,
                "messages": channel_messages,
                "x-close-codes": close_codes,
            },
            "v1": {
                "address": "/v1/ws",
                "title": "WebSocket protocol v1 (retired)",
                "description": "Retired: the server sends one 'error' protocol_retired "
                "before the client sends anything, then closes with 1008. Any other path is "
                "refused at the handshake with a bare HTTP 403.",
                "messages": {"error": _ref("#/components/messages/error")},
            },
        },
        "operations": operations,
        "components": {
            "schemas": _referenced([*CLIENT_MESSAGES, *SERVER_MESSAGES]),
            "messages": messages,
        },
    }
