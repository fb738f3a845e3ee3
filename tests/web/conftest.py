"""Fixtures for the browser tests of the web client (``clients/web``).

A real ``redis-server`` (the session's, from ``tests/conftest.py``, on a database of its own)
and a real ``python -m server`` child process serve the page; Playwright for Python drives
Debian's Chromium (``/usr/bin/chromium``, never a downloaded browser) headless. A missing
browser, npm package or server is a test failure, never a skip. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
import redis
from log_check import unwatch, watch
from web_helpers import ARTIFACTS, Web

from server.config import DailySelection
from server.daily.selection import choice_key, choose
from server.testing import free_port, preload_dailies

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Less work beside the page's own on a loaded machine.
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--mute-audio",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
]
#: The TypeScript SDK's browser build, which the web client is built on.
SDK_MODULE = ROOT / "clients/ts/dist/browser/index.js"
SECRET = "9e3369b2fe3cf2eaa5e6ffd8e07e9148fa572e39dc2fbf9e17869c835a56ecd5"
#: Environment variables the server reads; kept out of its child process.
SERVER_ENV = (
    "HOST",
    "PORT",
    "REDIS_URL",
    "SERVER_SECRET",
    "WORKERS",
    "LOG_LEVEL",
    "RANKED_MIN_ACCOUNT_AGE",
    "REDIS_CLUSTER",
    "DURABILITY",
)
SERVER_START_TIMEOUT = 20.0
#: Playwright's default bound on every wait, in milliseconds.
WAIT_MS = 5000

# Test-only control of the page's WebSockets, installed before the page's scripts run: the
# tests can close the live sockets and refuse new ones (as a network that went away would),
# right away or just after the next frame the page sends, without any hook in the client.
WS_CONTROL = """
(() => {
  const Native = window.WebSocket;
  const control = { allow: true, sockets: [], sent: [], closes: [], cutAfterSend: false };
  window.__wsControl = control;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      // Refused: the same origin (the page's CSP allows no other), a path with no socket.
      super(control.allow ? url : String(url).replace('/v2/ws', '/v2/ws-refused'), protocols);
      control.sockets.push(this);
      // Why a socket closed, and when (a failed wait reports it).
      this.addEventListener('close', (event) => control.closes.push(
        [event.code, event.reason, Math.round(performance.now())]));
    }
    send(data) {
      super.send(data);
      control.sent.push(Array.from(new Uint8Array(data)));
      if (control.cutAfterSend) {
        // The frame goes out, then the network goes: its reply is lost.
        control.cutAfterSend = false;
        control.cut();
      }
    }
  };
  control.cut = () => {
    control.allow = false;
    for (const socket of control.sockets) socket.close();
  };
  control.restore = () => { control.allow = true; };
})();
"""


@pytest.fixture(scope="session")
def web_redis_url(redis_server_url: str) -> Iterator[str]:
    """The session's Redis, on the database after the other tests' (which they flush),
    flushed before and after; yesterday's, today's and tomorrow's dailies stored in it."""
    parts = urlsplit(redis_server_url)
    url = urlunsplit(parts._replace(path=f"/{int(parts.path.strip('/') or 0) + 1}"))
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        client.flushdb()
        store_yesterdays_choice(client, "balcony")
        # Chosen here, as the servers' background selection would (same function, same
        # selection as their flags): a starting server finds them and forks no selection
        # process, which on a loaded machine competed with its start-up (/healthz late).
        asyncio.run(preload_dailies(url, SECRET, selection=WEB_DAILY))
        yield url
        client.flushdb()
    finally:
        client.close()


@pytest.fixture(scope="session")
def base_url(web_redis_url: str) -> Iterator[str]:
    """``python -m server`` on a free loopback port, serving the web client."""
    # Every page of every test makes players from one address: no rate limits.
    with serve(web_redis_url, "web-server.log", ["--rate-limits", "off"]) as url:
        yield url


@pytest.fixture
def limited_base_url(web_redis_url: str) -> Iterator[str]:
    """A second server with its rate limits on and one hint a minute per player."""
    with serve(web_redis_url, "web-server-limited.log", ["--hints-per-minute", "1"]) as url:
        yield url


#: The selection of the web tests' servers (``serve``'s flags say the same).
WEB_DAILY = DailySelection(candidate_nodes=3000, candidates=2, seconds=5.0)


def store_yesterdays_choice(client: redis.Redis, game: str) -> None:
    """Yesterday's choice of ``game``, as a server running then would have stored it (a
    server chooses today's and tomorrow's only, and answers a past day without a choice
    ``404 no_daily``): the board and par line of yesterday have a deal to show."""
    yesterday = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
    choice = choose(SECRET.encode(), game, yesterday, WEB_DAILY)
    client.hset(choice_key(game, yesterday), mapping=choice.to_redis())


@contextlib.contextmanager
def serve(
    redis_url: str, log_name: str, extra: list[str], wait_dailies: bool = True
) -> Iterator[str]:
    """Run ``python -m server`` with ``extra`` arguments until the block ends (once today's
    dailies are chosen, unless not ``wait_dailies``)."""
    assert SDK_MODULE.is_file(), (
        f"{SDK_MODULE.relative_to(ROOT)} is missing: run scripts/install "
        "(it builds the SDK in clients/ts)"
    )
    port = free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # Each parallel test worker has its own servers, so its own logs.
    log_path = ARTIFACTS / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{log_name}"
    env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
    args = ["--host", "127.0.0.1", "--port", str(port), "--redis-url", redis_url]
    args += ["--secret", SECRET, "--log-level", "warning", "--ranked-min-account-age", "0"]
    # Today's deals are chosen in the background before a daily answers: a small search.
    args += ["--daily-candidate-nodes", "3000", "--daily-candidates", "2"]
    args += ["--daily-selection-seconds", "5", *extra]  # a later flag in extra wins
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "server", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"python -m server exited: {log_path.read_text(errors='replace')}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"python -m server did not answer /healthz in {SERVER_START_TIMEOUT}s")
            time.sleep(0.05)
        if wait_dailies:
            wait_for_dailies(url, deadline + DAILY_READY_TIMEOUT)

        def read_log() -> str:
            return log_path.read_text(errors="replace")

        watch(read_log, lasting=True)  # each test reads what its own time added
        try:
            yield url
        finally:
            unwatch(read_log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


DAILY_READY_TIMEOUT = 60.0
DAILY_GAMES = ("empress_of_italy", "colorado", "gloucestershire", "matrimony", "balcony")


def wait_for_dailies(url: str, deadline: float) -> None:
    """Until every game's daily of today is chosen (``503 daily_not_ready`` before)."""
    waiting = list(DAILY_GAMES)
    while waiting:
        status = httpx.get(f"{url}/v1/daily/{waiting[0]}", timeout=5).status_code
        if status == 200:
            waiting.pop(0)
            continue
        assert status == 503, f"GET /v1/daily/{waiting[0]} answered {status}"
        if time.monotonic() > deadline:
            pytest.fail(f"today's daily of {waiting[0]} was not chosen in time")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium under Playwright; its absence fails the test.  One per
    module, not per session: Playwright's synchronous API keeps an event loop running in
    the thread while it lives, and the asyncio tests that a parallel worker runs after a
    web module need the thread without one."""
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"{CHROMIUM} is missing: the web tests need Debian's chromium package "
            "(apt-get install chromium; .ci/run installs it)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - a broken install
        pytest.fail("playwright is not installed: run scripts/install (the dev extra has it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def open_page(browser: Any, base_url: str) -> Iterator[Any]:
    """``open_page(path="/", **context_options)`` -> a :class:`Web` on a page of its own
    (a new browser context: its own localStorage, so its own player)."""
    contexts: list[Any] = []
    webs: list[Web] = []

    def open_(path: str = "/", server: str | None = None, **options: Any) -> Web:
        options.setdefault("viewport", {"width": 1280, "height": 900})
        context = browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        context.add_init_script(WS_CONTROL)
        contexts.append(context)
        page = context.new_page()
        web = Web(page, server or base_url)
        webs.append(web)
        page.goto(web.base_url + path)
        web.wait("window.__client && window.__client.connection === 'online'")
        return web

    try:
        yield open_
        for web in webs:
            assert not web.page_errors, f"uncaught errors in the page: {web.page_errors}"
    finally:
        for context in contexts:
            with contextlib.suppress(Exception):
                context.close()
