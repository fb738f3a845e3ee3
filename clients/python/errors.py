"""The errors the SDK raises."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answer of the server (``protocol/ERRORS.md``).

    ``code`` is the stable error code, ``message`` the human text, ``status`` the HTTP
    status (``None`` for a WebSocket ``error`` message) and ``details`` every other field
    of the error (``field``, ``version``, ``reason_code``, ...).
    """

    def __init__(
        self,
        code: str,
        message: str,
        status: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details = dict(details or {})

    @property
    def until(self) -> int | None:
        """``account_suspended``: Unix ms the suspension ends (None: until lifted)."""
        value = self.details.get("until")
        return value if isinstance(value, int) else None

    @classmethod
    def from_body(cls, body: Any, status: int | None = None) -> ApiError:
        """The error of a REST ``{"error": {...}}`` body or a WebSocket ``error`` message."""
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(body, dict) and body.get("type") == "error":
            error = body
        if not isinstance(error, dict):
            return cls("unexpected_answer", f"not an error body: {str(body)[:200]}", status)
        skip = {"code", "message", "type", "in_reply_to", "game_id"}
        details = {key: value for key, value in error.items() if key not in skip}
        return cls(str(error.get("code")), str(error.get("message", "")), status, details)


class MoveRejected(ApiError):
    """A WebSocket ``rejected`` reply to a move: nothing changed on the server.

    ``version`` is the game's current version when the server says it (``stale``,
    ``illegal_move``, ...), else ``None``.
    """

    def __init__(
        self,
        code: str,
        message: str,
        version: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(code, message, None, details)
        self.version = version

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> MoveRejected:
        skip = {"type", "code", "message", "move_id", "game_id"}
        details = {key: value for key, value in reply.items() if key not in skip}
        version = reply.get("version")
        return cls(
            str(reply.get("code")),
            str(reply.get("message", "")),
            version if isinstance(version, int) else None,
            details,
        )


class OutOfSync(Exception):
    """A patch does not fit the local copy: the copy must be fetched again."""


class ConnectionLost(ConnectionError):
    """The connection was closed for good (by :meth:`Connection.close` or a fatal error)."""
