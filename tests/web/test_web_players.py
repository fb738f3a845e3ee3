"""The web client's player features (issue 11) in headless Chromium against a real server:
undo and hints in casual games, display names (registration, renaming, the server's typed
refusals) shown on leaderboards, the "My games" page (history and stats), the replay viewer
with its audit verdict, a daily's replay before and after its close, and the daily panel's
proof and par line. Axe-core checks and screenshots at desktop and phone size.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import httpx
from test_web_experience import (
    PHONE,
    STUCK_COLORADO,
    WON_BALCONY,
    greedy_moves,
    play_rest,
    set_setting,
)
from web_helpers import Web, axe_violations, choose_card_move

from server.rules import new_game


def unique_name(prefix: str) -> str:
    return f"{prefix} {secrets.token_hex(3)}"


def wait_text(web: Web, testid: str, text: str, timeout: float = 5000) -> None:
    """Until the element ``testid`` contains ``text``."""
    web.wait(
        '([id, text]) => document.querySelector(`[data-testid="${id}"]`)'
        ".textContent.includes(text)",
        [testid, text],
        timeout,
    )


def finished_game(web: Web, name: str, seed: str) -> tuple[str, list[str], str]:
    """A game of ``name`` started from the page and finished over REST by the greedy player."""
    web.new_game(name, seed)
    moves, status = greedy_moves(name, seed)
    game_id = web.client()["gameId"]
    play_rest(web, game_id, moves, 0)
    web.wait(f"window.__client.status === '{status}'", timeout=10000)
    return game_id, moves, status


def test_undo_button_and_ctrl_z_take_moves_back_in_a_casual_game(open_page: Any) -> None:
    web = open_page()
    start = web.new_game("balcony", "web-undo-1")
    undo = web.testid("undo")
    assert undo.is_visible() and undo.is_disabled(), "nothing to undo yet"
    move = choose_card_move(start["legalMoves"], None) or "deal"
    web.play(move, "click")
    assert not undo.is_disabled()
    played = web.page.evaluate("window.__client.animations")
    undo.click()
    after = web.wait_synced(2)
    assert after["view"] == start["view"], "the undo put the table back"
    web.check_agrees(web.token())
    assert web.page.evaluate("window.__client.animations") > played, "the undo is animated"
    assert undo.is_disabled() and web.page.evaluate("window.__client.undoable") == 0

    web.play("deal", "button")
    web.pile("tableau[0]").focus()
    web.page.keyboard.press("Control+z")
    back = web.wait_synced(4)
    assert back["view"] == start["view"]
    log = httpx.get(f"{web.base_url}/v1/games/{back['gameId']}/log", timeout=5).json()
    assert [entry["move"] for entry in log["moves"]][-1] == "undo"

    # A reloaded page knows from the log whether anything is left to undo.
    web.play("deal", "button")
    web.page.reload()
    web.wait_synced(5)
    web.wait("window.__client.undoable === 1")
    assert not web.testid("undo").is_disabled()


def test_an_undone_move_is_not_played_again_by_auto_move(open_page: Any) -> None:
    web = open_page()
    set_setting(web, "auto-move", True)
    # Auto-move sends cards home at once (140 ms after the deal): version 0 may be gone
    # before a poll sees it, so only the new game is waited for.
    web.start_game("colorado", "web-1")
    web.wait(
        """() => { const c = window.__client;
             return c.version > 0 && c.pending === null && c.legalMoves !== null
               && !c.legalMoves.some((m) => m.includes('>foundation')); }""",
        timeout=15000,
    )
    version = web.wait_synced()["version"]
    web.testid("undo").click()
    web.wait_synced(version + 1)
    web.page.wait_for_timeout(600)  # auto-move would have sent the card home again by now
    after = web.wait_synced()
    assert after["version"] == version + 1, "nothing was played after the undo"
    assert any(">foundation" in move for move in after["legalMoves"]), "the card can go home"


def test_ranked_daily_has_no_undo_or_hint(open_page: Any) -> None:
    web = open_page()
    web.testid("game-select").select_option("balcony")
    web.testid("daily").click()
    web.wait("window.__client.game === 'balcony' && window.__client.role === 'owner'")
    web.wait_synced()
    assert web.testid("undo").is_hidden() and web.testid("hint").is_hidden()
    version = web.client()["version"]
    web.page.keyboard.press("Control+z")
    web.page.wait_for_timeout(300)
    assert web.client()["version"] == version and web.client()["pending"] is None


def test_hint_marks_the_suggested_move_and_says_the_chance(open_page: Any) -> None:
    web = open_page()
    start = web.new_game("colorado", "web-hint-1")
    web.testid("hint").click()
    web.wait("window.__client.hint !== null", timeout=10000)
    hint = web.page.evaluate("window.__client.hint")
    assert hint["version"] == 0
    message = web.testid("message").inner_text()
    assert re.search(r"Estimated chance of winning from here: \d+ %", message), message
    if hint["to"] is None:
        assert "deal" in start["legalMoves"]
    else:
        assert f"{hint['from']}>{hint['to']}" in start["legalMoves"]
        assert web.pile(hint["from"]).get_attribute("class").count("hint-from") == 1
        assert "hint-to" in web.pile(hint["to"]).get_attribute("class")
    snapshot = web.server_snapshot(start["gameId"], web.token())
    assert snapshot["assisted"] is True
    web.screenshot("hint-desktop")


def test_a_rate_limited_hint_is_said_in_words(open_page: Any, limited_base_url: str) -> None:
    web = open_page(server=limited_base_url)
    web.new_game("balcony", "web-hint-2")
    web.testid("hint").click()
    web.wait("window.__client.hint !== null", timeout=10000)
    web.testid("hint").click()  # the second hint of the minute
    wait_text(web, "message", "Too many hints for now: try again in")
    assert web.testid("hint").is_enabled(), "the button is back for later"
    assert web.page.evaluate("window.__client.hint") is not None, "the first hint stays marked"


def test_display_name_at_registration_rename_and_typed_refusals(open_page: Any) -> None:
    first = open_page("/#/me")
    first.testid("me-page").wait_for(state="visible")
    assert first.testid("name-save").inner_text() == "Register"
    name = unique_name("Ann")
    first.testid("name-input").fill(name)
    first.testid("name-save").click()
    first.wait(
        "(n) => document.querySelector('[data-testid=\"name-shown\"]').textContent.includes(n)",
        name,
    )
    assert first.token() is not None, "registered"
    me = httpx.get(
        f"{first.base_url}/v1/players/me",
        headers={"Authorization": f"Bearer {first.token()}"},
        timeout=5,
    ).json()
    assert me["name"] == name

    second = open_page("/#/me")
    second.testid("me-page").wait_for(state="visible")
    second.testid("name-input").fill(name.upper())  # names compare ignoring case
    second.testid("name-save").click()
    error = second.testid("name-error")
    second.wait("document.querySelector('[data-testid=\"name-error\"]').textContent !== ''")
    assert "Another player has that name" in error.inner_text()
    assert second.testid("name-input").get_attribute("aria-invalid") == "true"
    assert second.token() is None, "a refused registration creates no player"
    second.testid("name-input").fill("x")
    second.testid("name-save").click()
    second.wait(
        "document.querySelector('[data-testid=\"name-error\"]').textContent.includes('name')"
    )

    # Renaming later; the leaderboard shows the name, and an unnamed player a short label.
    renamed = unique_name("Ann R")
    first.testid("name-input").fill(renamed)
    first.testid("name-save").click()
    first.wait(
        "(n) => document.querySelector('[data-testid=\"name-shown\"]').textContent.includes(n)",
        renamed,
    )
    first.page.goto(first.base_url + "/#/")
    first.wait("window.__client.connection === 'online'")
    first.testid("game-select").select_option("gloucestershire")
    first.testid("daily").click()
    first.wait("window.__client.game === 'gloucestershire' && window.__client.version === 0")
    first.wait_synced(0)
    first.testid("resign").click()
    first.testid("resign").click()
    first.wait_synced(1)
    anonymous = open_page()
    anonymous.testid("game-select").select_option("gloucestershire")
    anonymous.testid("daily").click()
    anonymous.wait("window.__client.game === 'gloucestershire' && window.__client.version === 0")
    anonymous.wait_synced(0)
    anonymous.testid("resign").click()
    anonymous.testid("resign").click()
    anonymous.wait_synced(1)
    anonymous.testid("leaderboard-refresh").click()
    wait_text(anonymous, "leaderboard-rows", renamed)
    rows = anonymous.testid("leaderboard-rows").inner_text()
    player_id = anonymous.page.evaluate("window.__client.playerId")
    assert f"anonymous {player_id[2:6]}" in rows
    assert "p_" not in rows, "no raw ids on the board"


def test_my_games_history_and_stats(open_page: Any) -> None:
    web = open_page()
    won_id, _, _ = finished_game(web, "balcony", WON_BALCONY)
    web.new_game("balcony", "web-resign-1")
    resigned_id = web.client()["gameId"]
    web.testid("resign").click()
    web.testid("resign").click()
    web.wait_synced(1)
    web.open_menu()
    web.testid("my-games-link").click()
    web.testid("me-page").wait_for(state="visible")
    web.wait("document.querySelectorAll('[data-testid=\"history-item\"]').length === 2")
    items = web.page.locator('[data-testid="history-item"]')
    assert items.nth(0).get_attribute("data-game-id") == resigned_id, "newest first"
    assert items.nth(1).get_attribute("data-game-id") == won_id
    assert "won" in items.nth(1).inner_text() and "resigned" in items.nth(0).inner_text()
    balcony = web.page.locator('[data-testid="stats-rows"] tr', has_text="Balcony").inner_text()
    played, won, rate, best, time, fewest, streak, best_streak = balcony.split("\t")[1:]
    assert (played, won, rate, best, streak, best_streak) == ("2", "1", "50 %", "52", "0", "1")
    assert fewest != "–" and time != "–"  # from the won game
    assert axe_violations(web) == [], "my games"
    web.screenshot("my-games-desktop")
    web.page.emulate_media(color_scheme="dark")
    assert axe_violations(web) == [], "my games, dark"
    web.screenshot("my-games-dark")
    web.page.emulate_media(color_scheme="light")
    web.page.set_viewport_size(PHONE["viewport"])
    web.screenshot("my-games-phone")


def test_replay_viewer_steps_through_a_finished_game_with_its_verdict(open_page: Any) -> None:
    web = open_page()
    game_id, moves, status = finished_game(web, "colorado", STUCK_COLORADO)
    assert status == "stuck"
    viewer = open_page(f"/#/replay/{game_id}")  # anybody may watch a finished casual game
    viewer.testid("replay-controls").wait_for(state="visible")
    viewer.wait(
        "document.querySelector('[data-testid=\"verdict-integrity\"]').textContent.includes('passed')",
        timeout=10000,
    )
    # The greedy player's moves came over REST within milliseconds: the speed signal, in words.
    assert (
        viewer.testid("verdict-fair")
        .inner_text()
        .startswith("Fair play: one signal: inhuman speed (")
    )
    state = viewer.page.evaluate("window.__client.replay")
    assert state["moves"] == len(moves) and all(state["shown"]), "every table rebuilt"
    assert viewer.testid("replay-step").inner_text() == f"0 / {len(moves)}"
    assert viewer.page.locator('[data-testid="move-list"] li').count() == len(moves)

    engine = new_game("colorado", STUCK_COLORADO)
    steps = {0: engine.view()}
    for k, move in enumerate(moves, start=1):
        engine.play(move)
        steps[k] = engine.view()

    def drawn() -> dict[str, list[str]]:
        result: dict[str, list[str]] = viewer.page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll(
                 '[data-testid="replay-table"] [data-pile]')].map((p) => [p.dataset.pile,
                 [...p.querySelectorAll(':scope > .card[data-card]')]
                   .map((c) => c.dataset.card)]))"""
        )
        return result

    def expected(k: int) -> list[str]:
        return list(steps[k]["tableau"][0])

    assert drawn()["tableau[0]"] == expected(0)
    viewer.page.keyboard.press("ArrowRight")
    viewer.page.keyboard.press("ArrowRight")
    assert viewer.testid("replay-step").inner_text() == f"2 / {len(moves)}"
    assert drawn()["foundation[0]"] == list(steps[2]["foundations"][0])
    viewer.page.locator('[data-testid="move-list"] li button').nth(49).click()
    assert viewer.testid("replay-step").inner_text() == f"50 / {len(moves)}"
    for address, cards in drawn().items():
        if address != "stock":
            view = steps[50]
            kind, _, index = address.partition("[")
            pile = view["foundations" if kind == "foundation" else kind]
            assert cards == (pile[int(index[:-1])] if index else pile), address
    viewer.testid("replay-prev").click()
    assert viewer.testid("replay-step").inner_text() == f"49 / {len(moves)}"
    viewer.testid("replay-last").click()
    assert drawn()["tableau[0]"] == expected(len(moves))
    assert viewer.testid("replay-next").is_disabled()
    viewer.page.keyboard.press("Home")
    assert viewer.testid("replay-step").inner_text() == f"0 / {len(moves)}"
    assert viewer.testid("replay-first").is_disabled()
    assert axe_violations(viewer) == [], "replay viewer"
    viewer.screenshot("replay-desktop")
    viewer.page.emulate_media(color_scheme="dark")
    assert axe_violations(viewer) == [], "replay viewer, dark"
    phone = open_page(f"/#/replay/{game_id}", **PHONE)
    phone.testid("replay-controls").wait_for(state="visible")
    phone.testid("replay-next").click()
    for button in ("replay-first", "replay-prev", "replay-next", "replay-last"):
        box = phone.testid(button).bounding_box()
        assert box is not None and box["height"] >= 44 and box["width"] >= 44, button
    assert axe_violations(phone) == [], "replay viewer on a phone"
    phone.screenshot("replay-phone")


def test_todays_daily_replay_waits_politely_for_the_close(open_page: Any) -> None:
    web = open_page()
    web.testid("game-select").select_option("colorado")
    web.testid("daily").click()
    web.wait("window.__client.game === 'colorado' && window.__client.version === 0")
    web.wait_synced(0)
    web.testid("resign").click()
    web.testid("resign").click()
    web.wait_synced(1)
    web.testid("daily").click()
    web.testid("daily-done").wait_for(state="visible")
    web.testid("daily-done-replay").click()
    # Its player may look at it at once; the verdict waits for the close.
    web.testid("replay-controls").wait_for(state="visible")
    wait_text(web, "verdict-integrity", "a daily game's verdict comes once its day has closed")
    assert web.testid("replay-step").inner_text() == "0 / 1"
    other = open_page(web.page.url.split(web.base_url)[1])
    other.testid("replay-page").wait_for(state="visible")
    other.wait(
        "document.querySelector('[data-testid=\"replay-note\"]').textContent.includes('still open')"
    )
    note = other.testid("replay-note").inner_text()
    assert re.search(r"at 00:00 UTC on \d{4}-\d{2}-\d{2} \(in (\d+:)?\d+:\d\d\)", note), note
    assert axe_violations(other) == [], "daily open"


def test_daily_panel_proof_and_yesterdays_par_line(open_page: Any) -> None:
    web = open_page()
    web.testid("game-select").select_option("balcony")
    today = httpx.get(f"{web.base_url}/v1/daily/balcony", timeout=5).json()
    web.wait("document.querySelector('[data-testid=\"daily-proof\"]').textContent !== ''")
    proof = web.testid("daily-proof").inner_text()
    if today["winnable"]:
        assert proof == "Today's deal is proven winnable: the solver found a win."
    else:
        assert f"the solver's best is {today['proven_score']} of" in proof
    # Yesterday's deal was chosen then (the fixture stored it): its board and par line.
    web.testid("board-day").click()
    for _ in range(40):
        if web.testid("par-link").is_visible():
            break
        web.page.wait_for_timeout(500)
        web.testid("leaderboard-refresh").click()
    web.testid("par-link").click()
    web.testid("replay-page").wait_for(state="visible")
    web.wait("window.__client.replay.moves > 0")
    assert "The solver's line on this deal" in web.testid("replay-note").inner_text()
    web.page.keyboard.press("End")
    moves = web.page.evaluate("window.__client.replay.moves")
    assert web.testid("replay-step").inner_text() == f"{moves} / {moves}"
