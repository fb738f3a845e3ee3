"""Driving the web client the way a player does, and checking it against the server.

Moves are always made through the page (clicks on cards and piles, mouse drags, buttons),
never by calling the client's JavaScript; ``window.__client`` is only read.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "clients/web/node_modules/axe-core/axe.min.js"
ARTIFACTS = ROOT / "test-artifacts" / "web"
SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
#: Piles whose top card the tests may fan out to (never moved *to*).
SIDE_PILES = ("stock", "reserve", "waste", "bouquet")

# Everything the page shows of the table: each pile's data-card list (the stock: its count
# and its face-up top card), and the visible label ("7♠") of each card.
READ_TABLE = """
() => {
  const piles = {};
  for (const pile of document.querySelectorAll('[data-testid="table"] [data-pile]')) {
    const cards = [...pile.querySelectorAll(':scope > .card[data-card]')];
    piles[pile.dataset.pile] = {
      cards: cards.map((c) => c.dataset.card),
      // The corner index as drawn (CSS generated content from the card element).
      labels: cards.map((c) => [...c.querySelectorAll('.idx > span')]
        .map((s) => getComputedStyle(s, '::before').content.replace(/^"|"$/g, '')).join('')),
      count: pile.dataset.count === undefined ? null : Number(pile.dataset.count),
    };
  }
  return piles;
}
"""

READ_CLIENT = """
() => {
  const c = window.__client;
  return {version: c.version, view: c.view, status: c.status, score: c.score,
          legalMoves: c.legalMoves, connection: c.connection, gameId: c.gameId,
          game: c.game, role: c.role, pending: c.pending, message: c.message};
}
"""


def card_label(card: str) -> str:
    return card[:-1] + SUITS[card[-1]]


def pile_cards(view: dict[str, Any], address: str) -> list[str]:
    if address.startswith("foundation["):
        return list(view["foundations"][int(address[11:-1])])
    if address.startswith("tableau["):
        return list(view["tableau"][int(address[8:-1])])
    if address == "stock":
        top = view["stock"].get("top")
        return [top] if top else []
    return list(view[address])


def all_piles(view: dict[str, Any]) -> list[str]:
    piles = [f"foundation[{i}]" for i in range(len(view["foundations"]))]
    piles += [f"tableau[{i}]" for i in range(len(view["tableau"]))]
    return piles + [name for name in SIDE_PILES if name in view]


def choose_card_move(legal: list[str], last: str | None) -> str | None:
    """The move the tests play (deterministic, so the seeds give enough card moves): a card
    from a side pile (stock, reserve, waste, bouquet) unless the last move was one, else a
    card going home, else any card move but the last one undone."""
    cards = [m for m in legal if ">" in m]
    if last is not None and ">" in last:
        source, target = last.split(">")
        cards = [m for m in cards if m != f"{target}>{source}"]
    side = [m for m in cards if m.split(">")[0] in SIDE_PILES]
    if side and not (last is not None and last.split(">")[0] in SIDE_PILES):
        return side[0]
    home = [m for m in cards if ">foundation" in m and not m.startswith("foundation")]
    rest = [m for m in cards if not m.startswith("foundation")]
    choice = home or rest or cards
    return choice[0] if choice else None


class Web:
    """One browser page of the web client, and the server it talks to."""

    def __init__(self, page: Any, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.page_errors: list[str] = []
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))

    # -- reading -------------------------------------------------------------------

    def wait(self, expression: str, arg: Any = None, timeout: float = 5000) -> None:
        """Until ``expression`` is true.  Polled with ``page.evaluate``: the page's
        Content-Security-Policy forbids the in-page eval of ``wait_for_function``."""
        deadline = time.monotonic() + timeout / 1000
        pause = 10.0  # ms: short waits end soon; long ones (a catch-up) poll less often,
        # each poll being a round trip through the driver and the page (CPU on 2 cores)
        while not self.page.evaluate(expression, arg):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"not true within {timeout} ms: {expression}\nthe page: {self.summary()}"
                )
            self.page.wait_for_timeout(pause)
            pause = min(pause * 1.5, 100.0)

    def summary(self) -> dict[str, Any]:
        """What a failed wait reports: the client's state without the table."""
        client = self.client()
        view = client.pop("view")
        client["viewed"] = view is not None
        moves = client.pop("legalMoves")
        client["legalMoves"] = None if moves is None else len(moves)
        client["shown"] = self.page.evaluate(
            "() => document.querySelector('[data-testid=\"message\"]')?.innerText ?? null"
        )
        client["socket_closes"] = self.page.evaluate(
            "() => window.__wsControl ? window.__wsControl.closes : null"
        )
        client["now_ms"] = self.page.evaluate("() => Math.round(performance.now())")
        return client

    def client(self) -> dict[str, Any]:
        result: dict[str, Any] = self.page.evaluate(READ_CLIENT)
        return result

    def table(self) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = self.page.evaluate(READ_TABLE)
        return result

    def token(self) -> str | None:
        player = self.page.evaluate("JSON.parse(localStorage.getItem('patience.player'))")
        return None if player is None else str(player["token"])

    def testid(self, name: str) -> Any:
        return self.page.locator(f'[data-testid="{name}"]')

    def pile(self, address: str) -> Any:
        return self.page.locator(f'[data-testid="table"] [data-pile="{address}"]')

    def top_card(self, address: str) -> Any:
        return self.pile(address).locator(":scope > .card.top")

    # -- the server ------------------------------------------------------------------

    def server_snapshot(self, game_id: str, token: str | None) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = httpx.get(f"{self.base_url}/v1/games/{game_id}", headers=headers, timeout=5)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def rest_move(self, game_id: str, move: str, version: int) -> httpx.Response:
        return httpx.post(
            f"{self.base_url}/v1/games/{game_id}/moves",
            json={"move": move, "version": version},
            headers={"Authorization": f"Bearer {self.token()}"},
            timeout=5,
        )

    # -- waiting for the page ------------------------------------------------------------

    def wait_synced(
        self, version: int | None = None, owner: bool = True, timeout: float = 5000
    ) -> dict[str, Any]:
        """Until the page is online at ``version`` (or any), with no move in flight and, for
        an owner, the legal moves of that version (within ``timeout`` ms)."""
        self.wait(
            """([version, owner]) => {
                 const c = window.__client;
                 return c.connection === 'online' && c.pending === null && c.view !== null
                   && (version === null || c.version === version)
                   && (!owner || c.legalMoves !== null);
               }""",
            [version, owner],
            timeout,
        )
        return self.client()

    def check_agrees(self, token: str | None, touched: set[str] | None = None) -> dict[str, Any]:
        """The page (``window.__client`` and the drawn cards) equals the server's snapshot."""
        client = self.client()
        server = self.server_snapshot(client["gameId"], token)
        assert client["version"] == server["version"]
        assert client["view"] == server["view"]
        assert client["status"] == server["status"]
        assert client["score"] == server["score"]
        if token is not None and server["legal_moves"] is not None:
            assert sorted(client["legalMoves"]) == sorted(server["legal_moves"])
        table = self.table()
        view = server["view"]
        for address in all_piles(view):
            drawn = table[address]
            assert drawn["cards"] == pile_cards(view, address), address
            if address == "stock":
                assert drawn["count"] == view["stock"]["count"]
            if touched is None or address in touched:
                assert drawn["labels"] == [card_label(c) for c in drawn["cards"]], address
        assert self.testid("moves").inner_text() == str(server["version"])
        assert self.testid("score").inner_text() == str(server["score"])
        assert self.testid("status").inner_text() == server["status"]
        return server

    # -- playing through the page -------------------------------------------------------------

    def open_menu(self) -> None:
        """On a phone the game menu folds away behind the Menu button: open it."""
        if not self.testid("game-select").is_visible():
            self.testid("menu-toggle").click()
            self.testid("game-select").wait_for(state="visible")

    def start_game(self, game: str, seed: str) -> str:
        """Deal a new game of ``seed`` from the menu; until the page has it (at any version:
        auto-move may play at once); its id."""
        before = self.page.evaluate("window.__client.gameId")
        self.open_menu()
        self.testid("game-select").select_option(game)
        self.testid("seed-input").fill(seed)
        self.testid("new-game").click()
        self.wait(
            "([game, before]) => window.__client.game === game"
            " && window.__client.gameId !== null && window.__client.gameId !== before",
            [game, before],
        )
        return str(self.page.evaluate("window.__client.gameId"))

    def new_game(self, game: str, seed: str) -> dict[str, Any]:
        self.start_game(game, seed)
        return self.wait_synced(0)

    def settle(self) -> None:
        """Until no card is in flight (the page's move and deal animations are over): a
        player aims at where a card lands, not where it passes."""
        self.wait(
            "document.getAnimations().every((a) => a instanceof CSSAnimation"
            " || a.playState !== 'running')"
        )

    def click_move(self, move: str) -> None:
        """Click the source's top card, check the target lights up, click the target."""
        self.settle()
        source, target = move.split(">")
        self.top_card(source).click()
        self.page.wait_for_selector(
            f'[data-pile="{source}"].selected', state="attached", timeout=2000
        )
        self.page.wait_for_selector(
            f'[data-pile="{target}"].target', state="attached", timeout=2000
        )
        self.pile(target).click()

    def drag_move(self, move: str, expect_target: bool = True) -> None:
        """Drag the source's top card with the mouse (pointer events) and drop it on the target."""
        self.settle()
        source, target = move.split(">")
        self.top_card(source).scroll_into_view_if_needed()
        start = self.top_card(source).bounding_box()
        end = self.pile(target).bounding_box()
        assert start is not None and end is not None, move
        mouse = self.page.mouse
        mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 3)
        mouse.down()
        x, y = end["x"] + end["width"] / 2, end["y"] + min(end["height"] / 2, 40)
        mouse.move(x, y, steps=8)
        if expect_target:
            self.page.wait_for_selector(
                f'[data-pile="{target}"].target', state="attached", timeout=2000
            )
        mouse.up()

    def play(self, move: str, how: str) -> dict[str, Any]:
        """Make ``move`` through the page ("click", "drag", or a button for deal/redeal) and
        wait until the page has the new version; then the page and the server must agree."""
        before = self.client()
        assert before["legalMoves"] is not None and move in before["legalMoves"], move
        if move in ("deal", "redeal"):
            self.testid(move).click()
        elif how == "click":
            self.click_move(move)
        else:
            self.drag_move(move)
        self.wait_synced(before["version"] + 1)
        touched = set(move.split(">")) if ">" in move else None
        return self.check_agrees(self.token(), touched)

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.settle()
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def axe_violations(web: Web) -> list[dict[str, Any]]:
    """axe-core (npm) run in the page: its serious and critical violations."""
    if not web.page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated, not a <script>: the page's Content-Security-Policy allows no inline script.
        web.page.evaluate(AXE.read_text())
    result = web.page.evaluate(
        """async () => {
             const r = await axe.run(document, {resultTypes: ['violations']});
             return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
               .map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target)}));
           }"""
    )
    return list(result)
