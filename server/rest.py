"""REST routes under ``/v1`` (``protocol/REST.md``; ``/openapi.json``)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from server import metrics
from server.audit import AUDIT_BODY_BYTES, audit, audit_stored
from server.auth import bearer_token
from server.codec import check_fields, decode_body, read_body, read_raw, respond
from server.errors import ApiError
from server.hints import hint
from server.limits import AuditPool, HintPool
from server.players import HISTORY_PAGE
from server.rules import GAMES
from server.service import GameService


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
    body = check_fields(await read_body(request), {}, {"name": str})
    return respond(request, await service_of(request).create_player(body.get("name")), 201)


async def get_me(request: Request) -> Response:
    return respond(request, await service_of(request).me(player(request)))


async def put_me(request: Request) -> Response:
    """``PUT`` or ``PATCH``: ``{"name": "..."}`` sets the display name, ``null`` clears it."""
    player_id = player(request)
    body = check_fields(await read_body(request), {"name": (str, type(None))})
    return respond(request, await service_of(request).rename(player_id, body["name"]))


#: A cursor of ``GET /v1/players/me/games``: a history member (``server.players``).
HISTORY_CURSOR = re.compile(r"[0-9]{13}\.g_[A-Za-z0-9_-]{1,62}", re.ASCII)


async def get_my_games(request: Request) -> Response:
    player_id = player(request)
    default, most = HISTORY_PAGE
    limit = query_int(request, "limit", default, 1, most)
    cursor = request.query_params.get("cursor")
    if cursor is not None and not HISTORY_CURSOR.fullmatch(cursor):
        raise ApiError("invalid_field", "cursor is a 'next' cursor of this list", field="cursor")
    return respond(request, await service_of(request).my_games(player_id, cursor, limit))


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
    body = check_fields(await read_body(request), {"game": str}, {"seed": str, "daily": str})
    snapshot = await service_of(request).create_game(
        owner, body["game"], body.get("seed"), practice=body.get("daily")
    )
    return respond(request, snapshot, 201)


async def get_game(request: Request) -> Response:
    snapshot = await service_of(request).snapshot(request.path_params["id"], viewer(request))
    return respond(request, snapshot)


@metrics.measure_move("rest")
async def post_move(request: Request) -> Response:
    player_id = player(request)
    body = check_fields(
        await read_body(request),
        {"move": str, "version": int},
        {"move_id": str, "client_time": int},
    )
    move_id = body.get("move_id")
    if move_id is not None and not 1 <= len(move_id) <= 64:
        raise ApiError("invalid_field", "move_id is 1-64 characters", field="move_id")
    game_id = request.path_params["id"]
    service = service_of(request)
    reply, patch, _ = await service.play(
        game_id,
        player_id,
        body["move"],
        body["version"],
        move_id=move_id or "",
        client_time=body.get("client_time"),
    )
    snapshot = await service.snapshot(game_id, player_id)
    answer = {"snapshot": snapshot, "patch": patch, **reply}
    return respond(request, answer)


async def post_hint(request: Request) -> Response:
    """A hint for the owner of a casual game (``REST.md``): the fair solver's move and
    chance of winning, computed in the bounded hint pool; the game is marked assisted."""
    player_id = player(request)
    check_fields(await read_body(request), {})
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
    limit = query_int(request, "limit", LOG_PAGE, 1, LOG_PAGE)
    after = request.query_params.get("after")
    if after is not None and not LOG_CURSOR.fullmatch(after):
        raise ApiError("invalid_field", "after is a 'next' cursor of the log", field="after")
    service = service_of(request)
    page = await service.log(request.path_params["id"], viewer(request), after, limit)
    return respond(request, page)


#: Moves per page of ``GET /v1/games/{id}/log`` (the default and the most).
LOG_PAGE = 1000
#: A log cursor: the stream id of the page's last entry.
LOG_CURSOR = re.compile(r"[0-9]{1,20}-[0-9]{1,20}", re.ASCII)


def query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    # isascii: str.isdigit() also takes digits such as '²' that int() refuses; and at
    # most 9 digits, so no huge number is ever converted.
    if not (text.isascii() and text.isdigit() and len(text) <= 9 and low <= int(text) <= high):
        raise ApiError("invalid_field", f"{name} is an integer from {low} to {high}", field=name)
    return int(text)


async def get_daily(request: Request) -> Response:
    params = request.path_params
    challenge = await service_of(request).challenge(params["game"], params.get("date"))
    return respond(request, challenge)


async def start_daily(request: Request) -> Response:
    player_id = player(request)
    check_fields(await read_body(request), {})
    snapshot = await service_of(request).start_daily(
        player_id,
        request.path_params["game"],
        client_address=request.client.host if request.client else None,
        install_id=request.headers.get("x-install-id"),
    )
    return respond(request, snapshot)


async def get_leaderboard(request: Request) -> Response:
    limit = query_int(request, "limit", 100, 1, 1000)
    params = request.path_params
    service = service_of(request)
    board = await service.leaderboard(params["game"], params["date"], limit, viewer(request))
    return respond(request, board)


async def get_my_rank(request: Request) -> Response:
    player_id = player(request)
    radius = query_int(request, "radius", 5, 0, 50)
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
        if isinstance(body, dict) and set(body) == {"game_id"}:
            return "stored", check_fields(body, {"game_id": str})["game_id"]
        check_export_fields(body)
    except ApiError as error:
        return "error", (error.code, error.message, error.details)
    return "verdict", audit(body).to_dict()


def check_export_fields(body: object) -> None:
    """Refuse a posted export whose top-level fields other than ``moves`` are lists or
    maps (``invalid_field``): every such field is a scalar, and the audit compares them
    with sets.  Other shape problems are the audit's ``malformed_export`` finding."""
    if isinstance(body, dict):
        for name, value in body.items():
            if name != "moves" and isinstance(value, dict | list):
                text = str(name)[:40]
                raise ApiError("invalid_field", f"field {text!r} is a scalar", field=text)
