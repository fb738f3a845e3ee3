"""Helpers for the audit tests: a fake clock, playing games through the service, forging.

Imported by the test modules as ``from audit_helpers import ...`` (a unique name: the
other test folders have their own ``conftest`` modules).
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol import chain
from server import daily
from server.daily.selection import choose as choose_deal
from server.leaderboard import board_keys
from server.rules import Game, load_game, new_game
from server.service import GameService
from server.store import StoredGame
from server.testing import TEST_DAILY, choose_dailies

SECRET = "bd0251cabdeea56de0fc704502abba115ee02a8cdf9fb7c4e5397db09b74af4c"
#: 2026-03-14 10:00 UTC: every test game starts then, well inside one UTC day.
START_MS = int(dt.datetime(2026, 3, 14, 10, tzinfo=dt.UTC).timestamp() * 1000)
DAY = "2026-03-14"
#: Bound on any loop playing a game.
MAX_MOVES = 2_000


class FakeClock:
    """``service.clock``: Unix ms that move only when a test says so."""

    def __init__(self, now: int = START_MS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def human_steps(rng: random.Random) -> Callable[[], int]:
    """Think times of a person: 400-3000 ms, irregular."""
    return lambda: rng.randint(400, 3000)


def fixed_steps(ms: int) -> Callable[[], int]:
    return lambda: ms


def random_choice(rng: random.Random) -> Callable[[Game], str]:
    return lambda game: rng.choice(game.legal_moves())


def greedy_choice(rng: random.Random) -> Callable[[Game], str]:
    """A foundation move when there is one, else any legal move."""

    def choose(game: Game) -> str:
        legal = game.legal_moves()
        up = [move for move in legal if ">foundation" in move]
        return rng.choice(up or legal)

    return choose


async def play(
    service: GameService,
    clock: FakeClock,
    game_id: str,
    owner: str,
    choose: Callable[[Game], str],
    steps: Callable[[], int],
    max_moves: int,
    resign: bool = False,
) -> StoredGame:
    """Play ``choose``'s moves (at most ``max_moves``, then ``resign`` if still on)."""
    stored = await service.load(game_id)
    game = load_game(stored.state)
    version = stored.version
    for _ in range(min(max_moves, MAX_MOVES)):
        if game.status != "playing":
            break
        clock.advance(steps())
        reply, _, game = await service.play(game_id, owner, choose(game), version)
        version = reply["version"]
    if resign and game.status == "playing":
        clock.advance(steps())
        await service.play(game_id, owner, "resign", version)
    return await service.load(game_id)


async def casual_game(
    service: GameService,
    clock: FakeClock,
    name: str,
    seed: str,
    moves: int,
    steps: Callable[[], int],
    rng: random.Random,
    resign: bool = False,
) -> StoredGame:
    player = await service.create_player()
    snapshot = await service.create_game(player["player_id"], name, seed)
    return await play(
        service,
        clock,
        snapshot["id"],
        player["player_id"],
        random_choice(rng),
        steps,
        moves,
        resign,
    )


async def daily_game(
    service: GameService,
    clock: FakeClock,
    name: str,
    choose: Callable[[Game], str],
    steps: Callable[[], int],
    moves: int,
    resign: bool = False,
    player_id: str | None = None,
) -> StoredGame:
    """A ranked attempt at today's (the clock's) challenge of ``name``."""
    if player_id is None:
        player_id = (await service.create_player())["player_id"]
    await choose_dailies(service)
    snapshot = await service.start_daily(player_id, name)
    return await play(service, clock, snapshot["id"], player_id, choose, steps, moves, resign)


def winning_day(name: str, secret: str, first: dt.date, tries: int = 60) -> tuple[str, int]:
    """A day whose ``name`` challenge the greedy player (``random.Random(rng_seed)``)
    wins: ``(date, rng_seed)``, searched offline with the engine alone."""
    for offset in range(tries):
        date = (first + dt.timedelta(days=offset)).isoformat()
        chosen = choose_deal(secret.encode(), name, date, TEST_DAILY).k  # as choose_dailies does
        seed = daily.candidate_seed(secret.encode(), name, date, chosen)
        for rng_seed in range(3):
            game, choose = new_game(name, seed), greedy_choice(random.Random(rng_seed))
            for _ in range(MAX_MOVES):
                if game.status != "playing":
                    break
                game.play(choose(game))
            if game.status == "won":
                return date, rng_seed
    raise AssertionError(f"no winnable {name} day found in {tries} days")


def day_start_ms(date: str) -> int:
    return daily.opens_ms(date) + 10 * 3600 * 1000


def rechain(export: dict[str, Any]) -> dict[str, Any]:
    """``export`` with every link and the head recomputed, as a forger able to rewrite
    the whole export would (so a test isolates the other checks)."""
    forged = copy.deepcopy(export)
    link = chain.genesis(forged["game_id"], forged["game"], forged["deal_hash"])
    for entry in sorted(forged["moves"], key=lambda entry: entry["version"]):
        link = chain.next_link(
            link, entry["version"], entry["move"], entry["server_time"], entry["state_hash"]
        )
        entry["hash"] = link
    forged["chain_head"] = link
    return forged


def checks(verdict: Any) -> set[str]:
    """The checks a verdict (object or dict) found something by."""
    findings = verdict["findings"] if isinstance(verdict, dict) else verdict.findings
    return {f["check"] if isinstance(f, dict) else f.check for f in findings}


def findings_of(verdict: Any, check: str) -> list[Any]:
    return [finding for finding in verdict.findings if finding.check == check]


def signals(verdict: Any) -> set[str]:
    """The fair-play signals a verdict (object or dict) raised."""
    if isinstance(verdict, dict):
        return {signal["name"] for signal in verdict["fair_play"]}
    return {signal.name for signal in verdict.signals}


def signals_of(verdict: Any, name: str) -> list[Any]:
    return [signal for signal in verdict.signals if signal.name == name]


async def read_entry(redis: Any, game: str, date: str, player_id: str) -> dict[str, Any]:
    """A leaderboard entry as stored (its JSON in the board's entries hash)."""
    _, entries = board_keys(game, date)
    entry: dict[str, Any] = json.loads(await redis.hget(entries, player_id))
    return entry


async def write_entry(redis: Any, game: str, date: str, entry: dict[str, Any]) -> None:
    """Overwrite a leaderboard entry in Redis (a forgery)."""
    _, entries = board_keys(game, date)
    await redis.hset(entries, entry["player_id"], json.dumps(entry))


ROOT = Path(__file__).resolve().parents[2]
#: Bound on one run of the command, in seconds.
RUN_TIMEOUT = 120


async def run_cli(*args: str, cluster: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m server.audit ARGS`` (``--redis-cluster`` too when ``cluster``)."""
    env = {
        key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "REDIS_CLUSTER")
    }
    flags = ["--redis-cluster"] if cluster else []
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "server.audit", *args, *flags],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
