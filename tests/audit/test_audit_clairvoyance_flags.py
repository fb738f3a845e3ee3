"""The ``clairvoyance`` signal: a game played knowing the stock order is flagged; it needs
the seed, and runs only when asked (``clairvoyance_support``; fair play is in
``test_audit_clairvoyance.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_helpers import FakeClock, run_cli, signals
from clairvoyance_support import (
    CASUAL_SEED,
    CLAIRVOYANT_MOVES,
    EVIDENCE_KEYS,
    casual_game,
    ranked_game,
    slow,
)

from server.audit import EXPORT_SIGNALS, WITH_CLAIRVOYANCE, audit, audit_stored
from server.audit.clairvoyance import (
    CLAIRVOYANT,
    MIN_POINTS,
    SCORE_THRESHOLD,
    clairvoyance,
    examine,
    has_hidden_stock,
    is_examined,
)
from server.audit.cli import describe
from server.service import GameService


@pytest.fixture(scope="module")
def redis_mode() -> str:
    """Standalone only: the signal is a replay of the export with its seed, costing seconds
    of CPU a game, and the Redis paths it goes through (the stored-game and leaderboard
    audits) run on both standalone and cluster in the other audit modules."""
    return "standalone"


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
    assert 0 < evidence["positions_examined"] <= CLAIRVOYANT_MOVES
    assert signal.version == evidence["clairvoyant_versions"][0]
    assert all(1 <= version <= CLAIRVOYANT_MOVES for version in evidence["clairvoyant_versions"])
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
    # Matrimony's stock is hidden, but the signal is measured to accuse honest players there.
    assert not is_examined("matrimony") and not is_examined("gloucestershire")
    assert all(is_examined(name) for name in ("balcony", "colorado", "empress_of_italy"))
    found = examine("matrimony", "luck-matrimony-22", [(1, "tableau[0]>foundation[1]")])
    assert found.positions == 0 and found.points == []
    assert clairvoyance not in EXPORT_SIGNALS
