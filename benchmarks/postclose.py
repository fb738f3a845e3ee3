"""The CPU cost of the post-close audit (``server.operator.postclose``), per game.

Run from the repository root::

    .venv/bin/python -m benchmarks.postclose                  # about a minute
    .venv/bin/python -m benchmarks.postclose --attempts 40 --clairvoyant 6

For each game it deals ``--attempts`` seeded deals, plays each as a person would
(foundation moves first, else a random legal move, 400-3000 ms apart, up to 300 moves,
then ``resign``), builds its replay export with the real hash chain, and times, in CPU
seconds (``time.process_time``), what the post-close audit's child runs on one attempt:
the audit without clairvoyance (integrity, timing) on every attempt, and with it (where
the game has a face-down stock) on ``--clairvoyant`` of them.  The baseline of the same
run is the engine replaying the same moves alone (the floor of any audit).  It prints
attempts audited per CPU second per game, and the projected CPU hours for 10,000 attempts
a day (spread evenly over the five games), with and without clairvoyance.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from protocol import chain
from server.audit.clairvoyance import WITH_CLAIRVOYANCE, is_examined
from server.audit.core import EXPORT_SIGNALS, FORMAT, audit
from server.rules import GAMES, new_game

DAY_ATTEMPTS = 10_000
MAX_MOVES = 300
START_MS = 1_773_482_400_000  # 2026-03-14 10:00 UTC


def export_of(name: str, seed: str, rng: random.Random) -> dict[str, Any]:
    """A finished game's replay export, played as a person would."""
    game = new_game(name, seed)
    game_id = f"g_bench_{name}_{seed}"
    link = chain.genesis(game_id, name, game.state_hash())
    deal_hash = game.state_hash()
    now, moves = START_MS, []
    for version in range(1, MAX_MOVES + 1):
        if game.status != "playing":
            break
        legal = game.legal_moves()
        up = [move for move in legal if ">foundation" in move]
        move = rng.choice(up or legal) if version < MAX_MOVES else "resign"
        game.play(move)
        now += rng.randint(400, 3000)
        state_hash = game.state_hash()
        link = chain.next_link(link, version, move, now, state_hash)
        moves.append(
            {
                "version": version,
                "move": move,
                "server_time": now,
                "client_time": None,
                "state_hash": state_hash,
                "hash": link,
            }
        )
    if game.status == "playing":
        raise RuntimeError("the game did not end")
    return {
        "format": FORMAT,
        "game_id": game_id,
        "game": name,
        "daily": "2026-03-14",
        "owner": "p_bench",
        "seed": seed,
        "deal_hash": deal_hash,
        "created_at": START_MS,
        "finished_at": now,
        "status": game.status,
        "score": game.score,
        "moves": moves,
        "chain_head": link,
    }


def floor(export: dict[str, Any]) -> None:
    game = new_game(export["game"], export["seed"])
    for entry in export["moves"]:
        game.play(entry["move"])
        game.state_hash()


def cpu_of(function: Any, *args: Any) -> float:
    started = time.process_time()
    function(*args)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attempts", type=int, default=20, help="attempts per game")
    parser.add_argument("--clairvoyant", type=int, default=3, help="of them with clairvoyance")
    args = parser.parse_args()
    rng = random.Random(25)
    plain_hours = clairvoyant_hours = 0.0
    print(f"{'game':<17} {'moves':>6} {'floor ms':>9} {'audit ms':>9} {'x floor':>8} "
          f"{'audits/cpu-s':>13} {'clairv. ms':>11} {'clairv./cpu-s':>14}")  # fmt: skip
    for name in GAMES:
        exports = [export_of(name, f"bench-{k:04d}", rng) for k in range(args.attempts)]
        for export in exports[:2]:  # warm-up, and a check that it is honest
            assert audit(export).integrity == "pass"
        base = sum(cpu_of(floor, export) for export in exports) / len(exports)
        plain = sum(cpu_of(audit, export, None, EXPORT_SIGNALS) for export in exports)
        plain /= len(exports)
        clairvoyant = plain
        if is_examined(name):
            sample = exports[: args.clairvoyant]
            clairvoyant = sum(cpu_of(audit, e, None, WITH_CLAIRVOYANCE) for e in sample)
            clairvoyant /= len(sample)
        moves = sum(len(export["moves"]) for export in exports) / len(exports)
        share = DAY_ATTEMPTS / len(GAMES)
        plain_hours += share * plain / 3600
        clairvoyant_hours += share * clairvoyant / 3600
        print(
            f"{name:<17} {moves:>6.0f} {base * 1000:>9.2f} {plain * 1000:>9.2f} "
            f"{plain / base:>8.2f} {1 / plain:>13.1f} {clairvoyant * 1000:>11.1f} "
            f"{1 / clairvoyant:>14.2f}"
        )
    print(
        f"10,000 attempts a day (2,000 per game) on one core: {plain_hours:.2f} CPU hours "
        f"without clairvoyance, {clairvoyant_hours:.2f} with it on every attempt"
    )


if __name__ == "__main__":
    main()
