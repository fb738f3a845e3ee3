"""Daily challenges that stay fair (issue 8), against served apps on a real Redis:

* finding 1: while its day is open nothing of a ranked game reaches anyone but its player,
  through any REST route or WebSocket message; after the close everything is readable;
* finding 2: the close ends play on the WebSocket too;
* finding 4: a daily start interrupted by Redis going away at any step converges on retry;
* finding 5: a worker's cached game is used only while it is the stored one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.retry import Retry
from redis.backoff import ConstantBackoff
from server_support import (
    SECRET,
    WAIT,
    Api,
    Player,
    RunningServer,
    WSClient,
    card_texts,
    error_code,
    run_app,
    stored_game,
    ws_clients,
)
from starlette.routing import Route

from server.app import ROUTES, create_app
from server.asyncapi import asyncapi_document
from server.audit import audit_stored
from server.config import Settings
from server.daily import DAY_MS, closes_ms, opens_ms
from server.leaderboard import board_keys
from server.rules import Move, new_game
from server.service import GameService
from server.store import Store, attempts_key, game_keys
from server.testing import TEST_DAILY, choose_dailies, dailies_chosen
from server.ws import HANDLERS

DAY = "2026-11-29"
NOON = opens_ms(DAY) + DAY_MS // 2


class Clock:
    def __init__(self, now: int = NOON) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def served(redis_url: str, redis_cluster: bool, clock: Clock) -> AsyncIterator[RunningServer]:
    async with run_app(redis_url, redis_cluster=redis_cluster) as running:
        running.app.state.service.clock = clock
        await dailies_chosen(running.app)
        yield running


# -- finding 1: an open day's ranked game is its player's alone ----------------------------


def concrete(path: str, game_id: str) -> str:
    return path.replace("{id}", game_id).replace("{game}", "balcony").replace("{date}", DAY)


def request_body(path: str, game_id: str, version: int) -> dict[str, Any] | None:
    return {
        "/v1/games": {"game": "balcony"},
        "/v1/games/{id}/moves": {"move": "deal", "version": version},
        "/v1/daily/{game}": {},
        "/v1/audit": {"game_id": game_id},
    }.get(path)


def refers_to_the_game(path: str) -> bool:
    return "{id}" in path or path == "/v1/audit"


def json_or_words(response: httpx.Response) -> Any:
    """A JSON answer decoded; any other (the metrics' text) as its list of words."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    return response.text.split()


#: Routes that end the caller's own tokens (ACCOUNTS.md): they answer nothing of any game,
#: and the walk's player must stay signed in for the WebSocket part that follows.
ENDS_THE_CALLERS_TOKENS = {("DELETE", "/v1/players/me/tokens"), ("DELETE", "/v1/players/me")}
assert {
    (method, route.path)
    for route in ROUTES
    if isinstance(route, Route)
    for method in route.methods or ()
} >= ENDS_THE_CALLERS_TOKENS


async def walk_rest(
    http: httpx.AsyncClient, who: Player | None, game_id: str, version: int
) -> list[tuple[str, httpx.Response]]:
    """Every REST route of the app, as ``who`` (None: anonymously), pointed at the game."""
    answers = []
    for route in ROUTES:
        if not isinstance(route, Route):
            continue  # the web client's page and files
        for method in sorted((route.methods or set()) - {"HEAD"}):
            if (method, route.path) in ENDS_THE_CALLERS_TOKENS:
                continue
            body = request_body(route.path, game_id, version)
            response = await http.request(
                method,
                concrete(route.path, game_id),
                json=body,
                headers=who.headers if who else {},
            )
            answers.append((f"{method} {route.path}", response))
    return answers


async def walk_websocket(
    ws: WSClient, who: Player | None, game_id: str, version: int
) -> dict[str, dict[str, Any]]:
    """Every WebSocket message type, as ``who``, pointed at the game: the reply to each."""
    messages = {
        "auth": {"type": "auth", "token": who.token if who else "v1.p_x.1.x"},
        "ping": {"type": "ping", "nonce": 1},
        "subscribe": {"type": "subscribe", "game_id": game_id, "version": 0},
        "unsubscribe": {"type": "unsubscribe", "game_id": game_id},
        "move": {
            "type": "move",
            "game_id": game_id,
            "move": "deal",
            "version": version,
            "move_id": "scout",
        },
    }
    assert set(messages) == set(HANDLERS)
    replies = {}
    for kind, message in messages.items():
        await ws.send(message)
        replies[kind] = await ws.recv()
    await ws.send({"type": "subscribe", "game_id": game_id})  # the latest version too
    replies["subscribe (latest)"] = await ws.recv()
    return replies


async def test_nobody_but_its_player_reads_an_open_days_ranked_game(
    served: RunningServer, clock: Clock
) -> None:
    async with (
        httpx.AsyncClient(base_url=served.base_url, timeout=WAIT * 2) as http,
        ws_clients(served.ws_url) as connect,
    ):
        api = Api(http)
        owner, other = await api.player(), await api.player()
        response = await http.post("/v1/daily/balcony", headers=owner.headers)
        game_id = response.json()["id"]
        owners_socket = await connect()
        await owners_socket.auth(owner)
        await owners_socket.subscribe(game_id)
        await owners_socket.recv("snapshot")
        # The owner deals through the stock: every card of the deal comes face up.
        version = 0
        snapshot = await api.get(game_id, owner)
        while "deal" in snapshot["legal_moves"]:
            clock.now += 1_500 + version * 397 % 1_100  # at a person's pace
            snapshot = (await api.move(owner, game_id, "deal", version))["snapshot"]
            version += 1
        cards = set(card_texts(snapshot["view"]))
        assert len(cards) > 30, cards
        closes = closes_ms(DAY)

        # Others (a second player, and anonymous) while the day is open.
        watchers = []
        for who in (other, None):
            for what, response in await walk_rest(http, who, game_id, version):
                body = json_or_words(response)
                if refers_to_the_game(what.split(" ", 1)[1]):
                    assert response.status_code in (401, 403), (what, response.text)
                    if what.split(" ", 1)[1].startswith("/v1/operator/"):
                        # An operator's route (its {id} a review's): never a player's.
                        assert response.status_code == 401 or (
                            error_code(response) == "operator_required"
                        ), (what, response.text)
                    elif response.status_code == 403 and "moves" not in what:
                        assert error_code(response) == "daily_open", (what, response.text)
                        assert body["error"]["closes"] == closes
                    assert not card_texts(body), (what, response.text)
                    continue
                assert game_id not in response.text, (what, response.text)
                if isinstance(body, dict) and "view" in body:
                    # The caller's own new game (a casual one, or their own ranked attempt):
                    # a fresh deal, nothing of the owner's play.
                    assert body["version"] == 0, (what, body)
                    continue
                if what == "GET /asyncapi.json":
                    # The protocol's document: its examples are the recorded frames of the
                    # sessions' casual games, the same whoever asks and whatever is stored.
                    assert body == asyncapi_document(), what
                    continue
                assert not card_texts(body), (what, response.text)
            socket = await connect()
            watchers.append(socket)
            replies = await walk_websocket(socket, who, game_id, version)
            for kind in ("subscribe", "subscribe (latest)"):
                assert replies[kind]["type"] == "error", replies[kind]
                assert replies[kind]["code"] == "daily_open", replies[kind]
                assert replies[kind]["closes"] == closes
            assert replies["move"]["type"] == "rejected"
            assert replies["move"]["code"] == ("forbidden" if who else "not_authenticated")
            assert not card_texts(replies), replies
        # The owner keeps playing; the others' sockets receive nothing of it.
        clock.now += 2_000
        reply = await owners_socket.move(game_id, "resign", version, "end")
        assert reply["type"] == "accepted"
        assert (reply["patch"]["v"], reply["patch"]["s"]) == (version + 1, "resigned")
        for socket in watchers:
            assert await socket.ping() == []
            assert not card_texts(socket.received), socket.received
        # The owner reads everything of their own game.
        assert (await http.get(f"/v1/games/{game_id}/log", headers=owner.headers)).is_success
        assert (await http.get(f"/v1/games/{game_id}/replay", headers=owner.headers)).is_success
        audit = await http.post("/v1/audit", json={"game_id": game_id}, headers=owner.headers)
        assert audit.json()["game_id"] == game_id

        # After the close everything is readable, by anybody.
        clock.now = closes
        assert set(card_texts((await api.get(game_id))["view"])) == cards
        log = (await http.get(f"/v1/games/{game_id}/log")).json()
        assert log["seed"] and len(log["moves"]) == version + 1
        replay = (await http.get(f"/v1/games/{game_id}/replay")).json()
        assert new_game("balcony", replay["seed"]).state_hash() == (
            new_game("balcony", log["seed"]).state_hash()
        )
        # (POST /v1/audit needs a player's token: anybody's.)
        audited = await http.post("/v1/audit", json={"game_id": game_id}, headers=other.headers)
        verdict = audited.json()
        assert verdict["game_id"] == game_id and verdict["passed"], verdict
        board = (await http.get(f"/v1/leaderboards/balcony/{DAY}")).json()
        owners_entry = next(e for e in board["entries"] if e["player_id"] == owner.player_id)
        assert owners_entry["game_id"] == game_id
        spectator = await connect()
        await spectator.subscribe(game_id, version=0)
        patches = [await spectator.recv("patch") for _ in range(version + 1)]
        assert [patch["v"] for patch in patches] == list(range(1, version + 2))
        assert card_texts(patches) and set(card_texts(patches)) <= cards


async def test_the_close_ends_play_on_the_websocket(served: RunningServer, clock: Clock) -> None:
    clock.now = closes_ms(DAY) - 60_000  # 23:59
    async with (
        httpx.AsyncClient(base_url=served.base_url, timeout=WAIT * 2) as http,
        ws_clients(served.ws_url) as connect,
    ):
        owner = await Api(http).player()
        game = (await http.post("/v1/daily/colorado", headers=owner.headers)).json()
        ws = await connect()
        await ws.auth(owner)
        assert (await ws.move(game["id"], "stock>tableau[0]", 0, "before"))["type"] == "accepted"
        clock.now = closes_ms(DAY) + 60_000  # 00:01
        reply = await ws.move(game["id"], "stock>tableau[1]", 1, "after")
        assert reply["type"] == "rejected" and reply["code"] == "daily_closed", reply
        assert reply["closes"] == closes_ms(DAY)
        assert await ws.ping() == []
        subscribed = await ws.subscribe(game["id"])
        assert subscribed["role"] == "owner" and subscribed["legal_moves"] == [], subscribed


# -- finding 4: a daily start is all or nothing, and a retry converges ---------------------


class CrashingRedis(Redis):
    """A client that stops its redis-server right after its ``crash_after``-th command
    (a pipeline counts as one): Redis going away between two steps of a request."""

    def __init__(self, stop: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stop = stop
        self.crash_after: int | None = None

    def count(self) -> None:
        if self.crash_after is not None:
            self.crash_after -= 1
            if self.crash_after == 0:
                self.crash_after = None
                self.stop()

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        result = await super().execute_command(*args, **options)
        self.count()
        return result

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        client = self

        class CountedPipeline(Pipeline):
            async def execute(self, raise_on_error: bool = True) -> list[Any]:
                result = await super().execute(raise_on_error)
                client.count()
                return result

        return CountedPipeline(self.connection_pool, self.response_callbacks, transaction, None)


async def test_a_daily_start_cut_by_redis_going_away_converges_on_retry(
    tmp_path: Path, make_redis: Callable[..., Any]
) -> None:
    redis_process = make_redis(data_dir=tmp_path)
    crashing = CrashingRedis(
        redis_process.stop,
        host="127.0.0.1",
        port=redis_process.port,
        socket_timeout=WAIT,
        # Quick retries: redis-py's default backs off for seconds before each 503, which
        # is not what this test is about.
        retry=Retry(ConstantBackoff(0.2), 5),
    )
    app = create_app(Settings(redis_url=redis_process.url, secret=SECRET, daily=TEST_DAILY))
    async with app.router.lifespan_context(app):
        # The server's daily starts go through the crashing client.
        service = GameService(Store(crashing), SECRET.encode(), clock=Clock())
        app.state.service = service
        await choose_dailies(service)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            step = 0
            while True:
                step += 1
                assert step < 20, "a daily start takes fewer than 20 round trips"
                player = await new_player_after_restart(http)
                crashing.crash_after = step
                first = await http.post("/v1/daily/matrimony", headers=player.headers)
                if crashing.crash_after is not None:  # the start took fewer steps
                    assert first.status_code == 200, first.text
                    crashing.crash_after = None
                    break
                if first.status_code != 200:  # cut before its last step
                    assert first.status_code == 503, (step, first.text)
                    assert error_code(first) == "store_unavailable"
                redis_process.start()  # same port and append-only file: what was written
                retry = await eventually_not_503(http, player)
                assert retry.status_code == 200, (step, retry.text)
                game = retry.json()
                # Another pooled connection may still meet the restart once: a 503 to retry.
                again = await eventually_not_503(http, player)
                assert again.status_code == 200, (step, again.text)
                assert again.json()["id"] == game["id"] and game["daily"] == DAY
                # One attempt, indexed, stored, on the board; nothing else of this player.
                attempts = await crashing.hgetall(attempts_key("matrimony", game["daily"]))
                assert attempts[player.player_id.encode()] == game["id"].encode()
                assert await crashing.exists(game_keys(game["id"])[0])
                _, entries = board_keys("matrimony", game["daily"])
                assert await crashing.hexists(entries, player.player_id)
                if first.status_code == 200:
                    assert first.json()["id"] == game["id"]
                owned = [
                    key
                    async for key in crashing.scan_iter("game:{*}")
                    if key.endswith(b"}")
                    and await crashing.hget(key, "owner") == player.player_id.encode()
                ]
                assert owned == [game_keys(game["id"])[0].encode()]
            assert step > 3  # every step of a start was cut once
    await crashing.aclose()


async def new_player_after_restart(http: httpx.AsyncClient) -> Player:
    """A new player, once the server's pooled connections have met the restart (each
    dead one answers one 503 before it reconnects)."""
    for _ in range(50):
        response = await http.post("/v1/players")
        if response.status_code != 503:
            assert response.status_code == 201, response.text
            return Player(response.json()["player_id"], response.json()["token"])
        await asyncio.sleep(0.1)
    raise AssertionError(f"still 503 after the restart: {response.text}")


async def eventually_not_503(http: httpx.AsyncClient, player: Player) -> httpx.Response:
    """The first answer to the player's daily start that is not a 503 (the client
    reconnects after the restart)."""
    for _ in range(50):
        response = await http.post("/v1/daily/matrimony", headers=player.headers)
        if response.status_code != 503:
            return response
        await asyncio.sleep(0.1)
    raise AssertionError(f"still 503 after the restart: {response.text}")


# -- finding 5: a cached game is used only while it is the stored one ----------------------


async def test_a_worker_does_not_build_on_a_write_the_store_lost(
    redis_url: str, redis_cluster: bool, redis_client: Redis
) -> None:
    """The game's keys go back to an older state behind worker A's back, and another
    worker moves on from there to the same version A has cached.  A's next move must
    apply to the stored game, whose audit then passes."""
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as worker_a,
        run_app(redis_url, redis_cluster=redis_cluster) as worker_b,
        httpx.AsyncClient(base_url=worker_a.base_url, timeout=WAIT * 2) as http_a,
        httpx.AsyncClient(base_url=worker_b.base_url, timeout=WAIT * 2) as http_b,
    ):
        a, b = Api(http_a), Api(http_b)
        owner = await a.player()
        game_id = (await a.create_game(owner, "colorado", "lost-write"))["id"]
        await a.move(owner, game_id, "stock>tableau[0]", 0, move_id="m1")
        await a.move(owner, game_id, "stock>tableau[1]", 1, move_id="m2")
        saved = {key: await redis_client.dump(key) for key in game_keys(game_id)}
        await a.move(owner, game_id, "stock>tableau[2]", 2, move_id="m3")  # A caches v3

        for key, value in saved.items():  # a restore: the v3 write is lost
            assert value is not None, key
            await redis_client.restore(key, 0, value, replace=True)
        await b.move(owner, game_id, "stock>tableau[3]", 2, move_id="m3b")  # another v3

        reply = await a.move(owner, game_id, "stock>tableau[4]", 3, move_id="m4")
        assert reply["version"] == 4
        version, stored = await stored_game(redis_client, game_id)
        expected = new_game("colorado", "lost-write")
        for move in (
            "stock>tableau[0]",
            "stock>tableau[1]",
            "stock>tableau[3]",
            "stock>tableau[4]",
        ):
            expected.play(Move(move))
        assert version == 4 and stored.state_hash() == expected.state_hash()
        assert reply["snapshot"]["view"] == expected.view()
        verdict = await audit_stored(worker_a.app.state.service, game_id)
        assert verdict.passed, verdict.findings
