"""The action trail: every operator action, and every automatic one (``protocol/OPERATOR.md``).

One Redis stream per deployment, :data:`TRAIL_KEY`, append-only: each entry says who
(an operator's name, ``system`` for the post-close audit, ``cli`` for the command line),
when (the service's Unix ms), what (``action``), on which player and/or attempt, the
reason text and a few details.  It is trimmed by age, never by count (each append drops
entries older than ``--operator-trail-days``), so a burst of actions cannot push older
ones out.  Nothing secret goes in: no token (an operator's or a player's), no seed of an
open day; the details are the action's own small facts.
"""

from __future__ import annotations

import json
import time
from typing import Any

TRAIL_KEY = "operator:actions"
#: Days an entry is kept (``--operator-trail-days``).
KEEP_DAYS = 400
#: Entries per page of ``GET /v1/operator/actions`` (the default and the most).
PAGE = 50, 500
#: Longest reason text kept, in characters.
MAX_REASON = 500

ACTIONS = (
    "operator_token_issued",
    "operator_token_revoked",
    "void",
    "reinstate",
    "suspend",
    "unsuspend",
    "reset_name",
    "revoke_tokens",
    "review_clear",
    "review_void",
)


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


async def record(
    redis: Any,
    *,
    operator: str,
    action: str,
    now_ms: int,
    reason: str = "",
    player_id: str = "",
    game_id: str = "",
    details: dict[str, Any] | None = None,
    keep_days: int = KEEP_DAYS,
) -> str:
    """Append an action: its entry id.  Entries older than ``keep_days`` (by Redis's
    stream ids, which are wall-clock ms) go in the same command."""
    assert action in ACTIONS, action
    fields = {
        "at": now_ms,
        "operator": operator,
        "action": action,
        "player_id": player_id,
        "game_id": game_id,
        "reason": reason[:MAX_REASON],
        "details": json.dumps(details or {}, separators=(",", ":")),
    }
    oldest = int(time.time() * 1000) - keep_days * 86_400_000
    entry_id = await redis.xadd(TRAIL_KEY, fields, minid=max(0, oldest), approximate=False)
    return _text(entry_id)


def entry(entry_id: bytes | str, fields: dict[bytes, bytes]) -> dict[str, Any]:
    value = {key.decode(): item.decode() for key, item in fields.items()}
    return {
        "id": _text(entry_id),
        "at": int(value["at"]),
        "operator": value["operator"],
        "action": value["action"],
        "player_id": value["player_id"] or None,
        "game_id": value["game_id"] or None,
        "reason": value["reason"],
        "details": json.loads(value["details"]),
    }


async def page(
    redis: Any, before: str | None, limit: int
) -> tuple[list[dict[str, Any]], str | None]:
    """Up to ``limit`` entries, newest first, older than the cursor ``before``; and the
    cursor of the next page (None after the oldest)."""
    newest = "+" if before is None else f"({before}"
    rows = await redis.xrevrange(TRAIL_KEY, max=newest, min="-", count=limit + 1)
    entries = [entry(entry_id, fields) for entry_id, fields in rows[:limit]]
    return entries, (entries[-1]["id"] if len(rows) > limit else None)


async def since(redis: Any, start_ms: int) -> list[dict[str, Any]]:
    """Every entry written from ``start_ms`` (Unix ms, by stream id) on, oldest first
    (the command line's export)."""
    entries: list[dict[str, Any]] = []
    low = f"{start_ms}-0"
    while True:
        rows = await redis.xrange(TRAIL_KEY, min=low, max="+", count=1000)
        entries += [entry(entry_id, fields) for entry_id, fields in rows]
        if len(rows) < 1000:
            return entries
        low = f"({_text(rows[-1][0])}"
