"""Accounts that last (issue 24): token renewal and revocation ("sign out everywhere"),
on two in-process instances sharing one Redis (standalone and cluster)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from server_support import (
    SECRET,
    WAIT,
    Api,
    Player,
    RunningServer,
    bearer,
    error_code,
    run_app,
    ws_clients,
)
from websockets.exceptions import ConnectionClosed

from server import auth
from server.accounts import tokens, transfer
from server.accounts.revocation import (
    POLL_INTERVAL,
    REFUSAL_BOUND,
    STALE_AFTER,
    not_before_key,
)
from server.audit import audit_leaderboard
from server.daily import closes_ms
from server.players import player_key
from server.store import game_key
from server.testing import dailies_chosen


@pytest.fixture
async def other(redis_url: str, redis_cluster: bool) -> AsyncIterator[RunningServer]:
    """A second instance on the same Redis."""
    async with run_app(redis_url, redis_cluster=redis_cluster) as running:
        yield running


@pytest.fixture
async def other_http(other: RunningServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=other.base_url, timeout=WAIT * 2) as client:
        yield client


async def renew(http: httpx.AsyncClient, token: str) -> httpx.Response:
    return await http.post("/v1/players/me/token", headers=bearer(token))


async def test_renewal_gives_a_fresh_token_of_the_same_player(http, api: Api) -> None:
    response = await http.post("/v1/players", json={"name": "Renewer"})
    me = Player(response.json()["player_id"], response.json()["token"])
    before = time.time()
    response = await renew(http, me.token)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"player_id", "token", "name", "expires_at"}
    assert body["player_id"] == me.player_id and body["name"] == "Renewer"
    expires = int(body["token"].split(".")[2])
    assert body["expires_at"] == expires * 1000
    assert before + auth.TOKEN_LIFETIME - 1 <= expires <= time.time() + auth.TOKEN_LIFETIME
    fresh = Player(me.player_id, body["token"])
    answer = await http.get("/v1/players/me", headers=fresh.headers)
    assert answer.status_code == 200 and answer.json()["player_id"] == me.player_id
    # The old token stays valid until it expires (renewal is no revocation).
    assert (await http.get("/v1/players/me", headers=me.headers)).status_code == 200


async def test_renewal_keeps_the_players_record_alive(http, api: Api, redis_client) -> None:
    me = await api.player()
    await api.create_game(me, "balcony", "keep-alive")
    for key in (player_key(me.player_id), f"{player_key(me.player_id)}:games"):
        await redis_client.expire(key, 60)  # as if the player had been idle for a month
    assert (await renew(http, me.token)).status_code == 200
    idle_ttl = 30 * 24 * 3600
    for key in (player_key(me.player_id), f"{player_key(me.player_id)}:games"):
        assert await redis_client.ttl(key) > idle_ttl - 60, key


async def test_renewal_refuses_a_missing_forged_or_expired_token_and_a_body(http, api: Api) -> None:
    me = await api.player()
    assert error_code(await http.post("/v1/players/me/token")) == "unauthorized"
    forged = me.token[:-2] + ("AA" if not me.token.endswith("AA") else "BB")
    response = await renew(http, forged)
    assert response.status_code == 401 and error_code(response) == "unauthorized"
    expired = auth.issue_token(b"x" * 32, me.player_id, time.time() - auth.TOKEN_LIFETIME - 5)
    assert error_code(await renew(http, expired)) == "unauthorized"
    response = await http.post("/v1/players/me/token", json={"ttl": 5}, headers=me.headers)
    assert response.status_code == 400 and error_code(response) == "unknown_field"
    response = await http.post(
        "/v1/players/me/token",
        content=b"[1",
        headers={**me.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and error_code(response) == "malformed"
    response = await http.delete("/v1/players/me/tokens", headers=bearer("v1.x.1.y"))
    assert response.status_code == 401 and error_code(response) == "unauthorized"
    # Nothing refused above revoked anything.
    assert (await http.get("/v1/players/me", headers=me.headers)).status_code == 200


async def test_sign_out_everywhere_is_refused_on_every_instance_within_the_bound(
    http, api: Api, other_http: httpx.AsyncClient, redis_client
) -> None:
    me = await api.player()
    renewed = Player(me.player_id, (await renew(http, me.token)).json()["token"])
    bystander = await api.player()
    for client in (http, other_http):  # the other instance knows the tokens as good
        assert (await client.get("/v1/players/me", headers=renewed.headers)).status_code == 200
    response = await http.delete("/v1/players/me/tokens", headers=me.headers)
    revoked_at = time.monotonic()
    assert response.status_code == 200, response.text
    assert response.json()["player_id"] == me.player_id
    assert await redis_client.get(not_before_key(me.player_id)) is not None
    # The instance that revoked refuses both tokens at once...
    for token in (me.token, renewed.token):
        answer = await http.get("/v1/players/me", headers=bearer(token))
        assert answer.status_code == 401 and error_code(answer) == "token_revoked"
    # ... and renewal is refused everywhere at once (it reads the revocation itself).
    answer = await renew(other_http, renewed.token)
    assert answer.status_code == 401 and error_code(answer) == "token_revoked"
    # The other instance refuses every request within the bound.
    while True:
        answer = await other_http.get("/v1/players/me/stats", headers=me.headers)
        if answer.status_code == 401:
            break
        assert time.monotonic() - revoked_at < REFUSAL_BOUND, "still accepted past the bound"
        await asyncio.sleep(0.05)
    assert error_code(answer) == "token_revoked"
    assert time.monotonic() - revoked_at < REFUSAL_BOUND
    moved = await other_http.post("/v1/games", json={"game": "balcony"}, headers=me.headers)
    assert error_code(moved) == "token_revoked"
    # Another player is untouched.
    answer = await other_http.get("/v1/players/me", headers=bystander.headers)
    assert answer.status_code == 200


async def test_an_instance_that_cannot_read_the_revocations_refuses_tokens_until_it_can(
    server: RunningServer, http, api: Api
) -> None:
    """Fail closed: an instance whose copy is older than STALE_AFTER (its reads failed
    meanwhile) might miss a revocation, so it refuses every token, until its next read."""
    me = await api.player()
    revocations = server.app.state.service.revocations
    revocations._synced_at -= STALE_AFTER + 1  # as if the last reads had failed
    refused = await http.get("/v1/players/me", headers=me.headers)
    assert refused.status_code == 503 and error_code(refused) == "store_unavailable"
    assert (await http.get("/v1/games")).status_code == 200  # no token, no refusal
    await asyncio.sleep(POLL_INTERVAL * 2)  # the next read
    assert (await http.get("/v1/players/me", headers=me.headers)).status_code == 200


async def test_a_token_issued_after_a_revocation_is_good(server: RunningServer, api: Api) -> None:
    """Even in the very second of the revocation (a token counts as issued no earlier
    than the player's latest revocation)."""
    me = await api.player()
    service = server.app.state.service
    await tokens.sign_out_everywhere(service, me.player_id)
    fresh = (await tokens.token_answer(service, me.player_id))["token"]
    assert service.authenticate(fresh) == me.player_id
    answer = await api.http.get("/v1/players/me", headers=bearer(fresh))
    assert answer.status_code == 200


async def test_an_open_websocket_of_a_revoked_player_is_told_and_closed(
    http, api: Api, other: RunningServer
) -> None:
    me, bystander = await api.player(), await api.player()
    game = await api.create_game(me, "balcony", "revoked-socket")
    async with ws_clients(other.ws_url) as connect:
        mine, theirs = await connect(), await connect()
        await mine.auth(me)
        await theirs.auth(bystander)
        for client in (mine, theirs):
            await client.subscribe(game["id"])
            await client.recv("snapshot")
        response = await http.delete("/v1/players/me/tokens", headers=me.headers)
        assert response.status_code == 200
        revoked_at = time.monotonic()
        error = await mine.recv("error", timeout=REFUSAL_BOUND + 1)
        assert error["code"] == "token_revoked" and error["in_reply_to"] is None
        assert time.monotonic() - revoked_at < REFUSAL_BOUND
        with pytest.raises(ConnectionClosed):
            await mine.recv(timeout=WAIT)
        assert mine.connection.close_code == 1008
        assert await theirs.ping() == []  # the other player's socket stays
        # A new socket cannot authenticate with the revoked token.
        again = await connect()
        await again.send({"type": "auth", "token": me.token})
        assert (await again.recv("error"))["code"] == "token_revoked"


async def test_a_server_without_an_identity_provider_says_so(http, api: Api) -> None:
    me = await api.player()
    for path, headers in (("/v1/players/login", {}), ("/v1/players/me/identity", me.headers)):
        response = await http.post(path, json={"id_token": "a.b.c"}, headers=headers)
        assert response.status_code == 404 and error_code(response) == "identity_disabled"
    assert (await http.get("/v1/players/me", headers=me.headers)).json()["identity"] is None


# -- transfer codes ---------------------------------------------------------------------


async def new_code(http: httpx.AsyncClient, player: Player) -> dict:
    response = await http.post("/v1/players/me/transfer", headers=player.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def redeem(http: httpx.AsyncClient, code: str) -> httpx.Response:
    return await http.post("/v1/players/transfer", json={"code": code})


async def test_a_transfer_code_moves_the_player_to_a_new_device(
    http, api: Api, other_http: httpx.AsyncClient, redis_client
) -> None:
    response = await http.post("/v1/players", json={"name": "Mover"})
    me = Player(response.json()["player_id"], response.json()["token"])
    await api.create_game(me, "balcony", "moved")
    issued = await new_code(http, me)
    code = issued["code"]
    assert transfer.normal(code) and len(code) == 19 and code.count("-") == 3
    assert 80 <= 16 * 5  # 16 characters of a 32-letter alphabet: 80 bits (>= 60)
    now_ms = time.time() * 1000
    assert now_ms + 14 * 60_000 < issued["expires_at"] <= now_ms + 15 * 60_000 + 1000
    # Listed in the account view, never the code itself (nor in Redis).
    view = await http.get("/v1/players/me", headers=me.headers)
    [pending] = view.json()["transfer_codes"]
    assert pending["expires_at"] == issued["expires_at"]
    assert transfer.normal(code) not in view.text
    for key in await redis_client.keys("*"):
        value = await redis_client.type(key)
        assert transfer.normal(code).encode() not in key, key
        if value == b"string":
            assert transfer.normal(code).encode() not in await redis_client.get(key)
    # The new device (another instance) types it in lower case, without dashes.
    moved = await redeem(other_http, code.replace("-", "").lower())
    assert moved.status_code == 200, moved.text
    body = moved.json()
    assert body["player_id"] == me.player_id and body["name"] == "Mover"
    new_device = Player(me.player_id, body["token"])
    games = await other_http.get("/v1/players/me/games", headers=new_device.headers)
    assert [game["game"] for game in games.json()["games"]] == ["balcony"]
    # Single use; and no longer listed.
    again = await redeem(http, code)
    assert again.status_code == 404 and error_code(again) == "unknown_transfer_code"
    view = await http.get("/v1/players/me", headers=me.headers)
    assert view.json()["transfer_codes"] == []
    # The old device keeps its token (moving is not signing out).
    assert (await http.get("/v1/players/me", headers=me.headers)).status_code == 200


async def test_a_transfer_code_lasts_15_minutes(server: RunningServer, http, api: Api) -> None:
    now = [int(time.time() * 1000)]
    server.app.state.service.clock = lambda: now[0]
    me = await api.player()
    first, second = await new_code(http, me), await new_code(http, me)
    now[0] += transfer.CODE_LIFETIME_MS - 1
    assert (await redeem(http, first["code"])).status_code == 200
    view = await http.get("/v1/players/me", headers=me.headers)
    assert [entry["expires_at"] for entry in view.json()["transfer_codes"]] == [
        second["expires_at"]
    ]
    now[0] += 2
    late = await redeem(http, second["code"])
    assert late.status_code == 404 and error_code(late) == "unknown_transfer_code"
    view = await http.get("/v1/players/me", headers=me.headers)
    assert view.json()["transfer_codes"] == []


async def test_at_most_five_codes_are_pending(http, api: Api) -> None:
    me = await api.player()
    for _ in range(transfer.MAX_PENDING):
        await new_code(http, me)
    refused = await http.post("/v1/players/me/transfer", headers=me.headers)
    assert refused.status_code == 429 and error_code(refused) == "rate_limited"
    assert refused.json()["error"]["limit"] == "transfer_codes"
    view = await http.get("/v1/players/me", headers=me.headers)
    assert len(view.json()["transfer_codes"]) == transfer.MAX_PENDING


async def test_sign_out_everywhere_voids_pending_codes(http, api: Api) -> None:
    me = await api.player()
    code = (await new_code(http, me))["code"]
    assert (await http.delete("/v1/players/me/tokens", headers=me.headers)).status_code == 200
    voided = await redeem(http, code)
    assert voided.status_code == 404 and error_code(voided) == "unknown_transfer_code"


async def test_bad_transfer_requests_are_typed_and_change_nothing(
    http, api: Api, redis_client
) -> None:
    me = await api.player()
    code = (await new_code(http, me))["code"]
    cases = [
        ({}, 400, "missing_field"),
        ({"code": 5}, 400, "invalid_field"),
        ({"code": None}, 400, "invalid_field"),
        ({"code": "short"}, 400, "invalid_field"),
        ({"code": "x" * 40}, 400, "invalid_field"),
        ({"code": code, "player_id": me.player_id}, 400, "unknown_field"),
        ({"code": "UUUU-UUUU-UUUU-UUUU"}, 404, "unknown_transfer_code"),
        ({"code": "0000-0000-0000-000"}, 404, "unknown_transfer_code"),
        ({"code": "0000 0000 0000 0000"}, 404, "unknown_transfer_code"),
    ]
    for body, status, code_name in cases:
        response = await http.post("/v1/players/transfer", json=body)
        assert response.status_code == status, (body, response.text)
        assert error_code(response) == code_name, body
    for content in (b"[1", b"\xff", b'"code"'):
        response = await http.post(
            "/v1/players/transfer",
            content=content,
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 400, (content, response.text)
    response = await http.post("/v1/players/me/transfer", json={"x": 1}, headers=me.headers)
    assert error_code(response) == "unknown_field"
    assert error_code(await http.post("/v1/players/me/transfer")) == "unauthorized"
    # The one good code is still pending, and still good.
    view = await http.get("/v1/players/me", headers=me.headers)
    assert len(view.json()["transfer_codes"]) == 1
    assert (await redeem(http, code)).status_code == 200


# -- export and deletion ------------------------------------------------------------------


async def test_the_export_holds_everything_stored_about_the_player(http, api: Api) -> None:
    response = await http.post("/v1/players", json={"name": "Exporter"})
    me = Player(response.json()["player_id"], response.json()["token"])
    open_game = await api.create_game(me, "balcony", "export-open")
    ended = await api.create_game(me, "colorado", "export-ended")
    await api.move(me, ended["id"], "resign", 0)
    code = (await new_code(http, me))["code"]
    response = await http.get("/v1/players/me/export", headers=me.headers)
    assert response.status_code == 200, response.text
    export = response.json()
    assert export["format"] == "solitaire-account-export/1"
    assert export["account"] == (await http.get("/v1/players/me", headers=me.headers)).json()
    assert export["account"]["name"] == "Exporter" and len(export["account"]["transfer_codes"]) == 1
    assert [game["id"] for game in export["games"]] == [ended["id"], open_game["id"]]
    assert export["games"][0]["status"] == "resigned"
    assert export["stats"]["colorado"]["played"] == 1
    assert export["tokens_revoked_before"] is None
    assert transfer.normal(code) not in response.text and me.token not in response.text
    assert error_code(await http.get("/v1/players/me/export")) == "unauthorized"


async def test_deleting_an_account(
    http, api: Api, server: RunningServer, other_http: httpx.AsyncClient, redis_client
) -> None:
    await dailies_chosen(server.app)
    response = await http.post("/v1/players", json={"name": "Gone Player"})
    me = Player(response.json()["player_id"], response.json()["token"])
    rival = await api.player()
    ranked = (await http.post("/v1/daily/balcony", headers=me.headers)).json()
    await http.post("/v1/daily/balcony", headers=rival.headers)
    casual = await api.create_game(me, "colorado", "delete-open")
    code = (await new_code(http, me))["code"]
    date = ranked["daily"]
    # Without the confirmation: a typed 400, and nothing changes.
    for body in (None, {}, {"confirm": False}, {"confirm": "yes"}, {"confirm": True, "x": 1}):
        response = await http.request("DELETE", "/v1/players/me", json=body, headers=me.headers)
        assert response.status_code == 400, (body, response.text)
        assert error_code(response) in ("missing_field", "invalid_field", "unknown_field")
    assert (await http.get("/v1/players/me", headers=me.headers)).json()["name"] == "Gone Player"

    response = await http.request(
        "DELETE", "/v1/players/me", json={"confirm": True}, headers=me.headers
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"player_id": me.player_id, "deleted": True, "games_ended": 2}
    # Every token is refused, here at once and on the other instance within the bound.
    answer = await http.get("/v1/players/me", headers=me.headers)
    assert answer.status_code == 401 and error_code(answer) == "token_revoked"
    await asyncio.sleep(REFUSAL_BOUND)
    assert error_code(await other_http.get("/v1/players/me", headers=me.headers)) == (
        "token_revoked"
    )
    assert error_code(await redeem(http, code)) == "unknown_transfer_code"
    # Personal data is gone: record, name, history, stats, codes.
    key = player_key(me.player_id)
    for suffix in ("", ":games", ":stats", ":ended", ":transfers"):
        assert not await redis_client.exists(key + suffix), suffix
    assert me.player_id.encode() not in (await redis_client.hvals("names"))
    taken = await http.post("/v1/players", json={"name": "Gone Player"})
    assert taken.status_code == 201, taken.text
    # Its open games ended; its ranked result stays on the board, with no name.
    for game in (ranked, casual):
        assert await redis_client.hget(game_key(game["id"]), "status") == b"resigned"
    board = (await http.get(f"/v1/leaderboards/balcony/{date}")).json()
    entries = {entry["player_id"]: entry for entry in board["entries"]}
    assert set(entries) == {me.player_id, rival.player_id}
    assert entries[me.player_id]["name"] is None
    assert entries[me.player_id]["status"] == "resigned"
    assert "Gone Player" not in json.dumps(board)
    # Once the day closed, the board's audit still adds up, the deleted player's entry too.
    service = server.app.state.service
    service.clock = lambda: closes_ms(date) + 60_000
    audited = await audit_leaderboard(service, "balcony", date, clairvoyance=False)
    assert {result.player_id for result in audited} == {me.player_id, rival.player_id}
    assert all(result.verdict.integrity == "pass" for result in audited), [
        result.to_dict() for result in audited
    ]


async def test_revocation_reaches_every_worker_process(
    redis_url: str, redis_cluster: bool, spawn_server
) -> None:
    """``python -m server --workers 2``: the sockets of one player, spread over the workers
    as the kernel hands out connections (which worker holds which is not asserted), are
    all closed within the bound by one revocation, and fresh connections are refused."""
    args = ["--redis-url", redis_url, "--secret", SECRET, "--workers", "2"]
    args += ["--log-level", "warning", "--rate-limits", "off"]
    if redis_cluster:
        args.append("--redis-cluster")
    process = await spawn_server(*args)
    async with (
        httpx.AsyncClient(base_url=process.base_url, timeout=WAIT * 2) as http,
        ws_clients(process.ws_url) as connect,
    ):
        me = await Api(http).player()
        sockets = [await connect() for _ in range(8)]
        for socket in sockets:
            await socket.auth(me)
        response = await http.delete("/v1/players/me/tokens", headers=me.headers)
        assert response.status_code == 200
        revoked_at = time.monotonic()
        for socket in sockets:
            error = await socket.recv("error", timeout=REFUSAL_BOUND + 1)
            assert error["code"] == "token_revoked"
        assert time.monotonic() - revoked_at < REFUSAL_BOUND
        # Each new connection may land on either worker: once the bound is up, all refuse
        # the token (the sockets above may all have been on one of them).
        await asyncio.sleep(max(0.0, revoked_at + REFUSAL_BOUND - time.monotonic()))
        for _ in range(6):
            async with httpx.AsyncClient(base_url=process.base_url, timeout=WAIT) as fresh:
                answer = await fresh.get("/v1/players/me", headers=me.headers)
                assert error_code(answer) == "token_revoked"
