"""Anonymous players and their bearer tokens.

A token is signed, not stored: ``v1.<player_id>.<expires>.<signature>`` where
``expires`` is a Unix time in seconds and ``signature`` is the unpadded
base64url HMAC-SHA256, under the token-signing key derived from the server
secret (``server.keys``, label :data:`~server.keys.TOKEN_SIGNING`), of
``v1.<player_id>.<expires>``.  The secret itself never keys a token, so a
token says nothing about the key of the daily seeds.
Any instance sharing the secret checks its signature without a lookup.  Tokens last
:data:`TOKEN_LIFETIME` seconds (30 days) from their issue; a valid token is exchanged
for a fresh one by ``POST /v1/players/me/token`` (``server.accounts``), and a player's
tokens issued before a revocation are refused (``server.accounts.revocation``: a token
was issued at ``expires - TOKEN_LIFETIME``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
from typing import NamedTuple

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


class Claims(NamedTuple):
    """What a valid token says: its player, and when it expires (Unix seconds)."""

    player_id: str
    expires: int

    @property
    def issued(self) -> int:
        return self.expires - TOKEN_LIFETIME


def issue(secret: bytes, player_id: str, now: float, not_before: int = 0) -> tuple[str, int]:
    """A token of ``player_id`` and when it expires (Unix seconds).  It counts as issued
    at ``now``, or at ``not_before`` (the player's latest revocation) if that is later:
    a token made in the second of a revocation, after it, is not revoked by it."""
    expires = max(int(now), not_before) + TOKEN_LIFETIME
    payload = f"{TOKEN_VERSION}.{player_id}.{expires}"
    return f"{payload}.{_signature(secret, payload)}", expires


def issue_token(secret: bytes, player_id: str, now: float) -> str:
    return issue(secret, player_id, now)[0]


def verify_token(secret: bytes, token: object, now: float) -> str:
    """The player id the token was issued to, or ``unauthorized``."""
    return verify(secret, token, now).player_id


def verify(secret: bytes, token: object, now: float) -> Claims:
    """The claims of a valid token, or ``unauthorized``."""
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
    return Claims(parts[1], int(parts[2]))


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("unauthorized", "use 'Authorization: Bearer <token>'")
    return token.strip()
