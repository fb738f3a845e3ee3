"""The accounts' REST routes (``protocol/REST.md``, "Accounts"; ``protocol/ACCOUNTS.md``).

Each checks its body against the schema ``/openapi.json`` publishes (``server/openapi.py``
takes them from here), as ``server/rest.py`` does.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from server import auth
from server.accounts import binding, erasure, signin, tokens, transfer
from server.accounts.identity import MAX_ID_TOKEN, IdentityVerifier
from server.auth import bearer_token
from server.codec import read_body, respond
from server.errors import ApiError
from server.rest import EMPTY_BODY, player, service_of
from server.schema import check

#: What a route that hands out a token answers (``POST /v1/players`` answers the first
#: three).
TOKEN_ANSWER: dict[str, Any] = {
    "type": "object",
    "required": ["player_id", "token", "name", "expires_at"],
    "properties": {
        "player_id": {"type": "string"},
        "token": {"type": "string"},
        "name": {"type": ["string", "null"]},
        "expires_at": {"type": "integer", "description": "Unix ms; renew before"},
    },
}


#: ``POST /v1/players/transfer``: the code as shown (its dashes and spaces optional).
REDEEM_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["code"],
    "additionalProperties": False,
    "properties": {
        "code": {
            "type": "string",
            "pattern": transfer.CODE_PATTERN,
            "description": "the transfer code, as shown (case, dashes and spaces do not matter)",
        }
    },
}
TRANSFER_CODE: dict[str, Any] = {
    "type": "object",
    "required": ["code", "expires_at"],
    "properties": {
        "code": {"type": "string", "description": "16 characters in 4 groups; shown once"},
        "expires_at": {"type": "integer", "description": "Unix ms (15 minutes)"},
    },
}
#: A pending code in the account view (never the code itself).
PENDING_CODE: dict[str, Any] = {
    "type": "object",
    "required": ["id", "expires_at"],
    "properties": {"id": {"type": "string"}, "expires_at": {"type": "integer"}},
}


#: ``DELETE /v1/players/me``: the deletion is confirmed in the body.
DELETE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["confirm"],
    "additionalProperties": False,
    "properties": {"confirm": {"const": True, "description": "true: delete the account"}},
}
DELETED: dict[str, Any] = {
    "type": "object",
    "required": ["player_id", "deleted", "games_ended"],
    "properties": {
        "player_id": {"type": "string"},
        "deleted": {"const": True},
        "games_ended": {"type": "integer", "description": "open games resigned"},
    },
}


#: ``POST /v1/players/login`` and ``POST /v1/players/me/identity``.
ID_TOKEN_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["id_token"],
    "additionalProperties": False,
    "properties": {
        "id_token": {
            "type": "string",
            "description": f"an ID token of the server's identity provider (a signed JWT, "
            f"at most {MAX_ID_TOKEN} characters)",
        }
    },
}
LOGIN_ANSWER: dict[str, Any] = {
    **TOKEN_ANSWER,
    "required": [*TOKEN_ANSWER["required"], "created"],
    "properties": {
        **TOKEN_ANSWER["properties"],
        "created": {"type": "boolean", "description": "true: the identity's first sign-in"},
    },
}


def verifier(request: Request) -> IdentityVerifier:
    identity: IdentityVerifier | None = request.app.state.identity
    if identity is None:
        raise ApiError("identity_disabled", "this server has no identity provider")
    return identity


def claims(request: Request) -> auth.Claims:
    """The claims of the request's token, or ``unauthorized`` / ``token_revoked``."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        raise ApiError("unauthorized", "this route needs 'Authorization: Bearer <token>'")
    return service_of(request).token_claims(token)


async def renew_token(request: Request) -> Response:
    """``POST /v1/players/me/token``: a fresh token for a valid one."""
    current = claims(request)
    check(await read_body(request), EMPTY_BODY)
    return respond(request, await tokens.renew(service_of(request), current))


async def revoke_tokens(request: Request) -> Response:
    """``DELETE /v1/players/me/tokens``: sign out everywhere."""
    player_id = player(request)
    check(await read_body(request), EMPTY_BODY)
    return respond(request, await tokens.sign_out_everywhere(service_of(request), player_id))


async def create_transfer_code(request: Request) -> Response:
    """``POST /v1/players/me/transfer``: a one-time code for moving to a new device."""
    player_id = player(request)
    check(await read_body(request), EMPTY_BODY)
    service = service_of(request)
    return respond(
        request, await transfer.create(service.store.redis, player_id, service.clock()), 201
    )


async def redeem_transfer_code(request: Request) -> Response:
    """``POST /v1/players/transfer``: the code's player and a fresh token of it."""
    body = check(await read_body(request), REDEEM_BODY)
    service = service_of(request)
    player_id = await transfer.redeem(service.store.redis, body["code"], service.clock())
    return respond(request, await tokens.token_answer(service, player_id))


async def export_account(request: Request) -> Response:
    """``GET /v1/players/me/export``: everything stored about the caller."""
    return respond(request, await erasure.export(service_of(request), player(request)))


async def delete_account(request: Request) -> Response:
    """``DELETE /v1/players/me`` with ``{"confirm": true}``."""
    player_id = player(request)
    check(await read_body(request), DELETE_BODY)
    return respond(request, await erasure.delete(service_of(request), player_id))


async def login(request: Request) -> Response:
    """``POST /v1/players/login``: the player bound to the ID token's identity (created at
    its first sign-in) and a fresh token of it."""
    identity_verifier = verifier(request)
    body = check(await read_body(request), ID_TOKEN_BODY)
    identity = await identity_verifier.verify(body["id_token"])
    return respond(request, await signin.sign_in(service_of(request), identity))


async def link_identity(request: Request) -> Response:
    """``POST /v1/players/me/identity``: link the ID token's identity to the caller."""
    player_id = player(request)
    identity_verifier = verifier(request)
    body = check(await read_body(request), ID_TOKEN_BODY)
    identity = await identity_verifier.verify(body["id_token"])
    service = service_of(request)
    await binding.link(service.store.redis, identity, player_id, service.clock())
    return respond(request, await service.me(player_id))
