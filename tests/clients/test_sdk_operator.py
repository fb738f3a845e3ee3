"""The Python SDK's operator client, and the player-facing fields and error of issue 25,
against a real server."""

from __future__ import annotations

import pytest
from sdk_support import WAIT, client_fixture, server_url_fixture  # noqa: F401

from clients.python import ApiError, Client, OperatorClient
from server import daily
from server.operator import credentials
from server.redisconn import connect
from server.service import now_ms
from server.testing import TEST_SECRET


async def test_an_operator_suspends_voids_and_lifts_through_the_sdk(
    client: Client, server_url: str, redis_url: str
) -> None:
    redis = connect(redis_url, False)
    try:
        token, _ = await credentials.issue(redis, TEST_SECRET.encode(), "sdk-op", now_ms())
    finally:
        await redis.aclose()
    attempt = await client.start_daily("balcony")
    assert client.player_id is not None
    date = daily.today(now_ms())
    async with OperatorClient(server_url, token, timeout=WAIT) as operator:
        listed = await operator.attempts("balcony", date)
        assert [item["game_id"] for item in listed["attempts"]] == [attempt["id"]]
        voided = await operator.void(attempt["id"], "test", code="abuse")
        assert voided["changed"] and voided["rank"] is None
        games = (await client.my_games())["games"]
        assert [game["void_reason"] for game in games] == ["abuse"]
        await operator.suspend(client.player_id, "test")
        with pytest.raises(ApiError) as refused:
            await client.start_daily("colorado")
        assert refused.value.code == "account_suspended" and refused.value.status == 403
        assert refused.value.until is None
        me = await client.me()
        assert me["suspended"] is True and me["suspended_until"] is None
        await operator.unsuspend(client.player_id, "test")
        await operator.reinstate(attempt["id"], "test")
        board = await client.leaderboard("balcony", date)
        assert [(e["player_id"], e["review"]) for e in board["entries"]] == [
            (client.player_id, None)
        ]
        trail = await operator.actions()
        assert [entry["action"] for entry in trail["actions"]] == [
            "reinstate",
            "unsuspend",
            "suspend",
            "void",
        ]
    async with OperatorClient(server_url, client.token, timeout=WAIT) as player_as_operator:
        with pytest.raises(ApiError) as forbidden:
            await player_as_operator.actions()
        assert forbidden.value.code == "operator_required" and forbidden.value.status == 403
