"""Keys derived from the server secret, one per purpose (HKDF-SHA256, RFC 5869).

The server secret itself is never used as a key: tokens, daily seeds and the
per-day scouting hashes each get their own key, so what one of them reveals (a
player's own token, say) never helps to guess another (a future daily seed).
"""

from __future__ import annotations

import hashlib
import hmac

#: Signs player tokens (``server.auth``).
TOKEN_SIGNING = "solitaire/token-signing/v1"
#: Derives daily seeds (``server.daily``).
DAILY_SEED = "solitaire/daily-seed/v1"
#: Derives the game id of a player's ranked attempt from its game, day and player.
DAILY_GAME_ID = "solitaire/daily-game-id/v1"
#: Signs operator tokens (``server.operator.credentials``): never a player token's key.
OPERATOR_TOKEN_SIGNING = "solitaire/operator-token-signing/v1"
#: Keys the per-day hashes of client addresses and install ids of ranked attempts.
SCOUTING_TRACE = "solitaire/scouting-trace/v1"

#: The shortest secret the server accepts, in bytes.
MIN_SECRET_BYTES = 32


def derive_key(secret: bytes, label: str) -> bytes:
    """The 32-byte key for ``label``: HKDF-SHA256 with no salt, ``info`` = ``label``."""
    prk = hmac.new(b"\x00" * hashlib.sha256().digest_size, secret, hashlib.sha256).digest()
    return hmac.new(prk, label.encode() + b"\x01", hashlib.sha256).digest()
