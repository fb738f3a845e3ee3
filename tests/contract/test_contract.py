"""The eight mismatches of issue 9 between the OpenAPI document and the server, each
checked on a real server (real Redis), and real answers compared with the document's
schemas: what a client written from ``/openapi.json`` alone relies on."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jsonschema_rs
import pytest

from protocol import chain
from server import rest
from server.openapi import openapi_document
from server.schema import ANNOTATIONS, KEYWORDS
from server.testing import serve


@pytest.fixture
async def http(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(redis_url) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        yield client


async def player(http: httpx.AsyncClient) -> dict[str, str]:
    response = await http.post("/v1/players")
    assert response.status_code == 201
    return {"Authorization": f"Bearer {response.json()['token']}"}


def conforms(document: dict[str, Any], schema: dict[str, Any], value: Any) -> list[str]:
    """The errors of ``value`` under ``schema`` (``$ref`` s into the document)."""
    root = {**schema, "components": document["components"]}
    validator = jsonschema_rs.Draft202012Validator(root)
    return [str(error).splitlines()[0] for error in validator.iter_errors(value)]


def undeclared(document: dict[str, Any], schema: Any, value: Any, path: str = "") -> list[str]:
    """The fields of ``value`` that ``schema`` does not declare (a client written from
    the document would not know them)."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return undeclared(document, document["components"]["schemas"][name], value, path)
    for key in ("oneOf", "anyOf"):
        if key in schema:
            found = [undeclared(document, branch, value, path) for branch in schema[key]]
            return min(found, key=len)
    if isinstance(value, list):
        items = schema.get("items")
        return [
            field
            for i, item in enumerate(value)
            for field in undeclared(document, items, item, f"{path}[{i}]")
        ]
    if not isinstance(value, dict) or "properties" not in schema:
        return []
    properties = schema["properties"]
    missing = [f"{path}.{name}" for name in value if name not in properties]
    for name, item in value.items():
        if name in properties:
            missing += undeclared(document, properties[name], item, f"{path}.{name}")
    return missing


def answer_schema(document: dict[str, Any], path: str, method: str, status: int) -> Any:
    content = document["paths"][path][method]["responses"][str(status)]["content"]
    return content["application/json"]["schema"]


# 1. 405 answers carry Allow, on every route, web pages and files included.
ALLOWED = {
    "/healthz": "GET, HEAD",
    "/readyz": "GET, HEAD",
    "/openapi.json": "GET, HEAD",
    "/v1/players": "POST",
    "/v1/games": "GET, HEAD, POST",
    "/v1/games/g_x": "GET, HEAD",
    "/v1/games/g_x/moves": "POST",
    "/v1/games/g_x/log": "GET, HEAD",
    "/v1/games/g_x/replay": "GET, HEAD",
    "/v1/daily/colorado": "GET, HEAD, POST",
    "/v1/daily/colorado/2026-01-01": "GET, HEAD",
    "/v1/leaderboards/colorado/2026-01-01": "GET, HEAD",
    "/v1/leaderboards/colorado/2026-01-01/me": "GET, HEAD",
    "/v1/audit": "POST",
    "/": "GET, HEAD",
    "/static/app.js": "GET, HEAD",
}


async def test_every_405_names_the_allowed_methods(http: httpx.AsyncClient) -> None:
    for path, allowed in ALLOWED.items():
        for method in ("PUT", "DELETE", "PATCH", "TRACE"):
            response = await http.request(method, path)
            assert response.status_code == 405, (method, path, response.text)
            assert response.headers.get("allow") == allowed, (method, path)
            assert response.json()["error"]["code"] == "method_not_allowed"


# 2. POST /v1/games: the body is required; 4. "seed": null is a random seed.
async def test_a_game_needs_a_body_and_a_null_seed_is_random(http: httpx.AsyncClient) -> None:
    document = openapi_document()
    assert document["paths"]["/v1/games"]["post"]["requestBody"]["required"] is True
    headers = await player(http)
    missing = await http.post("/v1/games", headers=headers)
    assert missing.status_code == 400
    assert missing.json()["error"] == {
        "code": "missing_field",
        "message": "missing field 'game'",
        "field": "game",
    }
    seeds = set()
    for _ in range(2):
        created = await http.post(
            "/v1/games", json={"game": "balcony", "seed": None}, headers=headers
        )
        assert created.status_code == 201, created.text
        await http.post(
            f"/v1/games/{created.json()['id']}/moves",
            json={"move": "resign", "version": 0},
            headers=headers,
        )
        log = await http.get(f"/v1/games/{created.json()['id']}/log")
        seeds.add(log.json()["seed"])
    assert len(seeds) == 2 and None not in seeds  # drawn at random, told once over
    schema = rest.CREATE_GAME_BODY["anyOf"][1]["properties"]["seed"]
    assert "null" in schema["type"]
    both = await http.post(
        "/v1/games",
        json={"game": "balcony", "seed": "abc", "daily": "2020-01-01"},
        headers=headers,
    )
    assert both.status_code == 400 and both.json()["error"]["field"] == "seed"


# 3. move_id: 1-64 characters in the schema and at the server; empty is refused.
async def test_move_id_is_one_to_sixty_four_characters(http: httpx.AsyncClient) -> None:
    schema = rest.MOVE_BODY["properties"]["move_id"]
    assert (schema["minLength"], schema["maxLength"]) == (1, 64)
    headers = await player(http)
    game = (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).json()
    moves = f"/v1/games/{game['id']}/moves"
    for move_id in ("", "x" * 65):
        body = {"move": "resign", "version": 0, "move_id": move_id}
        refused = await http.post(moves, json=body, headers=headers)
        assert refused.status_code == 400, move_id
        assert refused.json()["error"]["code"] == "invalid_field"
        assert refused.json()["error"]["field"] == "move_id"
    played = await http.post(
        moves, json={"move": "resign", "version": 0, "move_id": "x" * 64}, headers=headers
    )
    assert played.status_code == 200, played.text


# Found by schemathesis: a log cursor beyond Redis's 64-bit stream ids was a 503.
async def test_log_cursors_are_stream_ids_redis_takes(http: httpx.AsyncClient) -> None:
    headers = await player(http)
    game = (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).json()
    log = f"/v1/games/{game['id']}/log"
    largest = "9" * 19 + "-" + "9" * 19
    page = await http.get(log, params={"after": largest})
    assert page.status_code == 200 and page.json()["moves"] == []
    for cursor in ("18446744073709551616-0", "1-" + "9" * 20, "1", "-1-1"):
        refused = await http.get(log, params={"after": cursor})
        assert refused.status_code == 400, cursor
        assert refused.json()["error"]["field"] == "after"


# Integral floats are integers (REST.md, "Numbers"), other floats and booleans are not.
async def test_integral_floats_are_integers(http: httpx.AsyncClient) -> None:
    headers = await player(http)
    game = (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).json()
    moves = f"/v1/games/{game['id']}/moves"
    for body in (
        {"move": "deal", "version": 0.5},
        {"move": "deal", "version": True},
        {"move": "deal", "version": 0, "client_time": 1.5},
        {"move": "deal", "version": 0, "client_time": -1.0},
    ):
        refused = await http.post(moves, json=body, headers=headers)
        assert refused.status_code == 400, body
        assert refused.json()["error"]["code"] == "invalid_field", body
    body = {"move": "deal", "version": 0.0, "client_time": 1.7e12}
    played = await http.post(moves, json=body, headers=headers)
    assert played.status_code == 200, played.text
    entry = (await http.get(f"/v1/games/{game['id']}/log")).json()["moves"][0]
    assert entry["client_time"] == 1_700_000_000_000 and isinstance(entry["client_time"], int)


# 5. /v1/audit: a body that is neither an export nor {"game_id"} by the schema is a 4xx.
async def test_audit_refuses_what_its_schema_refuses(http: httpx.AsyncClient) -> None:
    headers = await player(http)
    game = (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).json()
    await http.post(
        f"/v1/games/{game['id']}/moves", json={"move": "resign", "version": 0}, headers=headers
    )
    export = (await http.get(f"/v1/games/{game['id']}/replay")).json()
    document = openapi_document()
    audit_schema = document["paths"]["/v1/audit"]["post"]["requestBody"]
    assert audit_schema["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AuditRequest"
    }
    assert document["components"]["schemas"]["AuditRequest"] is rest.AUDIT_BODY
    assert conforms(document, rest.AUDIT_BODY, export) == []
    accepted = await http.post("/v1/audit", json=export, headers=headers)
    assert accepted.status_code == 200 and accepted.json()["integrity"] == "pass"

    def changed(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
        body = copy.deepcopy(export)
        target = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return body

    cases = [
        (changed(("deal_hash",), "not hex"), "invalid_field", "deal_hash"),
        (changed(("game_id",), "g_\u00e9"), "invalid_field", "game_id"),
        (changed(("moves", 0, "hash"), 7), "invalid_field", "moves[0].hash"),
        (changed(("extra",), 1), "unknown_field", "extra"),
        ({k: v for k, v in export.items() if k != "chain_head"}, "missing_field", "chain_head"),
        ({"game_id": 7}, "invalid_field", "game_id"),
    ]
    for body, code, field in cases:
        assert conforms(document, rest.AUDIT_BODY, body) != [], field
        refused = await http.post("/v1/audit", json=body, headers=headers)
        assert refused.status_code == 400, (field, refused.text)
        assert refused.json()["error"]["code"] == code, refused.text
        assert refused.json()["error"]["field"] == field, refused.text


# 6. Log.moves[].hash is the chain link; 7. daily is in Snapshot; and every answer of
# the server conforms to its schema in the document.
async def test_real_answers_conform_to_the_document(http: httpx.AsyncClient) -> None:
    document = (await http.get("/openapi.json")).json()
    assert document == openapi_document()
    headers = await player(http)

    async def conforming(method: str, path: str, route: str, status: int, **kw: Any) -> Any:
        response = await http.request(method, path, headers=headers, **kw)
        assert response.status_code == status, (path, response.text)
        body = response.json()
        schema = answer_schema(document, route, method.lower(), status)
        assert conforms(document, schema, body) == [], (path, body)
        assert undeclared(document, schema, body) == [], path
        return body

    ranked = await conforming("POST", "/v1/daily/colorado", "/v1/daily/{game}", 200)
    assert ranked["daily"] is not None
    assert "daily" in document["components"]["schemas"]["Snapshot"]["required"]
    casual = await conforming("POST", "/v1/games", "/v1/games", 201, json={"game": "colorado"})
    assert casual["daily"] is None
    game_id = casual["id"]
    move = casual["legal_moves"][0]
    reply = await conforming(
        "POST",
        f"/v1/games/{game_id}/moves",
        "/v1/games/{id}/moves",
        200,
        json={"move": move, "version": 0, "move_id": "m1", "client_time": 1},
    )
    assert reply["patch"]["to"] == 1
    await conforming("GET", f"/v1/games/{game_id}", "/v1/games/{id}", 200)
    await conforming("GET", "/v1/games", "/v1/games", 200)
    log = await conforming("GET", f"/v1/games/{game_id}/log", "/v1/games/{id}/log", 200)
    export = await conforming("GET", f"/v1/games/{game_id}/replay", "/v1/games/{id}/replay", 200)
    entry = log["moves"][0]
    genesis = chain.genesis(export["game_id"], export["game"], export["deal_hash"])
    assert entry["hash"] != entry["state_hash"]
    assert entry["hash"] == export["chain_head"]  # the last link is the head
    assert entry["hash"] != genesis
    described = document["components"]["schemas"]["Log"]["properties"]["moves"]["items"]
    assert "chain" in described["properties"]["hash"]["description"]
    await conforming("GET", "/v1/daily/colorado", "/v1/daily/{game}", 200)
    date = ranked["daily"]
    await conforming("GET", f"/v1/daily/colorado/{date}", "/v1/daily/{game}/{date}", 200)
    # A day long before any choice had no challenge.
    await conforming("GET", "/v1/daily/colorado/2020-01-01", "/v1/daily/{game}/{date}", 404)
    await conforming(
        "GET", f"/v1/leaderboards/colorado/{date}", "/v1/leaderboards/{game}/{date}", 200
    )
    await conforming(
        "GET", f"/v1/leaderboards/colorado/{date}/me", "/v1/leaderboards/{game}/{date}/me", 200
    )
    await conforming("POST", "/v1/audit", "/v1/audit", 200, json=export)
    await conforming("POST", "/v1/audit", "/v1/audit", 200, json={"game_id": game_id})
    error = await conforming("GET", "/v1/games/g_none", "/v1/games/{id}", 404)
    assert error["error"]["code"] == "unknown_game"


def keywords(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        found |= set(schema)
        for key, value in schema.items():
            if key == "properties":
                for item in value.values():
                    found |= keywords(item)
            elif key in ("items", "additionalProperties"):
                found |= keywords(value)
            elif key == "anyOf":
                for item in value:
                    found |= keywords(item)
    return found


def test_request_schemas_use_only_keywords_the_server_checks() -> None:
    """Every request schema of the document is the one its route checks, and says
    nothing the checker would ignore."""
    document = openapi_document()
    schemas = []
    for path, item in document["paths"].items():
        for operation in item.values():
            body = operation.get("requestBody")
            if body is not None:
                schema = body["content"]["application/json"]["schema"]
                if "$ref" in schema:
                    schema = document["components"]["schemas"][schema["$ref"].split("/")[-1]]
                schemas.append(schema)
                # none or {}
                optional = path in (
                    "/v1/players",
                    "/v1/daily/{game}",
                    "/v1/games/{id}/hint",
                    "/v1/games/{id}/restart",
                    "/v1/players/me/token",
                    "/v1/players/me/tokens",
                    "/v1/players/me/transfer",
                )
                assert body["required"] is not optional, path
            schemas += [p["schema"] for p in operation.get("parameters", []) if p["in"] != "path"]
    assert rest.MOVE_BODY in schemas and rest.AUDIT_BODY in schemas
    for schema in schemas:
        assert keywords(schema) <= KEYWORDS | ANNOTATIONS, keywords(schema) - KEYWORDS
