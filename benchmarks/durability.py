"""What ``--durability replica`` costs a move, on a local Redis Cluster (and standalone).

    .venv/bin/python -m benchmarks.durability [--moves 400] [--concurrency 1,32] [--rounds 3]

Starts, on 127.0.0.1 and torn down on exit: a standalone ``redis-server`` and a Redis
Cluster of 3 primaries with a replica each (``server.testing``).  For each setting --
standalone, cluster, cluster with ``durability replica`` -- and each concurrency C, C
games of Empress of Italy are played at once through ``GameService.play`` (the move
path minus the WebSocket framing: the engine, the move script, and for ``replica`` the
pipelined ``WAIT 1``), each a closed loop of legal moves, ``--moves`` moves in all.
Settings alternate within each round; figures are medians over the rounds: moves/s and
the p50/p99 latency of a move, and each setting's ratio to the standalone one of the
same round.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

from server.redisconn import connect
from server.rules import load_game
from server.service import GameService
from server.store import Store
from server.testing import RedisClusterProcesses, RedisProcess

GAME = "empress_of_italy"
SECRET = b"26e4a72d53dca15eac94f58e1b66bdc54d35194011f39fb2fc80dc63a2bdaeb7"
SETTINGS = (("standalone", False, False), ("cluster", True, False), ("cluster+replica", True, True))


async def play_games(
    service: GameService, games: int, moves: int, rng: random.Random
) -> list[float]:
    """``games`` games at once, ``moves`` moves in all: each move's latency (s)."""
    player = (await service.create_player())["player_id"]
    latencies: list[float] = []
    left = [moves]

    async def one_game() -> None:
        snapshot = await service.create_game(player, GAME, None)
        game_id, version = snapshot["id"], snapshot["version"]
        game = load_game((await service.load(game_id)).state)
        while left[0] > 0:
            legal = game.legal_moves()
            if not legal:
                snapshot = await service.create_game(player, GAME, None)
                game_id, version = snapshot["id"], snapshot["version"]
                game = load_game((await service.load(game_id)).state)
                continue
            left[0] -= 1
            move = str(rng.choice(legal))
            started = time.perf_counter()
            reply, _, game = await service.play(
                game_id, player, move, version, move_id=f"{game_id}:{version}"
            )
            latencies.append(time.perf_counter() - started)
            version = reply["version"]

    await asyncio.gather(*(one_game() for _ in range(games)))
    return latencies


async def measure(
    url: str, cluster: bool, durable: bool, games: int, moves: int
) -> dict[str, float]:
    client = connect(url, cluster)
    service = GameService(Store(client, durable=durable), SECRET)
    try:
        await play_games(service, games, min(moves, 50), random.Random(0))  # warm-up
        started = time.perf_counter()
        latencies = await play_games(service, games, moves, random.Random(1))
        elapsed = time.perf_counter() - started
    finally:
        await service.store.nodes.aclose()
        await client.aclose()
    latencies.sort()
    return {
        "rate": len(latencies) / elapsed,
        "p50": 1000 * latencies[len(latencies) // 2],
        "p99": 1000 * latencies[int(len(latencies) * 0.99)],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.durability", description=__doc__)
    parser.add_argument("--moves", type=int, default=400, help="moves per measurement (400)")
    parser.add_argument("--concurrency", default="1,32", help="games at once, a list (1,32)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; figures are medians (3)")
    args = parser.parse_args(argv)
    levels = [int(value) for value in args.concurrency.split(",")]
    if not 1 <= args.moves <= 100_000 or not 1 <= args.rounds <= 20 or min(levels) < 1:
        parser.error("--moves in [1, 100000], --rounds in [1, 20], concurrency at least 1")
    with RedisProcess() as standalone, RedisClusterProcesses() as cluster:
        urls = {False: standalone.url, True: cluster.url}
        figures: dict[tuple[str, int], list[dict[str, float]]] = {}
        for _ in range(args.rounds):
            for games in levels:
                for name, on_cluster, durable in SETTINGS:
                    result = asyncio.run(
                        measure(urls[on_cluster], on_cluster, durable, games, args.moves)
                    )
                    figures.setdefault((name, games), []).append(result)
    print(f"{args.moves} moves of {GAME} per measurement, medians of {args.rounds} rounds")
    print("| games at once | setting | moves/s | vs standalone | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|")
    for games in levels:
        base = statistics.median(r["rate"] for r in figures[("standalone", games)])
        for name, _, _ in SETTINGS:
            rows = figures[(name, games)]
            rate = statistics.median(r["rate"] for r in rows)
            p50 = statistics.median(r["p50"] for r in rows)
            p99 = statistics.median(r["p99"] for r in rows)
            print(
                f"| {games} | {name} | {rate:,.0f} | {rate / base:.2f}× | {p50:.2f} | {p99:.2f} |"
            )


if __name__ == "__main__":
    main()
