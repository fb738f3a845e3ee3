"""``undo`` over REST and the WebSocket: casual games only, logged, chained, audited."""

from __future__ import annotations

from server_support import Api, RunningServer, apply_patch, apply_rest_patch, error_code

from server.rules import UNDO, new_game
from server.testing import dailies_chosen


async def test_rest_undo_goes_back_move_by_move_and_is_logged_and_audited(api: Api, http) -> None:
    owner = await api.player()
    game = await api.create_game(owner, "balcony", "undo-rest")
    dealt = game["view"]
    nothing = await http.post(
        f"/v1/games/{game['id']}/moves", json={"move": UNDO, "version": 0}, headers=owner.headers
    )
    assert nothing.status_code == 422 and error_code(nothing) == "illegal_move"
    assert nothing.json()["error"]["reason_code"] == "nothing_to_undo"
    views, version = [dealt], 0
    for _ in range(3):
        reply = await api.move(owner, game["id"], game["legal_moves"][0], version)
        game, version = reply["snapshot"], reply["version"]
        views.append(game["view"])
    for back in (2, 1):
        reply = await api.move(owner, game["id"], UNDO, version)
        version = reply["version"]
        assert reply["patch"]["move"] == UNDO and reply["patch"]["to"] == version
        assert apply_rest_patch(views[back + 1], reply["patch"]) == views[back]
        assert reply["snapshot"]["view"] == views[back]
    # The undone position is the engine's after the first move; the log has every move.
    engine = new_game("balcony", "undo-rest")
    engine.play(new_game("balcony", "undo-rest").legal_moves()[0])
    assert reply["snapshot"]["view"] == engine.view() and version == 5
    log = await api.log(game["id"])
    assert [entry["move"] for entry in log["moves"]][-2:] == [UNDO, UNDO]
    await api.move(owner, game["id"], "resign", version)
    verdict = await http.post("/v1/audit", json={"game_id": game["id"]}, headers=owner.headers)
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["integrity"] == "pass" and verdict.json()["replayed_moves"] == 6


async def test_undo_after_the_end_is_game_over(api: Api, http) -> None:
    owner = await api.player()
    game = await api.create_game(owner, "colorado", "undo-end")
    reply = await api.move(owner, game["id"], game["legal_moves"][0], 0)
    await api.move(owner, game["id"], "resign", reply["version"])
    refused = await http.post(
        f"/v1/games/{game['id']}/moves", json={"move": UNDO, "version": 2}, headers=owner.headers
    )
    assert refused.status_code == 409 and error_code(refused) == "game_over"


async def test_undo_is_refused_in_a_ranked_game(
    api: Api, http, ws_connect, server: RunningServer
) -> None:
    await dailies_chosen(server.app)
    owner = await api.player()
    started = await http.post("/v1/daily/gloucestershire", headers=owner.headers)
    game = started.json()
    refused = await http.post(
        f"/v1/games/{game['id']}/moves", json={"move": UNDO, "version": 0}, headers=owner.headers
    )
    assert refused.status_code == 403 and error_code(refused) == "undo_ranked"
    client = await ws_connect()
    await client.auth(owner)
    rejected = await client.move(game["id"], UNDO, 0, "m-undo")
    assert rejected["type"] == "rejected" and rejected["code"] == "undo_ranked"
    assert (await api.get(game["id"], owner))["version"] == 0


async def test_websocket_undo_patches_every_watcher(api: Api, ws_connect) -> None:
    owner = await api.player()
    game = await api.create_game(owner, "matrimony", "undo-ws")
    player, watcher = await ws_connect(), await ws_connect()
    await player.auth(owner)
    await watcher.subscribe(game["id"])
    # The snapshot comes after the "subscribed" reply: a move before it would be in the
    # snapshot instead of a patch (a loaded CI machine got there first).
    assert (await watcher.recv("snapshot"))["snapshot"]["version"] == 0
    dealt = game["view"]
    accepted = await player.move(game["id"], "deal", 0, "m1")
    assert accepted["type"] == "accepted"
    accepted = await player.move(game["id"], UNDO, 1, "m2")
    assert accepted["type"] == "accepted" and accepted["version"] == 2
    first = await watcher.recv("patch")
    second = await watcher.recv("patch")
    assert second["m"] == UNDO and (first["v"], second["v"]) == (1, 2)
    assert apply_patch(apply_patch(dealt, first), second) == dealt


async def test_an_undo_sent_twice_with_one_move_id_is_applied_once(api: Api) -> None:
    owner = await api.player()
    game = await api.create_game(owner, "balcony", "undo-twice")
    first = await api.move(owner, game["id"], "deal", 0)
    second = await api.move(owner, game["id"], "deal", first["version"])
    undone = await api.move(owner, game["id"], UNDO, second["version"], move_id="u-1")
    again = await api.move(owner, game["id"], UNDO, second["version"], move_id="u-1")
    assert undone["duplicate"] is False and again["duplicate"] is True
    assert again["version"] == undone["version"] == 3 and again["patch"] is None
    assert again["snapshot"]["view"] == first["snapshot"]["view"]
