"""The tamper-evident move log: a hash chain over a game's moves (``AUDIT.md``).

Each link is the SHA-256 (lowercase hex) of ASCII text, fields joined by
``"\\n"``:

* genesis: ``"genesis"``, game id, game name, ``deal_hash`` (the state hash of
  the freshly dealt table, ``STATE.md``);
* the entry of version ``v``: the previous link, ``v`` in decimal, the move
  text, the server time (Unix ms, decimal), and the state hash after the move.

The game's record keeps the last link, the *chain head*.  Changing, dropping
or reordering any entry, or any state hash, changes every later link.
"""

from __future__ import annotations

import hashlib


def _link(*fields: str) -> str:
    return hashlib.sha256("\n".join(fields).encode("ascii")).hexdigest()


def genesis(game_id: str, game: str, deal_hash: str) -> str:
    return _link("genesis", game_id, game, deal_hash)


def next_link(previous: str, version: int, move: str, server_time: int, state_hash: str) -> str:
    return _link(previous, str(version), move, str(server_time), state_hash)
