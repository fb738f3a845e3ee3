"""Honest games pass: every game, casual and ranked, ended every way, at human speed."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

import pytest
from audit_helpers import (
    SECRET,
    FakeClock,
    casual_game,
    checks,
    daily_game,
    day_start_ms,
    greedy_choice,
    human_steps,
    random_choice,
    winning_day,
)

from server import daily
from server.audit import audit, audit_stored
from server.rules import GAME_NAMES, load_game
from server.service import REPLAY_FORMAT, GameService

#: Moves each casual game is given (fewer when it ends first), per game.
MOVES = dict(zip(GAME_NAMES, (150, 120, 60, 90, 40), strict=True))


def test_the_audit_reads_the_format_the_service_writes() -> None:
    from server.audit import FORMAT

    assert FORMAT == REPLAY_FORMAT


@pytest.mark.parametrize("name", GAME_NAMES)
@pytest.mark.parametrize("resign", [False, True], ids=["played", "resigned"])
async def test_an_honest_casual_game_passes(
    service: GameService, clock: FakeClock, name: str, resign: bool
) -> None:
    rng = random.Random(f"{name}-{resign}")
    stored = await casual_game(
        service, clock, name, f"seed-{name}", MOVES[name], human_steps(rng), rng, resign
    )
    assert stored.moves >= min(MOVES[name], 8) or stored.status != "playing"

    export = await service.replay(stored.id, with_seed=True)
    verdict = audit(export)
    assert verdict.passed, verdict.findings
    assert verdict.integrity == "pass" and verdict.signals == []
    assert (verdict.game_id, verdict.game, verdict.moves) == (stored.id, name, stored.moves)
    assert verdict.replayed_moves == stored.moves
    assert (verdict.replayed_status, verdict.replayed_score) == (stored.status, stored.score)
    assert verdict.replayed_state_hash == load_game(stored.state).state_hash()

    by_id = await audit_stored(service, stored.id)
    assert by_id.passed, by_id.findings
    assert by_id.to_dict() == verdict.to_dict()


async def test_a_casual_game_in_play_has_no_seed_so_only_its_chain_is_checked(
    service: GameService, clock: FakeClock
) -> None:
    rng = random.Random(7)
    stored = await casual_game(service, clock, "colorado", "in-play", 30, human_steps(rng), rng)
    assert stored.status == "playing"
    public = await service.replay(stored.id)
    assert public["seed"] is None

    verdict = audit(public)
    assert not verdict.passed
    assert verdict.integrity == "chain_only"
    assert checks(verdict) == {"seed_unavailable"}
    assert verdict.replayed_status is None

    assert (await audit_stored(service, stored.id)).passed


async def test_an_honest_game_with_no_moves_passes(service: GameService) -> None:
    player = await service.create_player()
    snapshot = await service.create_game(player["player_id"], "balcony", "zero")
    verdict = await audit_stored(service, snapshot["id"])
    assert verdict.passed, verdict.findings
    assert (verdict.moves, verdict.replayed_moves) == (0, 0)


async def ranked_and_checked(service: GameService, clock: FakeClock, stored) -> None:  # type: ignore[no-untyped-def]
    """The ranked game passes by id, and, once its day has closed, from its public export
    held to its public leaderboard entry."""
    entry = await service.leaderboards.entry(stored.game, stored.daily, stored.owner)
    assert entry is not None and entry.game_id == stored.id
    verdict = await audit_stored(service, stored.id)
    assert verdict.passed, verdict.findings

    while_open = await service.replay(stored.id)
    assert while_open["seed"] is None
    assert checks(audit(while_open, dataclasses.asdict(entry))) == {"seed_unavailable"}

    clock.now = daily.opens_ms(stored.daily) + daily.DAY_MS  # the day closes
    export = await service.replay(stored.id)
    assert export["seed"] == await service.chosen_daily_seed(stored.game, stored.daily)
    board = await service.leaderboard(stored.game, stored.daily, 10)
    public_entry = next(e for e in board["entries"] if e["game_id"] == stored.id)
    verdict = audit(export, public_entry)
    assert verdict.passed, verdict.findings
    assert verdict.replayed_status == stored.status
    assert verdict.replayed_score == public_entry["score"]


async def test_a_resigned_daily_game_passes(service: GameService, clock: FakeClock) -> None:
    rng = random.Random(11)
    stored = await daily_game(
        service,
        clock,
        "empress_of_italy",
        random_choice(rng),
        human_steps(rng),
        60,
        resign=True,
    )
    assert stored.status == "resigned" and stored.moves == 61
    await ranked_and_checked(service, clock, stored)


async def test_a_stuck_daily_game_passes(service: GameService, clock: FakeClock) -> None:
    rng = random.Random(12)
    stored = await daily_game(
        service, clock, "colorado", random_choice(rng), human_steps(rng), 1_000
    )
    assert stored.status == "stuck"
    await ranked_and_checked(service, clock, stored)


async def test_a_won_daily_game_passes(service: GameService, clock: FakeClock) -> None:
    date, rng_seed = winning_day("balcony", SECRET, dt.date(2026, 3, 14))
    clock.now = day_start_ms(date)
    stored = await daily_game(
        service,
        clock,
        "balcony",
        greedy_choice(random.Random(rng_seed)),
        human_steps(random.Random(5)),
        2_000,
    )
    assert stored.status == "won" and stored.daily == date
    await ranked_and_checked(service, clock, stored)
