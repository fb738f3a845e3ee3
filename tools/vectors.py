"""Writes ``protocol/vectors.json``, the test vectors for every implementation of the protocol.

It lives in ``tools/`` because it needs both :mod:`protocol` and the rules engine
(``protocol/`` imports nothing from ``server/``).

The file has three top-level keys:

* ``"format"``: the integer 1.
* ``"rng"``: built by :func:`build_rng_vectors` (this module) from :mod:`protocol.rng`.
* ``"deals"``: built by ``server.rules.vectors.build_deal_vectors()`` (the rules engine).

Regenerate with ``python -m tools.vectors`` (``--check``: exit 1 if the file is out of date).
The JSON is written with ``indent=1`` and sorted keys so that diffs stay reviewable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from protocol.cards import card_text
from protocol.rng import SeedRng, shuffled_deck
from server.rules.vectors import build_deal_vectors

FORMAT = 1
VECTORS_PATH = Path(__file__).resolve().parent.parent / "protocol" / "vectors.json"

RNG_SEEDS: tuple[str, ...] = (
    "abc",
    "0",
    "daily:2026-11-29",
    "Z" * 128,
    "seed-with.dots_and:colons-1",
)
WORD_COUNT = 16
BELOW_NS: tuple[int, ...] = (1, 7, 52, 104, 208, 2**31 + 1, 2**32 - 1, 2**32)
BELOW_COUNT = 16
DECK_COUNTS: tuple[int, ...] = (1, 2, 4)


def build_rng_vectors() -> dict[str, Any]:
    """The ``"rng"`` part of ``vectors.json``.

    Shape::

        {"seeds": [
            {"seed": "abc",
             "u32": [16 words],
             "below": {"1": [16 values], "7": [...], ..., "4294967295": [...]},
             "shuffled_deck": {"1": [52 ids], "2": [104 ids], "4": [208 ids]},
             "shuffled_deck_text_1": ["..", ...]},   # the 1-deck shuffle as card texts
            ...]}

    Every list under ``"below"`` comes from a fresh ``SeedRng(seed)``. Keys that are numbers
    are decimal strings (JSON object keys are strings).
    """
    seeds = []
    for seed in RNG_SEEDS:
        rng = SeedRng(seed)
        words = [rng.next_u32() for _ in range(WORD_COUNT)]
        below: dict[str, list[int]] = {}
        for n in BELOW_NS:
            fresh = SeedRng(seed)
            below[str(n)] = [fresh.below(n) for _ in range(BELOW_COUNT)]
        decks = {str(d): shuffled_deck(seed, d) for d in DECK_COUNTS}
        seeds.append(
            {
                "seed": seed,
                "u32": words,
                "below": below,
                "shuffled_deck": decks,
                "shuffled_deck_text_1": [card_text(c) for c in decks["1"]],
            }
        )
    return {"seeds": seeds}


def build_vectors() -> dict[str, Any]:
    """The whole ``vectors.json`` document."""
    return {"format": FORMAT, "rng": build_rng_vectors(), "deals": build_deal_vectors()}


def dumps(doc: dict[str, Any]) -> str:
    """Canonical text of a vectors document (indent=1, sorted keys, trailing newline)."""
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.vectors", description="Write protocol/vectors.json."
    )
    parser.add_argument(
        "--output", type=Path, default=VECTORS_PATH, help="where to write (default: %(default)s)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the file differs from what would be written",
    )
    args = parser.parse_args(argv)
    text = dumps(build_vectors())
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
        if current != text:
            print(f"{args.output} is out of date", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
