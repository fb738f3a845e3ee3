"""The search models agree with the rules engine, move by move, on random playouts."""

from __future__ import annotations

import random

import pytest
from solver_testkit import colorado_spades_across, plain_search

from server.rules import GAME_NAMES, Game, cards, new_game
from server.solver import Budget, solve
from server.solver.models import ColoradoModel, model_for


@pytest.mark.parametrize("name", GAME_NAMES)
def test_model_follows_the_engine(name: str) -> None:
    """Every move the model offers is legal and leads where the engine goes; every legal
    move the model leaves out leads to a position the model reaches by another move
    (same canonical key), or back to the same position, unless the model offers one
    safe move alone."""
    rng = random.Random(f"models-{name}")
    checked = 0
    for deal in range(6):
        game = new_game(name, f"models-{deal}")
        model = model_for(game)
        for _ in range(150):
            if game.is_over:
                break
            state = model.state_of(game)
            assert model.score(state) == game.score
            offered = model.moves(state)
            legal = game.legal_moves()
            if not offered:  # a Colorado position proven lost (see the test below)
                assert name == "colorado" and legal, legal
            keys = set()
            for move in offered:
                text = model.text(move)
                assert text in legal, (text, legal)
                after = game.copy()
                after.play(text)
                child = model.play(state, move)
                assert child[: len(after.piles)] == model.state_of(after)[: len(after.piles)]
                assert model.key(child) == model.key(model.state_of(after))
                keys.add(model.key(child))
                checked += 1
            if len(offered) > 1:
                for text in legal:
                    after = game.copy()
                    after.play(text)
                    child_key = model.key(model.state_of(after))
                    assert child_key in keys or child_key == model.key(state), text
            game.play(rng.choice(legal))
    assert checked > 500


def test_colorado_stock_card_onto_an_empty_pile() -> None:
    """A constructed Colorado position with an empty tableau pile while the stock has cards
    (the engine lets the stock's card go there): the model offers that placement once,
    every offered move is legal, and the search runs."""
    game = new_game("colorado", "t1")
    game.stock.insert(0, game.tableau[3].pop())
    game.stock.insert(0, game.tableau[9].pop())
    game._refresh_status()
    model = model_for(game)
    state = model.state_of(game)
    offered = [model.text(move) for move in model.moves(state)]
    legal = game.legal_moves()
    assert set(offered) <= set(legal)
    empty = {"stock>tableau[3]", "stock>tableau[9]"}
    assert len(empty & set(offered)) == 1
    assert solve(game, Budget(nodes=2_000)).nodes > 0


def test_colorado_a_card_whose_twin_is_in_reach_is_needed_on_its_later_pile() -> None:
    """The stock's card is put where it buries the card needed last.  5♣ with no
    foundation started is needed after 4 cards of its suit (A to 4 on the ace pile) or 8
    (K down to 6 on the king pile); when its other copy is in reach too, that copy can
    take the sooner place, so this one counts as needed after 8."""
    ups, downs = [0, 0, 0, 0], [14, 14, 14, 14]
    five_of_clubs = 4
    assert ColoradoModel._distance(ups, downs, five_of_clubs, twin_in_reach=False) == 4
    assert ColoradoModel._distance(ups, downs, five_of_clubs, twin_in_reach=True) == 8
    ups[0] = 4  # the ace pile has reached the 4: this copy goes up next, or down later
    assert ColoradoModel._distance(ups, downs, five_of_clubs, twin_in_reach=True) == 8
    ups[0] = 5  # the other copy went up: this one can only go down
    assert ColoradoModel._distance(ups, downs, five_of_clubs, twin_in_reach=True) == 8
    assert ColoradoModel._distance(ups, downs, five_of_clubs, twin_in_reach=False) == 8


def _colorado_position(rng: random.Random) -> Game:
    """A Colorado position of 12 to 16 cards to go: each suit's ace pile and king pile at
    random heights, the cards they do not hold dealt at random to a few tableau piles and
    a stock of up to two cards."""
    while True:
        levels = [(rng.randint(0, 13), rng.randint(1, 14)) for _ in range(4)]
        left = [
            suit * 13 + rank - 1 + 52 * copy
            for suit, (up, down) in enumerate(levels)
            for rank in range(1, 14)
            for copy in range(2 - (rank <= up) - (rank >= down))
        ]
        if 12 <= len(left) <= 16:
            break
    game = new_game("colorado", "stuck")
    for suit, (up, down) in enumerate(levels):
        game.foundations[suit][:] = [suit * 13 + rank - 1 for rank in range(1, up + 1)]
        game.foundations[4 + suit][:] = [suit * 13 + rank - 1 for rank in range(13, down - 1, -1)]
    rng.shuffle(left)
    stock = rng.choice([0, 1, 2])
    game.stock[:] = left[:stock]
    for pile in game.tableau:
        pile.clear()
    used = rng.randint(3, 6)
    for card in left[stock:]:
        game.tableau[rng.randrange(used)].append(card)
    game._refresh_status()
    return game


def test_colorado_a_position_the_model_finds_lost_is_lost() -> None:
    """Colorado: a card that must wait for a card lying under it, whichever foundation it
    goes to (directly or through other piles), never leaves the tableau.  The model then
    offers no move; on random positions near the end (checked by playing every line the
    engine allows), every position it gives up on is lost, and it gives up on some."""
    rng = random.Random("colorado-stuck")
    given_up = lost = 0
    for _ in range(100):
        game = _colorado_position(rng)
        model = model_for(game)
        if not game.legal_moves():
            continue
        won = plain_search(game, interchangeable_tableau=True)
        assert won is not None
        lost += not won
        if not model.moves(model.state_of(game)):
            given_up += 1
            assert not won, [list(pile) for pile in game.piles]
    assert given_up >= 15, (given_up, lost)


def test_colorado_cards_waiting_on_each_other_across_piles_are_lost() -> None:
    """:func:`colorado_spades_across`: the 9 goes up only after a 5, the 10 only after
    the 9, and the two 5s lie under them, so neither 5 is ever uncovered, whatever the
    stock brings.  The model offers no move; a search of every line the engine allows
    finds no win."""
    game = colorado_spades_across()
    assert game.score == 104 - 17 and "stock>foundation[4]" in game.legal_moves()
    model = model_for(game)
    assert model.moves(model.state_of(game)) == []
    assert plain_search(game, interchangeable_tableau=True) is False


def test_empress_of_italy_tries_a_swap_after_the_deal() -> None:
    """A constructed Empress of Italy position: 8♥ on 9♠ in ``tableau[0]`` may go onto the
    9♣ of ``tableau[1]``, a *swap* (the tops stay a black 9 and a red 8, only the stacks
    beneath trade places); 8♦ on K♦ in ``tableau[2]`` may go there too, which shows the
    K♦.  The model tries the second with the moves between piles, before the deal, and the
    swap after the deal; both are tried."""
    game = new_game("empress_of_italy", "swap-1")
    assert game.base_rank not in (8, 9, 13)
    game.tableau[0][:] = [cards.face(9, 3), cards.face(8, 2)]
    game.tableau[1][:] = [cards.face(9, 0)]
    game.tableau[2][:] = [cards.face(13, 1), cards.face(8, 1)]
    game._refresh_status()
    model = model_for(game)
    offered = [model.text(move) for move in model.moves(model.state_of(game))]
    assert set(offered) <= set(game.legal_moves())
    deal = offered.index("deal")
    assert offered.index("tableau[2]>tableau[1]") < deal < offered.index("tableau[0]>tableau[1]")
