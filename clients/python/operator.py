"""The operators' half of the SDK (``protocol/OPERATOR.md``): ``/v1/operator/...`` with an
operator token (``python -m server.operator token NAME``)."""

from __future__ import annotations

from typing import Any

from clients.python.rest import Client, _segment


class OperatorClient(Client):
    """A :class:`Client` holding an operator token: the operator routes.  Player routes
    refuse the token (``unauthorized``); these refuse a player's (``operator_required``)."""

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = await self._call("POST", path, body)
        return answer

    async def actions(self, limit: int = 50, before: str | None = None) -> dict[str, Any]:
        """The action trail, newest first: ``{"actions", "next"}``."""
        params: dict[str, Any] = {"limit": limit}
        if before is not None:
            params["before"] = before
        answer: dict[str, Any] = await self._call("GET", "/v1/operator/actions", params=params)
        return answer

    async def attempts(
        self, game: str, date: str, offset: int = 0, limit: int = 100
    ) -> dict[str, Any]:
        """A day's ranked attempts with their game ids."""
        params = {"game": game, "date": date, "offset": offset, "limit": limit}
        answer: dict[str, Any] = await self._call("GET", "/v1/operator/attempts", params=params)
        return answer

    async def void(self, game_id: str, reason: str, code: str = "fair_play") -> dict[str, Any]:
        path = f"/v1/operator/attempts/{_segment(game_id)}/void"
        return await self._post(path, {"reason": reason, "code": code})

    async def reinstate(self, game_id: str, reason: str) -> dict[str, Any]:
        path = f"/v1/operator/attempts/{_segment(game_id)}/reinstate"
        return await self._post(path, {"reason": reason})

    async def suspend(
        self, player_id: str, reason: str, until: int | None = None
    ) -> dict[str, Any]:
        """Suspend from ranked play until ``until`` (Unix ms), or until lifted."""
        body: dict[str, Any] = {"reason": reason, "until": until}
        return await self._post(f"/v1/operator/players/{_segment(player_id)}/suspend", body)

    async def unsuspend(self, player_id: str, reason: str) -> dict[str, Any]:
        path = f"/v1/operator/players/{_segment(player_id)}/unsuspend"
        return await self._post(path, {"reason": reason})

    async def reset_name(self, player_id: str, reason: str) -> dict[str, Any]:
        path = f"/v1/operator/players/{_segment(player_id)}/reset-name"
        return await self._post(path, {"reason": reason})

    async def revoke_tokens(self, player_id: str, reason: str) -> dict[str, Any]:
        path = f"/v1/operator/players/{_segment(player_id)}/revoke-tokens"
        return await self._post(path, {"reason": reason})

    async def reviews(
        self, game: str, date: str, state: str | None = None, offset: int = 0, limit: int = 100
    ) -> dict[str, Any]:
        """A day's review items (``state``: flagged, cleared or voided)."""
        params: dict[str, Any] = {"game": game, "date": date, "offset": offset, "limit": limit}
        if state is not None:
            params["state"] = state
        answer: dict[str, Any] = await self._call("GET", "/v1/operator/reviews", params=params)
        return answer

    async def decide(
        self, review_id: str, decision: str, reason: str, code: str = "fair_play"
    ) -> dict[str, Any]:
        """Clear or void a reviewed attempt (``decision``: ``clear`` or ``void``)."""
        body = {"decision": decision, "reason": reason, "code": code}
        return await self._post(f"/v1/operator/reviews/{_segment(review_id)}", body)
