"""Every error code of ``server.errors.ERROR_CODES``, provoked and checked.

REST: the HTTP status and ``{"error": {"code", …}}``.  WebSocket: the ``error`` (or, for a
``move``, ``rejected``) message.  After each error the connection still works and the
stored games are byte for byte unchanged.  ``store_unavailable`` is provoked in
``test_store_outage.py``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgpack
import pytest
import pytest_asyncio
from redis.asyncio import Redis
from server_support import (
    SECRET,
    WAIT,
    Api,
    Player,
    RunningServer,
    WSConnect,
    all_keys,
    bearer,
    error_code,
    run_app,
    stored,
    ws_clients,
)
from websockets.exceptions import ConnectionClosed

from server import auth
from server.errors import ERROR_CODES
from server.redisconn import connect
from server.rules import new_game as deal

# One in-process server serves every test of this module (they only add games, each
# test on a freshly flushed database): dozens of cases, one start-up.  So the tests run
# in the module's event loop, and the async fixtures they use are redefined here for it.
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
async def ws_connect(server: RunningServer, redis_url: str) -> AsyncIterator[WSConnect]:
    async with ws_clients(server.ws_url) as open_client:
        yield open_client


@pytest_asyncio.fixture(loop_scope="module")
async def redis_client(redis_url: str, redis_cluster: bool) -> AsyncIterator[Redis]:
    client = connect(redis_url, redis_cluster)
    yield client
    await client.aclose()


@dataclass
class Context:
    owner: Player
    other: Player
    game_id: str  # balcony "abc", one move played: at version 1
    over_id: str  # resigned
    legal: list[str]  # the legal moves of game_id at version 1

    def moves(self, game_id: str | None = None) -> str:
        return f"/v1/games/{game_id or self.game_id}/moves"


@pytest_asyncio.fixture(loop_scope="module")
async def ctx(api: Api) -> Context:
    owner = await api.player()
    other = await api.player()
    created = await api.create_game(owner, "balcony", "abc")
    reply = await api.move(owner, created["id"], "deal", 0)
    over = await api.create_game(owner, "colorado", "over")
    await api.move(owner, over["id"], "resign", 0)
    return Context(owner, other, created["id"], over["id"], reply["snapshot"]["legal_moves"])


async def stored_games(redis_client, ctx: Context) -> list[Any]:
    return [await stored(redis_client, game_id) for game_id in (ctx.game_id, ctx.over_id)]


def token(secret: str, player: Player, issued: float) -> str:
    return auth.issue_token(secret.encode(), player.player_id, issued)


def expired(player: Player) -> str:
    return token(SECRET, player, time.time() - 31 * 24 * 3600)


def forged(player: Player) -> str:
    return token("not-the-server-secret-but-as-long-as-one", player, time.time())


# -- REST -----------------------------------------------------------------------------

Request = Any  # (http, ctx) -> awaitable httpx.Response
JSON = "application/json"


def move_body(**fields: Any) -> dict[str, Any]:
    """A move body for ``ctx.game_id`` at its version (1); a None field is left out."""
    body = {"move": "deal", "version": 1, **fields}
    return {key: value for key, value in body.items() if value is not None}


def post_move(game: str = "game", headers: Any = None, **fields: Any) -> Request:
    """A request posting ``move_body(**fields)`` as the owner (or with ``headers``)."""

    def request(h: httpx.AsyncClient, c: Context) -> Any:
        game_id = {"game": c.game_id, "over": c.over_id}.get(game, game)
        sent = c.owner.headers if headers is None else headers(c)
        return h.post(c.moves(game_id), json=move_body(**fields), headers=sent)

    return request


def post_raw(content: Any, content_type: str, path: str = "moves") -> Request:
    def request(h: httpx.AsyncClient, c: Context) -> Any:
        url = c.moves() if path == "moves" else path
        headers = {"Content-Type": content_type, **c.owner.headers}
        return h.post(url, content=content, headers=headers)

    return request


def new_game(body: Any) -> Request:
    return lambda h, c: h.post("/v1/games", json=body, headers=c.owner.headers)


def get(path: str) -> Request:
    return lambda h, c: h.get(path.format(game=c.game_id))


def with_token(make: Any) -> Any:
    return lambda c: bearer(make(c))


REST_CASES: dict[str, tuple[int, list[tuple[str, Request]]]] = {
    "malformed": (
        400,
        [
            ("bad JSON", post_raw(b'{"move": ', "application/json")),
            ("bad msgpack", post_raw(b"\xc1", "application/msgpack")),
            ("JSON not a map", post_raw(b"[1, 2]", "application/json")),
            ("msgpack not a map", post_raw(msgpack.packb(["deal", 1]), "application/msgpack")),
            ("JSON string", post_raw(b'"balcony"', "application/json", "/v1/games")),
            ("client_time 10**30", post_move(client_time=10**30)),
            ("version 1e400", post_raw(b'{"move": "deal", "version": 1e400}', JSON)),
            ("version NaN", post_raw(b'{"move": "deal", "version": NaN}', JSON)),
            ("version -Infinity", post_raw(b'{"move": "deal", "version": -Infinity}', JSON)),
            ("5000-digit integer", post_raw(b'{"version": ' + b"9" * 5000 + b"}", JSON)),
            ("JSON 1000 deep", post_raw(b"[" * 1000 + b"]" * 1000, JSON)),
            ("JSON 100,000 deep", post_raw(b"[" * 8000 + b"]" * 8000, JSON)),
            ("msgpack 1000 deep", post_raw(b"\x91" * 1000 + b"\x90", "application/msgpack")),
            ("JSON 17 deep map", post_raw(b'{"a":' * 17 + b"1" + b"}" * 17, JSON)),
        ],
    ),
    "unknown_field": (
        400,
        [
            ("extra field", post_move(colour="red")),
            ("player body", lambda h, c: h.post("/v1/players", json={"nickname": "x"})),
        ],
    ),
    "missing_field": (
        400,
        [
            ("no version", post_move(version=None)),
            ("no move", post_move(move=None)),
            ("no game", new_game({})),
        ],
    ),
    "invalid_field": (
        400,
        [
            ("version text", post_move(version="1")),
            ("version true", post_move(version=True)),
            ("version fraction", post_move(version=1.5)),
            ("move number", post_move(move=5)),
            ("move_id number", post_move(move_id=7)),
            ("empty move_id", post_move(move_id="")),
            ("65-character move_id", post_move(move_id="m" * 65)),
            ("client_time text", post_move(client_time="now")),
            ("client_time beyond int64", post_move(client_time=2**63)),
            ("negative client_time", post_move(client_time=-1)),
            ("game number", new_game({"game": 5})),
        ],
    ),
    "frame_too_large": (
        413,
        [
            ("17 KiB JSON", post_move(move_id="x" * 17 * 1024)),
            (
                "17 KiB msgpack",
                post_raw(msgpack.packb(move_body(move="x" * 17 * 1024)), "application/msgpack"),
            ),
            (
                "chunked, no length",
                lambda h, c: h.post(
                    c.moves(),
                    content=chunks([b'{"move": "', b"x" * 10_000, b"x" * 10_000, b'"}']),
                    headers={"Content-Type": "application/json", **c.owner.headers},
                ),
            ),
        ],
    ),
    "unsupported_media_type": (
        415,
        [
            ("text/plain", post_raw(b"deal", "text/plain")),
            ("form", post_raw(b"move=deal&version=1", "application/x-www-form-urlencoded")),
        ],
    ),
    "not_acceptable": (
        406,
        [
            ("text/html", post_move(headers=lambda c: {"Accept": "text/html", **c.owner.headers})),
            (
                "json refused",
                lambda h, c: h.get(
                    f"/v1/games/{c.game_id}", headers={"Accept": "application/json;q=0"}
                ),
            ),
        ],
    ),
    "unauthorized": (
        401,
        [
            ("no token", post_move(headers=lambda c: {})),
            ("no token, new game", lambda h, c: h.post("/v1/games", json={"game": "balcony"})),
            ("garbage", post_move(headers=with_token(lambda c: "garbage"))),
            (
                "not bearer",
                post_move(headers=lambda c: {"Authorization": f"Basic {c.owner.token}"}),
            ),
            ("forged", post_move(headers=with_token(lambda c: forged(c.owner)))),
            ("expired", post_move(headers=with_token(lambda c: expired(c.owner)))),
            (
                "bad token on a read",
                lambda h, c: h.get(f"/v1/games/{c.game_id}", headers=bearer("v1.p_x.1.sig")),
            ),
        ],
    ),
    "forbidden": (403, [("another player", post_move(headers=lambda c: c.other.headers))]),
    "unknown_game": (
        404,
        [
            ("get", get("/v1/games/g_nope")),
            ("log", get("/v1/games/g_nope/log")),
            ("move", post_move(game="g_nope")),
            ("long id", get("/v1/games/" + "g" * 100)),
        ],
    ),
    "unknown_game_name": (404, [("klondike", new_game({"game": "klondike"}))]),
    "not_found": (
        404,
        [
            ("unknown route", get("/v1/nothing")),
            ("outside /v1", get("/nothing")),
            ("under a game", get("/v1/games/{game}/nothing")),
        ],
    ),
    "not_open": (404, [("far future", get("/v1/daily/balcony/2999-01-01"))]),
    "no_daily": (404, [("long ago", get("/v1/daily/balcony/2001-01-01"))]),
    "method_not_allowed": (
        405,
        [
            ("delete game", lambda h, c: h.delete(f"/v1/games/{c.game_id}")),
            ("put moves", lambda h, c: h.put(c.moves(), json=move_body(), headers=c.owner.headers)),
            ("get players", get("/v1/players")),
        ],
    ),
    "invalid_seed": (
        400,
        [
            ("space", new_game({"game": "balcony", "seed": "a b"})),
            ("empty", new_game({"game": "balcony", "seed": ""})),
            ("129 chars", new_game({"game": "balcony", "seed": "s" * 129})),
        ],
    ),
    "malformed_move": (
        400,
        [
            ("words", post_move(move="fly away")),
            ("bad pile", post_move(move="tableau[x]>foundation[0]")),
        ],
    ),
    "illegal_move": (
        422,
        [
            ("QH on 9C", post_move(move="tableau[1]>foundation[0]")),
            ("no such pile", post_move(move="tableau[9]>foundation[0]")),
            ("from the stock", post_move(move="stock>tableau[0]")),
            ("redeal", post_move(move="redeal")),
        ],
    ),
    "game_over": (
        409,
        [
            ("a card move", post_move(game="over", move="stock>tableau[0]")),
            ("resign again", post_move(game="over", move="resign")),
        ],
    ),
    "stale": (
        409,
        [("old version", post_move(version=0)), ("future version", post_move(version=5))],
    ),
}


async def chunks(parts: list[bytes]):
    for part in parts:
        yield part


@pytest.mark.parametrize("code", sorted(REST_CASES))
async def test_rest_error(
    code: str, http: httpx.AsyncClient, api: Api, ctx: Context, redis_client
) -> None:
    status, cases = REST_CASES[code]
    assert ERROR_CODES[code][0] == status
    for description, request in cases:
        before = await stored_games(redis_client, ctx)
        keys = await all_keys(redis_client)
        response = await request(http, ctx)
        assert response.status_code == status, (description, response.text)
        assert error_code(response) == code, (description, response.text)
        body = response.json()["error"]
        if code in ("illegal_move", "malformed_move", "game_over"):
            # ERRORS.md: these carry the engine's reason_code and the current version.
            assert body.get("version") == 1, body
            assert body.get("reason_code"), body
        if code == "stale":
            assert body.get("version") == 1, body
        if code in ("unknown_field", "missing_field", "invalid_field"):
            assert isinstance(body.get("field"), str), body
        # Nothing changed and the connection still works.
        assert await stored_games(redis_client, ctx) == before, description
        assert await all_keys(redis_client) == keys, description
        assert (await http.get("/healthz")).status_code == 200
        assert (await api.get(ctx.game_id, ctx.owner))["version"] == 1


async def test_illegal_move_says_why(http: httpx.AsyncClient, ctx: Context) -> None:
    reasons = {
        "tableau[1]>foundation[0]": ("not_accepted", "cannot go on"),
        "tableau[9]>foundation[0]": ("no_such_pile", "no tableau[9]"),
        "stock>tableau[0]": ("wrong_source", "stock"),
        "redeal": ("no_redeal", "redeal"),
    }
    for move, (reason_code, words) in reasons.items():
        response = await http.post(
            ctx.moves(), json={"move": move, "version": 1}, headers=ctx.owner.headers
        )
        assert response.status_code == 422
        body = response.json()["error"]
        assert body["code"] == "illegal_move"
        assert body["reason_code"] == reason_code, body
        assert words in body["message"], body


# The test's own fault (a handler raising), which the server logs with its traceback.
@pytest.mark.log_errors(r"unexpected error \[RuntimeError: boom\]", r"Exception in ASGI")
async def test_internal_error(
    server, http: httpx.AsyncClient, api: Api, ctx: Context, monkeypatch
) -> None:
    service = server.app.state.service

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(service, "snapshot", broken)
    response = await http.get(f"/v1/games/{ctx.game_id}")
    assert response.status_code == 500
    assert error_code(response) == "internal"
    assert "boom" not in response.text  # the details stay in the server's log
    monkeypatch.undo()
    # The process keeps serving.
    assert (await http.get("/healthz")).status_code == 200
    assert (await api.get(ctx.game_id, ctx.owner))["version"] == 1
    reply = await api.move(ctx.owner, ctx.game_id, ctx.legal[0], 1)
    assert reply["snapshot"]["version"] == 2


# -- WebSocket ------------------------------------------------------------------------

#: code -> [(description, who is authenticated, frame builder)].  A frame is bytes, text,
#: or a message to pack; a ``move`` is answered ``rejected``, anything else ``error``.
WS_CASES: dict[str, list[tuple[str, str | None, Any]]] = {
    "malformed": [
        ("bad msgpack", None, lambda c: b"\xc1"),
        ("empty frame", None, lambda c: b""),
        ("not a map", None, lambda c: msgpack.packb(["ping"])),
        ("integer keys", None, lambda c: msgpack.packb({1: "ping"})),
        ("text frame", None, lambda c: "ping"),
    ],
    "unknown_type": [
        ("bogus", None, lambda c: {"type": "bogus"}),
        ("no type", None, lambda c: {"nonce": 1}),
        ("number type", None, lambda c: {"type": 5}),
    ],
    "missing_field": [
        ("subscribe", None, lambda c: {"type": "subscribe"}),
        ("auth", None, lambda c: {"type": "auth"}),
        ("move", "owner", lambda c: ws_move(c, move_id=None)),
    ],
    "unknown_field": [
        ("ping", None, lambda c: {"type": "ping", "x": 1}),
        ("move", "owner", lambda c: ws_move(c, colour="red")),
    ],
    "invalid_field": [
        ("version text", "owner", lambda c: ws_move(c, version="1")),
        ("version true", "owner", lambda c: ws_move(c, version=True)),
        ("empty move_id", "owner", lambda c: ws_move(c, move_id="")),
        ("long move_id", "owner", lambda c: ws_move(c, move_id="m" * 65)),
        ("client_time 2**64 - 1", "owner", lambda c: ws_move(c, client_time=2**64 - 1)),
        (
            "subscribe version",
            None,
            lambda c: {"type": "subscribe", "game_id": c.game_id, "version": "1"},
        ),
        ("float nonce", None, lambda c: {"type": "ping", "nonce": 1.5}),
        ("token number", None, lambda c: {"type": "auth", "token": 12}),
    ],
    "frame_too_large": [
        ("20 KiB", None, lambda c: msgpack.packb({"type": "ping", "nonce": "x" * 20 * 1024})),
        ("1000 KiB move", "owner", lambda c: msgpack.packb(ws_move(c, move="x" * 1000 * 1024))),
    ],
    "unauthorized": [
        ("garbage", None, lambda c: {"type": "auth", "token": "garbage"}),
        ("forged", None, lambda c: {"type": "auth", "token": forged(c.owner)}),
        ("expired", None, lambda c: {"type": "auth", "token": expired(c.owner)}),
    ],
    "not_authenticated": [("move", None, lambda c: ws_move(c))],
    "forbidden": [("another player", "other", lambda c: ws_move(c))],
    "unknown_game": [
        ("subscribe", None, lambda c: {"type": "subscribe", "game_id": "g_nope"}),
        ("move", "owner", lambda c: ws_move(c, game_id="g_nope")),
    ],
    "malformed_move": [("words", "owner", lambda c: ws_move(c, move="fly away"))],
    "illegal_move": [("QH on 9C", "owner", lambda c: ws_move(c, move="tableau[1]>foundation[0]"))],
    "game_over": [("after resign", "owner", lambda c: ws_move(c, game_id=c.over_id, move="deal"))],
    "stale": [("old version", "owner", lambda c: ws_move(c, version=0))],
}


def ws_move(ctx: Context, **fields: Any) -> dict[str, Any]:
    message = {
        "type": "move",
        "game_id": ctx.game_id,
        "move": "deal",
        "version": 1,
        "move_id": "bad-move",
        **fields,
    }
    return {key: value for key, value in message.items() if value is not None}


@pytest.mark.parametrize("code", sorted(WS_CASES))
async def test_websocket_error(code: str, ws_connect, ctx: Context, redis_client) -> None:
    players = {"owner": ctx.owner, "other": ctx.other}
    for description, who, build in WS_CASES[code]:
        ws = await ws_connect()
        if who:
            await ws.auth(players[who])
        before = await stored_games(redis_client, ctx)
        frame = build(ctx)
        if isinstance(frame, dict):
            await ws.send(frame)
        else:
            await ws.send_raw(frame)
        reply = await ws.recv()
        is_move = isinstance(frame, dict) and frame.get("type") == "move"
        assert reply["type"] == ("rejected" if is_move else "error"), (description, reply)
        assert reply["code"] == code, (description, reply)
        assert isinstance(reply["message"], str) and reply["message"], reply
        if is_move:
            assert reply["move_id"] == frame.get("move_id"), reply
            assert reply["game_id"] == frame["game_id"], reply
        else:
            sent_type = frame.get("type") if isinstance(frame, dict) else None
            assert reply["in_reply_to"] == (sent_type if isinstance(sent_type, str) else None)
        sent_game = frame.get("game_id") if isinstance(frame, dict) else None
        assert reply["game_id"] == sent_game, reply
        if code == "stale":
            assert reply["version"] == 1
        if code in ("illegal_move", "malformed_move", "game_over"):
            # ERRORS.md: these carry the engine's reason_code and the current version.
            assert reply.get("reason_code") and reply.get("version") == 1, reply
        if code in ("missing_field", "unknown_field", "invalid_field"):
            assert isinstance(reply.get("field"), str), reply
        # The connection stays open and works; nothing stored changed.
        assert await ws.ping() == [], description
        assert await stored_games(redis_client, ctx) == before, description
        await ws.close()


async def test_websocket_frame_too_large_keeps_working(ws_connect, ctx: Context, api: Api) -> None:
    ws = await ws_connect()
    await ws.auth(ctx.owner)
    await ws.send_raw(b"\x00" * (512 * 1024))
    assert (await ws.recv("error"))["code"] == "frame_too_large"
    # Still authenticated, still subscribed-capable, still moving.
    await ws.subscribe(ctx.game_id)
    assert (await ws.recv("snapshot"))["snapshot"]["version"] == 1
    reply = await ws.move(ctx.game_id, ctx.legal[0], 1, "after-big-frame")
    assert reply["type"] == "accepted" and reply["version"] == 2


async def test_too_many_errors(ws_connect, ctx: Context) -> None:
    ws = await ws_connect()
    for _ in range(10):
        await ws.send({"type": "bogus"})
    codes = []
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(20):
            codes.append((await ws.recv(timeout=5))["code"])
    assert codes == ["unknown_type"] * 10 + ["too_many_errors"]
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_error_count_resets_and_moves_do_not_count(ws_connect, ctx: Context) -> None:
    ws = await ws_connect()
    await ws.auth(ctx.owner)
    for _ in range(3):
        for _ in range(9):
            await ws.send_raw(b"\xc1")
        assert [message["code"] for message in await ws.ping()] == ["malformed"] * 9
    # Refused moves are not protocol errors.
    for index in range(15):
        reply = await ws.move(ctx.game_id, "tableau[1]>foundation[0]", 1, f"no-{index}")
        assert reply["code"] == "illegal_move"
    assert await ws.ping() == []


async def test_every_error_code_is_covered() -> None:
    elsewhere = {
        "too_many_errors": "test_too_many_errors",
        "internal": "test_internal_error",
        "store_unavailable": "test_store_outage.py",
        "not_replicated": "test_durability.py",
        "daily_open": "tests/daily/test_fair_play.py",
        "daily_closed": "tests/daily/test_fair_play.py",
        "account_too_new": "tests/daily/test_fair_play.py",
        "rate_limited": "tests/limits/test_rates.py",
        "too_many_connections": "tests/limits/test_connections.py",
        "protocol_retired": "tests/server/test_ws_v2.py",
        "move_limit": "tests/limits/test_move_limit.py",
        "audit_busy": "tests/limits/test_audit_limits.py",
        "hints_ranked": "test_hints.py",
        "hints_busy": "test_hints.py",
        "daily_not_ready": "tests/daily/test_selection.py",
        "undo_ranked": "tests/server/test_undo_moves.py",
        "restart_ranked": "tests/server/test_restart.py",
        "name_taken": "tests/server/test_players.py",
        "not_finished": "tests/server/test_players.py",
        "token_revoked": "tests/server/test_accounts.py",
        "unknown_transfer_code": "tests/server/test_accounts.py",
        "identity_disabled": "tests/server/test_accounts.py",
        "invalid_id_token": "tests/server/test_identity.py",
        "identity_taken": "tests/server/test_identity.py",
        "identity_required": "tests/server/test_identity.py",
        "identity_unavailable": "tests/server/test_identity.py",
        "operator_required": "tests/server/test_operator.py",
        "account_suspended": "tests/server/test_operator.py",
        "unknown_attempt": "tests/server/test_operator.py",
        "unknown_player": "tests/server/test_operator.py",
        "unknown_review": "tests/audit/test_postclose.py",
    }
    covered = set(REST_CASES) | set(WS_CASES) | set(elsewhere)
    assert covered == set(ERROR_CODES)


async def test_errors_stay_typed_under_concurrency(http: httpx.AsyncClient, ctx: Context) -> None:
    """Many bad requests at once: each its own typed answer, the game unchanged."""
    responses = await asyncio.gather(
        *(
            http.post(ctx.moves(), json={"move": "deal", "version": v}, headers=ctx.owner.headers)
            for v in (0, 2, 3, 4, 5)
        )
    )
    assert [error_code(r) for r in responses] == ["stale"] * 5
    assert all(r.json()["error"]["version"] == 1 for r in responses)


async def test_the_deal_the_cases_assume() -> None:
    # Balcony "abc" deals a QH on tableau[1] and a 9C base: QH may not go on foundation[0].
    game = deal("balcony", "abc")
    assert game.view()["tableau"][1] == ["QH"]
    assert game.view()["foundations"][0] == ["9C"]


async def test_websocket_frame_beyond_the_transport_limit(ws_connect) -> None:
    ws = await ws_connect()
    await ws.send_raw(b"\x00" * (1024 * 1024 + 1))
    with pytest.raises(ConnectionClosed) as closed:
        await ws.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


def client_frame(opcode: int, fin: bool, payload: bytes) -> bytes:
    """A masked WebSocket frame, as a client sends it."""
    mask = os.urandom(4)
    size = len(payload)
    first = (0x80 if fin else 0) | opcode
    if size < 126:
        header = struct.pack("!BB", first, 0x80 | size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", first, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", first, 0x80 | 127, size)
    key = int.from_bytes((mask * (size // 4 + 1))[:size], "big")
    return header + mask + (int.from_bytes(payload, "big") ^ key).to_bytes(size, "big")


@pytest.mark.parametrize("total", [1024 * 1024 + 1, 4 * 1024 * 1024])
@pytest.mark.parametrize("fragment", [64 * 1024, None])
async def test_a_websocket_message_beyond_the_transport_limit_gets_its_close_frame(
    server, fragment: int | None, total: int
) -> None:
    """A message over 1 MiB, in one frame or in fragments of 64 KiB (each under the
    limit), from a client that goes on sending: it reads a close frame with 1009 (the
    server reads and drops what comes after it for a while: closing with input unread
    reset the connection, and the close frame was lost on the way)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET /v2/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)).startswith(b"HTTP/1.1 101")
    noise = os.urandom(total)
    step = fragment or total
    with contextlib.suppress(ConnectionError):
        for start in range(0, total, step):
            opcode = 0x2 if start == 0 else 0x0
            writer.write(client_frame(opcode, start + step >= total, noise[start : start + step]))
            await writer.drain()
    received = b""
    with contextlib.suppress(ConnectionError, TimeoutError):
        async with asyncio.timeout(WAIT):
            while chunk := await reader.read(65536):
                received += chunk
    writer.close()
    assert received[:1] == b"\x88", received[:20]  # a close frame (FIN, opcode 8)
    assert struct.unpack("!H", received[2:4])[0] == 1009, received[:20]
