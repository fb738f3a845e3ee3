"""The seeded random number generator that fixes every deal.

Specified in ``protocol/RNG.md``; other implementations must reproduce it bit for bit.

* A seed is 1 to 128 ASCII characters from ``A-Z a-z 0-9 . _ : -``.
* Block ``k`` (``k = 0, 1, 2, ...``) of the stream is ``SHA-256(seed + ":" + str(k))``; each
  32-byte block gives 8 unsigned 32-bit big-endian words, in order.
* :meth:`SeedRng.below` draws an unbiased integer in ``[0, n)`` by rejection sampling.
* :meth:`SeedRng.shuffle` is Fisher-Yates from the last index down to 1.
* :func:`shuffled_deck` shuffles the initial card-id order (see :mod:`protocol.cards`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import struct
from typing import Any

__all__ = [
    "MAX_SEED_LENGTH",
    "SEED_ALPHABET",
    "U32_RANGE",
    "InvalidSeed",
    "SeedRng",
    "random_seed",
    "shuffled_deck",
    "validate_seed",
]

MAX_SEED_LENGTH = 128
SEED_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
U32_RANGE = 2**32

_SEED_RE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
_WORDS = struct.Struct(">8I")


class InvalidSeed(ValueError):
    """Raised for a seed that is not 1..128 characters of ``A-Z a-z 0-9 . _ : -``."""


def validate_seed(seed: str) -> str:
    """Return ``seed`` unchanged if it is valid, else raise :class:`InvalidSeed`."""
    if not isinstance(seed, str):
        raise InvalidSeed(f"seed must be a string, got {type(seed).__name__}")
    if not 1 <= len(seed) <= MAX_SEED_LENGTH:
        raise InvalidSeed(f"seed must be 1 to {MAX_SEED_LENGTH} characters long, got {len(seed)}")
    if _SEED_RE.fullmatch(seed) is None:
        bad = next(c for c in seed if c not in SEED_ALPHABET)
        raise InvalidSeed(f"seed may only contain A-Z a-z 0-9 . _ : - (found {bad!r} in {seed!r})")
    return seed


def random_seed() -> str:
    """A fresh unpredictable seed: 32 lowercase hex characters."""
    return secrets.token_hex(16)


class SeedRng:
    """Deterministic stream of unsigned 32-bit words derived from a seed."""

    __slots__ = ("_block", "_buf", "_pos", "_prefix", "seed")

    def __init__(self, seed: str) -> None:
        self.seed = validate_seed(seed)
        self._prefix = seed.encode("ascii") + b":"
        self._block = 0
        self._buf: tuple[int, ...] = ()
        self._pos = 8  # buffer empty: the first draw computes block 0

    def _refill(self) -> None:
        digest = hashlib.sha256(self._prefix + str(self._block).encode("ascii")).digest()
        self._buf = _WORDS.unpack(digest)
        self._pos = 0
        self._block += 1

    def next_u32(self) -> int:
        """The next word of the stream, in ``[0, 2**32)``."""
        if self._pos >= 8:
            self._refill()
        word = self._buf[self._pos]
        self._pos += 1
        return word

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` for ``1 <= n <= 2**32``, by rejection sampling."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= U32_RANGE:
            raise ValueError(f"below(n) needs an int 1 <= n <= 2**32, got {n!r}")
        limit = U32_RANGE - (U32_RANGE % n)
        while True:
            x = self.next_u32()
            if x < limit:
                return x % n

    def shuffle(self, items: list[Any]) -> None:
        """Shuffle ``items`` in place: for i = len-1 down to 1, swap items[i], items[below(i+1)]."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def shuffled_deck(seed: str, decks: int) -> list[int]:
    """Card ids ``0 .. 52*decks - 1`` in initial order, shuffled with a fresh ``SeedRng(seed)``.

    Deals take cards from the front (index 0) of the returned list.
    """
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a positive int, got {decks!r}")
    cards = list(range(52 * decks))
    SeedRng(seed).shuffle(cards)
    return cards
