"""Fair mode: advice from the player's view, blind to the stock order."""

from __future__ import annotations

import random

import pytest
from solver_testkit import colorado_spades_across, late_position

from server.rules import GAME_NAMES, new_game
from server.solver import advise, game_from_view
from server.solver.fair import WIN_SLACK, hidden_cards

STOCK_GAMES = ("balcony", "colorado", "empress_of_italy", "matrimony")


def restocked(name: str, seed: str, rng: random.Random):
    """The deal of ``seed`` and a twin with the same visible cards and its face-down stock
    permuted (Colorado's face-up top card stays on top)."""
    game = new_game(name, seed)
    twin = game.copy()
    hidden = twin.stock[:-1] if twin.stock_face_up else twin.stock[:]
    while hidden == (twin.stock[:-1] if twin.stock_face_up else twin.stock):
        rng.shuffle(hidden)
    twin.stock[: len(hidden)] = hidden
    twin._refresh_status()
    assert twin.view() == game.view() and twin.table() != game.table()
    return game, twin


@pytest.mark.parametrize("name", STOCK_GAMES)
def test_advice_does_not_depend_on_the_stock_order(name: str) -> None:
    rng = random.Random(f"blind-{name}")
    for deal in range(3):
        game, twin = restocked(name, f"blind-{deal}", rng)
        first = advise(name, game.view(), random.Random(7), samples=4, sample_nodes=500)
        second = advise(name, twin.view(), random.Random(7), samples=4, sample_nodes=500)
        assert first == second
        assert first.move is not None and game.is_legal(first.move)
        assert first.samples == 4 and 0.0 <= first.win_chance <= 1.0


@pytest.mark.parametrize("name", GAME_NAMES)
def test_game_from_view_shows_the_same_view(name: str) -> None:
    game = new_game(name, "view-1")
    game.play(game.legal_moves()[0])
    view = game.view()
    hidden = hidden_cards(name, view)
    stock = game.stock if "stock" in game.single_piles else []
    face_down = stock[:-1] if game.stock_face_up else stock
    assert sorted(c % 52 for c in hidden) == sorted(c % 52 for c in face_down)
    rebuilt = game_from_view(name, view, hidden)
    assert rebuilt.view() == view
    assert sorted(c for pile in rebuilt.piles for c in pile) == list(range(game.total_cards))
    assert rebuilt.legal_moves() == game.legal_moves()


def test_game_from_view_rejects_a_wrong_stock() -> None:
    game = new_game("balcony", "view-2")
    with pytest.raises(ValueError):
        game_from_view("balcony", game.view(), [])


@pytest.mark.parametrize("name", GAME_NAMES)
def test_advice_finds_the_win_near_the_end(name: str) -> None:
    """A few cards from a win (no hidden card left), the advice is a move of a winning
    line and the chance is 1."""
    game = late_position(name, "advice", 3, random.Random(name))
    advice = advise(name, game.view(), random.Random(1), samples=3, sample_nodes=5_000)
    assert advice.win_chance == 1.0 and advice.wins == advice.samples == 3
    assert advice.move is not None
    game.play(advice.move)
    assert advice.best_score == game.total_cards


def test_advice_stops_when_out_of_time_after_one_sample() -> None:
    view = new_game("colorado", "late-advice").view()
    advice = advise("colorado", view, random.Random(1), samples=50, out_of_time=lambda: True)
    assert advice.samples == 1 and advice.move is not None


def test_advice_on_a_finished_game() -> None:
    """A won position, and a stuck one (Gloucestershire deal t7 has no legal move)."""
    won = late_position("balcony", "done", 0, random.Random(0))
    advice = advise("balcony", won.view(), random.Random(1))
    assert advice.move is None and advice.samples == 0 and advice.win_chance == 1.0
    stuck = new_game("gloucestershire", "t7")
    assert stuck.status == "stuck"
    advice = advise("gloucestershire", stuck.view(), random.Random(1))
    assert advice.move is None and advice.win_chance == 0.0


def test_advice_on_a_lost_position_puts_a_card_up() -> None:
    """A Colorado position the model proves lost offers no move to try: every legal move
    is judged instead, none wins, and the advice puts a card on a foundation."""
    game = colorado_spades_across()
    advice = advise("colorado", game.view(), random.Random(1), samples=2)
    assert advice.win_chance == 0.0 and set(advice.votes) == set(game.legal_moves())
    assert advice.move is not None and ">foundation" in advice.move


@pytest.mark.parametrize("name", ("colorado", "balcony"))
def test_every_candidate_move_is_judged_in_every_sample(name: str) -> None:
    """Per-move advice: every distinct move the model tries is played in each sample and
    a move won in most samples, give or take ``WIN_SLACK``, is recommended (one sample's
    line no longer decides)."""
    game = new_game(name, "per-move-1")
    advice = advise(name, game.view(), random.Random(3), samples=3, sample_nodes=600)
    assert advice.samples == 3 and len(advice.votes) > 1
    assert set(advice.votes) <= set(game.legal_moves())
    assert advice.move is not None and advice.wins == advice.votes[advice.move][0]
    most = max(wins for wins, _ in advice.votes.values())
    assert advice.wins >= most - WIN_SLACK


@pytest.mark.parametrize("seed", ("stats-4", "stats-5", "stats-6", "stats-8"))
def test_hint_does_not_deal_while_a_card_can_go_to_a_foundation(seed: str) -> None:
    """Balcony openings with a tableau card for a foundation: every sample's search knows
    its own stock, so dealing looks as good as anything there; the hint plays the card."""
    game = new_game("balcony", seed)
    to_foundation = [m for m in game.legal_moves() if ">foundation" in m]
    assert to_foundation
    advice = advise("balcony", game.view(), random.Random(f"{seed}:0"))
    assert advice.move in to_foundation


def test_a_player_taking_every_hint_wins_a_winnable_balcony_deal() -> None:
    """Balcony ``stats-8`` (won with perfect information): the hints alone win it; before
    the hint preferred sure progress it dealt early and ended on 10 of 52 cards."""
    game = new_game("balcony", "stats-8")
    for k in range(200):
        if game.is_over:
            break
        advice = advise("balcony", game.view(), random.Random(f"stats-8:{k}"))
        assert advice.move is not None
        game.play(advice.move)
    assert game.status == "won"
