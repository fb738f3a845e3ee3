"""Restart this deal (``POST /v1/games/{id}/restart``) and the undo that takes a stuck
casual game back into play (``REST.md``, "Restart" and "Undo")."""

from __future__ import annotations

from server_support import Api, RunningServer, error_code

from server.players import Players
from server.rules import UNDO
from server.testing import dailies_chosen

#: A Gloucestershire deal stuck after these two moves (first found by greedy play).
STUCK_SEED = "stuck-1"
STUCK_LINE = ["tableau[0]>foundation[0]", "tableau[4]>tableau[1]"]


async def my_games(http, player) -> list[dict]:
    response = await http.get("/v1/players/me/games", headers=player.headers)
    assert response.status_code == 200, response.text
    return response.json()["games"]


async def test_restart_deals_the_same_deal_recorded_as_a_restart(
    api: Api, http, server: RunningServer
) -> None:
    owner, other = await api.player(), await api.player()
    game = await api.create_game(owner, "gloucestershire", STUCK_SEED)
    await api.move(owner, game["id"], STUCK_LINE[0], 0)
    url = f"/v1/games/{game['id']}/restart"
    restarted = await http.post(url, headers=owner.headers)
    assert restarted.status_code == 201, restarted.text
    fresh = restarted.json()
    assert fresh["id"] != game["id"] and fresh["version"] == 0 and fresh["status"] == "playing"
    assert fresh["view"] == game["view"] and fresh["legal_moves"] == game["legal_moves"]
    assert fresh["daily"] is None and "seed" not in fresh
    listed = {entry["id"]: entry for entry in await my_games(http, owner)}
    assert listed[fresh["id"]]["restart_of"] == game["id"]
    assert listed[game["id"]]["restart_of"] is None and listed[game["id"]]["moves"] == 1
    # The old game is left as it was.
    assert (await api.get(game["id"], owner))["version"] == 1
    # Refusals: typed, and nothing is created.
    assert (await http.post(url, headers=other.headers)).status_code == 403
    assert error_code(await http.post(url, headers=other.headers)) == "forbidden"
    assert error_code(await http.post(url)) == "unauthorized"
    assert error_code(await http.post("/v1/games/g_nope/restart", headers=owner.headers)) == (
        "unknown_game"
    )
    body = await http.post(url, json={"seed": "x"}, headers=owner.headers)
    assert body.status_code == 400 and error_code(body) == "unknown_field"
    await dailies_chosen(server.app)
    daily = (await http.post("/v1/daily/balcony", headers=owner.headers)).json()
    before = len(await my_games(http, owner))
    refused = await http.post(f"/v1/games/{daily['id']}/restart", headers=owner.headers)
    assert refused.status_code == 403 and error_code(refused) == "restart_ranked"
    assert len(await my_games(http, owner)) == before
    assert await my_games(http, other) == []


async def test_undo_takes_a_stuck_casual_game_back_into_play(api: Api, http) -> None:
    owner = await api.player()
    game = await api.create_game(owner, "gloucestershire", STUCK_SEED)
    version = 0
    for move in STUCK_LINE:
        reply = await api.move(owner, game["id"], move, version)
        version = reply["version"]
    assert reply["snapshot"]["status"] == "stuck"

    async def stats() -> dict:
        response = await http.get("/v1/players/me/stats", headers=owner.headers)
        return response.json()["games"]["gloucestershire"]

    assert (await stats())["played"] == 1
    verdict = await http.get(f"/v1/games/{game['id']}/verdict", headers=owner.headers)
    assert verdict.status_code == 200, verdict.text
    undone = await api.move(owner, game["id"], UNDO, version)
    snapshot = undone["snapshot"]
    assert snapshot["status"] == "playing" and snapshot["legal_moves"]
    # Out of the count until its next end; no verdict while it is on again.
    assert (await stats())["played"] == 0
    (entry,) = await my_games(http, owner)
    assert entry["status"] == "playing" and entry["finished_at"] is None
    reopened = await http.get(f"/v1/games/{game['id']}/verdict", headers=owner.headers)
    assert reopened.status_code == 409 and error_code(reopened) == "not_finished"
    # Its next end counts it once more; won and resigned stay final.
    resigned = await api.move(owner, game["id"], "resign", undone["version"])
    assert resigned["snapshot"]["status"] == "resigned" and (await stats())["played"] == 1
    final = await http.post(
        f"/v1/games/{game['id']}/moves",
        json={"move": UNDO, "version": resigned["version"]},
        headers=owner.headers,
    )
    assert final.status_code == 409 and error_code(final) == "game_over"
    # The audit replays the undo out of the stuck position like any other.
    audit = await http.post("/v1/audit", json={"game_id": game["id"]}, headers=owner.headers)
    assert audit.status_code == 200 and audit.json()["integrity"] == "pass", audit.text


async def test_a_reopened_loss_gives_back_the_streak_it_broke(redis_client) -> None:
    players = Players(redis_client)
    for number in range(2):  # two wins: a streak of 2
        await players.record_finish("p_reopen", f"g_{number}", "colorado", True, 104, number, 60)
    await players.record_finish("p_reopen", "g_stuck", "colorado", False, 40, 5, 60)
    assert (await players.stats("p_reopen"))["colorado"]["current_streak"] == 0
    assert await players.reopen("p_reopen", "g_stuck", "colorado")
    stats = (await players.stats("p_reopen"))["colorado"]
    assert (stats["played"], stats["won"], stats["current_streak"]) == (2, 2, 2)
    assert not await players.reopen("p_reopen", "g_stuck", "colorado")  # counted out once
    # Its next end counts it again; a loss after a later win is not given back.
    await players.record_finish("p_reopen", "g_stuck", "colorado", False, 41, 9, 60)
    await players.record_finish("p_reopen", "g_win", "colorado", True, 104, 10, 60)
    assert await players.reopen("p_reopen", "g_stuck", "colorado")
    stats = (await players.stats("p_reopen"))["colorado"]
    assert (stats["played"], stats["current_streak"], stats["best_streak"]) == (3, 1, 2)
