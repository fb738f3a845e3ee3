"""Daily challenges that stay fair (issue 8): the close ends play, ranked play needs an
account of some age, closed days are practised unranked, and every ranked attempt leaves
a per-day keyed trace of its client.  In-process app on a real Redis, clock moved by the
test (``service.clock``)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from server import keys
from server.app import create_app
from server.audit import audit_leaderboard
from server.config import Settings
from server.daily import DAY_MS, closes_ms, opens_ms
from server.leaderboard import board_keys
from server.redisconn import connect
from server.rules import new_game
from server.store import attempts_key, game_key
from server.testing import TEST_DAILY, dailies_chosen, until_chosen

SECRET = "bf4ead77a4cc6c2190e28ace42fb5ae62a080e83d8575d1a02cf40cd8f50d376"
DAY = "2026-11-29"
NEXT_DAY = "2026-11-30"
NOON = opens_ms(DAY) + DAY_MS // 2
MINUTE = 60_000


class Api:
    """An in-process server on a clock the test moves."""

    def __init__(self, client: httpx.AsyncClient, app: Any) -> None:
        self.client = client
        self.app = app
        self.now = NOON
        app.state.service.clock = lambda: self.now

    async def request(
        self, method: str, path: str, token: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        headers = kwargs.pop("headers", {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return await until_chosen(
            lambda: self.client.request(method, path, headers=headers, **kwargs), self.app
        )

    async def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        response = await self.request(method, path, token, **kwargs)
        assert response.status_code < 300, response.text
        return response.json()

    async def error(
        self, status: int, method: str, path: str, token: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        response = await self.request(method, path, token, **kwargs)
        assert response.status_code == status, response.text
        body: dict[str, Any] = response.json()["error"]
        return body

    async def player(self) -> tuple[str, str]:
        body = await self.call("POST", "/v1/players")
        return body["player_id"], body["token"]

    async def move(self, token: str, game_id: str, move: str, version: int) -> Any:
        body = {"move": move, "version": version}
        return await self.call("POST", f"/v1/games/{game_id}/moves", token, json=body)


@pytest.fixture
def min_age() -> int:
    return 0


@pytest.fixture
async def api(redis_url: str, redis_cluster: bool, min_age: int) -> AsyncIterator[Api]:
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=min_age,
        redis_cluster=redis_cluster,
        daily=TEST_DAILY,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield Api(client, app)


@pytest.fixture
async def redis(redis_url: str, redis_cluster: bool) -> AsyncIterator[Redis]:
    client = connect(redis_url, redis_cluster)
    try:
        yield client
    finally:
        await client.aclose()


# -- the close ends play (finding 2) ---------------------------------------------------------


async def test_an_attempt_started_at_2359_takes_no_move_after_the_close(
    api: Api, redis: Redis
) -> None:
    """The issue's case: started at 23:59 UTC, moves refused from 00:01 on (REST; the
    WebSocket case is in tests/server/test_daily_fair.py), ranked as it stood."""
    api.now = closes_ms(DAY) - MINUTE  # 23:59
    _, token = await api.player()
    game = await api.call("POST", "/v1/daily/balcony", token)
    assert game["daily"] == DAY
    version = 0
    for _ in range(3):
        api.now += 5_000
        move = next(m for m in game["legal_moves"] if m != "resign")
        sent = {"move": move, "version": version, "move_id": f"m{version}"}
        game = (await api.call("POST", f"/v1/games/{game['id']}/moves", token, json=sent))[
            "snapshot"
        ]
        version += 1
    score = game["score"]

    api.now = closes_ms(DAY) + MINUTE  # 00:01 the next day
    error = await api.error(
        409,
        "POST",
        f"/v1/games/{game['id']}/moves",
        token,
        json={"move": game["legal_moves"][0], "version": version},
    )
    assert error["code"] == "daily_closed" and error["closes"] == closes_ms(DAY)
    resign = {"move": "resign", "version": version}
    error = await api.error(409, "POST", f"/v1/games/{game['id']}/moves", token, json=resign)
    assert error["code"] == "daily_closed"
    assert int(await redis.hget(game_key(game["id"]), "version")) == version
    # Its owner is offered no move any more.
    closed = await api.call("GET", f"/v1/games/{game['id']}", token)
    assert closed["status"] == "playing" and closed["legal_moves"] == []
    # A move sent before the close and re-sent after it (its answer was lost) is told so.
    sent["version"] = version - 1
    again = await api.call("POST", f"/v1/games/{game['id']}/moves", token, json=sent)
    assert again["duplicate"] is True and again["applied_version"] == version

    board = await api.call("GET", f"/v1/leaderboards/balcony/{DAY}")
    [entry] = board["entries"]
    assert entry["status"] == "closed" and entry["score"] == score
    assert entry["game_id"] == game["id"]  # the day closed: everything is public now
    # Today's start is a new attempt at the new day's challenge.
    today = await api.call("POST", "/v1/daily/balcony", token)
    assert today["daily"] == NEXT_DAY and today["id"] != game["id"]


async def test_unfinished_attempts_rank_by_their_score_among_the_ended(api: Api) -> None:
    """DAILY.md: one order for every entry; an attempt still on (or cut off by the
    close) ranks by the cards it has up, like one that ended."""
    scouts_token = (await api.player())[1]
    scout = await api.call("POST", "/v1/daily/colorado", scouts_token)
    player_id, token = await api.player()
    game = await api.call("POST", "/v1/daily/colorado", token)
    version = 0
    while game["score"] == scout["score"]:
        api.now += 1_000
        move = next(m for m in game["legal_moves"] if ">foundation" in m or m.startswith("stock"))
        game = (await api.move(token, game["id"], move, version))["snapshot"]
        version += 1
    await api.move(scouts_token, scout["id"], "resign", 0)

    board = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}")
    assert [(e["status"], e["score"]) for e in board["entries"]] == [
        ("playing", game["score"]),
        ("resigned", scout["score"]),
    ]
    assert board["entries"][0]["player_id"] == player_id
    assert board["entries"][0]["finished_at"] is None
    # While the day is open nobody else gets a link to either game.
    assert all(e["game_id"] is None and e["replay"] is None for e in board["entries"])
    mine = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}/me?radius=1", token)
    assert mine["rank"] == 1 and mine["entries"][0]["game_id"] == game["id"]
    assert mine["entries"][1]["game_id"] is None

    api.now = closes_ms(DAY)
    board = await api.call("GET", f"/v1/leaderboards/colorado/{DAY}")
    assert [e["status"] for e in board["entries"]] == ["closed", "resigned"]
    assert [e["game_id"] for e in board["entries"]] == [game["id"], scout["id"]]


# -- account age and practice (finding 3) ----------------------------------------------------


@pytest.mark.parametrize("min_age", [3600])
async def test_a_young_account_waits_for_ranked_play_but_may_practise_closed_days(
    api: Api, redis: Redis
) -> None:
    player_id, token = await api.player()
    created = api.now
    error = await api.error(403, "POST", "/v1/daily/matrimony", token)
    assert error["code"] == "account_too_new"
    assert error["eligible_at"] == created + 3600 * 1000
    assert await redis.hlen(attempts_key("matrimony", DAY)) == 0

    # Practice: yesterday's challenge (chosen then), casual and unranked.
    yesterday = "2026-11-28"
    await dailies_chosen(api.app, yesterday)
    practice = await api.call(
        "POST", "/v1/games", token, json={"game": "matrimony", "daily": yesterday}
    )
    assert practice["daily"] is None
    seed = await api.app.state.service.chosen_daily_seed("matrimony", yesterday)
    dealt = new_game("matrimony", seed)
    assert practice["view"] == dealt.view()
    await api.move(token, practice["id"], "resign", 0)
    assert (await api.call("GET", f"/v1/leaderboards/matrimony/{yesterday}"))["size"] == 0
    # Not today's (open) challenge, not a future one, not with a seed as well.
    for body, status, code in [
        ({"game": "matrimony", "daily": DAY}, 403, "daily_open"),
        ({"game": "matrimony", "daily": NEXT_DAY}, 404, "not_open"),
        ({"game": "matrimony", "daily": "2026-2-3"}, 400, "invalid_field"),
        ({"game": "matrimony", "daily": yesterday, "seed": "x"}, 400, "invalid_field"),
    ]:
        error = await api.error(status, "POST", "/v1/games", token, json=body)
        assert error["code"] == code, (body, error)
        if code == "invalid_field":
            assert error["field"] == ("seed" if "seed" in body else "daily"), error

    api.now = created + 3600 * 1000 - 1
    assert (await api.error(403, "POST", "/v1/daily/matrimony", token))["code"] == (
        "account_too_new"
    )
    api.now += 1
    ranked = await api.call("POST", "/v1/daily/matrimony", token)
    assert ranked["daily"] == DAY
    assert await redis.hget(attempts_key("matrimony", DAY), player_id) == ranked["id"].encode()


@pytest.mark.parametrize("min_age", [86400])
async def test_a_player_with_no_record_counts_as_new(api: Api, redis: Redis) -> None:
    player_id, token = await api.player()
    api.now += 2 * DAY_MS
    await redis.delete(f"player:{{{player_id}}}")  # records may expire
    error = await api.error(403, "POST", "/v1/daily/balcony", token)
    assert error["code"] == "account_too_new"
    assert error["eligible_at"] == api.now + 86400 * 1000


async def test_with_the_rule_off_a_new_account_plays_ranked_at_once(api: Api) -> None:
    _, token = await api.player()
    assert (await api.call("POST", "/v1/daily/balcony", token))["daily"] == DAY


def test_the_minimum_account_age_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKED_MIN_ACCOUNT_AGE", raising=False)
    assert Settings.from_arguments([]).ranked_min_account_age == 86400
    assert Settings.from_arguments(["--ranked-min-account-age", "0"]).ranked_min_account_age == 0
    monkeypatch.setenv("RANKED_MIN_ACCOUNT_AGE", "600")
    assert Settings.from_arguments([]).ranked_min_account_age == 600
    assert Settings.from_environment().to_environment()["RANKED_MIN_ACCOUNT_AGE"] == "600"
    with pytest.raises(SystemExit):
        Settings.from_arguments(["--ranked-min-account-age", "-1"])


# -- scouting traces (finding 3, the audit's input) -------------------------------------------


def trace(date: str, kind: str, value: str) -> str:
    key = keys.derive_key(SECRET.encode(), keys.SCOUTING_TRACE)
    return hmac.new(key, f"{date}:{kind}:{value}".encode(), hashlib.sha256).hexdigest()


async def test_every_ranked_attempt_keeps_keyed_hashes_of_its_client(
    api: Api, redis: Redis
) -> None:
    first_id, first = await api.player()
    second_id, second = await api.player()
    a = await api.call("POST", "/v1/daily/balcony", first, headers={"X-Install-Id": "phone-1"})
    b = await api.call("POST", "/v1/daily/balcony", second)
    # The in-process transport's client address is 127.0.0.1.
    record_a = await redis.hgetall(game_key(a["id"]))
    record_b = await redis.hgetall(game_key(b["id"]))
    assert record_a[b"client_hash"].decode() == trace(DAY, "addr", "127.0.0.1")
    assert record_a[b"client_hash"] == record_b[b"client_hash"]  # the same address
    assert record_a[b"install_hash"].decode() == trace(DAY, "install", "phone-1")
    assert record_b[b"install_hash"] == b""
    assert trace(DAY, "addr", "127.0.0.1") != trace(NEXT_DAY, "addr", "127.0.0.1")
    attempts = await redis.hgetall(attempts_key("balcony", DAY))
    assert attempts == {first_id.encode(): a["id"].encode(), second_id.encode(): b["id"].encode()}
    # No raw address or install id anywhere in the store.
    for key in await redis.keys("*"):
        if await redis.type(key) == b"hash":
            values = b" ".join((await redis.hgetall(key)).values())
            assert b"127.0.0.1" not in values and b"phone-1" not in values, key

    for bad in ["x" * 129, "naïve".encode(), "tab\there"]:
        _, token = await api.player()
        error = await api.error(
            400, "POST", "/v1/daily/balcony", token, headers={"X-Install-Id": bad}
        )
        assert error["code"] == "invalid_field" and error["field"] == "X-Install-Id"


async def test_the_leaderboard_audit_holds_unfinished_attempts_to_their_games(
    api: Api, redis: Redis
) -> None:
    """An unfinished attempt's entry (playing, then closed) passes the leaderboard audit
    while it matches its game, and fails it when its score is forged."""
    service = api.app.state.service
    tokens = [(await api.player())[1] for _ in range(2)]
    games = [await api.call("POST", "/v1/daily/colorado", token) for token in tokens]
    for token, game in zip(tokens, games, strict=True):
        for version, step in enumerate((2_300, 1_100, 4_700, 900, 3_100)):
            api.now += step
            move = next(m for m in game["legal_moves"] if m.startswith("stock"))
            game = (await api.move(token, game["id"], move, version))["snapshot"]
    api.now = closes_ms(DAY) + MINUTE
    results = await audit_leaderboard(service, "colorado", DAY, clairvoyance=False)
    assert [r.entry.status if r.entry else None for r in results] == ["playing", "playing"]
    assert all(r.verdict.integrity == "pass" for r in results), [r.to_dict() for r in results]
    # Both from this test's one address: a scouting link each way, and nothing else.
    assert all([s.name for s in r.verdict.signals] == ["scouting_link"] for r in results), [
        r.to_dict() for r in results
    ]

    _, entries = board_keys("colorado", DAY)
    player = results[0].player_id
    forged = json.loads(await redis.hget(entries, player))
    forged["score"] += 5
    await redis.hset(entries, player, json.dumps(forged))
    audited = await audit_leaderboard(service, "colorado", DAY, clairvoyance=False)
    [failed] = [r for r in audited if r.verdict.integrity == "fail"]
    assert failed.player_id == player
    assert {f.check for f in failed.verdict.findings} >= {"leaderboard_mismatch"}
