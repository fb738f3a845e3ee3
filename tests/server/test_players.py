"""Players: display names, the history of their games, their stats, a game's verdict."""

from __future__ import annotations

import random

import httpx
import pytest
from redis.crc import key_slot
from server_support import Api, Player, RunningServer, error_code

from server.players import Players, games_key, legacy_key, name_key, player_key, stats_key
from server.rules import Game, new_game
from server.testing import dailies_chosen

#: A Colorado deal the greedy player below wins (found offline with the engine).
WON_SEED = "win-11"


def greedy_moves(name: str, seed: str) -> tuple[list[str], str]:
    """The moves of a player who takes a foundation move when there is one, and how the
    game ends."""
    game: Game = new_game(name, seed)
    chooser, moves = random.Random(0), []
    while game.status == "playing" and len(moves) < 3000:
        legal = game.legal_moves()
        home = [move for move in legal if move.endswith("]") and ">foundation" in move]
        moves.append(chooser.choice(home or legal))
        game.play(moves[-1])
    return moves, game.status


async def play_out(api: Api, player: Player, game: dict, moves: list[str]) -> dict:
    version = game["version"]
    for move in moves:
        reply = await api.move(player, game["id"], move, version)
        version = reply["version"]
    return reply["snapshot"]


async def named(http: httpx.AsyncClient, name: str) -> Player:
    response = await http.post("/v1/players", json={"name": name})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["name"] == name
    return Player(body["player_id"], body["token"])


async def test_names_are_validated_normalised_and_unique_in_any_case(http, api: Api) -> None:
    ann = await named(http, "Ann Lee")
    me = (await http.get("/v1/players/me", headers=ann.headers)).json()
    assert me["name"] == "Ann Lee" and me["player_id"] == ann.player_id
    taken = await http.post("/v1/players", json={"name": "ANN LEE"})
    assert taken.status_code == 409 and error_code(taken) == "name_taken"
    for bad in ("ab", " Ann", "Ann ", "x" * 25, "Ann!", "a\u0000b", 12):
        refused = await http.post("/v1/players", json={"name": bad})
        assert refused.status_code == 400 and error_code(refused) == "invalid_field", bad
        assert refused.json()["error"]["field"] == "name"
    # NFKC: full-width letters are the plain ones.
    bob = await http.post("/v1/players", json={"name": "\uff22\uff4f\uff42"})
    assert bob.status_code == 201 and bob.json()["name"] == "Bob"
    again = await http.post("/v1/players", json={"name": "bob"})
    assert error_code(again) == "name_taken"
    # A rename frees the old name; a name already one's own (any case) stays one's own.
    other = await api.player()
    renamed = await http.put("/v1/players/me", json={"name": "Ann-2"}, headers=ann.headers)
    assert renamed.status_code == 200 and renamed.json()["name"] == "Ann-2"
    recased = await http.patch("/v1/players/me", json={"name": "ANN-2"}, headers=ann.headers)
    assert recased.json()["name"] == "ANN-2"
    freed = await http.put("/v1/players/me", json={"name": "ann lee"}, headers=other.headers)
    assert freed.status_code == 200, freed.text
    clash = await http.patch("/v1/players/me", json={"name": "ann-2"}, headers=other.headers)
    assert clash.status_code == 409 and error_code(clash) == "name_taken"
    cleared = await http.put("/v1/players/me", json={"name": None}, headers=ann.headers)
    assert cleared.json()["name"] is None
    assert (await http.put("/v1/players/me", json={"name": "ann-2"}, headers=other.headers)).json()[
        "name"
    ] == "ann-2"
    anonymous = await http.put("/v1/players/me", json={"name": "Zed"})
    assert anonymous.status_code == 401 and error_code(anonymous) == "unauthorized"
    extra = await http.put("/v1/players/me", json={"name": "Zed", "x": 1}, headers=ann.headers)
    assert extra.status_code == 400 and error_code(extra) == "unknown_field"


async def test_a_name_whose_player_expired_can_be_claimed(http, redis_client) -> None:
    gone = await named(http, "Ghost")
    await redis_client.delete(f"player:{{{gone.player_id}}}")
    heir = await named(http, "GHOST")
    assert await redis_client.hget("names", name_key("Ghost")) == heir.player_id.encode()


async def test_the_sweep_releases_only_the_names_of_expired_players(
    http, redis_client, server: RunningServer
) -> None:
    kept = await named(http, "Keeper")
    gone = await named(http, "Leaver")
    await redis_client.delete(f"player:{{{gone.player_id}}}")
    players = server.app.state.service.players
    assert await players.sweep_names() == 1
    assert await redis_client.hgetall("names") == {
        name_key("Keeper").encode(): kept.player_id.encode()
    }
    assert await players.sweep_names() == 0


#: Names a red team took as distinct from ``Alice``: Cyrillic and Greek capital A, a
#: capital I for the l, a digit one, a trailing dot, other cases.
ALICE_LOOKALIKES = [
    "\u0410lice",  # Cyrillic А
    "\u0391lice",  # Greek Α
    "AIice",
    "A1ice",
    "Alice.",
    "ALICE",
    "\u0410\u04cf\u0456\u0441\u0435",  # Аӏісе, all Cyrillic
]


async def test_names_taken_for_one_another_are_one_name(http, api: Api) -> None:
    await named(http, "Alice")
    await named(http, "Bo Jones")
    for lookalike in [*ALICE_LOOKALIKES, "Bo  Jones", "B0 Jones", "Bo Jones-"]:
        response = await http.post("/v1/players", json={"name": lookalike})
        assert response.status_code in (400, 409), (lookalike, response.text)
        assert error_code(response) in ("name_taken", "invalid_field"), lookalike
    # Names of one other script, or of a mix Unicode deems safe, are names.
    for distinct in ("Алиса", "アリス", "Tanaka 太郎", "Alicia", "Bo Jonas"):
        response = await http.post("/v1/players", json={"name": distinct})
        assert response.status_code == 201, (distinct, response.text)


@pytest.mark.parametrize("prefix", ["\u05d0", "\u05d1\u05d9", "\u0416"])
async def test_a_letter_of_another_script_hides_no_lookalike(http, prefix: str) -> None:
    """A letter of another script in a name (a Hebrew prefix, a Cyrillic Ж) is how a
    lookalike hides: the name is the one without it."""
    await named(http, "Hidden Bob")
    for name in (prefix + "Hidden Bob", "Hidden Bob" + prefix, "Hidden " + prefix + "Bob"):
        response = await http.post("/v1/players", json={"name": name})
        assert response.status_code == 409 and error_code(response) == "name_taken", name


def test_name_keys() -> None:
    key = name_key("Alice")
    assert {name_key(name) for name in ALICE_LOOKALIKES} == {key}
    assert name_key("Al  ice") == name_key("Al ice") != key
    assert name_key("Mary") == name_key("rnary")
    assert name_key("Straße") == name_key("STRASSE")
    assert name_key("Alicia") != key and name_key("Bob") != name_key("Rob")
    assert name_key("\u05d0Alice") == name_key("Alice\u05d0") == key
    assert name_key("Tanaka 太郎") != name_key("Tanaka")  # a safe mix keeps its letters


async def test_the_sweep_moves_names_kept_under_their_old_key(
    http, redis_client, server: RunningServer
) -> None:
    """Entries of ``names`` from before the confusable keys (NFKC and case only) move to
    their key now, so the names they reserve stay reserved."""
    old = await named(http, "Olga Smith")
    await redis_client.hdel("names", name_key("Olga Smith"))
    await redis_client.hset("names", legacy_key("Olga Smith"), old.player_id)
    assert await server.app.state.service.players.sweep_names() == 0
    assert await redis_client.hgetall("names") == {
        name_key("Olga Smith").encode(): old.player_id.encode()
    }
    taken = await http.post("/v1/players", json={"name": "0lga Smith"})
    assert error_code(taken) == "name_taken"


async def test_leaderboard_entries_carry_the_players_names(
    http, api: Api, server: RunningServer
) -> None:
    await dailies_chosen(server.app)
    ann = await named(http, "Board Ann")
    anonymous = await api.player()
    for player in (ann, anonymous):
        started = await http.post("/v1/daily/balcony", headers=player.headers)
        assert started.status_code == 200, started.text
    date = started.json()["daily"]
    board = (await http.get(f"/v1/leaderboards/balcony/{date}")).json()
    names = {entry["player_id"]: entry["name"] for entry in board["entries"]}
    assert names == {ann.player_id: "Board Ann", anonymous.player_id: None}
    mine = await http.get(f"/v1/leaderboards/balcony/{date}/me", headers=ann.headers)
    assert [
        entry["name"] for entry in mine.json()["entries"] if entry["rank"] == mine.json()["rank"]
    ] == ["Board Ann"]


async def test_my_games_lists_every_game_newest_first_in_pages(
    http, api: Api, server: RunningServer
) -> None:
    await dailies_chosen(server.app)
    me, other = await api.player(), await api.player()
    created = [await api.create_game(me, name, f"hist-{name}") for name in ("colorado", "balcony")]
    await api.create_game(other, "matrimony")
    daily = (await http.post("/v1/daily/gloucestershire", headers=me.headers)).json()
    await api.move(me, created[0]["id"], "resign", 0)
    first = await http.get("/v1/players/me/games?limit=2", headers=me.headers)
    assert first.status_code == 200, first.text
    page = first.json()
    assert [game["id"] for game in page["games"]] == [daily["id"], created[1]["id"]]
    assert page["games"][0]["daily"] == daily["daily"] and page["next"]
    rest = await http.get(
        "/v1/players/me/games", params={"cursor": page["next"]}, headers=me.headers
    )
    last = rest.json()
    assert last["next"] is None and len(last["games"]) == 1
    resigned = last["games"][0]
    assert resigned == {
        "id": created[0]["id"],
        "game": "colorado",
        "daily": None,
        "status": "resigned",
        "score": created[0]["score"],
        "moves": 1,
        "created_at": resigned["created_at"],
        "finished_at": resigned["finished_at"],
        "assisted": False,
        "restart_of": None,
        "void_reason": None,
    }
    assert resigned["finished_at"] >= resigned["created_at"] > 0
    for query in ("limit=0", "limit=201", "cursor=nope", "cursor=1%27"):
        bad = await http.get(f"/v1/players/me/games?{query}", headers=me.headers)
        assert bad.status_code == 400 and error_code(bad) == "invalid_field", query
    assert (await http.get("/v1/players/me/games")).status_code == 401


async def test_expired_games_leave_the_history(http, api: Api, redis_client) -> None:
    me = await api.player()
    kept = await api.create_game(me, "colorado")
    expired = await api.create_game(me, "balcony")
    await redis_client.delete(f"game:{{{expired['id']}}}")
    page = (await http.get("/v1/players/me/games", headers=me.headers)).json()
    assert [game["id"] for game in page["games"]] == [kept["id"]]
    assert await redis_client.zcard(f"player:{{{me.player_id}}}:games") == 1


async def test_stats_count_finished_games_wins_best_score_and_streaks(http, api: Api) -> None:
    me = await api.player()
    moves, status = greedy_moves("colorado", WON_SEED)
    assert status == "won"
    for _ in range(2):
        won = await play_out(api, me, await api.create_game(me, "colorado", WON_SEED), moves)
        assert won["status"] == "won"
    lost = await api.create_game(me, "colorado", "stats-lost")
    await api.move(me, lost["id"], "resign", 0)
    await api.create_game(me, "colorado", "stats-playing")  # not finished: not counted
    won = await play_out(api, me, await api.create_game(me, "colorado", WON_SEED), moves)
    stats = (await http.get("/v1/players/me/stats", headers=me.headers)).json()
    assert stats["player_id"] == me.player_id and set(stats["games"]) == {
        "empress_of_italy",
        "colorado",
        "gloucestershire",
        "matrimony",
        "balcony",
    }
    assert stats["games"]["colorado"] == {
        "played": 4,
        "won": 3,
        "best_score": won["score"],
        "current_streak": 1,
        "best_streak": 2,
    }
    assert stats["games"]["balcony"] == {
        "played": 0,
        "won": 0,
        "best_score": None,
        "current_streak": 0,
        "best_streak": 0,
    }


async def test_streaks_follow_the_finish_order(redis_client) -> None:
    players = Players(redis_client)
    for number, won in enumerate((True, True, True, False, True, True, False)):
        counted = await players.record_finish(
            "p_streak", f"g_{number}", "balcony", won, 10 if won else 3, 1000 + number, 60
        )
        assert counted
    # A retried final move counts its game once.
    assert not await players.record_finish("p_streak", "g_6", "balcony", False, 3, 1006, 60)
    stats = (await players.stats("p_streak"))["balcony"]
    assert stats == {
        "played": 7,
        "won": 5,
        "best_score": 10,
        "current_streak": 0,
        "best_streak": 3,
    }
    assert 0 < await redis_client.ttl("player:{p_streak}:stats") <= 60


async def test_a_finished_game_has_a_cached_verdict(http, api: Api, redis_client) -> None:
    me = await api.player()
    game = await api.create_game(me, "balcony", "verdict")
    playing = await http.get(f"/v1/games/{game['id']}/verdict")
    assert playing.status_code == 409 and error_code(playing) == "not_finished"
    reply = await api.move(me, game["id"], game["legal_moves"][0], 0)
    await api.move(me, game["id"], "undo", reply["version"])
    await api.move(me, game["id"], "resign", 2)
    verdict = await http.get(f"/v1/games/{game['id']}/verdict")
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["integrity"] == "pass" and verdict.json()["replayed_moves"] == 3
    assert await redis_client.ttl(f"game:{{{game['id']}}}:verdict") > 0
    # Served from the cache: a verdict written there is what the route answers.
    await redis_client.set(f"game:{{{game['id']}}}:verdict", b'{"cached": true}')
    assert (await http.get(f"/v1/games/{game['id']}/verdict")).json() == {"cached": True}
    replay = (await http.get(f"/v1/games/{game['id']}/replay")).json()
    assert replay["seed"] == "verdict" and [m["move"] for m in replay["moves"]][1] == "undo"
    missing = await http.get("/v1/games/g_nothing/verdict")
    assert missing.status_code == 404 and error_code(missing) == "unknown_game"


async def test_an_open_days_game_has_no_verdict_for_others(
    http, api: Api, server: RunningServer
) -> None:
    await dailies_chosen(server.app)
    me, other = await api.player(), await api.player()
    game = (await http.post("/v1/daily/colorado", headers=me.headers)).json()
    await api.move(me, game["id"], "resign", 0)
    for viewer in (other.headers, {}):
        refused = await http.get(f"/v1/games/{game['id']}/verdict", headers=viewer)
        assert refused.status_code == 403 and error_code(refused) == "daily_open"
    own = await http.get(f"/v1/games/{game['id']}/verdict", headers=me.headers)
    assert own.status_code == 409 and error_code(own) == "not_finished"


def test_a_players_keys_share_one_cluster_slot() -> None:
    slots = {key_slot(key("p_slot").encode()) for key in (player_key, games_key, stats_key)}
    assert len(slots) == 1


async def test_a_retried_final_move_counts_its_game_once(http, api: Api) -> None:
    me = await api.player()
    game = await api.create_game(me, "balcony", "stats-retry")
    for _ in range(2):
        await api.move(me, game["id"], "resign", 0, move_id="final")
    stats = (await http.get("/v1/players/me/stats", headers=me.headers)).json()
    assert stats["games"]["balcony"]["played"] == 1
