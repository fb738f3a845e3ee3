"""Pile addresses, moves and the error an illegal move raises.

A move is its protocol text: ``"tableau[3]>foundation[0]"``, ``"stock>tableau[7]"``,
``"deal"``, ``"redeal"`` or ``"resign"``.  :class:`Move` is a ``str`` whose text
is always in that normal form, so a move compares equal to its text and can
be used wherever the text is expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PILE_KINDS = ("foundation", "tableau", "reserve", "stock", "waste", "bouquet")
INDEXED_KINDS = ("foundation", "tableau")
ACTIONS = ("deal", "redeal", "resign")

#: A pile's address; ``server/rest.py`` publishes it in the move text's pattern.
PILE_PATTERN = r"(foundation|tableau)\[(0|[1-9][0-9]?)\]|(reserve|stock|waste|bouquet)"
_PILE_RE = re.compile(PILE_PATTERN)


class IllegalMove(ValueError):
    """A move the rules do not allow; the message says why.

    ``code`` is a short machine-readable reason (see ``protocol/ERRORS.md``).
    """

    def __init__(self, reason: str, code: str = "illegal_move") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class MalformedMove(IllegalMove):
    """Text that is not a move at all."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, code="malformed_move")


@dataclass(frozen=True, slots=True)
class Pile:
    """A pile address: ``Pile("tableau", 3)`` is ``tableau[3]``; ``Pile("stock")``."""

    kind: str
    index: int | None = None

    def __str__(self) -> str:
        return self.kind if self.index is None else f"{self.kind}[{self.index}]"

    @classmethod
    def parse(cls, text: str) -> Pile:
        match = _PILE_RE.fullmatch(text)
        if match is None:
            raise MalformedMove(
                f"{text[:40]!r} is not a pile: write foundation[i], tableau[i], reserve, stock, "
                "waste or bouquet"
            )
        if match.group(3):
            return cls(match.group(3))
        return cls(match.group(1), int(match.group(2)))


#: Moves already parsed, by the text they were parsed from (bounded: texts are the
#: client's). Parsing is a visible share of replaying a game.
_PARSED: dict[str, Move] = {}
_PARSED_LIMIT = 10_000


class Move(str):
    """One move, as its normalised text.

    ``Move("tableau[3]>foundation[0]").source == Pile("tableau", 3)``;
    ``Move("deal").action == "deal"``.  Raises :class:`MalformedMove` for text
    that is not a move.
    """

    action: str
    source: Pile | None
    target: Pile | None

    def __new__(cls, text: str) -> Move:
        known = _PARSED.get(text) if isinstance(text, str) else None
        if known is not None:
            return known
        move = cls._parse(text)
        if len(_PARSED) < _PARSED_LIMIT:
            _PARSED[text] = move
        return move

    @classmethod
    def _parse(cls, text: str) -> Move:
        if not isinstance(text, str):
            raise MalformedMove(f"a move is text, not {type(text).__name__}")
        if text in ACTIONS:
            move = super().__new__(cls, text)
            move.action, move.source, move.target = text, None, None
            return move
        parts = text.split(">")
        if len(parts) != 2:
            raise MalformedMove(
                f"{text[:80]!r} is not a move: write '<from>><to>' "
                "(e.g. 'tableau[3]>foundation[0]'), 'deal', 'redeal' or 'resign'"
            )
        source, target = Pile.parse(parts[0].strip()), Pile.parse(parts[1].strip())
        move = super().__new__(cls, f"{source}>{target}")
        move.action, move.source, move.target = "move", source, target
        return move

    @classmethod
    def between(cls, source: Pile, target: Pile) -> Move:
        return cls(f"{source}>{target}")


DEAL = Move("deal")
REDEAL = Move("redeal")
RESIGN = Move("resign")
