"""The SDK plays each of the five games over the WebSocket; its copy, and a spectator's,
stay equal to the server's snapshot after every move."""

from __future__ import annotations

import asyncio
import random

import pytest
from sdk_support import (  # noqa: F401
    WAIT,
    anonymous_fixture,
    assert_in_step,
    choose,
    client_fixture,
    proxy_fixture,
    server_url_fixture,
    state_of,
)

from clients.python import ApiError, Client, Connection, GameCopy, MoveRejected, Update
from server.rules import GAME_NAMES

MAX_MOVES = 100


@pytest.mark.parametrize("game", GAME_NAMES)
async def test_play_a_game_of_each(client: Client, anonymous: Client, game: str) -> None:
    created = await client.new_game(game, seed=f"sdk-{game}")
    game_id = created["id"]
    spectator_updates: list[Update] = []
    async with (
        client.connection() as owner,
        Connection(client.ws_url, timeout=WAIT, on_update=spectator_updates.append) as spectator,
    ):
        copy = await owner.subscribe(game_id)
        watched = await spectator.subscribe(game_id)
        assert (copy.role, watched.role) == ("owner", "spectator")
        assert copy.state() == state_of(created)
        assert watched.legal_moves is None
        rng = random.Random(game)
        moves = 0
        while copy.status == "playing" and moves < MAX_MOVES:
            assert copy.legal_moves, copy
            move = choose(rng, game, copy.legal_moves)
            reply = await owner.move(game_id, move)
            moves += 1
            assert reply["type"] == "accepted" and reply["version"] == moves
            assert not reply["duplicate"]
            await assert_in_step(copy, client)
            await spectator.wait_for(lambda: watched.version == copy.version)
            await assert_in_step(watched, anonymous)
        if copy.status == "playing":
            await owner.move(game_id, "resign")
            moves += 1
            await spectator.wait_for(lambda: watched.version == copy.version)
        assert copy.status != "playing" and copy.legal_moves == []
        await assert_in_step(copy, client)
        await assert_in_step(watched, anonymous)
        with pytest.raises(MoveRejected) as rejected:
            await owner.move(game_id, "resign")
        assert rejected.value.code == "game_over" and rejected.value.version == moves
    patches = [u for u in spectator_updates if u.kind == "patch" and u.game_id == game_id]
    assert [u.message["v"] for u in patches if u.message] == list(range(1, moves + 1))
    log = await client.log(game_id)
    assert len(log["moves"]) == moves and log["version"] == moves


async def test_spectator_cannot_move(client: Client) -> None:
    created = await client.new_game("balcony", seed="abc")
    async with Connection(client.ws_url, timeout=WAIT) as spectator:
        copy = await spectator.subscribe(created["id"])
        with pytest.raises(MoveRejected) as rejected:
            await spectator.move(created["id"], "deal")
        assert rejected.value.code == "not_authenticated"
        assert copy.version == 0
    other = Client(client.base_url, timeout=WAIT)
    async with other:
        await other.create_player()
        async with other.connection() as stranger:
            copy = await stranger.subscribe(created["id"])
            assert copy.role == "spectator"
            with pytest.raises(MoveRejected) as rejected:
                await stranger.move(created["id"], "deal")
            assert rejected.value.code == "forbidden"


async def test_rejections_and_errors(client: Client) -> None:
    created = await client.new_game("balcony", seed="abc")
    game_id = created["id"]
    async with client.connection() as connection:
        copy = await connection.subscribe(game_id)
        await connection.move(game_id, "deal")
        with pytest.raises(MoveRejected) as stale:
            await connection.move(game_id, "deal", version=0)
        assert (stale.value.code, stale.value.version) == ("stale", 1)
        with pytest.raises(MoveRejected) as illegal:
            await connection.move(game_id, "tableau[1]>tableau[2]")
        assert illegal.value.code == "illegal_move" and illegal.value.version == 1
        assert illegal.value.details["reason_code"] == "not_accepted"
        assert "tableau" in illegal.value.message
        with pytest.raises(MoveRejected) as malformed:
            await connection.move(game_id, "fly me to the moon")
        assert malformed.value.code == "malformed_move"
        assert copy.version == 1
        await assert_in_step(copy, client)
        pong = await connection.ping()
        assert pong["type"] == "pong" and isinstance(pong["server_time"], int)
        with pytest.raises(ApiError) as unknown:
            await connection.subscribe("g_nope")
        assert unknown.value.code == "unknown_game"
        assert "g_nope" not in connection.copies
        # The connection still works after the error.
        await connection.move(game_id, "deal")
        assert copy.version == 2


async def test_owner_learns_legal_moves_of_moves_made_elsewhere(client: Client) -> None:
    """A move made over REST reaches the owner's socket as a patch with no legal moves; the
    SDK re-subscribes with its version to learn them."""
    created = await client.new_game("colorado", seed="abc")
    game_id = created["id"]
    async with client.connection() as connection:
        copy = await connection.subscribe(game_id)
        for version in range(3):
            legal = (await client.get_game(game_id))["legal_moves"]
            await client.move_rest(game_id, legal[0], version)
            await connection.wait_for(
                lambda v=version: copy.version == v + 1 and copy.legal_moves is not None
            )
            await assert_in_step(copy, client)


async def test_updates_iterator(client: Client) -> None:
    created = await client.new_game("matrimony", seed="abc")
    game_id = created["id"]
    async with client.connection() as connection:
        copy: GameCopy = await connection.subscribe(game_id)
        seen: list[str] = []

        async def collect() -> None:
            async for update in connection.updates():
                if update.kind == "patch":
                    seen.append(update.message["m"] if update.message else "")
                    if len(seen) == 2:
                        return

        collector = asyncio.create_task(collect())
        await asyncio.sleep(0)
        await connection.move(game_id, "deal")
        await connection.move(game_id, "deal")
        await asyncio.wait_for(collector, WAIT)
        assert seen == ["deal", "deal"]
        assert copy.view is not None and copy.view["stock"]["count"] == 86 - 32
