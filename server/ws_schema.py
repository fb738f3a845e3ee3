"""The JSON Schemas of the WebSocket protocol v2 messages (``protocol/WEBSOCKET.md``).

One place for the shape of every frame: ``server/openapi.py`` publishes these schemas as
components of ``/openapi.json`` (``WsAuth`` … ``WsError``), ``server/ws.py`` checks the
client's fields with :func:`client_fields` of them, the test support validates every
frame the server sends against them, and ``tools/ts_schema.py`` generates the TypeScript
SDK's message types from them (so a protocol change breaks the SDK's build).

Only the keywords ``server/schema.py`` understands are used, plus ``$ref`` to the REST
components (``Snapshot``, ``ErrorCode``).
"""

from __future__ import annotations

from typing import Any

from protocol.piles import ADDRESS, CODE
from server.errors import ERROR_CODES


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _message(
    kind: str,
    required: dict[str, Any],
    optional: dict[str, Any] | None = None,
    closed: bool = True,
    description: str | None = None,
) -> dict[str, Any]:
    """The schema of the message ``kind``: a map with a ``type`` and these fields."""
    schema: dict[str, Any] = {
        "type": "object",
        "required": ["type", *required],
        "properties": {"type": {"const": kind}, **required, **(optional or {})},
    }
    if closed:
        schema["additionalProperties"] = False
    if description is not None:
        schema["description"] = description
    return schema


STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
STATUS: dict[str, Any] = {"type": "string", "enum": ["playing", "won", "stuck", "resigned"]}
MOVE_TEXTS: dict[str, Any] = {"type": "array", "items": STRING}
#: The codes of protocol/ERRORS.md, one component shared with REST's ``Error``.
ERROR_CODE_SCHEMA: dict[str, Any] = {"type": "string", "enum": sorted(ERROR_CODES)}
#: Fields an error may add to ``code`` and ``message`` (ApiError details; "…" in the doc).
ERROR_DETAILS: dict[str, Any] = {
    "field": {"type": "string", "description": "the field of a field error"},
    "version": {"type": "integer", "description": "the game's current version"},
    "reason_code": {"type": "string", "description": "the engine's reason (illegal_move)"},
    "limit": {"type": "string", "description": "the limit that refused (rate_limited)"},
    "retry_after_ms": {"type": "integer", "description": "resend after this many ms"},
    "closes": {"type": "integer", "description": "Unix ms of the day's close"},
    "eligible_at": {"type": "integer", "description": "Unix ms (account_too_new)"},
}

#: The WebSocket close codes a client may see (WEBSOCKET.md, "Close codes").
CLOSE_CODES: dict[int, str] = {
    1000: "normal: the client closed the socket",
    1006: "no close frame: the server dropped a socket that let 512 KiB wait unread, or "
    "went away; reconnect and subscribe again with your versions",
    1008: "policy: after an error too_many_errors, too_many_connections or protocol_retired",
    1009: "a client frame over 1 MiB",
    1013: "try again later: the store was unreachable when the socket opened "
    "(error store_unavailable first)",
}

# -- client -> server: optional fields may be null (server/codec.py check_fields) --------

CLIENT_MESSAGES: dict[str, dict[str, Any]] = {
    "WsAuth": _message("auth", {"token": {**STRING, "description": "from POST /v1/players"}}),
    "WsSubscribe": _message(
        "subscribe",
        {"game_id": STRING},
        {
            "version": {
                "type": ["integer", "null"],
                "description": "the last version the client holds",
            }
        },
    ),
    "WsUnsubscribe": _message("unsubscribe", {"game_id": STRING}),
    "WsMove": _message(
        "move",
        {
            "game_id": STRING,
            "move": {**STRING, "description": "a move text, normal or compact ('t3>f0')"},
            "version": {**INTEGER, "description": "the version the move was made against"},
            "move_id": {**STRING, "minLength": 1, "maxLength": 64},
        },
        {"client_time": {"type": ["integer", "null"], "description": "Unix ms"}},
    ),
    "WsPing": _message("ping", {}, {"nonce": {"type": ["string", "integer", "null"]}}),
}

# -- ops (protocol/DIFF.md §3): the long form REST answers, the compact form of v2 ----------

#: A card text (``RNG.md`` §5): rank then suit letter.
CARD: dict[str, Any] = {"type": "string", "pattern": "^(A|[2-9]|10|J|Q|K)[CDHS]$"}
CARD_OR_NULL: dict[str, Any] = {**CARD, "type": ["string", "null"]}
PILE_ADDRESS: dict[str, Any] = {
    "type": "string",
    "pattern": f"^({ADDRESS.pattern})$",
    "description": "a pile address (DIFF.md §1): foundation[i], tableau[i], reserve, ...",
}
PILE_CODE: dict[str, Any] = {
    "type": "string",
    "pattern": f"^({CODE.pattern})$",
    "description": "a pile code: f0…f15, t0…t19, r, s, w, b",
}


def _op(kind: str, fields: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "required": ["op", *fields],
        "properties": {"op": {"const": kind}, **fields},
        "additionalProperties": False,
    }


def _tuple(description: str, *items: dict[str, Any]) -> dict[str, Any]:
    """A fixed-length array typed by position (JSON Schema 2020-12 ``prefixItems``)."""
    return {
        "type": "array",
        "description": description,
        "prefixItems": list(items),
        "minItems": len(items),
        "maxItems": len(items),
    }


#: The long-form ops (REST's move answer, the vectors): one schema per kind.
OP_SCHEMAS: dict[str, dict[str, Any]] = {
    "OpMove": _op(
        "move",
        {"from": PILE_ADDRESS, "to": PILE_ADDRESS, "card": CARD},
        "the top card of 'from' goes onto 'to' (from 'stock': it is face up now)",
    ),
    "OpReveal": _op(
        "reveal",
        {"pile": {"const": "stock"}, "card": CARD_OR_NULL},
        "Colorado: the stock's new face-up top card, null once it is empty",
    ),
    "OpSet": _op(
        "set",
        {"pile": PILE_ADDRESS, "cards": {"type": "array", "items": CARD}},
        "the pile's full new content, bottom first (a redeal, an undo)",
    ),
    "OpRedealsLeft": _op(
        "redeals_left",
        {"count": {"type": "integer", "minimum": 0, "maximum": 16}},
        "Matrimony, in the undo of a redeal: redeals_left becomes count",
    ),
}
#: The compact ops of a v2 patch's ``o``: arrays, piles as codes.
COMPACT_OP_SCHEMAS: dict[str, dict[str, Any]] = {
    "CompactOpMove": _tuple(
        "op move: ['m', from, to, card]", {"const": "m"}, PILE_CODE, PILE_CODE, CARD
    ),
    "CompactOpReveal": _tuple(
        "op reveal of Colorado's stock: ['r', card or null]", {"const": "r"}, CARD_OR_NULL
    ),
    "CompactOpSet": _tuple(
        "op set: ['s', pile, [cards, bottom first]]",
        {"const": "s"},
        PILE_CODE,
        {"type": "array", "items": CARD},
    ),
}

# -- server -> client ----------------------------------------------------------------------

COMPACT_PATCH_FIELDS: dict[str, Any] = {
    "g": {**STRING, "description": "the game's id"},
    "v": {**INTEGER, "description": "the version the move produced"},
    "m": {**STRING, "description": "the compact move text ('t3>f0', 'deal', 'undo', …)"},
    "o": {
        "type": "array",
        "items": _ref("CompactOp"),
        "description": "the ops in order (DIFF.md §3-4); an undo's redeals_left is 'r'",
    },
}
COMPACT_PATCH_CHANGES: dict[str, Any] = {
    "s": {**STATUS, "description": "the new status, only when it changed"},
    "r": {**INTEGER, "description": "Matrimony's redeals_left, only when it changed"},
}


def _error_reply(kind: str, required: dict[str, Any]) -> dict[str, Any]:
    fields = {**required, "code": _ref("ErrorCode"), "message": STRING}
    return _message(kind, fields, ERROR_DETAILS, closed=False)


SERVER_MESSAGES: dict[str, dict[str, Any]] = {
    "WsAuthenticated": _message("authenticated", {"player_id": STRING}),
    "WsSubscribed": _message(
        "subscribed",
        {
            "game_id": STRING,
            "role": {"type": "string", "enum": ["owner", "spectator"]},
            "version": INTEGER,
            "legal_moves": {**MOVE_TEXTS, "type": ["array", "null"]},
        },
    ),
    "WsSnapshot": _message("snapshot", {"game_id": STRING, "snapshot": _ref("Snapshot")}),
    "WsPatch": _message(
        "patch", COMPACT_PATCH_FIELDS, COMPACT_PATCH_CHANGES, description="one move, one version"
    ),
    "WsAccepted": _message(
        "accepted",
        {
            "move_id": STRING,
            "game_id": STRING,
            "version": INTEGER,
            "applied_version": INTEGER,
            "duplicate": {"type": "boolean"},
            "status": STATUS,
            "score": INTEGER,
            "legal_moves": MOVE_TEXTS,
            "patch": {
                "anyOf": [_ref("WsCompactPatch"), {"type": "null"}],
                "description": "the move's patch; null for a duplicate",
            },
        },
    ),
    "WsRejected": _error_reply(
        "rejected",
        {"move_id": {"type": ["string", "null"]}, "game_id": {"type": ["string", "null"]}},
    ),
    "WsUnsubscribed": _message("unsubscribed", {"game_id": STRING}),
    "WsPong": _message(
        "pong",
        {"nonce": {"type": ["string", "integer", "null"]}, "server_time": INTEGER},
    ),
    "WsError": _error_reply(
        "error",
        {"in_reply_to": {"type": ["string", "null"]}, "game_id": {"type": ["string", "null"]}},
    ),
}


def _union(messages: dict[str, dict[str, Any]], description: str) -> dict[str, Any]:
    return {"anyOf": [_ref(name) for name in messages], "description": description}


#: Every schema of this module, as components of the OpenAPI document.
WS_SCHEMAS: dict[str, dict[str, Any]] = {
    "ErrorCode": ERROR_CODE_SCHEMA,
    **OP_SCHEMAS,
    "Op": {"anyOf": [_ref(name) for name in OP_SCHEMAS], "description": "an op (DIFF.md §3)"},
    **COMPACT_OP_SCHEMAS,
    "CompactOp": {
        "anyOf": [_ref(name) for name in COMPACT_OP_SCHEMAS],
        "description": "a compact op of a v2 patch (WEBSOCKET.md, 'patch')",
    },
    "WsCompactPatch": {
        "type": "object",
        "description": "a patch message without its type, as 'accepted' carries it",
        "required": list(COMPACT_PATCH_FIELDS),
        "properties": {**COMPACT_PATCH_FIELDS, **COMPACT_PATCH_CHANGES},
        "additionalProperties": False,
    },
    **CLIENT_MESSAGES,
    **SERVER_MESSAGES,
    "WsClientMessage": _union(CLIENT_MESSAGES, "a frame a client sends to /v2/ws"),
    "WsServerMessage": _union(SERVER_MESSAGES, "a frame the server sends on /v2/ws"),
}


def message_type(schema: dict[str, Any]) -> str:
    """The ``type`` of the message ``schema`` describes."""
    kind: str = schema["properties"]["type"]["const"]
    return kind


#: The component of each message type, by the ``type`` the frame carries.
CLIENT_SCHEMAS = {message_type(schema): name for name, schema in CLIENT_MESSAGES.items()}
SERVER_SCHEMAS = {message_type(schema): name for name, schema in SERVER_MESSAGES.items()}

_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int}


def client_fields(kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The required and optional fields of the client message ``kind`` with their Python
    types, as ``server.codec.check_fields`` takes them (it lets an optional field be null)."""
    schema = CLIENT_MESSAGES[CLIENT_SCHEMAS[kind]]
    required: dict[str, Any] = {}
    optional: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if "const" in spec:
            python: Any = type(spec["const"])
        else:
            kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
            types = tuple(_PYTHON_TYPES[k] for k in kinds if k != "null")
            python = types[0] if len(types) == 1 else types
        (required if name in schema["required"] else optional)[name] = python
    return required, optional
