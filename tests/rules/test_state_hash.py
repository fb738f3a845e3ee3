"""The engine's fast state hash is exactly the one STATE.md defines."""

from __future__ import annotations

import hashlib
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules import GAME_NAMES, Game, new_game


def reference_hash(game: Game) -> str:
    """STATE.md §1, written the slow, obvious way."""
    document = {"game": game.name, "seed": game.seed, "status": game.status, "table": game.table()}
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(GAME_NAMES),
    seed=st.text(alphabet="abcXYZ019._:-", min_size=1, max_size=20),
    choices=st.randoms(use_true_random=False),
)
def test_state_hash_matches_state_md_along_random_play(
    name: str, seed: str, choices: random.Random
) -> None:
    game = new_game(name, seed)
    assert game.state_hash() == reference_hash(game)
    for _ in range(120):
        moves = game.legal_moves()
        if not moves:
            break
        game.play(choices.choice(moves))
        assert game.state_hash() == reference_hash(game)
    if game.status == "playing":
        game.play("resign")
    assert game.state_hash() == reference_hash(game)


def test_is_legal_agrees_with_the_listed_moves_for_every_pile_pair() -> None:
    for name in GAME_NAMES:
        game = new_game(name, "is-legal")
        piles = [str(pile) for pile in game.piles_of_layout] + ["reserve", "waste", "bouquet"]
        for _ in range(60):
            listed = set(game.legal_moves())
            for source in piles:
                for target in piles:
                    move = f"{source}>{target}"
                    assert game.is_legal(move) == (move in listed), (name, move)
            assert game.is_legal("deal") == ("deal" in listed)
            assert game.is_legal("redeal") == ("redeal" in listed)
            if not listed:
                break
            game.play(sorted(listed)[len(listed) // 2])
