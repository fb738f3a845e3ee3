"""The daily and leaderboard tests run on a standalone Redis and on a Redis Cluster."""

import pytest


@pytest.fixture(scope="module", params=["standalone", "cluster"])
def redis_mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)
