"""The operator routes, ``/v1/operator/...`` (``protocol/OPERATOR.md``).

Each needs an operator token (:mod:`server.operator.credentials`): none is ``401
unauthorized``, a player's token ``403 operator_required``.  Bodies and queries are
checked against the schemas ``/openapi.json`` publishes (``server/openapi.py`` takes them
from here), before anything is read or written.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from server import daily, metrics
from server.auth import bearer_token
from server.codec import read_body, respond
from server.errors import ApiError
from server.operator import credentials, review, trail
from server.operator.actions import ATTEMPTS_PAGE, VOID_CODES, Operations
from server.rest import GAME_NAME, service_of
from server.schema import INTEGER, check, query

REASON: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": trail.MAX_REASON,
    "description": "why, for the trail (operators read it; the player does not)",
}
REASON_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["reason"],
    "additionalProperties": False,
    "properties": {"reason": REASON},
}
VOID_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["reason"],
    "additionalProperties": False,
    "properties": {
        "reason": REASON,
        "code": {
            "type": "string",
            "enum": list(VOID_CODES),
            "default": "fair_play",
            "description": "the reason code its player sees",
        },
    },
}
SUSPEND_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["reason"],
    "additionalProperties": False,
    "properties": {
        "reason": REASON,
        "until": {
            **INTEGER,
            "type": ["integer", "null"],
            "minimum": 0,
            "description": "Unix ms the suspension ends; absent or null: until lifted",
        },
    },
}
ACTIONS_QUERY: list[dict[str, Any]] = [
    {
        "name": "before",
        "in": "query",
        "description": "the previous page's next cursor",
        "schema": {"type": "string", "pattern": "^[0-9]{1,19}-[0-9]{1,19}$"},
    },
    {
        "name": "limit",
        "in": "query",
        "schema": {
            "type": "integer",
            "minimum": 1,
            "maximum": trail.PAGE[1],
            "default": trail.PAGE[0],
        },
    },
]
DAY_QUERY: list[dict[str, Any]] = [
    {"name": "game", "in": "query", "required": True, "schema": GAME_NAME},
    {
        "name": "date",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "format": "date"},
    },
]
ATTEMPTS_QUERY: list[dict[str, Any]] = [
    *DAY_QUERY,
    {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}},
    {
        "name": "limit",
        "in": "query",
        "schema": {
            "type": "integer",
            "minimum": 1,
            "maximum": ATTEMPTS_PAGE[1],
            "default": ATTEMPTS_PAGE[0],
        },
    },
]


REVIEWS_QUERY: list[dict[str, Any]] = [
    *DAY_QUERY,
    {"name": "state", "in": "query", "schema": {"type": "string", "enum": list(review.STATES)}},
    {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}},
    {
        "name": "limit",
        "in": "query",
        "schema": {
            "type": "integer",
            "minimum": 1,
            "maximum": review.PAGE[1],
            "default": review.PAGE[0],
        },
    },
]
DECISION_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["decision", "reason"],
    "additionalProperties": False,
    "properties": {
        "decision": {"type": "string", "enum": ["clear", "void"]},
        "reason": REASON,
        "code": VOID_BODY["properties"]["code"],
    },
}


def checked_query(request: Request, specs: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`~server.schema.query`, with ``missing_field`` for an absent required one."""
    for spec in specs:
        if spec.get("required") and spec["name"] not in request.query_params:
            raise ApiError("missing_field", f"{spec['name']} is required", field=spec["name"])
    values = query(request.query_params, specs)
    if "date" in values:
        daily.parse_date(values["date"])
    return values


async def operator(request: Request) -> str:
    """The operator behind the request's token: ``unauthorized`` without a valid one,
    ``operator_required`` for a player's."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        raise ApiError("unauthorized", "an operator route needs 'Authorization: Bearer <token>'")
    service = service_of(request)
    if credentials.is_operator_token(token):
        return await credentials.verify(service.store.redis, service.secret, token, service.clock())
    service.authenticate(token)  # unauthorized unless a valid player token
    raise ApiError("operator_required", "this route is for operators; a player's token is not one")


def operations(request: Request) -> Operations:
    ops: Operations = request.app.state.operations
    return ops


async def list_actions(request: Request) -> Response:
    """``GET /v1/operator/actions``: the trail, newest first."""
    await operator(request)
    params = checked_query(request, ACTIONS_QUERY)
    entries, cursor = await trail.page(
        service_of(request).store.redis, params["before"], params["limit"]
    )
    return respond(request, {"actions": entries, "next": cursor})


async def list_attempts(request: Request) -> Response:
    """``GET /v1/operator/attempts?game=&date=``: a day's ranked attempts with game ids."""
    await operator(request)
    params = checked_query(request, ATTEMPTS_QUERY)
    page = await operations(request).attempts(
        params["game"], params["date"], params["offset"], params["limit"]
    )
    return respond(request, page)


async def void_attempt(request: Request) -> Response:
    name = await operator(request)
    body = check(await read_body(request), VOID_BODY)
    game_id = request.path_params["game_id"]
    code = body.get("code") or "fair_play"
    answer = await operations(request).void(name, game_id, body["reason"], code)
    if answer["changed"]:
        metrics.void_made("manual")
    return respond(request, answer)


async def reinstate_attempt(request: Request) -> Response:
    name = await operator(request)
    body = check(await read_body(request), REASON_BODY)
    game_id = request.path_params["game_id"]
    return respond(request, await operations(request).reinstate(name, game_id, body["reason"]))


async def suspend_player(request: Request) -> Response:
    name = await operator(request)
    body = check(await read_body(request), SUSPEND_BODY)
    player_id = request.path_params["player_id"]
    answer = await operations(request).suspend(name, player_id, body["reason"], body.get("until"))
    return respond(request, answer)


async def unsuspend_player(request: Request) -> Response:
    name = await operator(request)
    body = check(await read_body(request), REASON_BODY)
    player_id = request.path_params["player_id"]
    return respond(request, await operations(request).unsuspend(name, player_id, body["reason"]))


async def reset_name(request: Request) -> Response:
    name = await operator(request)
    body = check(await read_body(request), REASON_BODY)
    player_id = request.path_params["player_id"]
    return respond(request, await operations(request).reset_name(name, player_id, body["reason"]))


async def revoke_tokens(request: Request) -> Response:
    name = await operator(request)
    body = check(await read_body(request), REASON_BODY)
    player_id = request.path_params["player_id"]
    answer = await operations(request).revoke_tokens(name, player_id, body["reason"])
    return respond(request, answer)


async def list_reviews(request: Request) -> Response:
    """``GET /v1/operator/reviews?game=&date=&state=``: the day's review items."""
    await operator(request)
    params = checked_query(request, REVIEWS_QUERY)
    total, found = await review.items(
        service_of(request).store.redis,
        params["game"],
        params["date"],
        params["state"],
        params["offset"],
        params["limit"],
    )
    answer = {"game": params["game"], "date": params["date"], "total": total, "items": found}
    return respond(request, answer)


async def decide_review(request: Request) -> Response:
    """``POST /v1/operator/reviews/{id}``: clear or void an item, with a reason."""
    name = await operator(request)
    body = check(await read_body(request), DECISION_BODY)
    item = await review.decide(
        operations(request),
        name,
        request.path_params["id"],
        body["decision"],
        body["reason"],
        body.get("code") or "fair_play",
    )
    return respond(request, item)
