"""Exporting and deleting a player's account (``protocol/ACCOUNTS.md``, "Export and
deletion")."""

from __future__ import annotations

import logging
from typing import Any

from server.accounts import binding, transfer
from server.accounts.revocation import not_before
from server.errors import ApiError
from server.players import HISTORY_PAGE, HISTORY_SIZE, player_key
from server.service import GameService

log = logging.getLogger("server.accounts")

EXPORT_FORMAT = "solitaire-account-export/1"


async def all_games(service: GameService, player_id: str) -> list[dict[str, Any]]:
    """Every game in the player's history (at most ``HISTORY_SIZE``), newest first."""
    games: list[dict[str, Any]] = []
    cursor: str | None = None
    while len(games) < HISTORY_SIZE:
        page = await service.my_games(player_id, cursor, HISTORY_PAGE[1])
        games += page["games"]
        cursor = page["next"]
        if cursor is None:
            break
    return games


async def export(service: GameService, player_id: str) -> dict[str, Any]:
    """Everything the server keeps about the player, as one JSON document."""
    redis = service.store.redis
    revoked_before = await not_before(redis, player_id)
    return {
        "format": EXPORT_FORMAT,
        "exported_at": service.clock(),
        "account": await service.me(player_id),
        "stats": (await service.my_stats(player_id))["games"],
        "games": await all_games(service, player_id),
        "tokens_revoked_before": revoked_before * 1000 or None,
    }


async def delete(service: GameService, player_id: str) -> dict[str, Any]:
    """Delete the player's account: its open games end (resigned), its personal data
    (display name, identity binding, transfer codes, record, history, stats) is removed,
    and last its tokens are revoked, so a call that fails part-way can be repeated with
    the same token.
    Finished ranked results stay on their boards under the player's random id, which no
    longer leads to anything (no name, no record, no token)."""
    redis = service.store.redis
    ended = 0
    for game in await all_games(service, player_id):
        if game["status"] != "playing":
            continue
        stored = await service.store.load(game["id"])
        if stored is None or stored.owner != player_id:
            continue
        try:
            await service.play(stored.id, player_id, "resign", stored.version)
            ended += 1
        except ApiError as error:  # a day already closed, a move meanwhile: nothing to end
            log.info("deleting an account: game %s not resigned (%s)", stored.id, error.code)
    await service.players.release_name(player_id)
    await binding.unbind(redis, player_id)
    await transfer.void_all(redis, player_id)
    key = player_key(player_id)
    await redis.delete(key, f"{key}:games", f"{key}:stats", f"{key}:ended")
    await service.revocations.revoke(player_id, service.clock() / 1000)
    return {"player_id": player_id, "deleted": True, "games_ended": ended}
