"""The OpenAPI 3.1 document served at ``/openapi.json``.

The request schemas (bodies and query parameters) are the ones the routes check their
input against, imported from ``server/rest.py``; the rest is written here.  Tests check
that every route of the app is here and nothing else is, and run schemathesis against
a real server (``tests/contract``), which compares real answers with these schemas.
"""

from __future__ import annotations

from typing import Any

from server import rest
from server.accounts import routes as accounts
from server.audit.core import SIGNALS
from server.operator import review, trail
from server.operator import routes as operator
from server.operator.actions import VOID_CODES
from server.rules import GAME_NAMES
from server.ws_schema import WS_SCHEMAS


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _body(schema: dict[str, Any], description: str) -> dict[str, Any]:
    content = {"application/json": {"schema": schema}, "application/msgpack": {"schema": schema}}
    return {"description": description, "content": content}


def _request(schema: dict[str, Any], description: str, required: bool = True) -> dict[str, Any]:
    return {**_body(schema, description), "required": required}


def _errors(*statuses: int) -> dict[str, Any]:
    return {str(status): _body(_ref("Error"), "an error (see Error.code)") for status in statuses}


SECURED: list[dict[str, list[str]]] = [{"bearer": []}]
#: The operator routes take an operator token (protocol/OPERATOR.md), never a player's.
OPERATOR_SECURED: list[dict[str, list[str]]] = [{"operator": []}]
OPTIONAL_AUTH: list[dict[str, list[str]]] = [{}, {"bearer": []}]
GAME_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": _ref("ErrorCode"),
                    "message": {"type": "string"},
                    "field": {"type": "string"},
                    "version": {"type": "integer", "description": "current version (stale)"},
                    "reason_code": {"type": "string", "description": "engine's reason"},
                    "closes": {
                        "type": "integer",
                        "description": "Unix ms of the day's close (daily_open, daily_closed)",
                    },
                    "eligible_at": {
                        "type": "integer",
                        "description": "Unix ms from which the account may play ranked "
                        "(account_too_new)",
                    },
                },
            }
        },
    },
    "Player": {
        "type": "object",
        "required": ["player_id", "token"],
        "properties": {"player_id": {"type": "string"}, "token": {"type": "string"}},
    },
    "GameInfo": {
        "type": "object",
        "required": ["name", "title", "decks", "summary", "piles"],
        "properties": {
            "name": {"type": "string", "enum": list(GAME_NAMES)},
            "title": {"type": "string"},
            "decks": {"type": "integer"},
            "summary": {"type": "string"},
            "piles": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "a one-line hint per pile kind of the game",
            },
        },
    },
    "Snapshot": {
        "type": "object",
        "required": [
            "id",
            "game",
            "version",
            "status",
            "score",
            "view",
            "legal_moves",
            "daily",
            "assisted",
        ],
        "properties": {
            "id": {"type": "string"},
            "game": {"type": "string", "enum": list(GAME_NAMES)},
            "version": {"type": "integer"},
            "status": {"type": "string", "enum": ["playing", "won", "stuck", "resigned"]},
            "score": {"type": "integer"},
            "view": {"type": "object", "description": "client view, protocol/VIEW.md"},
            "legal_moves": {
                "type": ["array", "null"],
                "items": {"type": "string"},
                "description": "move texts; null unless the caller owns the game",
            },
            "daily": {
                "type": ["string", "null"],
                "format": "date",
                "description": "the day of a ranked daily game; null for any other game",
            },
            "assisted": {"type": "boolean", "description": "a hint was taken in this game"},
        },
    },
    "Patch": {
        "type": "object",
        "description": "a move's patch as REST's move answer carries it: the long form "
        "(protocol/DIFF.md §3-4; WebSocket v2 sends the same ops compact, WsCompactPatch)",
        "required": ["type", "game_id", "from", "to", "move", "ops", "status", "score"],
        "properties": {
            "type": {"const": "patch"},
            "game_id": {"type": "string"},
            "from": {"type": "integer", "description": "the version before the move"},
            "to": {"type": "integer", "description": "the version the move produced"},
            "move": {"type": "string", "description": "the move text in normal form"},
            "ops": {"type": "array", "items": _ref("Op"), "description": "in order"},
            "status": {"type": "string", "enum": ["playing", "won", "stuck", "resigned"]},
            "score": {"type": "integer", "description": "cards on the foundations"},
            "redeals_left": {"type": "integer", "description": "Matrimony only"},
        },
        "additionalProperties": False,
    },
    "Log": {
        "type": "object",
        "required": ["game_id", "game", "status", "version", "seed", "assisted", "moves", "next"],
        "properties": {
            "game_id": {"type": "string"},
            "game": {"type": "string"},
            "status": {"type": "string"},
            "version": {"type": "integer"},
            "seed": {"type": ["string", "null"], "description": "null while the game is on"},
            "assisted": {"type": "boolean", "description": "a hint was taken in this game"},
            "next": {
                "type": ["string", "null"],
                "description": "the cursor of the next page (pass as ?after=); null on the last",
            },
            "moves": {"type": "array", "items": rest.LOG_ENTRY},
        },
    },
}


SCHEMAS["Challenge"] = {
    "type": "object",
    "required": [
        "game",
        "date",
        "commitment",
        "opens",
        "closes",
        "seconds_to_next",
        "closed",
        "seed",
    ],
    "properties": {
        "game": {"type": "string", "enum": list(GAME_NAMES)},
        "date": {"type": "string", "format": "date"},
        "commitment": {"type": "string", "description": "SHA-256 hex of '<game>:<date>:<seed>'"},
        "opens": {"type": "integer", "description": "Unix ms, 00:00 UTC"},
        "closes": {"type": "integer", "description": "Unix ms, 24:00 UTC"},
        "seconds_to_next": {"type": "integer"},
        "closed": {"type": "boolean"},
        "seed": {"type": ["string", "null"], "description": "null until the day closes"},
        "winnable": {"type": "boolean", "description": "the solver proved the deal winnable"},
        "proven_score": {
            "type": "integer",
            "description": "the most cards on the foundations the solver reached",
        },
        "total_cards": {"type": "integer"},
        "candidate": {
            "type": ["integer", "null"],
            "description": "the chosen candidate k (DAILY.md); null until the day closes",
        },
        "par": {
            "type": ["object", "null"],
            "description": "the solver's line on the deal; null until the day closes",
            "properties": {
                "moves": {"type": "array", "items": {"type": "string"}},
                "length": {"type": "integer"},
                "won": {"type": "boolean"},
            },
        },
    },
}
SCHEMAS["Hint"] = {
    "type": "object",
    "required": ["game_id", "version", "move", "win_chance", "samples", "assisted"],
    "properties": {
        "game_id": {"type": "string"},
        "version": {"type": "integer", "description": "the position the hint is for"},
        "move": {"type": "string", "description": "a legal move text"},
        "win_chance": {
            "type": "number",
            "description": "share of sampled stock orders the solver won from here",
        },
        "samples": {"type": "integer", "description": "stock orders sampled"},
        "assisted": {"const": True},
    },
}
SCHEMAS["LeaderboardEntry"] = {
    "type": "object",
    "description": "protocol/DAILY.md; while the day is open only the caller's own entry "
    "has game_id and replay",
    "properties": {
        "rank": {"type": "integer"},
        "player_id": {"type": "string"},
        "game_id": {"type": ["string", "null"]},
        "status": {"enum": ["playing", "won", "stuck", "resigned", "closed"]},
        "score": {"type": "integer"},
        "won": {"type": "boolean"},
        "moves": {"type": "integer"},
        "elapsed_ms": {"type": "integer"},
        "finished_at": {"type": ["integer", "null"], "description": "null until it ended"},
        "replay": {
            "type": ["string", "null"],
            "description": "path of the game's replay export",
        },
        "review": {
            "type": ["string", "null"],
            "enum": ["pending", "flagged", None],
            "description": "the post-close audit (protocol/OPERATOR.md): pending until it "
            "reaches the entry, flagged while in the review queue; null otherwise",
        },
    },
}
# The request bodies, as the routes check them (server/rest.py).
SCHEMAS["Replay"] = rest.REPLAY_EXPORT
SCHEMAS["CreateGame"] = rest.CREATE_GAME_BODY
SCHEMAS["Move"] = rest.MOVE_BODY
SCHEMAS["AuditRequest"] = rest.AUDIT_BODY
# The WebSocket protocol's messages (server/ws_schema.py), for the SDK's generated types.
SCHEMAS.update(WS_SCHEMAS)
GAME_NAME = {"name": "game", "in": "path", "required": True, "schema": {"enum": list(GAME_NAMES)}}
DATE = {
    "name": "date",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "format": "date"},
}


def _leaderboard(entries_description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "game": {"type": "string"},
            "date": {"type": "string"},
            "size": {"type": "integer"},
            "rank": {"type": ["integer", "null"]},
            "player_id": {"type": "string", "description": "the caller (…/me only)"},
            "entries": {"type": "array", "items": _ref("LeaderboardEntry")},
        },
        "description": entries_description,
    }


DAILY_PATHS: dict[str, Any] = {
    "/v1/games/{id}/replay": {
        "get": {
            "summary": "The replay export (seed once revealable; an open day's ranked game: "
            "its player only)",
            "parameters": [GAME_ID],
            "security": OPTIONAL_AUTH,
            "responses": {"200": _body(_ref("Replay"), "the export"), **_errors(401, 403, 404)},
        }
    },
    "/v1/daily/{game}": {
        "get": {
            "summary": "Today's challenge: commitment, opening and closing times, whether "
            "the deal is proven winnable (or its proven score)",
            "parameters": [GAME_NAME],
            "responses": {"200": _body(_ref("Challenge"), "today's"), **_errors(404, 503)},
        },
        "post": {
            "summary": "Start (or resume) the caller's one ranked attempt at today's challenge",
            "parameters": [GAME_NAME, rest.INSTALL_ID],
            "requestBody": _request(rest.EMPTY_BODY, "nothing (or {})", False),
            "security": SECURED,
            "responses": {
                "200": _body(_ref("Snapshot"), "the ranked game"),
                **_errors(400, 401, 403, 404, 503),
            },
        },
    },
    "/v1/daily/{game}/{date}": {
        "get": {
            "summary": "A day's challenge; its seed, candidate and par line once the day "
            "has closed",
            "parameters": [GAME_NAME, DATE],
            "responses": {
                "200": _body(_ref("Challenge"), "that day's"),
                **_errors(400, 404, 503),
            },
        }
    },
    "/v1/leaderboards/{game}/{date}": {
        "get": {
            "summary": "The top of a day's leaderboard (game links once the day closed)",
            "security": OPTIONAL_AUTH,
            "parameters": [GAME_NAME, DATE, *rest.LEADERBOARD_QUERY],
            "responses": {
                "200": _body(_leaderboard("best first"), "the board"),
                **_errors(400, 401, 404),
            },
        }
    },
    "/v1/leaderboards/{game}/{date}/me": {
        "get": {
            "summary": "The caller's rank and the entries around it",
            "parameters": [GAME_NAME, DATE, *rest.MY_RANK_QUERY],
            "security": SECURED,
            "responses": {
                "200": _body(
                    _leaderboard("rank null when the caller has no entry"), "the neighbourhood"
                ),
                **_errors(400, 401, 404),
            },
        }
    },
}


SCHEMAS["Verdict"] = {
    "type": "object",
    "description": "protocol/AUDIT.md; two answers, integrity and fair play; never "
    "carries the seed",
    "required": [
        "passed",
        "summary",
        "integrity",
        "findings",
        "fair_play",
        "game_id",
        "game",
        "moves",
    ],
    "properties": {
        "passed": {
            "type": "boolean",
            "description": "integrity is pass and no fair-play signal fired",
        },
        "summary": {"type": "string", "examples": ["integrity pass; signal: inhuman speed"]},
        "integrity": {
            "enum": ["pass", "fail", "chain_only"],
            "description": "chain_only: no seed, so only the chain and order were checked",
        },
        "findings": {
            "type": "array",
            "description": "what the integrity checks found",
            "items": {
                "type": "object",
                "required": ["check", "version", "detail"],
                "properties": {
                    "check": {"type": "string"},
                    "version": {"type": ["integer", "null"]},
                    "detail": {"type": "string"},
                },
            },
        },
        "fair_play": {
            "type": "array",
            "description": "the fair-play signals that fired",
            "items": {
                "type": "object",
                "required": ["name", "version", "detail", "evidence"],
                "properties": {
                    "name": {"enum": list(SIGNALS)},
                    "version": {"type": ["integer", "null"]},
                    "detail": {"type": "string"},
                    "evidence": {"type": "object"},
                },
            },
        },
        "game_id": {"type": ["string", "null"]},
        "game": {"type": ["string", "null"]},
        "daily": {"type": ["string", "null"]},
        "moves": {"type": "integer", "description": "entries in the export"},
        "replayed_moves": {"type": "integer"},
        "replayed_score": {"type": ["integer", "null"]},
        "replayed_status": {"type": ["string", "null"]},
        "replayed_state_hash": {"type": ["string", "null"]},
    },
}
AUDIT_PATHS: dict[str, Any] = {
    "/v1/audit": {
        "post": {
            "summary": "Audit a replay export, or a stored game by id (body up to 4 MiB; an "
            "open day's ranked game: its player only)",
            "requestBody": _request(_ref("AuditRequest"), "an export, or the id of a stored game"),
            "security": SECURED,
            "responses": {
                "200": _body(_ref("Verdict"), "the verdict (passed or not)"),
                **_errors(400, 401, 403, 404, 413, 415, 503),
            },
        }
    },
}


NAME = {**rest.NAME, "type": ["string", "null"], "description": "the display name; null: none"}
SCHEMAS["Player"]["required"].append("name")
SCHEMAS["Player"]["properties"]["name"] = NAME
SCHEMAS["LeaderboardEntry"]["properties"]["name"] = NAME
SCHEMAS["Me"] = {
    "type": "object",
    "description": "the account view (protocol/ACCOUNTS.md)",
    "required": ["player_id", "name", "created_at", "transfer_codes", "identity"],
    "properties": {
        "player_id": {"type": "string"},
        "name": NAME,
        "created_at": {"type": "integer", "description": "Unix ms"},
        "transfer_codes": {
            "type": "array",
            "items": accounts.PENDING_CODE,
            "description": "pending transfer codes (not the codes), oldest first",
        },
        "identity": {
            "oneOf": [
                {
                    "type": "object",
                    "required": ["issuer", "linked_at"],
                    "properties": {
                        "issuer": {"type": "string"},
                        "linked_at": {"type": "integer", "description": "Unix ms"},
                    },
                },
                {"type": "null"},
            ],
            "description": "the linked identity of the provider, null for none",
        },
    },
}
SCHEMAS["GameSummary"] = {
    "type": "object",
    "required": [
        "id",
        "game",
        "daily",
        "status",
        "score",
        "moves",
        "created_at",
        "finished_at",
        "assisted",
        "restart_of",
    ],
    "properties": {
        "id": {"type": "string"},
        "game": {"type": "string", "enum": list(GAME_NAMES)},
        "daily": {"type": ["string", "null"], "description": "the date of a ranked attempt"},
        "assisted": {"type": "boolean", "description": "a hint was taken in it"},
        "restart_of": {
            "type": ["string", "null"],
            "description": "the game this one restarts on the same deal (null: a fresh deal)",
        },
        "status": {"type": "string", "enum": ["playing", "won", "stuck", "resigned"]},
        "score": {"type": "integer"},
        "moves": {"type": "integer", "description": "moves logged, undos included"},
        "created_at": {"type": "integer"},
        "finished_at": {"type": ["integer", "null"]},
    },
}
SCHEMAS["GameStats"] = {
    "type": "object",
    "description": "over the games that ended, in the order they ended (protocol/REST.md)",
    "required": ["played", "won", "best_score", "current_streak", "best_streak"],
    "properties": {
        "played": {"type": "integer"},
        "won": {"type": "integer"},
        "best_score": {"type": ["integer", "null"]},
        "current_streak": {"type": "integer"},
        "best_streak": {"type": "integer"},
    },
}
RENAME = {
    "summary": "Set or remove the caller's display name",
    "security": SECURED,
    "requestBody": _request(rest.NAME_BODY, "the new display name (null: none)"),
    "responses": {"200": _body(_ref("Me"), "the player"), **_errors(400, 401, 409, 413, 415)},
}
SCHEMAS["TokenAnswer"] = accounts.TOKEN_ANSWER
SCHEMAS["AccountExport"] = {
    "type": "object",
    "description": "protocol/ACCOUNTS.md, 'Export and deletion'",
    "required": ["format", "exported_at", "account", "stats", "games", "tokens_revoked_before"],
    "properties": {
        "format": {"const": "solitaire-account-export/1"},
        "exported_at": {"type": "integer", "description": "Unix ms"},
        "account": _ref("Me"),
        "stats": {
            "type": "object",
            "required": list(GAME_NAMES),
            "properties": {name: _ref("GameStats") for name in GAME_NAMES},
        },
        "games": {"type": "array", "items": _ref("GameSummary")},
        "tokens_revoked_before": {
            "type": ["integer", "null"],
            "description": "Unix ms of the latest revocation, null for none",
        },
    },
}
PLAYER_PATHS: dict[str, Any] = {
    "/v1/players/me/token": {
        "post": {
            "summary": "Renew: a fresh token (30 days) for a valid one; keeps the player's "
            "record alive as long again",
            "security": SECURED,
            "requestBody": _request(rest.EMPTY_BODY, "nothing (or {})", False),
            "responses": {
                "200": _body(_ref("TokenAnswer"), "the new token"),
                **_errors(400, 401, 413, 415),
            },
        }
    },
    "/v1/players/me/transfer": {
        "post": {
            "summary": "A one-time transfer code (80 bits, 15 minutes) that moves the player "
            "to a new device (POST /v1/players/transfer); at most 5 pending",
            "security": SECURED,
            "requestBody": _request(rest.EMPTY_BODY, "nothing (or {})", False),
            "responses": {
                "201": _body(accounts.TRANSFER_CODE, "the code, shown once"),
                **_errors(400, 401, 413, 415),
            },
        }
    },
    "/v1/players/transfer": {
        "post": {
            "summary": "Redeem a transfer code on the new device: the code's player and a "
            "fresh token (the code is used up)",
            "requestBody": _request(accounts.REDEEM_BODY, "the code"),
            "responses": {
                "200": _body(_ref("TokenAnswer"), "the player and its new token"),
                **_errors(400, 404, 413, 415),
            },
        }
    },
    "/v1/players/login": {
        "post": {
            "summary": "Sign in with an ID token of the server's OpenID Connect provider: the "
            "player bound to its identity (created at the first sign-in) and a fresh token",
            "requestBody": _request(accounts.ID_TOKEN_BODY, "the ID token"),
            "responses": {
                "200": _body(accounts.LOGIN_ANSWER, "the player and its token"),
                **_errors(400, 401, 404, 413, 415, 503),
            },
        }
    },
    "/v1/players/me/identity": {
        "post": {
            "summary": "Link the ID token's identity to the caller (keeping its history); "
            "409 identity_taken when another player has it",
            "security": SECURED,
            "requestBody": _request(accounts.ID_TOKEN_BODY, "the ID token"),
            "responses": {
                "200": _body(_ref("Me"), "the account view"),
                **_errors(400, 401, 404, 409, 413, 415, 503),
            },
        }
    },
    "/v1/players/me/tokens": {
        "delete": {
            "summary": "Sign out everywhere: every token of the caller issued until now is "
            "refused (on every instance within 2 s; its WebSockets are closed)",
            "security": SECURED,
            "requestBody": _request(rest.EMPTY_BODY, "nothing (or {})", False),
            "responses": {
                "200": _body(
                    {
                        "type": "object",
                        "required": ["player_id", "revoked_before"],
                        "properties": {
                            "player_id": {"type": "string"},
                            "revoked_before": {
                                "type": "integer",
                                "description": "Unix ms: tokens issued before are refused",
                            },
                        },
                    },
                    "done",
                ),
                **_errors(400, 401, 413, 415),
            },
        }
    },
    "/v1/players/me": {
        "get": {
            "summary": "The caller's player record",
            "security": SECURED,
            "responses": {"200": _body(_ref("Me"), "the player"), **_errors(401)},
        },
        "put": RENAME,
        "patch": RENAME,
        "delete": {
            "summary": "Delete the caller's account (protocol/ACCOUNTS.md): open games end, "
            "personal data is removed at once, tokens are revoked; finished ranked results "
            "stay on their boards, with no name",
            "security": SECURED,
            "requestBody": _request(accounts.DELETE_BODY, '{"confirm": true}'),
            "responses": {
                "200": _body(accounts.DELETED, "deleted"),
                **_errors(400, 401, 413, 415),
            },
        },
    },
    "/v1/players/me/export": {
        "get": {
            "summary": "Everything the server keeps about the caller, as JSON",
            "security": SECURED,
            "responses": {
                "200": _body(_ref("AccountExport"), "the export"),
                **_errors(401),
            },
        }
    },
    "/v1/players/me/games": {
        "get": {
            "summary": "The caller's games, newest first, in pages",
            "security": SECURED,
            "parameters": rest.MY_GAMES_QUERY,
            "responses": {
                "200": _body(
                    {
                        "type": "object",
                        "required": ["player_id", "games", "next"],
                        "properties": {
                            "player_id": {"type": "string"},
                            "games": {"type": "array", "items": _ref("GameSummary")},
                            "next": {"type": ["string", "null"]},
                        },
                    },
                    "a page",
                ),
                **_errors(400, 401),
            },
        }
    },
    "/v1/players/me/stats": {
        "get": {
            "summary": "The caller's stats per game: played, won, best score, streaks",
            "security": SECURED,
            "responses": {
                "200": _body(
                    {
                        "type": "object",
                        "required": ["player_id", "games"],
                        "properties": {
                            "player_id": {"type": "string"},
                            "games": {
                                "type": "object",
                                "required": list(GAME_NAMES),
                                "properties": {name: _ref("GameStats") for name in GAME_NAMES},
                            },
                        },
                    },
                    "the stats",
                ),
                **_errors(401),
            },
        }
    },
    "/v1/games/{id}/verdict": {
        "get": {
            "summary": "The audit verdict of a finished game (a ranked one: after its day "
            "closed), computed once and kept",
            "parameters": [GAME_ID],
            "security": OPTIONAL_AUTH,
            "responses": {
                "200": _body(_ref("Verdict"), "the verdict"),
                **_errors(401, 403, 404, 409, 503),
            },
        }
    },
}


SCHEMAS["Me"]["required"] += ["suspended", "suspended_until"]
SCHEMAS["Me"]["properties"]["suspended"] = {
    "type": "boolean",
    "description": "suspended from ranked play now (protocol/OPERATOR.md)",
}
SCHEMAS["Me"]["properties"]["suspended_until"] = {
    "type": ["integer", "null"],
    "description": "Unix ms the suspension ends; null: not suspended, or until lifted",
}
SCHEMAS["GameSummary"]["required"].append("void_reason")
SCHEMAS["GameSummary"]["properties"]["void_reason"] = {
    "type": ["string", "null"],
    "enum": [*VOID_CODES, None],
    "description": "a ranked attempt an operator (or the post-close audit) voided: the "
    "reason code; null otherwise",
}
SCHEMAS["Error"]["properties"]["error"]["properties"]["until"] = {
    "type": ["integer", "null"],
    "description": "Unix ms the suspension ends, null: until lifted (account_suspended)",
}
SCHEMAS["OperatorAction"] = {
    "type": "object",
    "description": "an entry of the action trail (protocol/OPERATOR.md)",
    "required": ["id", "at", "operator", "action", "player_id", "game_id", "reason", "details"],
    "properties": {
        "id": {"type": "string", "description": "the stream entry id"},
        "at": {"type": "integer", "description": "Unix ms"},
        "operator": {"type": "string", "description": "an operator's name, system or cli"},
        "action": {"type": "string", "enum": list(trail.ACTIONS)},
        "player_id": {"type": ["string", "null"]},
        "game_id": {"type": ["string", "null"]},
        "reason": {"type": "string"},
        "details": {"type": "object"},
    },
}
VOID: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "the void (null: none)",
    "properties": {
        "code": {"type": "string", "enum": list(VOID_CODES)},
        "reason": {"type": "string"},
        "at": {"type": "integer"},
        "operator": {"type": "string"},
    },
}
SCHEMAS["OperatorAttempt"] = {
    "type": "object",
    "required": ["game_id", "player_id", "game", "date", "rank", "voided", "changed"],
    "properties": {
        "game_id": {"type": "string"},
        "player_id": {"type": "string"},
        "game": {"type": "string", "enum": list(GAME_NAMES)},
        "date": {"type": "string", "format": "date"},
        "rank": {"type": ["integer", "null"], "description": "null: off the ranking"},
        "voided": VOID,
        "changed": {"type": "boolean", "description": "false: it was so already"},
    },
}
SCHEMAS["OperatorPlayer"] = {
    "type": "object",
    "required": ["player_id", "name", "suspension", "changed"],
    "properties": {
        "player_id": {"type": "string"},
        "name": NAME,
        "suspension": {
            "type": ["object", "null"],
            "properties": {
                "reason": {"type": "string"},
                "until": {"type": ["integer", "null"]},
                "at": {"type": "integer"},
                "operator": {"type": "string"},
            },
        },
        "changed": {"type": "boolean", "description": "false: it was so already"},
        "revoked_before": {"type": "integer", "description": "Unix ms (revoke-tokens)"},
    },
}
GAME_ID_PATH = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}
PLAYER_ID_PATH = {
    "name": "player_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
}


def _operator_post(summary: str, body: dict[str, Any], answer: str, path: Any) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "parameters": [path],
            "security": OPERATOR_SECURED,
            "requestBody": _request(body, "the reason"),
            "responses": {
                "200": _body(_ref(answer), "done (or so already: changed false)"),
                **_errors(400, 401, 403, 404, 413, 415),
            },
        }
    }


OPERATOR_PATHS: dict[str, Any] = {
    "/v1/operator/actions": {
        "get": {
            "summary": "The action trail, newest first (operators only)",
            "security": OPERATOR_SECURED,
            "parameters": operator.ACTIONS_QUERY,
            "responses": {
                "200": _body(
                    {
                        "type": "object",
                        "required": ["actions", "next"],
                        "properties": {
                            "actions": {"type": "array", "items": _ref("OperatorAction")},
                            "next": {"type": ["string", "null"]},
                        },
                    },
                    "a page",
                ),
                **_errors(400, 401, 403),
            },
        }
    },
    "/v1/operator/attempts": {
        "get": {
            "summary": "A day's ranked attempts with their game ids, ranked ones first in "
            "board order (operators only)",
            "security": OPERATOR_SECURED,
            "parameters": operator.ATTEMPTS_QUERY,
            "responses": {
                "200": _body(
                    {
                        "type": "object",
                        "required": ["game", "date", "total", "attempts"],
                        "properties": {
                            "game": {"type": "string"},
                            "date": {"type": "string"},
                            "total": {"type": "integer"},
                            "attempts": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                    "a page",
                ),
                **_errors(400, 401, 403, 404),
            },
        }
    },
    "/v1/operator/attempts/{game_id}/void": _operator_post(
        "Void a ranked attempt: off its board at once, kept, its player told the reason code",
        operator.VOID_BODY,
        "OperatorAttempt",
        GAME_ID_PATH,
    ),
    "/v1/operator/attempts/{game_id}/reinstate": _operator_post(
        "Undo a void", operator.REASON_BODY, "OperatorAttempt", GAME_ID_PATH
    ),
    "/v1/operator/players/{player_id}/suspend": _operator_post(
        "Suspend a player from ranked play (until a time, or until lifted); their entries "
        "leave every board meanwhile",
        operator.SUSPEND_BODY,
        "OperatorPlayer",
        PLAYER_ID_PATH,
    ),
    "/v1/operator/players/{player_id}/unsuspend": _operator_post(
        "Lift a suspension", operator.REASON_BODY, "OperatorPlayer", PLAYER_ID_PATH
    ),
    "/v1/operator/players/{player_id}/reset-name": _operator_post(
        "Give the player a neutral display name; the old one is never taken again",
        operator.REASON_BODY,
        "OperatorPlayer",
        PLAYER_ID_PATH,
    ),
    "/v1/operator/players/{player_id}/revoke-tokens": _operator_post(
        "Revoke every token of the player (refused everywhere within 2 s)",
        operator.REASON_BODY,
        "OperatorPlayer",
        PLAYER_ID_PATH,
    ),
}

SCHEMAS["ReviewItem"] = {
    "type": "object",
    "description": "an attempt as the post-close audit found it (protocol/OPERATOR.md)",
    "required": ["id", "game_id", "player_id", "game", "date", "state", "signals", "replay"],
    "properties": {
        "id": {"type": "string", "description": "the attempt's game id"},
        "game_id": {"type": "string"},
        "player_id": {"type": "string"},
        "game": {"type": "string", "enum": list(GAME_NAMES)},
        "date": {"type": "string", "format": "date"},
        "state": {"type": "string", "enum": list(review.STATES)},
        "integrity": {"type": "string"},
        "findings": {"type": "array", "items": {"type": "object"}},
        "signals": {
            "type": "array",
            "items": {"type": "object"},
            "description": "each fair-play signal with its evidence",
        },
        "links": {"type": "array", "items": {"type": "object"}, "description": "scouting"},
        "replay": {"type": "string", "description": "path of the replay export"},
        "clairvoyance_checked": {"type": "boolean"},
        "audited_at": {"type": "integer"},
        "decision": {"type": ["object", "null"]},
    },
}
OPERATOR_PATHS["/v1/operator/reviews"] = {
    "get": {
        "summary": "The review queue of a day: each item with its signals, evidence, "
        "scouting links and replay (operators only)",
        "security": OPERATOR_SECURED,
        "parameters": operator.REVIEWS_QUERY,
        "responses": {
            "200": _body(
                {
                    "type": "object",
                    "required": ["game", "date", "total", "items"],
                    "properties": {
                        "game": {"type": "string"},
                        "date": {"type": "string"},
                        "total": {"type": "integer"},
                        "items": {"type": "array", "items": _ref("ReviewItem")},
                    },
                },
                "a page",
            ),
            **_errors(400, 401, 403, 404),
        },
    }
}
OPERATOR_PATHS["/v1/operator/reviews/{id}"] = {
    "post": {
        "summary": "Clear (reinstating an automatic void) or void a reviewed attempt",
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        "security": OPERATOR_SECURED,
        "requestBody": _request(operator.DECISION_BODY, "the decision and its reason"),
        "responses": {
            "200": _body(_ref("ReviewItem"), "the item as decided"),
            **_errors(400, 401, 403, 404, 413, 415),
        },
    }
}


def openapi_document() -> dict[str, Any]:
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Solitaire game server",
            "version": "1",
            "description": "REST half of the protocol; the WebSocket /v2/ws is in "
            "protocol/WEBSOCKET.md. Every route accepts and returns application/json "
            "or application/msgpack (Content-Type / Accept).",
        },
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "operator": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an operator token (python -m server.operator token NAME)",
                },
            },
        },
        "paths": {
            "/healthz": {
                "get": {
                    "summary": "Liveness",
                    "responses": {"200": {"description": "the process is up"}},
                }
            },
            "/readyz": {
                "get": {
                    "summary": "Readiness: Redis reachable",
                    "responses": {
                        "200": {"description": "ready"},
                        "503": {"description": "Redis unreachable"},
                    },
                }
            },
            "/openapi.json": {
                "get": {"summary": "This document", "responses": {"200": {"description": "ok"}}}
            },
            "/asyncapi.json": {
                "get": {
                    "summary": "The AsyncAPI 3 document of the WebSocket protocol /v2/ws",
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics of every worker (text exposition format), "
                    "with the bearer token of --metrics-token; 404 on this port without it or "
                    "with --metrics-port",
                    "responses": {
                        "200": {"description": "the metrics"},
                        "401": {"description": "no or another token than --metrics-token's"},
                        "404": {"description": "not served on this port"},
                    },
                }
            },
            "/v1/players": {
                "post": {
                    "summary": "Create a player (a display name if given) and its bearer "
                    "token (30 days)",
                    "requestBody": _request(rest.PLAYER_BODY, "nothing, {} or a name", False),
                    "responses": {
                        "201": _body(_ref("Player"), "the player"),
                        **_errors(400, 409, 413, 415),
                    },
                }
            },
            "/v1/games": {
                "get": {
                    "summary": "The five games with a short rules summary",
                    "responses": {
                        "200": _body(
                            {
                                "type": "object",
                                "properties": {
                                    "games": {"type": "array", "items": _ref("GameInfo")}
                                },
                            },
                            "the games",
                        )
                    },
                },
                "post": {
                    "summary": "Start a casual game (random seed unless given), or practise a "
                    "closed day's challenge (daily)",
                    "security": SECURED,
                    "requestBody": _request(_ref("CreateGame"), "the game to start"),
                    "responses": {
                        "201": _body(_ref("Snapshot"), "the new game"),
                        **_errors(400, 401, 403, 404, 413, 415),
                    },
                },
            },
            "/v1/games/{id}": {
                "get": {
                    "summary": "A game's snapshot (legal_moves for its owner only; an open "
                    "day's ranked game: its player only)",
                    "parameters": [GAME_ID],
                    "security": OPTIONAL_AUTH,
                    "responses": {
                        "200": _body(_ref("Snapshot"), "the game"),
                        **_errors(401, 403, 404),
                    },
                }
            },
            "/v1/games/{id}/moves": {
                "post": {
                    "summary": "Play a move made against 'version'",
                    "parameters": [GAME_ID],
                    "security": SECURED,
                    "requestBody": _request(_ref("Move"), "the move"),
                    "responses": {
                        "200": _body(
                            {
                                "type": "object",
                                "required": [
                                    "snapshot",
                                    "patch",
                                    "version",
                                    "applied_version",
                                    "duplicate",
                                ],
                                "properties": {
                                    "snapshot": _ref("Snapshot"),
                                    "patch": {"oneOf": [_ref("Patch"), {"type": "null"}]},
                                    "version": {"type": "integer"},
                                    "applied_version": {"type": "integer"},
                                    "duplicate": {"type": "boolean"},
                                },
                            },
                            "the new snapshot and the patch (null for a repeated move_id)",
                        ),
                        **_errors(400, 401, 403, 404, 409, 413, 415, 422, 503),
                    },
                }
            },
            "/v1/games/{id}/hint": {
                "post": {
                    "summary": "A hint for the owner of a casual game: a legal move and the "
                    "estimated chance of winning, from what the player sees; marks the game "
                    "assisted",
                    "parameters": [GAME_ID],
                    "security": SECURED,
                    "requestBody": _request(rest.EMPTY_BODY, "nothing (or {})", False),
                    "responses": {
                        "200": _body(_ref("Hint"), "the hint"),
                        **_errors(400, 401, 403, 404, 409, 413, 415, 503),
                    },
                }
            },
            "/v1/games/{id}/restart": {
                "post": {
                    "summary": "Restart a casual game: a new game on the same deal, recorded "
                    "as its restart (restart_of in the history); a ranked attempt: "
                    "restart_ranked",
                    "parameters": [GAME_ID],
                    "security": SECURED,
                    "requestBody": _request(rest.EMPTY_BODY, "nothing (or {})", False),
                    "responses": {
                        "201": _body(_ref("Snapshot"), "the new game, at the deal"),
                        **_errors(400, 401, 403, 404, 413, 415),
                    },
                }
            },
            "/v1/games/{id}/log": {
                "get": {
                    "summary": "One page of the moves with their times and versions (seed "
                    "once over; an open day's ranked game: its player only)",
                    "parameters": [GAME_ID, *rest.LOG_QUERY],
                    "security": OPTIONAL_AUTH,
                    "responses": {
                        "200": _body(_ref("Log"), "the page"),
                        **_errors(400, 401, 403, 404),
                    },
                }
            },
            **DAILY_PATHS,
            **AUDIT_PATHS,
            **PLAYER_PATHS,
            **OPERATOR_PATHS,
        },
    }
    # Every /v1 route draws on the rate limits (README.md, "Limits").
    for path, operations in document["paths"].items():
        if path.startswith("/v1/"):
            for operation in operations.values():
                operation["responses"].update(_errors(429))
    return document
