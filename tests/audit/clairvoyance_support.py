"""What the two ``clairvoyance`` test modules share: Colorado games played through the
service on the real Redis at human think times, one choosing at every position the move
best with the real stock order (the audit's own clairvoyant valuation), the other the fair
valuation's best with its own samples.  Their moves are computed once per deal and worker
(pure).  Two modules, so that parallel workers examine the fair and the clairvoyant games
at once: each examination costs seconds of CPU a position.
"""

from __future__ import annotations

import functools
import random

import pytest
from audit_helpers import FakeClock, daily_game, human_steps, play

from server.audit.clairvoyance import CLAIRVOYANT, clairvoyant_values, fair_values
from server.rules import PLAYING, Game, new_game
from server.service import GameService
from server.store import StoredGame

GAME = "colorado"
#: Moves of a fair game (then resigned).  On the test day's deal they make 3 decision
#: points, 2 of them clairvoyant agreements (more moves make no more within
#: ``MAX_POSITIONS``: 16 and 22 moves made the same 3).  Before the solver saw Colorado's
#: lost positions they made 7, 3 of them clairvoyant: with lost lines cut, more moves are
#: best with the real stock too, so fewer positions tell the modes apart
#: (``BENCHMARKS.md``, "Colorado: positions that are lost, seen at once").  Each examined
#: position costs about a second of CPU.
FAIR_MOVES = 9
#: Moves of a clairvoyant game: as few as still make the 6 decision points that fire
#: (``SCORE_THRESHOLD`` needs 6 of 6: ``0.3**5`` is only ``10^-2.6``): 6 of 6 on
#: :data:`CASUAL_SEED` and on the test day's deal.
CLAIRVOYANT_MOVES = 9
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


def moves_count(kind: str) -> int:
    return CLAIRVOYANT_MOVES if kind == CLAIRVOYANT else FAIR_MOVES


@functools.cache
def moves_of(kind: str, seed: str) -> tuple[str, ...]:
    """The moves of the Colorado deal of ``seed`` chosen by the ``clairvoyant`` or the
    ``fair`` valuation."""
    game = new_game(GAME, seed)
    rng = random.Random(7)
    moves = []
    while game.status == PLAYING and len(moves) < moves_count(kind):
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
    return await play(
        service, clock, snapshot["id"], player, choose, steps, moves_count(kind), resign=True
    )


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
        moves_count(kind),
        resign=True,
    )
