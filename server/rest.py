"""REST routes under ``/v1`` (``protocol/REST.md``; ``/openapi.json``)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from server import metrics, patches
from server.audit import AUDIT_BODY_BYTES, FORMAT, audit, audit_stored
from server.audit.core import STATUSES
from server.auth import bearer_token
from server.codec import decode_body, read_body, read_raw, respond
from server.errors import ApiError
from server.hints import hint
from server.limits import AuditPool, HintPool
from server.players import HISTORY_PAGE, NAME_MAX, NAME_MIN, NAME_PATTERN
from server.rules import GAME_NAMES, GAMES, UNDO
from server.rules.moves import ACTIONS, PILE_PATTERN
from server.schema import INTEGER, check, query
from server.service import MAX_CLIENT_TIME, MAX_INSTALL_ID, GameService

# The request schemas of the routes: each is what its handler checks the input against
# and what /openapi.json publishes (server/openapi.py), one source for both.

#: A body that may be absent or ``{}`` and carries nothing.
EMPTY_BODY: dict[str, Any] = {"type": "object", "additionalProperties": False}
#: An optional field given as ``null`` is as if it were absent (``REST.md``).
SEED: dict[str, Any] = {
    "type": ["string", "null"],
    "pattern": "^[A-Za-z0-9._:-]{1,128}$",
    "x-error-code": "invalid_seed",
    "description": "RNG.md; absent or null: a random seed",
}
#: A move's text (``DIFF.md``): an action or ``<pile>><pile>``, in the engine's grammar
#: (``server.rules.moves``; Python's ``\s`` is what its ``str.strip`` takes off).
MOVE_TEXT = rf"^({'|'.join((*ACTIONS, UNDO))}|\s*({PILE_PATTERN})\s*>\s*({PILE_PATTERN})\s*)$"
GAME_NAME: dict[str, Any] = {
    "type": "string",
    "enum": list(GAME_NAMES),
    "x-error-code": "unknown_game_name",
}
#: A casual game (a seed or none), or the practice of a closed day: not both.
CREATE_GAME_BODY: dict[str, Any] = {
    "anyOf": [
        {
            "type": "object",
            "required": ["game", "daily"],
            "additionalProperties": False,
            "properties": {
                "game": GAME_NAME,
                "seed": {"type": "null"},
                "daily": {
                    "type": "string",
                    "format": "date",
                    "description": "a closed day: deal its challenge, unranked",
                },
            },
        },
        {
            "type": "object",
            "required": ["game"],
            "additionalProperties": False,
            "properties": {"game": GAME_NAME, "seed": SEED, "daily": {"type": "null"}},
        },
    ]
}
MOVE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["move", "version"],
    "additionalProperties": False,
    "properties": {
        "move": {
            "type": "string",
            "pattern": MOVE_TEXT,
            "examples": ["tableau[3]>foundation[0]", "undo"],
            "description": "DIFF.md; the log keeps it normalised (no spaces). Text that is "
            "no move is 400 malformed_move with the game's version, once the game is found",
        },
        "version": {**INTEGER, "minimum": 0},
        "move_id": {
            "type": ["string", "null"],
            "minLength": 1,
            "maxLength": 64,
            "description": "makes a retry safe; absent or null: none",
        },
        "client_time": {
            "type": ["integer", "null"],
            "minimum": 0,
            "maximum": MAX_CLIENT_TIME,
            "description": "Unix ms",
        },
    },
}
#: What the route checks before it finds the game: the move text is the engine's to
#: refuse (``malformed_move`` with the game's version and reason_code, ERRORS.md) after
#: the game is found and the caller may move in it; the rest as the schema says.
MOVE_BODY_SHAPE: dict[str, Any] = {
    **MOVE_BODY,
    "properties": {**MOVE_BODY["properties"], "move": {"type": "string"}},
}
INSTALL_ID: dict[str, Any] = {
    "name": "X-Install-Id",
    "in": "header",
    "description": "the client's install id; only a keyed hash is stored",
    "schema": {"type": "string", "maxLength": MAX_INSTALL_ID, "pattern": "^[ -~]*$"},
}
HEX64: dict[str, Any] = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
#: One move of a game's log (``GET /v1/games/{id}/log``) and of its replay export.
LOG_ENTRY: dict[str, Any] = {
    "type": "object",
    "required": ["version", "move", "server_time", "client_time", "state_hash", "hash"],
    "additionalProperties": False,
    "properties": {
        "version": {**INTEGER, "minimum": 1, "description": "the version the move made"},
        "move": {
            "type": "string",
            "pattern": "^[ -~]*$",
            "description": "the move text as the server normalised it (DIFF.md)",
        },
        "server_time": {**INTEGER, "description": "Unix ms"},
        "client_time": {**INTEGER, "type": ["integer", "null"], "description": "Unix ms"},
        "state_hash": {**HEX64, "description": "the state hash after the move (STATE.md)"},
        "hash": {
            "description": "the entry's link in the game's hash chain (AUDIT.md), not "
            "the state hash",
            **HEX64,
        },
    },
}
#: The replay export (``AUDIT.md``): what ``GET /v1/games/{id}/replay`` answers and
#: what ``POST /v1/audit`` takes.
REPLAY_EXPORT: dict[str, Any] = {
    "type": "object",
    "description": "protocol/AUDIT.md",
    "required": [
        "format",
        "game_id",
        "game",
        "daily",
        "owner",
        "seed",
        "deal_hash",
        "created_at",
        "finished_at",
        "status",
        "score",
        "moves",
        "chain_head",
    ],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "game_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
        "game": GAME_NAME,
        "daily": {"type": ["string", "null"], "format": "date"},
        "owner": {"type": "string"},
        "seed": {**SEED, "description": "null while it is secret"},
        "deal_hash": HEX64,
        "created_at": {**INTEGER, "description": "Unix ms"},
        "finished_at": {**INTEGER, "type": ["integer", "null"]},
        "status": {"type": "string", "enum": list(STATUSES)},
        "score": INTEGER,
        "moves": {"type": "array", "items": LOG_ENTRY},
        "chain_head": HEX64,
        "assisted": {
            "type": "boolean",
            "description": "a hint was taken in the game (absent in older exports)",
        },
    },
}
AUDIT_BODY: dict[str, Any] = {
    "anyOf": [
        REPLAY_EXPORT,
        {
            "type": "object",
            "required": ["game_id"],
            "additionalProperties": False,
            "properties": {"game_id": {"type": "string"}},
        },
    ]
}
#: Moves per page of ``GET /v1/games/{id}/log`` (the default and the most).
LOG_PAGE = 1000
LOG_QUERY: list[dict[str, Any]] = [
    {
        "name": "after",
        "in": "query",
        "description": "the previous page's next cursor",
        # A stream id: both parts fit in 64 bits unsigned (Redis refuses larger ones).
        "schema": {"type": "string", "pattern": "^[0-9]{1,19}-[0-9]{1,19}$"},
    },
    {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": LOG_PAGE, "default": LOG_PAGE},
    },
]
LEADERBOARD_QUERY: list[dict[str, Any]] = [
    {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
    }
]
#: A display name (``REST.md``, "Players"; ``server.players``).
NAME: dict[str, Any] = {
    "type": "string",
    "pattern": NAME_PATTERN,
    "description": f"{NAME_MIN}-{NAME_MAX} letters, digits, spaces and _-. (\\w: Unicode "
    "letters and digits), no space first or last; kept NFKC-normalised; unique on the "
    "server, compared after NFKC and case folding",
}
PLAYER_BODY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"name": {**NAME, "type": ["string", "null"], "description": "optional"}},
}
NAME_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {"name": {**NAME, "type": ["string", "null"], "description": "null: none"}},
}
MY_GAMES_QUERY: list[dict[str, Any]] = [
    {
        "name": "cursor",
        "in": "query",
        "description": "the previous page's next cursor",
        "schema": {"type": "string", "pattern": "^[0-9]{13}[.]g_[A-Za-z0-9_-]{1,62}$"},
    },
    {
        "name": "limit",
        "in": "query",
        "schema": {
            "type": "integer",
            "minimum": 1,
            "maximum": HISTORY_PAGE[1],
            "default": HISTORY_PAGE[0],
        },
    },
]
MY_RANK_QUERY: list[dict[str, Any]] = [
    {
        "name": "radius",
        "in": "query",
        "schema": {"type": "integer", "minimum": 0, "maximum": 50, "default": 5},
    }
]


def service_of(request: Request) -> GameService:
    service: GameService = request.app.state.service
    return service


def viewer(request: Request) -> str | None:
    """The player behind the request's token; None when there is no token."""
    token = bearer_token(request.headers.get("authorization"))
    return None if token is None else service_of(request).authenticate(token)


def player(request: Request) -> str:
    """The authenticated player, or ``unauthorized``."""
    player_id = viewer(request)
    if player_id is None:
        raise ApiError("unauthorized", "this route needs 'Authorization: Bearer <token>'")
    return player_id


async def create_player(request: Request) -> Response:
    body = check(await read_body(request), PLAYER_BODY)
    return respond(request, await service_of(request).create_player(body.get("name")), 201)


async def get_me(request: Request) -> Response:
    return respond(request, await service_of(request).me(player(request)))


async def put_me(request: Request) -> Response:
    """``PUT`` or ``PATCH``: ``{"name": "..."}`` sets the display name, ``null`` clears it."""
    player_id = player(request)
    body = check(await read_body(request), NAME_BODY)
    return respond(request, await service_of(request).rename(player_id, body["name"]))


async def get_my_games(request: Request) -> Response:
    player_id = player(request)
    params = query(request.query_params, MY_GAMES_QUERY)
    page = await service_of(request).my_games(player_id, params["cursor"], params["limit"])
    return respond(request, page)


async def get_my_stats(request: Request) -> Response:
    return respond(request, await service_of(request).my_stats(player(request)))


async def list_games(request: Request) -> Response:
    games = [
        {
            "name": cls.name,
            "title": cls.title,
            "decks": cls.decks,
            "summary": cls.summary,
            "piles": cls.pile_hints,
        }
        for cls in GAMES.values()
    ]
    return respond(request, {"games": games})


async def create_game(request: Request) -> Response:
    owner = player(request)
    body = check(await read_body(request), CREATE_GAME_BODY)
    snapshot = await service_of(request).create_game(
        owner, body["game"], body.get("seed"), practice=body.get("daily")
    )
    return respond(request, snapshot, 201)


async def restart_game(request: Request) -> Response:
    """A new casual game on the same deal, recorded as the restart of the old one."""
    owner = player(request)
    check(await read_body(request), EMPTY_BODY)
    snapshot = await service_of(request).restart_game(owner, request.path_params["id"])
    return respond(request, snapshot, 201)


async def get_game(request: Request) -> Response:
    snapshot = await service_of(request).snapshot(request.path_params["id"], viewer(request))
    return respond(request, snapshot)


@metrics.measure_move("rest")
async def post_move(request: Request) -> Response:
    player_id = player(request)
    body = check(await read_body(request), MOVE_BODY_SHAPE)
    move_id = body.get("move_id")
    game_id = request.path_params["id"]
    service = service_of(request)
    reply, patch, game = await service.play(
        game_id,
        player_id,
        body["move"],
        body["version"],
        move_id=move_id or "",
        client_time=body.get("client_time"),
    )
    snapshot = await service.snapshot(game_id, player_id)
    # REST answers the v1 patch form (the WebSocket sends the compact one).
    v1_patch = None if patch is None else patches.expand(patch, game)
    answer = {"snapshot": snapshot, "patch": v1_patch, **reply}
    return respond(request, answer)


async def post_hint(request: Request) -> Response:
    """A hint for the owner of a casual game (``REST.md``): the fair solver's move and
    chance of winning, computed in the bounded hint pool; the game is marked assisted."""
    player_id = player(request)
    check(await read_body(request), EMPTY_BODY)
    service = service_of(request)
    pool: HintPool = request.app.state.hint_pool
    stored, game = await service.hint_position(request.path_params["id"], player_id)
    advice = await pool.run(hint, stored.game, game.view(), stored.id, stored.version)
    await service.mark_assisted(stored)
    answer = {
        "game_id": stored.id,
        "version": stored.version,
        "move": advice.move,
        "win_chance": advice.win_chance,
        "samples": advice.samples,
        "assisted": True,
    }
    return respond(request, answer)


async def get_log(request: Request) -> Response:
    """One page of the log: ``limit`` moves after the cursor ``after`` (``REST.md``)."""
    params = query(request.query_params, LOG_QUERY)
    service = service_of(request)
    page = await service.log(
        request.path_params["id"], viewer(request), params["after"], params["limit"]
    )
    return respond(request, page)


async def get_daily(request: Request) -> Response:
    params = request.path_params
    challenge = await service_of(request).challenge(params["game"], params.get("date"))
    return respond(request, challenge)


async def start_daily(request: Request) -> Response:
    player_id = player(request)
    check(await read_body(request), EMPTY_BODY)
    install_id = header(request, INSTALL_ID)
    snapshot = await service_of(request).start_daily(
        player_id,
        request.path_params["game"],
        client_address=request.client.host if request.client else None,
        install_id=install_id,
    )
    return respond(request, snapshot)


def header(request: Request, spec: dict[str, Any]) -> str | None:
    """The header of ``spec`` (an OpenAPI header parameter), checked against its schema
    (``invalid_field`` naming the header), or None when absent."""
    value = request.headers.get(spec["name"])
    if value is not None:
        try:
            check(value, spec["schema"])
        except ApiError:
            raise ApiError(
                "invalid_field", f"{spec['name']} is not valid here", field=spec["name"]
            ) from None
    return value


async def get_leaderboard(request: Request) -> Response:
    limit = query(request.query_params, LEADERBOARD_QUERY)["limit"]
    params = request.path_params
    service = service_of(request)
    board = await service.leaderboard(params["game"], params["date"], limit, viewer(request))
    return respond(request, board)


async def get_my_rank(request: Request) -> Response:
    player_id = player(request)
    radius = query(request.query_params, MY_RANK_QUERY)["radius"]
    params = request.path_params
    mine = await service_of(request).my_rank(params["game"], params["date"], player_id, radius)
    return respond(request, mine)


async def get_replay(request: Request) -> Response:
    replay = await service_of(request).public_replay(request.path_params["id"], viewer(request))
    return respond(request, replay)


async def get_verdict(request: Request) -> Response:
    """The audit verdict of a finished game (``AUDIT.md``): computed once in the audit
    pool, then kept in Redis as long as the game."""
    service = service_of(request)
    stored = await service.readable(request.path_params["id"], viewer(request))
    if not service.seed_revealed(stored):
        raise ApiError(
            "not_finished",
            "a game has a verdict once it is over (a daily game: once its day has closed)",
        )
    cached = await service.store.cached_verdict(stored.id)
    if cached is not None:
        return respond(request, json.loads(cached))
    pool: AuditPool = request.app.state.audit_pool
    async with pool.turn():
        verdict = (await audit_stored(service, stored.id)).to_dict()
    await service.store.cache_verdict(stored.id, json.dumps(verdict).encode(), stored.ranked)
    return respond(request, verdict)


async def post_audit(request: Request) -> Response:
    """Audit a posted replay export, or the stored game of ``{"game_id"}`` (``AUDIT.md``).

    Needs a token; audits take turns in the process's bounded audit pool (``audit_busy``
    beyond it), so a flood of audits cannot starve play: a posted export is decoded and
    audited in the pool's child process, off the event loop.  A posted export is audited
    as it is (a missing seed is never filled in: that would let anyone test moves
    against a secret deal).
    """
    player(request)
    pool: AuditPool = request.app.state.audit_pool
    pool.check_room()
    data, media = await read_raw(request, limit=AUDIT_BODY_BYTES)
    async with pool.turn():
        kind, value = await pool.run(audit_posted, data, media)
        if kind == "error":
            code, message, details = value
            raise ApiError(code, message, **details)
        if kind == "stored":
            service = service_of(request)
            await service.readable(value, viewer(request))
            value = (await audit_stored(service, value)).to_dict()
    return respond(request, value)


def audit_posted(data: bytes, media: str) -> tuple[str, Any]:
    """Run in the audit pool's child process: the posted body decoded and audited.

    ``("verdict", verdict dict)``; ``("stored", game_id)`` for ``{"game_id"}`` (the
    worker audits the stored game); ``("error", (code, message, details))`` for a body
    that is no audit request (an ApiError does not survive the trip between processes).
    """
    try:
        body = decode_body(data, media, AUDIT_BODY_BYTES)
        if not isinstance(body, dict):
            raise ApiError("malformed", "a message is a map")
        body = check(body, AUDIT_BODY)
        if set(body) == {"game_id"}:
            return "stored", body["game_id"]
    except ApiError as error:
        return "error", (error.code, error.message, error.details)
    return "verdict", audit(body).to_dict()
