"""``undo`` (server/rules/undo.py): exact reversal, its ops, and when it is refused."""

from __future__ import annotations

import copy
import random

import pytest

from clients.python.ops import apply_ops
from server.rules import (
    GAME_NAMES,
    UNDO,
    IllegalMove,
    Timeline,
    moves_in_effect,
    new_game,
    undo_logged,
)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_undo_restores_the_exact_earlier_state_and_its_ops_take_the_view_back(name: str) -> None:
    chooser = random.Random(name)
    undos = 0
    for deal in range(6):
        timeline = Timeline(new_game(name, f"undo-{deal}"))
        states, views = [timeline.game.to_bytes()], [timeline.game.view()]
        for _ in range(400):
            if timeline.game.status != "playing":
                break
            view = copy.deepcopy(views[-1])
            if timeline.undoable and chooser.random() < 0.35:
                move = UNDO
                ops = timeline.play(move)
                undos += 1
                states.pop(), views.pop()
            else:
                move = chooser.choice(timeline.game.legal_moves())
                ops = timeline.play(move)
                states.append(timeline.game.to_bytes())
                views.append(timeline.game.view())
            assert timeline.game.to_bytes() == states[-1]
            assert timeline.undoable == len(states) - 1 or timeline.game.status != "playing"
            # The ops take the client's view there (DIFF.md §5).
            assert apply_ops(view, ops, move) == views[-1]
    assert undos > 10


def test_several_undos_go_back_to_the_deal_then_nothing_is_left_to_undo() -> None:
    game = new_game("balcony", "undo-back")
    dealt = game.to_bytes()
    timeline = Timeline(game)
    for _ in range(3):
        timeline.play(timeline.game.legal_moves()[0])
    for _ in range(3):
        timeline.play(UNDO)
    assert timeline.game.to_bytes() == dealt and timeline.undoable == 0
    with pytest.raises(IllegalMove) as refused:
        timeline.play(UNDO)
    assert refused.value.code == "nothing_to_undo"


def test_an_undone_move_is_not_undone_twice() -> None:
    """Undo takes back moves still in effect: undo, move, undo, undo reaches the deal."""
    timeline = Timeline(new_game("matrimony", "undo-twice"))
    dealt = timeline.game.to_bytes()
    timeline.play("deal")
    timeline.play(UNDO)
    timeline.play("deal")
    after_deal = timeline.game.to_bytes()
    timeline.play(timeline.game.legal_moves()[0])
    timeline.play(UNDO)
    assert timeline.game.to_bytes() == after_deal
    timeline.play(UNDO)
    assert timeline.game.to_bytes() == dealt


def test_undo_of_a_redeal_gives_the_redeal_back() -> None:
    timeline = Timeline(new_game("matrimony", "undo-redeal"))
    while timeline.game.can_deal() is None:
        timeline.play("deal")
    left = timeline.game.redeals_left
    timeline.play("redeal")
    ops = timeline.play(UNDO)
    assert timeline.game.redeals_left == left
    assert {"op": "redeals_left", "count": left} in ops


def test_undo_is_refused_in_a_ranked_game_and_in_a_game_that_is_over() -> None:
    ranked = Timeline(new_game("colorado", "undo-ranked"), ranked=True)
    ranked.play(ranked.game.legal_moves()[0])
    with pytest.raises(IllegalMove) as refused:
        ranked.play(UNDO)
    assert refused.value.code == "undo_ranked"
    over = Timeline(new_game("colorado", "undo-over"))
    over.play(over.game.legal_moves()[0])
    over.play("resign")
    with pytest.raises(IllegalMove) as refused:
        over.play(UNDO)
    assert refused.value.code == "game_over" and over.undoable == 0


def test_replay_gives_the_same_game_as_playing_move_by_move() -> None:
    chooser = random.Random(7)
    live = Timeline(new_game("empress_of_italy", "undo-replay"))
    moves = []
    for _ in range(60):
        move = UNDO if live.undoable and chooser.random() < 0.3 else None
        move = move or chooser.choice(live.game.legal_moves())
        live.play(move)
        moves.append(move)
    replayed = Timeline.replay(new_game("empress_of_italy", "undo-replay"), moves)
    assert replayed.game.to_bytes() == live.game.to_bytes()
    assert replayed.undoable == live.undoable


def test_undoing_a_card_move_moves_it_back() -> None:
    """Clients can show the card going back: a ``move`` op, not a ``set``."""
    timeline = Timeline(new_game("empress_of_italy", "undo-move-back"))
    move = next(m for m in timeline.game.legal_moves() if ">" in m)
    played = timeline.play(move)
    undone = timeline.play(UNDO)
    assert [(op["from"], op["to"], op["card"]) for op in undone] == [
        (op["to"], op["from"], op["card"]) for op in reversed(played)
    ]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_the_servers_undo_from_the_log_is_the_timelines(name: str) -> None:
    """``undo_logged`` (the server: replay of the moves in effect) and ``Timeline`` (the
    audit: a stack of states) give the same game and the same ops."""
    chooser = random.Random(f"logged-{name}")
    timeline = Timeline(new_game(name, "undo-logged"))
    log: list[str] = []
    checked = 0
    for _ in range(150):
        if timeline.game.status != "playing":
            break
        if timeline.undoable and chooser.random() < 0.4:
            current = timeline.game.copy()
            earlier, ops = undo_logged(current, new_game(name, "undo-logged"), log)
            assert ops == timeline.play(UNDO)
            assert earlier.to_bytes() == timeline.game.to_bytes()
            assert moves_in_effect([*log, UNDO]) == moves_in_effect(log)[:-1]
            log.append(UNDO)
            checked += 1
        else:
            move = chooser.choice(timeline.game.legal_moves())
            timeline.play(move)
            log.append(move)
    assert checked > 3
    with pytest.raises(IllegalMove) as refused:
        undo_logged(new_game(name, "x"), new_game(name, "x"), ["undo"])
    assert refused.value.code == "nothing_to_undo"
