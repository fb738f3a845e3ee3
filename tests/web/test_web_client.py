"""The web client in headless Chromium against a real server and Redis.

Each game is started with a fixed seed and played through the page by clicks and by
drags; after every move the page (``window.__client`` and the drawn cards) must equal the
server's ``GET /v1/games/{id}``. Also: an illegal drop, a cut socket, a spectator, a
phone-sized screen, the daily challenge and its leaderboard. Screenshots go to
``test-artifacts/web/``.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgpack
import pytest
from web_helpers import Web, choose_card_move, pile_cards

#: Seeds where the tests' move choice (``choose_card_move``) has at least 6 card moves,
#: with deals in between where the game has them (checked against the rules engine).
SEEDS = {
    "balcony": "web-3",
    "empress_of_italy": "web-17",
    "colorado": "web-1",
    "gloucestershire": "web-4",
    "matrimony": "web-1",
}
TOTAL_CARDS = {
    "balcony": 52,
    "empress_of_italy": 208,
    "colorado": 104,
    "gloucestershire": 104,
    "matrimony": 104,
}
CLICKS = 3
DRAGS = 3


def play_card_moves(web: Web, clicks: int, drags: int) -> list[str]:
    """Play ``clicks`` card moves by click-then-click, then ``drags`` by drag and drop,
    dealing (with the Deal button) whenever there is no card move; returns the moves."""
    played: list[str] = []
    last: str | None = None
    plan = ["click"] * clicks + ["drag"] * drags
    deals = 0
    while plan:
        legal = web.client()["legalMoves"]
        move = choose_card_move(legal, last)
        if move is None:
            assert "deal" in legal or "redeal" in legal, f"no card move and no deal: {legal}"
            move = "deal" if "deal" in legal else "redeal"
            deals += 1
            assert deals <= 8, played
            web.play(move, "button")
        else:
            web.play(move, plan.pop(0))
            last = move
        played.append(move)
        assert web.client()["status"] == "playing", played
    return played


def test_page_and_its_modules_are_served(base_url: str) -> None:
    page = httpx.get(f"{base_url}/", timeout=5)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert 'src="/static/main.mjs"' in page.text
    for path in ("/static/main.mjs", "/static/sdk/index.js", "/static/sdk/msgpack/index.mjs"):
        module = httpx.get(base_url + path, timeout=5)
        assert module.status_code == 200, path
        assert module.headers["content-type"].startswith("text/javascript"), path
    assert httpx.get(f"{base_url}/static/nothing.css", timeout=5).status_code == 404
    # The API keeps its own errors around the page's routes.
    assert httpx.delete(f"{base_url}/", timeout=5).status_code == 405
    assert httpx.delete(f"{base_url}/v1/games", timeout=5).status_code == 405
    missing = httpx.get(f"{base_url}/nothing", timeout=5)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("game", list(SEEDS))
def test_play_a_game_by_clicks_and_drags(open_page: Any, game: str) -> None:
    web = open_page()
    web.new_game(game, SEEDS[game])
    token = web.token()
    assert token is not None
    server = web.check_agrees(token)
    client = web.client()
    assert client["role"] == "owner"
    # A fixed seed deals the same table as a game created over REST with that seed.
    again = httpx.post(
        f"{web.base_url}/v1/games",
        json={"game": game, "seed": SEEDS[game]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=5,
    ).json()
    assert again["view"] == server["view"]
    assert web.page.url.endswith(f"#/game/{client['gameId']}")

    # What the layout shows besides the piles.
    assert web.testid("score-of").inner_text().strip() == f"/ {TOTAL_CARDS[game]}"
    view = server["view"]
    if "base_rank" in view:
        assert web.testid("base-rank").inner_text() == view["base_rank"]
    if game == "matrimony":
        assert web.testid("redeals-left").inner_text() == "16"
    if "stock" in view:
        assert web.testid("stock-count").inner_text() == str(view["stock"]["count"])
    if game == "colorado":
        top = view["stock"]["top"]
        assert web.pile("stock").locator(f'.card.top[data-card="{top}"]').is_visible()
    assert web.testid("deal").is_visible() == (game in ("balcony", "empress_of_italy", "matrimony"))
    assert web.testid("redeal").is_visible() == (game == "matrimony")
    assert web.testid("resign").is_visible()

    played = play_card_moves(web, CLICKS, DRAGS)
    assert sum(">" in move for move in played) == CLICKS + DRAGS
    web.screenshot(f"{game}-desktop")

    if game == "matrimony":
        # Deal out the stock by clicking it, then one redeal with the button.
        while "deal" in web.client()["legalMoves"]:
            version = web.client()["version"]
            web.pile("stock").click()
            web.wait_synced(version + 1)
            web.check_agrees(token)
        assert web.client()["view"]["stock"]["count"] == 0
        web.play("redeal", "button")
        assert web.client()["view"]["redeals_left"] == 15
        assert web.testid("redeals-left").inner_text() == "15"


def test_an_illegal_drop_is_refused_with_the_servers_reason(open_page: Any) -> None:
    web = open_page()
    web.new_game("balcony", SEEDS["balcony"])
    token = web.token()
    before = web.check_agrees(token)
    legal = set(before["legal_moves"])
    view = before["view"]
    move = next(
        f"{source}>{target}"
        for source in [f"tableau[{i}]" for i in range(7)]
        for target in ["foundation[1]", *[f"tableau[{i}]" for i in range(7)]]
        if source != target and pile_cards(view, source) and f"{source}>{target}" not in legal
    )
    web.drag_move(move, expect_target=False)
    message = web.testid("message")
    message.wait_for(state="visible")
    # The page shows the server's own reason, as REST gives it for the same move.
    refused = httpx.post(
        f"{web.base_url}/v1/games/{before['id']}/moves",
        json={"move": move, "version": before["version"]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=5,
    )
    assert refused.status_code == 422
    reason = refused.json()["error"]["message"]
    assert reason and message.inner_text() == reason
    assert message.get_attribute("data-kind") == "error"
    # Nothing changed, on the page or on the server.
    web.wait_synced(before["version"])
    after = web.check_agrees(token)
    assert after["version"] == before["version"] and after["view"] == view
    assert web.page.locator(".card.ghost").count() == 0


def test_a_cut_socket_reconnects_and_resyncs_by_itself(open_page: Any) -> None:
    web = open_page()
    web.new_game("colorado", SEEDS["colorado"])
    play_card_moves(web, 1, 1)
    token = web.token()
    start = web.check_agrees(token)
    frames_before = web.page.evaluate("window.__wsControl.sent.length")
    # The network goes: the socket closes and new ones are refused for a while.
    web.page.evaluate("window.__wsControl.cut()")
    web.wait("window.__client.connection === 'offline'")
    assert web.testid("connection").inner_text() == "offline"
    # Meanwhile the same player moves twice over REST.
    version = start["version"]
    for _ in range(2):
        legal = web.server_snapshot(start["id"], token)["legal_moves"]
        move = choose_card_move(legal, None)
        assert move is not None
        response = web.rest_move(start["id"], move, version)
        assert response.status_code == 200, response.text
        version += 1
    assert web.client()["version"] == start["version"]
    # The network comes back: the page reconnects on its own and catches up.
    web.page.evaluate("window.__wsControl.restore()")
    web.wait_synced(version)
    web.check_agrees(token)
    assert web.testid("connection").inner_text() == "online"
    frames = web.page.evaluate("window.__wsControl.sent")[frames_before:]
    sent = [msgpack.unpackb(bytes(frame)) for frame in frames]
    subscribes = [m for m in sent if m.get("type") == "subscribe"]
    assert subscribes and subscribes[0] == {
        "type": "subscribe",
        "game_id": start["id"],
        "version": start["version"],
    }
    assert any(m.get("type") == "auth" for m in sent)
    # A move made elsewhere while the page is online arrives as a patch; the page then asks
    # for the legal moves of the new version by itself (WEBSOCKET.md, `patch`).
    legal = web.server_snapshot(start["id"], token)["legal_moves"]
    response = web.rest_move(start["id"], choose_card_move(legal, None) or "", version)
    assert response.status_code == 200, response.text
    web.wait_synced(version + 1)
    web.check_agrees(token)
    # And it plays on.
    play_card_moves(web, 1, 0)


def test_a_move_whose_reply_was_lost_is_applied_once(open_page: Any) -> None:
    web = open_page()
    web.new_game("empress_of_italy", SEEDS["empress_of_italy"])
    token = web.token()
    start = web.check_agrees(token)
    move = choose_card_move(web.client()["legalMoves"], None)
    assert move is not None
    web.page.evaluate("window.__wsControl.cutAfterSend = true")
    web.click_move(move)
    web.wait("window.__client.connection === 'offline'")
    assert web.client()["pending"] == move
    web.page.evaluate("window.__wsControl.restore()")
    web.wait_synced(start["version"] + 1)
    server = web.check_agrees(token, set(move.split(">")))
    assert server["version"] == start["version"] + 1
    # Sent twice with the same move_id; applied once.
    sent = [msgpack.unpackb(bytes(frame)) for frame in web.page.evaluate("window.__wsControl.sent")]
    moves = [message for message in sent if message["type"] == "move"]
    assert len(moves) == 2 and moves[0]["move_id"] == moves[1]["move_id"]
    assert moves[0]["move"] == moves[1]["move"] == move
    log = httpx.get(f"{web.base_url}/v1/games/{start['id']}/log", timeout=5).json()
    assert [entry["move"] for entry in log["moves"]] == [move]


def test_a_spectator_follows_the_owners_moves(open_page: Any) -> None:
    owner = open_page()
    owner.new_game("gloucestershire", SEEDS["gloucestershire"])
    link = owner.testid("game-link").get_attribute("href")
    assert link is not None and "#/game/" in link
    spectator = open_page(link.removeprefix(owner.base_url))
    spectator.wait_synced(0, owner=False)
    assert spectator.token() is None
    seen = spectator.client()
    assert seen["role"] == "spectator" and seen["legalMoves"] is None
    assert spectator.testid("role").inner_text().lower() == "spectating"
    for button in ("deal", "redeal", "resign"):
        assert not spectator.testid(button).is_visible()
    spectator.check_agrees(None)

    played = play_card_moves(owner, 2, 2)
    spectator.wait_synced(len(played), owner=False)
    spectator.check_agrees(None)
    # A spectator's clicks and drags move nothing.
    view = spectator.client()["view"]
    source = next(f"tableau[{i}]" for i in range(8) if view["tableau"][i])
    spectator.top_card(source).click()
    spectator.drag_move(f"{source}>foundation[3]", expect_target=False)
    assert spectator.page.locator(".pile.selected").count() == 0
    assert spectator.client()["version"] == len(played)
    spectator.screenshot("gloucestershire-spectator")


def test_a_phone_sized_screen(open_page: Any) -> None:
    web = open_page(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    for game, seed in SEEDS.items():
        web.new_game(game, seed)
        web.check_agrees(web.token())
        # Everything fits the width; the cards stay big enough to read.
        width = web.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (game, width)
        card = web.page.locator('[data-testid="table"] .card[data-card]').first.bounding_box()
        assert card is not None and card["width"] >= 26, (game, card)
        web.screenshot(f"{game}-phone")
    # Tap, tap: a move on a touch screen.
    legal = web.client()["legalMoves"]
    move = choose_card_move(legal, None)
    assert move is not None
    source, target = move.split(">")
    version = web.client()["version"]
    web.settle()  # a player taps where the card rests, not where it flies
    web.top_card(source).tap()
    web.page.wait_for_selector(f'[data-pile="{target}"].target', state="attached")
    web.pile(target).tap()
    web.wait_synced(version + 1)
    web.check_agrees(web.token(), {source, target})


def test_daily_challenge_and_its_leaderboard(open_page: Any) -> None:
    web = open_page()
    web.testid("game-select").select_option("balcony")
    web.testid("daily").click()
    web.wait("window.__client.game === 'balcony' && window.__client.version === 0")
    web.wait_synced(0)
    token = web.token()
    server = web.check_agrees(token)
    date = server["daily"]
    assert date and web.testid("daily-tag").inner_text().lower() == f"daily {date}"
    play_card_moves(web, 1, 1)
    # Resigning takes two clicks; the ranked attempt is then on today's board.
    version = web.client()["version"]
    web.testid("resign").click()
    assert web.client()["version"] == version
    web.testid("resign").click()
    web.wait_synced(version + 1)
    assert web.check_agrees(token)["status"] == "resigned"
    assert web.testid("resign").is_disabled()
    player = web.page.evaluate("window.__client.playerId")
    row = web.testid("leaderboard-rows").locator("tr.me")
    row.wait_for(state="visible")
    # A player without a display name: a short anonymous label, never the raw id.
    assert row.inner_text().split("\t")[1] == f"anonymous {player[2:6]}"
    board = httpx.get(f"{web.base_url}/v1/leaderboards/balcony/{date}", timeout=5).json()
    # The worker's web server is shared by its modules, whose players may be on today's
    # board too (in any order): this player's one entry is what this test made.
    assert [e["player_id"] for e in board["entries"]].count(player) == 1
    assert web.testid("leaderboard-title").inner_text() == f"Balcony, {date}"
