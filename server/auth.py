"""Anonymous players and their bearer tokens.

A token is signed, not stored: ``v1.<player_id>.<expires>.<signature>`` where
``expires`` is a Unix time in seconds and ``signature`` is the unpadded
base64url HMAC-SHA256, under the token-signing key derived from the server
secret (``server.keys``, label :data:`~server.keys.TOKEN_SIGNING`), of
``v1.<player_id>.<expires>``.  The secret itself never keys a token, so a
token says nothing about the key of the daily seeds.
Any instance sharing the secret checks it without a lookup.  Tokens last
:data:`TOKEN_LIFETIME` seconds (30 days); a player whose token expired simply
creates a new player.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets

from server.errors import ApiError
from server.keys import TOKEN_SIGNING, derive_key

TOKEN_LIFETIME = 30 * 24 * 3600
TOKEN_VERSION = "v1"


def new_player_id() -> str:
    return "p_" + secrets.token_urlsafe(12)


@functools.lru_cache(maxsize=8)
def signing_key(secret: bytes) -> bytes:
    return derive_key(secret, TOKEN_SIGNING)


def _signature(secret: bytes, payload: str) -> str:
    digest = hmac.new(signing_key(secret), payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue_token(secret: bytes, player_id: str, now: float) -> str:
    payload = f"{TOKEN_VERSION}.{player_id}.{int(now) + TOKEN_LIFETIME}"
    return f"{payload}.{_signature(secret, payload)}"


def verify_token(secret: bytes, token: object, now: float) -> str:
    """The player id the token was issued to, or ``unauthorized``."""
    if not isinstance(token, str) or len(token) > 200:
        raise ApiError("unauthorized", "the token is malformed")
    parts = token.split(".")
    # isascii: str.isdigit() also takes digits such as '²' that int() refuses.
    expires = parts[2] if len(parts) == 4 else ""
    if parts[0] != TOKEN_VERSION or not (expires.isascii() and expires.isdigit()):
        raise ApiError("unauthorized", "the token is malformed")
    payload = ".".join(parts[:3])
    # As bytes: compare_digest refuses str with non-ASCII characters.
    if not hmac.compare_digest(parts[3].encode(), _signature(secret, payload).encode()):
        raise ApiError("unauthorized", "the token's signature is wrong")
    if int(parts[2]) < now:
        raise ApiError("unauthorized", "the token has expired; create a new player")
    return parts[1]


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("unauthorized", "use 'Authorization: Bearer <token>'")
    return token.strip()
