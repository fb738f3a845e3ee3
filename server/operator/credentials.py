"""Operator tokens: named, issued and revoked from the command line, refused by every
player route (``protocol/OPERATOR.md``).

A token is ``op1.<name>.<expires>.<token id>.<signature>``: ``expires`` in Unix seconds,
``signature`` the unpadded base64url HMAC-SHA256 of the rest under the operator key
derived from the server secret (``server.keys``, label
:data:`~server.keys.OPERATOR_TOKEN_SIGNING`; never the player tokens' key, so neither
kind of token can be made from the other).  Its operator's record in Redis,
``operator:{<name>}`` (hash: ``token_id``, ``issued_at``, ``expires_at``), names the one
token the operator holds now: every instance reads it on every operator request, so a
token replaced or revoked is refused everywhere at the next request.  Only the token's id
is stored, never the token.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
import secrets
from typing import Any

from server.errors import ApiError
from server.keys import OPERATOR_TOKEN_SIGNING, derive_key

TOKEN_VERSION = "op1"
#: An operator's name: lowercase, as the trail shows it.
NAME_PATTERN = r"^[a-z][a-z0-9_.-]{1,31}$"
_NAME = re.compile(NAME_PATTERN)
#: The trail's own actors: no operator may take these names.
SYSTEM = "system"
CLI = "cli"
RESERVED_NAMES = frozenset({SYSTEM, CLI})
#: Lifetime of a token unless ``--expires`` says otherwise, and the longest, in seconds.
DEFAULT_LIFETIME = 30 * 24 * 3600
MAX_LIFETIME = 365 * 24 * 3600
MAX_TOKEN = 200


def record_key(name: str) -> str:
    return f"operator:{{{name}}}"


def valid_name(name: str) -> str:
    if not _NAME.fullmatch(name) or name in RESERVED_NAMES:
        raise ValueError(
            "an operator's name is 2-32 of a-z 0-9 _ . - starting with a letter, and not "
            f"{' or '.join(sorted(RESERVED_NAMES))}"
        )
    return name


@functools.lru_cache(maxsize=8)
def signing_key(secret: bytes) -> bytes:
    return derive_key(secret, OPERATOR_TOKEN_SIGNING)


def _signature(secret: bytes, payload: str) -> str:
    digest = hmac.new(signing_key(secret), payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def is_operator_token(token: str) -> bool:
    return token.startswith(TOKEN_VERSION + ".")


def signed_claims(secret: bytes, token: object) -> tuple[str, int, str] | None:
    """``(name, expires, token id)`` of a well-signed operator token, else None; no Redis
    read (the rate limiter's view; :func:`verify` is the check)."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN:
        return None
    parts = token.split(".")
    if len(parts) != 5 or parts[0] != TOKEN_VERSION:
        return None
    _, name, expires, token_id, signature = parts
    if not (expires.isascii() and expires.isdigit()):
        return None
    payload = ".".join(parts[:4])
    if not hmac.compare_digest(signature.encode(), _signature(secret, payload).encode()):
        return None
    return name, int(expires), token_id


async def issue(
    redis: Any, secret: bytes, name: str, now_ms: int, lifetime: int = DEFAULT_LIFETIME
) -> tuple[str, int]:
    """A new token of operator ``name`` (its previous one stops working) and when it
    expires (Unix ms)."""
    valid_name(name)
    if not 0 < lifetime <= MAX_LIFETIME:
        raise ValueError(f"a token lasts 1 s to {MAX_LIFETIME // 86400} days")
    expires = now_ms // 1000 + lifetime
    token_id = secrets.token_urlsafe(9)
    payload = f"{TOKEN_VERSION}.{name}.{expires}.{token_id}"
    key = record_key(name)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(key)
        pipe.hset(key, mapping={"token_id": token_id, "issued_at": now_ms, "expires_at": expires})
        pipe.expire(key, lifetime + 1)
        await pipe.execute()
    return f"{payload}.{_signature(secret, payload)}", expires * 1000


async def revoke(redis: Any, name: str) -> bool:
    """Revoke operator ``name``'s token: False when it held none."""
    return bool(await redis.delete(record_key(name)))


async def verify(redis: Any, secret: bytes, token: str, now_ms: int) -> str:
    """The operator of a valid token, still its operator's current one; else
    ``unauthorized``."""
    claims = signed_claims(secret, token)
    if claims is None:
        raise ApiError("unauthorized", "the operator token is malformed or forged")
    name, expires, token_id = claims
    if expires * 1000 < now_ms:
        raise ApiError("unauthorized", "the operator token has expired; issue a new one")
    current = await redis.hget(record_key(name), "token_id")
    if current is None or not hmac.compare_digest(current, token_id.encode()):
        raise ApiError("unauthorized", "the operator token was revoked or replaced")
    return name
