"""Web platform basics: CORS for allowed origins, security headers on the web client's
page and files and on API answers, and idle anonymous player records expiring."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from server.app import WEB_ROOT, create_app
from server.config import Settings
from server.store import RANKED_PLAYER_TTL
from server.testing import TEST_DAILY, UNLIMITED, dailies_chosen, serve_app

ALLOWED = "https://cards.example"
IDLE_TTL = 1000
SECRET = "238df37d8ae1c669811383ed0fca62f87527119bce6fe84a022931bb9ba9a774"


@pytest.fixture
async def http(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        redis_url=redis_url,
        secret=SECRET,
        cors_origins=(ALLOWED,),
        player_idle_ttl=IDLE_TTL,
        ranked_min_account_age=0,
        limits=UNLIMITED,
        daily=TEST_DAILY,
    )
    app = create_app(settings)
    async with (
        serve_app(app) as port,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client,
    ):
        await dailies_chosen(app)
        yield client


def policy(response: httpx.Response) -> dict[str, str]:
    """The Content-Security-Policy's directives: name -> sources."""
    text = response.headers["content-security-policy"]
    return dict((part.strip().split(" ", 1) + [""])[:2] for part in text.split(";"))


async def test_preflight_from_an_allowed_origin_names_methods_and_headers(http) -> None:
    response = await http.options(
        "/v1/games",
        headers={
            "Origin": ALLOWED,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == ALLOWED
    methods = {m.strip() for m in response.headers["access-control-allow-methods"].split(",")}
    assert {"GET", "POST"} <= methods
    allowed = {
        h.strip().lower() for h in response.headers["access-control-allow-headers"].split(",")
    }
    assert {"authorization", "content-type"} <= allowed


async def test_cross_origin_calls_get_the_origin_back_only_if_allowed(http) -> None:
    response = await http.post("/v1/players", headers={"Origin": ALLOWED})
    assert response.status_code == 201
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert "x-request-id" in response.headers["access-control-expose-headers"].lower()

    other = "https://evil.example"
    response = await http.post("/v1/players", headers={"Origin": other})
    assert "access-control-allow-origin" not in response.headers
    preflight = await http.options(
        "/v1/games", headers={"Origin": other, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers


async def test_no_origin_is_allowed_by_default(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, secret=SECRET, limits=UNLIMITED)
    async with (
        serve_app(create_app(settings)) as port,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
    ):
        response = await client.options(
            "/v1/games", headers={"Origin": ALLOWED, "Access-Control-Request-Method": "GET"}
        )
        assert response.status_code == 400
        assert "access-control-allow-origin" not in response.headers


@pytest.mark.parametrize("path", ["/", "/static/main.mjs", "/static/style.css"])
async def test_the_web_client_is_served_with_security_headers(http, path: str) -> None:
    response = await http.get(path)
    assert response.status_code == 200, path
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    directives = policy(response)
    assert directives["frame-ancestors"] == "'none'"
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "style-src"):
        assert directives[name] == "'self'", (name, directives)
        assert "unsafe" not in directives[name]
    assert directives["connect-src"] == "'self'"  # the page's WebSocket and REST calls


async def test_api_answers_get_nosniff_and_a_policy_that_allows_nothing(http) -> None:
    for response in (await http.post("/v1/players"), await http.get("/v1/games/nope")):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert policy(response)["default-src"] == "'none'"


class InlineFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.inline.append("<script> without src")
        if tag == "style":
            self.inline.append("<style>")
        self.inline += [f"{tag} {name}=" for name in names if name == "style"]
        self.inline += [f"{tag} {name}=" for name in names if re.fullmatch(r"on\w+", name)]


def test_the_page_has_no_inline_script_or_style() -> None:
    finder = InlineFinder()
    finder.feed((Path(WEB_ROOT) / "index.html").read_text(encoding="utf-8"))
    assert finder.inline == []


async def test_player_records_expire_when_idle_unless_ranked(http, redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    try:
        player = (await http.post("/v1/players")).json()
        key = f"player:{{{player['player_id']}}}"
        assert 0 < await redis.ttl(key) <= IDLE_TTL
        await redis.expire(key, 10)  # nearly idle for the whole time
        headers = {"Authorization": f"Bearer {player['token']}"}
        assert (await http.post("/v1/games", json={"game": "colorado"}, headers=headers)).is_success
        assert IDLE_TTL - 5 <= await redis.ttl(key) <= IDLE_TTL  # a new game is activity
        started = await http.post("/v1/daily/colorado", headers=headers)
        assert started.status_code == 200, started.text
        # A ranked attempt keeps the player as long as the game and its leaderboard.
        assert await redis.ttl(key) > RANKED_PLAYER_TTL - 10
        assert (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).is_success
        assert await redis.ttl(key) > RANKED_PLAYER_TTL - 10  # never shortened
    finally:
        await redis.aclose()
