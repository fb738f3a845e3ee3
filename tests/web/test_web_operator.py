"""The operators' page (``/operator``, issue 25) in the real browser: its own sign-in with an
operator token, the review queue with its evidence beside the moves stepped one by one,
a decision and a player action, the trail; keyboard only where a person would type, and
axe-clean.  The day it reviews is built in Redis the way the server builds one: attempts
played through the service on a clock ten days back, then the post-close audit."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from conftest import SECRET, WAIT_MS
from web_helpers import Web, axe_violations

from server import daily
from server.operator import credentials
from server.operator.actions import Operations
from server.operator.postclose import PostCloseAuditor
from server.redisconn import connect
from server.service import GameService, now_ms
from server.store import Store
from server.testing import choose_dailies

#: On its deal of the day (under the web tests' secret) the scripted attempt plays its 60
#: moves at machine speed (Gloucestershire's was stuck too soon to be flagged).
GAME = "balcony"


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


async def play(service: GameService, clock: Clock, step_ms: int, moves: int) -> str:
    """A ranked attempt at the clock's day: foundation moves first, ``step_ms`` apart."""
    player = (await service.create_player())["player_id"]
    snapshot = await service.start_daily(player, GAME)
    rng = random.Random(step_ms)
    version, legal, status = 0, snapshot["legal_moves"], snapshot["status"]
    for _ in range(moves):
        if status != "playing":
            break
        up = [move for move in legal if ">foundation" in move]
        clock.now += step_ms
        reply, _, game = await service.play(
            snapshot["id"], player, rng.choice(up or legal), version
        )
        version, legal, status = reply["version"], game.legal_moves(), game.status
    if status == "playing":
        clock.now += step_ms
        await service.play(snapshot["id"], player, "resign", version)
    return str(snapshot["id"])


async def reviewed_day(redis_url: str, date: str) -> dict[str, str]:
    """A scripted attempt (40 ms a move: flagged) and an honest one (cleared), audited."""
    redis = connect(redis_url, False)
    clock = Clock(daily.opens_ms(date) + 10 * 3600 * 1000)
    service = GameService(Store(redis), SECRET.encode(), clock=clock)
    try:
        await choose_dailies(service, date)
        scripted = await play(service, clock, 40, 60)
        honest = await play(service, clock, 1700, 3)
        clock.now = daily.closes_ms(date) + 1000
        auditor = PostCloseAuditor(Operations(service), 0.0, clock)
        assert await auditor.audit_day(GAME, date)
        await auditor.stop()
        token, _ = await credentials.issue(redis, SECRET.encode(), "web-op", now_ms())
    finally:
        await redis.aclose()
    return {"scripted": scripted, "honest": honest, "token": token}


def text(page: Any, testid: str) -> str:
    return str(page.get_by_test_id(testid).inner_text())


def test_an_operator_reviews_a_day_in_the_browser(
    browser: Any, base_url: str, web_redis_url: str
) -> None:
    date = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=10)).isoformat()
    # In a thread of its own: Playwright's synchronous API runs an event loop in this one.
    with ThreadPoolExecutor(1) as thread:
        day = thread.submit(asyncio.run, reviewed_day(web_redis_url, date)).result(120)
    player_token = httpx.post(f"{base_url}/v1/players", timeout=5).json()["token"]
    # Not linked from the player pages.
    assert "/operator" not in httpx.get(f"{base_url}/", timeout=5).text
    for module in ("main.mjs", "pages.mjs", "panels.mjs", "render.mjs"):
        assert "/operator" not in httpx.get(f"{base_url}/static/{module}", timeout=5).text

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{base_url}/operator")
        web = Web(page, base_url)
        assert page.get_by_test_id("desk").is_hidden()
        # Signing in with a player's token is refused; the operator's works (keyboard).
        page.get_by_test_id("token").focus()
        page.keyboard.type(player_token)
        page.keyboard.press("Enter")
        web.wait("document.getElementById('message').textContent.includes('player token')")
        assert page.get_by_test_id("desk").is_hidden()
        page.get_by_test_id("token").fill("")
        page.get_by_test_id("token").focus()
        page.keyboard.type(day["token"])
        page.keyboard.press("Enter")
        page.get_by_test_id("desk").wait_for(state="visible")
        assert "web-op" in text(page, "signed-in")
        assert axe_violations(web) == []

        # The queue of the day: the scripted attempt, flagged, with its timing evidence.
        page.get_by_test_id("filter-game").select_option(GAME)
        page.get_by_test_id("filter-date").fill(date)
        page.get_by_test_id("filter-state").select_option("flagged")
        page.get_by_test_id("load-queue").click()
        web.wait("document.getElementById('queue-caption').textContent.startsWith('1 item')")
        opener = page.get_by_test_id("open-item")
        assert opener.inner_text() == day["scripted"]
        opener.focus()
        page.keyboard.press("Enter")
        page.get_by_test_id("item").wait_for(state="visible")
        web.wait("window.__operator.moves.length > 0")
        evidence = text(page, "evidence")
        assert "inhuman_speed" in evidence and '"fastest_ms": 40' in evidence
        moves = page.evaluate("window.__operator.moves.length")
        assert text(page, "replay-position") == f"At the deal, {moves} moves."
        page.get_by_test_id("replay-next").focus()
        page.keyboard.press("Enter")
        page.keyboard.press("Enter")
        assert text(page, "replay-position").startswith(f"Move 2 of {moves}: ")
        assert "(+40 ms)" in text(page, "replay-moves")
        page.get_by_test_id("replay-last").click()
        assert text(page, "replay-position").startswith(f"Move {moves} of {moves}: ")
        assert axe_violations(web) == []

        # Void it, then suspend its player: both in the trail, by this operator.
        page.get_by_test_id("void").click()
        web.wait("document.getElementById('message').textContent.includes('reason')")
        page.get_by_test_id("reason").fill("40 ms between moves throughout")
        page.get_by_test_id("void").click()
        web.wait("document.getElementById('message').textContent === 'Void: done.'")
        web.wait("document.getElementById('queue-caption').textContent.startsWith('0 item')")
        page.get_by_test_id("suspend").click()
        web.wait(
            "document.getElementById('player-state').textContent.includes('Suspended until lifted')"
        )
        rows = page.get_by_test_id("trail").locator("tbody tr")
        first = rows.nth(0).inner_text()
        second = rows.nth(1).inner_text()
        assert "web-op" in first and "suspend" in first
        assert "review_void" in second and day["scripted"] in second
        assert axe_violations(web) == []
    finally:
        context.close()
    assert errors == []
    # What the page did is what the server holds.
    with httpx.Client(base_url=base_url, timeout=5) as http:
        headers = {"Authorization": f"Bearer {day['token']}"}
        voided = http.get(
            f"/v1/operator/reviews?game={GAME}&date={date}&state=voided", headers=headers
        )
        assert [item["game_id"] for item in voided.json()["items"]] == [day["scripted"]]
