"""Hints in casual games only (issue 10): ``POST /v1/games/{id}/hint``."""

from __future__ import annotations

import asyncio
import time

import httpx
from server_support import Api, RunningServer, error_code, run_app

from server.app import create_app
from server.audit import audit
from server.config import Limits, Settings
from server.errors import ApiError
from server.hints import HINT_SAMPLES
from server.hints import hint as compute_hint
from server.limits import HintPool
from server.rules import Move, new_game
from server.testing import TEST_DAILY, TEST_SECRET, dailies_chosen


async def hint(http: httpx.AsyncClient, game_id: str, headers: dict[str, str]) -> httpx.Response:
    return await http.post(f"/v1/games/{game_id}/hint", headers=headers)


async def test_a_hint_is_a_legal_move_and_marks_the_game_assisted(
    api: Api, http: httpx.AsyncClient
) -> None:
    for name in ("balcony", "colorado", "empress_of_italy", "gloucestershire", "matrimony"):
        owner = await api.player()
        game = await api.create_game(owner, name, seed=f"hint-{name}-3")
        if game["status"] != "playing":
            continue
        assert game["assisted"] is False
        response = await hint(http, game["id"], owner.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["move"] in game["legal_moves"], (name, body)
        assert body["version"] == game["version"] and body["assisted"] is True
        assert 0.0 <= body["win_chance"] <= 1.0 and body["samples"] >= 1
        # Playable as it is.
        played = await api.move(owner, game["id"], body["move"], game["version"])
        snapshot = played["snapshot"]
        assert snapshot["assisted"] is True
        assert (await api.get(game["id"]))["assisted"] is True  # anyone's view of it
        assert (await api.log(game["id"]))["assisted"] is True
        export = (await http.get(f"/v1/games/{game['id']}/replay")).json()
        assert export["assisted"] is True
    # A game without a hint says so everywhere.
    owner = await api.player()
    plain = await api.create_game(owner, "balcony", seed="no-hint")
    await api.move(owner, plain["id"], "resign", 0)
    assert (await api.get(plain["id"]))["assisted"] is False
    assert (await api.log(plain["id"]))["assisted"] is False
    export = (await http.get(f"/v1/games/{plain['id']}/replay")).json()
    assert export["assisted"] is False and export["seed"] == "no-hint"
    assert audit(export).passed  # the field leaves the audit's checks unchanged


def test_the_same_position_gets_the_same_hint() -> None:
    game = new_game("colorado", "same-hint")
    # Time enough for every sample (the server's bound can cut a busy machine short).
    first = compute_hint("colorado", game.view(), "g_same", 0, seconds=60)
    again = compute_hint("colorado", game.view(), "g_same", 0, seconds=60)
    assert first.samples == again.samples == HINT_SAMPLES
    assert first == again
    elsewhere = compute_hint("colorado", game.view(), "g_other", 0, seconds=60)
    assert elsewhere.samples == HINT_SAMPLES  # other samples, maybe other advice


async def test_only_the_owner_of_a_casual_game_in_play_gets_hints(
    redis_url: str,
    redis_cluster: bool,
) -> None:
    settings = Settings(
        redis_url=redis_url,
        redis_cluster=redis_cluster,
        secret=TEST_SECRET,
        ranked_min_account_age=0,
        limits=Limits(rate_limits=False),
        daily=TEST_DAILY,
    )
    app = create_app(settings)
    async with run_app(redis_url, app=app) as running, client(running) as http:
        await dailies_chosen(app)
        api = Api(http)
        owner, other = await api.player(), await api.player()
        game = await api.create_game(owner, "balcony", seed="owner-only")
        refused = await hint(http, game["id"], other.headers)
        assert refused.status_code == 403 and error_code(refused) == "forbidden"
        anonymous = await hint(http, game["id"], {})
        assert anonymous.status_code == 401 and error_code(anonymous) == "unauthorized"
        missing = await hint(http, "g_nope", owner.headers)
        assert missing.status_code == 404 and error_code(missing) == "unknown_game"
        # A ranked attempt: never, even for its player.
        ranked = (await http.post("/v1/daily/balcony", headers=owner.headers)).json()
        assert ranked["daily"]
        refused = await hint(http, ranked["id"], owner.headers)
        assert refused.status_code == 403 and error_code(refused) == "hints_ranked"
        assert (await api.get(ranked["id"], owner))["assisted"] is False
        # A game over: nothing to hint.
        await api.move(owner, game["id"], "resign", 0)
        over = await hint(http, game["id"], owner.headers)
        assert over.status_code == 409 and error_code(over) == "game_over"
        assert (await api.get(game["id"]))["assisted"] is False


async def test_hints_are_rate_limited_per_player(redis_url: str, redis_cluster: bool) -> None:
    settings = Settings(
        redis_url=redis_url,
        redis_cluster=redis_cluster,
        secret=TEST_SECRET,
        ranked_min_account_age=0,
        limits=Limits(hints_per_minute=2),
        daily=TEST_DAILY,
    )
    async with (
        run_app(redis_url, app=create_app(settings)) as running,
        client(running) as http,
    ):
        api = Api(http)
        owner = await api.player()
        game = await api.create_game(owner, "colorado", seed="rated")
        answers = [await hint(http, game["id"], owner.headers) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]
        assert answers[2].json()["error"]["limit"] == "hints"
        assert int(answers[2].headers["Retry-After"]) >= 1


async def test_a_full_hint_pool_answers_hints_busy() -> None:
    pool = HintPool(Limits(hint_workers=1, hint_queue=1))
    try:
        running = [asyncio.ensure_future(pool.run(time.sleep, 0.3)) for _ in range(2)]
        await asyncio.sleep(0.05)
        assert pool.taken == 2
        try:
            await pool.run(time.sleep, 0.3)
        except ApiError as error:
            assert error.code == "hints_busy" and error.status == 503
            assert error.details["retry_after_ms"] == 1000
        else:
            raise AssertionError("a third hint was taken by a pool of 1 + 1")
        await asyncio.gather(*running)
        assert pool.taken == 0
        await pool.run(time.sleep, 0)  # room again
    finally:
        pool.stop()


def test_a_hint_reads_only_the_view() -> None:
    # Two deals that differ only in the stock order get the same hint.
    game = new_game("colorado", "view-only")
    other = game.copy()
    other.stock[:-1] = other.stock[-2::-1]  # the face-down part (the top card is face up)
    assert other.view() == game.view() and other.to_bytes() != game.to_bytes()
    # Budgets in positions only (no clock): a hint cut short by time depends on the machine.
    one = compute_hint("colorado", game.view(), "g_x", 0, seconds=60)
    two = compute_hint("colorado", other.view(), "g_x", 0, seconds=60)
    assert one.move == two.move and one.move is not None
    assert Move(one.move) in [Move(m) for m in game.legal_moves()]


def client(running: RunningServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=running.base_url, timeout=10)
