"""The rate buckets of one request (an address's and a player's) on a standalone Redis and
on a Redis Cluster, where they live in different slots (``protocol/REDIS.md``)."""

from __future__ import annotations

import httpx
from server_support import SECRET, WAIT, Api

from server.app import create_app
from server.config import Limits, Settings
from server.testing import serve_app


async def test_a_players_moves_are_limited_whatever_the_slots_of_its_buckets(
    redis_url: str, redis_cluster: bool
) -> None:
    limits = Limits(player_moves_per_minute=2, address_moves_per_minute=1000)
    settings = Settings(
        redis_url=redis_url, secret=SECRET, redis_cluster=redis_cluster, limits=limits
    )
    async with (
        serve_app(create_app(settings)) as port,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=WAIT * 2) as http,
    ):
        api = Api(http)
        player = await api.player()
        game_id = (await api.create_game(player, "balcony", "buckets"))["id"]
        codes = []
        for version in range(3):
            response = await http.post(
                f"/v1/games/{game_id}/moves",
                json={"move": "deal", "version": version},
                headers=player.headers,
            )
            codes.append(response.status_code)
        assert codes == [200, 200, 429]
        assert response.json()["error"]["code"] == "rate_limited"
        # Another player of the same address still moves: the player's bucket refused.
        other = await api.player()
        other_game = (await api.create_game(other, "balcony", "buckets"))["id"]
        assert (await api.move(other, other_game, "deal", 0))["version"] == 1
