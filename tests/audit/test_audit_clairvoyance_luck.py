"""The stock-luck measure (``server/audit/stock_luck.py``): calibrated on fair play whatever
the strategy, blind to the hidden stock order, silent where nothing is hidden.  Pure and
cheap (no solver search, no Redis); its power against cheats is measured by
``benchmarks/stock_luck.py``."""

from __future__ import annotations

import random
import statistics

import pytest

from server.audit.stock_luck import Z_THRESHOLD, fit, stock_luck
from server.rules import PLAYING, RESIGN, new_game


def heuristic_line(name: str, seed: str, rng: random.Random, limit: int) -> list[str]:
    """A player who sees only the table: a foundation move when there is one, else a random
    move."""
    game = new_game(name, seed)
    moves: list[str] = []
    while game.status == PLAYING and len(moves) < limit:
        legal = [move for move in game.legal_moves() if move != RESIGN]
        home = [move for move in legal if ">foundation" in move]
        move = rng.choice(home or legal)
        game.play(move)
        moves.append(move)
    return moves


@pytest.mark.parametrize(("name", "games", "limit"), [("balcony", 3, 100)])
def test_fair_play_is_not_lucky(name: str, games: int, limit: int) -> None:
    ranks = []
    for index in range(games):
        seed = f"luck-test-{index}"
        line = heuristic_line(name, seed, random.Random(index), limit)
        found = stock_luck(name, seed, list(enumerate(line, 1)))
        assert found.reveals, "a deal reveals cards"
        assert abs(found.z) < Z_THRESHOLD and not found.fires
        ranks += [reveal.rank for reveal in found.reveals]
    # The card that came ranks as any hidden card would: mid-rank 1/2 on average.
    assert 0.4 < statistics.mean(ranks) < 0.6


def test_the_fit_does_not_see_the_hidden_stock() -> None:
    """Colorado's foundation cascade can take the stock's face-up top: the fit stops there,
    so reordering the face-down cards under it never changes it."""
    for index in range(5):
        game = new_game("colorado", f"luck-blind-{index}")
        for _ in range(3):
            reordered = game.copy()
            hidden = reordered.stock[:-1]
            reordered.stock[:-1] = hidden[::-1]
            assert fit(game.copy()) == fit(reordered)
            game.play(game.legal_moves()[0])


def test_nothing_is_revealed_without_a_hidden_stock_or_after_a_redeal() -> None:
    line = heuristic_line("gloucestershire", "luck-g", random.Random(1), 30)
    assert stock_luck("gloucestershire", "luck-g", list(enumerate(line, 1))).reveals == []
    game = new_game("matrimony", "luck-m")
    deals = 0
    while "deal" in game.legal_moves():
        game.play("deal")
        deals += 1
    assert "redeal" in game.legal_moves()
    line = ["deal"] * deals + ["redeal", "deal"]
    assert len(stock_luck("matrimony", "luck-m", list(enumerate(line, 1))).reveals) == deals
