"""The hub's pub/sub connections after idle spells and failures: a subscribe after the
connection sat idle longer than the Redis health-check interval is answered (redis-py's
health check, a PING and a read from the subscribing task while the hub's listener was
reading the same connection, raised "read() called while another coroutine is already
waiting for incoming data"), and after any failure of a subscription the next subscribe
is as fast as the first (the failure had killed the shard's listener, and every later
subscribe on it waited out the hub's confirmation timeout)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import httpx
import pytest
from server_support import Api, WSClient, kill_pubsub_connections, run_app
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from server import redisconn
from server.hub import SUBSCRIBE_CONFIRM_WAIT

#: The health-check interval of these tests' servers, in seconds (10 in production).
SHORT_HEALTH_CHECK = 0.3
#: A subscribe's bound here: well under the hub's confirmation wait (a subscribe that
#: waits it out was never confirmed), generous for a loaded machine.
FAST = min(1.0, SUBSCRIBE_CONFIRM_WAIT / 2)


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The records logged with an exception or at error level (the server's log)."""
    return [
        f"{record.name}: {record.getMessage()} {record.exc_info!r}"
        for record in caplog.records
        if record.exc_info or record.levelno >= logging.ERROR
    ]


async def timed_subscribe(url: str, game_id: str) -> tuple[WSClient, float]:
    """A new socket subscribed to ``game_id`` and its snapshot received; the seconds the
    subscribe took."""
    client = WSClient(await asyncio.wait_for(connect(url), 5))
    started = time.monotonic()
    await client.subscribe(game_id)
    elapsed = time.monotonic() - started
    await client.recv("snapshot")
    return client, elapsed


@pytest.fixture
def short_health_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redisconn, "HEALTH_CHECK_INTERVAL", SHORT_HEALTH_CHECK)


async def test_a_subscribe_after_an_idle_spell_is_answered_at_once(
    redis_url: str,
    redis_cluster: bool,
    short_health_check: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as running,
        httpx.AsyncClient(base_url=running.base_url, timeout=10) as http,
    ):
        api = Api(http)
        owner = await api.player()
        games = [(await api.create_game(owner, "colorado", f"idle-{n}"))["id"] for n in range(4)]
        # Each round: the one socket leaves (the shard's connection has no subscription
        # left), an idle spell of several health-check intervals, then a new subscriber
        # while the hub's listener waits on that connection.
        for game_id in games:
            client, elapsed = await timed_subscribe(running.ws_url, game_id)
            assert elapsed < FAST, f"subscribe took {elapsed:.3f}s"
            await client.close()
            await asyncio.sleep(SHORT_HEALTH_CHECK * 4)
    assert tracebacks(caplog) == []


async def test_the_subscribe_after_a_failed_subscription_is_as_fast_as_the_first(
    redis_url: str,
    redis_cluster: bool,
    redis_client: Any,
    short_health_check: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Failures forced: a subscribe after an idle spell (the health-check race, on a
    server without the fix), the pub/sub connections killed by Redis while subscribes
    run; then each subscribe is as fast as the first was."""
    caplog.set_level(logging.ERROR)
    async with (
        run_app(redis_url, redis_cluster=redis_cluster) as running,
        httpx.AsyncClient(base_url=running.base_url, timeout=10) as http,
    ):
        api = Api(http)
        owner = await api.player()
        games = [(await api.create_game(owner, "colorado", f"lost-{n}"))["id"] for n in range(9)]
        first, first_elapsed = await timed_subscribe(running.ws_url, games[0])
        await first.close()
        await asyncio.sleep(SHORT_HEALTH_CHECK * 4)
        with contextlib.suppress(AssertionError, ConnectionClosed):
            await timed_subscribe(running.ws_url, games[1])  # what failed, if anything
        watcher, _ = await timed_subscribe(running.ws_url, games[2])
        killed = 0
        for game_id in games[3:6]:
            subscribing = asyncio.create_task(timed_subscribe(running.ws_url, game_id))
            killed += await kill_pubsub_connections(redis_client)
            with contextlib.suppress(AssertionError, ConnectionClosed):
                await subscribing
        await asyncio.sleep(SHORT_HEALTH_CHECK * 2)  # idle, and reconnected
        for game_id in games[6:]:
            client, elapsed = await timed_subscribe(running.ws_url, game_id)
            assert elapsed < FAST, (
                f"subscribe took {elapsed:.3f}s after a failure (the first: {first_elapsed:.3f}s)"
            )
            await client.close()
        await watcher.close()
    assert tracebacks(caplog) == []
    assert killed >= 1
