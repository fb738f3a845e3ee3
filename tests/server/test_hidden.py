"""Hidden information: no frame ever names a face-down card.

Whole games are played through the WebSocket with random legal moves while an owner
socket and a spectator socket record every frame.  The truth is read on the server side:
the stored state in Redis (``game:{id}`` field ``state``) at every version.  Then:

* a snapshot's view is exactly the engine's ``view()`` of that version;
* the cards a frame names are a sub-multiset of the face-up cards at its version;
* a card an op takes from the stock is the stock's top card before the move (and is face
  up afterwards); Colorado's ``reveal`` names the stock's new top card.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections import Counter

import pytest
from server_support import Api, apply_patch, card_texts, face_down, face_up, stored_game

from protocol.cards import card_text
from server.rules import GAME_NAMES, Game

MAX_MOVES = 150


def check_frame(message: dict, states: dict[int, Game]) -> None:
    kind = message["type"]
    named = Counter(card_texts(message))
    if kind == "snapshot":
        snapshot = message["snapshot"]
        game = states[snapshot["version"]]
        assert snapshot["view"] == game.view()
        assert "stock" not in snapshot["view"] or isinstance(snapshot["view"]["stock"], dict)
        version = snapshot["version"]
    elif kind == "patch":
        version = message["v"]
        before, after = states[version - 1], states[version]
        stock = list(before.table().get("stock", []))
        for op in message["o"]:
            if op[0] == "m" and op[1] == "s":
                assert op[3] == stock.pop(), op
            elif op[0] == "r":
                top = after.table()["stock"]
                assert op[1] == (top[-1] if top else None), op
        assert stock == after.table().get("stock", stock), "stock changed beyond the ops"
    elif kind == "accepted":
        version = message["version"]
    else:
        assert not named, message  # subscribed, authenticated, pong, …: no cards at all
        return
    visible = face_up(states[version])
    assert not named - visible, (
        f"{kind} names cards that are not face up at version {version}: "
        f"{sorted((named - visible).elements())}; face down: {sorted(face_down(states[version]))}"
    )


@pytest.mark.parametrize("name", GAME_NAMES)
async def test_no_face_down_card_is_ever_sent(
    api: Api, ws_connect, redis_client, name: str
) -> None:
    owner = await api.player()
    seed = f"hidden-{name}"
    game_id = (await api.create_game(owner, name, seed))["id"]
    version, game = await stored_game(redis_client, game_id)
    states: dict[int, Game] = {version: game}
    hidden_at_start = face_down(game)

    ws = await ws_connect()
    await ws.auth(owner)
    await ws.subscribe(game_id)
    spectator = await ws_connect()
    await spectator.subscribe(game_id)
    views = {
        client: (await client.recv("snapshot"))["snapshot"]["view"] for client in (ws, spectator)
    }

    rng = random.Random(seed)
    legal = game.legal_moves()
    moves = 0
    while legal and moves < MAX_MOVES:
        reply = await ws.move(game_id, rng.choice(legal), version, f"h{moves}")
        assert reply["type"] == "accepted", reply
        version, game = await stored_game(redis_client, game_id)
        assert version == reply["version"]
        states[version] = game
        legal = reply["legal_moves"]
        moves += 1
    if game.status == "playing":
        reply = await ws.move(game_id, "resign", version, "resign")
        assert reply["type"] == "accepted", reply
        version, game = await stored_game(redis_client, game_id)
        states[version] = game
    assert game.status != "playing"

    # Every patch reached both sockets (the mover's in its accepted); a snapshot taken now
    # is hidden-safe too.
    own = [m["patch"] for m in ws.received if m["type"] == "accepted"]
    for client in (ws, spectator):
        for expected in range(version):
            patch = own[expected] if client is ws else await client.recv("patch")
            assert patch["v"] == expected + 1
            views[client] = apply_patch(views[client], patch)
        assert views[client] == game.view()
        await client.subscribe(game_id)
        await client.recv("snapshot")
        assert await client.ping() == []

    # Gloucestershire has no face-down card at all; the others start with a hidden stock.
    assert bool(hidden_at_start) == ("stock" in type(game).single_piles)
    for client in (ws, spectator):
        assert len(client.received) > version
        for message in client.received:
            check_frame(message, states)
    # The owner's REST snapshot and the log are hidden-safe as well.
    check_frame(
        {"type": "snapshot", "snapshot": await api.get(game_id, owner)},
        states,
    )


async def test_published_hashes_do_not_reveal_the_stock_order(api: Api, redis_client) -> None:
    """The log's state hashes are public while the game is played.  With a few cards left
    in a face-down stock, trying every order of the unseen cards against a hash must not
    find the real one: the (secret) seed is part of the hashed document."""
    owner = await api.player()
    created = await api.create_game(owner, "balcony")  # a random seed, secret while playing
    game_id, view, version = created["id"], created["view"], 0
    while view["stock"]["count"] > 5:
        reply = await api.move(owner, game_id, "deal", version)
        version, view = version + 1, reply["snapshot"]["view"]
    log = await api.log(game_id)
    assert log["seed"] is None and log["version"] == version
    published = log["moves"][-1]["state_hash"]

    seen = Counter(card_texts(view))
    unseen = [text for text in map(card_text, range(52)) if not seen[text]]
    assert len(unseen) == 5

    def digest(order: tuple[str, ...], seed: str | None) -> str:
        document = {"game": "balcony", "status": "playing", "table": {**view, "stock": order}}
        if seed is not None:
            document["seed"] = seed
        text = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    orders = list(itertools.permutations(unseen))
    for guess in (None, "", "abc"):
        assert not any(digest(order, guess) == published for order in orders), guess
    # The same search with the seed (which only the server knows yet) does find it: the
    # hashes above were computed the way the server computes them.
    seed = (await redis_client.hget(f"game:{{{game_id}}}", "seed")).decode()
    assert sum(digest(order, seed) == published for order in orders) == 1
