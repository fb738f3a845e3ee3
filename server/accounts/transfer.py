"""Transfer codes: moving a player to a new device (``protocol/ACCOUNTS.md``).

A code is 16 characters of Crockford's base32 (80 random bits), shown as four groups of
four (``7KQ2-M9XD-...``), valid :data:`CODE_LIFETIME_MS` and good once.  Only its SHA-256
is stored (a code is as good as a token while it lives):

* ``transfer:{<hash>}`` (string): ``<player id> <expires at, Unix ms>``; ``GETDEL`` on
  redemption, so two redemptions of one code cannot both succeed; Redis drops it once
  the code expired;
* ``player:{id}:transfers`` (sorted set): the player's pending codes' hashes by expiry,
  for the account view (``GET /v1/players/me`` lists them, without the codes) and so a
  revocation or a deletion voids them.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

from server.accounts.revocation import not_before
from server.errors import ApiError
from server.players import player_key

#: Crockford's base32: no I, L, O or U (read as 1, 1, 0; U is left out).
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_CHARACTERS = 16  # 80 bits
CODE_LIFETIME_MS = 15 * 60 * 1000
#: Codes a player may have pending at once (the rate limit bounds how fast they come).
MAX_PENDING = 5
#: A code as a client may send it: groups of its characters, with dashes or spaces.
CODE_PATTERN = r"^[0-9A-Za-z -]{16,32}$"
_TYPED = str.maketrans({"I": "1", "L": "1", "O": "0", "-": None, " ": None})
_CODE = re.compile(f"[{ALPHABET}]{{{CODE_CHARACTERS}}}")


def code_key(digest: str) -> str:
    return f"transfer:{{{digest}}}"


def pending_key(player_id: str) -> str:
    return f"{player_key(player_id)}:transfers"


def digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_CHARACTERS))


def shown(code: str) -> str:
    return "-".join(code[i : i + 4] for i in range(0, CODE_CHARACTERS, 4))


def normal(typed: str) -> str:
    """The code as stored: upper case, dashes and spaces dropped, I/L/O read as 1/1/0;
    ``unknown_transfer_code`` if that is no code."""
    code = typed.upper().translate(_TYPED)
    if _CODE.fullmatch(code) is None:
        raise ApiError("unknown_transfer_code", "that is not a transfer code")
    return code


async def create(redis: Any, player_id: str, now_ms: int) -> dict[str, Any]:
    """A new code of the player: ``{"code", "expires_at"}``; at most :data:`MAX_PENDING`
    pending (``rate_limited`` beyond, with the wait until the oldest expires)."""
    pending = await pending_codes(redis, player_id, now_ms)
    if len(pending) >= MAX_PENDING:
        wait_ms = max(1, min(entry["expires_at"] for entry in pending) - now_ms)
        raise ApiError(
            "rate_limited",
            f"{MAX_PENDING} transfer codes are pending; retry in {wait_ms} ms",
            limit="transfer_codes",
            retry_after_ms=wait_ms,
        )
    code = new_code()
    expires_at = now_ms + CODE_LIFETIME_MS
    hashed = digest(code)
    await redis.set(code_key(hashed), f"{player_id} {expires_at}", px=CODE_LIFETIME_MS)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.zadd(pending_key(player_id), {hashed: expires_at})
        pipe.pexpire(pending_key(player_id), CODE_LIFETIME_MS)
        await pipe.execute()
    return {"code": shown(code), "expires_at": expires_at}


async def pending_codes(redis: Any, player_id: str, now_ms: int) -> list[dict[str, Any]]:
    """The player's codes still pending, oldest first: ``{"id", "expires_at"}`` (``id``:
    the start of the code's hash; the code itself is shown once, when created)."""
    key = pending_key(player_id)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.zremrangebyscore(key, "-inf", now_ms)
        pipe.zrange(key, 0, -1, withscores=True)
        _, entries = await pipe.execute()
    return [{"id": member.decode()[:12], "expires_at": int(score)} for member, score in entries]


async def redeem(redis: Any, typed: str, now_ms: int) -> str:
    """The player a code moves (the code is used up), or ``unknown_transfer_code`` for a
    code that is wrong, used, voided or expired."""
    hashed = digest(normal(typed))
    value = await redis.getdel(code_key(hashed))
    if value is None:
        raise ApiError("unknown_transfer_code", "no such transfer code (used or expired?)")
    player_id, expires_at = value.decode().split(" ")
    await redis.zrem(pending_key(player_id), hashed)
    if now_ms > int(expires_at):
        raise ApiError("unknown_transfer_code", "no such transfer code (used or expired?)")
    created = (int(expires_at) - CODE_LIFETIME_MS) // 1000
    if created < await not_before(redis, player_id):  # made before a revocation: void
        raise ApiError("unknown_transfer_code", "no such transfer code (voided)")
    return player_id


async def void_all(redis: Any, player_id: str) -> None:
    """Void every pending code of the player (its tokens were revoked, or it is deleted)."""
    key = pending_key(player_id)
    hashes = [member.decode() for member in await redis.zrange(key, 0, -1)]
    for hashed in hashes:
        await redis.delete(code_key(hashed))
    await redis.delete(key)
