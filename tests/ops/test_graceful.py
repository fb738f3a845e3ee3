"""Graceful restart: on SIGTERM a worker stops accepting, closes its WebSockets with
1012 (service restart) so clients reconnect, finishes in-flight work and exits; the Python
SDK reconnects to the restarted server and resyncs without losing an acknowledged move."""

from __future__ import annotations

import asyncio
import signal

import msgpack
import pytest
from ops_support import ServerProcess, started
from redis.asyncio import Redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from clients.python import Client, Connection
from server.testing import free_port

SECRET = "0837024fe3f090ae1b3988190da3395f900ecfd3fc02f0302fb69dbfc63cdffe"


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_sigterm_closes_websockets_with_1012(redis_url: str, workers: str) -> None:
    args = ("--redis-url", redis_url, "--secret", SECRET, "--workers", workers)
    async with started(*args) as server:
        async with Client(server.base_url) as client:
            await client.create_player()
            game = await client.new_game("balcony")
        sockets = [await connect(server.ws_url) for _ in range(4)]
        for ws in sockets:
            await ws.send(msgpack.packb({"type": "subscribe", "game_id": game["id"]}))
            assert msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))["type"] == "subscribed"
        stopping = asyncio.create_task(server.stop(signal.SIGTERM))
        for ws in sockets:
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        assert await stopping == 0


async def test_a_move_in_flight_at_sigterm_is_finished_before_the_exit(redis_url: str) -> None:
    async with started("--redis-url", redis_url, "--secret", SECRET) as server:
        async with Client(server.base_url) as client:
            await client.create_player()
            game = await client.new_game("balcony")
            token = client.token
        redis = Redis.from_url(redis_url)
        try:
            async with connect(server.ws_url) as ws:
                await ws.send(msgpack.packb({"type": "auth", "token": token}))
                assert msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))["type"] == (
                    "authenticated"
                )
                # Hold every script (the move's compare-and-set) for 1.5 s: the move is
                # in flight when the server gets SIGTERM.
                await redis.execute_command("CLIENT", "PAUSE", "1500", "WRITE")
                move = {
                    "type": "move",
                    "game_id": game["id"],
                    "move": game["legal_moves"][0],
                    "version": 0,
                    "move_id": "in-flight",
                }
                await ws.send(msgpack.packb(move))
                await asyncio.sleep(0.3)
                loop = asyncio.get_running_loop()
                signalled = loop.time()
                stopping = asyncio.create_task(server.stop(signal.SIGTERM))
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await asyncio.wait_for(ws.recv(), 10)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
                assert loop.time() - signalled < 1.0  # closed at once, not after the move
            assert await stopping == 0
            # The server waited for the move and stored it before exiting.
            assert loop.time() - signalled > 1.0
            key = f"game:{{{game['id']}}}"
            assert int(await redis.hget(key, "version")) == 1
            assert int(await redis.hget(f"{key}:move_ids", "in-flight")) == 1
        finally:
            await redis.aclose()


async def test_the_sdk_reconnects_to_a_restarted_server_and_loses_no_move(
    redis_url: str,
) -> None:
    port = free_port()
    args = ("--redis-url", redis_url, "--secret", SECRET)
    first = ServerProcess(*args, port=port)
    second = ServerProcess(*args, port=port)
    try:
        await first.start()
        async with Client(first.base_url) as client:
            await client.create_player()
            game = await client.new_game("colorado", seed="restart")
            game_id = game["id"]
            acked: list[dict] = []
            async with Connection(first.ws_url, client.token, timeout=30) as connection:
                copy = await connection.subscribe(game_id)
                for _ in range(3):
                    assert copy.legal_moves
                    acked.append(await connection.move(game_id, copy.legal_moves[0]))

                async def restart() -> None:
                    assert await first.stop(signal.SIGTERM) == 0
                    await second.start()

                # A move in flight while the server stops; the next ones after it is back.
                assert copy.legal_moves
                in_flight = asyncio.create_task(connection.move(game_id, copy.legal_moves[0]))
                await asyncio.gather(in_flight, restart())
                acked.append(in_flight.result())
                for _ in range(3):
                    await connection.wait_for(lambda: copy.legal_moves is not None)
                    assert copy.legal_moves
                    acked.append(await connection.move(game_id, copy.legal_moves[0]))
                assert connection.reconnects >= 1

                stored = await client.get_game(game_id)
                assert stored["version"] == len(acked) == 7
                assert [reply["version"] for reply in acked] == list(range(1, 8))
                await connection.wait_for(lambda: copy.version == 7)
                assert copy.view == stored["view"]
            log = await client.log(game_id)
            assert len(log["moves"]) == 7
    finally:
        await first.kill()
        await second.kill()
