"""What a replay viewer reads of a ranked game: nothing before its day closes, then the
seed, every move and the audit verdict, for anybody."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.config import Settings
from server.daily import DAY_MS, opens_ms
from server.rules import new_game
from server.testing import TEST_DAILY, UNLIMITED, dailies_chosen

DAY = "2026-11-28"
NOON = opens_ms(DAY) + DAY_MS // 2


@pytest.fixture
async def served(
    redis_url: str, redis_cluster: bool
) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    app = create_app(
        Settings(
            redis_url=redis_url,
            redis_cluster=redis_cluster,
            secret="be89af693bac254934d474d2ba74b763b3f7c575c2491c1671a5d35b665241b4",
            ranked_min_account_age=0,
            limits=UNLIMITED,
            daily=TEST_DAILY,
        )
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client, app


async def token_of(http: httpx.AsyncClient) -> dict[str, str]:
    token = (await http.post("/v1/players")).json()["token"]
    return {"Authorization": f"Bearer {token}"}


async def test_a_ranked_game_is_replayable_with_its_verdict_by_anyone_after_the_close(
    served: tuple[httpx.AsyncClient, Any],
) -> None:
    http, app = served
    now = [NOON]
    app.state.service.clock = lambda: now[0]
    await dailies_chosen(app)
    owner, other = await token_of(http), await token_of(http)
    game = (await http.post("/v1/daily/matrimony", headers=owner)).json()
    for version in range(3):
        now[0] += 2_000
        moved = await http.post(
            f"/v1/games/{game['id']}/moves",
            json={"move": "deal", "version": version},
            headers=owner,
        )
        assert moved.status_code == 200, moved.text
    for path in ("replay", "verdict"):
        for headers in (other, {}):
            hidden = await http.get(f"/v1/games/{game['id']}/{path}", headers=headers)
            assert hidden.status_code == 403 and hidden.json()["error"]["code"] == "daily_open"
    own = await http.get(f"/v1/games/{game['id']}/verdict", headers=owner)
    assert own.status_code == 409 and own.json()["error"]["code"] == "not_finished"

    now[0] = opens_ms(DAY) + DAY_MS  # the day closes, the attempt still playing
    replay = (await http.get(f"/v1/games/{game['id']}/replay")).json()
    assert replay["seed"] and [entry["move"] for entry in replay["moves"]] == ["deal"] * 3
    # A viewer re-deals from the seed and steps through the moves.
    table = new_game("matrimony", replay["seed"])
    assert table.view() == game["view"]
    for entry in replay["moves"]:
        table.play(entry["move"])
        assert table.state_hash() == entry["state_hash"]
    verdict = await http.get(f"/v1/games/{game['id']}/verdict", headers=other)
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["integrity"] == "pass" and verdict.json()["replayed_moves"] == 3
    assert replay["seed"] not in verdict.text
    assert (await http.get(f"/v1/games/{game['id']}/verdict")).json() == verdict.json()
