"""The state hash (``STATE.md``) and the hash chain (``AUDIT.md`` §2), for a client that
checks a game it knows the seed of: apply each move's ops to the full table
(:func:`clients.python.apply_ops`), hash it, link it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from protocol.chain import genesis, next_link

__all__ = ["genesis", "next_link", "state_hash"]


def state_hash(game: str, seed: str, status: str, table: dict[str, Any]) -> str:
    """SHA-256 (lowercase hex) of the canonical JSON of game, seed, status and full table."""
    document = {"game": game, "seed": seed, "status": status, "table": table}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()
