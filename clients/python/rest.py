"""The REST half of the SDK (``protocol/REST.md``)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

from clients.python.errors import ApiError
from clients.python.ws import Connection

#: A token's lifetime (``protocol/ACCOUNTS.md``): the SDK renews it once half has passed.
TOKEN_LIFETIME = 30 * 24 * 3600
RENEW_ROUTE = "/v1/players/me/token"


def _segment(value: str) -> str:
    return quote(value, safe="")


def token_expires(token: str | None) -> int | None:
    """When a token expires (Unix seconds: ``v1.<player_id>.<expires>.<signature>``), or
    None for something else."""
    parts = (token or "").split(".")
    if len(parts) != 4 or parts[0] != "v1" or not parts[2].isascii() or not parts[2].isdigit():
        return None
    return int(parts[2])


class Client:
    """An asyncio REST client of the game server.

    ``base_url`` is the server's address (``http://127.0.0.1:8000``).  ``token`` is the
    bearer token of a player; :meth:`create_player` makes one and keeps it.  Every method
    returns the decoded JSON answer and raises :class:`ApiError` for an error answer.

    Once half a token's lifetime has passed (15 days), the next call first renews it
    (``POST /v1/players/me/token``) and ``on_token`` is called with the new one, for the app
    to keep; ``auto_renew=False`` turns that off (:meth:`renew_token` does it by hand).
    ``clock`` (Unix seconds) is for tests.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        token: str | None = None,
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
        auto_renew: bool = True,
        on_token: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.auto_renew = auto_renew
        self.on_token = on_token
        self.clock = clock
        self._renewing = asyncio.Lock()
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
        if self.auto_renew and path != RENEW_ROUTE:
            await self._renew_if_due()
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

    def _take_token(self, answer: dict[str, Any]) -> None:
        self.token, self.player_id = answer["token"], answer["player_id"]
        if self.on_token is not None:
            self.on_token(self.token)

    async def _renew_if_due(self) -> None:
        """Renew the token once half its lifetime has passed (one renewal at a time; a
        failed one leaves the token as it was, and the call goes on with it)."""
        expires = token_expires(self.token)
        if expires is None or self.clock() < expires - TOKEN_LIFETIME / 2:
            return
        async with self._renewing:
            expires = token_expires(self.token)  # renewed while this call waited?
            if expires is None or self.clock() < expires - TOKEN_LIFETIME / 2:
                return
            # A failure leaves the token as it was: the call itself then says what is wrong
            # (an expired or revoked token), or works with it.
            with contextlib.suppress(ApiError, httpx.HTTPError):
                await self.renew_token()

    # -- accounts (protocol/ACCOUNTS.md) ---------------------------------------------

    async def renew_token(self) -> dict[str, Any]:
        """A fresh token for the current one (kept from now on): ``{"player_id", "token",
        "name", "expires_at"}``."""
        answer: dict[str, Any] = await self._call("POST", RENEW_ROUTE)
        self._take_token(answer)
        return answer

    async def sign_out_everywhere(self) -> dict[str, Any]:
        """Revoke every token of the player, this one included: ``{"player_id",
        "revoked_before"}``."""
        answer: dict[str, Any] = await self._call("DELETE", "/v1/players/me/tokens")
        return answer

    async def create_transfer_code(self) -> dict[str, Any]:
        """A one-time code (15 minutes) that moves the player to a new device:
        ``{"code", "expires_at"}``."""
        answer: dict[str, Any] = await self._call("POST", "/v1/players/me/transfer")
        return answer

    async def redeem_transfer_code(self, code: str) -> dict[str, Any]:
        """On the new device: the code's player and a fresh token (kept from now on)."""
        answer: dict[str, Any] = await self._call("POST", "/v1/players/transfer", {"code": code})
        self._take_token(answer)
        return answer

    async def login(self, id_token: str) -> dict[str, Any]:
        """Sign in with an ID token of the server's identity provider: the player bound to
        it (``created`` at the first sign-in) and its token (kept from now on)."""
        answer: dict[str, Any] = await self._call(
            "POST", "/v1/players/login", {"id_token": id_token}
        )
        self._take_token(answer)
        return answer

    async def link_identity(self, id_token: str) -> dict[str, Any]:
        """Link the ID token's identity to this player (``ApiError("identity_taken")`` if
        another has it): the account view."""
        answer: dict[str, Any] = await self._call(
            "POST", "/v1/players/me/identity", {"id_token": id_token}
        )
        return answer

    async def export_account(self) -> dict[str, Any]:
        """Everything the server keeps about the player."""
        answer: dict[str, Any] = await self._call("GET", "/v1/players/me/export")
        return answer

    async def delete_account(self) -> dict[str, Any]:
        """Delete the player's account for good (its tokens stop working)."""
        answer: dict[str, Any] = await self._call("DELETE", "/v1/players/me", {"confirm": True})
        self.token = None
        return answer

    # -- players and games ------------------------------------------------------------

    async def create_player(self, name: str | None = None) -> dict[str, Any]:
        """A new player, ``{"player_id", "token", "name"}`` (named ``name`` if given:
        ``ApiError("name_taken")`` when another player has it); its token is used from
        now on."""
        body = None if name is None else {"name": name}
        player: dict[str, Any] = await self._call("POST", "/v1/players", body)
        self._take_token(player)
        return player

    async def me(self) -> dict[str, Any]:
        """The account view: ``{"player_id", "name", "created_at", "transfer_codes",
        "identity"}``."""
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

    async def restart(self, game_id: str) -> dict[str, Any]:
        """A new casual game on the deal of the player's casual game ``game_id``
        (``REST.md``, "Restart"): its snapshot; a ranked attempt is ``restart_ranked``."""
        path = f"/v1/games/{_segment(game_id)}/restart"
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
