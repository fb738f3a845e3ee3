"""Empress of Italy (4 decks), line by line from RULES.md."""

from __future__ import annotations

import pytest
from rules_testkit import assert_illegal, legal, rank_of, run, set_piles, table_texts, texts

from protocol.cards import card_text
from protocol.rng import shuffled_deck
from server.rules import Game, new_game

SEEDS = ["tests", "empress-1", "daily:2026-11-29", "Q"]

#: Red low cards for the tableau piles a test does not use: red on red never builds, and
#: with base rank 5 they fit no foundation.
FILLERS = [["2H"], ["2D"], ["3H"], ["3D"], ["2H"], ["2D"], ["3H"], ["3D"], ["2H"], ["2D"]]


def position(base_rank: str = "5", **piles) -> Game:
    """An Empress of Italy table holding only the given cards."""
    game = new_game("empress_of_italy", "tests")
    return set_piles(game, clear=True, base_rank=base_rank, **piles)


def moves_from(game: Game, source: str) -> set[str]:
    return {move for move in legal(game) if move.startswith(source + ">")}


def moves_to(game: Game, target: str) -> set[str]:
    return {move for move in legal(game) if move.endswith(">" + target)}


def expected_deal(seed: str) -> dict[str, list[int]]:
    """The layout RULES.md describes, worked out from the shuffled deck."""
    deck = shuffled_deck(seed, 4)
    base = rank_of(card_text(deck[0]))
    foundation_cards, left = [], []
    for card in deck:
        (foundation_cards if rank_of(card_text(card)) == base else left).append(card)
    return {
        "foundations": foundation_cards,
        "reserve": left[:19],
        "tableau": left[19:30],
        "stock_in_deal_order": left[30:],
    }


# -- deal ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_the_first_card_fixes_the_base_rank(seed):
    first = card_text(shuffled_deck(seed, 4)[0])
    game = new_game("empress_of_italy", seed)
    assert game.table()["base_rank"] == first[:-1]
    assert game.view()["base_rank"] == first[:-1]
    assert game.base_rank == rank_of(first)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_16_base_rank_cards_start_the_16_foundations_in_deck_order(seed):
    expected = expected_deal(seed)
    game = new_game("empress_of_italy", seed)
    assert len(expected["foundations"]) == 16
    assert game.foundations == [[card] for card in expected["foundations"]]
    assert game.foundations[0][0] == shuffled_deck(seed, 4)[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_then_19_reserve_cards_1_per_tableau_pile_and_162_stock_cards_from_what_is_left(seed):
    expected = expected_deal(seed)
    game = new_game("empress_of_italy", seed)
    assert game.reserve == expected["reserve"]
    assert game.tableau == [[card] for card in expected["tableau"]]
    assert game.stock == expected["stock_in_deal_order"][::-1]
    assert len(game.stock) == 162
    assert game.waste == []


def test_the_base_rank_cards_are_taken_out_wherever_they_lie_in_the_deck():
    # For these seeds some base-rank cards lie among the first 35 cards of the deck: they go
    # to the foundations, and the reserve and the tableau are dealt from the cards around them.
    for seed in SEEDS:
        deck = shuffled_deck(seed, 4)
        base = rank_of(card_text(deck[0]))
        early = [card for card in deck[1:35] if rank_of(card_text(card)) == base]
        game = new_game("empress_of_italy", seed)
        assert early, seed
        on_table = game.reserve + [pile[0] for pile in game.tableau]
        assert not set(early) & set(on_table)
        assert all(rank_of(card) != base for card in texts(on_table))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_deal_turns_the_stock_in_deck_order_one_card_at_a_time(seed):
    expected = texts(expected_deal(seed)["stock_in_deal_order"])
    game = new_game("empress_of_italy", seed)
    for card in expected:
        assert game.play("deal") == [{"op": "move", "from": "stock", "to": "waste", "card": card}]
    assert table_texts(game, "waste") == expected


def test_the_reserve_is_face_up_with_its_last_dealt_card_on_top():
    expected = expected_deal("tests")
    game = new_game("empress_of_italy", "tests")
    assert game.view()["reserve"] == texts(expected["reserve"])
    assert game.view()["stock"] == {"count": 162}


# -- foundations -----------------------------------------------------------------------


def test_foundations_build_up_by_one_rank_in_alternating_colour():
    game = position(
        foundations={0: ["5S"]},
        tableau=[["6H"], ["6D"], ["6C"], ["6S"], ["7H"], ["4H"], *FILLERS[:5]],
    )
    assert moves_to(game, "foundation[0]") == {
        "tableau[0]>foundation[0]",
        "tableau[1]>foundation[0]",
    }
    assert_illegal(game, "tableau[2]>foundation[0]", "6♣", "5♠", code="not_accepted")
    assert_illegal(game, "tableau[4]>foundation[0]", "7♥", "5♠")
    assert_illegal(game, "tableau[5]>foundation[0]", "4♥", "5♠")


def test_foundations_wrap_from_king_to_ace():
    game = position(
        foundations={0: run("5", 9, +1, "SH")},  # ... QH KS
        tableau=[["AH"], ["AD"], ["AC"], ["2H"], *FILLERS[2:9]],
    )
    assert moves_to(game, "foundation[0]") == {
        "tableau[0]>foundation[0]",
        "tableau[1]>foundation[0]",
    }


def test_a_foundation_is_complete_at_13_cards():
    full = run("5", 13, +1, "SH")  # ends on 4S: with wrap a red 5 would come next
    game = position(foundations={0: full}, tableau=[["5H"], *FILLERS])
    assert "tableau[0]>foundation[0]" not in legal(game)
    assert "tableau[0]>foundation[1]" in legal(game)
    assert_illegal(game, "tableau[0]>foundation[0]", "13", code="not_accepted")


def test_a_foundation_top_card_may_go_back_to_a_tableau_pile_that_accepts_it():
    game = position(
        foundations={0: ["5S", "6H"], 1: run("5", 13, +1, "DC")},  # the full one ends on 4D
        tableau=[["7S"], ["7H"], ["5C"], ["5S"], *FILLERS[:7]],
    )
    assert moves_from(game, "foundation[0]") == {"foundation[0]>tableau[0]"}
    assert moves_from(game, "foundation[1]") == {
        "foundation[1]>tableau[2]",
        "foundation[1]>tableau[3]",
    }
    assert_illegal(game, "foundation[0]>tableau[1]", "6♥", "7♥")


def test_a_foundation_card_never_moves_to_another_foundation():
    game = position(
        foundations={0: ["5S", "6H"], 1: ["5C"], 2: ["5D"]},
        tableau=FILLERS + [["3C"]],
    )
    assert_illegal(game, "foundation[0]>foundation[1]", code="wrong_target")
    assert_illegal(game, "foundation[2]>foundation[3]", code="wrong_target")
    assert not {move for move in legal(game) if move.count("foundation") == 2}


def test_an_emptied_foundation_takes_only_a_base_rank_card():
    game = position(foundations={0: ["5S"]}, tableau=[["6H"], ["5D"], ["4C"], *FILLERS[:8]])
    game.play("foundation[0]>tableau[0]")
    assert game.foundations[0] == []
    assert "tableau[1]>foundation[0]" in legal(game)
    assert_illegal(game, "tableau[2]>foundation[0]", "4♣", "5", code="not_accepted")


# -- tableau ---------------------------------------------------------------------------


def test_tableau_builds_down_by_one_rank_in_alternating_colour_without_wrap():
    game = position(
        tableau=[["8S"], ["7H"], ["7D"], ["7C"], ["6H"], ["9H"], ["AH"], ["KS"], *FILLERS[3:6]],
    )
    assert moves_to(game, "tableau[0]") == {"tableau[1]>tableau[0]", "tableau[2]>tableau[0]"}
    assert moves_to(game, "tableau[6]") == set()  # an ace takes nothing, not even a K
    assert_illegal(game, "tableau[3]>tableau[0]", "7♣", "8♠", code="not_accepted")
    assert_illegal(game, "tableau[7]>tableau[6]", "K♠", "A♥")


def test_tableau_moves_one_card_at_a_time():
    game = position(tableau=[["8S", "7H"], ["9D"], ["8C"], *FILLERS[:8]])
    assert "tableau[0]>tableau[1]" not in legal(game)
    game.play("tableau[0]>tableau[2]")
    assert table_texts(game, "tableau", 0) == ["8S"]
    assert table_texts(game, "tableau", 2) == ["8C", "7H"]


def test_an_emptied_tableau_pile_is_filled_at_once_from_the_stock():
    game = position(
        foundations={0: ["5S"]},
        tableau=[["6H"], *FILLERS],
        stock=["JC", "QC"],
        waste=["KC"],
    )
    ops = game.play("tableau[0]>foundation[0]")
    assert ops == [
        {"op": "move", "from": "tableau[0]", "to": "foundation[0]", "card": "6H"},
        {"op": "move", "from": "stock", "to": "tableau[0]", "card": "QC"},
    ]
    assert table_texts(game, "tableau", 0) == ["QC"]
    assert table_texts(game, "stock") == ["JC"]
    assert table_texts(game, "waste") == ["KC"]


def test_a_pile_emptied_by_a_tableau_to_tableau_move_is_filled_from_the_stock_too():
    game = position(tableau=[["7H"], ["8S"], *FILLERS[:9]], stock=["JC"])
    ops = game.play("tableau[0]>tableau[1]")
    assert ops[-1] == {"op": "move", "from": "stock", "to": "tableau[0]", "card": "JC"}
    assert table_texts(game, "tableau", 0) == ["JC"]
    assert table_texts(game, "tableau", 1) == ["8S", "7H"]
    assert game.stock == []


def test_once_the_stock_is_empty_an_emptied_pile_is_filled_from_the_waste():
    game = position(
        foundations={0: ["5S"]},
        tableau=[["6H"], *FILLERS],
        waste=["JC", "QC"],
    )
    ops = game.play("tableau[0]>foundation[0]")
    assert ops[-1] == {"op": "move", "from": "waste", "to": "tableau[0]", "card": "QC"}
    assert table_texts(game, "tableau", 0) == ["QC"]
    assert table_texts(game, "waste") == ["JC"]


def test_with_stock_and_waste_empty_an_emptied_pile_stays_empty_and_takes_any_card():
    game = position(
        foundations={0: ["5S", "6H"], 1: ["5D"]},
        tableau=[["7C"], ["KD"], *FILLERS[:9]],
        reserve=["QC"],
    )
    ops = game.play("tableau[0]>foundation[0]")
    assert len(ops) == 1
    assert game.tableau[0] == []
    assert moves_to(game, "tableau[0]") == {
        "reserve>tableau[0]",
        "foundation[0]>tableau[0]",
        "foundation[1]>tableau[0]",
        *(f"tableau[{i}]>tableau[0]" for i in range(1, 11)),
    }


def test_the_only_card_of_a_pile_may_move_to_an_empty_pile_once_stock_and_waste_are_empty():
    game = position(tableau=[[], ["KD"], *FILLERS[:9]])
    game.play("tableau[1]>tableau[0]")
    assert table_texts(game, "tableau", 0) == ["KD"]
    assert game.tableau[1] == []


def test_emptying_a_pile_does_not_refill_it_when_the_card_leaves_a_non_tableau_pile():
    game = position(
        foundations={0: ["5S"]},
        tableau=[["6D"], *FILLERS],
        reserve=["6H"],
        stock=["JC"],
    )
    ops = game.play("reserve>foundation[0]")
    assert len(ops) == 1
    assert game.reserve == []
    assert table_texts(game, "stock") == ["JC"]


# -- reserve ---------------------------------------------------------------------------


def test_nothing_may_be_moved_to_the_reserve():
    game = position(foundations={0: ["5S", "6H"]}, tableau=FILLERS + [["2C"]], waste=["3C"])
    for source in ("foundation[0]", "tableau[10]", "waste"):
        assert_illegal(game, f"{source}>reserve", code="wrong_target")


def test_the_reserve_top_card_may_go_to_a_tableau_pile_or_a_foundation():
    game = position(
        foundations={0: ["5D", "6C"]},
        tableau=[["8S"], ["8H"], *FILLERS[:9]],
        reserve=["KC", "7H"],
    )
    assert moves_from(game, "reserve") == {"reserve>tableau[0]", "reserve>foundation[0]"}
    game.play("reserve>tableau[0]")
    assert table_texts(game, "tableau", 0) == ["8S", "7H"]
    assert table_texts(game, "reserve") == ["KC"]


def test_only_the_reserve_top_card_is_playable():
    game = position(
        foundations={0: ["5D", "6C"]},
        tableau=[["8S"], *FILLERS],
        reserve=["7H", "KD"],
    )
    assert moves_from(game, "reserve") == set()


# -- stock and waste ---------------------------------------------------------------------


def test_deal_turns_one_card_onto_the_waste_in_one_pass_with_no_redeal():
    game = position(tableau=[["KS"], *FILLERS], stock=["2C", "3C"])
    assert "deal" in legal(game)
    game.play("deal")
    game.play("deal")
    assert table_texts(game, "waste") == ["3C", "2C"]
    assert_illegal(game, "deal", "stock is empty", code="no_deal")
    assert_illegal(game, "redeal", code="no_redeal")


def test_deal_is_legal_whatever_else_could_be_played():
    game = position(foundations={0: ["5D", "6S"]}, tableau=[["7H"], *FILLERS], stock=["2C"])
    assert legal(game) == {"tableau[0]>foundation[0]", "foundation[0]>tableau[0]", "deal"}


def test_no_card_leaves_the_stock_except_by_deal():
    game = position(foundations={0: ["5S"]}, tableau=[["7S"], *FILLERS], stock=["6H"])
    for target in ("tableau[0]", "foundation[0]", "waste", "reserve"):
        assert_illegal(game, f"stock>{target}", code="wrong_source")


def test_the_waste_top_card_may_go_to_a_tableau_pile_or_a_foundation():
    game = position(
        foundations={0: ["5D", "6C"]},
        tableau=[["8S"], ["8H"], *FILLERS[:9]],
        waste=["KC", "7H"],
    )
    assert moves_from(game, "waste") == {"waste>tableau[0]", "waste>foundation[0]"}
    assert_illegal(game, "waste>reserve", code="wrong_target")
    assert_illegal(game, "waste>stock", code="wrong_target")


def test_piles_the_game_does_not_have_are_refused():
    game = new_game("empress_of_italy", "tests")
    for move in ("bouquet>tableau[0]", "tableau[11]>tableau[0]", "tableau[0]>foundation[16]"):
        assert_illegal(game, move, code="no_such_pile")


# -- end of the game -------------------------------------------------------------------


def near_won() -> Game:
    """207 cards on the 16 foundations (base 5); the last, 4S, on tableau[0]."""
    piles = [run("5", 13, +1, suits) for suits in ("DC", "HS", "CD", "SH") for _ in range(4)]
    piles[15] = piles[15][:12]
    return position(foundations=piles, tableau={0: ["4S"]})


def test_the_game_is_won_when_all_208_cards_are_on_the_foundations():
    game = near_won()
    assert game.status == "playing"
    game.play("tableau[0]>foundation[15]")
    assert game.status == "won"
    assert game.score == 208
    assert game.legal_moves() == []
    assert_illegal(game, "foundation[0]>tableau[0]", code="game_over")
    assert_illegal(game, "resign", code="game_over")


def test_a_game_near_its_end_is_played_out_to_a_win_through_a_refill():
    piles = [run("5", 13, +1, suits) for suits in ("DC", "HS", "CD", "SH") for _ in range(4)]
    piles[15] = piles[15][:10]  # ... KS AH: 2S, 3H and 4S to come
    game = position(foundations=piles, reserve=["2S"], tableau={0: ["3H"]}, stock=["4S"])
    game.play("reserve>foundation[15]")
    ops = game.play("tableau[0]>foundation[15]")  # tableau[0] is refilled with 4S
    assert ops[-1] == {"op": "move", "from": "stock", "to": "tableau[0]", "card": "4S"}
    assert game.status == "playing"
    game.play("tableau[0]>foundation[15]")
    assert game.status == "won"
    assert game.score == 208


def test_the_game_is_stuck_when_nothing_fits_and_the_stock_is_spent():
    game = position(tableau=[["KS"], *FILLERS], stock=["10H"])
    assert legal(game) == {"deal"}
    game.play("deal")
    assert game.status == "stuck"
    assert game.legal_moves() == []


def test_resign_ends_the_game_and_the_score_counts_foundation_cards():
    game = new_game("empress_of_italy", "tests")
    assert game.score == 16
    game.play("resign")
    assert game.status == "resigned"
    assert game.score == 16
    assert_illegal(game, "deal", code="game_over")
