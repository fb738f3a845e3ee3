"""Rate limits: token buckets in Redis shared by every instance; REST answers 429
``rate_limited`` with ``Retry-After``, the WebSocket a ``rate_limited`` error or
rejection with ``retry_after_ms`` and stays open (README.md, "Limits")."""

from __future__ import annotations

import asyncio

import msgpack
from limits_support import (
    assert_rate_limited,
    client,
    new_game,
    new_player,
    running,
    sockets,
)
from redis.asyncio import Redis


async def test_accounts_per_address_are_shared_by_every_instance(redis_url: str) -> None:
    async with (
        running(redis_url, players_per_hour=3) as one,
        running(redis_url, players_per_hour=3) as two,
        client(one) as first,
        client(two) as second,
    ):
        for http in (first, second, first):
            await new_player(http)
        refused = await second.post("/v1/players")
        wait_ms = assert_rate_limited(refused, "players")
        # Three tokens an hour: the next one comes in about 20 minutes.
        assert 19 * 60_000 < wait_ms <= 20 * 60_000 + 1000
        assert (await first.post("/v1/players")).status_code == 429


async def test_rate_limits_off_lets_everything_through(redis_url: str) -> None:
    async with (
        running(
            redis_url, rate_limits=False, players_per_hour=1, player_moves_per_minute=1
        ) as server,
        client(server) as http,
    ):
        for _ in range(5):
            headers = await new_player(http)
        game = await new_game(http, headers)
        for version, move in enumerate(["deal", "deal", "deal"]):
            response = await http.post(
                f"/v1/games/{game['id']}/moves",
                json={"move": move, "version": version},
                headers=headers,
            )
            assert response.status_code == 200, response.text


async def test_requests_per_address(redis_url: str) -> None:
    async with running(redis_url, address_requests_per_minute=5) as server, client(server) as http:
        for _ in range(5):
            assert (await http.get("/v1/games")).status_code == 200
        wait_ms = assert_rate_limited(await http.get("/v1/games"), "address_requests")
        assert wait_ms <= 12_000  # 5 a minute: one every 12 s
        # Outside /v1 nothing is limited (health checks).
        assert (await http.get("/healthz")).status_code == 200


async def test_requests_per_player(redis_url: str) -> None:
    async with running(redis_url, player_requests_per_minute=3) as server, client(server) as http:
        alice, bob = await new_player(http), await new_player(http)
        for _ in range(3):
            assert (await http.get("/v1/games", headers=alice)).status_code == 200
        assert_rate_limited(await http.get("/v1/games", headers=alice), "player_requests")
        assert (await http.get("/v1/games", headers=bob)).status_code == 200


async def test_moves_per_player_on_rest_and_websocket(redis_url: str) -> None:
    async with (
        running(redis_url, player_moves_per_minute=2) as server,
        client(server) as http,
        sockets(server) as open_socket,
    ):
        headers = await new_player(http)
        token = headers["Authorization"].split()[1]
        game = await new_game(http, headers)
        moves = f"/v1/games/{game['id']}/moves"
        ok = await http.post(moves, json={"move": "deal", "version": 0}, headers=headers)
        assert ok.status_code == 200, ok.text
        ws = await open_socket()
        await ws.request({"type": "auth", "token": token}, "authenticated")
        move = {"type": "move", "game_id": game["id"], "move": "deal", "version": 1}
        accepted = await ws.request({**move, "move_id": "a"}, "accepted", "rejected")
        assert accepted["type"] == "accepted", accepted
        rejected = await ws.request({**move, "version": 2, "move_id": "b"}, "rejected")
        assert rejected["code"] == "rate_limited" and rejected["move_id"] == "b", rejected
        assert rejected["limit"] == "player_moves" and rejected["retry_after_ms"] > 0
        await ws.ping()  # the socket stays open
        refused = await http.post(moves, json={"move": "deal", "version": 2}, headers=headers)
        assert_rate_limited(refused, "player_moves")
        # Nothing was played by the refused moves.
        assert (await http.get(f"/v1/games/{game['id']}")).json()["version"] == 2


async def test_moves_per_address(redis_url: str) -> None:
    async with running(redis_url, address_moves_per_minute=1) as server, client(server) as http:
        alice, bob = await new_player(http), await new_player(http)
        first, second = await new_game(http, alice), await new_game(http, bob)
        body = {"move": "deal", "version": 0}
        response = await http.post(f"/v1/games/{first['id']}/moves", json=body, headers=alice)
        assert response.status_code == 200
        response = await http.post(f"/v1/games/{second['id']}/moves", json=body, headers=bob)
        assert_rate_limited(response, "address_moves")


async def test_audits_per_player(redis_url: str) -> None:
    async with running(redis_url, audits_per_minute=1) as server, client(server) as http:
        headers = await new_player(http)
        game = await new_game(http, headers)
        body = {"game_id": game["id"]}
        assert (await http.post("/v1/audit", json=body, headers=headers)).status_code == 200
        assert_rate_limited(await http.post("/v1/audit", json=body, headers=headers), "audits")


async def test_name_changes_per_player(redis_url: str) -> None:
    async with running(redis_url, name_changes_per_hour=2) as server, client(server) as http:
        headers = await new_player(http)
        for name in ("Rate One", "Rate Two"):
            response = await http.put("/v1/players/me", json={"name": name}, headers=headers)
            assert response.status_code == 200, response.text
        refused = await http.patch("/v1/players/me", json={"name": "Rate Three"}, headers=headers)
        assert_rate_limited(refused, "name_changes")
        me = await http.get("/v1/players/me", headers=headers)
        assert me.json()["name"] == "Rate Two"


async def test_transfer_codes_per_player_and_redemptions_per_address(redis_url: str) -> None:
    async with (
        running(redis_url, transfer_codes_per_hour=2, transfer_redeems_per_hour=3) as server,
        client(server) as http,
    ):
        alice, bob = await new_player(http), await new_player(http)
        codes = []
        for _ in range(2):
            response = await http.post("/v1/players/me/transfer", headers=alice)
            assert response.status_code == 201, response.text
            codes.append(response.json()["code"])
        refused = await http.post("/v1/players/me/transfer", headers=alice)
        assert_rate_limited(refused, "transfer_codes")
        assert (await http.post("/v1/players/me/transfer", headers=bob)).status_code == 201
        # Redemptions, right or wrong, draw on the address's bucket: guessing is slow.
        wrong = {"code": "0000-0000-0000-0000"}
        for _ in range(2):
            response = await http.post("/v1/players/transfer", json=wrong)
            assert response.status_code == 404, response.text
        right = await http.post("/v1/players/transfer", json={"code": codes[0]})
        assert right.status_code == 200, right.text
        refused = await http.post("/v1/players/transfer", json={"code": codes[1]})
        assert_rate_limited(refused, "transfer_redeems")


async def test_a_refused_client_costs_no_redis_call_until_its_retry_time(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    try:
        async with (
            running(redis_url, address_requests_per_minute=2) as server,
            client(server) as http,
        ):
            for _ in range(2):
                await http.get("/v1/games")
            assert_rate_limited(await http.get("/v1/games"), "address_requests")
            await redis.config_resetstat()
            for _ in range(20):
                assert_rate_limited(await http.get("/v1/games"), "address_requests")
            stats = await redis.info("commandstats")
            assert "cmdstat_evalsha" not in stats, stats
            assert server.app.state.limits.refusals["address_requests"] == 21
    finally:
        await redis.aclose()


async def test_message_credits_per_socket(redis_url: str) -> None:
    async with (
        running(redis_url, message_credits=5, message_credits_per_second=2) as server,
        sockets(server) as open_socket,
    ):
        ws, other = await open_socket(), await open_socket()
        for nonce in range(5):
            await ws.send({"type": "ping", "nonce": nonce})
        await ws.send({"type": "ping", "nonce": 5})
        replies = [await ws.recv() for _ in range(6)]
        assert [reply["type"] for reply in replies] == ["pong"] * 5 + ["error"]
        error = replies[-1]
        assert error["code"] == "rate_limited" and error["in_reply_to"] == "ping"
        assert error["limit"] == "messages" and 0 < error["retry_after_ms"] <= 500
        assert server.app.state.limits.refusals["messages"] == 1
        await other.ping()  # credits are per socket
        await asyncio.sleep(error["retry_after_ms"] / 1000 + 0.05)
        await ws.ping()  # the socket stayed open and earns credits back


async def test_rate_limited_is_answered_in_msgpack_too(redis_url: str) -> None:
    async with running(redis_url, address_requests_per_minute=1) as server, client(server) as http:
        await http.get("/v1/games")
        response = await http.get("/v1/games", headers={"Accept": "application/msgpack"})
        assert response.status_code == 429
        assert response.headers["content-type"] == "application/msgpack"
        assert "Retry-After" in response.headers
        assert msgpack.unpackb(response.content)["error"]["code"] == "rate_limited"


async def test_revocations_per_player(redis_url: str) -> None:
    """Each revocation is an entry in the feed every instance reads: a burst of them (the
    same token sent at once, before the first revokes it) is cut to the bucket's size."""
    async with running(redis_url, revocations_per_hour=1) as server, client(server) as http:
        first, second = await new_player(http), await new_player(http)
        answers = await asyncio.gather(
            *(http.delete("/v1/players/me/tokens", headers=first) for _ in range(5))
        )
        statuses = [answer.status_code for answer in answers]
        # One revokes; the others are cut by the bucket, or (one that the server took up only
        # after the revocation was in force) refused as revoked.
        assert statuses.count(200) == 1 and statuses.count(429) >= 1, statuses
        assert statuses.count(200) + statuses.count(429) + statuses.count(401) == 5, statuses
        assert_rate_limited(next(a for a in answers if a.status_code == 429), "revocations")
        # Another player's bucket is its own.
        assert (await http.delete("/v1/players/me/tokens", headers=second)).status_code == 200
