"""WebSocket flows: playing, patches, duplicates, spectators, reconnecting, races."""

from __future__ import annotations

import asyncio
import gc
import itertools
import random
import weakref
from typing import Any

import httpx
import pytest
from server_support import Api, WSClient, apply_patch, kill_pubsub_connections, run_app, stored
from websockets.asyncio.client import connect

from server import patches, store
from server.rules import GAME_NAMES, new_game
from server.ws import Connection
from server.wstransport import WebSocketProtocol

_ids = itertools.count(1)


def move_id() -> str:
    return f"m{next(_ids)}"


def choose(rng: random.Random, name: str, legal: list[str]) -> str:
    """A random legal move; Matrimony prefers its deals, to reach the redeals soon."""
    if name == "matrimony":
        for action in ("redeal", "deal"):
            if action in legal and rng.random() < 0.6:
                return action
    return rng.choice(legal)


async def owner_socket(ws_connect, player, game_id: str):
    ws = await ws_connect()
    await ws.auth(player)
    subscribed = await ws.subscribe(game_id)
    assert subscribed["role"] == "owner"
    snapshot = (await ws.recv("snapshot"))["snapshot"]
    return ws, subscribed, snapshot


async def play_moves(ws, api, owner, game_id: str, count: int, rng=None) -> int:
    """Play ``count`` legal moves (fewer if the game ends) through ``ws``; the version."""
    rng = rng or random.Random(count)
    snapshot = await api.get(game_id, owner)
    version, legal = snapshot["version"], snapshot["legal_moves"]
    for _ in range(count):
        if not legal:
            break
        reply = await ws.move(game_id, rng.choice(legal), version, move_id())
        assert reply["type"] == "accepted", reply
        version, legal = reply["version"], reply["legal_moves"]
    return version


@pytest.mark.parametrize("name", GAME_NAMES)
async def test_play_through_websocket(api: Api, ws_connect, redis_client, name: str) -> None:
    owner = await api.player()
    seed = f"ws-{name}"
    created = await api.create_game(owner, name, seed)
    game_id = created["id"]
    engine = new_game(name, seed)

    ws, subscribed, snapshot = await owner_socket(ws_connect, owner, game_id)
    assert subscribed == {
        "type": "subscribed",
        "game_id": game_id,
        "role": "owner",
        "version": 0,
        "legal_moves": engine.legal_moves(),
    }
    assert snapshot["version"] == 0
    assert snapshot["view"] == engine.view()
    assert snapshot["legal_moves"] == engine.legal_moves()

    view, version = snapshot["view"], 0
    rng = random.Random(seed)
    kinds: set[str] = set()
    for _ in range(60):
        legal = engine.legal_moves()
        if not legal:
            break
        move = choose(rng, name, legal)
        mid = move_id()
        reply = await ws.move(game_id, move, version, mid, client_time=123)
        status_before, redeals_before = engine.status, engine.redeals_left
        ops = engine.play(move)
        patch = reply.pop("patch")
        assert reply == {
            "type": "accepted",
            "move_id": mid,
            "game_id": game_id,
            "version": version + 1,
            "applied_version": version + 1,
            "duplicate": False,
            "status": engine.status,
            "score": engine.score,
            "legal_moves": engine.legal_moves(),
        }
        # The accepted carries the compact patch; the mover gets no patch frame of it.
        assert (patch["v"], patch["g"]) == (version + 1, game_id)
        assert patch["m"] == patches.compact_move(move)
        assert patch["o"] == [patches.compact_op(op) for op in ops]
        assert patch.get("s") == (engine.status if engine.status != status_before else None)
        changed = engine.redeals_left != redeals_before
        assert patch.get("r", "absent") == (engine.redeals_left if changed else "absent")
        kinds.update(op["op"] for op in ops)
        view = apply_patch(view, patch)
        version = patch["v"]
        assert view == engine.view()
        assert view == (await api.get(game_id, owner))["view"]

    assert "move" in kinds
    if name == "colorado":
        assert "reveal" in kinds
    if name == "matrimony":
        assert "set" in kinds, "no redeal was played: raise the move count"
    # Exactly one accepted per move and no patch: nothing else is queued.
    assert await ws.ping() == []
    assert ws.buffer == []
    stored_version, state = await stored(redis_client, game_id)
    assert stored_version == version
    assert state == engine.to_bytes()


async def test_ping_pong(ws_connect) -> None:
    ws = await ws_connect()
    for nonce in ("abc", 7):
        await ws.send({"type": "ping", "nonce": nonce})
        pong = await ws.recv()
        assert pong["type"] == "pong" and pong["nonce"] == nonce
        assert isinstance(pong["server_time"], int) and pong["server_time"] > 1_600_000_000_000
    await ws.send({"type": "ping"})
    pong = await ws.recv()
    assert pong["type"] == "pong" and pong["nonce"] is None


async def test_unsubscribe_stops_patches(api: Api, ws_connect) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "unsub"))["id"]
    ws, _, _ = await owner_socket(ws_connect, owner, game_id)
    watcher = await ws_connect()
    leaver = await ws_connect()
    for client in (watcher, leaver):
        assert (await client.subscribe(game_id))["role"] == "spectator"
        await client.recv("snapshot")

    version = await play_moves(ws, api, owner, game_id, 1)
    assert (await leaver.recv("patch"))["v"] == version
    assert (await watcher.recv("patch"))["v"] == version

    reply = await leaver.request({"type": "unsubscribe", "game_id": game_id}, "unsubscribed")
    assert reply == {"type": "unsubscribed", "game_id": game_id}
    version = await play_moves(ws, api, owner, game_id, 2)
    assert (await watcher.recv("patch"))["v"] == version - 1
    assert (await watcher.recv("patch"))["v"] == version
    # The hub hands a patch to every local watcher at once: had the leaver still been
    # subscribed, its patches would be queued before this pong.
    assert await leaver.ping() == []


async def test_duplicate_move_id_is_applied_once(api: Api, ws_connect, redis_client) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "balcony", "dup"))["id"]
    ws, _, snapshot = await owner_socket(ws_connect, owner, game_id)
    spectator = await ws_connect()
    await spectator.subscribe(game_id)
    await spectator.recv("snapshot")

    move = snapshot["legal_moves"][0]
    message = {"type": "move", "game_id": game_id, "move": move, "version": 0, "move_id": "once"}
    first = await ws.request(message, "accepted")
    assert first["duplicate"] is False
    assert first["version"] == first["applied_version"] == first["patch"]["v"] == 1
    _, state = await stored(redis_client, game_id)
    second = await ws.request(message, "accepted")
    assert second["duplicate"] is True
    assert second["patch"] is None
    assert second["version"] == second["applied_version"] == 1
    assert second["legal_moves"] == first["legal_moves"]
    assert await stored(redis_client, game_id) == (1, state)

    # Sent twice at once: still applied once.
    move = first["legal_moves"][0]
    message = {"type": "move", "game_id": game_id, "move": move, "version": 1, "move_id": "twice"}
    await ws.send(message)
    await ws.send(message)
    replies = [await ws.recv("accepted"), await ws.recv("accepted")]
    assert [reply["duplicate"] for reply in replies] == [False, True]
    assert replies[0]["patch"]["v"] == 2 and replies[1]["patch"] is None
    assert {(reply["version"], reply["applied_version"]) for reply in replies} == {(2, 2)}

    # The first move id once more, after the game moved on: the version it produced, and
    # the game as it is now.
    third = await ws.request({**message, "move_id": "once", "version": 0}, "accepted")
    assert third["duplicate"] is True
    assert (third["applied_version"], third["version"]) == (1, 2)
    assert third["legal_moves"] == replies[0]["legal_moves"]

    log = await api.log(game_id)
    assert [entry["version"] for entry in log["moves"]] == [1, 2]
    assert await ws.ping() == [], "the mover got a patch its accepted carried already"
    seen = [await spectator.recv("patch"), await spectator.recv("patch")]
    assert [p["v"] for p in seen] == [1, 2]
    assert await spectator.ping() == []

    # REST: the same move id again answers duplicate, with no patch.
    reply = await api.move(owner, game_id, "resign", 2, move_id="rest-once")
    assert reply["duplicate"] is False and reply["snapshot"]["version"] == 3
    again = await api.move(owner, game_id, "resign", 2, move_id="rest-once")
    assert again["duplicate"] is True
    assert again["patch"] is None
    assert again["snapshot"]["version"] == again["version"] == again["applied_version"] == 3
    assert len((await api.log(game_id))["moves"]) == 3


async def test_spectator(api: Api, ws_connect, redis_client) -> None:
    owner = await api.player()
    other = await api.player()
    game_id = (await api.create_game(owner, "empress_of_italy", "watch"))["id"]
    ws, _, snapshot = await owner_socket(ws_connect, owner, game_id)

    spectator = await ws_connect()
    subscribed = await spectator.subscribe(game_id)
    assert subscribed["role"] == "spectator"
    assert subscribed["legal_moves"] is None
    seen = (await spectator.recv("snapshot"))["snapshot"]
    assert seen["legal_moves"] is None
    assert seen["view"] == snapshot["view"]

    version = await play_moves(ws, api, owner, game_id, 12)
    assert version >= 5
    view = seen["view"]
    for expected in range(version):
        patch = await spectator.recv("patch")
        assert patch["v"] == expected + 1
        view = apply_patch(view, patch)
    assert view == (await api.get(game_id))["view"]
    assert await spectator.ping() == []

    before = await stored(redis_client, game_id)
    legal = (await api.get(game_id, owner))["legal_moves"]
    reply = await spectator.move(game_id, legal[0], version, "spy-1")
    assert reply["type"] == "rejected" and reply["code"] == "not_authenticated"
    assert reply["game_id"] == game_id
    await spectator.auth(other)
    reply = await spectator.move(game_id, legal[0], version, "spy-2")
    assert reply["type"] == "rejected" and reply["code"] == "forbidden"
    # Re-subscribing as another player: still a spectator.
    assert (await spectator.subscribe(game_id, version))["role"] == "spectator"
    assert await stored(redis_client, game_id) == before
    assert await spectator.ping() == []
    # The owner saw its accepted moves (no patch of them) and nothing of the spectator's.
    assert await ws.ping() == []


async def test_reconnect_with_version(api: Api, ws_connect) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "again"))["id"]
    ws, _, first = await owner_socket(ws_connect, owner, game_id)
    views = {0: first["view"]}
    version = 0
    for _ in range(6):
        version = await play_moves(ws, api, owner, game_id, 1)
        views[version] = (await api.get(game_id))["view"]
    assert version == 6

    for old in (0, 2, 5, 6):
        client = await ws_connect()
        await client.auth(owner)
        subscribed = await client.subscribe(game_id, old)
        assert subscribed["version"] == 6
        view = views[old]
        for expected in range(old, 6):
            patch = await client.recv()
            assert patch["type"] == "patch", patch
            assert patch["v"] == expected + 1
            view = apply_patch(view, patch)
        assert view == views[6]
        assert await client.ping() == [], f"more than the missed patches after {old}"
        await client.close()

    # From the future, negative, or no version: a snapshot.
    for version_sent in (7, 1000, -1, None):
        client = await ws_connect()
        await client.subscribe(game_id, version_sent)
        message = await client.recv()
        assert message["type"] == "snapshot", (version_sent, message)
        assert message["snapshot"]["version"] == 6
        assert message["snapshot"]["view"] == views[6]
        assert await client.ping() == []
        await client.close()

    # The live subscriber made every move: it got their accepted, and no patch.
    version = await play_moves(ws, api, owner, game_id, 1)
    assert version == 7
    assert await ws.ping() == []


async def test_reconnect_older_than_history(api: Api, ws_connect, monkeypatch) -> None:
    monkeypatch.setattr(store, "PATCH_HISTORY", 3)
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "history"))["id"]
    ws, _, _ = await owner_socket(ws_connect, owner, game_id)
    last = store.PATCH_TRIM_EVERY + 3
    version = await play_moves(ws, api, owner, game_id, last)
    assert version == last
    current = (await api.get(game_id))["view"]

    # Trimmed to the last 3 at version PATCH_TRIM_EVERY, and 3 moves since: a client
    # six versions behind gets the six patches...
    client = await ws_connect()
    await client.subscribe(game_id, last - 6)
    assert [(await client.recv("patch"))["v"] for _ in range(6)] == list(range(last - 5, last + 1))
    assert await client.ping() == []
    # ... a client seven or more behind gets a snapshot.
    for old in (last - 7, 1, 0):
        client = await ws_connect()
        await client.subscribe(game_id, old)
        message = await client.recv()
        assert message["type"] == "snapshot", (old, message)
        assert message["snapshot"]["version"] == last
        assert message["snapshot"]["view"] == current
        assert await client.ping() == []


async def test_race_rest(api: Api, http, redis_client) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "race-rest"))["id"]
    for version in range(20):
        moves = [f"stock>tableau[{version % 20}]", f"stock>tableau[{(version + 7) % 20}]"]
        responses = await asyncio.gather(
            *(
                http.post(
                    f"/v1/games/{game_id}/moves",
                    json={"move": move, "version": version},
                    headers=owner.headers,
                )
                for move in moves
            )
        )
        statuses = sorted(response.status_code for response in responses)
        assert statuses == [200, 409], [r.text for r in responses]
        loser = next(r for r in responses if r.status_code == 409).json()["error"]
        assert loser["code"] == "stale"
        assert loser["version"] == version + 1
    assert (await stored(redis_client, game_id))[0] == 20
    assert len((await api.log(game_id))["moves"]) == 20


async def test_race_two_sockets(api: Api, ws_connect, redis_client) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "race-ws"))["id"]
    first, _, _ = await owner_socket(ws_connect, owner, game_id)
    second = await ws_connect()
    await second.auth(owner)
    for version in range(20):
        ids = (f"a{version}", f"b{version}")
        replies = await asyncio.gather(
            first.move(game_id, f"stock>tableau[{version % 20}]", version, ids[0]),
            second.move(game_id, f"stock>tableau[{(version + 3) % 20}]", version, ids[1]),
        )
        kinds = sorted(reply["type"] for reply in replies)
        assert kinds == ["accepted", "rejected"], replies
        accepted = next(r for r in replies if r["type"] == "accepted")
        rejected = next(r for r in replies if r["type"] == "rejected")
        assert accepted["version"] == version + 1
        assert rejected["code"] == "stale", rejected
        assert rejected["version"] == version + 1
    assert (await stored(redis_client, game_id))[0] == 20
    log = await api.log(game_id)
    assert [entry["version"] for entry in log["moves"]] == list(range(1, 21))
    # The subscribed socket got every version once, in order: its own moves as the patch
    # of their accepted, the other socket's as patch frames.
    await first.ping()
    stream = [m for m in first.received if m["type"] in ("accepted", "patch")]
    versions = [m["patch"]["v"] if m["type"] == "accepted" else m["v"] for m in stream]
    assert versions == list(range(1, 21)), versions


async def test_resubscribing_under_load_never_gaps_or_repeats(
    redis_url: str, redis_cluster: bool
) -> None:
    """A spectator re-subscribes again and again (with its version, an older one, or
    none) while moves land on two instances; after each ``subscribed`` its stream is
    exactly: one snapshot or the patches from the version it sent, then every patch in
    order, with no gap and no repeat."""
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as first,
        run_app(redis_url, redis_cluster=redis_cluster) as second,
        httpx.AsyncClient(base_url=first.base_url, timeout=10) as http_a,
        httpx.AsyncClient(base_url=second.base_url, timeout=10) as http_b,
    ):
        apis = [Api(http_a), Api(http_b)]
        owner = await apis[0].player()
        created = await apis[0].create_game(owner, "colorado", "load")
        game_id = created["id"]
        total = 60

        async def mover() -> None:
            for version in range(total):
                # Alternate instances: each one's cache is often behind Redis.
                api = apis[version % 2]
                await api.move(owner, game_id, f"stock>tableau[{version % 20}]", version)

        watcher = WSClient(await asyncio.wait_for(connect(second.ws_url, max_size=None), 5))
        try:
            rng = random.Random(7)
            views: dict[int, dict] = {0: created["view"]}
            version, view = 0, created["view"]
            moving = asyncio.create_task(mover())
            rounds = 0
            while version < total:
                rounds += 1
                older = max(v for v in views if v <= max(0, version - 3))
                sent = rng.choice([version, version, older, None])
                message = {"type": "subscribe", "game_id": game_id}
                if sent is not None:
                    message["version"] = sent
                await watcher.send(message)
                # Whatever was in flight before ``subscribed`` belongs to the old stream.
                await watcher.recv_matching(lambda m: m["type"] == "subscribed", "subscribed")
                watcher.buffer.clear()
                if sent is None:
                    first = await watcher.recv()
                    assert first["type"] == "snapshot", first
                    snapshot = first["snapshot"]
                    version, view = snapshot["version"], snapshot["view"]
                    views[version] = view
                else:
                    version, view = sent, views[sent]
                for _ in range(rng.randint(0, 4)):
                    if version >= total:
                        break
                    message = await watcher.recv(timeout=10)
                    if message["type"] == "snapshot":
                        # Only when the version sent is no longer served (not here).
                        raise AssertionError(f"unexpected snapshot after {sent}: {message}")
                    assert message["type"] == "patch", message
                    assert message["v"] == version + 1, (sent, version, message["v"])
                    view = apply_patch(view, message)
                    version = message["v"]
                    views[version] = view
            await asyncio.wait_for(moving, 30)
            assert version == total
            assert view == (await apis[0].get(game_id))["view"]
            assert rounds > 5
        finally:
            await watcher.close()


async def test_resubscribe_while_a_background_resync_runs(
    server, api: Api, ws_connect, redis_client, monkeypatch
) -> None:
    """A resync the hub started (its pub/sub connection dropped) and a ``subscribe`` the
    client sent meanwhile: once ``subscribed`` is out, only the new stream may follow."""
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "superseded"))["id"]
    spectator = await ws_connect()
    await spectator.subscribe(game_id)
    await spectator.recv("snapshot")
    await api.move(owner, game_id, "stock>tableau[0]", 0)
    assert (await spectator.recv("patch"))["v"] == 1

    # Hold the first resync the service is asked for until the test lets it go.
    service = server.app.state.service
    original = service.resync
    entered, release, returned = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def held(game_id: str, version: int | None):
        if entered.is_set():
            return await original(game_id, version)
        entered.set()
        await release.wait()
        try:
            return await original(game_id, version)
        finally:
            returned.set()

    monkeypatch.setattr(service, "resync", held)
    # Drop the hub's pub/sub connection: it reconnects and resyncs every watcher.
    assert await kill_pubsub_connections(redis_client) >= 1
    await asyncio.wait_for(entered.wait(), 10)

    await api.move(owner, game_id, "stock>tableau[1]", 1)
    await api.move(owner, game_id, "stock>tableau[2]", 2)
    subscribed = await spectator.subscribe(game_id, 1)
    assert subscribed["version"] == 3
    spectator.buffer.clear()  # anything before ``subscribed`` is the old stream
    assert [p["v"] for p in [await spectator.recv(), await spectator.recv()]] == [2, 3]
    release.set()
    await asyncio.wait_for(returned.wait(), 5)
    assert await spectator.ping() == [], "the superseded resync still sent frames"


def weak_refs_to_new(kind: type, known: set[int]) -> list[weakref.ref[Any]]:
    """Weak references to the live objects of ``kind`` whose ids are not in ``known``."""
    return [weakref.ref(o) for o in live(kind) if id(o) not in known]


def live(kind: type) -> list[Any]:
    # issubclass of type(o): isinstance would ask a dead weak proxy, which raises.
    return [o for o in gc.get_objects() if issubclass(type(o), kind)]


async def left_after_close(refs: list[weakref.ref[Any]], collect: bool) -> list[Any]:
    """What ``refs`` still reach once the server has seen the closes (up to 5 s);
    ``collect``: with a full garbage collection before each look."""
    for _ in range(100):
        if collect:
            gc.collect()
        if all(ref() is None for ref in refs):
            break
        await asyncio.sleep(0.05)
    return [ref() for ref in refs]


async def test_the_sockets_of_the_last_patch_are_freed_when_they_close(
    api: Api, ws_connect
) -> None:
    """Closed spectators are let go although no message came after the last patch they
    saw: the hub kept the last fan-out's listeners (and so every socket of its audience)
    until its shard's next message."""
    owner = await api.player()
    game_id = (await api.create_game(owner, "balcony", "freed"))["id"]
    ws, _, _ = await owner_socket(ws_connect, owner, game_id)
    known = {id(o) for o in live(Connection)}
    spectators = [await ws_connect() for _ in range(3)]
    for spectator in spectators:
        await spectator.subscribe(game_id)
        await spectator.recv("snapshot")
    theirs = weak_refs_to_new(Connection, known)
    assert len(theirs) == 3
    await play_moves(ws, api, owner, game_id, 1)
    for spectator in spectators:
        assert (await spectator.recv("patch"))["v"] == 1
        await spectator.close()
    assert await left_after_close(theirs, collect=True) == [None, None, None]


async def test_a_closed_sockets_transport_is_freed_without_a_full_collection(
    api: Api, ws_connect
) -> None:
    """A socket's protocol object (its buffers, its scope) goes when the socket closes, not
    at the next full garbage collection, which a worker with thousands of sockets runs
    rarely (``server.app``): the scope referred back to the protocol, a cycle."""
    owner = await api.player()
    game_id = (await api.create_game(owner, "balcony", "freed"))["id"]
    known = {id(o) for o in live(WebSocketProtocol)}
    spectators = [await ws_connect() for _ in range(3)]
    for spectator in spectators:
        await spectator.subscribe(game_id)
        await spectator.recv("snapshot")
    theirs = weak_refs_to_new(WebSocketProtocol, known)
    assert len(theirs) == 3
    gc.collect()
    gc.disable()  # only reference counting may free them
    try:
        for spectator in spectators:
            await spectator.close()
        assert await left_after_close(theirs, collect=False) == [None, None, None]
    finally:
        gc.enable()
