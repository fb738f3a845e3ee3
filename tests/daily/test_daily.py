"""Daily challenges and leaderboards, through the REST API, on a real Redis."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.config import Settings
from server.daily import DAY_MS, candidate_seed, commitment, opens_ms
from server.leaderboard import Entry, Leaderboards
from server.redisconn import connect
from server.rules import new_game
from server.testing import TEST_DAILY, UNLIMITED, until_chosen

SECRET = "cee5441920a2ff0b1856147aef37330a7b4d1d0a02b01c259ca4b2affb729b1b"
DAY = "2026-11-29"
NOON = opens_ms(DAY) + DAY_MS // 2


class Api:
    """An in-process server with a clock the test moves, and every body it sent."""

    def __init__(self, client: httpx.AsyncClient, app: Any) -> None:
        self.client = client
        self.app = app
        self.bodies: list[str] = []
        self.now = NOON
        app.state.service.clock = lambda: self.now

    async def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = await until_chosen(
            lambda: self.client.request(method, path, headers=headers, **kwargs), self.app
        )
        self.bodies.append(response.text)
        assert response.status_code < 300, response.text
        return response.json()

    async def player(self) -> str:
        return str((await self.call("POST", "/v1/players"))["token"])


@pytest.fixture
async def api(redis_url: str, redis_cluster: bool) -> AsyncIterator[Api]:
    app = create_app(
        Settings(
            redis_url=redis_url,
            redis_cluster=redis_cluster,
            secret=SECRET,
            ranked_min_account_age=0,
            limits=UNLIMITED,
            daily=TEST_DAILY,
        )
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield Api(client, app)


async def test_todays_challenge_publishes_a_commitment_and_no_seed(api: Api) -> None:
    challenge = await api.call("GET", "/v1/daily/colorado")
    assert challenge["date"] == DAY
    assert challenge["seed"] is None and challenge["closed"] is False
    assert challenge["opens"] == opens_ms(DAY)
    assert challenge["closes"] == opens_ms(DAY) + DAY_MS
    assert challenge["seconds_to_next"] == DAY_MS // 2 // 1000
    assert len(challenge["commitment"]) == 64


async def test_a_future_day_is_not_open(api: Api) -> None:
    response = await api.client.get("/v1/daily/colorado/2026-11-30")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_open"


async def test_a_bad_date_or_game_is_refused(api: Api) -> None:
    bad_date = await api.client.get("/v1/daily/colorado/2026-13-01")
    assert bad_date.json()["error"]["code"] == "invalid_field"
    bad_game = await api.client.get("/v1/daily/klondike")
    assert bad_game.json()["error"]["code"] == "unknown_game_name"


async def test_the_seed_stays_secret_until_the_day_closes_then_matches_its_commitment(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = await api.player()
    promised = (await api.call("GET", "/v1/daily/balcony"))["commitment"]
    game = await api.call("POST", "/v1/daily/balcony", token)
    game_id = game["id"]
    version = 0
    for _ in range(5):
        snapshot = await api.call("GET", f"/v1/games/{game_id}", token)
        move = snapshot["legal_moves"][0]
        await api.call(
            "POST", f"/v1/games/{game_id}/moves", token, json={"move": move, "version": version}
        )
        version += 1
    await api.call(
        "POST", f"/v1/games/{game_id}/moves", token, json={"move": "resign", "version": version}
    )
    log = await api.call("GET", f"/v1/games/{game_id}/log", token)
    replay = await api.call("GET", f"/v1/games/{game_id}/replay", token)
    assert log["seed"] is None and replay["seed"] is None
    await api.call("GET", f"/v1/leaderboards/balcony/{DAY}")
    await api.call("GET", f"/v1/leaderboards/balcony/{DAY}/me", token)

    api.now = opens_ms(DAY) + DAY_MS  # the day closes
    revealed = await api.call("GET", f"/v1/daily/balcony/{DAY}")
    seed = revealed["seed"]
    assert seed and revealed["closed"] is True and revealed["commitment"] == promised
    assert hashlib.sha256(f"balcony:{DAY}:{seed}".encode()).hexdigest() == promised
    assert commitment("balcony", DAY, seed) == promised
    assert new_game("balcony", seed).view() == game["view"]
    everything_said_before_close = api.bodies[:-1]
    assert not any(seed in body for body in everything_said_before_close)
    assert seed not in caplog.text
    assert (await api.call("GET", f"/v1/games/{game_id}/replay"))["seed"] == seed
    assert (await api.call("GET", f"/v1/games/{game_id}/log"))["seed"] == seed


async def test_a_player_has_one_ranked_attempt_per_challenge(api: Api) -> None:
    token = await api.player()
    first = await api.call("POST", "/v1/daily/gloucestershire", token)
    again = await api.call("POST", "/v1/daily/gloucestershire", token)
    assert first["id"] == again["id"] and first["daily"] == DAY
    other_game = await api.call("POST", "/v1/daily/matrimony", token)
    assert other_game["id"] != first["id"]


async def test_racing_starts_of_one_players_attempt_give_one_game(api: Api) -> None:
    token = await api.player()
    snapshots = await asyncio.gather(
        *(api.call("POST", "/v1/daily/empress_of_italy", token) for _ in range(6))
    )
    assert len({snapshot["id"] for snapshot in snapshots}) == 1


async def test_every_player_gets_the_same_daily_deal(api: Api) -> None:
    views = [
        (await api.call("POST", "/v1/daily/colorado", await api.player()))["view"] for _ in range(3)
    ]
    assert views[0] == views[1] == views[2]


async def test_a_ranked_attempt_is_on_the_leaderboard_from_its_start_to_its_end(
    api: Api,
) -> None:
    token = await api.player()
    game = await api.call("POST", "/v1/daily/balcony", token)
    [entry] = (await api.call("GET", f"/v1/leaderboards/balcony/{DAY}", token))["entries"]
    assert entry["status"] == "playing" and entry["finished_at"] is None
    assert entry["score"] == 1 and entry["moves"] == 0 and entry["game_id"] == game["id"]
    api.now += 65_000
    await api.call(
        "POST", f"/v1/games/{game['id']}/moves", token, json={"move": "resign", "version": 0}
    )
    board = await api.call("GET", f"/v1/leaderboards/balcony/{DAY}", token)
    assert board["size"] == 1
    [entry] = board["entries"]
    assert entry["rank"] == 1 and entry["game_id"] == game["id"]
    assert entry["status"] == "resigned"
    assert entry["score"] == 1 and entry["won"] is False and entry["moves"] == 1
    assert entry["elapsed_ms"] == 65_000
    assert entry["replay"] == f"/v1/games/{game['id']}/replay"
    assert (await api.call("POST", "/v1/daily/balcony", token))["status"] == "resigned"


async def test_casual_games_never_enter_a_leaderboard(api: Api) -> None:
    token = await api.player()
    game = await api.call("POST", "/v1/games", token, json={"game": "balcony"})
    await api.call(
        "POST", f"/v1/games/{game['id']}/moves", token, json={"move": "resign", "version": 0}
    )
    assert (await api.call("GET", f"/v1/leaderboards/balcony/{DAY}"))["size"] == 0


def entry(player: str, score: int, won: bool, moves: int, elapsed: int, finished: int) -> Entry:
    return Entry(player, f"g_{player}", score, won, moves, elapsed, finished)


async def test_ties_break_by_win_then_moves_then_time_then_finish(
    api: Api, redis_url: str, redis_cluster: bool
) -> None:
    ranked_best_first = [
        entry("a", 52, True, 90, 500_000, 1000),
        entry("b", 51, True, 80, 100_000, 900),  # a win, but fewer cards
        entry("c", 50, True, 70, 100_000, 900),
        entry("d", 50, False, 10, 1_000, 100),  # as many cards, not a win
        entry("e", 40, False, 100, 9_000, 500),
        entry("f", 40, False, 100, 9_000, 600),  # same but finished later
        entry("g", 40, False, 100, 9_500, 100),  # slower
        entry("h", 40, False, 101, 1, 1),  # more moves
        entry("i", 3, False, 1, 1, 1),
    ]
    redis = connect(redis_url, redis_cluster)
    boards = Leaderboards(redis)
    for item in reversed(ranked_best_first):
        assert await boards.record("colorado", DAY, item, 3600)
    assert not await boards.record("colorado", DAY, ranked_best_first[0], 3600)
    await redis.aclose()

    board = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}?limit=100")
    assert [e["player_id"] for e in board["entries"]] == list("abcdefghi")
    assert [e["rank"] for e in board["entries"]] == list(range(1, 10))
    top = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}?limit=3")
    assert [e["player_id"] for e in top["entries"]] == list("abc")


async def test_my_rank_shows_the_entries_around_me(
    api: Api, redis_url: str, redis_cluster: bool
) -> None:
    token = await api.player()
    game = await api.call("POST", "/v1/daily/colorado", token)
    me = json.loads(api.bodies[0])["player_id"]
    redis = connect(redis_url, redis_cluster)
    boards = Leaderboards(redis)
    for score in range(10):
        await boards.record("colorado", DAY, entry(f"x{score}", score + 1, False, 5, 5, 5), 3600)
    await redis.aclose()
    playing = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}/me?radius=0", token)
    assert playing["rank"] == 11 and playing["entries"][0]["status"] == "playing"
    nobody = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}/me", await api.player())
    assert nobody["rank"] is None and nobody["entries"] == []
    await api.call(
        "POST", f"/v1/games/{game['id']}/moves", token, json={"move": "resign", "version": 0}
    )
    mine = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}/me?radius=2", token)
    assert mine["rank"] == 11  # score 0 comes after scores 1..10
    assert [e["rank"] for e in mine["entries"]] == [9, 10, 11]
    assert mine["entries"][-1]["player_id"] == me
    too_wide = await api.client.get(
        f"/v1/leaderboards/colorado/{DAY}/me?radius=500",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert too_wide.json()["error"]["code"] == "invalid_field"


async def test_leaderboard_members_sort_as_documented() -> None:
    member = entry("p_abc", 104, True, 231, 412_345, 1795980902792).member()
    assert member == "895.0.00000231.000000412345.1795980902792.p_abc"


async def test_the_daily_is_never_a_deal_stuck_before_any_move(api: Api) -> None:
    # With this secret the first Gloucestershire candidate of 2027-01-29 has no legal
    # move at all (about 1 deal in 20 has none): the selection passes over it.
    stuck_day = "2027-01-29"
    first = new_game(
        "gloucestershire", candidate_seed(SECRET.encode(), "gloucestershire", stuck_day, 0)
    )
    assert first.status == "stuck" and first.legal_moves() == []
    api.now = opens_ms(stuck_day) + DAY_MS // 2
    token = await api.player()
    game = await api.call("POST", "/v1/daily/gloucestershire", token)
    assert game["status"] == "playing" and game["legal_moves"]
    challenge = await api.call("GET", "/v1/daily/gloucestershire")
    api.now += DAY_MS  # after the close: the chosen candidate is told
    revealed = await api.call("GET", f"/v1/daily/gloucestershire/{stuck_day}")
    assert revealed["candidate"] >= 1 and revealed["commitment"] == challenge["commitment"]
    dealt = new_game("gloucestershire", revealed["seed"])
    assert dealt.view() == game["view"] and dealt.legal_moves()
