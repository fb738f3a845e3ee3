"""The Python SDK's restart (``POST /v1/games/{id}/restart``) against a real server."""

from __future__ import annotations

import pytest
from sdk_support import (  # noqa: F401
    client_fixture,
    server_url_fixture,
)

from clients.python import ApiError, Client


async def test_restart_deals_the_same_table_and_refuses_nothing_else(client: Client) -> None:
    first = await client.new_game("balcony", seed="sdk-restart")
    again = await client.restart(first["id"])
    assert again["id"] != first["id"] and again["view"] == first["view"]
    assert again["version"] == 0
    with pytest.raises(ApiError) as unknown:
        await client.restart("g_missing")
    assert unknown.value.code == "unknown_game" and unknown.value.status == 404
