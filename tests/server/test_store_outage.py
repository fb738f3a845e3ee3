"""Redis goes away and comes back: typed 503s meanwhile, then recovery by itself.

This test has its own redis-server (own port, append-only file in a temporary
directory, so the data survives the restart): stopping the session's Redis would break
every other test.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from server_support import Api, WSClient, error_code, run_app
from websockets.asyncio.client import connect

RECOVERY = 15.0  # seconds: the hub reconnects with a backoff of at most 2 s


async def eventually(check, what: str, timeout: float = RECOVERY):
    """Poll ``check()`` until it returns a true value (bounded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: object = None
    while loop.time() < deadline:
        try:
            result = await check()
        except (httpx.TransportError, AssertionError) as error:
            result, last = None, error
        if result:
            return result
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout}s (last: {last!r})")


async def test_store_outage_and_recovery(tmp_path: Path, make_redis) -> None:
    redis = make_redis(data_dir=tmp_path)
    async with (
        run_app(redis.url) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):
        await outage_and_recovery(server, http, redis)


async def outage_and_recovery(server, http: httpx.AsyncClient, redis) -> None:
    api = Api(http)
    owner = await api.player()
    created = await api.create_game(owner, "colorado", "outage")
    game_id = created["id"]

    async def socket() -> WSClient:
        return WSClient(await asyncio.wait_for(connect(server.ws_url, max_size=None), 5))

    ws, spectator = await socket(), await socket()
    try:
        await ws.auth(owner)
        await ws.subscribe(game_id)
        await ws.recv("snapshot")
        await spectator.subscribe(game_id)
        await spectator.recv("snapshot")
        reply = await ws.move(game_id, "stock>tableau[0]", 0, "before")
        assert reply["type"] == "accepted" and reply["patch"]["v"] == 1
        assert (await spectator.recv("patch"))["v"] == 1

        redis.stop()

        response = await http.get(f"/v1/games/{game_id}")
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "store_unavailable"
        response = await http.post(
            f"/v1/games/{game_id}/moves",
            json={"move": "stock>tableau[1]", "version": 1},
            headers=owner.headers,
        )
        assert response.status_code == 503
        assert error_code(response) == "store_unavailable"
        response = await http.post("/v1/players")
        assert response.status_code == 503
        assert error_code(response) == "store_unavailable"
        response = await http.get("/readyz")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "store_unavailable"
        assert (await http.get("/healthz")).status_code == 200

        reply = await ws.move(game_id, "stock>tableau[1]", 1, "during")
        assert reply["type"] == "rejected" and reply["code"] == "store_unavailable", reply
        await ws.send({"type": "subscribe", "game_id": game_id, "version": 1})
        error = await ws.recv("error")
        assert error["code"] == "store_unavailable" and error["in_reply_to"] == "subscribe"
        # The sockets stay open.
        assert await ws.ping() == []
        assert await spectator.ping() == []

        redis.start()  # same port, same append-only file: the game is still there

        async def ready() -> bool:
            return (await http.get("/readyz")).status_code == 200

        await eventually(ready, "/readyz 200 after Redis came back")
        snapshot = await api.get(game_id, owner)
        assert snapshot["version"] == 1

        # Moves work again, through REST and the WebSocket, and the spectator (who never
        # resubscribed) receives their patches again.
        reply = await api.move(owner, game_id, "stock>tableau[2]", 1)
        assert reply["snapshot"]["version"] == 2

        async def owner_moves() -> bool:
            reply = await ws.move(game_id, "stock>tableau[3]", 2, "after")
            assert reply["type"] == "accepted", reply
            return True

        await eventually(owner_moves, "a WebSocket move after recovery")
        patches = [await spectator.recv("patch", timeout=RECOVERY) for _ in range(2)]
        assert [p["v"] for p in patches] == [2, 3]
        assert (await http.get("/readyz")).status_code == 200
    finally:
        await spectator.close()
        await ws.close()
