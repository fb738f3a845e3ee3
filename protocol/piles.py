"""Compact pile codes of WebSocket protocol v2 (``protocol/WEBSOCKET.md``): ``f0``…``f15``
for ``foundation[i]``, ``t0``…``t19`` for ``tableau[i]``, and ``r``, ``s``, ``w``, ``b`` for
the reserve, stock, waste and bouquet (``DIFF.md`` §1 has the addresses)."""

from __future__ import annotations

import functools
import re

#: Pile address kinds and their one-letter codes; indexed kinds take the index after it.
CODES = {
    "foundation": "f",
    "tableau": "t",
    "reserve": "r",
    "stock": "s",
    "waste": "w",
    "bouquet": "b",
}
KINDS = {code: kind for kind, code in CODES.items()}
ADDRESS = re.compile(r"(foundation|tableau)\[(0|[1-9][0-9]?)\]|(reserve|stock|waste|bouquet)")
CODE = re.compile(r"([ft])(0|[1-9][0-9]?)|([rswb])")


# Cached: a server converts the piles of every move. Only answers are kept (an error is
# not), and there are at most 204 of each: 100 indices of two kinds, and four piles.


@functools.cache
def pile_code(address: str) -> str:
    """``tableau[3]`` -> ``t3``, ``stock`` -> ``s``."""
    match = ADDRESS.fullmatch(address)
    if match is None:
        raise ValueError(f"not a pile address: {address!r}")
    if match.group(3):
        return CODES[match.group(3)]
    return CODES[match.group(1)] + match.group(2)


@functools.cache
def pile_address(code: str) -> str:
    """``t3`` -> ``tableau[3]``, ``s`` -> ``stock``."""
    match = CODE.fullmatch(code)
    if match is None:
        raise ValueError(f"not a pile code: {code!r}")
    if match.group(3):
        return KINDS[match.group(3)]
    return f"{KINDS[match.group(1)]}[{match.group(2)}]"
