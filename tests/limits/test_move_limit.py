"""``--max-moves-per-game``: at the limit every move but ``resign`` is refused with
``move_limit`` (409); ``resign`` still ends the game, so it can be ranked and audited."""

from __future__ import annotations

from limits_support import client, error_of, new_game, new_player, running, sockets


async def test_moves_beyond_the_limit_are_refused_but_resign_ends_the_game(
    redis_url: str,
) -> None:
    async with (
        running(redis_url, max_moves_per_game=3) as server,
        client(server) as http,
        sockets(server) as open_socket,
    ):
        headers = await new_player(http)
        game = await new_game(http, headers)
        moves = f"/v1/games/{game['id']}/moves"
        for version in range(3):
            body = {"move": "deal", "version": version}
            response = await http.post(moves, json=body, headers=headers)
            assert response.status_code == 200, response.text
        refused = await http.post(moves, json={"move": "deal", "version": 3}, headers=headers)
        assert refused.status_code == 409
        error = error_of(refused)
        assert error["code"] == "move_limit" and error["version"] == 3, error

        ws = await open_socket()
        token = headers["Authorization"].split()[1]
        await ws.request({"type": "auth", "token": token}, "authenticated")
        move = {"type": "move", "game_id": game["id"], "version": 3}
        rejected = await ws.request({**move, "move": "deal", "move_id": "x"}, "rejected")
        assert rejected["code"] == "move_limit", rejected
        accepted = await ws.request({**move, "move": "resign", "move_id": "r"}, "accepted")
        assert accepted["status"] == "resigned" and accepted["version"] == 4

        log = (await http.get(f"/v1/games/{game['id']}/log")).json()
        assert [entry["move"] for entry in log["moves"]] == ["deal"] * 3 + ["resign"]
        verdict = await http.post("/v1/audit", json={"game_id": game["id"]}, headers=headers)
        assert verdict.status_code == 200, verdict.text
