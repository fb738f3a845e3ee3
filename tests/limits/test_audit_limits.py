"""``POST /v1/audit``: a token is required, audits run in a bounded pool (``audit_busy``
beyond it), and malformed exports get a typed 4xx, never a 500."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
from limits_support import client, error_of, new_game, new_player, running


async def played_export(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    """The replay export of a finished game (a few moves, then ``resign``)."""
    game = await new_game(http, headers)
    moves = f"/v1/games/{game['id']}/moves"
    for version, move in enumerate(["deal", "deal", "resign"]):
        response = await http.post(moves, json={"move": move, "version": version}, headers=headers)
        assert response.status_code == 200, response.text
    export: dict[str, Any] = (await http.get(f"/v1/games/{game['id']}/replay")).json()
    return export


def with_number(export: dict[str, Any], field: str, number: str) -> bytes:
    """``export`` as JSON with ``field`` set to the number text ``number``."""
    return json.dumps({**export, field: "NUMBER"}).replace('"NUMBER"', number).encode()


async def test_audit_needs_a_token(redis_url: str) -> None:
    async with running(redis_url) as server, client(server) as http:
        headers = await new_player(http)
        export = await played_export(http, headers)
        refused = await http.post("/v1/audit", json=export)
        assert refused.status_code == 401 and error_of(refused)["code"] == "unauthorized"
        refused = await http.post("/v1/audit", json={"game_id": export["game_id"]})
        assert refused.status_code == 401
        accepted = await http.post("/v1/audit", json=export, headers=headers)
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["replayed_moves"] == 3, accepted.text


async def test_audits_beyond_the_pool_and_its_queue_are_busy(redis_url: str) -> None:
    async with (
        running(redis_url, audit_workers=1, audit_queue=1, audits_per_minute=100) as server,
        client(server) as http,
    ):
        headers = await new_player(http)
        export = await played_export(http, headers)
        responses = await asyncio.gather(
            *(http.post("/v1/audit", json=export, headers=headers) for _ in range(6))
        )
        statuses = sorted(response.status_code for response in responses)
        # One runs, one waits; the others are turned away at once.
        assert statuses == [200, 200, 503, 503, 503, 503], statuses
        busy = [response for response in responses if response.status_code == 503]
        for response in busy:
            assert error_of(response)["code"] == "audit_busy"
            assert response.headers["Retry-After"] == "1"
        assert server.app.state.audit_pool.taken == 0
        # The pool is free again afterwards.
        again = await http.post("/v1/audit", json=export, headers=headers)
        assert again.status_code == 200


async def test_malformed_audit_bodies_get_typed_errors(redis_url: str) -> None:
    async with running(redis_url, audits_per_minute=100) as server, client(server) as http:
        headers = await new_player(http)
        export = await played_export(http, headers)
        huge_time = copy.deepcopy(export)
        huge_time["moves"][0]["server_time"] = 10**400
        bodies: list[tuple[bytes, int, str]] = [
            (b'{"game":["x"]}', 400, "invalid_field"),
            (b'{"game":{"a":1}, "moves": []}', 400, "invalid_field"),
            (b'{"game_id":["x"]}', 400, "invalid_field"),
            (b'{"game_id":7}', 400, "invalid_field"),
            (json.dumps(huge_time).encode(), 400, "malformed"),
            (with_number(export, "score", "1e400"), 400, "malformed"),
            (with_number(export, "created_at", "NaN"), 400, "malformed"),
            (with_number(export, "created_at", "-Infinity"), 400, "malformed"),
            (b"[" * 1000 + b"]" * 1000, 400, "malformed"),
        ]
        for body, status, code in bodies:
            response = await http.post(
                "/v1/audit",
                content=body,
                headers={**headers, "Content-Type": "application/json"},
            )
            assert response.status_code == status, (body[:80], response.text)
            if code:
                assert error_of(response)["code"] == code, response.text
        assert (await http.post("/v1/audit", json=export, headers=headers)).status_code == 200
