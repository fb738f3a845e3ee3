"""The REST half of the SDK (``protocol/REST.md``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from clients.python.errors import ApiError
from clients.python.ws import Connection


def _segment(value: str) -> str:
    return quote(value, safe="")


class Client:
    """An asyncio REST client of the game server.

    ``base_url`` is the server's address (``http://127.0.0.1:8000``).  ``token`` is the
    bearer token of a player; :meth:`create_player` makes one and keeps it.  Every method
    returns the decoded JSON answer and raises :class:`ApiError` for an error answer.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        token: str | None = None,
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.player_id: str | None = None
        self.timeout = timeout
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        headers = {"Accept": "application/json"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        response = await self.http.request(method, path, json=body, params=params, headers=headers)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if response.is_error:
            if answer is None:
                raise ApiError("http_error", response.text[:200], response.status_code)
            raise ApiError.from_body(answer, response.status_code)
        return answer

    # -- players and games ------------------------------------------------------------

    async def create_player(self, name: str | None = None) -> dict[str, Any]:
        """A new player, ``{"player_id", "token", "name"}`` (named ``name`` if given:
        ``ApiError("name_taken")`` when another player has it); its token is used from
        now on."""
        body = None if name is None else {"name": name}
        player: dict[str, Any] = await self._call("POST", "/v1/players", body)
        self.token, self.player_id = player["token"], player["player_id"]
        return player

    async def me(self) -> dict[str, Any]:
        """The player's record: ``{"player_id", "name", "created_at"}``."""
        answer: dict[str, Any] = await self._call("GET", "/v1/players/me")
        return answer

    async def set_name(self, name: str | None) -> dict[str, Any]:
        """Set the display name (``None`` removes it); the player's record."""
        answer: dict[str, Any] = await self._call("PUT", "/v1/players/me", {"name": name})
        return answer

    async def my_games(self, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        """A page of the player's games, newest first: ``{"player_id", "games", "next"}``
        (pass ``next`` back as ``cursor`` for the next page)."""
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        answer: dict[str, Any] = await self._call("GET", "/v1/players/me/games", params=params)
        return answer

    async def my_stats(self) -> dict[str, Any]:
        """Per game: ``played``, ``won``, ``best_score``, ``current_streak``, ``best_streak``."""
        answer: dict[str, Any] = await self._call("GET", "/v1/players/me/stats")
        return answer

    async def games(self) -> list[dict[str, Any]]:
        """The five games: ``[{"name", "title", "decks", "summary"}]``."""
        answer = await self._call("GET", "/v1/games")
        games: list[dict[str, Any]] = answer["games"]
        return games

    async def new_game(self, game: str, seed: str | None = None) -> dict[str, Any]:
        """Start a casual game (random seed unless ``seed``); its snapshot."""
        body: dict[str, Any] = {"game": game}
        if seed is not None:
            body["seed"] = seed
        snapshot: dict[str, Any] = await self._call("POST", "/v1/games", body)
        return snapshot

    async def get_game(self, game_id: str) -> dict[str, Any]:
        """A game's snapshot (``legal_moves`` only for its owner)."""
        snapshot: dict[str, Any] = await self._call("GET", f"/v1/games/{_segment(game_id)}")
        return snapshot

    async def move_rest(
        self, game_id: str, move: str, version: int, move_id: str | None = None
    ) -> dict[str, Any]:
        """Play a move over REST: ``{"snapshot", "patch", "duplicate"}``."""
        body: dict[str, Any] = {"move": move, "version": version}
        if move_id is not None:
            body["move_id"] = move_id
        answer: dict[str, Any] = await self._call(
            "POST", f"/v1/games/{_segment(game_id)}/moves", body
        )
        return answer

    async def hint(self, game_id: str) -> dict[str, Any]:
        """A hint in the player's casual game (``REST.md``, "Hints"): ``{"move",
        "win_chance", "samples", "version", ...}``; the game is marked assisted."""
        path = f"/v1/games/{_segment(game_id)}/hint"
        answer: dict[str, Any] = await self._call("POST", path)
        return answer

    async def log(self, game_id: str) -> dict[str, Any]:
        """The game's move log."""
        answer: dict[str, Any] = await self._call("GET", f"/v1/games/{_segment(game_id)}/log")
        return answer

    async def replay(self, game_id: str) -> dict[str, Any]:
        """The game's replay export (``AUDIT.md``)."""
        path = f"/v1/games/{_segment(game_id)}/replay"
        answer: dict[str, Any] = await self._call("GET", path)
        return answer

    async def verdict(self, game_id: str) -> dict[str, Any]:
        """The audit verdict of a finished game (``AUDIT.md``)."""
        path = f"/v1/games/{_segment(game_id)}/verdict"
        answer: dict[str, Any] = await self._call("GET", path)
        return answer

    async def undo(self, game_id: str, version: int, move_id: str | None = None) -> dict[str, Any]:
        """Take back the last move still in effect (casual games only; ``undo_ranked``
        in a ranked game): :meth:`move_rest` with the move ``"undo"``."""
        return await self.move_rest(game_id, "undo", version, move_id)

    # -- daily challenges -------------------------------------------------------------

    async def daily(self, game: str, date: str | None = None) -> dict[str, Any]:
        """Today's (or ``date``'s, ``YYYY-MM-DD``) challenge of ``game``."""
        path = f"/v1/daily/{_segment(game)}"
        if date is not None:
            path += f"/{_segment(date)}"
        answer: dict[str, Any] = await self._call("GET", path)
        return answer

    async def start_daily(self, game: str) -> dict[str, Any]:
        """Start (or resume) the player's ranked attempt at today's challenge: a snapshot."""
        answer: dict[str, Any] = await self._call("POST", f"/v1/daily/{_segment(game)}")
        return answer

    async def leaderboard(self, game: str, date: str, limit: int = 100) -> dict[str, Any]:
        """A day's leaderboard, best first: ``{"game", "date", "size", "entries"}``."""
        path = f"/v1/leaderboards/{_segment(game)}/{_segment(date)}"
        answer: dict[str, Any] = await self._call("GET", path, params={"limit": limit})
        return answer

    async def my_rank(self, game: str, date: str, radius: int = 5) -> dict[str, Any]:
        """The player's rank on a day's board (``rank`` null without an entry) and the
        entries ``radius`` around it."""
        path = f"/v1/leaderboards/{_segment(game)}/{_segment(date)}/me"
        answer: dict[str, Any] = await self._call("GET", path, params={"radius": radius})
        return answer

    # -- WebSocket --------------------------------------------------------------------

    @property
    def ws_url(self) -> str:
        """The WebSocket address of the server (``ws://…/v2/ws``)."""
        scheme, rest = self.base_url.split("://", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/v2/ws"

    def connection(self, **options: Any) -> Connection:
        """A :class:`Connection` to this server with this client's token (not yet open:
        ``async with client.connection() as connection: ...``)."""
        return Connection(self.ws_url, self.token, timeout=self.timeout, **options)
