"""Signing in with an identity of the operator's provider (``protocol/ACCOUNTS.md``)."""

from __future__ import annotations

from typing import Any

from server.accounts import binding, tokens
from server.accounts.identity import Identity
from server.auth import new_player_id
from server.service import GameService


async def sign_in(service: GameService, identity: Identity) -> dict[str, Any]:
    """The one player bound to ``identity``, created at its first sign-in, and a fresh
    token of it: the token answer plus ``created``."""
    redis, now = service.store.redis, service.clock()
    player_id = await binding.bound_player(redis, identity)
    created = player_id is None
    if player_id is None:
        player_id = new_player_id()
    # The record first (new, or back after it expired), then the binding on both sides.
    await service.store.player_created_at(player_id, now)
    bound = await binding.bind(redis, identity, player_id, now)
    if bound != player_id:  # another first sign-in of the same identity came first
        player_id, created = bound, False
        await service.store.player_created_at(player_id, now)
        await binding.bind(redis, identity, player_id, now)
    await service.store.touch_player(player_id, now)
    return {**await tokens.token_answer(service, player_id), "created": created}
