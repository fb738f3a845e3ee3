"""The move script: it survives a Redis that forgot its scripts (a restart, SCRIPT
FLUSH), renews the game's expiry and trims its patch history."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server import store
from server.redisconn import connect
from server.service import GameService
from server.store import EXPIRY_RENEW_AFTER, IDLE_TTL, PATCH_TRIM_EVERY, Store, game_keys


@contextlib.asynccontextmanager
async def balcony_game(
    redis_url: str, redis_cluster: bool
) -> AsyncIterator[tuple[Any, GameService, str, str]]:
    """A new Balcony game: (Redis client, service, player id, game id)."""
    redis = connect(redis_url, redis_cluster)
    try:
        service = GameService(
            Store(redis), b"a08a4c6a4d583d81467b4b63163e0fa13bc3084ae0ee639ddb060fa8b33aee5a"
        )
        player = (await service.create_player())["player_id"]
        game = await service.create_game(player, "balcony", "abc")
        yield redis, service, player, game["id"]
    finally:
        await redis.aclose()


async def play_deals(service: GameService, game_id: str, player: str, ids: list[str]) -> int:
    """Deal once per move id ("" for none), from the game's version 0; the last version."""
    version = 0
    for move_id in ids:
        reply, _, _ = await service.play(game_id, player, "deal", version, move_id=move_id)
        version = reply["version"]
    return version


async def test_a_move_still_applies_after_script_flush(redis_url: str, redis_cluster: bool) -> None:
    async with balcony_game(redis_url, redis_cluster) as (redis, service, player, game_id):
        await redis.script_flush()
        reply, patch, _ = await service.play(game_id, player, "deal", 0, move_id="m1")
        assert reply["version"] == 1 and patch is not None
        reply, _, _ = await service.play(game_id, player, "deal", 1, move_id="m2")
        assert reply["version"] == 2


async def test_a_move_renews_the_games_expiry_once_it_ran_down_by_an_hour(
    redis_url: str, redis_cluster: bool
) -> None:
    async with balcony_game(redis_url, redis_cluster) as (redis, service, player, game_id):
        keys = game_keys(game_id)
        await play_deals(service, game_id, player, ["m1"])
        for key in keys:  # the first move gives every key the game's expiry
            assert IDLE_TTL - 5 <= await redis.ttl(key) <= IDLE_TTL, key
        for key in keys:
            await redis.expire(key, IDLE_TTL - EXPIRY_RENEW_AFTER + 60)
        await service.play(game_id, player, "deal", 1, move_id="m2")
        for key in keys:  # ran down by less than an hour: left alone
            assert await redis.ttl(key) <= IDLE_TTL - EXPIRY_RENEW_AFTER + 60, key
        for key in keys:
            await redis.expire(key, IDLE_TTL - EXPIRY_RENEW_AFTER - 60)
        await service.play(game_id, player, "deal", 2, move_id="m3")
        for key in keys:  # by more: renewed
            assert IDLE_TTL - 5 <= await redis.ttl(key) <= IDLE_TTL, key


async def test_move_ids_first_sent_after_the_first_move_expire_with_the_game(
    redis_url: str, redis_cluster: bool
) -> None:
    async with balcony_game(redis_url, redis_cluster) as (redis, service, player, game_id):
        await play_deals(service, game_id, player, ["", "", "m3"])
        move_ids = game_keys(game_id)[3]
        assert await redis.hget(move_ids, "m3") == b"3"
        assert IDLE_TTL - 5 <= await redis.ttl(move_ids) <= IDLE_TTL


async def test_the_patch_history_is_trimmed_every_few_versions(
    redis_url: str, redis_cluster: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "PATCH_HISTORY", 3)
    async with balcony_game(redis_url, redis_cluster) as (redis, service, player, game_id):
        moves = PATCH_TRIM_EVERY + 8
        await play_deals(service, game_id, player, [f"m{n}" for n in range(moves)])
        # Trimmed to 3 at version PATCH_TRIM_EVERY, the 8 after it kept since.
        assert await redis.zcard(game_keys(game_id)[2]) == 3 + 8
        assert len(await service.store.patches_after(game_id, moves - 11) or []) == 11
        assert await service.store.patches_after(game_id, moves - 12) is None


async def test_a_game_won_or_resigned_leaves_the_move_cache(
    redis_url: str, redis_cluster: bool
) -> None:
    """The soak's object census (issue 23): every game ever played stayed decoded in its
    process's move cache (about 10-15 KiB each) until 10,000 others pushed it out, though
    a game won or resigned takes no move again: worker RSS grew with every game played.
    A game in play, and a stuck one (an undo may reopen it), stay cached."""
    async with balcony_game(redis_url, redis_cluster) as (_, service, player, game_id):
        await play_deals(service, game_id, player, ["m1"])
        assert game_id in service._cache
        await service.play(game_id, player, "resign", 1, move_id="m2")
        assert game_id not in service._cache


async def test_a_game_nobody_moved_in_for_ten_minutes_leaves_the_move_cache(
    redis_url: str, redis_cluster: bool
) -> None:
    """The soak's object census (issue 23): a game left in play (a player gone for the
    day) stayed decoded in the move cache until 10,000 others pushed it out, so worker RSS
    grew with every game abandoned.  A move drops from the cache the games nobody moved
    in for ``CACHE_IDLE_MS`` (on the service's clock); a game in use stays."""
    from server.service import CACHE_IDLE_MS

    async with balcony_game(redis_url, redis_cluster) as (_, service, player, left):
        now = [10**12]
        service.clock = lambda: now[0]
        other = (await service.create_game(player, "balcony", "def"))["id"]
        await play_deals(service, left, player, ["a1"])
        now[0] += CACHE_IDLE_MS - 1000
        await play_deals(service, other, player, ["b1"])
        assert left in service._cache and other in service._cache
        now[0] += 2000  # ``left`` idle past the bound, ``other`` not
        await service.play(other, player, "deal", 1, move_id="b2")
        assert left not in service._cache and other in service._cache
