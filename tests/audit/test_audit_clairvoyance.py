"""The ``clairvoyance`` signal: a game played knowing the stock order is flagged, one played
from the view alone is not; it needs the seed, and runs only when asked.

Colorado games of 16 moves (then resigned), at human think times, played through the
service on the real Redis: one chooses at every position a move best with the real stock
order (the audit's own clairvoyant valuation), the other the fair valuation's best with its
own samples.  Their moves are computed once per deal (pure).
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pytest
from audit_helpers import DAY, FakeClock, daily_game, human_steps, play, run_cli, signals

from server.audit import EXPORT_SIGNALS, WITH_CLAIRVOYANCE, audit, audit_leaderboard, audit_stored
from server.audit.clairvoyance import (
    CLAIRVOYANT,
    FAIR,
    MIN_POINTS,
    SCORE_THRESHOLD,
    clairvoyance,
    clairvoyant_values,
    examine,
    fair_values,
    has_hidden_stock,
)
from server.audit.cli import describe
from server.rules import PLAYING, Game, new_game
from server.service import GameService
from server.store import StoredGame


@pytest.fixture(scope="module")
def redis_mode() -> str:
    """Standalone only: the signal is a replay of the export with its seed, costing seconds
    of CPU a game, and the Redis paths it goes through (the stored-game and leaderboard
    audits) run on both standalone and cluster in the other audit modules."""
    return "standalone"


GAME = "colorado"
MOVES = 16
#: The searches take a few seconds per game on an idle core; a shared machine needs more.
slow = pytest.mark.timeout(400)
EVIDENCE_KEYS = {
    "positions_examined",
    "decision_points",
    "clairvoyant_agreements",
    "fair_agreements",
    "neither",
    "score",
    "threshold",
    "fair_baseline",
    "nodes",
    "clairvoyant_versions",
    "fair_versions",
}


@functools.cache
def moves_of(kind: str, seed: str) -> tuple[str, ...]:
    """The moves of the Colorado deal of ``seed`` chosen by the ``clairvoyant`` or the
    ``fair`` valuation."""
    game = new_game(GAME, seed)
    rng = random.Random(7)
    moves = []
    while game.status == PLAYING and len(moves) < MOVES:
        legal = game.legal_moves()
        if kind == CLAIRVOYANT:
            values: list[float] = list(clairvoyant_values(game, legal))
        else:
            values = fair_values(game, legal, rng)
        move = legal[max(range(len(legal)), key=lambda index: (values[index], -index))]
        game.play(move)
        moves.append(move)
    return tuple(moves)


#: A Colorado deal on which following the real stock shows (``BENCHMARKS.md``).
CASUAL_SEED = "clairvoyance-4"


async def casual_game(service: GameService, clock: FakeClock, kind: str) -> StoredGame:
    """A casual game of :data:`CASUAL_SEED`, resigned: its export has its seed."""
    player = (await service.create_player())["player_id"]
    snapshot = await service.create_game(player, GAME, CASUAL_SEED)
    moves = moves_of(kind, CASUAL_SEED)
    played: list[str] = []

    def choose(game: Game) -> str:
        played.append(moves[len(played)])
        return played[-1]

    steps = human_steps(random.Random(kind))
    return await play(service, clock, snapshot["id"], player, choose, steps, MOVES, resign=True)


async def ranked_game(service: GameService, clock: FakeClock, kind: str) -> StoredGame:
    played: list[str] = []

    def choose(game: Game) -> str:
        played.append(moves_of(kind, game.seed)[len(played)])
        return played[-1]

    return await daily_game(
        service,
        clock,
        GAME,
        choose,
        human_steps(random.Random(kind)),
        MOVES,
        resign=True,
    )


@slow
async def test_the_leaderboard_audit_passes_a_fair_ranked_game(
    service: GameService, clock: FakeClock
) -> None:
    fair = await ranked_game(service, clock, FAIR)
    [result] = await audit_leaderboard(service, GAME, DAY)
    assert result.verdict.game_id == fair.id
    assert result.verdict.passed, result.verdict.to_dict()


@slow
async def test_a_fair_game_has_decision_points_but_does_not_follow_the_stock(
    service: GameService, clock: FakeClock
) -> None:
    fair = await ranked_game(service, clock, FAIR)
    _, export = await service.stored_replay(fair.id, with_seed=True)
    found = examine(GAME, export["seed"], [(e["version"], e["move"]) for e in export["moves"]])
    assert len(found.points) >= MIN_POINTS
    assert found.count(CLAIRVOYANT) < len(found.points) / 2
    assert found.score < SCORE_THRESHOLD and not found.fires


@slow
async def test_only_when_asked_the_server_and_the_command_line_flag_a_clairvoyant_game(
    service: GameService, clock: FakeClock, tmp_path: Path
) -> None:
    """A player's ``POST /v1/audit`` never asks: its verdict would tell an open day's deal.
    The operator asks with ``clairvoyance=True`` or ``--clairvoyance``; both score the same
    moves the same (each examination costs seconds, so one game serves both)."""
    cheat = await casual_game(service, clock, CLAIRVOYANT)
    assert signals(await audit_stored(service, cheat.id)) == set()
    flagged = await audit_stored(service, cheat.id, clairvoyance=True)
    assert flagged.integrity == "pass" and signals(flagged) == {"clairvoyance"}
    [signal] = flagged.signals
    evidence = signal.evidence
    assert set(evidence) == EVIDENCE_KEYS
    assert evidence["score"] >= evidence["threshold"] == SCORE_THRESHOLD
    assert evidence["decision_points"] >= MIN_POINTS
    assert evidence["decision_points"] == (
        evidence["clairvoyant_agreements"] + evidence["fair_agreements"] + evidence["neither"]
    )
    assert evidence["clairvoyant_agreements"] == evidence["decision_points"]
    assert 0 < evidence["positions_examined"] <= MOVES
    assert signal.version == evidence["clairvoyant_versions"][0]
    assert all(1 <= version <= MOVES for version in evidence["clairvoyant_versions"])
    assert "decision points" in signal.detail
    text = describe(flagged)
    assert "signal: clairvoyance" in text and "decision points" in text

    export = await service.replay(cheat.id)  # a casual game over: its seed is in it
    assert export["seed"] == CASUAL_SEED
    path = tmp_path / "cheat.json"
    path.write_text(json.dumps(export))
    plain = await run_cli(str(path), "--json")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["passed"] is True
    asked = await run_cli(str(path), "--clairvoyance", "--json")
    assert asked.returncode == 2, asked.stderr  # only a fair-play signal fired
    verdict = json.loads(asked.stdout)
    assert verdict["integrity"] == "pass" and signals(verdict) == {"clairvoyance"}
    assert verdict["fair_play"][0]["evidence"] == evidence  # same moves, same score


async def test_never_without_a_seed_nor_without_a_hidden_stock(
    service: GameService, clock: FakeClock
) -> None:
    cheat = await ranked_game(service, clock, CLAIRVOYANT)
    export = await service.replay(cheat.id)  # the day is open: no seed
    assert export["seed"] is None
    verdict = audit(export, signals=WITH_CLAIRVOYANCE)
    assert verdict.integrity == "chain_only" and verdict.signals == []
    entries = sorted(export["moves"], key=lambda entry: entry["version"])
    assert clairvoyance(export, entries) is None
    assert not has_hidden_stock("gloucestershire")
    assert all(has_hidden_stock(name) for name in ("balcony", "colorado", "matrimony"))
    found = examine("gloucestershire", "any-seed", [(1, "tableau[0]>tableau[1]")])
    assert found.positions == 0 and found.points == []
    assert clairvoyance not in EXPORT_SIGNALS
