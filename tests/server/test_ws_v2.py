"""Protocol v2: the mover's ``accepted`` carries the patch, every other socket (any
worker, the same player's other tabs included) gets the patch frame, each socket's stream
stays in version order; ``/v1/ws`` is retired."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import msgpack
from server_support import Api, WSClient, apply_patch, check_frame, run_app
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from server.store import NO_ORIGIN


def stream_versions(client: WSClient) -> list[tuple[str, int]]:
    """Every version the socket was told of, in order: (frame type, version)."""
    return [
        (m["type"], m["patch"]["v"] if m["type"] == "accepted" else m["v"])
        for m in client.received
        if m["type"] == "patch" or (m["type"] == "accepted" and m["patch"] is not None)
    ]


async def test_v1_ws_is_retired(server) -> None:
    url = server.ws_url.replace("/v2/ws", "/v1/ws")
    async with connect(url) as socket:
        message = msgpack.unpackb(await asyncio.wait_for(socket.recv(), 5))
        check_frame(message)
        assert message["type"] == "error" and message["code"] == "protocol_retired", message
        assert (message["in_reply_to"], message["game_id"]) == (None, None)
        assert "/v2/ws" in message["message"]
        try:
            await asyncio.wait_for(socket.recv(), 5)
            raise AssertionError("the retired endpoint kept the socket open")
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1008


async def test_tabs_and_workers_each_get_every_version_once_in_order(
    redis_url: str, redis_cluster: bool
) -> None:
    """Two tabs of the owner on two workers take turns moving; a spectator watches from
    each worker. A tab learns its own moves from ``accepted`` only, the other tab's from
    patch frames; every socket sees every version once, in order."""
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as first,
        run_app(redis_url, redis_cluster=redis_cluster) as second,
        httpx.AsyncClient(base_url=first.base_url, timeout=10) as http,
    ):
        api = Api(http)
        owner = await api.player()
        created = await api.create_game(owner, "colorado", "tabs")
        game_id = created["id"]
        sockets = []
        for running in (first, second, first, second):
            client = WSClient(await asyncio.wait_for(connect(running.ws_url), 5))
            sockets.append(client)
        tabs, spectators = sockets[:2], sockets[2:]
        for tab in tabs:
            await tab.auth(owner)
        for client in sockets:
            await client.subscribe(game_id)
            await client.recv("snapshot")
        try:
            total = 16
            views = [created["view"]] * len(sockets)
            for version in range(total):
                mover = tabs[version % 2]
                reply = await mover.move(
                    game_id, f"stock>tableau[{version % 20}]", version, f"tab-{version}"
                )
                assert reply["type"] == "accepted", reply
            last_mover = tabs[(total - 1) % 2]
            for index, client in enumerate(sockets):
                # The last patch may still be on its way from the other worker.
                if client is not last_mover and ("patch", total) not in stream_versions(client):
                    await client.recv_matching(
                        lambda m: m["type"] == "patch" and m["v"] == total, "the last patch"
                    )
                assert await client.ping() is not None
                for message in client.received:
                    patch = message.get("patch") if message["type"] == "accepted" else message
                    if message["type"] in ("accepted", "patch") and patch is not None:
                        views[index] = apply_patch(views[index], patch)
            expected = list(range(1, total + 1))
            for index, tab in enumerate(tabs):
                seen = stream_versions(tab)
                assert [v for _, v in seen] == expected, (index, seen)
                own = [v for kind, v in seen if kind == "accepted"]
                assert own == [v for v in expected if (v - 1) % 2 == index], (index, seen)
            for spectator in spectators:
                assert stream_versions(spectator) == [("patch", v) for v in expected]
            current = (await api.get(game_id))["view"]
            assert all(view == current for view in views)
        finally:
            for client in sockets:
                await client.close()


async def test_own_patch_back_before_accepted_holds_later_patches(
    server, api: Api, ws_connect, monkeypatch
) -> None:
    """The socket's own patch comes back from Redis before its ``accepted`` is out, and a
    patch of the next version (another client's move) right after: that patch waits for
    the ``accepted``, and the own patch is never sent as a frame."""
    service = server.app.state.service
    original = service.play

    async def slow_reply(*args: Any, **kwargs: Any) -> Any:
        played = await original(*args, **kwargs)
        if kwargs.get("origin", NO_ORIGIN) != NO_ORIGIN:
            await asyncio.sleep(0.5)  # stored and published; the accepted waits
        return played

    monkeypatch.setattr(service, "play", slow_reply)
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "held"))["id"]
    tab = await ws_connect()
    await tab.auth(owner)
    await tab.subscribe(game_id)
    await tab.recv("snapshot")
    await tab.send(
        {"type": "move", "game_id": game_id, "move": "s>t0", "version": 0, "move_id": "own"}
    )
    for _ in range(100):  # until the move is stored (its accepted is held back)
        if (await api.get(game_id))["version"] == 1:
            break
        await asyncio.sleep(0.01)
    await api.move(owner, game_id, "stock>tableau[1]", 1)  # REST: version 2
    frames = [await tab.recv(), await tab.recv()]
    assert [m["type"] for m in frames] == ["accepted", "patch"], frames
    assert frames[0]["patch"]["v"] == 1 and frames[0]["patch"]["m"] == "s>t0"
    assert frames[1]["v"] == 2
    assert await tab.ping() == []


async def test_compact_move_text_is_accepted(api: Api, ws_connect) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "compact"))["id"]
    tab = await ws_connect()
    await tab.auth(owner)
    reply = await tab.move(game_id, "s>t4", 0, "short")
    assert reply["type"] == "accepted", reply
    assert reply["patch"]["m"] == "s>t4"
    log = await api.log(game_id)
    assert log["moves"][0]["move"] == "stock>tableau[4]"  # logged in the normal form
    reply = await tab.move(game_id, "t4>x9", 1, "nonsense")
    assert (reply["type"], reply["code"]) == ("rejected", "malformed_move"), reply
