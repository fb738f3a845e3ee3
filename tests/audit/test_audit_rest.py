"""``POST /v1/audit``: an export, or a stored game by id; JSON or msgpack."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import httpx
import msgpack
from audit_helpers import (
    FakeClock,
    casual_game,
    checks,
    daily_game,
    human_steps,
    random_choice,
)
from starlette.applications import Starlette

from server.audit import AUDIT_BODY_BYTES
from server.codec import MAX_MESSAGE_BYTES
from server.service import GameService

MSGPACK = "application/msgpack"


async def finished_game(app: Starlette, clock: FakeClock) -> str:
    service: GameService = app.state.service
    rng = random.Random(41)
    stored = await casual_game(
        service, clock, "empress_of_italy", "rest", 150, human_steps(rng), rng, resign=True
    )
    return stored.id


async def test_audit_a_stored_game_by_id(
    app: Starlette, http: httpx.AsyncClient, clock: FakeClock
) -> None:
    game_id = await finished_game(app, clock)
    response = await http.post("/v1/audit", json={"game_id": game_id})
    assert response.status_code == 200, response.text
    verdict = response.json()
    assert verdict["passed"] is True and verdict["integrity"] == "pass"
    assert verdict["fair_play"] == [] and verdict["summary"] == "integrity pass; no signal"
    assert (verdict["game_id"], verdict["moves"], verdict["findings"]) == (game_id, 151, [])


async def test_audit_a_posted_export_bigger_than_the_usual_body_limit(
    app: Starlette, http: httpx.AsyncClient, clock: FakeClock
) -> None:
    game_id = await finished_game(app, clock)
    export = (await http.get(f"/v1/games/{game_id}/replay")).json()
    body = json.dumps(export).encode()
    assert MAX_MESSAGE_BYTES < len(body) < AUDIT_BODY_BYTES
    response = await http.post(
        "/v1/audit", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["passed"] is True

    forged = copy.deepcopy(export)
    forged["moves"][10]["hash"] = "0" * 64
    response = await http.post("/v1/audit", json=forged)
    assert response.status_code == 200
    verdict = response.json()
    assert verdict["passed"] is False and verdict["integrity"] == "fail"
    assert verdict["findings"][0]["check"] == "broken_chain"
    assert verdict["findings"][0]["version"] == 11


async def test_audit_in_msgpack(app: Starlette, http: httpx.AsyncClient, clock: FakeClock) -> None:
    game_id = await finished_game(app, clock)
    export = (await http.get(f"/v1/games/{game_id}/replay")).json()
    response = await http.post(
        "/v1/audit",
        content=msgpack.packb(export),
        headers={"content-type": MSGPACK, "accept": MSGPACK},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(MSGPACK)
    assert msgpack.unpackb(response.content)["passed"] is True


async def test_a_posted_export_without_its_seed_is_not_completed_by_the_server(
    app: Starlette, http: httpx.AsyncClient, clock: FakeClock
) -> None:
    """The server never fills in a secret seed: that would let anyone test moves
    against today's deal."""
    service: GameService = app.state.service
    rng = random.Random(42)
    player = await service.create_player()
    stored = await daily_game(
        service,
        clock,
        "colorado",
        random_choice(rng),
        human_steps(rng),
        15,
        player_id=player["player_id"],
    )
    # While the day is open only the player may read the game (DAILY.md).
    owner = {"Authorization": f"Bearer {player['token']}"}
    export = (await http.get(f"/v1/games/{stored.id}/replay", headers=owner)).json()
    assert export["seed"] is None
    verdict = (await http.post("/v1/audit", json=export)).json()
    assert verdict["integrity"] == "chain_only"
    assert checks(verdict) == {"seed_unavailable"}

    by_id = await http.post("/v1/audit", json={"game_id": stored.id}, headers=owner)
    assert by_id.json()["passed"] is True
    assert stored.seed not in by_id.text


async def test_audit_errors(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/audit", json={"game_id": "g_nothing"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_game"

    response = await http.post("/v1/audit", content=b"{not json", headers=_json())
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed"

    too_big = b'{"pad": "' + b"x" * AUDIT_BODY_BYTES + b'"}'
    response = await http.post("/v1/audit", content=too_big, headers=_json())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "frame_too_large"

    # Neither an export nor a game id by the schema of /openapi.json: a 400, not a verdict.
    response = await http.post("/v1/audit", json={"game_id": "g_x", "seed": "abc"})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "missing_field",
        "message": "missing field 'format'",
        "field": "format",
    }


async def test_other_routes_keep_the_usual_body_limit(http: httpx.AsyncClient) -> None:
    response = await http.post(
        "/v1/players", content=b"{" + b" " * MAX_MESSAGE_BYTES + b"}", headers=_json()
    )
    assert response.status_code == 413


async def test_the_route_is_in_the_openapi_document(http: httpx.AsyncClient) -> None:
    document: dict[str, Any] = (await http.get("/openapi.json")).json()
    assert "post" in document["paths"]["/v1/audit"]
    assert "Verdict" in document["components"]["schemas"]


def _json() -> dict[str, str]:
    return {"content-type": "application/json"}
