"""The SDK survives a dropped socket: it reconnects, resyncs every copy from its version,
and re-sends the moves still waiting for a reply with the same move id (applied once)."""

from __future__ import annotations

import asyncio
import random

import pytest
from sdk_support import (  # noqa: F401
    WAIT,
    Proxy,
    anonymous_fixture,
    assert_in_step,
    client_fixture,
    eventually,
    proxy_fixture,
    server_url_fixture,
)

from clients.python import ApiError, Client, Connection, Update
from server.rules import new_game


async def rest_moves(client: Client, game_id: str, count: int) -> int:
    """Play ``count`` moves over REST (the first legal one each time); the new version."""
    snapshot = await client.get_game(game_id)
    for _ in range(count):
        answer = await client.move_rest(game_id, snapshot["legal_moves"][0], snapshot["version"])
        snapshot = answer["snapshot"]
    return int(snapshot["version"])


async def test_resync_after_the_transport_is_closed(client: Client) -> None:
    game_id = (await client.new_game("empress_of_italy", seed="reconnect"))["id"]
    async with client.connection() as connection:
        copy = await connection.subscribe(game_id)
        for _ in range(3):
            assert copy.legal_moves
            await connection.move(game_id, copy.legal_moves[0])
        socket = connection.websocket
        assert socket is not None
        socket.transport.abort()  # the network goes away under the client
        version = await rest_moves(client, game_id, 4)
        await connection.wait_for(lambda: copy.version == version and copy.legal_moves is not None)
        assert connection.reconnects >= 1 and connection.websocket is not socket
        await assert_in_step(copy, client)
        assert copy.legal_moves
        await connection.move(game_id, copy.legal_moves[0])
        await assert_in_step(copy, client)


async def test_resync_with_the_missed_patches_after_an_outage(
    client: Client, anonymous: Client, proxy: Proxy
) -> None:
    """While the server cannot be reached, moves are made over REST; after reconnecting,
    the owner's and a spectator's copies get exactly the missed patches."""
    game_id = (await client.new_game("colorado", seed="outage"))["id"]
    updates: list[Update] = []
    async with (
        Connection(proxy.url(), client.token, timeout=WAIT, on_update=updates.append) as owner,
        Connection(proxy.url(), timeout=WAIT) as spectator,
    ):
        copy = await owner.subscribe(game_id)
        watched = await spectator.subscribe(game_id)
        assert copy.legal_moves
        await owner.move(game_id, copy.legal_moves[0])
        await spectator.wait_for(lambda: watched.version == 1)
        proxy.refuse = True
        proxy.kill()
        await owner.wait_for(lambda: not owner.connected)
        await spectator.wait_for(lambda: not spectator.connected)
        version = await rest_moves(client, game_id, 5)
        assert not owner.connected and copy.version == 1
        updates.clear()
        proxy.refuse = False
        await owner.wait_for(lambda: copy.version == version and copy.legal_moves is not None)
        await spectator.wait_for(lambda: watched.version == version)
        await assert_in_step(copy, client)
        await assert_in_step(watched, anonymous)
        kinds = [
            (u.kind, u.message["v"] if u.kind == "patch" and u.message else None) for u in updates
        ]
        assert ("connected", None) in kinds and ("snapshot", None) not in kinds
        assert [to for kind, to in kinds if kind == "patch"] == list(range(2, version + 1))


async def test_a_move_whose_reply_was_lost_is_applied_once(client: Client, proxy: Proxy) -> None:
    game_id = (await client.new_game("balcony", seed="abc"))["id"]
    async with Connection(proxy.url(), client.token, timeout=WAIT) as connection:
        copy = await connection.subscribe(game_id)
        await connection.move(game_id, "deal")
        await connection.move(game_id, "deal")
        proxy.swallow = True  # the server still gets our frames; its answers get lost
        assert copy.legal_moves
        move = copy.legal_moves[0]
        task = asyncio.create_task(connection.move(game_id, move))

        async def applied() -> bool:
            return (await client.get_game(game_id))["version"] == 3

        await eventually(applied, "the move to be applied on the server")
        assert not task.done()
        proxy.swallow = False
        proxy.kill()
        reply = await asyncio.wait_for(task, WAIT)
        assert reply["type"] == "accepted" and reply["duplicate"] is True
        assert reply["version"] == reply["applied_version"] == 3
        assert connection.reconnects >= 1
        log = await client.log(game_id)
        assert [entry["move"] for entry in log["moves"]] == ["deal", "deal", move]
        await assert_in_step(copy, client)


async def test_a_move_made_while_disconnected_is_sent_after_reconnecting(
    client: Client, proxy: Proxy
) -> None:
    game_id = (await client.new_game("matrimony", seed="abc"))["id"]
    async with Connection(proxy.url(), client.token, timeout=WAIT) as connection:
        copy = await connection.subscribe(game_id)
        proxy.refuse = True
        proxy.kill()
        await connection.wait_for(lambda: not connection.connected)
        task = asyncio.create_task(connection.move(game_id, "deal"))
        await asyncio.sleep(0.05)
        assert not task.done()
        proxy.refuse = False
        reply = await asyncio.wait_for(task, WAIT)
        assert reply["type"] == "accepted" and not reply["duplicate"] and reply["version"] == 1
        assert len((await client.log(game_id))["moves"]) == 1
        await assert_in_step(copy, client)


def long_playout(moves: int) -> tuple[str, list[str]]:
    """A Gloucestershire seed and ``moves`` legal moves from it (cards go to and fro)."""
    for n in range(100):
        seed = f"long-{n}"
        game = new_game("gloucestershire", seed)
        rng = random.Random(seed)
        played: list[str] = []
        while game.status == "playing" and len(played) < moves:
            move = rng.choice(game.legal_moves())
            game.play(move)
            played.append(move)
        if len(played) == moves and game.status == "playing":
            return seed, played
    raise AssertionError("no long enough playout")


async def test_a_gap_older_than_the_server_keeps_resyncs_from_a_snapshot(
    client: Client, proxy: Proxy
) -> None:
    seed, moves = long_playout(210)  # the server keeps the last 200 patches
    game_id = (await client.new_game("gloucestershire", seed=seed))["id"]
    updates: list[Update] = []
    async with Connection(
        proxy.url(), client.token, timeout=WAIT, on_update=updates.append
    ) as connection:
        copy = await connection.subscribe(game_id)
        proxy.refuse = True
        proxy.kill()
        await connection.wait_for(lambda: not connection.connected)
        for version, move in enumerate(moves):
            await client.move_rest(game_id, move, version)
        updates.clear()
        proxy.refuse = False
        await connection.wait_for(lambda: copy.version == len(moves), timeout=WAIT * 2)
        assert [u.kind for u in updates if u.game_id == game_id] == ["snapshot"]
        await assert_in_step(copy, client)


async def test_a_copy_out_of_step_is_fetched_again(client: Client) -> None:
    game_id = (await client.new_game("balcony", seed="abc"))["id"]
    async with client.connection() as connection:
        copy = await connection.subscribe(game_id)
        assert copy.view is not None and copy.legal_moves is not None
        move = next(m for m in copy.legal_moves if m.startswith("tableau[0]>"))
        copy.view["tableau"][0][-1] = "KS"  # a bug made the copy wrong
        await client.move_rest(game_id, move, 0)
        await connection.wait_for(lambda: copy.version == 1)
        await assert_in_step(copy, client)


async def test_a_bad_token_is_refused_at_once(client: Client) -> None:
    connection = Connection(client.ws_url, "v1.nobody.forged", timeout=WAIT)
    with pytest.raises(ApiError) as refused:
        await connection.open()
    assert refused.value.code == "unauthorized"
