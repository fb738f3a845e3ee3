"""Daily challenges: one secret deal per game per UTC day (``protocol/DAILY.md``).

The seed of game ``g`` on day ``d`` (``YYYY-MM-DD``) is the lowercase hex
HMAC-SHA256, under the daily-seed key derived from the server secret
(``server.keys``, label :data:`~server.keys.DAILY_SEED`), of
``"daily-seed:v1:<g>:<d>"``.  It is a valid seed (64 hex characters).
While the day is open only its commitment is published: the lowercase hex
SHA-256 of ``"<g>:<d>:<seed>"``.  Once the day has closed the seed is
revealed and anyone can check it against the commitment and re-derive the deal.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import re

from server.errors import ApiError
from server.keys import DAILY_SEED, derive_key

DAY_MS = 24 * 3600 * 1000
DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")


@functools.lru_cache(maxsize=8)
def seed_key(secret: bytes) -> bytes:
    return derive_key(secret, DAILY_SEED)


def daily_seed(secret: bytes, game: str, date: str) -> str:
    message = f"daily-seed:v1:{game}:{date}".encode()
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


def challenge(secret: bytes, game: str, date: str, now_ms: int) -> dict[str, object]:
    """What may be said of a day's challenge at ``now_ms``: the seed only once closed."""
    opens = opens_ms(date)
    if now_ms < opens:
        raise ApiError("not_open", f"the {date} challenge has not opened yet")
    closes = opens + DAY_MS
    seed = daily_seed(secret, game, date)
    closed = now_ms >= closes
    return {
        "game": game,
        "date": date,
        "commitment": commitment(game, date, seed),
        "opens": opens,
        "closes": closes,
        "seconds_to_next": 0 if closed else (closes - now_ms + 999) // 1000,
        "closed": closed,
        "seed": seed if closed else None,
    }
