"""What the server's copy of a game was at every version: the client's reports are
checked against it.

The kit knows every game's name and seed (it created them), so it replays the game's log
(``GET /v1/games/{id}/log``, undos included) through the rules engine and keeps, per
version, the view hash, the status and the owner's legal moves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from server.rules import new_game
from server.rules.undo import Timeline


def view_hash(version: int, status: str, view: dict[str, Any]) -> str:
    """The hash a client reports: SHA-256 (hex) of the canonical JSON (``STATE.md`` §1) of
    ``{"status", "version", "view"}`` — the client view, not the full table."""
    document = {"status": status, "version": version, "view": view}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Version:
    version: int
    status: str
    hash: str
    legal_moves: list[str]


def history(game: str, seed: str, moves: list[str]) -> list[Version]:
    """The game at each version, from 0 (as dealt) to ``len(moves)``."""
    timeline = Timeline(new_game(game, seed))
    versions = [_at(0, timeline)]
    for number, move in enumerate(moves, start=1):
        timeline.play(move)
        versions.append(_at(number, timeline))
    return versions


def _at(version: int, timeline: Timeline) -> Version:
    game = timeline.game
    legal = [str(move) for move in game.legal_moves()]
    return Version(version, game.status, view_hash(version, game.status, game.view()), legal)
