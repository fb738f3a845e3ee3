"""Gloucestershire (2 decks), line by line from RULES.md."""

from __future__ import annotations

import pytest
from rules_testkit import assert_illegal, deck_texts, legal, run, set_piles, table_texts

from protocol.rng import shuffled_deck
from server.rules import Game, new_game

SEEDS = ["tests", "gloucestershire-1", "daily:2026-11-29", "G"]

#: Red cards (no aces) for the tableau piles a test does not use: red on red never builds.
FILLERS = [["5H"], ["5D"], ["7H"], ["7D"], ["9H"], ["9D"], ["JH"], ["JD"]]


def fill(*piles: list[str]) -> list[list[str]]:
    """All 8 tableau piles: the given ones first, then fillers."""
    return [*piles, *FILLERS[: 8 - len(piles)]]


def position(**piles) -> Game:
    """A Gloucestershire table holding only the given cards."""
    return set_piles(new_game("gloucestershire", "tests"), clear=True, **piles)


def moves_from(game: Game, source: str) -> set[str]:
    return {move for move in legal(game) if move.startswith(source + ">")}


def moves_to(game: Game, target: str) -> set[str]:
    return {move for move in legal(game) if move.endswith(">" + target)}


# -- deal ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_deal_is_3_to_10_cards_pile_by_pile_then_52_in_the_bouquet(seed):
    deck = deck_texts(seed, 2)
    table = new_game("gloucestershire", seed).table()
    expected, position_in_deck = [], 0
    for size in range(3, 11):
        expected.append(deck[position_in_deck : position_in_deck + size])
        position_in_deck += size
    assert position_in_deck == 52
    assert table["tableau"] == expected
    assert table["bouquet"] == deck[52:]
    assert table["foundations"] == [[]] * 4
    assert set(table) == {"foundations", "tableau", "bouquet"}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_deal_uses_the_card_ids_of_the_shuffled_deck(seed):
    deck = shuffled_deck(seed, 2)
    game = new_game("gloucestershire", seed)
    assert [card for pile in game.tableau for card in pile] == deck[:52]
    assert game.bouquet == deck[52:]


def test_everything_is_face_up_so_the_view_is_the_table():
    game = new_game("gloucestershire", "tests")
    assert game.view() == game.table()


def test_there_is_no_stock_no_waste_no_deal_no_redeal():
    game = new_game("gloucestershire", "tests")
    assert_illegal(game, "deal", "no deal", code="no_deal")
    assert_illegal(game, "redeal", "no redeal", code="no_redeal")
    for move in ("stock>tableau[0]", "tableau[0]>waste", "reserve>tableau[0]"):
        assert_illegal(game, move, code="no_such_pile")


# -- foundations -----------------------------------------------------------------------


def test_any_ace_may_go_to_an_empty_foundation():
    game = position(tableau=fill(["AS"], ["2S"]))
    assert moves_from(game, "tableau[0]") >= {f"tableau[0]>foundation[{i}]" for i in range(4)}
    assert not moves_to(game, "foundation[0]") - {"tableau[0]>foundation[0]"}


def test_no_two_foundations_may_hold_the_same_suit():
    game = position(foundations={0: ["AS"]}, tableau=fill(["AS"], ["AH"]))
    assert not {move for move in moves_from(game, "tableau[0]") if "foundation" in move}
    assert {f"tableau[1]>foundation[{i}]" for i in (1, 2, 3)} <= legal(game)
    assert_illegal(game, "tableau[0]>foundation[1]", "A♠", code="not_accepted")


def test_foundations_build_up_in_suit():
    game = position(foundations={0: ["AS", "2S"]}, tableau=fill(["3S"], ["3C"], ["4S"], ["3H"]))
    assert moves_to(game, "foundation[0]") == {"tableau[0]>foundation[0]"}
    assert_illegal(game, "tableau[1]>foundation[0]", "3♣", "2♠")


def test_after_the_king_an_ace_of_the_same_suit_continues():
    game = position(foundations={0: run("A", 13, +1, "S")}, tableau=fill(["AS"], ["AC"], ["AH"]))
    assert moves_from(game, "tableau[0]") >= {"tableau[0]>foundation[0]"}
    assert "tableau[1]>foundation[0]" not in legal(game)
    game.play("tableau[0]>foundation[0]")
    assert len(game.foundations[0]) == 14


def test_a_foundation_goes_round_its_suit_twice_to_26_cards():
    game = position(foundations={0: run("A", 25, +1, "S")}, tableau=fill(["KS"], ["AH"]))
    assert "tableau[0]>foundation[0]" in legal(game)
    game.play("tableau[0]>foundation[0]")
    assert len(game.foundations[0]) == 26
    # A full foundation's top card may still go back: onto the AH (wrap) or the empty pile.
    assert moves_from(game, "foundation[0]") == {
        "foundation[0]>tableau[0]",
        "foundation[0]>tableau[1]",
    }


def test_a_foundation_top_card_may_go_back_to_a_tableau_pile_that_accepts_it():
    game = position(
        foundations={0: ["AS", "2S"], 1: ["AD"]},
        tableau=fill(["3H"], ["3S"], ["2C"], ["KC"]),
    )
    assert moves_from(game, "foundation[0]") == {"foundation[0]>tableau[0]"}
    # The only card of a foundation may go back too (the wrap puts a K on an A, not an A
    # on a K).
    assert moves_from(game, "foundation[1]") == {"foundation[1]>tableau[2]"}
    assert_illegal(game, "foundation[0]>tableau[1]", "2♠", "3♠")


def test_an_emptied_foundation_takes_an_ace_again_under_the_same_suit_rule():
    game = position(
        foundations={0: ["AD"], 1: ["AC"]},
        tableau=fill(["2S"], ["AC"], ["AD"], ["AH"]),
    )
    game.play("foundation[0]>tableau[0]")  # AD onto 2S
    assert game.foundations[0] == []
    assert "tableau[2]>foundation[0]" in legal(game)  # diamonds are free again
    assert "tableau[3]>foundation[0]" in legal(game)
    assert "tableau[1]>foundation[0]" not in legal(game)  # clubs are on foundation[1]


def test_a_foundation_card_never_moves_to_another_foundation():
    game = position(foundations={0: ["AS"], 1: ["AD", "2D"]}, tableau=fill(["2H"]))
    assert_illegal(game, "foundation[0]>foundation[2]", code="wrong_target")
    assert not {move for move in legal(game) if move.count("foundation") == 2}


def test_nothing_goes_from_a_foundation_to_the_bouquet():
    game = position(foundations={0: ["AS"]}, tableau=fill(), bouquet=["2S"])
    assert_illegal(game, "foundation[0]>bouquet", code="wrong_target")


# -- tableau ---------------------------------------------------------------------------


def test_tableau_builds_down_by_one_rank_in_alternating_colour():
    game = position(tableau=fill(["8S"], ["7H"], ["7D"], ["7C"], ["6H"], ["9H"]))
    assert moves_to(game, "tableau[0]") == {"tableau[1]>tableau[0]", "tableau[2]>tableau[0]"}
    assert_illegal(game, "tableau[3]>tableau[0]", "7♣", "8♠", code="not_accepted")
    assert_illegal(game, "tableau[4]>tableau[0]", "6♥", "8♠")
    assert_illegal(game, "tableau[5]>tableau[0]", "9♥", "8♠")


def test_tableau_wraps_so_a_king_may_go_on_an_ace_of_the_other_colour():
    game = position(foundations={0: ["AC"], 1: ["AD"]}, tableau=fill(["AH"], ["KS"], ["KD"]))
    assert moves_to(game, "tableau[0]") == {"tableau[1]>tableau[0]"}
    assert_illegal(game, "tableau[2]>tableau[0]", "K♦", "A♥")
    game.play("tableau[1]>tableau[0]")
    assert table_texts(game, "tableau", 0) == ["AH", "KS"]


def test_tableau_moves_one_card_at_a_time():
    game = position(tableau=fill(["8S", "7H"], ["9D"], ["8C"]))
    assert "tableau[0]>tableau[1]" not in legal(game)
    game.play("tableau[0]>tableau[2]")
    assert table_texts(game, "tableau", 0) == ["8S"]
    assert table_texts(game, "tableau", 2) == ["8C", "7H"]


def test_any_card_may_go_onto_an_empty_pile_from_anywhere_even_a_lone_card():
    game = position(
        foundations={0: ["AS", "2S"]},
        tableau=[[], ["QC"], ["KD"], ["5H", "JS"], *FILLERS[:4]],
        bouquet=["3C", "10C"],
    )
    assert moves_to(game, "tableau[0]") == {
        "foundation[0]>tableau[0]",
        "bouquet>tableau[0]",
        *(f"tableau[{i}]>tableau[0]" for i in range(1, 8)),
    }
    game.play("tableau[1]>tableau[0]")
    assert game.tableau[1] == []


def test_an_emptied_tableau_pile_is_not_refilled_by_itself():
    game = position(foundations={0: ["AS"]}, tableau=fill(["2S"]), bouquet=["3C"])
    ops = game.play("tableau[0]>foundation[0]")
    assert len(ops) == 1
    assert game.tableau[0] == []
    assert table_texts(game, "bouquet") == ["3C"]


# -- bouquet ---------------------------------------------------------------------------


def test_only_the_exposed_bouquet_card_may_move_to_a_foundation_or_a_tableau_pile():
    game = position(tableau=fill(["8S"], ["10S"]), bouquet=["AD", "9H", "7H"])
    assert moves_from(game, "bouquet") == {"bouquet>tableau[0]"}  # not the AD, not the 9H
    game.play("bouquet>tableau[0]")
    assert moves_from(game, "bouquet") == {"bouquet>tableau[1]"}  # 9H is exposed now
    game.play("bouquet>tableau[1]")
    assert {f"bouquet>foundation[{i}]" for i in range(4)} == moves_from(game, "bouquet")


def test_the_last_bouquet_card_dealt_is_the_exposed_one():
    deck = deck_texts("tests", 2)
    game = new_game("gloucestershire", "tests")
    set_piles(game, tableau={0: []})  # somewhere any card may go
    ops = game.play("bouquet>tableau[0]")
    assert ops == [{"op": "move", "from": "bouquet", "to": "tableau[0]", "card": deck[-1]}]
    assert table_texts(game, "bouquet") == deck[52:-1]


def test_nothing_may_be_moved_into_the_bouquet():
    game = position(foundations={0: ["AS"]}, tableau=fill(["2S"]), bouquet=["3C"])
    for source in ("tableau[0]", "foundation[0]"):
        assert_illegal(game, f"{source}>bouquet", code="wrong_target")
    set_piles(game, bouquet=[])
    assert_illegal(game, "tableau[0]>bouquet", code="wrong_target")


# -- end of the game -------------------------------------------------------------------


def near_won() -> Game:
    """103 cards on the foundations; the last, KS, on tableau[0]."""
    piles = [run("A", 26, +1, suit) for suit in "CDHS"]
    piles[3] = piles[3][:25]
    return position(foundations=piles, tableau={0: ["KS"]})


def test_the_game_is_won_when_all_104_cards_are_on_the_foundations():
    game = near_won()
    game.play("tableau[0]>foundation[3]")
    assert game.status == "won"
    assert game.score == 104
    assert game.legal_moves() == []
    assert_illegal(game, "foundation[3]>tableau[0]", code="game_over")
    assert_illegal(game, "resign", code="game_over")


def test_a_game_near_its_end_is_played_out_to_a_win_through_the_bouquet():
    piles = [run("A", 26, +1, suit) for suit in "CDHS"]
    piles[3] = piles[3][:23]  # ... 10S: JS, QS and KS to come
    game = position(foundations=piles, bouquet=["QS", "JS"], tableau={0: ["KS"]})
    for move in ("bouquet>foundation[3]", "bouquet>foundation[3]"):
        game.play(move)
        assert game.status == "playing"
    game.play("tableau[0]>foundation[3]")
    assert game.status == "won"
    assert game.score == 104


def test_the_game_is_stuck_when_no_move_is_legal():
    # Red tops everywhere, no ace: only the bouquet's 7C can move, onto the 8D.
    tops = ["8D", "2H", "3H", "4D", "5H", "9D", "10H", "JD"]
    bottoms = ["QS", "QC", "KS", "KC"] * 2
    game = position(
        tableau=[[b, top] for b, top in zip(bottoms, tops, strict=True)], bouquet=["7C"]
    )
    assert legal(game) == {"bouquet>tableau[0]"}
    game.play("bouquet>tableau[0]")
    assert game.status == "stuck"
    assert game.legal_moves() == []


def test_resign_and_score():
    game = position(foundations={0: ["AS", "2S"], 1: ["AH"]}, tableau=fill(["3S"]))
    assert game.score == 3
    game.play("tableau[0]>foundation[0]")
    assert game.score == 4
    game.play("resign")
    assert game.status == "resigned"
    assert game.score == 4
