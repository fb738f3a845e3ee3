"""Screenshots of the web client: each game's table on a desktop and a phone viewport.

    .venv/bin/python -m tools.web_screenshots docs/screenshots/after [--seed shots-1]

Started here, as real processes on 127.0.0.1: a throwaway ``redis-server`` and
``python -m server`` (as ``benchmarks/web.py`` starts them); Playwright drives Debian's
``/usr/bin/chromium`` headless. Every game is dealt from the same seed and shown to its
owner as a returning player sees it (the first game's walkthrough dismissed, motion reduced
so no card is caught in flight), at device scale 1: ``<game>-desktop.png`` (1280×800) and
``<game>-phone.png`` (390×844, touch). Only the viewport is captured: what does not fit is
what the player has to scroll to.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import httpx

from benchmarks.web import CHROMIUM, CHROMIUM_ARGS, GAMES, game_server, wait
from server.testing import RedisProcess

VIEWPORTS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
}
READY = """(() => { const c = window.__client; return c && c.connection === 'online'
  && c.view !== null && c.legalMoves !== null; })()"""


def shoot(browser: Any, base_url: str, out: Path, seed: str) -> list[Path]:
    saved: list[Path] = []
    for game in GAMES:
        player = httpx.post(f"{base_url}/v1/players", json={}, timeout=5).json()
        snapshot = httpx.post(
            f"{base_url}/v1/games",
            json={"game": game, "seed": seed},
            headers={"Authorization": f"Bearer {player['token']}"},
            timeout=5,
        ).json()
        stored = json.dumps(json.dumps(player))
        for name, options in VIEWPORTS.items():
            context = browser.new_context(device_scale_factor=1, reduced_motion="reduce", **options)
            context.add_init_script(
                f"localStorage.setItem('patience.player', {stored});"
                "localStorage.setItem('patience.walkthrough-done', '1');"
            )
            page = context.new_page()
            page.goto(f"{base_url}/#/game/{snapshot['id']}")
            wait(page, READY)
            path = out / f"{game}-{name}.png"
            page.screenshot(path=str(path))
            saved.append(path)
            context.close()
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory for the PNG files")
    parser.add_argument("--seed", default="shots-1", help="the deal of every game")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with (
        RedisProcess() as redis_process,
        game_server(redis_process.url) as base_url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for path in shoot(browser, base_url, options.out, options.seed):
                print(path)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
