"""The table in the browser (issue 29, items 4, 5 and 10): every game's table fits the
viewport on a desktop and a phone, its tallest column in a real deal included; phone taps
land on the pile under the finger; the keyboard moves between piles by the table's layout,
with a skip link and single-key shortcuts; fast play lands every move where it was aimed.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import httpx
import pytest
from web_helpers import Web, choose_card_move

from server.rules import new_game

GAMES = ("balcony", "empress_of_italy", "colorado", "gloucestershire", "matrimony")
VIEWPORTS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
}
#: Seeds tried for each game's tallest column (the deepest one found is played).
FAN_SEEDS = ("fan-1", "fan-2", "fan-3")
FAN_MOVES = 400
#: Bound on a reloaded page's catching up with a game of a few hundred moves (a loaded machine).
CATCH_UP_MS = 20000
#: Auto-finish off (the stored play settings).
NO_AUTO_FINISH = """localStorage.setItem('patience.settings', '{"autoFinish": false}')"""


def tallest_column(name: str, seed: str) -> tuple[list[str], int]:
    """Moves of a real deal that pile cards onto one tableau column as deep as this greedy
    player can (each move that lengthens the deepest column first, then any other move that
    does not shorten it); the shortest prefix reaching the deepest column, and its depth."""
    game = new_game(name, seed)
    rng = random.Random(seed)
    moves: list[str] = []
    best: tuple[int, int] = (max(len(p) for p in game.view()["tableau"]), 0)
    while game.status == "playing" and len(moves) < FAN_MOVES:
        tableau = game.view()["tableau"]
        deepest = max(range(len(tableau)), key=lambda i: len(tableau[i]))
        legal = [str(m) for m in game.legal_moves() if str(m) not in ("resign", "undo")]
        onto = [m for m in legal if m.endswith(f">tableau[{deepest}]")]
        keep = [m for m in legal if not m.startswith(f"tableau[{deepest}]>")]
        move = (onto or [None])[0] or (rng.choice(keep) if keep else None)
        if move is None:
            break
        game.play(move)
        moves.append(move)
        depth = max(len(p) for p in game.view()["tableau"])
        if depth > best[0]:
            best = (depth, len(moves))
    return moves[: best[1]], best[0]


@functools.cache  # both viewports play the same deals: searched once per worker
def deepest_deal(name: str) -> tuple[str, list[str], int]:
    found = [(seed, *tallest_column(name, seed)) for seed in FAN_SEEDS]
    return max(found, key=lambda entry: entry[2])


# The table's extent: its own box and every pile's and card's (cards are positioned).
EXTENT = """
() => {
  const table = document.querySelector('[data-testid="table"]');
  const boxes = [table, ...table.querySelectorAll('.pile, .card, .badge, .playable')]
    .map((n) => n.getBoundingClientRect()).filter((r) => r.width > 0);
  const card = table.querySelector('.card[data-card]').getBoundingClientRect();
  const t = table.getBoundingClientRect();
  return {
    left: Math.min(...boxes.map((r) => r.left)), top: Math.min(...boxes.map((r) => r.top)),
    right: Math.max(...boxes.map((r) => r.right)), bottom: Math.max(...boxes.map((r) => r.bottom)),
    tableWidth: t.width, tableHeight: t.height, cardWidth: card.width, cardHeight: card.height,
    scrollX: window.scrollX, scrollY: window.scrollY,
    innerWidth: window.innerWidth, innerHeight: window.innerHeight,
    pageWidth: document.documentElement.scrollWidth,
  };
}
"""


def open_deal(web: Web, game: str, seed: str, moves: list[str]) -> None:
    """A new game of ``seed`` for the page's player and ``moves`` played, all over REST
    (the page follows no move live: hundreds of renders), then the page loaded on it."""
    if web.token() is None:  # the page makes its player with its first game
        web.new_game(game, seed)
    headers = {"Authorization": f"Bearer {web.token()}"}
    with httpx.Client(base_url=web.base_url, headers=headers, timeout=5) as client:
        created = client.post("/v1/games", json={"game": game, "seed": seed})
        assert created.status_code == 201, created.text
        game_id = created.json()["id"]
        for version, move in enumerate(moves):
            body = {"move": move, "version": version}
            response = client.post(f"/v1/games/{game_id}/moves", json=body)
            assert response.status_code == 200, (move, response.text)
    web.page.goto(f"{web.base_url}/#/game/{game_id}")
    web.page.reload()  # a fresh page on the deal: its layout made for this table alone
    web.wait(
        "([id]) => window.__client && window.__client.connection === 'online'"
        " && window.__client.gameId === id",
        [game_id],
    )
    try:
        web.wait_synced(len(moves), timeout=CATCH_UP_MS)
    except AssertionError as error:
        state = {k: v for k, v in web.client().items() if k not in ("view", "legalMoves")}
        raise AssertionError(f"{game} at {len(moves)} moves: the page is {state}") from error


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_every_table_fits_the_viewport_with_its_deepest_column(open_page: Any, size: str) -> None:
    web = open_page(reduced_motion="reduce", **VIEWPORTS[size])
    # Auto-finish off before any game (each is loaded afresh, reading it): the page would
    # play the deep column home by itself.
    web.page.evaluate(NO_AUTO_FINISH)
    rows = []
    for game in GAMES:
        seed, moves, depth = deepest_deal(game)
        # Each row of columns keeps the room of its full depth: the deal's table is as tall.
        for stage, played in ((f"deepest column: {depth} cards", moves),):
            open_deal(web, game, seed, played)
            box = web.page.evaluate(EXTENT)
            rows.append(
                f"| {game} | {size} | {stage} | {box['cardWidth']:.0f}×{box['cardHeight']:.0f} "
                f"| {box['tableWidth']:.0f}×{box['tableHeight']:.0f} (bottom {box['bottom']:.0f}) "
                f"| {box['innerWidth']}×{box['innerHeight']} |"
            )
            where = (game, stage, box)
            assert box["scrollX"] == 0 and box["scrollY"] == 0, where
            assert box["left"] >= 0 and box["top"] >= 0, where
            assert box["right"] <= box["innerWidth"], where
            assert box["bottom"] <= box["innerHeight"], where
            assert box["pageWidth"] <= box["innerWidth"], where
    print("\n| game | viewport | played to | card | table w×h | viewport |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


# -- phone taps ------------------------------------------------------------------------------

PILE_BOXES = """
() => [...document.querySelectorAll('[data-testid="table"] [data-pile]')].map((p) => {
  const r = p.getBoundingClientRect();
  return {pile: p.dataset.pile, x: r.left, y: r.top, width: r.width, height: r.height,
          cards: p.querySelectorAll(':scope > .card[data-card]').length};
})
"""
SELECTED = """
() => [...document.querySelectorAll('[data-testid="table"] [data-pile].selected')]
  .map((p) => p.dataset.pile)
"""
TAPS = 200


def test_phone_piles_are_finger_sized_and_200_random_taps_hit_their_pile(open_page: Any) -> None:
    """Seeded random taps, spread over the five games, each at a random point of a random
    pile with a card (the stock deals instead: left out): the pile tapped is the one picked up."""
    web = open_page(**VIEWPORTS["phone"])
    rng = random.Random(29)
    sizes = []
    misses = []
    small: list[tuple[str, float]] = []
    for index, game in enumerate(GAMES):
        web.new_game(game, "taps-1")
        if index == 0:
            web.testid("walkthrough-dismiss").click()
        web.settle()
        boxes = web.page.evaluate(PILE_BOXES)
        narrowest = min(box["width"] for box in boxes)
        sizes.append(f"{game}: piles at least {narrowest:.0f} px wide")
        small.append((game, narrowest)) if narrowest < 44 else None
        assert min(box["height"] for box in boxes) >= 44, game
        targets = [box for box in boxes if box["cards"] and box["pile"] != "stock"]
        for _ in range(TAPS // len(GAMES)):
            box = rng.choice(targets)
            x = box["x"] + 1 + rng.random() * (box["width"] - 2)
            y = box["y"] + 1 + rng.random() * (box["height"] - 2)
            web.page.touchscreen.tap(x, y)
            selected = web.page.evaluate(SELECTED)
            if selected != [box["pile"]]:
                misses.append((game, box["pile"], round(x), round(y), selected))
            web.page.keyboard.press("Escape")  # put it down (a second tap would send it home)
            web.wait("document.querySelector('[data-testid=table] .selected') === null")
    print("\n" + "; ".join(sizes))
    assert misses == [], misses
    assert small == [], small


# -- the keyboard ----------------------------------------------------------------------------

ROWS = """
() => [...document.querySelectorAll('[data-testid="table"] .row')]
  .map((row) => [...row.querySelectorAll(':scope > [data-pile]')].map((p) => {
    const r = p.getBoundingClientRect();
    return {pile: p.dataset.pile, centre: r.left + r.width / 2};
  }).sort((a, b) => a.centre - b.centre))
  .filter((row) => row.length)
"""
FOCUSED = "document.activeElement && document.activeElement.dataset.pile || null"


def nearest(row: list[dict[str, Any]], x: float) -> str:
    best = row[0]
    for pile in row:
        if abs(pile["centre"] - x) < abs(best["centre"] - x) - 0.5:
            best = pile
    return str(best["pile"])


def press(web: Web, key: str) -> Any:
    web.page.keyboard.press(key)
    return web.page.evaluate(FOCUSED)


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_skip_link_then_arrows_follow_the_tables_layout(open_page: Any, size: str) -> None:
    """ "Skip to table" is the first Tab stop and lands on a pile; then in every game, right
    walks each row left to right and stops at its end, Home and End go to its ends, and down
    goes to the nearest pile of the row below, up coming back to where it started."""
    web = open_page(**VIEWPORTS[size])
    for game in GAMES:
        web.new_game(game, "keys-1")
        web.page.reload()
        web.wait_synced(0)
        web.page.keyboard.press("Tab")
        assert web.page.evaluate("document.activeElement.dataset.testid") == "skip-link"
        assert press(web, "Enter") == web.page.evaluate(ROWS)[0][0]["pile"], game
        rows = web.page.evaluate(ROWS)
        for r, row in enumerate(rows):
            web.pile(row[0]["pile"]).focus()
            for pile in row[1:]:
                assert press(web, "ArrowRight") == pile["pile"], (game, r)
            assert press(web, "ArrowRight") == row[-1]["pile"], (game, "the row's end")
            assert press(web, "Home") == row[0]["pile"], game
            assert press(web, "End") == row[-1]["pile"], game
            if r + 1 < len(rows):
                for pile in row:
                    web.pile(pile["pile"]).focus()
                    below = nearest(rows[r + 1], pile["centre"])
                    assert press(web, "ArrowDown") == below, (game, pile["pile"])
                    assert press(web, "ArrowUp") == pile["pile"], (game, "back up", below)
        assert press(web, "ArrowUp") in [p["pile"] for p in rows[-2]], game


def test_single_key_shortcuts_are_in_the_rules_dialog_and_work(open_page: Any) -> None:
    web = open_page()
    web.new_game("balcony", "keys-2")
    # ? opens the rules, which list every key of the keymap.
    web.page.keyboard.press("?")
    web.testid("rules").wait_for(state="visible")
    keys = web.testid("rules-keys").inner_text()
    for key in ("U", "H", "D", "R", "N", "?", "Home, End", "Esc"):
        assert key in keys, key
    web.page.keyboard.press("Escape")
    web.testid("rules").wait_for(state="hidden")
    assert "U" in (web.testid("undo").get_attribute("aria-keyshortcuts") or "")
    # D deals; U undoes it; H asks for a hint and marks it.
    web.page.keyboard.press("d")
    web.wait_synced(1)
    web.page.keyboard.press("u")
    web.wait_synced(2)
    assert web.server_snapshot(web.client()["gameId"], web.token())["view"] == web.client()["view"]
    web.page.keyboard.press("h")
    web.wait("window.__client.hint !== null", timeout=15000)
    # R restarts the deal: a new game on the same seed, at its start.
    played_id = web.client()["gameId"]
    web.page.keyboard.press("r")
    web.wait(
        "([id]) => window.__client.gameId !== id && window.__client.version === 0", [played_id]
    )
    web.wait_synced(0)
    game_id = web.client()["gameId"]
    assert web.server_snapshot(game_id, web.token())["view"] == web.client()["view"]
    # Keys typed into a field are text, not shortcuts (a "d" would deal).
    web.open_menu()
    web.testid("seed-input").fill("")
    web.testid("seed-input").type("nudged")
    assert web.client()["version"] == 0 and web.client()["gameId"] == game_id
    # N deals a new game (the menu's game and seed).
    web.testid("seed-input").press("Escape")
    web.page.evaluate("document.activeElement.blur()")
    web.page.keyboard.press("n")
    web.wait("([id]) => window.__client.gameId !== id && window.__client.version === 0", [game_id])


# -- fast play ---------------------------------------------------------------------------------

#: Where the player aims: a pile's top card where it rests (not where an animation shows it
#: passing), else the pile's middle.
AIM = """
([address]) => {
  const pile = document.querySelector(`[data-testid="table"] [data-pile="${address}"]`);
  const box = pile.getBoundingClientRect();
  const card = pile.querySelector(':scope > .card.top');
  if (!card) return [box.left + box.width / 2, box.top + box.height / 2];
  return [box.left + card.offsetLeft + card.offsetWidth / 2,
          box.top + card.offsetTop + Math.min(card.offsetHeight / 2, 20)];
}
"""
#: A card in flight (the moves' animations; not the CSS ones of a hint's nudge).
MOVING = """document.getAnimations()
  .some((a) => !(a instanceof CSSAnimation) && a.playState === 'running')"""
#: Where to aim, and whether a card is in flight then: one round trip to the page per click.
AIM_MOVING = f"""([address]) => [...({AIM})([address]), {MOVING}]"""
#: The stock's top card is drawn face up (Colorado's stock is played card by card).
STOCK_CARD_SHOWN = """() => document.querySelector(
  '[data-testid="table"] [data-pile="stock"] > .stock-top') !== null"""
FAST_MOVES = 65
FAST_PAUSE_MS = 50


def planned_moves(name: str, seed: str, count: int) -> list[str]:
    """Card moves a player could make in a row (deals when there is none), from the rules."""
    game = new_game(name, seed)
    moves: list[str] = []
    last = None
    while game.status == "playing" and len(moves) < count:
        legal = [str(m) for m in game.legal_moves()]
        move = choose_card_move(legal, last) or ("deal" if "deal" in legal else None)
        if move is None:
            break
        game.play(move)
        moves.append(move)
        last = move
    return moves


@pytest.mark.parametrize("game", ["balcony", "colorado"])
def test_fast_play_lands_every_move_where_it_was_aimed(open_page: Any, game: str) -> None:
    """A real game played through the page with 50 ms between clicks, cards still flying:
    every move the server logs is the one aimed at."""
    web = open_page()
    web.testid("auto-finish").uncheck()  # it would play cards home by itself
    web.new_game(game, "fast-1")
    plan = planned_moves(game, "fast-1", FAST_MOVES)
    assert len(plan) == FAST_MOVES
    mouse = web.page.mouse
    in_flight = 0  # clicks made while a card was still moving
    for move in plan:
        for address in ["stock"] if move == "deal" else move.split(">"):
            if address == "stock" and move != "deal":
                # The stock's next card is the server's to reveal: a player picks it up once
                # it shows (clicked before, an empty stock takes no card: on a loaded machine
                # every later click then paired with the wrong one).
                web.wait(STOCK_CARD_SHOWN, timeout=30000)
            x, y, moving = web.page.evaluate(AIM_MOVING, [address])
            in_flight += moving
            mouse.click(x, y)
            web.page.wait_for_timeout(FAST_PAUSE_MS)
    # A bound, not a check: on a loaded machine the server answers the queued moves in turn.
    web.wait_synced(len(plan), timeout=30000)
    game_id = web.client()["gameId"]
    log = httpx.get(
        f"{web.base_url}/v1/games/{game_id}/log",
        headers={"Authorization": f"Bearer {web.token()}"},
        timeout=5,
    ).json()
    played = [entry["move"] for entry in log["moves"]]
    pairs = enumerate(zip(plan, played, strict=False))
    misplaced = [(i, aimed, got) for i, (aimed, got) in pairs if aimed != got]
    print(
        f"\n{game}: {len(plan)} moves at {FAST_PAUSE_MS} ms, {in_flight} clicks while a card"
        f" was moving, {len(misplaced)} misplaced"
    )
    assert in_flight > len(plan) // 4, "the clicks are meant to meet cards in flight"

    assert misplaced == [] and len(played) == len(plan), (misplaced, played[len(plan) :])
