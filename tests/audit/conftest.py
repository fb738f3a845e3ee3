"""Fixtures of the audit tests: a game service on the real Redis of ``tests/conftest.py``
(``redis_url``: a session ``redis-server``, flushed around each test), with a fake clock,
and the ASGI app driven in-process through its lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from audit_helpers import SECRET, FakeClock
from redis.asyncio import Redis
from starlette.applications import Starlette

from server.app import create_app
from server.config import Settings
from server.service import GameService
from server.store import Store
from server.testing import TEST_DAILY, UNLIMITED


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, socket_timeout=10)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def service(redis_client: Redis, clock: FakeClock) -> GameService:
    return GameService(Store(redis_client), SECRET.encode(), clock=clock)


#: Bound on waiting for the app's pub/sub hub to subscribe, in seconds.
HUB_WAIT = 10.0


async def keepalive_subscribers(redis: Redis) -> int:
    [(_, count)] = await redis.pubsub_numsub("hub:keepalive")
    return int(count)


@pytest.fixture
async def app(redis_url: str, redis_client: Redis, clock: FakeClock) -> AsyncIterator[Starlette]:
    """The app with its lifespan running; its service on the fake clock.

    It is handed over once its pub/sub hub has subscribed: stopping the hub while it is
    still subscribing can lose the cancellation and hang (see the report of issue 4).
    """
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=0,
        limits=UNLIMITED,
        daily=TEST_DAILY,
    )
    application = create_app(settings)
    before = await keepalive_subscribers(redis_client)
    async with application.router.lifespan_context(application):
        async with asyncio.timeout(HUB_WAIT):
            while await keepalive_subscribers(redis_client) <= before:
                await asyncio.sleep(0.01)
        application.state.service.clock = clock
        yield application


@pytest.fixture
async def http(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    token = (await app.state.service.create_player())["token"]
    headers = {"Authorization": f"Bearer {token}"}  # POST /v1/audit needs a player
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", timeout=30, headers=headers
    ) as c:
        yield c
