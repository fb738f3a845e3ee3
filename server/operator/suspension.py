"""Suspensions from ranked play (``protocol/OPERATOR.md``).

* ``player:{id}:suspension`` (hash: ``reason``, ``until`` — Unix ms, 0 for "until
  lifted" — ``at``, ``operator``): the authoritative value, read when a ranked attempt
  starts (``403 account_suspended``) and by ``GET /v1/players/me``.  A suspension with an
  end is over at ``until`` for those reads, whatever else has run.
* ``operator:suspensions`` (sorted set: player id by ``until``, +inf for none): what
  the sweep (:func:`lift_expired`, every :data:`SWEEP_SECONDS` on each instance) reads to
  put an ended suspension's entries back on their boards.

Only ranked play is refused: casual games, the player's data and sign-in are untouched.
"""

from __future__ import annotations

from typing import Any

from server.errors import ApiError
from server.players import player_key

REGISTRY_KEY = "operator:suspensions"
#: Seconds between two sweeps of ended suspensions on an instance.
SWEEP_SECONDS = 10.0
#: Seconds an indefinite suspension's record is kept (it is lifted by hand before).
INDEFINITE_TTL = 400 * 24 * 3600


def suspension_key(player_id: str) -> str:
    return f"{player_key(player_id)}:suspension"


async def read(redis: Any, player_id: str, now_ms: int) -> dict[str, Any] | None:
    """The player's suspension in force at ``now_ms`` (None: none)."""
    fields = await redis.hgetall(suspension_key(player_id))
    if not fields:
        return None
    value = {key.decode(): item.decode() for key, item in fields.items()}
    until = int(value["until"])
    if until and until <= now_ms:
        return None
    return {
        "reason": value["reason"],
        "until": until or None,
        "at": int(value["at"]),
        "operator": value["operator"],
    }


async def check_ranked(redis: Any, player_id: str, now_ms: int) -> None:
    """``account_suspended`` for a player suspended now."""
    found = await read(redis, player_id, now_ms)
    if found is not None:
        until = found["until"]
        when = f"until {until} (Unix ms)" if until else "until an operator lifts it"
        raise ApiError(
            "account_suspended",
            f"this account is suspended from ranked play {when}; casual games are open",
            until=until,
        )


async def write(
    redis: Any, player_id: str, reason: str, until: int | None, operator: str, now_ms: int
) -> None:
    key = suspension_key(player_id)
    value = {"reason": reason, "until": until or 0, "at": now_ms, "operator": operator}
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(key)
        pipe.hset(key, mapping=value)
        if until:
            pipe.pexpireat(key, until + 86_400_000)  # read() ends it at until already
        else:
            pipe.expire(key, INDEFINITE_TTL)
        await pipe.execute()
    await redis.zadd(REGISTRY_KEY, {player_id: until or float("inf")})


async def remove(redis: Any, player_id: str) -> bool:
    """Delete the record (the registry entry goes last, after the boards): whether a
    suspension was in the record."""
    return bool(await redis.delete(suspension_key(player_id)))


async def forget(redis: Any, player_id: str) -> bool:
    """Take the player off the registry: True for the one caller that did."""
    return bool(await redis.zrem(REGISTRY_KEY, player_id))


async def ended(redis: Any, now_ms: int, count: int = 100) -> list[str]:
    """Players whose suspension ended by ``now_ms``."""
    members = await redis.zrangebyscore(REGISTRY_KEY, "-inf", now_ms, start=0, num=count)
    return [member.decode() for member in members]
