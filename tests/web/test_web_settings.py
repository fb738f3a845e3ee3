"""The settings panel (issue 29, item 7): theme, card back, felt, card size, sound and the
auto-move default, reached from the menu and by the keyboard, kept in localStorage across a
reload, each taking effect at once; axe finds nothing serious with the panel open."""

from __future__ import annotations

from typing import Any

import pytest
from web_helpers import Web, axe_violations, choose_card_move

VIEWPORTS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
}

LOOK = """
() => {
  const back = document.querySelector('[data-testid="table"] .card.back');
  const card = document.querySelector('[data-testid="table"] .card[data-card]');
  return {
    theme: document.documentElement.dataset.theme,
    felt: getComputedStyle(document.body).backgroundImage,
    back: back ? getComputedStyle(back).backgroundColor : null,
    cardWidth: card ? card.getBoundingClientRect().width : null,
    autoMove: document.querySelector('[data-testid="auto-move"]').checked,
  };
}
"""


def open_settings(web: Web) -> None:
    web.open_menu()
    web.testid("settings-open").click()
    web.testid("settings-panel").wait_for(state="visible")


def play_a_card(web: Web) -> None:
    """A card move by two clicks, once the page is in step (auto-move may play between)."""
    version = web.wait_synced()["version"]
    move = choose_card_move(web.client()["legalMoves"], None)
    assert move is not None
    web.click_move(move)
    web.wait(f"window.__client.version > {version}")


def choose(web: Web, name: str, value: str) -> None:
    web.page.locator(f'[data-testid="setting-{name}-{value}"]').check()


def test_settings_take_effect_and_persist_across_a_reload(open_page: Any) -> None:
    web = open_page(color_scheme="light", viewport={"width": 1280, "height": 800})
    web.new_game("balcony", "settings-1")
    web.settle()
    before = web.page.evaluate(LOOK)
    assert before["theme"] == "light" and not before["autoMove"]
    open_settings(web)
    choose(web, "theme", "dark")
    choose(web, "back", "red")
    choose(web, "felt", "blue")
    choose(web, "cardSize", "large")
    web.testid("setting-sound").check()
    web.testid("setting-autoMove").check()
    after = web.page.evaluate(LOOK)
    assert after["theme"] == "dark"
    assert after["back"] == "rgb(163, 38, 47)", after
    assert after["felt"] != before["felt"]
    assert after["cardWidth"] > before["cardWidth"] * 1.3, (before, after)
    assert after["autoMove"], "the menu's auto-move box follows the default"
    web.testid("settings-close").click()
    web.testid("settings-panel").wait_for(state="hidden")
    # Sound: a card put down plays one (auto-move's own moves make none).
    sounds = web.page.evaluate("window.__client.sounds")
    play_a_card(web)
    web.wait(f"window.__client.sounds > {sounds}")
    # A reload keeps every choice.
    web.page.reload()
    web.wait_synced()
    web.settle()
    assert web.page.evaluate(LOOK) == {**after, "cardWidth": web.page.evaluate(LOOK)["cardWidth"]}
    assert web.page.evaluate(LOOK)["cardWidth"] > before["cardWidth"] * 1.3
    open_settings(web)
    for testid in ("theme-dark", "back-red", "felt-blue", "cardSize-large"):
        assert web.testid(f"setting-{testid}").is_checked(), testid
    assert web.testid("setting-sound").is_checked()
    # Back to the system's theme: light again (the system is light); sound off: silent.
    choose(web, "theme", "system")
    web.testid("setting-sound").uncheck()
    assert web.page.evaluate(LOOK)["theme"] == "light"
    web.page.keyboard.press("Escape")
    sounds = web.page.evaluate("window.__client.sounds")
    play_a_card(web)
    assert web.page.evaluate("window.__client.sounds") == sounds


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_settings_panel_by_keyboard_and_axe_clean(open_page: Any, size: str) -> None:
    web = open_page(**VIEWPORTS[size])
    web.new_game("colorado", "settings-2")
    web.open_menu()
    web.testid("settings-open").focus()
    web.page.keyboard.press("Enter")
    web.testid("settings-panel").wait_for(state="visible")
    inside = "document.activeElement.closest('[data-testid=settings-panel]') !== null"
    assert web.page.evaluate(inside)
    # Arrow keys choose within a radio group (the browser's own radio behaviour).
    web.testid("setting-theme-system").focus()
    web.page.keyboard.press("ArrowDown")
    assert web.testid("setting-theme-light").is_checked()
    assert web.page.evaluate("document.documentElement.dataset.theme") == "light"
    assert axe_violations(web) == [], "settings panel open"
    web.page.keyboard.press("Escape")
    web.testid("settings-panel").wait_for(state="hidden")
    assert axe_violations(web) == [], "the table"
    web.page.keyboard.press("?")
    web.testid("rules").wait_for(state="visible")
    assert axe_violations(web) == [], "the rules and keys"
