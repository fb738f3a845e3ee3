"""Open WebSockets per client address, counted in Redis over every instance: beyond the
limit the server sends an ``error`` ``too_many_connections`` and closes with 1008."""

from __future__ import annotations

import asyncio

import pytest
from limits_support import WAIT, running, sockets
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed


async def assert_refused(socket) -> None:  # type: ignore[no-untyped-def]
    error = await socket.recv()
    assert error["type"] == "error" and error["code"] == "too_many_connections", error
    with pytest.raises(ConnectionClosed) as closed:
        await asyncio.wait_for(socket.connection.recv(), WAIT)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_connections_per_address_over_two_instances(redis_url: str) -> None:
    async with (
        running(redis_url, max_connections_per_address=3) as one,
        running(redis_url, max_connections_per_address=3) as two,
        sockets(one) as open_one,
        sockets(two) as open_two,
    ):
        first = await open_one()
        for socket in (first, await open_one(), await open_two()):
            await socket.ping()
        await assert_refused(await open_two())
        await assert_refused(await open_one())
        # A closed socket gives its place back.
        await first.connection.close()
        redis = Redis.from_url(redis_url)
        try:
            async with asyncio.timeout(WAIT):
                while await redis.zcard("limit:connections:127.0.0.1") > 2:
                    await asyncio.sleep(0.01)
        finally:
            await redis.aclose()
        await (await open_two()).ping()
        assert one.app.state.limits.refusals["connections"] == 1
        assert two.app.state.limits.refusals["connections"] == 1


async def test_the_connection_limit_holds_with_rate_limits_off(redis_url: str) -> None:
    async with (
        running(redis_url, rate_limits=False, max_connections_per_address=1) as server,
        sockets(server) as open_socket,
    ):
        await (await open_socket()).ping()
        await assert_refused(await open_socket())


async def test_a_dead_instance_s_connections_expire(redis_url: str) -> None:
    """Entries carry an expiry that only a live process pushes back."""
    redis = Redis.from_url(redis_url)
    try:
        async with (
            running(redis_url, max_connections_per_address=1) as server,
            sockets(server) as open_socket,
        ):
            await (await open_socket()).ping()
            [(_, expiry)] = await redis.zrange(
                "limit:connections:127.0.0.1", 0, -1, withscores=True
            )
            now_s, now_us = await redis.time()
            remaining_ms = expiry - (now_s * 1000 + now_us // 1000)
            assert 50_000 < remaining_ms <= 60_000
            await assert_refused(await open_socket())
            # As if its process had died a minute ago: the place is free again.
            key = "limit:connections:127.0.0.1"
            await redis.zadd(key, {member: 0 for member in await redis.zrange(key, 0, -1)})
            await (await open_socket()).ping()
    finally:
        await redis.aclose()


async def test_a_live_instance_keeps_its_connections_alive(redis_url: str) -> None:
    """The heartbeat pushes back the expiry of the sockets a process holds."""
    redis = Redis.from_url(redis_url)
    key = "limit:connections:127.0.0.1"
    try:
        async with (
            running(redis_url, max_connections_per_address=2) as server,
            sockets(server) as open_socket,
        ):
            await (await open_socket()).ping()
            [member] = await redis.zrange(key, 0, -1)
            await redis.zadd(key, {member: 1})  # about to lapse
            await server.app.state.limits.refresh_connections()
            [(_, expiry)] = await redis.zrange(key, 0, -1, withscores=True)
            now_s, now_us = await redis.time()
            assert expiry - (now_s * 1000 + now_us // 1000) > 50_000
    finally:
        await redis.aclose()


async def test_memory_is_released_after_a_burst_of_closes(redis_url: str) -> None:
    async with running(redis_url) as server:
        limiter = server.app.state.limits
        limiter.release_after_closes = 3
        async with sockets(server) as open_socket:
            opened = [await open_socket() for _ in range(3)]
            for socket in opened:
                await socket.ping()
            for socket in opened:
                await socket.connection.close()
            async with asyncio.timeout(WAIT):
                while limiter.memory_releases == 0:
                    await asyncio.sleep(0.1)
            assert limiter.memory_releases == 1


async def test_a_burst_of_closes_gives_every_place_back_at_once(redis_url: str) -> None:
    """Closed connections leave the address's count in pipelines, not a pooled ``ZREM``
    each: their sockets are let go as they close, and nobody is refused meanwhile."""
    count = 150
    async with running(redis_url, max_connections_per_address=count) as server:
        limiter = server.app.state.limits
        redis = Redis.from_url(redis_url)
        try:
            async with sockets(server) as open_socket:
                opened = await asyncio.gather(*(open_socket() for _ in range(count)))
                await asyncio.gather(*(socket.ping() for socket in opened))
                assert await redis.zcard("limit:connections:127.0.0.1") == count
                await asyncio.gather(*(socket.connection.close() for socket in opened))
                async with asyncio.timeout(WAIT):
                    while await redis.zcard("limit:connections:127.0.0.1") > 0:
                        await asyncio.sleep(0.01)
                again = await asyncio.gather(*(open_socket() for _ in range(count)))
                await asyncio.gather(*(socket.ping() for socket in again))
        finally:
            await redis.aclose()
        assert limiter.refusals["connections"] == 0
