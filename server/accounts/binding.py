"""Which player an identity of the provider is bound to (``protocol/ACCOUNTS.md``).

* ``identity:{<hash>}`` (string): the id of the one player bound to an identity, where
  ``<hash>`` is the SHA-256 of ``<issuer> NUL <sub>`` (the ``sub`` itself is not stored);
  kept :data:`BINDING_TTL` seconds after the latest sign-in, link or renewal;
* ``player:{id}`` fields ``identity`` (that hash), ``identity_issuer`` and
  ``identity_linked_at`` (Unix ms): the player's side, for the account view and for
  ``--ranked-requires-identity``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from server.accounts.identity import Identity
from server.errors import ApiError
from server.players import player_key
from server.store import RANKED_PLAYER_TTL

#: Seconds a binding lives after its latest use (as long as a ranked player's record).
BINDING_TTL = RANKED_PLAYER_TTL
FIELDS = ("identity", "identity_issuer", "identity_linked_at")

# KEYS: the binding.  ARGV: the player.  Deletes the binding only if it is the player's.
UNBIND_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def identity_hash(identity: Identity) -> str:
    return hashlib.sha256(f"{identity.issuer}\0{identity.subject}".encode()).hexdigest()


def binding_key(digest: str) -> str:
    return f"identity:{{{digest}}}"


async def bound_player(redis: Any, identity: Identity) -> str | None:
    value = await redis.get(binding_key(identity_hash(identity)))
    return None if value is None else value.decode()


async def bind(redis: Any, identity: Identity, player_id: str, now_ms: int) -> str:
    """Bind ``identity`` to ``player_id`` unless it is bound to another player: the player
    it is bound to now.  The player's side is written (again) either way, and a binding
    of another identity the player had is released."""
    digest = identity_hash(identity)
    key = binding_key(digest)
    await redis.set(key, player_id, nx=True, ex=BINDING_TTL)
    holder = (await redis.get(key) or b"").decode()
    if holder != player_id:
        return holder
    await redis.expire(key, BINDING_TTL)
    previous = await redis.hget(player_key(player_id), "identity")
    if previous is not None and previous.decode() != digest:
        await redis.eval(UNBIND_SCRIPT, 1, binding_key(previous.decode()), player_id)
    mapping = {"identity": digest, "identity_issuer": identity.issuer}
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hset(player_key(player_id), mapping=mapping)
        pipe.hsetnx(player_key(player_id), "identity_linked_at", now_ms)
        if previous is not None and previous.decode() != digest:
            pipe.hset(player_key(player_id), "identity_linked_at", now_ms)
        await pipe.execute()
    return player_id


async def link(redis: Any, identity: Identity, player_id: str, now_ms: int) -> None:
    """Link ``identity`` to the player, or ``identity_taken``."""
    if await bind(redis, identity, player_id, now_ms) != player_id:
        raise ApiError("identity_taken", "this identity is linked to another player")


async def linked(redis: Any, player_id: str) -> dict[str, Any] | None:
    """The player's identity for the account view: ``{"issuer", "linked_at"}``, or None."""
    digest, issuer, linked_at = await redis.hmget(player_key(player_id), FIELDS)
    if digest is None:
        return None
    return {"issuer": issuer.decode(), "linked_at": int(linked_at or 0)}


async def keep(redis: Any, player_id: str) -> None:
    """Keep the player's binding as long again (a renewal)."""
    digest = await redis.hget(player_key(player_id), "identity")
    if digest is not None:
        await redis.expire(binding_key(digest.decode()), BINDING_TTL)


async def unbind(redis: Any, player_id: str) -> None:
    """Release the player's identity (its account is deleted)."""
    digest = await redis.hget(player_key(player_id), "identity")
    if digest is not None:
        await redis.eval(UNBIND_SCRIPT, 1, binding_key(digest.decode()), player_id)
        await redis.hdel(player_key(player_id), *FIELDS)
