"""The scouting report of the leaderboard audit (issue 8, "scouting leaves a trace").

A throwaway account deals today's challenge out and resigns; the real account, from the
same address, then plays it knowing every card, at a human pace. Timing cannot see it;
the shared client-address hash can. The trace fields are written here as the data
contract says the daily start records them (``client_hash`` / ``install_hash`` of the
game's record, lowercase hex, empty when absent; missing: no trace recorded).
"""

from __future__ import annotations

import json
import random
from typing import Any

from audit_helpers import (
    DAY,
    FakeClock,
    daily_game,
    human_steps,
    random_choice,
    run_cli,
    signals,
    signals_of,
)
from redis.asyncio import Redis

from server import daily
from server.audit import audit_leaderboard
from server.audit.scouting import attempts_key, dealt_through_stock
from server.rules import new_game
from server.service import GameService
from server.store import StoredGame, game_key
from server.testing import choose_dailies

GAME = "balcony"
ADDRESS = "a1" * 32
INSTANCE = "b2" * 32


#: The signal is not what these tests are about, and costs seconds per game (it has its own).
BOARD_ARGS = ("--leaderboard", GAME, DAY, "--no-clairvoyance")


async def board(service: GameService) -> dict[str, Any]:
    """The leaderboard audit of the day, by player id."""
    results = await audit_leaderboard(service, GAME, DAY, clairvoyance=False)
    return {result.player_id: result for result in results}


async def trace(redis: Redis, game_id: str, client: str, install: str) -> None:
    await redis.hset(game_key(game_id), mapping={"client_hash": client, "install_hash": install})


async def scout(service: GameService, clock: FakeClock) -> StoredGame:
    """A throwaway account's ranked attempt: deal the whole stock, then resign."""
    player = (await service.create_player())["player_id"]
    await choose_dailies(service)
    snapshot = await service.start_daily(player, GAME)
    version, legal = snapshot["version"], snapshot["legal_moves"]
    for _ in range(200):
        if "deal" not in legal:
            break
        clock.advance(900)
        reply, _, game = await service.play(snapshot["id"], player, "deal", version)
        version, legal = reply["version"], game.legal_moves()
    clock.advance(900)
    await service.play(snapshot["id"], player, "resign", version)
    return await service.load(snapshot["id"])


async def player_game(service: GameService, clock: FakeClock, seed: int, moves: int) -> StoredGame:
    rng = random.Random(seed)
    return await daily_game(
        service, clock, GAME, random_choice(rng), human_steps(rng), moves, resign=True
    )


async def day_of_scouting(service: GameService, clock: FakeClock, redis: Redis) -> dict[str, Any]:
    scouted = await scout(service, clock)
    cheat = await player_game(service, clock, 1, 25)  # after the scout, same address
    other = await player_game(service, clock, 2, 20)  # another address and install
    untraced = await player_game(service, clock, 3, 15)
    # Recorded before traces existed: no trace fields at all.
    await redis.hdel(game_key(untraced.id), "client_hash", "install_hash")
    # An attempt from the cheat's installation that never moved (on the board all the same).
    idle_player = (await service.create_player())["player_id"]
    idle = await service.start_daily(idle_player, GAME)
    # One still being played from the cheat's installation, a few moves in.
    busy_player = (await service.create_player())["player_id"]
    busy = await service.start_daily(busy_player, GAME)
    clock.advance(1000)
    move = next(move for move in busy["legal_moves"] if move != "deal")
    await service.play(busy["id"], busy_player, move, busy["version"])
    await trace(redis, scouted.id, ADDRESS, "")
    await trace(redis, cheat.id, ADDRESS, INSTANCE)
    await trace(redis, other.id, "c3" * 32, "d4" * 32)
    await trace(redis, idle["id"], "e5" * 32, INSTANCE)
    await trace(redis, busy["id"], "", INSTANCE)
    return {
        "scout": scouted,
        "cheat": cheat,
        "other": other,
        "untraced": untraced,
        "idle": idle["id"],
        "busy": busy["id"],
    }


async def test_a_scout_and_the_account_it_scouted_for_are_linked(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    games = await day_of_scouting(service, clock, redis_client)
    assert len(await redis_client.hgetall(attempts_key(GAME, DAY))) == 6
    results = await board(service)
    cheat, scouted = games["cheat"], games["scout"]
    # Every attempt is on the board, the unfinished ones included (DAILY.md).
    assert set(results) == {
        cheat.owner,
        scouted.owner,
        games["other"].owner,
        games["untraced"].owner,
        (await service.load(games["idle"])).owner,
        (await service.load(games["busy"])).owner,
    }

    found = results[cheat.owner]
    assert found.verdict.integrity == "pass" and not found.verdict.passed
    assert signals(found.verdict) == {"scouting_link"}
    [signal] = signals_of(found.verdict, "scouting_link")
    links = {link["game_id"]: link for link in signal.evidence["links"]}
    assert set(links) == {scouted.id, games["idle"], games["busy"]}
    assert links[scouted.id]["shared"] == ["client address"]
    assert links[scouted.id]["ended"] == "dealt_through_stock"
    assert links[scouted.id]["status"] == "resigned"
    assert links[scouted.id]["player_id"] == scouted.owner
    assert links[scouted.id]["started_before_this_ended"] is True
    assert links[games["idle"]]["shared"] == ["install id"]
    assert links[games["idle"]]["ended"] == "abandoned"  # never moved
    assert links[games["busy"]]["ended"] == "playing"  # the day is still open
    assert "dealt through the stock" in signal.detail and scouted.id in signal.detail

    # The scout sees its link too: the cheat started only after it ended.
    [back] = signals_of(results[scouted.owner].verdict, "scouting_link")
    [link] = back.evidence["links"]
    assert link["game_id"] == cheat.id and link["started_before_this_ended"] is False

    # No shared trace (an empty hash never matches), or none recorded: no signal.
    assert results[games["other"].owner].verdict.passed
    assert results[games["other"].owner].trace_recorded is True
    assert results[games["untraced"].owner].verdict.passed
    assert results[games["untraced"].owner].trace_recorded is False

    # Once the day has closed, the attempt still unfinished is abandoned.
    clock.now = daily.opens_ms(DAY) + daily.DAY_MS + 1
    results = await board(service)
    [signal] = signals_of(results[cheat.owner].verdict, "scouting_link")
    ended = {link["game_id"]: link["ended"] for link in signal.evidence["links"]}
    assert ended[games["busy"]] == "abandoned"


async def test_the_command_line_reports_the_links_and_exits_2(
    service: GameService, clock: FakeClock, redis_client: Redis, redis_url: str, redis_cluster: bool
) -> None:
    games = await day_of_scouting(service, clock, redis_client)
    result = await run_cli(*BOARD_ARGS, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 2, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if games["cheat"].id in line)
    assert "scouting_link" in row and " pass " in row and " yes " in row
    untraced = next(line for line in result.stdout.splitlines() if games["untraced"].id in line)
    assert " no " in untraced
    assert "6 audited: 2 passed, 0 failed integrity, 4 passed integrity with" in result.stdout

    result = await run_cli(*BOARD_ARGS, "--redis-url", redis_url, "--json", cluster=redis_cluster)
    document = json.loads(result.stdout)
    assert (document["passed"], document["signals_only"]) == (2, 4)
    entry = next(e for e in document["entries"] if e["player_id"] == games["cheat"].owner)
    [signal] = entry["verdict"]["fair_play"]
    assert signal["name"] == "scouting_link"
    assert ADDRESS not in result.stdout and INSTANCE not in result.stdout  # no hash shown

    # Tampering outranks signals: exit 1.
    await redis_client.hset(game_key(games["other"].id), "score", 99)
    result = await run_cli(*BOARD_ARGS, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 1


def test_dealt_through_the_stock() -> None:
    game = new_game(GAME, "through")
    moves = []
    while "deal" in game.legal_moves():
        game.play("deal")
        moves.append("deal")
    assert dealt_through_stock(GAME, "through", moves)
    assert dealt_through_stock(GAME, "through", [*moves, "resign"])
    assert not dealt_through_stock(GAME, "through", moves[:-1])
    assert not dealt_through_stock(GAME, "through", ["tableau[0]>tableau[0]"])
    # Gloucestershire has no stock to deal through.
    assert not dealt_through_stock("gloucestershire", "through", ["resign"])
