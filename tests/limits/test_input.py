"""Bad input of any kind gets a typed 4xx, never a 500: query integers, the log's pages,
integral floats, and a bounded deterministic fuzz over every route."""

from __future__ import annotations

import json
import random
from typing import Any

import msgpack
from limits_support import client, error_of, new_game, new_player, running, sockets

JSON = {"Content-Type": "application/json"}


async def test_query_integers_refuse_unicode_digits_and_huge_numbers(redis_url: str) -> None:
    async with running(redis_url, rate_limits=False) as server, client(server) as http:
        headers = await new_player(http)
        game = await new_game(http, headers)
        board = "/v1/leaderboards/balcony/2026-01-01"
        for path, name in (
            (board, "limit"),
            (f"{board}/me", "radius"),
            (f"/v1/games/{game['id']}/log", "limit"),
        ):
            for value in ("%C2%B2", "%D9%A3", "9" * 5000, "-1", "1.0", "0x10", "", "1e3"):
                response = await http.get(f"{path}?{name}={value}", headers=headers)
                assert response.status_code == 400, (path, value, response.text)
                error = error_of(response)
                assert error["code"] == "invalid_field" and error["field"] == name, error
        for cursor in ("x", "1-", "-1", "1-2-3", "%C2%B2-1", "9" * 30 + "-1"):
            response = await http.get(f"/v1/games/{game['id']}/log?after={cursor}")
            assert response.status_code == 400, (cursor, response.text)
            assert error_of(response)["field"] == "after"


async def test_the_log_comes_in_pages(redis_url: str) -> None:
    async with running(redis_url, rate_limits=False) as server, client(server) as http:
        headers = await new_player(http)
        game = await new_game(http, headers)
        moves = f"/v1/games/{game['id']}/moves"
        for version in range(7):
            body = {"move": "deal", "version": version}
            assert (await http.post(moves, json=body, headers=headers)).status_code == 200
        whole = (await http.get(f"/v1/games/{game['id']}/log")).json()
        assert [entry["version"] for entry in whole["moves"]] == list(range(1, 8))
        assert whole["next"] is None
        pages, url = [], f"/v1/games/{game['id']}/log?limit=3"
        while True:
            page = (await http.get(url)).json()
            pages.append(page["moves"])
            if page["next"] is None:
                break
            url = f"/v1/games/{game['id']}/log?limit=3&after={page['next']}"
        assert [len(page) for page in pages] == [3, 3, 1]
        assert [entry for page in pages for entry in page] == whole["moves"]
        beyond = await http.get(f"/v1/games/{game['id']}/log?limit=1001")
        assert beyond.status_code == 400


async def test_integral_floats_are_integers_on_rest_and_websocket(redis_url: str) -> None:
    """JavaScript encoders send ``Date.now()`` (and any integer ≥ 2^32) as float64."""
    async with (
        running(redis_url, rate_limits=False) as server,
        client(server) as http,
        sockets(server) as open_socket,
    ):
        headers = await new_player(http)
        game = await new_game(http, headers)
        moves = f"/v1/games/{game['id']}/moves"
        now = 1764547200123.0
        body = {"move": "deal", "version": 0.0, "client_time": now}
        accepted = await http.post(moves, json=body, headers=headers)
        assert accepted.status_code == 200, accepted.text
        packed = msgpack.packb({"move": "deal", "version": 1.0, "client_time": now})
        accepted = await http.post(
            moves, content=packed, headers={**headers, "Content-Type": "application/msgpack"}
        )
        assert accepted.status_code == 200, accepted.text
        for bad in (1.5, float("inf"), 2.0**64, -0.5):
            body = {"move": "deal", "version": 2, "client_time": bad}
            content = msgpack.packb(body)
            refused = await http.post(
                moves,
                content=content,
                headers={**headers, "Content-Type": "application/msgpack"},
            )
            assert refused.status_code == 400, (bad, refused.text)
            assert error_of(refused) == {**error_of(refused), "code": "invalid_field"}
            assert error_of(refused)["field"] == "client_time"

        ws = await open_socket()
        token = headers["Authorization"].split()[1]
        await ws.request({"type": "auth", "token": token}, "authenticated")
        move = {"type": "move", "game_id": game["id"], "move": "deal", "move_id": "f"}
        reply = await ws.request({**move, "version": 2.0, "client_time": now}, "accepted")
        assert reply["version"] == 3
        reply = await ws.request({**move, "version": 3.5, "move_id": "g"}, "rejected")
        assert reply["code"] == "invalid_field" and reply["field"] == "version"
        log = (await http.get(f"/v1/games/{game['id']}/log")).json()
        assert [entry["client_time"] for entry in log["moves"]] == [int(now)] * 3
        assert all(type(entry["client_time"]) is int for entry in log["moves"])


# -- fuzz ---------------------------------------------------------------------------

SEED = 20261201
CASES = 400


def nasty_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON value meant to break a handler: wrong types, huge, deep or odd."""
    choice = rng.randrange(12)
    if choice == 0 and depth < 3:
        return [nasty_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if choice == 1 and depth < 3:
        return {rng.choice(FIELDS): nasty_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return rng.choice(
        [
            None,
            True,
            -1,
            0,
            2**63,
            -(2**63),
            1.5,
            1e300,
            "",
            "²",
            "x" * 300,
            "g_" + "A" * 70,
            "deal",
            "tableau[1]>foundation[0]",
            "\u0000",
            "\ud7ff",
            "2026-02-30",
            [],
            {},
        ]
    )


FIELDS = [
    "game",
    "seed",
    "move",
    "version",
    "move_id",
    "client_time",
    "game_id",
    "moves",
    "format",
    "server_time",
    "token",
    "type",
    "nonce",
    "x",
]


def nasty_body(rng: random.Random) -> tuple[bytes, str]:
    """Raw body bytes and a Content-Type."""
    kind = rng.randrange(10)
    if kind == 0:
        depth = rng.choice([20, 999, 1001, 5000])
        return b"[" * depth + b"]" * depth, "application/json"
    if kind == 1:
        return b'{"version": ' + b"9" * rng.choice([19, 21, 400, 5000]) + b"}", "application/json"
    if kind == 2:
        word = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1e-400"])
        return b'{"version": ' + word + b', "move": "deal"}', "application/json"
    if kind == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(64))), rng.choice(
            ["application/json", "application/msgpack", "text/plain", ""]
        )
    if kind == 4:
        return b"\x91" * rng.choice([10, 1000, 5000]) + b"\x90", "application/msgpack"
    if kind == 5:
        message = {rng.choice(FIELDS): nasty_value(rng) for _ in range(rng.randrange(5))}
        return msgpack.packb(message, use_bin_type=True), "application/msgpack"
    if kind == 6:
        packed = msgpack.packb({"version": float("nan"), "client_time": float("-inf")})
        return packed, "application/msgpack"
    message = {rng.choice(FIELDS): nasty_value(rng) for _ in range(rng.randrange(5))}
    if rng.random() < 0.2:
        return json.dumps(nasty_value(rng)).encode(), "application/json"
    return json.dumps(message).encode(), "application/json; charset=utf-8"


def nasty_query(rng: random.Random) -> str:
    name = rng.choice(["limit", "radius", "after", "x"])
    value = rng.choice(["%C2%B2", "9" * 5000, "-5", "0", "1001", "%00", "%FF", "1-1", "a" * 500])
    return f"?{name}={value}"


async def test_fuzz_every_route_gets_no_5xx(redis_url: str) -> None:
    rng = random.Random(SEED)
    async with (
        running(redis_url, rate_limits=False) as server,
        client(server) as http,
        sockets(server) as open_socket,
    ):
        headers = await new_player(http)
        game = await new_game(http, headers)
        ids = [game["id"], "g_nothing", "%C2%B2", "x" * 200, "%00", "..%2F..%2Fetc"]
        games = ["balcony", "chess", "%C2%B2", "x" * 100]
        dates = ["2026-01-01", "2026-13-01", "99999-01-01", "%C2%B2%C2%B2", "today"]
        tokens = [
            headers,
            {},
            {"Authorization": "Bearer v1.p_x.²².x".encode()},
            {"Authorization": "Bearer v1.p_x.1.é".encode()},
            {"Authorization": "Basic x"},
        ]
        statuses: dict[int, int] = {}
        for _ in range(CASES):
            route = rng.randrange(12)
            game_id, name, date = rng.choice(ids), rng.choice(games), rng.choice(dates)
            body, media = nasty_body(rng)
            extra = {**rng.choice(tokens)}
            if media:
                extra["Content-Type"] = media
            post = {
                0: "/v1/players",
                1: "/v1/games",
                2: f"/v1/games/{game_id}/moves",
                3: f"/v1/daily/{name}",
                4: "/v1/audit",
            }
            get = {
                5: f"/v1/games/{game_id}",
                6: f"/v1/games/{game_id}/log",
                7: f"/v1/games/{game_id}/replay",
                8: f"/v1/daily/{name}/{date}",
                9: f"/v1/leaderboards/{name}/{date}",
                10: f"/v1/leaderboards/{name}/{date}/me",
                11: "/v1/games",
            }
            if route in post:
                response = await http.post(post[route], content=body, headers=extra)
            else:
                response = await http.get(get[route] + nasty_query(rng), headers=extra)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code < 500, (route, body[:80], response.text)
        assert set(statuses) - {200, 201} and sum(statuses.values()) == CASES
        # The WebSocket: nasty frames get errors (or, after ten, a 1008 close).
        ws = await open_socket()
        for index in range(9):
            body, _ = nasty_body(rng)
            await ws.connection.send(body)
            reply = await ws.recv()
            assert reply["type"] in ("error", "rejected") and reply["code"] != "internal"
            await ws.ping(index)
        # The server still answers, and the game is untouched.
        assert (await http.get("/healthz")).status_code == 200
        snapshot = (await http.get(f"/v1/games/{game['id']}")).json()
        assert snapshot["version"] == 0
