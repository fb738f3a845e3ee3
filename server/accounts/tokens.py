"""Renewing a token, and signing out everywhere (``protocol/ACCOUNTS.md``)."""

from __future__ import annotations

from typing import Any

from server import auth
from server.accounts import binding, transfer
from server.accounts.revocation import not_before
from server.errors import ApiError
from server.service import GameService


async def token_answer(service: GameService, player_id: str) -> dict[str, Any]:
    """A fresh token of ``player_id`` (issued no earlier than its latest revocation), as
    every route that hands out a token answers: ``player_id``, ``token``, ``name``,
    ``expires_at`` (Unix ms)."""
    now = service.clock() / 1000
    revoked_before = await not_before(service.store.redis, player_id)
    token, expires = auth.issue(service.secret, player_id, now, revoked_before)
    return {
        "player_id": player_id,
        "token": token,
        "name": await service.players.name(player_id),
        "expires_at": expires * 1000,
    }


async def renew(service: GameService, claims: auth.Claims) -> dict[str, Any]:
    """A fresh token for a valid one; the player's record and history are kept alive as
    long again (``--player-idle-ttl``), as a new game would keep them."""
    player_id = claims.player_id
    revoked_before = await not_before(service.store.redis, player_id)
    if claims.issued < revoked_before:
        # Revoked on another instance, not read here yet: the authoritative value says so.
        service.revocations.note(player_id, revoked_before)
        raise ApiError("token_revoked", "this token was revoked; sign in again")
    now_ms = service.clock()
    await service.store.player_created_at(player_id, now_ms)  # an expired record comes back
    await service.store.touch_player(player_id, now_ms)
    await binding.keep(service.store.redis, player_id)
    return await token_answer(service, player_id)


async def sign_out_everywhere(service: GameService, player_id: str) -> dict[str, Any]:
    """Revoke every token of the player issued until now, the caller's included, and
    void its pending transfer codes (redemption refuses them anyway)."""
    revoked_before = await service.revocations.revoke(player_id, service.clock() / 1000)
    await transfer.void_all(service.store.redis, player_id)
    return {"player_id": player_id, "revoked_before": revoked_before * 1000}
