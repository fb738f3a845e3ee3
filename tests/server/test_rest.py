"""REST flows of the five games, content negotiation and the OpenAPI document."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import httpx
import msgpack
import pytest
import pytest_asyncio
from redis.asyncio import Redis
from server_support import WAIT, Api, RunningServer, all_keys, bearer, error_code, run_app
from starlette.routing import Route

from server.app import ROUTES
from server.redisconn import connect
from server.rules import GAME_NAMES, GAMES, new_game

SNAPSHOT_KEYS = {"id", "game", "version", "status", "score", "view", "legal_moves"}
MSGPACK = "application/msgpack"


# One in-process server serves every test of this module (they only add players and
# games, each test on a freshly flushed database): one start-up, not one a test.  So the
# tests run in the module's event loop, and the async fixtures they use are redefined here.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(redis_module_url: str, redis_cluster: bool) -> AsyncIterator[RunningServer]:
    async with run_app(redis_module_url, redis_cluster=redis_cluster) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def http(server: RunningServer, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=WAIT * 2) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="module")
async def redis_client(redis_url: str, redis_cluster: bool) -> AsyncIterator[Redis]:
    client = connect(redis_url, redis_cluster)
    yield client
    await client.aclose()


def engine_snapshot(game, version: int) -> dict:
    return {
        "version": version,
        "status": game.status,
        "score": game.score,
        "view": game.view(),
        "legal_moves": list(game.legal_moves()),
    }


def same_state(snapshot: dict, expected: dict) -> None:
    assert set(snapshot) >= SNAPSHOT_KEYS, snapshot.keys()
    assert {key: snapshot[key] for key in expected} == expected


async def test_list_games(http) -> None:
    response = await http.get("/v1/games")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    games = response.json()["games"]
    assert [game["name"] for game in games] == list(GAME_NAMES)
    assert len(games) == 5
    for game in games:
        cls = GAMES[game["name"]]
        assert game == {
            "name": cls.name,
            "title": cls.title,
            "decks": cls.decks,
            "summary": cls.summary,
            "piles": cls.pile_hints,
        }
        assert isinstance(game["summary"], str) and len(game["summary"]) > 20
        # A hint for every pile kind the game has (the web client labels its piles with them).
        kinds = {"foundation", "tableau", *cls.single_piles}
        assert set(game["piles"]) == kinds, game["name"]


@pytest.mark.parametrize("name", GAME_NAMES)
async def test_game_flow(api: Api, http, name: str) -> None:
    owner = await api.player()
    other = await api.player()
    assert owner.player_id != other.player_id
    assert owner.player_id.startswith("p_")
    seed = f"rest-{name}"

    created = await api.create_game(owner, name, seed)
    engine = new_game(name, seed)
    assert created["game"] == name
    assert created["id"].startswith("g_")
    same_state(created, engine_snapshot(engine, 0))
    assert created["view"] == new_game(name, seed).view()
    game_id = created["id"]

    # Several legal moves, each checked against the engine replaying the same moves.
    rng = random.Random(name)
    version = 0
    played = []
    for step in range(8):
        legal = engine.legal_moves()
        assert legal, f"{name} {seed} is stuck after {step} moves"
        move = rng.choice(legal)
        client_time = 1_700_000_000_000 + step if step % 2 else None
        extra = {"client_time": client_time} if client_time else {}
        reply = await api.move(owner, game_id, move, version, **extra)
        ops = engine.play(move)
        version += 1
        played.append((move, client_time))
        assert set(reply) == {"snapshot", "patch", "version", "applied_version", "duplicate"}
        assert reply["duplicate"] is False
        assert reply["version"] == reply["applied_version"] == version
        same_state(reply["snapshot"], engine_snapshot(engine, version))
        patch = reply["patch"]
        assert patch["type"] == "patch"
        assert patch["game_id"] == game_id
        assert (patch["from"], patch["to"]) == (version - 1, version)
        assert patch["move"] == move
        assert patch["ops"] == ops
        assert (patch["status"], patch["score"]) == (engine.status, engine.score)
        if name == "matrimony":
            assert patch["redeals_left"] == engine.redeals_left
        else:
            assert "redeals_left" not in patch
        if engine.is_over:
            break

    # The owner sees the legal moves; another player and nobody in particular do not.
    as_owner = await api.get(game_id, owner)
    same_state(as_owner, engine_snapshot(engine, version))
    for viewer in (other, None):
        seen = await api.get(game_id, viewer)
        assert seen["legal_moves"] is None
        assert seen["view"] == engine.view()
        assert seen["version"] == version

    # The log: every move, with versions and times; no seed while playing.
    log = await api.log(game_id)
    assert log["game_id"] == game_id
    assert log["game"] == name
    assert log["version"] == version
    assert log["status"] == engine.status
    assert log["seed"] is None or engine.is_over
    assert [entry["version"] for entry in log["moves"]] == list(range(1, version + 1))
    assert [entry["move"] for entry in log["moves"]] == [move for move, _ in played]
    assert [entry["client_time"] for entry in log["moves"]] == [t for _, t in played]
    times = [entry["server_time"] for entry in log["moves"]]
    assert all(isinstance(t, int) and t > 1_600_000_000_000 for t in times)
    assert times == sorted(times)

    if not engine.is_over:
        assert log["seed"] is None
        reply = await api.move(owner, game_id, "resign", version)
        engine.play("resign")
        version += 1
        assert reply["snapshot"]["status"] == "resigned"
        assert reply["snapshot"]["legal_moves"] == []
        assert reply["patch"]["ops"] == []
    log = await api.log(game_id)
    assert log["status"] == engine.status != "playing"
    assert log["seed"] == seed
    assert len(log["moves"]) == version


async def test_metrics_are_off_on_the_api_port_by_default(http) -> None:
    """Neither ``--metrics-port`` nor ``--metrics-token``: the public port serves no
    metrics to anyone (an anonymous scrape cost a full exposition each)."""
    for headers in ({}, bearer("anything")):
        answer = await http.get("/metrics", headers=headers)
        assert answer.status_code == 404, answer.text
        assert error_code(answer) == "not_found" and "--metrics-token" in answer.text
        assert "solitaire_" not in answer.text


async def test_random_seed_when_none_given(api: Api) -> None:
    owner = await api.player()
    first = await api.create_game(owner, "balcony")
    second = await api.create_game(owner, "balcony")
    assert first["id"] != second["id"]
    assert first["version"] == 0 and first["status"] == "playing"


async def test_msgpack_requests_and_responses(http, api: Api) -> None:
    # Request and response in msgpack.
    response = await http.post("/v1/players", headers={"Accept": MSGPACK})
    assert response.status_code == 201
    assert response.headers["content-type"].startswith(MSGPACK)
    player = msgpack.unpackb(response.content)
    headers = {**bearer(player["token"]), "Accept": MSGPACK, "Content-Type": MSGPACK}

    body = msgpack.packb({"game": "balcony", "seed": "abc"})
    response = await http.post("/v1/games", content=body, headers=headers)
    assert response.status_code == 201, response.content
    assert response.headers["content-type"].startswith(MSGPACK)
    snapshot = msgpack.unpackb(response.content)
    engine = new_game("balcony", "abc")
    same_state(snapshot, engine_snapshot(engine, 0))

    move = engine.legal_moves()[0]
    body = msgpack.packb({"move": move, "version": 0})
    response = await http.post(f"/v1/games/{snapshot['id']}/moves", content=body, headers=headers)
    assert response.status_code == 200, response.content
    reply = msgpack.unpackb(response.content)
    engine.play(move)
    same_state(reply["snapshot"], engine_snapshot(engine, 1))

    # A msgpack request may ask for a JSON answer, and JSON is the default.
    response = await http.get(f"/v1/games/{snapshot['id']}")
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["view"] == engine.view()
    for accept in ("application/json", "*/*", "application/*", "text/html, */*;q=0.1"):
        response = await http.get(f"/v1/games/{snapshot['id']}", headers={"Accept": accept})
        assert response.status_code == 200, accept
        assert response.headers["content-type"].startswith("application/json"), accept
    for accept in (
        MSGPACK,
        "application/x-msgpack",
        "application/json;q=0.5, application/msgpack",
    ):
        response = await http.get(f"/v1/games/{snapshot['id']}", headers={"Accept": accept})
        assert response.headers["content-type"].startswith(MSGPACK), accept
        assert msgpack.unpackb(response.content)["view"] == engine.view()

    # Errors are negotiated too.
    response = await http.get("/v1/games/g_missing", headers={"Accept": MSGPACK})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith(MSGPACK)
    assert error_code(response) == "unknown_game"


async def test_not_acceptable(http, api: Api, redis_client) -> None:
    owner = await api.player()
    created = await api.create_game(owner, "balcony", "abc")
    html = {"Accept": "text/html"}
    before = await all_keys(redis_client)

    response = await http.get("/v1/games", headers=html)
    assert response.status_code == 406, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert error_code(response) == "not_acceptable"

    response = await http.get(f"/v1/games/{created['id']}", headers=html)
    assert response.status_code == 406
    assert error_code(response) == "not_acceptable"

    # Refused before anything is done: no game is created, no move is played.
    response = await http.post(
        "/v1/games", json={"game": "balcony"}, headers={**owner.headers, **html}
    )
    assert response.status_code == 406
    assert error_code(response) == "not_acceptable"
    move = created["legal_moves"][0]
    response = await http.post(
        f"/v1/games/{created['id']}/moves",
        json={"move": move, "version": 0},
        headers={**owner.headers, "Accept": "application/json;q=0, text/plain"},
    )
    assert response.status_code == 406
    assert error_code(response) == "not_acceptable"
    assert await all_keys(redis_client) == before
    assert (await api.get(created["id"]))["version"] == 0


async def test_openapi_document(http) -> None:
    response = await http.get("/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["title"] and document["info"]["version"]
    expected: dict[str, set[str]] = {}
    for route in ROUTES:
        if isinstance(route, Route):
            methods = {method.lower() for method in route.methods or {"GET"}} - {"head"}
            expected.setdefault(route.path, set()).update(methods)
    assert "/v1/games/{id}/moves" in expected
    assert set(document["paths"]) == set(expected)
    http_methods = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}
    for path, item in document["paths"].items():
        operations = {key for key in item if key in http_methods}
        assert operations == expected[path], path
        for method in operations:
            operation = item[method]
            assert operation["responses"], (path, method)
            for status in operation["responses"]:
                assert status == "default" or 100 <= int(status) < 600
        for parameter in item.get("parameters", []):
            assert parameter["in"] == "path"
            assert "{" + parameter["name"] + "}" in path
        # A method the document does not list is a 405 whose Allow lists the ones it does.
        concrete = path.replace("{id}", "g_x").replace("{game}", "colorado")
        concrete = concrete.replace("{date}", "2026-01-01")
        unlisted = next(m for m in ("DELETE", "PUT", "POST") if m.lower() not in operations)
        response = await http.request(unlisted, concrete)
        assert response.status_code == 405, path
        allowed = {method.upper() for method in operations}
        allowed |= {"HEAD"} if "GET" in allowed else set()
        assert set(response.headers["allow"].split(", ")) == allowed, path


async def test_log_stays_encodable_with_the_largest_client_time(http, api: Api) -> None:
    owner = await api.player()
    created = await api.create_game(owner, "balcony", "abc")
    reply = await api.move(owner, created["id"], "deal", 0, client_time=2**63 - 1)
    assert reply["snapshot"]["version"] == 1
    for path in ("log", "replay"):
        response = await http.get(f"/v1/games/{created['id']}/{path}", headers={"Accept": MSGPACK})
        assert response.status_code == 200, (path, response.content)
        moves = msgpack.unpackb(response.content)["moves"]
        assert [move["client_time"] for move in moves] == [2**63 - 1]
