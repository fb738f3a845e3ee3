"""Matrimony (2 decks), line by line from RULES.md."""

from __future__ import annotations

import pytest
from rules_testkit import assert_illegal, legal, run, set_piles, table_texts, texts

from protocol.cards import parse_card
from protocol.rng import shuffled_deck
from server.rules import Game, load_game, new_game

#: "a", "e" and "f" have a Q♦ or a J♦ among the first 16 cards (at the very front for "e"
#: and "f"), so the tableau is dealt around it.
SEEDS = ["tests", "daily:2026-11-29", "a", "e", "f"]

FIRST_CARDS = ["QD", "JD", "JH", "JH", "10S", "10S", "10C", "10C"]


def position(**piles) -> Game:
    """A Matrimony table holding only the given cards (foundation[0] Q♦ and [1] J♦ unless
    given), 16 redeals left unless told."""
    given = piles.get("foundations", {})
    if isinstance(given, list):
        given = dict(enumerate(given))
    piles["foundations"] = {0: ["QD"], 1: ["JD"], **given}
    piles.setdefault("redeals_left", 16)
    return set_piles(new_game("matrimony", "tests"), clear=True, **piles)


def moves_from(game: Game, source: str) -> set[str]:
    return {move for move in legal(game) if move.startswith(source + ">")}


def moves_to(game: Game, target: str) -> set[str]:
    return {move for move in legal(game) if move.endswith(">" + target)}


def expected_deal(seed: str) -> dict[str, list[int]]:
    """The layout RULES.md describes, worked out from the shuffled deck."""
    deck = shuffled_deck(seed, 2)
    queen = next(card for card in deck if card % 52 == parse_card("QD"))
    jack = next(card for card in deck if card % 52 == parse_card("JD"))
    left = [card for card in deck if card not in (queen, jack)]
    return {"foundations": [queen, jack], "tableau": left[:16], "stock_in_deal_order": left[16:]}


def redeal_by_hand(piles: list[list[str]], k: int) -> None:
    """Redeal ``k`` as RULES.md words it, on a list of 16 piles of texts."""
    source = 16 - k
    packet, piles[source] = piles[source], []
    for offset, card in enumerate(packet):  # the former bottom card first
        piles[(source + offset) % 16].append(card)


# -- deal ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_the_first_queen_and_jack_of_diamonds_start_foundations_0_and_1(seed):
    expected = expected_deal(seed)
    game = new_game("matrimony", seed)
    assert game.foundations[:2] == [[expected["foundations"][0]], [expected["foundations"][1]]]
    assert game.foundations[2:] == [[]] * 6
    assert table_texts(game, "foundation", 0) == ["QD"]
    assert table_texts(game, "foundation", 1) == ["JD"]


@pytest.mark.parametrize("seed", SEEDS)
def test_then_1_card_to_each_of_16_tableau_piles_and_86_to_the_stock(seed):
    expected = expected_deal(seed)
    game = new_game("matrimony", seed)
    assert game.tableau == [[card] for card in expected["tableau"]]
    assert game.stock == expected["stock_in_deal_order"][::-1]
    assert len(game.stock) == 86
    assert game.redeals_left == 16
    assert game.view()["stock"] == {"count": 86}
    assert game.view()["redeals_left"] == 16


# -- foundations -----------------------------------------------------------------------


def test_the_six_empty_foundations_accept_only_their_own_first_card():
    game = position(
        tableau=[["JH"], ["10S"], ["10C"], ["JD"], ["QD"], ["JC"], ["10H"], ["9C"], ["JS"]],
        redeals_left=0,
    )
    expected = set()
    for source, card in enumerate(["JH", "10S", "10C"]):
        for target, first in enumerate(FIRST_CARDS):
            if first == card:
                expected.add(f"tableau[{source}]>foundation[{target}]")
    assert len(expected) == 6
    assert legal(game) == expected
    assert_illegal(game, "tableau[3]>foundation[2]", "J♦", code="not_accepted")
    assert_illegal(game, "tableau[0]>foundation[4]", "J♥", code="not_accepted")
    assert_illegal(game, "tableau[8]>foundation[4]", "J♠", code="not_accepted")


def test_foundation_0_builds_up_in_suit_from_the_queen_with_wrap():
    game = position(tableau=[["KD"], ["KH"], ["JD"], ["AD"]])
    assert moves_to(game, "foundation[0]") == {"tableau[0]>foundation[0]"}
    assert_illegal(game, "tableau[2]>foundation[0]", "J♦", "Q♦")
    game.play("tableau[0]>foundation[0]")
    assert "tableau[3]>foundation[0]" in legal(game)  # after the K comes the A


def test_foundation_0_holds_13_cards_from_queen_up_to_jack():
    full = run("Q", 13, +1, "D")
    assert full[-1] == "JD"
    game = position(foundations={0: full, 1: ["JD", "10D"]}, tableau=[["QD"]], redeals_left=0)
    assert legal(game) == set()  # the other Q♦ could follow with wrap, but the pile is full


def test_the_other_foundations_build_down_in_suit_with_wrap():
    game = position(tableau=[["10D"], ["10H"], ["QD"], ["9D"]])
    assert moves_to(game, "foundation[1]") == {"tableau[0]>foundation[1]"}
    assert_illegal(game, "tableau[1]>foundation[1]", "10♥", "J♦")
    game = position(foundations={1: run("J", 11, -1, "D")}, tableau=[["KD"], ["QD"], ["2D"]])
    assert moves_to(game, "foundation[1]") == {"tableau[0]>foundation[1]"}  # K after the A


def test_the_ten_piles_end_on_the_jack_and_hold_13_cards():
    spades = run("10", 13, -1, "S")
    assert spades[-1] == "JS"
    piles = {4: spades, 5: run("10", 12, -1, "S")}
    game = position(foundations=piles, tableau=[["JS"]], redeals_left=0)
    assert legal(game) == {"tableau[0]>foundation[5]"}


def test_a_down_pile_of_13_cards_takes_nothing_more():
    game = position(foundations={2: run("J", 13, -1, "H")}, tableau=[["JH"]], stock=["5C"])
    assert moves_from(game, "tableau[0]") == {"tableau[0]>foundation[3]"}


def test_no_card_leaves_a_foundation():
    game = position(foundations={2: ["JH"]}, tableau=[[], ["QH"], ["KS"]], stock=["5C"])
    assert not {move for move in legal(game) if move.startswith("foundation")}
    for move in ("foundation[2]>tableau[0]", "foundation[2]>foundation[3]", "foundation[0]>stock"):
        assert_illegal(game, move, code="wrong_source")


# -- tableau ---------------------------------------------------------------------------


def test_the_tableau_does_not_build_its_top_cards_go_to_foundations_only():
    game = position(tableau=[["9S"], ["8H"], ["KD"], []], stock=["5C"])
    assert legal(game) == {"tableau[2]>foundation[0]", "deal"}
    assert_illegal(game, "tableau[1]>tableau[0]", code="wrong_target")
    assert_illegal(game, "tableau[0]>tableau[3]", code="wrong_target")
    assert_illegal(game, "tableau[0]>stock", code="wrong_target")


def test_only_the_top_card_of_a_tableau_pile_moves():
    game = position(tableau=[["KD", "5C"]], stock=["5S"])
    assert legal(game) == {"deal"}


# -- stock -----------------------------------------------------------------------------


def test_deal_puts_one_card_on_each_tableau_pile_in_order():
    game = position(tableau=[["5C"]] * 2 + [["6C"]] * 2, stock=run("A", 16, +1, "S", wrap=True))
    stock = table_texts(game, "stock")
    ops = game.play("deal")
    dealt = stock[::-1]  # the stock's next card is its last
    assert ops == [
        {"op": "move", "from": "stock", "to": f"tableau[{i}]", "card": card}
        for i, card in enumerate(dealt)
    ]
    assert [pile[-1] for pile in game.table()["tableau"]] == dealt
    assert game.stock == []


def test_a_short_stock_deals_to_the_first_piles_only():
    game = position(tableau=[["5C"]] * 2, stock=["2S", "3S", "4S"])
    game.play("deal")
    assert game.table()["tableau"][:4] == [["5C", "4S"], ["5C", "3S"], ["2S"], []]
    assert all(pile == [] for pile in game.tableau[4:])


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_the_stock_deals_5_full_rounds_then_6_cards(seed):
    stock = texts(expected_deal(seed)["stock_in_deal_order"])
    game = new_game("matrimony", seed)
    tableau = [[card] for card in texts(expected_deal(seed)["tableau"])]
    for round_number in range(6):
        assert "deal" in legal(game)
        ops = game.play("deal")
        cards = stock[16 * round_number : 16 * round_number + 16]
        assert len(ops) == (16 if round_number < 5 else 6)
        for index, card in enumerate(cards):
            tableau[index].append(card)
        assert game.table()["tableau"] == tableau
    assert game.stock == []
    assert "deal" not in legal(game)
    assert_illegal(game, "deal", "stock is empty", code="no_deal")


def test_dealing_is_allowed_at_any_time_while_the_stock_has_cards():
    game = position(tableau=[["KD"], ["10D"], ["JH"]], stock=["5C"])
    assert "deal" in legal(game)
    assert "redeal" not in legal(game)
    assert_illegal(game, "redeal", "stock", code="no_redeal")


def test_no_card_leaves_the_stock_except_by_deal():
    game = position(tableau=[["5C"]], stock=["KD"])
    assert_illegal(game, "stock>foundation[0]", code="wrong_source")
    assert_illegal(game, "stock>tableau[0]", code="wrong_source")


# -- redeals ---------------------------------------------------------------------------


def test_redeal_becomes_legal_once_the_stock_is_empty():
    game = position(tableau=[["5C"]], stock=["6C"])
    game.play("deal")
    assert legal(game) == {"redeal"}


def test_the_first_redeal_picks_up_the_last_pile_and_deals_it_from_its_bottom_card():
    piles = [[f"{rank}C"] for rank in ("2", "3", "4", "5", "6", "7", "8", "9")] * 2
    piles[15] = ["AS", "2S", "3S", "4S"]  # bottom first
    game = position(tableau=piles)
    game.play("redeal")
    table = game.table()["tableau"]
    assert table[15] == ["AS"]  # the former bottom card goes back on the same pile
    assert table[0] == ["2C", "2S"]  # then the first pile, the second, ...
    assert table[1] == ["3C", "3S"]
    assert table[2] == ["4C", "4S"]
    assert table[3:15] == piles[3:15]
    assert game.redeals_left == 15


def test_redeal_k_picks_up_pile_16_minus_k_last_pile_first_first_pile_last():
    piles = [[f"{rank}C", f"{rank}H"] for rank in ("A", "2", "3", "4", "5", "6", "7", "8")] * 2
    game = position(tableau=piles)
    expected = [list(pile) for pile in piles]
    for k in range(1, 17):
        assert game.redeals_left == 17 - k
        game.play("redeal")
        redeal_by_hand(expected, k)
        assert game.table()["tableau"] == expected, k
    assert game.redeals_left == 0
    assert "redeal" not in legal(game)
    assert game.status == "stuck"  # nothing here fits a foundation


def test_no_redeal_after_the_sixteenth():
    game = position(tableau=[["KD"]], redeals_left=0)
    assert legal(game) == {"tableau[0]>foundation[0]"}
    assert_illegal(game, "redeal", "16", code="no_redeal")


def test_a_packet_longer_than_16_cards_wraps_round_past_its_own_pile():
    packet = run("A", 13, +1, "S") + run("A", 5, +1, "H")  # 18 cards
    game = position(tableau={15: packet})
    game.play("redeal")
    table = game.table()["tableau"]
    assert table[15] == ["AS", "4H"]  # 1st and 17th
    assert table[0] == ["2S", "5H"]  # 2nd and 18th
    assert table[1] == ["3S"]
    assert table[14] == ["3H"]  # 16th


def test_an_empty_piles_redeal_is_used_up_and_does_nothing():
    game = position(tableau={0: ["5C"], 3: ["6S", "7S"]})
    before = game.table()["tableau"]
    game.play("redeal")  # redeal 1: tableau[15] is empty
    assert game.table()["tableau"] == before
    assert game.redeals_left == 15
    for _ in range(11):  # redeals 2..12: tableau[14..4], all empty
        game.play("redeal")
    assert game.table()["tableau"] == before
    game.play("redeal")  # redeal 13: tableau[3], [6S, 7S] -> 6S on [3], 7S on [4]
    assert game.table()["tableau"][3:5] == [["6S"], ["7S"]]
    assert game.redeals_left == 3


def test_the_redeal_ops_set_each_pile_it_changed_in_pile_order():
    game = position(tableau={0: ["9C"], 14: ["5C"], 15: ["6S", "7S", "8S"]})
    assert game.play("redeal") == [
        {"op": "set", "pile": "tableau[0]", "cards": ["9C", "7S"]},
        {"op": "set", "pile": "tableau[1]", "cards": ["8S"]},
        {"op": "set", "pile": "tableau[15]", "cards": ["6S"]},
    ]


def test_the_redeal_of_an_empty_pile_sets_that_pile_empty():
    game = position(tableau={0: ["9C"]})
    assert game.play("redeal") == [{"op": "set", "pile": "tableau[15]", "cards": []}]


def test_a_stored_game_keeps_its_redeals_left():
    game = position(tableau={0: ["9C"]})
    game.play("redeal")
    game.play("redeal")
    loaded = load_game(game.to_bytes())
    assert loaded.redeals_left == 14
    assert loaded.table() == game.table()


def test_redeal_is_legal_whatever_else_could_be_played():
    game = position(tableau=[["KD"]])
    assert legal(game) == {"tableau[0]>foundation[0]", "redeal"}


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_whole_game_of_deals_and_redeals_matches_the_rules_by_hand(seed):
    game = new_game("matrimony", seed)
    for _ in range(6):
        game.play("deal")
    expected = game.table()["tableau"]
    for k in range(1, 17):
        game.play("redeal")
        redeal_by_hand(expected, k)
        assert game.table()["tableau"] == expected
        assert game.table()["redeals_left"] == 16 - k


# -- end of the game -------------------------------------------------------------------


def near_won() -> Game:
    """103 cards on the foundations; the last, JC, on tableau[5]."""
    starts = [("Q", +1, "D"), ("J", -1, "D"), ("J", -1, "H"), ("J", -1, "H")]
    starts += [("10", -1, "S")] * 2 + [("10", -1, "C")] * 2
    piles = [run(rank, 13, step, suit) for rank, step, suit in starts]
    piles[7] = piles[7][:12]
    return position(foundations=piles, tableau={5: ["JC"]}, redeals_left=0)


def test_the_game_is_won_when_all_104_cards_are_on_the_foundations():
    game = near_won()
    assert legal(game) == {"tableau[5]>foundation[7]"}
    game.play("tableau[5]>foundation[7]")
    assert game.status == "won"
    assert game.score == 104
    assert game.legal_moves() == []
    assert_illegal(game, "resign", code="game_over")


def test_a_game_near_its_end_is_played_out_to_a_win_through_a_deal_and_a_redeal():
    starts = [("Q", +1, "D"), ("J", -1, "D"), ("J", -1, "H"), ("J", -1, "H")]
    starts += [("10", -1, "S")] * 2 + [("10", -1, "C")] * 2
    piles = [run(rank, 13, step, suit) for rank, step, suit in starts]
    piles[7] = piles[7][:10]  # 10C ... AC: KC, QC and JC to come
    game = position(foundations=piles, tableau={15: ["KC", "QC"]}, stock=["JC"])
    game.play("deal")  # JC onto tableau[0]
    game.play("redeal")  # tableau[15]: KC back onto it, QC onto tableau[0]
    assert game.table()["tableau"][0] == ["JC", "QC"]
    assert game.table()["tableau"][15] == ["KC"]
    for move in ("tableau[15]>foundation[7]", "tableau[0]>foundation[7]"):
        game.play(move)
        assert game.status == "playing"
    game.play("tableau[0]>foundation[7]")
    assert game.status == "won"
    assert game.score == 104


def test_lost_when_the_stock_is_empty_the_16_redeals_are_used_and_no_top_card_fits():
    game = position(tableau=[["5C"], ["KS", "9H"]], redeals_left=1)
    assert legal(game) == {"redeal"}
    game.play("redeal")  # redeal 16 picks up tableau[0]: 5C goes back on it
    assert game.status == "stuck"
    assert game.legal_moves() == []


def test_a_redeal_left_keeps_the_game_going_even_with_nothing_else_to_play():
    game = position(tableau=[["5C"]], redeals_left=2)
    assert game.status == "playing"
    game.play("redeal")
    assert game.status == "playing"
    game.play("redeal")
    assert game.status == "stuck"


def test_resign_and_score():
    game = new_game("matrimony", "tests")
    assert game.score == 2
    game.play("resign")
    assert game.status == "resigned"
    assert_illegal(game, "deal", code="game_over")
