"""Tests for the seeded RNG (protocol/rng.py), the card-id convention and the rng vectors."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import cards
from protocol.rng import (
    InvalidSeed,
    SeedRng,
    random_seed,
    shuffled_deck,
    validate_seed,
)
from tools.vectors import VECTORS_PATH, build_rng_vectors, dumps

SEED_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
seeds = st.text(alphabet=SEED_CHARS, min_size=1, max_size=128)


def load_vectors() -> dict:
    return json.loads(Path(VECTORS_PATH).read_text(encoding="utf-8"))


# --- vectors -------------------------------------------------------------------------------


def test_vectors_file_rng_part_is_rederived_exactly() -> None:
    doc = load_vectors()
    assert doc["format"] == 1
    assert doc["rng"] == build_rng_vectors()


def test_vectors_file_is_canonical_json() -> None:
    text = Path(VECTORS_PATH).read_text(encoding="utf-8")
    assert text == dumps(json.loads(text))


def test_vectors_cover_the_agreed_cases() -> None:
    rng = load_vectors()["rng"]
    assert [s["seed"] for s in rng["seeds"]] == [
        "abc",
        "0",
        "daily:2026-11-29",
        "Z" * 128,
        "seed-with.dots_and:colons-1",
    ]
    for entry in rng["seeds"]:
        assert len(entry["u32"]) == 16
        for n in (1, 7, 52, 104, 208, 2**32 - 1):
            assert len(entry["below"][str(n)]) == 16
        assert sorted(entry["shuffled_deck"]) == ["1", "2", "4"]


def test_vectors_exercise_rejection() -> None:
    """At least one below() list must differ from plain ``word % n`` (i.e. a word is rejected)."""
    rejected = False
    for entry in load_vectors()["rng"]["seeds"]:
        for key, values in entry["below"].items():
            n = int(key)
            if values != [w % n for w in entry["u32"]]:
                rejected = True
    assert rejected


# --- stream --------------------------------------------------------------------------------


def test_block_0_of_abc_is_sha256_of_abc_colon_0() -> None:
    expected = struct.unpack(">8I", hashlib.sha256(b"abc:0").digest())
    rng = SeedRng("abc")
    assert tuple(rng.next_u32() for _ in range(8)) == expected
    assert expected[0] == 1597435854 == 0x5F36EFCE


def test_stream_continues_with_block_1_then_10() -> None:
    rng = SeedRng("abc")
    words = [rng.next_u32() for _ in range(88)]
    assert words[8:16] == list(struct.unpack(">8I", hashlib.sha256(b"abc:1").digest()))
    assert words[80:88] == list(struct.unpack(">8I", hashlib.sha256(b"abc:10").digest()))


def test_words_are_u32() -> None:
    rng = SeedRng("range")
    assert all(0 <= rng.next_u32() < 2**32 for _ in range(1000))


# --- below ---------------------------------------------------------------------------------


class ScriptedRng(SeedRng):
    """A SeedRng whose stream is a fixed list of words."""

    def __init__(self, words: list[int]) -> None:
        super().__init__("scripted")
        self.script = list(words)

    def next_u32(self) -> int:
        return self.script.pop(0)


def test_below_rejects_words_at_or_above_limit() -> None:
    n = 52
    limit = 2**32 - (2**32 % n)
    assert limit == 4294967248
    rng = ScriptedRng([limit, 2**32 - 1, limit - 1, 5])
    assert rng.below(n) == (limit - 1) % n
    assert rng.script == [5]


def test_below_rejection_for_n_just_under_2_32() -> None:
    rng = ScriptedRng([2**32 - 1, 2**32 - 2])
    assert rng.below(2**32 - 1) == 2**32 - 2
    assert rng.script == []


def test_below_never_rejects_for_powers_of_two() -> None:
    top = 2**32 - 1
    assert ScriptedRng([top]).below(2**32) == top
    assert ScriptedRng([top]).below(1) == 0
    assert ScriptedRng([top]).below(64) == 63


def test_below_real_stream_rejects_for_half_range() -> None:
    # For seed "abc", n = 2**31 + 1: words 1 and 2 are >= limit and must be skipped.
    rng = SeedRng("abc")
    assert [rng.below(2**31 + 1) for _ in range(3)] == [1597435854, 1446489010, 1126616180]


@pytest.mark.parametrize("n", [0, -1, 2**32 + 1, 1.5, True])
def test_below_rejects_bad_n(n: object) -> None:
    with pytest.raises(ValueError):
        SeedRng("abc").below(n)  # type: ignore[arg-type]


@given(seed=seeds, n=st.integers(min_value=1, max_value=2**32))
def test_below_in_range(seed: str, n: int) -> None:
    rng = SeedRng(seed)
    assert all(0 <= rng.below(n) < n for _ in range(20))


def test_worked_example_below_52() -> None:
    rng = SeedRng("abc")
    assert [rng.below(52) for _ in range(10)] == [14, 31, 46, 18, 27, 40, 32, 48, 40, 32]


# --- shuffle -------------------------------------------------------------------------------


def test_shuffle_is_permutation_and_deterministic() -> None:
    items = list("abcdefghijklmnopqrstuvwxyz")
    a, b = items[:], items[:]
    SeedRng("perm").shuffle(a)
    SeedRng("perm").shuffle(b)
    assert a == b
    assert sorted(a) == items
    assert a != items


def test_shuffle_of_short_lists_draws_nothing() -> None:
    rng = ScriptedRng([])
    empty: list[int] = []
    one = [7]
    rng.shuffle(empty)
    rng.shuffle(one)
    assert empty == [] and one == [7]


def test_shuffle_direction_uses_below_len_first() -> None:
    # Words 0, 0, 0: i=3 swaps with 0, i=2 with 0, i=1 with 0.
    items = [0, 1, 2, 3]
    ScriptedRng([0, 0, 0]).shuffle(items)
    assert items == [1, 2, 3, 0]


def test_first_cards_of_abc() -> None:
    deck = shuffled_deck("abc", 1)
    assert deck[:10] == [8, 6, 46, 15, 33, 45, 24, 7, 34, 37]
    assert [cards.card_text(c) for c in deck[:10]] == (
        ["9C", "7C", "8S", "3D", "8H", "7S", "QD", "8C", "9H", "QH"]
    )


@settings(max_examples=200)
@given(seed=seeds, decks=st.integers(min_value=1, max_value=8))
def test_shuffled_deck_is_permutation(seed: str, decks: int) -> None:
    deck = shuffled_deck(seed, decks)
    assert sorted(deck) == list(range(52 * decks))


@pytest.mark.parametrize("decks", [0, -1, True, 1.0])
def test_shuffled_deck_rejects_bad_deck_count(decks: object) -> None:
    with pytest.raises(ValueError):
        shuffled_deck("abc", decks)  # type: ignore[arg-type]


# --- independent re-implementation ---------------------------------------------------------


def independent_shuffled_deck(seed: str, decks: int) -> list[int]:
    """Straight from protocol/RNG.md, sharing no code with protocol.rng."""
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.sha256(f"{seed}:{block}".encode("ascii")).digest()
            block += 1
            words.extend(int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4))
        return words.pop(0)

    def below(n: int) -> int:
        limit = (1 << 32) - ((1 << 32) % n)
        while True:
            x = word()
            if x < limit:
                return x % n

    deck = list(range(52 * decks))
    for i in range(len(deck) - 1, 0, -1):
        j = below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize(
    ("seed", "decks"),
    [("abc", 1), ("abc", 2), ("0", 4), ("Z" * 128, 2), ("daily:2026-11-29", 1), ("x-._:9", 3)],
)
def test_independent_implementation_agrees(seed: str, decks: int) -> None:
    assert shuffled_deck(seed, decks) == independent_shuffled_deck(seed, decks)


@settings(max_examples=50)
@given(seed=seeds)
def test_independent_implementation_agrees_on_random_seeds(seed: str) -> None:
    assert shuffled_deck(seed, 2) == independent_shuffled_deck(seed, 2)


# --- seeds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["", "Z" * 129, "a b", "é", "abc\n", "tab\t", "slash/", "plus+", "ünïcode", "a\x00"]
)
def test_invalid_seeds_raise(bad: str) -> None:
    with pytest.raises(InvalidSeed):
        validate_seed(bad)
    with pytest.raises(InvalidSeed):
        SeedRng(bad)
    with pytest.raises(InvalidSeed):
        shuffled_deck(bad, 1)


def test_invalid_seed_is_value_error_with_clear_message() -> None:
    with pytest.raises(ValueError, match="1 to 128 characters"):
        validate_seed("")
    with pytest.raises(ValueError, match="may only contain"):
        validate_seed("a b")
    with pytest.raises(InvalidSeed):
        validate_seed(123)  # type: ignore[arg-type]


@given(seed=seeds)
def test_valid_seeds_accepted(seed: str) -> None:
    assert validate_seed(seed) == seed


def test_random_seed_is_valid_hex() -> None:
    a, b = random_seed(), random_seed()
    assert a != b
    assert len(a) == 32 and all(c in "0123456789abcdef" for c in a)
    assert validate_seed(a) == a


# --- cards ---------------------------------------------------------------------------------


def test_card_texts() -> None:
    expected = {0: "AC", 9: "10C", 10: "JC", 12: "KC", 13: "AD", 26: "AH", 39: "AS"}
    expected |= {51: "KS", 52: "AC", 103: "KS", 126: "10D"}
    for card_id, text in expected.items():
        assert cards.card_text(card_id) == text


def test_card_fields_match_id_formula() -> None:
    for deck in range(3):
        for suit in range(4):
            for rank in range(1, 14):
                card_id = 52 * deck + 13 * suit + (rank - 1)
                assert cards.rank_of(card_id) == rank
                assert cards.suit_of(card_id) == suit
                assert cards.deck_of(card_id) == deck
                assert cards.face_of(card_id) == 13 * suit + rank - 1
                assert cards.is_red(card_id) == (cards.SUITS[suit] in "DH")
                assert cards.card_text(card_id) == cards.RANKS[rank - 1] + cards.SUITS[suit]


def test_parse_card_inverts_card_text() -> None:
    for face in range(52):
        assert cards.parse_card(cards.card_text(face)) == face
    for bad in ["", "A", "1C", "TC", "ac", "AX", "10", "11H", "AC "]:
        with pytest.raises(ValueError):
            cards.parse_card(bad)


def test_bad_card_ids() -> None:
    for bad in (-1, True, 1.0, "0"):
        with pytest.raises(ValueError):
            cards.card_text(bad)  # type: ignore[arg-type]
