"""A patch is published only when a process other than the mover's watches the game: a
game played with nobody else looking costs no pub/sub message, and the mover's process
hands the patch to its own sockets; once another process watches, the patches go out
again; a process that stops takes its entries out, and an entry that lapsed (its process
gone without) counts for nothing."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgpack
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from server_support import Api, RunningServer, WSClient, kill_pubsub_connections, run_app
from websockets.asyncio.client import connect

from server import store
from server.hub import WATCH_TTL_MS

#: How long a test listens for a publication that should not come (seconds).
QUIET = 0.5


@contextlib.asynccontextmanager
async def channel_listener(running: RunningServer, game_id: str) -> AsyncIterator[Any]:
    """A bare ``SSUBSCRIBE`` to the game's channel on the primary owning it: it sees what
    is published, and is not a watcher (no entry of its own)."""
    nodes = running.app.state.store.nodes
    channel = store.channel(game_id)
    pubsub = nodes.subscriber(nodes.owner(channel)).pubsub()
    try:
        await pubsub.ssubscribe(channel)
        confirmed = await pubsub.get_message(timeout=5)
        assert confirmed is not None and confirmed["type"] in ("ssubscribe", b"ssubscribe")
        yield pubsub
    finally:
        await pubsub.aclose()


async def published(pubsub: Any, count: int | None = None) -> list[int]:
    """The versions of the patches published on the channel: ``count`` of them, or what
    comes within :data:`QUIET` seconds."""
    versions: list[int] = []
    deadline = time.monotonic() + (5 if count else QUIET)
    while time.monotonic() < deadline and (count is None or len(versions) < count):
        message = await pubsub.get_message(timeout=max(0.0, deadline - time.monotonic()))
        if message is not None and message["type"] in ("smessage", b"smessage"):
            versions.append(msgpack.unpackb(message["data"][store.ORIGIN_BYTES :])["v"])
    return versions


async def watching(running: RunningServer, player: Any, game_id: str) -> WSClient:
    """A socket of ``running`` subscribed to ``game_id`` (as ``player``; None: anyone)."""
    client = WSClient(await asyncio.wait_for(connect(running.ws_url), 5))
    if player is not None:
        await client.auth(player)
    await client.subscribe(game_id)
    await client.recv("snapshot")
    return client


@contextlib.asynccontextmanager
async def a_game_moved_from_another_process(
    redis_url: str, redis_cluster: bool, seed: str
) -> AsyncIterator[tuple[RunningServer, Api, Any, str]]:
    """Two processes and a Colorado game whose owner moves through the second one's REST:
    (the first process, the second's API, the owner, the game's id)."""
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as first,
        run_app(redis_url, redis_cluster=redis_cluster) as second,
        httpx.AsyncClient(base_url=second.base_url, timeout=10) as http,
    ):
        api = Api(http)
        owner = await api.player()
        game_id = (await api.create_game(owner, "colorado", seed))["id"]
        yield first, api, owner, game_id


async def test_a_game_watched_by_one_process_only_publishes_nothing(
    redis_url: str, redis_cluster: bool, redis_client: Any
) -> None:
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as first,
        httpx.AsyncClient(base_url=first.base_url, timeout=10) as http,
    ):
        api = Api(http)
        owner = await api.player()
        game_id = (await api.create_game(owner, "colorado", "alone"))["id"]
        tab = await watching(first, owner, game_id)
        spectator = await watching(first, None, game_id)
        async with channel_listener(first, game_id) as channel:
            for version in range(3):
                reply = await tab.move(game_id, f"stock>tableau[{version}]", version, f"m{version}")
                assert reply["type"] == "accepted" and reply["patch"]["v"] == version + 1
                patch = await spectator.recv("patch")
                assert patch["v"] == version + 1, patch
            await api.move(owner, game_id, "stock>tableau[3]", 3)  # REST, same process
            assert (await tab.recv("patch"))["v"] == 4
            assert (await spectator.recv("patch"))["v"] == 4
            assert await published(channel) == []

            # Another process watches: the patches go out on the channel again, and
            # every socket of both processes gets each one once.
            async with run_app(redis_url, redis_cluster=redis_cluster) as second:
                elsewhere = await watching(second, None, game_id)
                reply = await tab.move(game_id, "stock>tableau[4]", 4, "m4")
                assert reply["type"] == "accepted" and reply["patch"]["v"] == 5
                assert await published(channel, count=1) == [5]
                assert (await spectator.recv("patch"))["v"] == 5
                assert (await elsewhere.recv("patch"))["v"] == 5
                for client in (tab, spectator, elsewhere):
                    assert await client.ping() == [], "a patch came twice"
                await elsewhere.close()
                departed = second.app.state.store.watcher
                assert await redis_client.zscore(store.watchers_key(game_id), departed)
            # A process that stops takes its entries out.
            assert await redis_client.zscore(store.watchers_key(game_id), departed) is None
            await tab.move(game_id, "stock>tableau[5]", 5, "m5")
            assert await published(channel) == []
        for client in (tab, spectator):
            await client.close()


async def test_only_a_live_entry_of_another_process_makes_a_move_publish(
    server: RunningServer, api: Api, redis_client: Any
) -> None:
    owner = await api.player()
    game_id = (await api.create_game(owner, "colorado", "entries"))["id"]
    tab = await watching(server, owner, game_id)
    own = server.app.state.store.watcher
    key = store.watchers_key(game_id)
    assert await redis_client.zscore(key, own) is not None, "the hub entered its process"
    now = int(time.time() * 1000)
    async with channel_listener(server, game_id) as channel:
        await redis_client.zadd(key, {"a-stopped-process": now - 1})
        await tab.move(game_id, "stock>tableau[0]", 0, "m0")
        assert await published(channel) == []
        await redis_client.zadd(key, {"a-live-process": now + WATCH_TTL_MS})
        await tab.move(game_id, "stock>tableau[1]", 1, "m1")
        assert await published(channel, count=1) == [2]
    await tab.close()


async def test_a_watcher_entry_that_could_not_be_written_is_made_good_by_a_resync(
    redis_url: str, redis_cluster: bool, redis_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis refused the entry: the other process's moves are not published to this one,
    so once a renewal writes the entry, the socket resyncs and gets what it missed."""
    async with a_game_moved_from_another_process(redis_url, redis_cluster, "refused") as (
        first,
        api,
        owner,
        game_id,
    ):
        hub = first.app.state.hub
        write_entries = hub._write_entries

        async def refused(game_ids: list[str], enter: bool) -> None:
            raise RedisConnectionError("refused by the test")

        monkeypatch.setattr(hub, "_write_entries", refused)
        spectator = await watching(first, None, game_id)
        key = store.watchers_key(game_id)
        assert await redis_client.zscore(key, first.app.state.store.watcher) is None
        await api.move(owner, game_id, "stock>tableau[0]", 0)  # on the second process
        assert await spectator.ping() == [], "an unpublished patch reached the other process"
        await hub.renew_entries()  # still refused: nothing changes
        monkeypatch.setattr(hub, "_write_entries", write_entries)
        await hub.renew_entries()
        assert await redis_client.zscore(key, first.app.state.store.watcher) is not None
        caught_up = await spectator.recv_matching(
            lambda m: m["type"] in ("patch", "snapshot"), "the resync"
        )
        version = (
            caught_up["v"] if caught_up["type"] == "patch" else caught_up["snapshot"]["version"]
        )
        assert version == 1, caught_up
        await api.move(owner, game_id, "stock>tableau[1]", 1)
        assert (await spectator.recv("patch"))["v"] == 2
        await spectator.close()


async def test_a_reconnected_process_enters_its_games_again(
    redis_url: str, redis_cluster: bool, redis_client: Any
) -> None:
    """Redis lost the entry (a restart without persistence, a replica promoted before it
    had it) and the pub/sub connection: reconnected, the process writes its entry again at
    once, not at the next renewal, so the other process's moves reach its socket."""
    async with a_game_moved_from_another_process(redis_url, redis_cluster, "restarted") as (
        first,
        api,
        owner,
        game_id,
    ):
        spectator = await watching(first, None, game_id)
        key = store.watchers_key(game_id)
        await redis_client.delete(key)
        assert await kill_pubsub_connections(redis_client) >= 1
        # Back within the reconnect's few hundred milliseconds, not the 15 s renewal.
        deadline = time.monotonic() + 3
        while await redis_client.zscore(key, first.app.state.store.watcher) is None:
            assert time.monotonic() < deadline, "the entry was not written again"
            await asyncio.sleep(0.05)
        await api.move(owner, game_id, "stock>tableau[0]", 0)  # on the second process
        assert (await spectator.recv("patch"))["v"] == 1
        await spectator.close()
