"""The Python SDK's accounts (issue 24): it renews its token on its own once half the
lifetime has passed, on a server whose clock the test moves with the SDK's, and it has
every account route."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sdk_support import WAIT, client_fixture, server_url_fixture  # noqa: F401

from clients.python import ApiError, Client
from clients.python.rest import token_expires
from server.app import create_app
from server.config import Settings
from server.testing import TEST_DAILY, TEST_SECRET, UNLIMITED, serve_app

DAY = 24 * 3600


class Clock:
    """Seconds, shared by the server (in ms) and the SDK."""

    def __init__(self) -> None:
        self.now = time.time()


@pytest.fixture
async def moved(redis_url: str) -> AsyncIterator[tuple[str, Clock]]:
    """A server whose clock the test moves, and that clock."""
    clock = Clock()
    settings = Settings(redis_url=redis_url, secret=TEST_SECRET, limits=UNLIMITED, daily=TEST_DAILY)
    app: Any = create_app(settings)
    async with serve_app(app) as port:
        app.state.service.clock = lambda: int(clock.now * 1000)
        yield f"http://127.0.0.1:{port}", clock


async def test_the_sdk_renews_once_half_the_lifetime_passed(moved: tuple[str, Clock]) -> None:
    url, clock = moved
    kept: list[str] = []
    async with Client(url, timeout=WAIT, on_token=kept.append, clock=lambda: clock.now) as sdk:
        await sdk.create_player(name="Sdk Renewer")
        first = sdk.token
        assert kept == [first]
        clock.now += 14 * DAY  # under half the lifetime: no renewal
        await sdk.me()
        assert kept == [first]
        clock.now += 2 * DAY  # past half: the next call renews first
        assert (await sdk.me())["name"] == "Sdk Renewer"
        assert len(kept) == 2 and sdk.token == kept[1] != first
        assert token_expires(sdk.token) == token_expires(first) + 16 * DAY  # type: ignore[operator]
        clock.now += 15 * DAY  # day 31: the first token is dead, the player lives on
        assert (await sdk.my_stats())["player_id"] == sdk.player_id
        assert len(kept) == 3
    async with Client(url, first, timeout=WAIT, auto_renew=False) as stale:
        with pytest.raises(ApiError) as expired:
            await stale.me()
        assert expired.value.code == "unauthorized"


async def test_every_account_route(client: Client, server_url: str) -> None:
    renewed = await client.renew_token()
    assert renewed["token"] == client.token and renewed["expires_at"] > 0
    issued = await client.create_transfer_code()
    assert [entry["expires_at"] for entry in (await client.me())["transfer_codes"]] == [
        issued["expires_at"]
    ]
    async with Client(server_url, timeout=WAIT) as device:
        moved = await device.redeem_transfer_code(issued["code"])
        assert moved["player_id"] == client.player_id == device.player_id
        with pytest.raises(ApiError) as used:
            await device.redeem_transfer_code(issued["code"])
        assert used.value.code == "unknown_transfer_code" and used.value.status == 404
        export = await device.export_account()
        assert export["account"]["player_id"] == client.player_id
        with pytest.raises(ApiError) as disabled:
            await device.login("a.b.c")
        assert disabled.value.code == "identity_disabled"
        await device.sign_out_everywhere()
        with pytest.raises(ApiError) as revoked:
            await client.me()
        assert revoked.value.code == "token_revoked" and revoked.value.status == 401
    async with Client(server_url, timeout=WAIT) as other:
        await other.create_player()
        gone = await other.delete_account()
        assert gone["deleted"] is True and other.token is None
