"""The ``clairvoyance`` signal stays silent on fair play: a ranked Colorado game played
from the view alone has decision points but does not follow the stock, and the leaderboard
audit passes it (``clairvoyance_support``; the flagging side is in
``test_audit_clairvoyance_flags.py``).
"""

from __future__ import annotations

import pytest
from audit_helpers import DAY, FakeClock
from clairvoyance_support import GAME, ranked_game, slow

from server.audit import audit_leaderboard
from server.audit.clairvoyance import FAIR, SCORE_THRESHOLD, examine
from server.service import GameService


@pytest.fixture(scope="module")
def redis_mode() -> str:
    """Standalone only: the signal is a replay of the export with its seed, costing seconds
    of CPU a game, and the Redis paths it goes through (the stored-game and leaderboard
    audits) run on both standalone and cluster in the other audit modules."""
    return "standalone"


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
    # Decision points, but no surprise for a fair player (see FAIR_MOVES: too few to judge).
    assert found.points
    assert found.score < 1 < SCORE_THRESHOLD and not found.fires
