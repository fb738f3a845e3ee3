"""A ranked game and its board entry cannot be split by a stop between them: the entry is
written with the move, in the game's own slot (its outbox), and recorded on the board
afterwards, again at every start of a server (on a standalone Redis and on a cluster)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from redis.exceptions import ConnectionError as RedisConnectionError
from server_support import WAIT, Api, run_app

from server.leaderboard import Leaderboards
from server.store import OUTBOX_FIELD, game_key


async def test_a_board_update_cut_off_after_the_final_move_is_recorded_at_the_next_start(
    redis_url: str, redis_cluster: bool, redis_client: Any, monkeypatch: Any
) -> None:
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as first,
        httpx.AsyncClient(base_url=first.base_url, timeout=WAIT * 2) as http,
    ):
        api = Api(http)
        player = await api.player()
        response = await http.post("/v1/daily/colorado", headers=player.headers)
        assert response.status_code == 200, response.text
        game = response.json()
        boards: Leaderboards = first.app.state.service.leaderboards

        async def gone(*args: Any, **kwargs: Any) -> bool:
            raise RedisConnectionError("the process stopped here")

        # The process "stops" between the move script and the board update.
        monkeypatch.setattr(boards, "record", gone)
        response = await http.post(
            f"/v1/games/{game['id']}/moves",
            json={"move": "resign", "version": 0, "move_id": "end"},
            headers=player.headers,
        )
        assert response.status_code == 503, response.text
        monkeypatch.undo()
        date = game["daily"]
        entry = await boards.entry("colorado", date, player.player_id)
        assert entry is not None and entry.status == "playing"
        assert await redis_client.hget(game_key(game["id"]), OUTBOX_FIELD) is not None

    # Nobody retries the move: the next server to start records the entry.
    async with run_app(redis_url, redis_cluster=redis_cluster) as second:
        boards = second.app.state.service.leaderboards
        async with asyncio.timeout(WAIT):  # the re-drive runs beside the start-up
            while True:
                entry = await boards.entry("colorado", date, player.player_id)
                if entry is not None and entry.ended:
                    break
                await asyncio.sleep(0.02)
        assert (entry.status, entry.moves) == ("resigned", 1)
        assert await redis_client.hget(game_key(game["id"]), OUTBOX_FIELD) is None
