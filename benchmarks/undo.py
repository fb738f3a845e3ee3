"""The CPU cost of an ``undo`` on the server, against an ordinary move.

Run from the repository root::

    .venv/bin/python -m benchmarks.undo            # a few seconds
    .venv/bin/python -m benchmarks.undo --rounds 9

An ordinary move costs the server ``play`` + ``to_bytes`` + ``state_hash`` on its cached
game. An ``undo`` (``undo_logged``) replays from the deal the log's moves still in effect
but the last, then works out the ops and stores the result, so it grows with the moves in
effect: this measures it for logs of 100, 1,000 and 5,000 moves (the move limit), each a
seeded random game with undos in it (about one move in three), on Empress of Italy (the
biggest table), and, for comparison, rebuilding the whole ``Timeline`` (the audit's way,
a state kept per move). Figures are medians of CPU time (``time.process_time``) over ``--rounds``,
and ratios against the ordinary move of the same run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from server.rules import UNDO, Game, Timeline, moves_in_effect, new_game, undo_logged

GAME = "empress_of_italy"
LENGTHS = (100, 1000, 5000)


def log_of(length: int, seed: str) -> list[str]:
    """``length`` logged moves of a random game that never ends: a move that would end it
    is replaced by an undo."""
    chooser = random.Random(seed)
    timeline = Timeline(new_game(GAME, seed))
    moves: list[str] = []
    while len(moves) < length:
        legal = timeline.game.legal_moves()
        move = UNDO if timeline.undoable and chooser.random() < 0.33 else chooser.choice(legal)
        if move != UNDO:
            trial = timeline.game.copy()
            trial.play(move)
            if trial.is_over:
                move = UNDO
        timeline.play(move)
        moves.append(move)
    return moves


def cpu_ms(function: object, repeat: int) -> float:
    assert callable(function)
    start = time.process_time()
    for _ in range(repeat):
        function()
    return (time.process_time() - start) * 1000 / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    seed = "bench-undo"

    game = new_game(GAME, seed)
    legal = game.legal_moves()

    def ordinary_move() -> None:
        copy = game.copy()
        copy.play(legal[0])
        copy.to_bytes()
        copy.state_hash()

    # The copy is not part of a server move: measure it alone and take it off.
    copy_ms = statistics.median(cpu_ms(game.copy, 2000) for _ in range(rounds))
    move_ms = statistics.median(cpu_ms(ordinary_move, 2000) for _ in range(rounds)) - copy_ms
    print(f"{GAME}: ordinary move (play + to_bytes + state_hash): {move_ms * 1000:.1f} µs")
    print(
        f"{'log length':>10} | {'in effect':>9} | {'undo (ms)':>9} | {'× a move':>8} | "
        f"{'Timeline (ms)':>13}"
    )
    for length in LENGTHS:
        deal_seed = f"{seed}-{length}"
        moves = log_of(length, deal_seed)
        current = Timeline.replay(new_game(GAME, deal_seed), moves).game

        def undo(moves: list[str] = moves, deal_seed: str = deal_seed, now: Game = current) -> None:
            earlier, _ = undo_logged(now, new_game(GAME, deal_seed), moves)
            earlier.to_bytes()
            earlier.state_hash()

        def rebuild(moves: list[str] = moves, deal_seed: str = deal_seed) -> None:
            Timeline.replay(new_game(GAME, deal_seed), moves).play(UNDO)

        repeat = max(1, 2000 // length)
        undo_ms = statistics.median(cpu_ms(undo, repeat) for _ in range(rounds))
        rebuild_ms = statistics.median(cpu_ms(rebuild, repeat) for _ in range(rounds))
        effect = len(moves_in_effect(moves))
        print(
            f"{length:>10} | {effect:>9} | {undo_ms:>9.2f} | {undo_ms / move_ms:>8.0f} | "
            f"{rebuild_ms:>13.2f}"
        )


if __name__ == "__main__":
    main()
