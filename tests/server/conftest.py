"""Registers the fixtures of ``server_support`` for the tests of this folder."""

import pytest
from server_support import api, http, redis_client, server, spawn_server, ws_connect

__all__ = ["api", "http", "redis_client", "server", "spawn_server", "ws_connect"]


@pytest.fixture(scope="module", params=["standalone", "cluster"])
def redis_mode(request: pytest.FixtureRequest) -> str:
    """These tests run on a standalone Redis and on a Redis Cluster."""
    return str(request.param)
