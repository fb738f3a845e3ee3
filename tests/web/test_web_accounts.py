"""The web client's account panel (issue 24) in headless Chromium against a real server:
a transfer code given on one device and entered on another, the data export, signing out
everywhere (the other device's open page is told at once), deleting the account, and the
token renewed through the SDK once half its lifetime has passed (the page's clock moved)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
from test_web_players import wait_text
from web_helpers import Web

CODE = re.compile(r"^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$")
DAY_MS = 24 * 3600 * 1000


def player_of(web: Web) -> dict[str, str] | None:
    result: dict[str, str] | None = web.page.evaluate(
        "JSON.parse(localStorage.getItem('patience.player'))"
    )
    return result


def open_me(web: Web) -> None:
    web.open_menu()
    web.testid("my-games-link").click()
    web.testid("me-page").wait_for(state="visible")
    # Until the account panel is filled from GET /v1/players/me: filling it hides the
    # delete confirmation again (a click before it lands is lost; seen under load).
    web.wait("document.querySelector('[data-testid=\"account-codes\"]').textContent !== ''")


def me_status(web: Web, token: str) -> tuple[int, dict[str, Any]]:
    response = httpx.get(
        f"{web.base_url}/v1/players/me", headers={"Authorization": f"Bearer {token}"}, timeout=5
    )
    return response.status_code, response.json()


def test_a_transfer_code_moves_the_player_and_signing_out_reaches_every_device(
    open_page: Any,
) -> None:
    old = open_page()
    old.new_game("balcony", "web-transfer-1")
    first = player_of(old)
    assert first is not None
    open_me(old)
    wait_text(old, "account-codes", "No pending transfer code.")
    old.testid("transfer-give").click()
    old.testid("transfer-code-row").wait_for(state="visible")
    code = old.testid("transfer-code").inner_text().strip()
    assert CODE.match(code), code
    wait_text(old, "account-codes", "Pending transfer codes: 1")

    new = open_page("/#/me")
    new.testid("me-page").wait_for(state="visible")
    new.testid("transfer-input").fill("wrong-code-0000-0000")
    new.testid("transfer-use").click()
    wait_text(new, "transfer-error", "wrong, used or expired")
    assert player_of(new) is None, "a refused code makes no player"
    new.testid("transfer-input").fill(code.lower())
    new.testid("transfer-use").click()
    wait_text(new, "account-note", "This device is now your player.")
    moved = player_of(new)
    assert moved is not None and moved["player_id"] == first["player_id"]
    new.testid("history").locator("li").first.wait_for(state="visible")  # read after the note
    assert new.testid("history").locator("li").count() == 1, "the old device's game is here"

    # The export, as a file the page offers.
    new.testid("account-export").click()
    new.testid("account-export-link").wait_for(state="visible")
    with new.page.expect_download() as download:
        new.testid("account-export-link").click()
    exported = json.loads(Path(download.value.path()).read_text())
    assert download.value.suggested_filename.endswith(".json")
    assert exported["account"]["player_id"] == first["player_id"]
    assert [game["game"] for game in exported["games"]] == ["balcony"]

    # Signing out everywhere from the new device: the old device's open page is told.
    new.testid("account-signout").click()
    wait_text(new, "account-note", "Signed out everywhere")
    assert player_of(new) is None
    old.wait("JSON.parse(localStorage.getItem('patience.player')) === null", timeout=5000)
    wait_text(old, "message", "signed out everywhere")
    assert me_status(old, first["token"])[0] == 401


def test_deleting_the_account_from_the_page(open_page: Any) -> None:
    web = open_page()
    web.new_game("colorado", "web-delete-1")
    player = player_of(web)
    assert player is not None
    open_me(web)
    assert web.testid("account-delete-confirm").is_hidden()
    web.testid("account-delete").click()
    web.testid("account-delete-confirm").click()
    wait_text(web, "account-note", "Your account is deleted")
    assert player_of(web) is None
    status, body = me_status(web, player["token"])
    assert status == 401 and body["error"]["code"] == "token_revoked"


def test_the_page_renews_its_token_through_the_sdk(open_page: Any) -> None:
    web = open_page()
    web.new_game("balcony", "web-renew-1")
    before = player_of(web)
    assert before is not None
    time.sleep(1.1)  # a token made in another second differs
    # Sixteen days later by the page's clock: past half the token's lifetime.
    web.page.clock.set_system_time(time.time() * 1000 + 16 * DAY_MS)
    open_me(web)
    web.wait(
        "(old) => JSON.parse(localStorage.getItem('patience.player')).token !== old",
        before["token"],
    )
    after = player_of(web)
    assert after is not None and after["player_id"] == before["player_id"]
    assert me_status(web, after["token"])[0] == 200
