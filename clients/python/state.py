"""A client's copy of one game, kept in step with the server's messages.

:class:`GameCopy` is pure state (no I/O): feed it the ``subscribed``, ``snapshot``,
``patch`` and ``accepted`` messages of its game, in the order they arrive, and it holds the
same ``version``, ``status``, ``score``, ``view`` and ``legal_moves`` as the server.
:class:`clients.python.Connection` drives one per subscribed game; the recorded sessions of
``protocol/sessions`` are replayed through it.
"""

from __future__ import annotations

import copy
from typing import Any

from clients.python.errors import OutOfSync
from clients.python.ops import apply_ops, expand_ops, score_of


class Gap(OutOfSync):
    """A patch from a later version than the copy's: some patches were missed
    (re-subscribe with the copy's version to get them)."""


class GameCopy:
    """The local copy of one game.

    ``legal_moves`` is only known to the game's owner, and only for the version it was sent
    for: the server sends it in ``snapshot``, ``subscribed`` and ``accepted``, never in a
    ``patch``.  Legal moves that arrive for a version the copy has not reached yet are kept
    until a patch brings the copy there; after a patch nobody sent them for, they are
    ``None`` (unknown) until the owner asks again.  A finished game has none (``[]``).
    """

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        #: ``"owner"`` or ``"spectator"``, from ``subscribed``.
        self.role: str | None = None
        #: The game's name (``"balcony"``, ...), from the snapshot.
        self.game: str | None = None
        #: ``None`` until the first snapshot.
        self.version: int | None = None
        self.status: str | None = None
        self.score: int | None = None
        self.view: dict[str, Any] | None = None
        self.legal_moves: list[str] | None = None
        #: The date of a ranked daily game, else ``None``.
        self.daily: str | None = None
        self._legal_later: dict[int, list[str]] = {}

    def __repr__(self) -> str:
        return (
            f"GameCopy({self.game_id!r}, game={self.game!r}, role={self.role!r}, "
            f"version={self.version}, status={self.status!r}, score={self.score})"
        )

    @property
    def synced(self) -> bool:
        """Whether the copy holds a state (it has had a snapshot)."""
        return self.version is not None

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"

    def state(self) -> dict[str, Any]:
        """The client state as the sessions record it: version, status, score, view,
        legal_moves (a deep copy)."""
        return copy.deepcopy(
            {
                "version": self.version,
                "status": self.status,
                "score": self.score,
                "view": self.view,
                "legal_moves": self.legal_moves,
            }
        )

    # -- messages -------------------------------------------------------------------

    def on_message(self, message: dict[str, Any]) -> bool:
        """Apply one server message about this game; whether the state changed.

        Raises :class:`Gap` or :class:`OutOfSync` for a patch that does not fit.
        """
        before = self.state()
        kind = message.get("type")
        if kind == "subscribed":
            self.on_subscribed(message)
        elif kind == "snapshot":
            self.on_snapshot(message["snapshot"])
        elif kind == "patch":
            self.on_patch(message)
        elif kind == "accepted":
            self.on_accepted(message)  # its legal moves land with its patch
            if message.get("patch") is not None:
                self.on_patch(message["patch"])
        return self.state() != before

    def on_subscribed(self, message: dict[str, Any]) -> None:
        self.role = message["role"]
        if message.get("legal_moves") is not None:
            self.learn_legal_moves(message["version"], message["legal_moves"])

    def on_snapshot(self, snapshot: dict[str, Any]) -> None:
        """Replace the whole copy."""
        self.game = snapshot["game"]
        self.version = snapshot["version"]
        self.status = snapshot["status"]
        self.score = snapshot["score"]
        self.view = copy.deepcopy(snapshot["view"])
        self.legal_moves = snapshot.get("legal_moves")
        self.daily = snapshot.get("daily")
        self._forget_old_legal_moves()

    def on_patch(self, patch: dict[str, Any]) -> bool:
        """Apply a compact patch (a ``patch`` message, or the ``patch`` of an ``accepted``:
        ``v``, ``m``, ``o``, and ``s``, ``r`` when they change); False when it is one the
        copy already has (ignored)."""
        if self.version is None or self.view is None:
            return False  # a snapshot is on its way
        version = patch["v"]
        if version <= self.version:
            return False
        if version != self.version + 1:
            raise Gap(f"patch to {version} on version {self.version}")
        view = apply_ops(self.view, expand_ops(patch["o"]), patch["m"])
        if "r" in patch:  # the authority on Matrimony's redeals (a redeal, or its undo)
            view["redeals_left"] = patch["r"]
        self.view = view
        self.version = version
        self.status = patch.get("s", self.status)
        self.score = score_of(view)
        self.legal_moves = self._legal_later.pop(self.version, None)
        if self.legal_moves is None and self.is_owner and self.status != "playing":
            self.legal_moves = []
        self._forget_old_legal_moves()
        return True

    def on_accepted(self, message: dict[str, Any]) -> None:
        # ``version`` is the game's version now (past the move's ``applied_version`` for a
        # duplicate), and the legal moves are those at it.
        self.learn_legal_moves(message["version"], message["legal_moves"])

    def learn_legal_moves(self, version: int, legal_moves: list[str]) -> None:
        """The owner's legal moves at ``version`` (now, or once the copy gets there)."""
        if version == self.version:
            self.legal_moves = list(legal_moves)
        elif self.version is None or version > self.version:
            self._legal_later[version] = list(legal_moves)

    def _forget_old_legal_moves(self) -> None:
        if self.version is not None:
            for version in [v for v in self._legal_later if v <= self.version]:
                del self._legal_later[version]

    @property
    def needs_legal_moves(self) -> bool:
        """An owner's copy whose legal moves at its version are unknown."""
        return self.is_owner and self.synced and self.legal_moves is None
