"""Ranked moves against casual ones (issue 8): what the board and the close cost a move.

A ranked attempt's move also checks its day's close (no Redis) and, when it changes the
score or ends the attempt, updates the day's leaderboard (one more round trip).  This plays
the same random legal moves of the same deal as a casual game and as a ranked attempt,
through one :class:`~server.service.GameService` on a throwaway ``redis-server``, and
prints per move: Redis round trips (commands and pipelines the client sends), wall time,
and the ranked/casual differences.  Run from the repository root::

    .venv/bin/python -m benchmarks.ranked_moves [--games 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from server import daily
from server.rules import Game, load_game
from server.service import GameService
from server.store import Store
from server.testing import RedisProcess, choose_dailies

GAME = "colorado"
#: Noon of a fixed day: every ranked attempt is played while its day is open.
NOON = daily.opens_ms("2026-03-14") + daily.DAY_MS // 2


class CountingRedis(Redis):
    """A client that counts its round trips: commands, and pipelines as one each."""

    round_trips = 0

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.round_trips += 1
        return await super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        client = self

        class CountedPipeline(Pipeline):
            async def execute(self, raise_on_error: bool = True) -> list[Any]:
                client.round_trips += 1
                return await super().execute(raise_on_error)

        return CountedPipeline(self.connection_pool, self.response_callbacks, transaction, None)


async def play(service: GameService, game_id: str, owner: str, rng: random.Random) -> int:
    """Random legal moves (foundation moves first) until the game ends: how many."""
    stored = await service.load(game_id)
    game: Game = load_game(stored.state)
    version = stored.version
    while game.status == "playing":
        legal: list[str] = [move for move in game.legal_moves() if move != "resign"]
        if not legal:
            legal = ["resign"]
        up = [move for move in legal if ">foundation" in move]
        reply, _, game = await service.play(game_id, owner, rng.choice(up or legal), version)
        version = reply["version"]
    return version


async def run(redis: CountingRedis, games: int) -> dict[str, dict[str, Any]]:
    service = GameService(Store(redis), b"ranked-moves-benchmark-secret-0123", clock=lambda: NOON)
    results: dict[str, dict[str, Any]] = {}
    await choose_dailies(service)  # as the server's background selection does
    for kind in ("casual", "ranked"):
        started = []
        for _ in range(games):
            player = (await service.create_player())["player_id"]
            if kind == "ranked":
                game_id = (await service.start_daily(player, GAME))["id"]
            else:
                seed = await service.chosen_daily_seed(GAME, daily.today(NOON))
                game_id = (await service.create_game(player, GAME, seed))["id"]
            started.append((game_id, player))
        redis.round_trips = 0
        moves = 0
        wall = time.perf_counter()
        for number, (game_id, player) in enumerate(started):
            moves += await play(service, game_id, player, random.Random(number))
        wall = time.perf_counter() - wall
        results[kind] = {
            "moves": moves,
            "round_trips_per_move": redis.round_trips / moves,
            "us_per_move": wall / moves * 1e6,
        }
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=20, help="games of each kind")
    args = parser.parse_args()
    with RedisProcess() as process:
        redis = CountingRedis(host="127.0.0.1", port=process.port)
        try:
            results = await run(redis, args.games)
        finally:
            await redis.aclose()
    casual, ranked = results["casual"], results["ranked"]
    print(f"{args.games} {GAME} games of each kind, the same deal and moves:")
    print("| kind | moves | Redis round trips per move | µs per move (wall) |")
    print("|---|---:|---:|---:|")
    for kind, figures in results.items():
        print(
            f"| {kind} | {figures['moves']} | {figures['round_trips_per_move']:.2f} | "
            f"{figures['us_per_move']:.0f} |"
        )
    extra = ranked["round_trips_per_move"] - casual["round_trips_per_move"]
    print(
        f"ranked - casual: {extra:+.2f} round trips per move (limit +1: "
        f"{'pass' if extra <= 1 else 'FAIL'}), "
        f"time ratio {ranked['us_per_move'] / casual['us_per_move']:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
