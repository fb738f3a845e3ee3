"""A daily player's account outlives its first token (issue 24): renewed as the SDKs do
(after half the lifetime), it keeps its history, streak and display name past day 30 and
may play ranked at once.  In-process app on a real Redis, clock moved by the test."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.config import Settings
from server.daily import DAY_MS, opens_ms
from server.rules import Game, new_game
from server.testing import TEST_DAILY, UNLIMITED, until_chosen

SECRET = "5d1c9a07e3b84f26a9d0c71e48f3b2a6e90d17c4b5a83f62d0e9c1b7a4f58e23"
DAY = "2026-11-29"
NOON = opens_ms(DAY) + DAY_MS // 2
#: A Colorado deal the greedy player below wins (tests/server/test_players.py).
WON_SEED = "win-11"


def greedy_moves(name: str, seed: str) -> list[str]:
    """A player who takes a foundation move when there is one (wins WON_SEED)."""
    game: Game = new_game(name, seed)
    chooser, moves = random.Random(0), []
    while game.status == "playing" and len(moves) < 3000:
        legal = game.legal_moves()
        home = [move for move in legal if move.endswith("]") and ">foundation" in move]
        moves.append(chooser.choice(home or legal))
        game.play(moves[-1])
    assert game.status == "won"
    return moves


class Client:
    """An in-process server on a clock the test moves."""

    def __init__(self, http: httpx.AsyncClient, app: Any) -> None:
        self.http = http
        self.app = app
        self.now = NOON
        app.state.service.clock = lambda: self.now

    async def request(self, method: str, path: str, token: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"}
        return await until_chosen(
            lambda: self.http.request(method, path, headers=headers, **kwargs), self.app
        )

    async def call(self, method: str, path: str, token: str, **kwargs: Any) -> Any:
        response = await self.request(method, path, token, **kwargs)
        assert response.status_code < 300, response.text
        return response.json()

    async def play(self, token: str, game: dict[str, Any], moves: list[str]) -> dict[str, Any]:
        for version, move in enumerate(moves, start=game["version"]):
            body = {"move": move, "version": version}
            game = (await self.call("POST", f"/v1/games/{game['id']}/moves", token, json=body))[
                "snapshot"
            ]
        return game


@pytest.fixture
async def client(redis_url: str, redis_cluster: bool) -> AsyncIterator[Client]:
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=24 * 3600,
        redis_cluster=redis_cluster,
        limits=UNLIMITED,
        daily=TEST_DAILY,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            yield Client(http, app)


async def test_a_daily_player_renewing_keeps_everything_past_day_30(client: Client) -> None:
    client.now = NOON - 2 * DAY_MS  # the account is two days old on the day it plays
    created = (await client.http.post("/v1/players", json={"name": "Loyal Player"})).json()
    player_id, first_token = created["player_id"], created["token"]

    client.now = NOON
    ranked = await client.call("POST", "/v1/daily/balcony", first_token)
    assert ranked["daily"] == DAY
    await client.play(first_token, ranked, ["resign"])
    client.now += 60_000
    casual = await client.call(
        "POST", "/v1/games", first_token, json={"game": "colorado", "seed": WON_SEED}
    )
    won = await client.play(first_token, casual, greedy_moves("colorado", WON_SEED))
    assert won["status"] == "won"

    client.now = NOON + 15 * DAY_MS + 1  # half the lifetime: the SDKs renew
    renewed = await client.call("POST", "/v1/players/me/token", first_token)
    assert renewed["player_id"] == player_id

    client.now = NOON + 31 * DAY_MS  # 31 days after the ranked game
    stale = await client.request("GET", "/v1/players/me", first_token)
    assert stale.status_code == 401 and stale.json()["error"]["code"] == "unauthorized"
    latest = await client.call("POST", "/v1/players/me/token", renewed["token"])
    token = latest["token"]
    assert latest["player_id"] == player_id and latest["name"] == "Loyal Player"
    assert latest["expires_at"] == client.now // 1000 * 1000 + 30 * DAY_MS

    me = await client.call("GET", "/v1/players/me", token)
    assert (me["player_id"], me["name"]) == (player_id, "Loyal Player")
    assert me["created_at"] == NOON - 2 * DAY_MS
    history = await client.call("GET", "/v1/players/me/games", token)
    assert [game["id"] for game in history["games"]] == [casual["id"], ranked["id"]]
    stats = (await client.call("GET", "/v1/players/me/stats", token))["games"]
    assert stats["colorado"]["current_streak"] == 1 and stats["colorado"]["won"] == 1
    assert stats["balcony"]["played"] == 1
    # Ranked at once: the account is 33 days old, not a new one waiting a day.
    today = await client.call("POST", "/v1/daily/balcony", token)
    assert today["daily"] != DAY and today["id"] != ranked["id"]
