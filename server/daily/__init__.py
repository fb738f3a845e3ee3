"""Daily challenges: one secret deal per game per UTC day (``protocol/DAILY.md``).

The candidate seeds of game ``g`` on day ``d`` (``YYYY-MM-DD``) are the lowercase
hex HMAC-SHA256, under the daily-seed key derived from the server secret
(``server.keys``, label :data:`~server.keys.DAILY_SEED`), of
``"daily-seed:v2:<g>:<d>:<k>"`` for k = 0, 1, 2, …; the day's seed is the candidate
``server.daily.selection`` chose.  Each is a valid seed (64 hex characters).
While the day is open only its commitment is published: the lowercase hex
SHA-256 of ``"<g>:<d>:<seed>"``.  Once the day has closed the seed is
revealed and anyone can check it against the commitment and re-derive the deal.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import json
import re
from dataclasses import dataclass

from server.errors import ApiError
from server.keys import DAILY_SEED, derive_key
from server.solver import WON

DAY_MS = 24 * 3600 * 1000
DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")


@functools.lru_cache(maxsize=8)
def seed_key(secret: bytes) -> bytes:
    return derive_key(secret, DAILY_SEED)


def candidate_seed(secret: bytes, game: str, date: str, k: int) -> str:
    """The ``k``-th candidate seed of ``game``'s challenge on ``date``."""
    message = f"daily-seed:v2:{game}:{date}:{k}".encode()
    return hmac.new(seed_key(secret), message, hashlib.sha256).hexdigest()


def commitment(game: str, date: str, seed: str) -> str:
    return hashlib.sha256(f"{game}:{date}:{seed}".encode()).hexdigest()


def today(now_ms: int) -> str:
    return dt.datetime.fromtimestamp(now_ms / 1000, dt.UTC).date().isoformat()


def parse_date(text: str) -> dt.date:
    """A ``YYYY-MM-DD`` date, or ``invalid_field``."""
    if DATE_PATTERN.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
    raise ApiError("invalid_field", f"{text[:20]!r} is not a date (YYYY-MM-DD)", field="date")


def opens_ms(date: str) -> int:
    day = parse_date(date)
    start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    return int(start.timestamp() * 1000)


def closes_ms(date: str) -> int:
    return opens_ms(date) + DAY_MS


def is_closed(date: str, now_ms: int) -> bool:
    return now_ms >= closes_ms(date)


def check_open(date: str, now_ms: int) -> None:
    """``not_open`` for a day that has not opened yet."""
    if now_ms < opens_ms(date):
        raise ApiError("not_open", f"the {date} challenge has not opened yet")


@dataclass(frozen=True)
class Choice:
    """A day's chosen deal.  ``k``: the candidate index; ``verdict``: the solver's on it
    (``won``: proven winnable; else ``lost`` or ``unknown``); ``score``: the best proven
    score (cards on the foundations ``par`` reaches; all of them when won);
    ``total``: the deal's cards; ``par``: the solver's line (secret until the close);
    ``candidates``: candidates tried; ``seconds``: selection time."""

    k: int
    verdict: str
    score: int
    total: int
    par: tuple[str, ...]
    candidates: int
    seconds: float
    #: The time budget ended the search (not stored): a longer one might choose otherwise.
    cut_short: bool = False

    @property
    def winnable(self) -> bool:
        return self.verdict == WON

    def to_redis(self) -> dict[str, str]:
        return {
            "k": str(self.k),
            "verdict": self.verdict,
            "score": str(self.score),
            "total": str(self.total),
            "par": json.dumps(list(self.par)),
            "candidates": str(self.candidates),
            "seconds": f"{self.seconds:.3f}",
        }

    @classmethod
    def from_redis(cls, fields: dict[bytes, bytes]) -> Choice:
        value = {key.decode(): item.decode() for key, item in fields.items()}
        return cls(
            k=int(value["k"]),
            verdict=value["verdict"],
            score=int(value["score"]),
            total=int(value["total"]),
            par=tuple(json.loads(value["par"])),
            candidates=int(value["candidates"]),
            seconds=float(value["seconds"]),
        )


def challenge(game: str, date: str, now_ms: int, seed: str, choice: Choice) -> dict[str, object]:
    """What may be said of a day's challenge (deal ``seed``, ``choice``) at ``now_ms``:
    whether it is proven winnable and its proven score; the seed and the par line only
    once closed."""
    check_open(date, now_ms)
    opens = opens_ms(date)
    closes = opens + DAY_MS
    closed = now_ms >= closes
    par = None
    if closed:
        par = {"moves": list(choice.par), "length": len(choice.par), "won": choice.winnable}
    return {
        "game": game,
        "date": date,
        "commitment": commitment(game, date, seed),
        "opens": opens,
        "closes": closes,
        "seconds_to_next": 0 if closed else (closes - now_ms + 999) // 1000,
        "closed": closed,
        "seed": seed if closed else None,
        "winnable": choice.winnable,
        "proven_score": choice.score,
        "total_cards": choice.total,
        "candidate": choice.k if closed else None,
        "par": par,
    }
