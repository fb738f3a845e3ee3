"""The SDK's player routes, undo and verdicts against a real server."""

from __future__ import annotations

import pytest
from sdk_support import (  # noqa: F401
    WAIT,
    anonymous_fixture,
    assert_in_step,
    client_fixture,
    server_url_fixture,
)

from clients.python import ApiError, Client, MoveRejected


async def test_names_history_and_stats(client: Client, server_url: str) -> None:
    assert (await client.me())["name"] is None
    assert (await client.set_name("Sdk Player"))["name"] == "Sdk Player"
    async with Client(server_url, timeout=WAIT) as other:
        with pytest.raises(ApiError) as taken:
            await other.create_player(name="sdk player")
        assert taken.value.code == "name_taken" and taken.value.status == 409
        assert (await other.create_player(name="Sdk Other"))["name"] == "Sdk Other"
    first = await client.new_game("colorado", seed="sdk-history")
    second = await client.new_game("balcony", seed="sdk-history")
    await client.move_rest(first["id"], "resign", 0)
    page = await client.my_games(limit=1)
    assert [game["id"] for game in page["games"]] == [second["id"]] and page["next"]
    rest = await client.my_games(cursor=page["next"])
    assert [game["status"] for game in rest["games"]] == ["resigned"] and rest["next"] is None
    stats = (await client.my_stats())["games"]
    assert stats["colorado"]["played"] == 1 and stats["colorado"]["won"] == 0
    assert stats["balcony"]["played"] == 0
    verdict = await client.verdict(first["id"])
    assert verdict["integrity"] == "pass" and verdict["game_id"] == first["id"]


async def test_undo_over_rest_and_the_websocket(client: Client) -> None:
    snapshot = await client.new_game("empress_of_italy", seed="sdk-undo")
    game_id = snapshot["id"]
    answer = await client.move_rest(game_id, "deal", 0)
    undone = await client.undo(game_id, answer["version"])
    assert undone["snapshot"]["view"] == snapshot["view"] and undone["version"] == 2
    async with client.connection() as connection:
        copy = await connection.subscribe(game_id)
        await connection.move(game_id, "deal")
        await connection.move(game_id, "undo")
        assert copy.view == snapshot["view"] and copy.version == 4
        await assert_in_step(copy, client)
        with pytest.raises(MoveRejected) as nothing:
            await connection.move(game_id, "undo")
        assert nothing.value.code == "illegal_move"
        assert nothing.value.details["reason_code"] == "nothing_to_undo"
    ranked = await client.start_daily("balcony")
    with pytest.raises(ApiError) as refused:
        await client.undo(ranked["id"], 0)
    assert refused.value.code == "undo_ranked" and refused.value.status == 403
