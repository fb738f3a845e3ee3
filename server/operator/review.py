"""The review queue: what the post-close audit (:mod:`server.operator.postclose`) found in each
ranked attempt, and the operators' decisions on it (``protocol/OPERATOR.md``).

Per board, in the board's own slot (``server.leaderboard.review_keys``):

* ``lb:{...}:review`` (hash): player id -> ``flagged``, ``cleared`` or ``voided``; the
  board reads it with its page (``review: "flagged"``), and the audit resumes after a
  restart past the players it has;
* ``lb:{...}:reviews`` (hash): player id -> the item (JSON): its signals with their
  evidence, its integrity findings, the scouting links, the replay's path, the decision;
* ``lb:{...}:reviewed`` (string): the day's audit is done (JSON: when, how many, CPU).

``reviews:flagged`` (sorted set: game id by audit time) is the queue across days, for its
length; an item leaves it when decided, or when its board's marks expire (``MARK_TTL``).
An item's id is its attempt's game id.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from server import metrics
from server.errors import ApiError
from server.leaderboard import MARK_TTL, review_keys

if TYPE_CHECKING:
    from server.operator.actions import Operations

QUEUE_KEY = "reviews:flagged"
STATES = ("flagged", "cleared", "voided")
#: Items per page of ``GET /v1/operator/reviews`` (the default and the most).
PAGE = 100, 1000


async def store_item(redis: Any, item: dict[str, Any]) -> None:
    """Write an item and its state (and its place in the queue)."""
    states, items, _ = review_keys(item["game"], item["date"])
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hset(states, item["player_id"], item["state"])
        pipe.hset(items, item["player_id"], json.dumps(item))
        pipe.expire(states, MARK_TTL)
        pipe.expire(items, MARK_TTL)
        await pipe.execute()
    if item["state"] == "flagged":
        async with redis.pipeline(transaction=True) as pipe:
            pipe.zadd(QUEUE_KEY, {item["id"]: item["audited_at"]})
            # Items audited longer ago than their boards' marks live are gone with them:
            # without this, every item nobody decided stayed in the queue for ever.
            pipe.zremrangebyscore(QUEUE_KEY, "-inf", f"({item['audited_at'] - MARK_TTL * 1000}")
            await pipe.execute()
    else:
        await redis.zrem(QUEUE_KEY, item["id"])


async def audited_players(redis: Any, game: str, date: str) -> set[str]:
    return {player.decode() for player in await redis.hkeys(review_keys(game, date)[0])}


async def items(
    redis: Any, game: str, date: str, state: str | None, offset: int, limit: int
) -> tuple[int, list[dict[str, Any]]]:
    """A day's items (of ``state``), flagged first, then by player id."""
    values = await redis.hvals(review_keys(game, date)[1])
    found = [json.loads(value) for value in values]
    if state is not None:
        found = [item for item in found if item["state"] == state]
    found.sort(key=lambda item: (STATES.index(item["state"]), item["player_id"]))
    return len(found), found[offset : offset + limit]


async def queue_length(redis: Any) -> int:
    return int(await redis.zcard(QUEUE_KEY))


async def decide(
    operations: Operations, operator: str, review_id: str, decision: str, reason: str, code: str
) -> dict[str, Any]:
    """Clear (a voided attempt is reinstated) or void an item; the trail says
    ``review_clear`` / ``review_void``."""
    try:
        stored = await operations.attempt(review_id)
    except ApiError:
        raise ApiError("unknown_review", f"no review item {review_id[:64]!r}") from None
    redis = operations.redis
    raw = await redis.hget(review_keys(stored.game, stored.daily)[1], stored.owner)
    if raw is None:
        raise ApiError("unknown_review", f"the attempt {review_id!r} has not been reviewed")
    item: dict[str, Any] = json.loads(raw)
    now = operations.service.clock()
    if decision == "void":
        await operations.void(operator, review_id, reason, code, logged=False)
        metrics.void_made("manual")
        item["state"] = "voided"
    else:
        await operations.reinstate(operator, review_id, reason, logged=False)
        item["state"] = "cleared"
    details = {
        "game": stored.game,
        "date": stored.daily,
        "code": code if decision == "void" else None,
    }
    await operations.log(
        operator,
        f"review_{decision}",
        reason,
        player_id=stored.owner,
        game_id=review_id,
        details=details,
    )
    item["decision"] = {"decision": decision, "operator": operator, "at": now, "reason": reason}
    await store_item(redis, item)
    metrics.review_queue(await queue_length(redis))
    return item
