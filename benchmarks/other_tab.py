"""What a player's other tab pays to keep ``legal_moves`` current (WEBSOCKET.md, "Other tabs").

Run from the repository root (a throwaway ``redis-server``, the server in-process)::

    .venv/bin/python -m benchmarks.other_tab              # about 10 s
    .venv/bin/python -m benchmarks.other_tab --moves 80

Tab A of the owner moves (Colorado, ``stock>tableau[i]``, always legal); tab B of the same
player watches the game on another socket. For each move, once B has the move's ``patch``,
B gets the legal moves at the new version one of three ways:

* ``patch only``: nothing more (B's ``legal_moves`` stay unknown): the baseline;
* ``GET snapshot``: ``GET /v1/games/{id}`` (what a client without the documented way did);
* ``re-subscribe``: ``subscribe`` again on the same socket with the version B holds: the
  server answers ``subscribed`` with the legal moves and no patch (B is current).

Figures: the median time from A's ``move`` to B holding the legal moves, and the bytes B
received per move (frames or HTTP body), with ratios against the baseline of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect

from server.app import create_app
from server.config import Settings
from server.testing import UNLIMITED, RedisProcess, serve_app

SECRET = "other-tab-benchmark-secret-of-32-bytes!"


async def recv(socket: ClientConnection, kind: str) -> tuple[dict[str, Any], int]:
    """The next message of ``kind`` and the bytes of every frame read for it."""
    size = 0
    while True:
        frame = await asyncio.wait_for(socket.recv(), 5)
        assert isinstance(frame, bytes)
        size += len(frame)
        message = msgpack.unpackb(frame)
        if message["type"] == kind:
            return message, size


async def request(socket: ClientConnection, message: dict[str, Any]) -> None:
    await socket.send(msgpack.packb(message))


async def run_way(base_url: str, ws_url: str, way: str, moves: int) -> dict[str, float]:
    async with httpx.AsyncClient(base_url=base_url) as http:
        player = (await http.post("/v1/players")).json()
        headers = {"Authorization": f"Bearer {player['token']}"}
        created = await http.post("/v1/games", json={"game": "colorado"}, headers=headers)
        game_id = created.json()["id"]
        async with connect(ws_url) as tab_a, connect(ws_url) as tab_b:
            for tab in (tab_a, tab_b):
                await request(tab, {"type": "auth", "token": player["token"]})
                await recv(tab, "authenticated")
                await request(tab, {"type": "subscribe", "game_id": game_id})
                await recv(tab, "snapshot")
            times, sizes = [], []
            for version in range(moves):
                start = time.perf_counter()
                await request(
                    tab_a,
                    {
                        "type": "move",
                        "game_id": game_id,
                        "move": f"stock>tableau[{version % 20}]",
                        "version": version,
                        "move_id": f"m{version}",
                    },
                )
                patch, size = await recv(tab_b, "patch")
                assert patch["v"] == version + 1, patch
                if way == "GET snapshot":
                    answer = await http.get(f"/v1/games/{game_id}", headers=headers)
                    assert answer.json()["legal_moves"] is not None
                    size += len(answer.content)
                elif way == "re-subscribe":
                    await request(
                        tab_b, {"type": "subscribe", "game_id": game_id, "version": version + 1}
                    )
                    subscribed, more = await recv(tab_b, "subscribed")
                    assert subscribed["legal_moves"] is not None
                    size += more
                times.append(time.perf_counter() - start)
                sizes.append(size)
                await recv(tab_a, "accepted")
    return {"ms": statistics.median(times) * 1000, "bytes": statistics.median(sizes)}


async def run(moves: int) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    with RedisProcess() as process:
        settings = Settings(
            redis_url=f"redis://127.0.0.1:{process.port}/0",
            secret=SECRET,
            limits=UNLIMITED,
        )
        app = create_app(settings)
        async with serve_app(app) as port:
            base_url, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/v2/ws"
            for way in ("patch only", "GET snapshot", "re-subscribe"):
                results[way] = await run_way(base_url, ws_url, way, moves)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--moves", type=int, default=60, help="moves per way (at most 84)")
    args = parser.parse_args(argv)
    results = asyncio.run(run(min(args.moves, 84)))
    base = results["patch only"]
    print(f"Colorado, {args.moves} moves by tab A; tab B of the same player watches:")
    print("| tab B, per move | ms to legal moves (median) | × patch only | bytes | × patch only |")
    print("|---|---:|---:|---:|---:|")
    for way, figures in results.items():
        print(
            f"| {way} | {figures['ms']:.2f} | {figures['ms'] / base['ms']:.2f} | "
            f"{figures['bytes']:.0f} | {figures['bytes'] / base['bytes']:.2f} |"
        )


if __name__ == "__main__":
    main()
