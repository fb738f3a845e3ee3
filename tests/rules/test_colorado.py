"""Colorado (2 decks), line by line from RULES.md."""

from __future__ import annotations

import pytest
from rules_testkit import assert_illegal, deck_texts, legal, run, set_piles, table_texts

from protocol.rng import shuffled_deck
from server.rules import Game, new_game

SEEDS = ["tests", "colorado-1", "daily:2026-11-29", "C"]

#: Middle ranks for the tableau piles a test does not use: with the foundations empty or
#: low they fit none.
FILLERS = [[rank + suit] for rank in ("5", "6", "7", "8", "9") for suit in "CDHS"]


def fill(*piles: list[str]) -> list[list[str]]:
    """All 20 tableau piles: the given ones first, then fillers."""
    return [*piles, *FILLERS[: 20 - len(piles)]]


def position(**piles) -> Game:
    """A Colorado table holding only the given cards."""
    return set_piles(new_game("colorado", "tests"), clear=True, **piles)


def moves_from(game: Game, source: str) -> set[str]:
    return {move for move in legal(game) if move.startswith(source + ">")}


def moves_to(game: Game, target: str) -> set[str]:
    return {move for move in legal(game) if move.endswith(">" + target)}


ALL_TABLEAU = {f"tableau[{i}]" for i in range(20)}


# -- deal ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_deal_is_one_card_to_each_of_20_tableau_piles_then_84_to_the_stock(seed):
    deck = deck_texts(seed, 2)
    table = new_game("colorado", seed).table()
    assert table["tableau"] == [[card] for card in deck[:20]]
    assert table["stock"] == list(reversed(deck[20:]))
    assert len(table["stock"]) == 84
    assert table["foundations"] == [[]] * 8
    assert "waste" not in table


@pytest.mark.parametrize("seed", SEEDS)
def test_the_deal_uses_the_card_ids_of_the_shuffled_deck(seed):
    deck = shuffled_deck(seed, 2)
    game = new_game("colorado", seed)
    assert game.tableau == [[card] for card in deck[:20]]
    assert game.stock == deck[20:][::-1]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_stocks_top_card_is_face_up_and_sent_to_the_player_but_no_other(seed):
    deck = deck_texts(seed, 2)
    view = new_game("colorado", seed).view()
    assert view["stock"] == {"count": 84, "top": deck[20]}


# -- foundations -----------------------------------------------------------------------


def test_any_ace_may_start_an_empty_ace_pile_and_no_king_pile():
    game = position(tableau=fill(["AS"], ["AD"]))
    ace_piles = {f"tableau[0]>foundation[{i}]" for i in range(4)}
    assert moves_from(game, "tableau[0]") == ace_piles
    assert_illegal(game, "tableau[0]>foundation[4]", "A♠", code="not_accepted")


def test_no_two_ace_piles_may_hold_the_same_suit():
    game = position(foundations={0: ["AC"]}, tableau=fill(["AC"], ["AD"]))
    assert moves_from(game, "tableau[0]") == set()  # the other AC
    assert moves_from(game, "tableau[1]") == {f"tableau[1]>foundation[{i}]" for i in (1, 2, 3)}
    assert_illegal(game, "tableau[0]>foundation[1]", "A♣", code="not_accepted")


def test_ace_piles_build_up_in_suit():
    game = position(foundations={0: ["AC", "2C"]}, tableau=[["3C"], ["3D"], ["4C"], ["3S"]])
    assert moves_to(game, "foundation[0]") == {"tableau[0]>foundation[0]"}
    assert_illegal(game, "tableau[1]>foundation[0]", "3♦", "2♣")


def test_an_ace_pile_stops_at_the_king_with_13_cards_no_wrap():
    game = position(foundations={0: run("A", 13, +1, "H")}, tableau=fill(["AH"], ["AD"]))
    assert "tableau[0]>foundation[0]" not in legal(game)
    assert_illegal(game, "tableau[0]>foundation[0]", code="not_accepted")
    # The second AH still goes nowhere else among the ace piles: hearts are taken.
    assert moves_from(game, "tableau[0]") == set()


def test_any_king_may_start_an_empty_king_pile_and_no_ace_pile():
    game = position(tableau=fill(["KS"]))
    assert moves_from(game, "tableau[0]") == {f"tableau[0]>foundation[{i}]" for i in range(4, 8)}
    assert_illegal(game, "tableau[0]>foundation[0]", "K♠", code="not_accepted")


def test_no_two_king_piles_may_hold_the_same_suit():
    game = position(foundations={5: ["KH"]}, tableau=fill(["KH"], ["KC"]))
    assert moves_from(game, "tableau[0]") == set()
    assert moves_from(game, "tableau[1]") == {f"tableau[1]>foundation[{i}]" for i in (4, 6, 7)}


def test_an_ace_pile_and_a_king_pile_may_hold_the_same_suit():
    game = position(foundations={0: ["AH"]}, tableau=fill(["KH"]))
    assert "tableau[0]>foundation[4]" in legal(game)


def test_king_piles_build_down_in_suit():
    game = position(foundations={4: ["KS", "QS"]}, tableau=[["JS"], ["JC"], ["10S"], ["KS"]])
    assert moves_to(game, "foundation[4]") == {"tableau[0]>foundation[4]"}
    assert_illegal(game, "tableau[1]>foundation[4]", "J♣", "Q♠")


def test_a_king_pile_stops_at_the_ace_with_13_cards_no_wrap():
    game = position(foundations={4: run("K", 13, -1, "D")}, tableau=fill(["KD"]))
    assert moves_from(game, "tableau[0]") == set()


def test_no_card_ever_leaves_a_foundation():
    game = position(
        foundations={0: ["AC", "2C"], 4: ["KD"]},
        tableau=fill(["3D"]),
        stock=["QD"],
    )
    assert not {move for move in legal(game) if move.startswith("foundation")}
    for move in ("foundation[0]>tableau[0]", "foundation[4]>foundation[5]", "foundation[0]>stock"):
        assert_illegal(game, move, "no card may be moved from the foundation", code="wrong_source")


# -- tableau ---------------------------------------------------------------------------


def test_the_tableau_does_not_build():
    game = position(tableau=fill(["8S"], ["7H"], ["7S"], ["9S"]), stock=["9C"])
    assert not {move for move in legal(game) if move.count("tableau") == 2}
    for move in ("tableau[1]>tableau[0]", "tableau[2]>tableau[0]", "tableau[3]>tableau[0]"):
        assert_illegal(game, move, code="wrong_target")


def test_a_tableau_top_card_may_go_only_to_a_foundation():
    game = position(tableau=fill(["KS", "AS"]), stock=["9D"])
    assert moves_from(game, "tableau[0]") == {f"tableau[0]>foundation[{i}]" for i in range(4)}
    assert_illegal(game, "tableau[0]>stock", code="wrong_target")


def test_an_emptied_tableau_pile_is_refilled_at_once_from_the_stock_top():
    game = position(tableau=fill(["AS"]), stock=["QH", "9C", "9D"])
    ops = game.play("tableau[0]>foundation[2]")
    assert ops == [
        {"op": "move", "from": "tableau[0]", "to": "foundation[2]", "card": "AS"},
        {"op": "move", "from": "stock", "to": "tableau[0]", "card": "9D"},
        {"op": "reveal", "pile": "stock", "card": "9C"},
    ]
    assert table_texts(game, "tableau", 0) == ["9D"]
    assert game.view()["stock"] == {"count": 2, "top": "9C"}


def test_a_pile_that_is_not_emptied_is_not_refilled():
    game = position(tableau=fill(["9H", "AS"]), stock=["9C"])
    ops = game.play("tableau[0]>foundation[0]")
    assert len(ops) == 1
    assert table_texts(game, "tableau", 0) == ["9H"]
    assert table_texts(game, "stock") == ["9C"]


def test_once_the_stock_is_empty_an_emptied_pile_stays_empty():
    game = position(tableau=fill(["AS"], ["KD"]))
    ops = game.play("tableau[0]>foundation[0]")
    assert ops == [{"op": "move", "from": "tableau[0]", "to": "foundation[0]", "card": "AS"}]
    assert game.tableau[0] == []


def test_the_player_can_never_fill_a_tableau_pile():
    game = position(tableau=fill([], ["KD"], ["9S", "2S"]), foundations={0: ["AH"]})
    assert moves_to(game, "tableau[0]") == set()
    assert_illegal(game, "tableau[1]>tableau[0]", code="wrong_target")
    assert_illegal(game, "foundation[0]>tableau[0]", code="wrong_source")


# -- stock -----------------------------------------------------------------------------


def test_the_stocks_top_card_may_go_onto_any_tableau_pile_without_conditions():
    game = position(tableau=fill(["KS"], ["2H"], ["AC"], ["10D"]), stock=["QH", "4C", "9H"])
    assert moves_from(game, "stock") == {f"stock>{pile}" for pile in ALL_TABLEAU}
    ops = game.play("stock>tableau[0]")
    assert ops == [
        {"op": "move", "from": "stock", "to": "tableau[0]", "card": "9H"},
        {"op": "reveal", "pile": "stock", "card": "4C"},
    ]
    assert table_texts(game, "tableau", 0) == ["KS", "9H"]


def test_the_stocks_top_card_may_go_onto_a_foundation_that_accepts_it():
    game = position(foundations={0: ["AH"], 4: ["KC"]}, tableau=fill(), stock=["2H"])
    assert moves_from(game, "stock") == {
        "stock>foundation[0]",
        *(f"stock>{p}" for p in ALL_TABLEAU),
    }
    ops = game.play("stock>foundation[0]")
    assert ops == [
        {"op": "move", "from": "stock", "to": "foundation[0]", "card": "2H"},
        {"op": "reveal", "pile": "stock", "card": None},
    ]
    assert game.view()["stock"] == {"count": 0, "top": None}


def test_only_the_stocks_top_card_is_playable():
    game = position(tableau=fill(), stock=["AH", "9C"])
    assert not {move for move in legal(game) if "foundation" in move}


def test_one_pass_through_the_stock_no_deal_no_redeal_no_waste():
    game = position(tableau=fill(), stock=["9C"])
    assert "deal" not in legal(game)
    assert_illegal(game, "deal", "no deal", code="no_deal")
    assert_illegal(game, "redeal", "no redeal", code="no_redeal")
    assert_illegal(game, "stock>waste", code="no_such_pile")
    game.play("stock>tableau[3]")
    assert game.status == "stuck"


def test_nothing_may_be_moved_onto_the_stock():
    game = position(tableau=fill(["AS"]), stock=["9C"])
    assert_illegal(game, "tableau[0]>stock", code="wrong_target")


# -- end of the game -------------------------------------------------------------------


def near_won() -> Game:
    """103 cards on the foundations; the last, AS, on tableau[0]."""
    ups = [run("A", 13, +1, suit) for suit in "CDHS"]
    downs = [run("K", 13, -1, suit) for suit in "CDHS"]
    downs[3] = downs[3][:12]
    return position(foundations=ups + downs, tableau={0: ["AS"]})


def test_the_game_is_won_when_all_104_cards_are_on_the_foundations():
    game = near_won()
    assert legal(game) == {"tableau[0]>foundation[7]"}
    game.play("tableau[0]>foundation[7]")
    assert game.status == "won"
    assert game.score == 104
    assert game.legal_moves() == []
    assert_illegal(game, "resign", code="game_over")


def test_a_game_near_its_end_is_played_out_to_a_win_through_refills():
    ups = [run("A", 13, +1, suit) for suit in "CDHS"]
    downs = [run("K", 13, -1, suit) for suit in "CDHS"]
    downs[3] = downs[3][:10]  # ... 5S 4S: 3S, 2S and AS to come
    game = position(foundations=ups + downs, tableau={0: ["3S"]}, stock=["AS", "2S"])
    game.play("tableau[0]>foundation[7]")  # refilled with 2S
    game.play("tableau[0]>foundation[7]")  # refilled with AS, the stock is now empty
    assert game.view()["stock"] == {"count": 0, "top": None}
    assert game.status == "playing"
    game.play("tableau[0]>foundation[7]")
    assert game.status == "won"
    assert game.tableau[0] == []


def test_the_game_is_stuck_when_the_stock_is_empty_and_no_top_card_fits():
    game = position(tableau=fill(), stock=["8D"])
    assert legal(game) == {f"stock>{pile}" for pile in ALL_TABLEAU}
    game.play("stock>tableau[19]")
    assert game.status == "stuck"
    assert game.legal_moves() == []


def test_resign_and_score():
    game = new_game("colorado", "tests")
    assert game.score == 0
    game.play("resign")
    assert game.status == "resigned"
    assert_illegal(game, "stock>tableau[0]", code="game_over")
