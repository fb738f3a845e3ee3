"""Hints for casual games: the solver's fair mode on the player's own view.

:func:`hint` runs in the hint pool's worker thread (``server.limits.HintPool``): it reads
only the view (the player's knowledge), never the stock order, and stops within
:data:`HINT_SECONDS` (``BENCHMARKS.md``: its latency per game on one core).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from typing import Any

from server.solver import Advice, advise

#: Stock orders sampled per hint, and positions searched in each.
HINT_SAMPLES = 8
HINT_SAMPLE_NODES = 1_500
#: A hint stops sampling after this long (at least one sample is solved).
HINT_SECONDS = 0.5


def hint(
    name: str, view: Mapping[str, Any], game_id: str, version: int, seconds: float = HINT_SECONDS
) -> Advice:
    """Advice for the position ``view`` of game ``name`` within ``seconds``; the same
    position of the same game gets the same samples (the rng is seeded by the game id and
    version), so the same advice unless the time ran out first."""
    deadline = time.monotonic() + seconds
    return advise(
        name,
        view,
        random.Random(f"{game_id}:{version}"),
        samples=HINT_SAMPLES,
        sample_nodes=HINT_SAMPLE_NODES,
        out_of_time=lambda: time.monotonic() > deadline,
    )
