"""The move script survives a Redis that forgot its scripts (a restart, SCRIPT FLUSH)."""

from __future__ import annotations

from server.redisconn import connect
from server.service import GameService
from server.store import Store


async def test_a_move_still_applies_after_script_flush(redis_url: str, redis_cluster: bool) -> None:
    redis = connect(redis_url, redis_cluster)
    try:
        service = GameService(Store(redis), b"store-scripts-test-secret-32-bytes")
        player = (await service.create_player())["player_id"]
        game = await service.create_game(player, "balcony", "abc")
        await redis.script_flush()
        reply, patch, _ = await service.play(game["id"], player, "deal", 0, move_id="m1")
        assert reply["version"] == 1 and patch is not None
        reply, _, _ = await service.play(game["id"], player, "deal", 1, move_id="m2")
        assert reply["version"] == 2
    finally:
        await redis.aclose()
