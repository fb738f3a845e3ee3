"""The audit of a whole daily leaderboard: each member, its entry and its game."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import cast

from audit_helpers import (
    DAY,
    FakeClock,
    casual_game,
    checks,
    daily_game,
    human_steps,
    random_choice,
)
from redis.asyncio import Redis

from server.audit import BoardAudit, audit_leaderboard
from server.leaderboard import Entry, board_keys
from server.service import GameService
from server.store import game_key, game_keys

GAME = "matrimony"


async def board(service: GameService, clock: FakeClock, players: int) -> list[str]:
    """``players`` ranked games of today's Matrimony, ended; their game ids."""
    rng = random.Random(61)
    ids = []
    for number in range(players):
        stored = await daily_game(
            service, clock, GAME, random_choice(rng), human_steps(rng), 10 + number, resign=True
        )
        ids.append(stored.id)
    return ids


async def test_an_honest_board_passes_best_first(service: GameService, clock: FakeClock) -> None:
    ids = await board(service, clock, 4)
    seen: list[tuple[int, int]] = []
    results = await audit_leaderboard(
        service, GAME, DAY, progress=lambda done, total, _: seen.append((done, total))
    )
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert sorted(result.verdict.game_id or "" for result in results) == sorted(ids)
    assert all(result.verdict.passed for result in results), [r.to_dict() for r in results]
    top = await service.leaderboards.top(GAME, DAY, 10, None, False)
    assert [result.player_id for result in results] == [entry["player_id"] for entry in top]
    assert [result.rank for result in results] == [1, 2, 3, 4]


async def failures(service: GameService) -> dict[str, BoardAudit]:
    """The members the board's audit fails, without the clairvoyance examination (seconds
    of CPU a game; the honest board above and ``test_audit_clairvoyance*.py`` run it): the
    forgeries below are integrity findings."""
    results = await audit_leaderboard(service, GAME, DAY, clairvoyance=False)
    return {result.player_id: result for result in results if not result.verdict.passed}


async def test_a_member_whose_key_is_not_its_entry(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    """A member re-keyed to rank higher than its entry (and its game) earned."""
    await board(service, clock, 3)
    key, _ = board_keys(GAME, DAY)
    [member] = await redis_client.zrange(key, -1, -1)
    last = cast(bytes, member).decode()
    await redis_client.zrem(key, last)
    await redis_client.zadd(key, {"000" + last[3:]: 0})
    [(player, result)] = (await failures(service)).items()
    assert last.endswith(player)
    assert checks(result.verdict) == {"leaderboard_mismatch"}
    assert "which is not its entry's key" in result.verdict.findings[0].detail


async def test_an_entry_pointing_at_another_game(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    """An entry made to point at a (better) casual game of the same player."""
    ids = await board(service, clock, 2)
    stored = await service.load(ids[0])
    rng = random.Random(62)
    casual = await casual_game(service, clock, GAME, "practice", 30, human_steps(rng), rng, True)
    await redis_client.hset(game_key(casual.id), "owner", stored.owner)
    entry = await service.leaderboards.entry(GAME, DAY, stored.owner)
    assert entry is not None
    _, entries = board_keys(GAME, DAY)
    moved = dataclasses.replace(entry, game_id=casual.id)
    await redis_client.hset(entries, stored.owner, json.dumps(dataclasses.asdict(moved)))
    result = (await failures(service))[stored.owner]
    assert "leaderboard_mismatch" in checks(result.verdict)
    assert any("not this matrimony" in f.detail for f in result.verdict.findings)


async def test_an_entry_whose_game_is_gone_or_missing(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    ids = await board(service, clock, 2)
    gone = await service.load(ids[0])
    for key in game_keys(gone.id):  # KEYS would ask one node of a cluster only
        await redis_client.delete(key)
    # A member with no entry at all.
    key, _ = board_keys(GAME, DAY)
    ghost = Entry("p_ghost", "g_ghost", 52, True, 60, 1000, 1)
    await redis_client.zadd(key, {ghost.member(): 0})
    found = await failures(service)
    assert checks(found[gone.owner].verdict) == {"missing_game"}
    assert checks(found["p_ghost"].verdict) == {"leaderboard_mismatch"}
    assert found["p_ghost"].rank == 1
    assert found["p_ghost"].entry is None
