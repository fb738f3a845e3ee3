"""REST routes under ``/v1`` (``protocol/REST.md``; ``/openapi.json``)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from server.audit import AUDIT_BODY_BYTES, audit, audit_stored
from server.auth import bearer_token
from server.codec import check_fields, read_body, respond
from server.errors import ApiError
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
    check_fields(await read_body(request), {})
    return respond(request, await service_of(request).create_player(), 201)


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
    body = check_fields(await read_body(request), {"game": str}, {"seed": str})
    snapshot = await service_of(request).create_game(owner, body["game"], body.get("seed"))
    return respond(request, snapshot, 201)


async def get_game(request: Request) -> Response:
    snapshot = await service_of(request).snapshot(request.path_params["id"], viewer(request))
    return respond(request, snapshot)


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


async def get_log(request: Request) -> Response:
    service = service_of(request)
    return respond(request, await service.log(request.path_params["id"]))


def query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise ApiError("invalid_field", f"{name} is an integer from {low} to {high}", field=name)
    return int(text)


async def get_daily(request: Request) -> Response:
    params = request.path_params
    return respond(request, service_of(request).challenge(params["game"], params.get("date")))


async def start_daily(request: Request) -> Response:
    player_id = player(request)
    check_fields(await read_body(request), {})
    snapshot = await service_of(request).start_daily(player_id, request.path_params["game"])
    return respond(request, snapshot)


async def get_leaderboard(request: Request) -> Response:
    limit = query_int(request, "limit", 100, 1, 1000)
    params = request.path_params
    board = await service_of(request).leaderboard(params["game"], params["date"], limit)
    return respond(request, board)


async def get_my_rank(request: Request) -> Response:
    player_id = player(request)
    radius = query_int(request, "radius", 5, 0, 50)
    params = request.path_params
    mine = await service_of(request).my_rank(params["game"], params["date"], player_id, radius)
    return respond(request, mine)


async def get_replay(request: Request) -> Response:
    return respond(request, await service_of(request).replay(request.path_params["id"]))


async def post_audit(request: Request) -> Response:
    """Audit a posted replay export, or the stored game of ``{"game_id"}`` (``AUDIT.md``).

    A posted export is audited as it is (a missing seed is never filled in: that
    would let anyone test moves against a secret deal).
    """
    body = await read_body(request, limit=AUDIT_BODY_BYTES)
    if isinstance(body, dict) and set(body) == {"game_id"}:
        verdict = await audit_stored(service_of(request), body["game_id"])
    else:
        verdict = await run_in_threadpool(audit, body)
    return respond(request, verdict.to_dict())
