"""Balcony (1 deck), line by line from RULES.md."""

from __future__ import annotations

import pytest
from rules_testkit import assert_illegal, deck_texts, legal, run, set_piles, table_texts

from protocol.rng import shuffled_deck
from server.rules import Game, new_game

SEEDS = ["tests", "balcony-1", "daily:2026-11-29", "Z"]

#: Red low cards to fill tableau piles a test does not use: red on red never builds, and
#: with base rank 5 they fit no foundation.
FILLERS = [["AH"], ["AD"], ["2H"], ["2D"], ["3H"], ["3D"]]


def position(base_rank: str = "5", **piles) -> Game:
    """A Balcony table holding only the given cards."""
    return set_piles(new_game("balcony", "tests"), clear=True, base_rank=base_rank, **piles)


def moves_from(game: Game, source: str) -> set[str]:
    return {move for move in legal(game) if move.startswith(source + ">")}


def moves_to(game: Game, target: str) -> set[str]:
    return {move for move in legal(game) if move.endswith(">" + target)}


# -- deal ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_deal_is_foundation_then_reserve_then_tableau_then_stock_in_deck_order(seed):
    deck = deck_texts(seed, 1)
    table = new_game("balcony", seed).table()
    assert table["foundations"] == [[deck[0]], [], [], []]
    assert table["reserve"] == deck[1:8]
    assert table["tableau"] == [[card] for card in deck[8:15]]
    assert table["stock"] == list(reversed(deck[15:]))
    assert len(table["stock"]) == 37
    assert table["waste"] == []


@pytest.mark.parametrize("seed", SEEDS)
def test_the_first_card_dealt_fixes_the_base_rank(seed):
    first = deck_texts(seed, 1)[0]
    game = new_game("balcony", seed)
    assert game.table()["base_rank"] == first[:-1]
    assert game.view()["base_rank"] == first[:-1]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_deal_uses_the_card_ids_of_the_shuffled_deck(seed):
    deck = shuffled_deck(seed, 1)
    game = new_game("balcony", seed)
    assert game.foundations[0] == deck[:1]
    assert game.reserve == deck[1:8]
    assert [pile for pile in game.tableau] == [[card] for card in deck[8:15]]
    assert game.stock == deck[15:][::-1]


def test_the_last_reserve_card_dealt_is_its_top_and_the_only_one_that_moves():
    deck = deck_texts("tests", 1)
    game = new_game("balcony", "tests")
    assert table_texts(game, "reserve")[-1] == deck[7]
    set_piles(game, tableau={0: []})  # an empty tableau pile takes the reserve's top
    assert "reserve>tableau[0]" in legal(game)
    game.play("reserve>tableau[0]")
    assert table_texts(game, "tableau", 0) == [deck[7]]
    assert table_texts(game, "reserve") == deck[1:7]


@pytest.mark.parametrize("seed", SEEDS)
def test_dealing_the_whole_stock_turns_the_rest_of_the_deck_in_order(seed):
    deck = deck_texts(seed, 1)
    game = new_game("balcony", seed)
    for card in deck[15:]:
        assert game.play("deal") == [{"op": "move", "from": "stock", "to": "waste", "card": card}]
    assert table_texts(game, "waste") == deck[15:]
    assert game.stock == []
    assert "deal" not in legal(game)


# -- foundations -----------------------------------------------------------------------


def test_an_empty_foundation_takes_a_base_rank_card_of_any_suit_from_any_source():
    game = position(
        foundations={0: ["5S"]},
        tableau={0: ["5D"], 1: ["KC"]},
        waste=["5H"],
        reserve=["5C"],
    )
    for source in ("tableau[0]", "waste", "reserve"):
        assert moves_from(game, source) >= {f"{source}>foundation[{i}]" for i in (1, 2, 3)}
    assert not moves_from(game, "tableau[1]") & {f"tableau[1]>foundation[{i}]" for i in (1, 2, 3)}


def test_an_empty_foundation_refuses_any_card_not_of_the_base_rank():
    game = position(foundations={0: ["5S"]}, tableau={0: ["6H"], 1: ["4D"], 2: ["AH"]})
    assert moves_to(game, "foundation[1]") == set()
    assert_illegal(game, "tableau[1]>foundation[1]", "4♦", "5", code="not_accepted")


def test_the_base_rank_is_the_first_cards_rank_whatever_it_is():
    game = position(base_rank="Q", foundations={0: ["QS"]}, tableau={0: ["QD"], 1: ["5D"]})
    assert "tableau[0]>foundation[1]" in legal(game)
    assert "tableau[1]>foundation[1]" not in legal(game)


def test_foundations_build_up_by_one_rank_in_alternating_colour():
    game = position(
        foundations={0: ["5S"]},
        tableau=[["6H"], ["6D"], ["6C"], ["6S"], ["7H"], ["4H"], ["5H"]],
    )
    assert moves_to(game, "foundation[0]") == {
        "tableau[0]>foundation[0]",
        "tableau[1]>foundation[0]",
    }
    assert_illegal(game, "tableau[2]>foundation[0]", "6♣", "5♠", code="not_accepted")
    assert_illegal(game, "tableau[4]>foundation[0]", "7♥", "5♠")
    assert_illegal(game, "tableau[5]>foundation[0]", "4♥", "5♠")


def test_a_red_foundation_top_takes_only_black_cards():
    game = position(foundations={0: ["5H"]}, tableau=[["6S"], ["6C"], ["6D"]])
    assert moves_to(game, "foundation[0]") == {
        "tableau[0]>foundation[0]",
        "tableau[1]>foundation[0]",
    }


def test_foundations_wrap_from_king_to_ace():
    climbed = run("5", 9, +1, "SH")  # 5S 6H ... QH KS
    assert climbed[-1] == "KS"
    game = position(foundations={0: climbed}, tableau=[["AH"], ["AD"], ["AC"], ["2H"]])
    assert moves_to(game, "foundation[0]") == {
        "tableau[0]>foundation[0]",
        "tableau[1]>foundation[0]",
    }
    game.play("tableau[0]>foundation[0]")
    assert table_texts(game, "foundation", 0)[-2:] == ["KS", "AH"]


def test_a_foundation_holds_at_most_13_cards_even_where_the_wrap_would_continue():
    full = run("5", 13, +1, "SH")  # ends on 4S: a red 5 would follow with wrap
    assert full[-1] == "4S"
    game = position(foundations={0: full}, tableau=[["5H"]])
    assert {move for move in moves_from(game, "tableau[0]") if "foundation" in move} == {
        "tableau[0]>foundation[1]",
        "tableau[0]>foundation[2]",
        "tableau[0]>foundation[3]",
    }
    assert_illegal(game, "tableau[0]>foundation[0]", "13", code="not_accepted")


def test_a_foundation_top_card_may_go_back_to_a_tableau_pile_that_accepts_it():
    game = position(
        foundations={0: ["5S", "6H"]},
        tableau=[["7S"], ["7H"], [], ["8C"], ["7C", "9D"], ["AH"], ["AD"]],
    )
    assert moves_from(game, "foundation[0]") == {
        "foundation[0]>tableau[0]",
        "foundation[0]>tableau[2]",
    }
    assert_illegal(game, "foundation[0]>tableau[1]", "6♥", "7♥")
    game.play("foundation[0]>tableau[0]")
    assert table_texts(game, "foundation", 0) == ["5S"]
    assert table_texts(game, "tableau", 0) == ["7S", "6H"]


def test_a_full_foundations_top_card_may_go_back_to_the_tableau():
    full = run("5", 13, +1, "SH")
    game = position(foundations={0: full}, tableau=[["5H"]])
    assert "foundation[0]>tableau[0]" in legal(game)  # 4S on 5H
    game.play("foundation[0]>tableau[0]")
    assert len(game.foundations[0]) == 12


def test_the_base_card_itself_may_go_back_and_its_foundation_then_takes_a_base_rank_card():
    game = position(foundations={0: ["5S"]}, tableau=[["6H"], ["5D"]])
    game.play("foundation[0]>tableau[0]")
    assert game.foundations[0] == []
    assert table_texts(game, "tableau", 0) == ["6H", "5S"]
    assert {"tableau[0]>foundation[0]", "tableau[1]>foundation[0]"} <= legal(game)


def test_a_foundation_card_never_moves_to_another_foundation():
    game = position(foundations={0: ["5S", "6H"], 1: ["5C"], 2: ["5D"]})
    # 6H would follow 5C, and 5D is a base card an empty foundation would take.
    assert_illegal(game, "foundation[0]>foundation[1]", "tableau", code="wrong_target")
    assert_illegal(game, "foundation[2]>foundation[3]", "tableau", code="wrong_target")
    assert not {move for move in legal(game) if move.count("foundation") == 2}


def test_a_foundation_card_goes_nowhere_but_the_tableau():
    game = position(foundations={0: ["5S", "6H"]}, stock=["2C"], waste=["7C"], reserve=["7S"])
    for target in ("reserve", "waste", "stock"):
        assert_illegal(game, f"foundation[0]>{target}")


# -- tableau ---------------------------------------------------------------------------


def test_tableau_builds_down_by_one_rank_in_alternating_colour():
    game = position(tableau=[["8S"], ["7H"], ["7D"], ["7C"], ["6H"], ["9H"], ["8H"]])
    assert moves_to(game, "tableau[0]") == {"tableau[1]>tableau[0]", "tableau[2]>tableau[0]"}
    assert_illegal(game, "tableau[3]>tableau[0]", "7♣", "8♠", code="not_accepted")
    assert_illegal(game, "tableau[4]>tableau[0]", "6♥", "8♠")
    assert_illegal(game, "tableau[5]>tableau[0]", "9♥", "8♠")


def test_tableau_does_not_wrap_so_an_ace_takes_nothing():
    game = position(tableau=[["AH"], ["KS"], ["KC"]], waste=["KD"], reserve=["QS"])
    assert moves_to(game, "tableau[0]") == set()
    assert_illegal(game, "tableau[1]>tableau[0]", "K♠", "A♥")


def test_any_card_may_go_on_an_empty_tableau_pile_from_waste_tableau_reserve_or_foundation():
    game = position(
        foundations={0: ["5S", "6H"]},
        tableau={0: [], 1: ["9C", "JC"], 2: ["AD"]},
        waste=["KD"],
        reserve=["3C"],
    )
    assert moves_to(game, "tableau[0]") == {
        "waste>tableau[0]",
        "reserve>tableau[0]",
        "foundation[0]>tableau[0]",
        "tableau[1]>tableau[0]",
        "tableau[2]>tableau[0]",
    }


def test_the_only_card_of_a_tableau_pile_may_move_to_an_empty_pile():
    game = position(tableau={0: [], 1: ["JC"]})
    game.play("tableau[1]>tableau[0]")
    assert table_texts(game, "tableau", 0) == ["JC"]
    assert game.tableau[1] == []


def test_nothing_fills_an_emptied_tableau_pile_by_itself():
    game = position(
        foundations={0: ["5S"]},
        tableau={0: ["6H"]},
        stock=["2C", "3C"],
        waste=["9D"],
        reserve=["JD"],
    )
    ops = game.play("tableau[0]>foundation[0]")
    assert ops == [{"op": "move", "from": "tableau[0]", "to": "foundation[0]", "card": "6H"}]
    assert game.tableau[0] == []
    assert table_texts(game, "stock") == ["2C", "3C"]
    assert table_texts(game, "waste") == ["9D"]
    assert table_texts(game, "reserve") == ["JD"]


def test_only_the_top_card_of_a_tableau_pile_moves_and_only_one_card_at_a_time():
    game = position(foundations={0: ["5S"]}, tableau=[["6H", "KC"], ["8S", "7H"], ["9D"], ["8C"]])
    assert "tableau[0]>foundation[0]" not in legal(game)  # 6H is covered by KC
    assert "tableau[1]>tableau[2]" not in legal(game)  # no moving 8S-7H as a sequence
    game.play("tableau[1]>tableau[3]")
    assert table_texts(game, "tableau", 1) == ["8S"]
    assert table_texts(game, "tableau", 3) == ["8C", "7H"]


# -- reserve ---------------------------------------------------------------------------


def test_nothing_may_be_moved_to_the_reserve():
    game = position(
        foundations={0: ["5S", "6H"]},
        tableau=[["2C"]],
        waste=["3C"],
        reserve=["KD"],
    )
    for source in ("foundation[0]", "tableau[0]", "waste"):
        assert_illegal(game, f"{source}>reserve", code="wrong_target")
    set_piles(game, reserve=[])
    for source in ("foundation[0]", "tableau[0]", "waste"):
        assert_illegal(game, f"{source}>reserve", code="wrong_target")


def test_reserve_top_goes_only_to_a_foundation_or_an_empty_tableau_pile():
    game = position(
        foundations={0: ["5D", "6C"]},
        tableau=[["8S"], [], ["9C"], *FILLERS[:4]],
        reserve=["KC", "7H"],
        waste=["2S"],
    )
    # 7H would also fit on 8S, but a reserve card joins the tableau only on an empty pile.
    assert moves_from(game, "reserve") == {"reserve>foundation[0]", "reserve>tableau[1]"}
    assert_illegal(game, "reserve>tableau[0]", "empty", code="wrong_target")
    assert_illegal(game, "reserve>waste", code="wrong_target")
    game.play("reserve>tableau[1]")
    assert table_texts(game, "tableau", 1) == ["7H"]
    assert table_texts(game, "reserve") == ["KC"]


def test_a_reserve_card_reaches_an_empty_foundation_only_with_the_base_rank():
    game = position(foundations={0: ["5S"]}, tableau=[["KD"], *FILLERS], reserve=["5H"])
    assert moves_from(game, "reserve") == {f"reserve>foundation[{i}]" for i in (1, 2, 3)}


def test_only_the_reserve_top_card_is_playable():
    game = position(foundations={0: ["5D", "6C"]}, tableau=[[], *FILLERS], reserve=["7H", "KC"])
    assert moves_from(game, "reserve") == {"reserve>tableau[0]"}
    game.play("reserve>tableau[0]")
    assert "reserve>foundation[0]" in legal(game)


# -- stock and waste ---------------------------------------------------------------------


def test_deal_turns_the_stocks_next_card_onto_the_waste():
    game = position(tableau=[["KS"]], stock=["2C", "3C", "4C"], waste=["9D"])
    ops = game.play("deal")
    assert ops == [{"op": "move", "from": "stock", "to": "waste", "card": "4C"}]
    assert table_texts(game, "waste") == ["9D", "4C"]
    assert table_texts(game, "stock") == ["2C", "3C"]


def test_deal_is_legal_whenever_the_stock_has_cards_whatever_else_could_be_played():
    game = position(foundations={0: ["5D", "6S"]}, tableau=[["7H"], *FILLERS], stock=["2C"])
    assert legal(game) == {"tableau[0]>foundation[0]", "foundation[0]>tableau[0]", "deal"}


def test_one_pass_through_the_stock_and_no_redeal():
    game = position(tableau=[["KS"]], stock=["2C"], waste=["9D", "8D"])
    game.play("deal")
    assert "deal" not in legal(game)
    assert "redeal" not in legal(game)
    assert_illegal(game, "deal", "stock is empty", code="no_deal")
    assert_illegal(game, "redeal", code="no_redeal")
    assert table_texts(game, "waste") == ["9D", "8D", "2C"]


def test_redeal_is_never_legal_in_balcony():
    game = new_game("balcony", "tests")
    assert_illegal(game, "redeal", "no redeal", code="no_redeal")


def test_no_card_leaves_the_stock_except_by_deal():
    game = position(foundations={0: ["5S"]}, tableau={0: []}, stock=["6H"])
    for target in ("tableau[0]", "foundation[0]", "foundation[1]", "waste", "reserve"):
        assert_illegal(game, f"stock>{target}", "deal", code="wrong_source")


def test_nothing_may_be_moved_to_the_stock_or_the_waste():
    game = position(tableau=[["KS"]], stock=["2C"], waste=["3C"], reserve=["4C"])
    for source in ("tableau[0]", "reserve"):
        assert_illegal(game, f"{source}>stock")
        assert_illegal(game, f"{source}>waste")
    assert_illegal(game, "waste>stock")


def test_waste_top_goes_to_a_tableau_pile_or_a_foundation():
    game = position(
        foundations={0: ["5D", "6C"]},
        tableau=[["8S"], [], ["8H"], *FILLERS[:4]],
        waste=["KC", "7H"],
    )
    assert moves_from(game, "waste") == {
        "waste>tableau[0]",
        "waste>tableau[1]",
        "waste>foundation[0]",
    }
    game.play("waste>tableau[0]")
    assert table_texts(game, "tableau", 0) == ["8S", "7H"]
    assert table_texts(game, "waste") == ["KC"]


def test_only_the_waste_top_card_is_playable():
    game = position(foundations={0: ["5D", "6C"]}, tableau=[["KD"], *FILLERS], waste=["7H", "KC"])
    assert moves_from(game, "waste") == set()


def test_piles_balcony_does_not_have_are_refused():
    game = new_game("balcony", "tests")
    for move in ("bouquet>tableau[0]", "tableau[7]>tableau[0]", "waste>foundation[4]"):
        assert_illegal(game, move, code="no_such_pile")


# -- end of the game -------------------------------------------------------------------


def near_won() -> Game:
    """51 cards on the foundations (base 5), the last one, 4S, on tableau[3]."""
    piles = [run("5", 13, +1, "DC"), run("5", 13, +1, "HS"), run("5", 13, +1, "CD")]
    piles.append(run("5", 12, +1, "SH"))
    return position(foundations=piles, tableau={3: ["4S"]})


def test_the_game_is_won_when_all_52_cards_are_on_the_foundations():
    game = near_won()
    assert game.status == "playing"
    assert "tableau[3]>foundation[3]" in legal(game)
    game.play("tableau[3]>foundation[3]")
    assert game.status == "won"
    assert game.score == 52


def test_no_move_is_legal_after_a_win_not_even_resign():
    game = near_won()
    game.play("tableau[3]>foundation[3]")
    assert game.legal_moves() == []
    assert_illegal(game, "foundation[3]>tableau[0]", "over", code="game_over")
    assert_illegal(game, "deal", "over", code="game_over")
    assert_illegal(game, "resign", "over", code="game_over")


def test_a_game_near_its_end_is_played_out_to_a_win_through_reserve_stock_and_tableau():
    piles = [run("5", 13, +1, "DC"), run("5", 13, +1, "HS"), run("5", 13, +1, "CD")]
    piles.append(run("5", 10, +1, "SH"))  # ... KS AH: 2S, 3H and 4S to come
    game = position(foundations=piles, reserve=["2S"], stock=["3H"], tableau={0: ["4S"]})
    for move in ("reserve>foundation[3]", "deal", "waste>foundation[3]"):
        game.play(move)
        assert game.status == "playing"
    game.play("tableau[0]>foundation[3]")
    assert game.status == "won"
    assert table_texts(game, "foundation", 3) == run("5", 13, +1, "SH")


def stuck_after_one_deal() -> Game:
    """Red tops everywhere, a black 5 on the only foundation, one card left in the stock."""
    tops = ["AD", "2D", "3D", "4D", "7D", "8D", "9D"]
    return position(foundations={0: ["5S"]}, tableau=[[card] for card in tops], stock=["10H"])


def test_the_game_is_stuck_when_no_move_or_deal_is_legal():
    game = stuck_after_one_deal()
    assert legal(game) == {"deal"}
    assert game.status == "playing"
    game.play("deal")
    assert game.legal_moves() == []
    assert game.status == "stuck"
    assert_illegal(game, "waste>tableau[0]", code="game_over")
    assert_illegal(game, "resign", "over", code="game_over")  # a stuck game is over


def test_resign_ends_a_game_in_play():
    game = new_game("balcony", "tests")
    assert "resign" not in legal(game)
    assert game.play("resign") == []
    assert game.status == "resigned"
    assert game.legal_moves() == []
    assert_illegal(game, "deal", code="game_over")
    assert_illegal(game, "resign", code="game_over")


def test_no_move_is_accepted_after_resigning_even_right_after_a_refused_one():
    game = position(foundations={0: ["5S"]}, tableau=[["6H"], ["KD"]], stock=["2C"])
    assert_illegal(game, "tableau[1]>foundation[0]")
    game.play("resign")
    assert_illegal(game, "tableau[0]>foundation[0]", code="game_over")
    assert_illegal(game, "deal", code="game_over")
    assert game.status == "resigned"


def test_the_score_is_the_number_of_cards_on_the_foundations():
    game = new_game("balcony", "tests")
    assert game.score == 1
    game = position(foundations={0: ["5S", "6H", "7C"], 2: ["5D"]}, tableau=[["8D"]])
    assert game.score == 4
    game.play("tableau[0]>foundation[0]")
    assert game.score == 5
    game.play("foundation[0]>tableau[1]")
    assert game.score == 4
