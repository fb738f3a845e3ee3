"""The post-close audit and the review queue (issue 25), on the app with its lifespan (the
background auditor runs) and a fake clock moved past the day's close; standalone Redis
and the Redis Cluster."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import httpx
from audit_helpers import (
    DAY,
    SECRET,
    FakeClock,
    daily_game,
    fixed_steps,
    greedy_choice,
    human_steps,
    random_choice,
)
from starlette.applications import Starlette

from server import daily
from server.app import create_app
from server.config import Settings
from server.leaderboard import review_keys
from server.metrics import exposition
from server.operator import credentials, review
from server.operator.actions import Operations
from server.operator.postclose import PostCloseAuditor
from server.store import game_key
from server.testing import TEST_DAILY, UNLIMITED, dailies_chosen

#: On this game's deal of DAY (under the audit tests' secret) the greedy attempts outscore
#: the honest ones' two moves, so the forged and the scripted attempts top the board (on
#: Gloucestershire's, greedy play was stuck at once and the honest ones ranked first).
GAME = "balcony"


async def forge_log(redis: Any, game_id: str, version: int) -> None:
    """Rewrite the game's move log with the move of ``version`` replaced by the one
    before it: a log that does not replay (the record and the board are untouched)."""
    key = f"{game_key(game_id)}:log"
    entries = await redis.xrange(key)
    await redis.delete(key)
    for index, (entry_id, fields) in enumerate(entries):
        if index == version - 1:
            fields = {**fields, b"move": entries[index - 1][1][b"move"]}
        await redis.xadd(key, fields, id=entry_id)


async def board(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    response = await http.get(f"/v1/leaderboards/{GAME}/{DAY}")
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


async def reviews(http: httpx.AsyncClient, headers: dict[str, str], state: str) -> list[Any]:
    response = await http.get(
        f"/v1/operator/reviews?game={GAME}&date={DAY}&state={state}", headers=headers
    )
    assert response.status_code == 200, response.text
    items: list[Any] = response.json()["items"]
    return items


async def test_after_the_close_the_forged_is_voided_the_scripted_flagged_the_honest_cleared(
    app: Starlette, http: httpx.AsyncClient, clock: FakeClock, redis_client
) -> None:
    service = app.state.service
    await dailies_chosen(app, DAY)
    rng = random.Random(25)
    forged = await daily_game(service, clock, GAME, greedy_choice(rng), human_steps(rng), 150)
    scripted = await daily_game(service, clock, GAME, greedy_choice(rng), fixed_steps(40), 150)
    honest = [
        await daily_game(service, clock, GAME, random_choice(rng), human_steps(rng), 2, True)
        for _ in range(2)
    ]
    await forge_log(redis_client, forged.id, 3)
    before = await board(http)
    assert {entry["player_id"] for entry in before[:2]} == {forged.owner, scripted.owner}
    assert len(before) == 4 and all(entry["review"] is None for entry in before)

    # The day closes: every entry is pending until the audit reaches it.
    clock.now = daily.closes_ms(DAY) + 1000
    pending = await board(http)
    assert [entry["review"] for entry in pending] == ["pending"] * 4
    ranks = [entry["player_id"] for entry in pending]
    app.state.postclose.wake()
    async with asyncio.timeout(120):
        while not await redis_client.exists(review_keys(GAME, DAY)[2]):
            await asyncio.sleep(0.05)

    after = await board(http)
    # The forged one is off the board; the scripted one flagged; the honest ones plain,
    # in the board's own order.
    assert [entry["player_id"] for entry in after] == [p for p in ranks if p != forged.owner]
    review_of = {entry["player_id"]: entry["review"] for entry in after}
    assert review_of == {scripted.owner: "flagged", honest[0].owner: None, honest[1].owner: None}

    token, _ = await credentials.issue(redis_client, SECRET.encode(), "olga", clock())
    operator = {"Authorization": f"Bearer {token}"}
    [flagged] = await reviews(http, operator, "flagged")
    assert (
        flagged["game_id"] == scripted.id and flagged["replay"] == f"/v1/games/{scripted.id}/replay"
    )
    speed = next(signal for signal in flagged["signals"] if signal["name"] == "inhuman_speed")
    assert speed["evidence"]["fastest_ms"] == 40
    [voided] = await reviews(http, operator, "voided")
    assert voided["game_id"] == forged.id and voided["integrity"] == "fail"
    assert {finding["check"] for finding in voided["findings"]} & {"illegal_move", "broken_chain"}
    cleared = await reviews(http, operator, "cleared")
    assert sorted(item["game_id"] for item in cleared) == sorted(game.id for game in honest)
    # The automatic void is in the trail, by `system`; its player sees the reason code.
    actions = (await http.get("/v1/operator/actions", headers=operator)).json()["actions"]
    assert [(a["operator"], a["action"], a["game_id"]) for a in actions] == [
        ("system", "void", forged.id)
    ]
    assert actions[0]["details"]["code"] == "integrity"
    history = await service.my_games(forged.owner, None, 10)
    assert [game["void_reason"] for game in history["games"]] == ["integrity"]

    # An operator voids the flagged one from the queue: off the board, in the trail.
    decided = await http.post(
        f"/v1/operator/reviews/{scripted.id}",
        json={"decision": "void", "reason": "40 ms between moves throughout"},
        headers=operator,
    )
    assert decided.status_code == 200, decided.text
    assert decided.json()["state"] == "voided"
    assert scripted.owner not in {entry["player_id"] for entry in await board(http)}
    assert await reviews(http, operator, "flagged") == []
    actions = (await http.get("/v1/operator/actions", headers=operator)).json()["actions"]
    assert (actions[0]["operator"], actions[0]["action"]) == ("olga", "review_void")
    unknown = await http.post(
        "/v1/operator/reviews/g_nothing",
        json={"decision": "clear", "reason": "x"},
        headers=operator,
    )
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_review"
    # A restart audits nothing twice: the day is done.
    assert await app.state.postclose.audit_day(GAME, DAY)
    assert app.state.postclose.audited == 4
    metrics = exposition().decode()  # the in-process server's (its /metrics is off)
    for name in (
        'solitaire_postclose_audits_total{outcome="flagged"}',
        'solitaire_review_flags_total{signal="inhuman_speed"}',
        'solitaire_voids_total{kind="auto"}',
        'solitaire_voids_total{kind="manual"}',
        "solitaire_review_queue",
        "solitaire_postclose_audit_lag_seconds",
    ):
        assert name in metrics, name


async def test_the_day_is_audited_once_per_cluster_and_resumes_where_it_stopped(
    app: Starlette, redis_url: str, redis_cluster: bool, clock: FakeClock, redis_client
) -> None:
    service = app.state.service
    await dailies_chosen(app, DAY)
    rng = random.Random(7)
    games = [
        await daily_game(service, clock, GAME, random_choice(rng), human_steps(rng), 3, True)
        for _ in range(3)
    ]
    # The first attempt was audited before a restart: its verdict is stored.
    await review.store_item(
        redis_client,
        {
            "id": games[0].id,
            "game_id": games[0].id,
            "player_id": games[0].owner,
            "game": GAME,
            "date": DAY,
            "state": "cleared",
            "audited_at": clock(),
        },
    )
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=0,
        redis_cluster=redis_cluster,
        limits=UNLIMITED,
        daily=TEST_DAILY,
    )
    second = create_app(settings)
    async with second.router.lifespan_context(second):
        second.state.service.clock = clock
        clock.now = daily.closes_ms(DAY) + 1000
        app.state.postclose.wake()
        second.state.postclose.wake()
        async with asyncio.timeout(120):
            while not await redis_client.exists(review_keys(GAME, DAY)[2]):
                await asyncio.sleep(0.05)
        audited = app.state.postclose.audited + second.state.postclose.audited
    assert audited == 2  # each attempt once, over both instances; not the first again
    states = await redis_client.hgetall(review_keys(GAME, DAY)[0])
    assert {player.decode() for player in states} == {game.owner for game in games}


async def test_clairvoyance_stops_when_the_boards_cpu_budget_is_spent(
    service, clock: FakeClock, redis_client
) -> None:
    """The first attempt (board order) spends the tiny budget; the next gets every other
    check, and the day's marker counts it."""
    rng = random.Random(11)
    games = [
        await daily_game(service, clock, "balcony", random_choice(rng), human_steps(rng), 3, True)
        for _ in range(2)
    ]
    clock.now = daily.closes_ms(DAY) + 1000
    auditor = PostCloseAuditor(Operations(service), 1e-9, clock)
    try:
        assert await auditor.audit_day("balcony", DAY)
    finally:
        await auditor.stop()
    items = {
        json.loads(value)["game_id"]: json.loads(value)
        for value in await redis_client.hvals(review_keys("balcony", DAY)[1])
    }
    board = await service.leaderboard("balcony", DAY, 10)
    first, second = (entry["game_id"] for entry in board["entries"])
    assert {first, second} == {game.id for game in games}
    assert items[first]["clairvoyance_checked"] is True
    assert items[second]["clairvoyance_checked"] is False
    marker = json.loads(await redis_client.get(review_keys("balcony", DAY)[2]))
    assert marker["attempts"] == 2 and marker["clairvoyance_skipped"] == 1


async def test_the_queue_forgets_items_gone_with_their_board(
    redis_url: str, redis_cluster: bool
) -> None:
    """The soak's key census (issue 23): a flagged item nobody decided stayed in
    ``reviews:flagged`` after its board's review hashes expired (``MARK_TTL``), so the
    queue, and its length in ``/metrics``, grew by every such item forever.  An audit
    drops the items audited more than ``MARK_TTL`` before it."""
    from server.leaderboard import MARK_TTL
    from server.redisconn import connect

    redis = connect(redis_url, redis_cluster)
    try:
        first = daily.opens_ms(DAY) + daily.DAY_MS
        for n, audited_at in enumerate((first, first + MARK_TTL * 1000 + daily.DAY_MS)):
            item = {
                "id": f"game-{n}",
                "game": GAME,
                "date": DAY,
                "player_id": f"player-{n}",
                "state": "flagged",
                "audited_at": audited_at,
            }
            await review.store_item(redis, item)
        assert await review.queue_length(redis) == 1
        assert await redis.zrange(review.QUEUE_KEY, 0, -1) == [b"game-1"]
    finally:
        await redis.aclose()
