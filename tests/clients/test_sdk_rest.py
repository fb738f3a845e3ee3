"""The SDK's REST half: every route, and typed errors from the error bodies."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from sdk_support import (  # noqa: F401
    anonymous_fixture,
    client_fixture,
    proxy_fixture,
    server_url_fixture,
    state_of,
)

from clients.python import ApiError, Client
from server.rules import GAME_NAMES


async def test_games_and_a_casual_game(client: Client, anonymous: Client) -> None:
    games = await client.games()
    assert {game["name"] for game in games} == set(GAME_NAMES)
    assert all(game["title"] and game["decks"] in (1, 2, 4) for game in games)
    snapshot = await client.new_game("balcony", seed="abc")
    game_id = snapshot["id"]
    assert (snapshot["version"], snapshot["status"], snapshot["daily"]) == (0, "playing", None)
    assert snapshot["view"]["base_rank"] == "9" and "deal" in snapshot["legal_moves"]
    assert (await anonymous.get_game(game_id))["legal_moves"] is None
    assert await client.get_game(game_id) == snapshot

    answer = await client.move_rest(game_id, "deal", 0, move_id="m-1")
    assert answer["duplicate"] is False and answer["snapshot"]["version"] == 1
    assert answer["patch"]["ops"] == [
        {
            "op": "move",
            "from": "stock",
            "to": "waste",
            "card": answer["snapshot"]["view"]["waste"][0],
        }
    ]
    again = await client.move_rest(game_id, "deal", 0, move_id="m-1")
    assert again["duplicate"] is True and again["patch"] is None
    assert state_of(again["snapshot"]) == state_of(answer["snapshot"])

    log = await client.log(game_id)
    assert [entry["move"] for entry in log["moves"]] == ["deal"] and log["seed"] is None
    await client.move_rest(game_id, "resign", 1)
    assert (await client.log(game_id))["seed"] == "abc"
    replay = await client.replay(game_id)
    assert replay["game_id"] == game_id and replay["status"] == "resigned"
    assert [entry["move"] for entry in replay["moves"]] == ["deal", "resign"]


@pytest.mark.parametrize(
    ("call", "code", "status"),
    [
        (lambda c, g: c.move_rest(g, "deal", 5), "stale", 409),
        (lambda c, g: c.move_rest(g, "tableau[1]>tableau[2]", 0), "illegal_move", 422),
        (lambda c, g: c.move_rest(g, "nonsense", 0), "malformed_move", 400),
        (lambda c, g: c.get_game("g_nope"), "unknown_game", 404),
        (lambda c, g: c.new_game("solitaire"), "unknown_game_name", 404),
        (lambda c, g: c.new_game("balcony", seed="no spaces"), "invalid_seed", 400),
        (lambda c, g: c.daily("balcony", "2999-01-01"), "not_open", 404),
        (lambda c, g: c.leaderboard("balcony", "2026-01-01", limit=0), "invalid_field", 400),
    ],
)
async def test_typed_errors(client: Client, call: Any, code: str, status: int) -> None:
    game_id = (await client.new_game("balcony", seed="abc"))["id"]
    with pytest.raises(ApiError) as error:
        await call(client, game_id)
    assert (error.value.code, error.value.status) == (code, status)
    assert error.value.message
    if code in ("stale", "illegal_move"):
        assert error.value.details["version"] == 0
    if code == "illegal_move":
        assert error.value.details["reason_code"] == "not_accepted"


async def test_moves_need_the_owner(client: Client, anonymous: Client) -> None:
    game_id = (await client.new_game("balcony", seed="abc"))["id"]
    with pytest.raises(ApiError) as error:
        await anonymous.move_rest(game_id, "deal", 0)
    assert (error.value.code, error.value.status) == ("unauthorized", 401)
    await anonymous.create_player()
    with pytest.raises(ApiError) as error:
        await anonymous.move_rest(game_id, "deal", 0)
    assert (error.value.code, error.value.status) == ("forbidden", 403)


async def test_daily_challenge_and_leaderboard(client: Client) -> None:
    challenge = await client.daily("colorado")
    date = challenge["date"]
    assert challenge["closed"] is False and challenge["seed"] is None
    assert len(challenge["commitment"]) == 64
    assert (await client.daily("colorado", date))["commitment"] == challenge["commitment"]
    attempt = await client.start_daily("colorado")
    assert attempt["daily"] == date and attempt["version"] == 0
    assert (await client.start_daily("colorado"))["id"] == attempt["id"]
    async with client.connection() as connection:
        copy = await connection.subscribe(attempt["id"])
        assert copy.daily == date and copy.role == "owner"
        assert copy.legal_moves
        await connection.move(attempt["id"], copy.legal_moves[0])
        await connection.move(attempt["id"], "resign")
        assert copy.status == "resigned"
    board = await client.leaderboard("colorado", date, limit=10)
    assert board["size"] == 1
    (entry,) = board["entries"]
    assert (entry["rank"], entry["player_id"], entry["moves"]) == (1, client.player_id, 2)
    mine = await client.my_rank("colorado", date)
    assert mine["rank"] == 1 and mine["player_id"] == client.player_id
    tomorrow = datetime.date.fromisoformat(date) + datetime.timedelta(days=1)
    assert (await client.leaderboard("colorado", tomorrow.isoformat(), 5))["size"] == 0


async def test_a_hint_is_a_legal_move_and_marks_the_game_assisted(
    client: Client, anonymous: Client
) -> None:
    game = await client.new_game("colorado", seed="sdk-hint")
    assert game["assisted"] is False
    hint = await client.hint(game["id"])
    assert hint["move"] in game["legal_moves"] and hint["version"] == game["version"]
    assert 0.0 <= hint["win_chance"] <= 1.0 and hint["samples"] >= 1
    assert (await client.get_game(game["id"]))["assisted"] is True
    with pytest.raises(ApiError) as refused:
        await anonymous.hint(game["id"])
    assert refused.value.code == "unauthorized"
