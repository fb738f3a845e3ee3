"""Operators (issue 25): credentials, the action trail and the actions, on two in-process
instances sharing one Redis (standalone and cluster)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from server_support import (
    ROOT,
    SECRET,
    SERVER_ENV,
    WAIT,
    Api,
    Player,
    RunningServer,
    bearer,
    error_code,
    run_app,
)

from server import daily
from server.accounts.revocation import REFUSAL_BOUND
from server.app import create_app
from server.config import Limits, Settings
from server.leaderboard import board_keys
from server.operator import credentials, trail
from server.service import now_ms
from server.testing import TEST_DAILY, until_chosen

GAME = "balcony"


@pytest.fixture
async def other(redis_url: str, redis_cluster: bool) -> AsyncIterator[RunningServer]:
    """A second instance on the same Redis."""
    async with run_app(redis_url, redis_cluster=redis_cluster) as running:
        yield running


@pytest.fixture
async def other_http(other: RunningServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=other.base_url, timeout=WAIT * 2) as client:
        yield client


@pytest.fixture
async def operator(redis_client) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The headers of operator ``alice``."""
    token, _ = await credentials.issue(redis_client, SECRET.encode(), "alice", now_ms())
    return bearer(token)


async def start_daily(http: httpx.AsyncClient, player: Player, game: str = GAME) -> Any:
    response = await until_chosen(lambda: http.post(f"/v1/daily/{game}", headers=player.headers))
    assert response.status_code == 200, response.text
    return response.json()


async def board_players(http: httpx.AsyncClient, game: str = GAME) -> list[str]:
    date = daily.today(now_ms())
    response = await http.get(f"/v1/leaderboards/{game}/{date}")
    assert response.status_code == 200, response.text
    return [entry["player_id"] for entry in response.json()["entries"]]


async def actions(http: httpx.AsyncClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    response = await http.get("/v1/operator/actions", headers=headers)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["actions"]
    return entries


ROUTES = [
    ("GET", "/v1/operator/actions"),
    ("GET", f"/v1/operator/attempts?game={GAME}&date=2026-01-01"),
    ("POST", "/v1/operator/attempts/g_x/void"),
    ("POST", "/v1/operator/attempts/g_x/reinstate"),
    ("POST", "/v1/operator/players/p_x/suspend"),
    ("POST", "/v1/operator/players/p_x/unsuspend"),
    ("POST", "/v1/operator/players/p_x/reset-name"),
    ("POST", "/v1/operator/players/p_x/revoke-tokens"),
]


async def test_operator_routes_take_only_a_current_operator_token(
    http, other_http, api: Api, operator, redis_client
) -> None:
    player = await api.player()
    forged = "op1.alice.9999999999.abc." + "A" * 43
    for method, path in ROUTES:
        body = {"reason": "x"} if method == "POST" else None
        for client in (http, other_http):
            none = await client.request(method, path, json=body)
            assert none.status_code == 401 and error_code(none) == "unauthorized", path
            as_player = await client.request(method, path, json=body, headers=player.headers)
            assert as_player.status_code == 403, (path, as_player.text)
            assert error_code(as_player) == "operator_required"
            fake = await client.request(method, path, json=body, headers=bearer(forged))
            assert fake.status_code == 401 and error_code(fake) == "unauthorized"
    # The operator's token is no player's: every player route refuses it.
    for path in ("/v1/players/me", "/v1/players/me/games"):
        answer = await http.get(path, headers=operator)
        assert answer.status_code == 401 and error_code(answer) == "unauthorized"
    created = await http.post("/v1/games", json={"game": GAME}, headers=operator)
    assert created.status_code == 401
    # Both instances take it; once revoked, neither does (each reads the record).
    for client in (http, other_http):
        assert (await client.get("/v1/operator/actions", headers=operator)).status_code == 200
    assert await credentials.revoke(redis_client, "alice")
    for client in (http, other_http):
        answer = await client.get("/v1/operator/actions", headers=operator)
        assert answer.status_code == 401 and error_code(answer) == "unauthorized"
    # A new token replaces the old one.
    first, _ = await credentials.issue(redis_client, SECRET.encode(), "bob", now_ms())
    second, _ = await credentials.issue(redis_client, SECRET.encode(), "bob", now_ms())
    assert (await other_http.get("/v1/operator/actions", headers=bearer(first))).status_code == 401
    assert (await other_http.get("/v1/operator/actions", headers=bearer(second))).status_code == 200
    # Nothing refused above wrote to the trail.
    assert await redis_client.xlen(trail.TRAIL_KEY) == 0


async def test_void_leaves_every_instances_board_at_once_and_can_be_undone(
    http, other_http, api: Api, operator, redis_client
) -> None:
    cheat, honest = await api.player(), await api.player()
    attempt = await start_daily(http, cheat)
    await start_daily(http, honest)
    assert set(await board_players(other_http)) == {cheat.player_id, honest.player_id}
    date = daily.today(now_ms())
    listed = await other_http.get(
        f"/v1/operator/attempts?game={GAME}&date={date}", headers=operator
    )
    assert listed.status_code == 200, listed.text
    games = {item["player_id"]: item["game_id"] for item in listed.json()["attempts"]}
    assert games[cheat.player_id] == attempt["id"] and listed.json()["total"] == 2

    path = f"/v1/operator/attempts/{attempt['id']}/void"
    voided = await http.post(
        path, json={"reason": "moves from a solver", "code": "fair_play"}, headers=operator
    )
    assert voided.status_code == 200, voided.text
    assert voided.json()["changed"] is True and voided.json()["rank"] is None
    # The other instance's very next read of the board has it gone.
    assert await board_players(other_http) == [honest.player_id]
    # Idempotent: a second void changes nothing and adds nothing to the trail.
    again = await other_http.post(path, json={"reason": "again"}, headers=operator)
    assert again.status_code == 200 and again.json()["changed"] is False
    assert again.json()["voided"]["reason"] == "moves from a solver"
    # The game and its entry are kept; its player sees the void's reason code.
    assert (await http.get(f"/v1/games/{attempt['id']}", headers=cheat.headers)).status_code == 200
    assert await redis_client.hexists(board_keys(GAME, date)[1], cheat.player_id)
    history = (await other_http.get("/v1/players/me/games", headers=cheat.headers)).json()
    assert [game["void_reason"] for game in history["games"]] == ["fair_play"]
    mine = (await http.get("/v1/players/me/games", headers=honest.headers)).json()
    assert [game["void_reason"] for game in mine["games"]] == [None]
    # A move of the voided attempt does not put it back.
    snapshot = (await http.get(f"/v1/games/{attempt['id']}", headers=cheat.headers)).json()
    moved = await http.post(
        f"/v1/games/{attempt['id']}/moves",
        json={"move": "resign", "version": snapshot["version"]},
        headers=cheat.headers,
    )
    assert moved.status_code == 200, moved.text
    assert await board_players(http) == [honest.player_id]
    # Reinstated on the other instance: back on the first one's board.
    back = await other_http.post(
        f"/v1/operator/attempts/{attempt['id']}/reinstate",
        json={"reason": "false alarm"},
        headers=operator,
    )
    assert back.status_code == 200 and back.json()["changed"] is True
    assert back.json()["voided"] is None and back.json()["rank"] is not None
    assert set(await board_players(http)) == {cheat.player_id, honest.player_id}
    trail_entries = await actions(http, operator)
    assert [(e["action"], e["operator"], e["game_id"]) for e in trail_entries] == [
        ("reinstate", "alice", attempt["id"]),
        ("void", "alice", attempt["id"]),
    ]
    assert trail_entries[1]["reason"] == "moves from a solver"
    assert trail_entries[1]["details"]["code"] == "fair_play"


async def test_a_suspension_stops_ranked_play_hides_entries_and_lifts(
    server: RunningServer, http, other_http, api: Api, operator
) -> None:
    player, bystander = await api.player(), await api.player()
    await start_daily(http, player)
    await start_daily(http, bystander)
    until = now_ms() + 1500
    path = f"/v1/operator/players/{player.player_id}/suspend"
    answer = await http.post(
        path, json={"reason": "scripted play", "until": until}, headers=operator
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["suspension"]["until"] == until
    # Every instance: no new ranked attempt, the entry off the board; casual play goes on.
    refused = await other_http.post("/v1/daily/colorado", headers=player.headers)
    assert refused.status_code == 403 and error_code(refused) == "account_suspended"
    assert refused.json()["error"]["until"] == until
    assert await board_players(other_http) == [bystander.player_id]
    casual = await other_http.post("/v1/games", json={"game": GAME}, headers=player.headers)
    assert casual.status_code == 201
    me = (await other_http.get("/v1/players/me", headers=player.headers)).json()
    assert me["suspended"] is True and me["suspended_until"] == until
    # Past `until`: ranked play is open again at once, and the sweep shows the entry again.
    await asyncio.sleep((until - now_ms()) / 1000 + 0.1)
    me = (await http.get("/v1/players/me", headers=player.headers)).json()
    assert me["suspended"] is False and me["suspended_until"] is None
    assert (await server.app.state.operations.lift_expired()) == 1
    assert set(await board_players(other_http)) == {player.player_id, bystander.player_id}
    await start_daily(other_http, player, "colorado")
    # Indefinite, then lifted by hand on the other instance.
    answer = await http.post(path, json={"reason": "abuse"}, headers=operator)
    assert answer.json()["suspension"]["until"] is None
    refused = await http.post("/v1/daily/gloucestershire", headers=player.headers)
    assert error_code(refused) == "account_suspended" and refused.json()["error"]["until"] is None
    assert await board_players(other_http, "colorado") == []
    lifted = await other_http.post(
        f"/v1/operator/players/{player.player_id}/unsuspend",
        json={"reason": "appeal granted"},
        headers=operator,
    )
    assert lifted.status_code == 200 and lifted.json()["changed"] is True
    assert await board_players(http, "colorado") == [player.player_id]
    again = await other_http.post(
        f"/v1/operator/players/{player.player_id}/unsuspend", json={"reason": "x"}, headers=operator
    )
    assert again.json()["changed"] is False
    assert [(e["action"], e["operator"]) for e in await actions(http, operator)] == [
        ("unsuspend", "alice"),
        ("suspend", "alice"),
        ("unsuspend", "system"),
        ("suspend", "alice"),
    ]


async def test_a_reset_name_is_neutral_and_the_old_one_stays_taken(
    http, other_http, api: Api, operator
) -> None:
    named = await http.post("/v1/players", json={"name": "Rude Name"})
    player = Player(named.json()["player_id"], named.json()["token"])
    answer = await other_http.post(
        f"/v1/operator/players/{player.player_id}/reset-name",
        json={"reason": "offensive"},
        headers=operator,
    )
    assert answer.status_code == 200, answer.text
    neutral = answer.json()["name"]
    assert neutral.startswith("player-") and answer.json()["changed"] is True
    assert (await http.get("/v1/players/me", headers=player.headers)).json()["name"] == neutral
    for client, body in ((http, {"name": "rude name"}), (other_http, {"name": "RUDE NAME"})):
        taken = await client.post("/v1/players", json=body)
        assert taken.status_code == 409 and error_code(taken) == "name_taken"
    back = await http.put("/v1/players/me", json={"name": "Rude Name"}, headers=player.headers)
    assert back.status_code == 409 and error_code(back) == "name_taken"
    [entry] = await actions(http, operator)
    assert entry["details"] == {"old_name": "Rude Name", "new_name": neutral}


async def test_revoke_tokens_is_refused_on_every_instance_within_the_bound(
    http, other_http, api: Api, operator
) -> None:
    player = await api.player()
    assert (await other_http.get("/v1/players/me", headers=player.headers)).status_code == 200
    answer = await http.post(
        f"/v1/operator/players/{player.player_id}/revoke-tokens",
        json={"reason": "account takeover"},
        headers=operator,
    )
    revoked_at = time.monotonic()
    assert answer.status_code == 200, answer.text
    while True:
        refused = await other_http.get("/v1/players/me", headers=player.headers)
        if refused.status_code == 401:
            break
        assert time.monotonic() - revoked_at < REFUSAL_BOUND, "still accepted past the bound"
        await asyncio.sleep(0.05)
    assert error_code(refused) == "token_revoked"
    [entry] = await actions(other_http, operator)
    assert (entry["action"], entry["player_id"]) == ("revoke_tokens", player.player_id)


async def test_bad_operator_calls_are_typed_and_change_nothing(
    http, api: Api, operator, redis_client
) -> None:
    player = await api.player()
    attempt = await start_daily(http, player)
    casual = await api.create_game(player, GAME)
    date = daily.today(now_ms())
    cases = [
        ("POST", "/v1/operator/attempts/g_nothing/void", {"reason": "x"}, 404, "unknown_attempt"),
        (
            "POST",
            f"/v1/operator/attempts/{casual['id']}/void",
            {"reason": "x"},
            404,
            "unknown_attempt",
        ),
        ("POST", f"/v1/operator/attempts/{'g' * 80}/void", {"reason": "x"}, 404, "unknown_attempt"),
        ("POST", f"/v1/operator/attempts/{attempt['id']}/void", {}, 400, "missing_field"),
        (
            "POST",
            f"/v1/operator/attempts/{attempt['id']}/void",
            {"reason": ""},
            400,
            "invalid_field",
        ),
        (
            "POST",
            f"/v1/operator/attempts/{attempt['id']}/void",
            {"reason": "x" * 501},
            400,
            "invalid_field",
        ),
        (
            "POST",
            f"/v1/operator/attempts/{attempt['id']}/void",
            {"reason": "x", "code": "spite"},
            400,
            "invalid_field",
        ),
        (
            "POST",
            f"/v1/operator/attempts/{attempt['id']}/void",
            {"reason": "x", "extra": 1},
            400,
            "unknown_field",
        ),
        (
            "POST",
            f"/v1/operator/attempts/{attempt['id']}/reinstate",
            {"reason": 5},
            400,
            "invalid_field",
        ),
        ("POST", "/v1/operator/players/p_nobody/suspend", {"reason": "x"}, 404, "unknown_player"),
        (
            "POST",
            f"/v1/operator/players/{player.player_id}/suspend",
            {"reason": "x", "until": 5},
            400,
            "invalid_field",
        ),
        (
            "POST",
            f"/v1/operator/players/{player.player_id}/suspend",
            {"reason": "x", "until": "soon"},
            400,
            "invalid_field",
        ),
        (
            "POST",
            "/v1/operator/players/p_nobody/reset-name",
            {"reason": "x"},
            404,
            "unknown_player",
        ),
        (
            "POST",
            "/v1/operator/players/p_nobody/revoke-tokens",
            {"reason": "x"},
            404,
            "unknown_player",
        ),
        ("POST", "/v1/operator/players/p_nobody/unsuspend", {"reason": "x"}, 404, "unknown_player"),
        ("GET", "/v1/operator/attempts", None, 400, "missing_field"),
        ("GET", f"/v1/operator/attempts?game={GAME}", None, 400, "missing_field"),
        ("GET", f"/v1/operator/attempts?game=chess&date={date}", None, 404, "unknown_game_name"),
        ("GET", f"/v1/operator/attempts?game={GAME}&date=2026-13-40", None, 400, "invalid_field"),
        (
            "GET",
            f"/v1/operator/attempts?game={GAME}&date={date}&limit=0",
            None,
            400,
            "invalid_field",
        ),
        ("GET", "/v1/operator/actions?limit=100000", None, 400, "invalid_field"),
        ("GET", "/v1/operator/actions?before=yesterday", None, 400, "invalid_field"),
    ]
    before = await board_players(http)
    for method, path, body, status, code in cases:
        answer = await http.request(method, path, json=body, headers=operator)
        assert (answer.status_code, error_code(answer)) == (status, code), (path, body, answer.text)
    raw = await http.post(
        f"/v1/operator/attempts/{attempt['id']}/void",
        content=b"{not json",
        headers={**operator, "Content-Type": "application/json"},
    )
    assert raw.status_code == 400 and error_code(raw) == "malformed"
    assert await board_players(http) == before
    assert await redis_client.xlen(trail.TRAIL_KEY) == 0
    me = (await http.get("/v1/players/me", headers=player.headers)).json()
    assert me["suspended"] is False


async def test_the_trail_pages_keeps_by_age_and_holds_no_secret(
    http, api: Api, operator, redis_client
) -> None:
    old_id = await redis_client.xadd(
        trail.TRAIL_KEY,
        {
            "at": 1,
            "operator": "x",
            "action": "void",
            "player_id": "",
            "game_id": "",
            "reason": "",
            "details": "{}",
        },
        id="1000-0",
    )
    assert old_id
    players = [await api.player() for _ in range(3)]
    for player in players:
        answer = await http.post(
            f"/v1/operator/players/{player.player_id}/revoke-tokens",
            json={"reason": "test"},
            headers=operator,
        )
        assert answer.status_code == 200
    # The entry older than --operator-trail-days went with the first append.
    assert await redis_client.xlen(trail.TRAIL_KEY) == 3
    first = (await http.get("/v1/operator/actions?limit=2", headers=operator)).json()
    assert [e["player_id"] for e in first["actions"]] == [p.player_id for p in players[::-1][:2]]
    rest = await http.get(f"/v1/operator/actions?limit=2&before={first['next']}", headers=operator)
    assert [e["player_id"] for e in rest.json()["actions"]] == [players[0].player_id]
    assert rest.json()["next"] is None
    stored = json.dumps(
        [
            [key.decode(), value.decode()]
            for _, fields in await redis_client.xrange(trail.TRAIL_KEY)
            for key, value in fields.items()
        ]
    )
    secrets = [operator["Authorization"].split()[1], SECRET, *(p.token for p in players)]
    assert not any(secret in stored for secret in secrets)


async def test_operator_routes_are_rate_limited(
    redis_url: str, redis_cluster: bool, redis_client
) -> None:
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=0,
        redis_cluster=redis_cluster,
        limits=Limits(operator_requests_per_minute=3),
        daily=TEST_DAILY,
    )
    token, _ = await credentials.issue(redis_client, SECRET.encode(), "carol", now_ms())
    async with (
        run_app(redis_url, app=create_app(settings)) as running,
        httpx.AsyncClient(base_url=running.base_url, timeout=WAIT) as client,
    ):
        codes = [
            (await client.get("/v1/operator/actions", headers=bearer(token))).status_code
            for _ in range(4)
        ]
        refused = await client.get("/v1/operator/actions", headers=bearer(token))
    assert codes == [200, 200, 200, 429]
    assert refused.json()["error"]["limit"] == "operator_requests"


async def operator_cli(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m server.operator ARGS`` with only the variables ``env`` gives."""
    clean = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "server.operator", *args],
        cwd=ROOT,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_command_line_issues_revokes_and_exports_on_the_servers_store(
    http, other_http, redis_url: str, redis_cluster: bool, redis_client
) -> None:
    store = ["--redis-url", redis_url, *(["--redis-cluster"] if redis_cluster else [])]
    issued = await operator_cli(
        "token", "dave", *store, "--expires", "2h", env={"SERVER_SECRET": SECRET}
    )
    assert issued.returncode == 0, issued.stderr
    token = issued.stdout.strip().splitlines()[-1]
    assert token.startswith("op1.dave.")
    for client in (http, other_http):
        assert (await client.get("/v1/operator/actions", headers=bearer(token))).status_code == 200
    revoked = await operator_cli("revoke", "dave", *store, "--secret", SECRET)
    assert revoked.returncode == 0, revoked.stderr
    for client in (http, other_http):
        assert (await client.get("/v1/operator/actions", headers=bearer(token))).status_code == 401
    again = await operator_cli("revoke", "dave", *store, "--secret", SECRET)
    assert again.returncode == 1
    exported = await operator_cli("actions", *store, "--secret", SECRET)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [(e["operator"], e["action"], e["details"]["operator"]) for e in lines] == [
        ("cli", "operator_token_issued", "dave"),
        ("cli", "operator_token_revoked", "dave"),
    ]
    assert token not in exported.stdout and SECRET not in exported.stdout
    for bad in (["token", "system"], ["token", "Dave!"], ["token", "dave", "--expires", "400d"]):
        refused = await operator_cli(*bad, *store, "--secret", SECRET)
        assert refused.returncode == 2, refused.stdout
