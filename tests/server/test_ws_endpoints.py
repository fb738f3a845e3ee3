"""``/asyncapi.json`` is served, and what WEBSOCKET.md says about paths and move texts at
the edges of the protocol: an unknown WebSocket path is a bare HTTP 403 at the handshake;
the WebSocket takes compact move texts with spaces around the codes; REST refuses compact
texts (malformed_move)."""

from __future__ import annotations

import json

import httpx
import pytest
from server_support import Api, WSConnect
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.asyncapi import asyncapi_document


async def test_edges_of_paths_and_move_texts(
    server, http: httpx.AsyncClient, api: Api, ws_connect: WSConnect
) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(server.ws_url.replace("/v2/ws", "/v3/ws")):
            pass
    assert refused.value.response.status_code == 403
    assert not refused.value.response.body
    assert (await http.get("/v2/ws")).status_code == 404
    served = await http.get("/asyncapi.json")
    assert served.status_code == 200
    assert served.json() == json.loads(json.dumps(asyncapi_document()))

    owner = await api.player()
    game = await api.create_game(owner, "balcony", "abc")  # tableau[0] holds 9H
    answer = await http.post(
        f"/v1/games/{game['id']}/moves",
        json={"move": "t0>f1", "version": 0},
        headers=owner.headers,
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "malformed_move"

    ws = await ws_connect()
    await ws.auth(owner)
    await ws.subscribe(game["id"])
    reply = await ws.move(game["id"], " t0 >  f1 ", 0, "m1")
    assert reply["type"] == "accepted", reply
    assert reply["patch"]["m"] == "t0>f1"
    log = await api.log(game["id"])
    assert [entry["move"] for entry in log["moves"]] == ["tableau[0]>foundation[1]"]


async def test_another_tab_gets_legal_moves_by_subscribing_again(
    api: Api, ws_connect: WSConnect
) -> None:
    """WEBSOCKET.md, "Other tabs": tab B gets tab A's move as a patch without legal moves;
    subscribing again with its version brings them, with no patch and no snapshot."""
    owner = await api.player()
    game = await api.create_game(owner, "colorado", "tabs")
    tab_a, tab_b = await ws_connect(), await ws_connect()
    for tab in (tab_a, tab_b):
        await tab.auth(owner)
        await tab.subscribe(game["id"])
        await tab.recv("snapshot")
    accepted = await tab_a.move(game["id"], "stock>tableau[0]", 0, "a1")
    assert accepted["type"] == "accepted", accepted
    patch = await tab_b.recv("patch")
    assert patch["v"] == 1 and "legal_moves" not in patch
    subscribed = await tab_b.subscribe(game["id"], version=1)
    assert subscribed["version"] == 1
    assert subscribed["legal_moves"] == accepted["legal_moves"]
    assert await tab_b.ping() == []  # no patch, no snapshot: B was current
