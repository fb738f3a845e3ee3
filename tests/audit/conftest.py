"""Fixtures of the audit tests: a game service on the real Redis of ``tests/conftest.py``
(``redis_url``: a session ``redis-server``, then a Redis Cluster, flushed around each test),
with a fake clock,
and the ASGI app driven in-process through its lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from audit_helpers import SECRET, FakeClock
from redis.asyncio import Redis
from starlette.applications import Starlette

from server.app import create_app
from server.config import Settings
from server.redisconn import connect
from server.service import GameService
from server.store import Store
from server.testing import TEST_DAILY, UNLIMITED, preload_dailies


@pytest.fixture(scope="module", params=["standalone", "cluster"])
def redis_mode(request: pytest.FixtureRequest) -> str:
    """These tests run on a standalone Redis and on a Redis Cluster."""
    return str(request.param)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def redis_client(redis_url: str, redis_cluster: bool) -> AsyncIterator[Redis]:
    client = connect(redis_url, redis_cluster)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def service(redis_client: Redis, clock: FakeClock) -> GameService:
    return GameService(Store(redis_client), SECRET.encode(), clock=clock)


@pytest.fixture
async def app(redis_url: str, redis_cluster: bool, clock: FakeClock) -> AsyncIterator[Starlette]:
    """The app with its lifespan running; its service on the fake clock."""
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=0,
        redis_cluster=redis_cluster,
        limits=UNLIMITED,
        daily=TEST_DAILY,
    )
    await preload_dailies(redis_url, SECRET, redis_cluster)
    application = create_app(settings)
    async with application.router.lifespan_context(application):
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
