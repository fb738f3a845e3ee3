"""The error codes of the API (``protocol/ERRORS.md`` is the reference table).

Every failure a client can cause is an :class:`ApiError` with a stable
``code``; REST answers it with ``status`` and ``{"error": {...}}``, the
WebSocket with ``{"type": "error", ...}`` or a ``rejected`` reply.
"""

from __future__ import annotations

from typing import Any

#: code -> (HTTP status, meaning).  protocol/ERRORS.md mirrors this table.
ERROR_CODES: dict[str, tuple[int, str]] = {
    "malformed": (400, "the body or frame is not valid JSON/msgpack, or not a map"),
    "unknown_type": (400, "the WebSocket message type is not one of the protocol's"),
    "missing_field": (400, "a required field is absent"),
    "unknown_field": (400, "a field the message does not have"),
    "invalid_field": (400, "a field has the wrong type or an out-of-range value"),
    "frame_too_large": (413, "the body or frame exceeds the size limit"),
    "unsupported_media_type": (415, "Content-Type is neither application/json nor msgpack"),
    "not_acceptable": (406, "Accept names neither application/json nor msgpack"),
    "unauthorized": (401, "missing, malformed, forged or expired token"),
    "token_revoked": (
        401,
        "the token was revoked (signed out everywhere, or the account deleted); sign in again",
    ),
    "invalid_id_token": (
        401,
        "the ID token is not one of the identity provider's, valid now ('reason' says why)",
    ),
    "not_authenticated": (401, "a WebSocket message that needs 'auth' came first"),
    "forbidden": (403, "only the game's owner may move in it"),
    "daily_open": (
        403,
        "a ranked game of a day still open is readable only by its player until 'closes'",
    ),
    "account_too_new": (
        403,
        "the account is too young for a ranked attempt until 'eligible_at'",
    ),
    "identity_required": (
        403,
        "ranked play on this server needs a linked identity (--ranked-requires-identity)",
    ),
    "operator_required": (
        403,
        "an operator route: a player's token gives no operator powers (protocol/OPERATOR.md)",
    ),
    "account_suspended": (
        403,
        "the account is suspended from ranked play until 'until' (null: until lifted)",
    ),
    "hints_ranked": (403, "hints are for casual games: a ranked daily attempt takes none"),
    "undo_ranked": (403, "undo is for casual games: a ranked game takes none"),
    "restart_ranked": (403, "a ranked daily attempt has one try: it cannot be restarted"),
    "unknown_game": (404, "no game has this id (or it expired)"),
    "unknown_game_name": (404, "not one of the five games"),
    "not_found": (404, "no such route"),
    "unknown_transfer_code": (
        404,
        "no such transfer code: mistyped, used, voided or older than 15 minutes",
    ),
    "unknown_attempt": (404, "no ranked attempt has this game id (or it expired)"),
    "unknown_player": (404, "no player has this id (or its record expired)"),
    "unknown_review": (404, "no item of the review queue has this id"),
    "identity_disabled": (404, "this server has no identity provider configured"),
    "not_open": (404, "that day's daily challenge has not opened yet"),
    "no_daily": (404, "no challenge was held that day (its deal was never chosen)"),
    "method_not_allowed": (405, "the route does not take this method"),
    "invalid_seed": (400, "the seed is not 1-128 characters of A-Z a-z 0-9 . _ : -"),
    "malformed_move": (400, "the move text is not a move"),
    "illegal_move": (422, "the rules do not allow this move now (the reason says why)"),
    "game_over": (409, "the game is over: no move is legal"),
    "daily_closed": (409, "the ranked attempt's day closed at 'closes': it takes no more moves"),
    "name_taken": (409, "another player has this display name (names are unique, any case)"),
    "identity_taken": (409, "the identity is linked to another player"),
    "not_finished": (409, "no verdict yet: the game is still on (a daily: its day is open)"),
    "stale": (409, "the move was made against an old version; 'version' is the current one"),
    "move_limit": (409, "the game took its maximum number of moves: only 'resign' is left"),
    "rate_limited": (429, "too many requests, moves, accounts or frames: retry after the delay"),
    "too_many_connections": (429, "too many open WebSockets from this address"),
    "audit_busy": (503, "every audit slot and queue place is taken: retry after the delay"),
    "hints_busy": (503, "every hint slot and queue place is taken: retry after the delay"),
    "daily_not_ready": (
        503,
        "that day's deal is still being chosen (never on a request): retry after the delay",
    ),
    "too_many_errors": (400, "the connection broke the protocol too often and is closed"),
    "protocol_retired": (410, "this WebSocket protocol version is retired"),
    "identity_unavailable": (
        503,
        "the identity provider's keys cannot be read now: retry after a while",
    ),
    "store_unavailable": (503, "Redis cannot be reached; retry later"),
    "not_replicated": (
        503,
        "(--durability replica) no replica confirmed the move in time: send it again with "
        "the same move_id",
    ),
    "internal": (500, "an unexpected server error"),
}

#: Codes only ever sent on a WebSocket (their HTTP status above is never answered;
#: protocol/ERRORS.md shows "—" for them).
WEBSOCKET_ONLY = frozenset(
    {
        "unknown_type",
        "not_authenticated",
        "too_many_errors",
        "too_many_connections",
        "protocol_retired",
    }
)


class ApiError(Exception):
    """A typed error for the client: ``code`` from :data:`ERROR_CODES`."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    @property
    def status(self) -> int:
        return ERROR_CODES[self.code][0]

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}
