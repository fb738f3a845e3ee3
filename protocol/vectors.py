"""Test vectors for every implementation of the protocol, written to ``protocol/vectors.json``.

The file has three top-level keys:

* ``"format"``: the integer 1.
* ``"rng"``: built by :func:`build_rng_vectors` (this module) from :mod:`protocol.rng`.
* ``"deals"``: built by ``server.rules.vectors.build_deal_vectors()`` (the rules engine).

Regenerate with ``python -m protocol.vectors`` (both parts; fails if the rules engine's
``build_deal_vectors`` cannot be imported) or ``python -m protocol.vectors --rng-only``.
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

FORMAT = 1
VECTORS_PATH = Path(__file__).with_name("vectors.json")

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


def build_vectors(*, rng_only: bool = False) -> dict[str, Any]:
    """The whole ``vectors.json`` document.

    Without ``rng_only`` the ``"deals"`` part comes from the rules engine; an
    :class:`ImportError` propagates if it is not available.
    """
    doc: dict[str, Any] = {"format": FORMAT, "rng": build_rng_vectors()}
    if not rng_only:
        from server.rules.vectors import build_deal_vectors

        doc["deals"] = build_deal_vectors()
    return doc


def dumps(doc: dict[str, Any]) -> str:
    """Canonical text of a vectors document (indent=1, sorted keys, trailing newline)."""
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.vectors", description="Write protocol/vectors.json."
    )
    parser.add_argument(
        "--rng-only", action="store_true", help="write only the rng part (no rules engine)"
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
    try:
        doc = build_vectors(rng_only=args.rng_only)
    except ImportError as exc:
        print(
            f"error: cannot import server.rules.vectors.build_deal_vectors ({exc}); "
            "use --rng-only to write only the rng part",
            file=sys.stderr,
        )
        return 2
    text = dumps(doc)
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
