"""What the server does, independent of REST or WebSocket framing."""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from typing import Any

from protocol.rng import InvalidSeed, random_seed, validate_seed
from server import auth
from server.codec import pack
from server.errors import ApiError
from server.rules import GAMES, Game, IllegalMove, UnknownGame, load_game, new_game
from server.store import Store, StoredGame

#: Games kept decoded in memory per process, to skip a Redis read per move.
CACHE_SIZE = 10_000


def now_ms() -> int:
    return int(time.time() * 1000)


def new_game_id() -> str:
    return "g_" + secrets.token_urlsafe(12)


def snapshot(stored: StoredGame, game: Game, viewer: str | None) -> dict[str, Any]:
    """A game's full client state; ``legal_moves`` only for its owner."""
    owner = viewer == stored.owner
    return {
        "id": stored.id,
        "game": stored.game,
        "version": stored.version,
        "status": game.status,
        "score": game.score,
        "view": game.view(),
        "legal_moves": game.legal_moves() if owner else None,
    }


def patch_message(
    game_id: str, version: int, move: str, ops: list[dict[str, Any]], game: Game
) -> dict[str, Any]:
    """The ``patch`` pushed to every subscriber (``protocol/WEBSOCKET.md``)."""
    message = {
        "type": "patch",
        "game_id": game_id,
        "from": version,
        "to": version + 1,
        "move": move,
        "ops": ops,
        "status": game.status,
        "score": game.score,
    }
    if game.redeals_left is not None:
        message["redeals_left"] = game.redeals_left
    return message


class GameService:
    def __init__(self, store: Store, secret: bytes) -> None:
        self.store = store
        self.secret = secret
        # game id -> (stored record, decoded game at that record's version)
        self._cache: OrderedDict[str, tuple[StoredGame, Game]] = OrderedDict()

    # -- players ------------------------------------------------------------

    async def create_player(self) -> dict[str, str]:
        player_id = auth.new_player_id()
        await self.store.add_player(player_id, now_ms())
        return {
            "player_id": player_id,
            "token": auth.issue_token(self.secret, player_id, time.time()),
        }

    def authenticate(self, token: object) -> str:
        return auth.verify_token(self.secret, token, time.time())

    # -- games --------------------------------------------------------------

    async def create_game(self, owner: str, name: object, seed: object) -> dict[str, Any]:
        if not isinstance(name, str) or name not in GAMES:
            raise ApiError("unknown_game_name", f"unknown game {str(name)[:40]!r}")
        if seed is None:
            seed = random_seed()
        try:
            seed = validate_seed(seed)  # type: ignore[arg-type]
        except InvalidSeed as error:
            raise ApiError("invalid_seed", str(error)) from None
        game = new_game(name, seed)
        game_id = new_game_id()
        now = now_ms()
        state = game.to_bytes()
        await self.store.create_game(
            game_id,
            game=name,
            seed=seed,
            owner=owner,
            state=state,
            status=game.status,
            score=game.score,
            now_ms=now,
        )
        stored = StoredGame(
            game_id, name, seed, owner, 0, state, game.status, game.score, 0, now, now
        )
        return snapshot(stored, game, owner)

    async def load(self, game_id: object) -> StoredGame:
        if not isinstance(game_id, str) or len(game_id) > 64:
            raise ApiError("unknown_game", "no such game")
        stored = await self.store.load(game_id)
        if stored is None:
            raise ApiError("unknown_game", f"no game {game_id!r} (it may have expired)")
        return stored

    async def snapshot(self, game_id: object, viewer: str | None) -> dict[str, Any]:
        stored = await self.load(game_id)
        return snapshot(stored, load_game(stored.state), viewer)

    async def play(
        self,
        game_id: str,
        player_id: str,
        move: str,
        version: int,
        move_id: str = "",
        client_time: int | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any] | None, Game]:
        """Apply ``move`` made against ``version``: ``(reply, patch, game)``.

        ``reply`` is ``{"version", "duplicate"}``; ``patch`` is None for a
        duplicate move id.  Raises ``stale``, ``illegal_move`` and the rest.
        """
        stored, game = await self._take(game_id, version)
        if stored.owner != player_id:
            self._put(stored, game)
            raise ApiError("forbidden", "only the game's owner may move in it")
        if stored.version != version:
            self._put(stored, game)
            if move_id and await self.store.move_id_version(game_id, move_id) is not None:
                return await self._duplicate(game_id, move_id)
            raise ApiError(
                "stale",
                f"the game is at version {stored.version}, not {version}",
                version=stored.version,
            )
        try:
            ops = game.play(move)
        except IllegalMove as error:
            self._put(stored, game)
            code = error.code if error.code in ("malformed_move", "game_over") else "illegal_move"
            raise ApiError(
                code, error.reason, reason_code=error.code, version=stored.version
            ) from None
        patch = patch_message(game_id, version, str(move), ops, game)
        now = now_ms()
        state = game.to_bytes()
        result = await self.store.apply_move(
            game_id,
            expected_version=version,
            move_id=move_id,
            state=state,
            status=game.status,
            score=game.score,
            patch=pack(patch),
            move=patch["move"],
            client_time=client_time,
            server_time=now,
            state_hash=game.state_hash(),
            finished=game.is_over,
        )
        if result.outcome == "ok":
            new = StoredGame(
                game_id,
                stored.game,
                stored.seed,
                stored.owner,
                result.version,
                state,
                game.status,
                game.score,
                stored.moves + 1,
                stored.created_at,
                now,
            )
            self._put(new, game)
            return {"version": result.version, "duplicate": False}, patch, game
        if result.outcome == "duplicate":
            return await self._duplicate(game_id, move_id)
        if result.outcome == "missing":
            raise ApiError("unknown_game", f"no game {game_id!r} (it may have expired)")
        raise ApiError(
            "stale",
            f"the game is at version {result.version}, not {version}",
            version=result.version,
        )

    async def _duplicate(self, game_id: str, move_id: str) -> tuple[dict[str, Any], None, Game]:
        """A move id already applied: the version it produced, and the game as it is now."""
        applied = await self.store.move_id_version(game_id, move_id)
        stored = await self.load(game_id)
        game = load_game(stored.state)
        version = stored.version if applied is None else applied
        return {"version": version, "duplicate": True}, None, game

    async def _take(self, game_id: str, version: int) -> tuple[StoredGame, Game]:
        """The game at ``version`` if cached (removed from the cache while in use),
        else as stored now."""
        cached = self._cache.pop(game_id, None)
        if cached is not None and cached[0].version == version:
            return cached
        stored = await self.load(game_id)
        try:
            return stored, load_game(stored.state)
        except (UnknownGame, ValueError) as error:
            raise ApiError("internal", f"stored game {game_id!r} is unreadable") from error

    def _put(self, stored: StoredGame, game: Game) -> None:
        self._cache[stored.id] = (stored, game)
        self._cache.move_to_end(stored.id)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    async def log(self, game_id: str, viewer: str | None) -> dict[str, Any]:
        stored = await self.load(game_id)
        entries = await self.store.log(game_id)
        moves = [
            {
                "version": int(entry["version"]),
                "move": entry["move"],
                "server_time": int(entry["server_time"]),
                "client_time": int(entry["client_time"]) if entry["client_time"] else None,
                "hash": entry["hash"],
            }
            for entry in entries
        ]
        over = stored.status != "playing"
        return {
            "game_id": game_id,
            "game": stored.game,
            "status": stored.status,
            "version": stored.version,
            "seed": stored.seed if over else None,
            "moves": moves,
        }

    async def resync(self, game_id: str, version: int | None) -> list[bytes] | None:
        """Patches after ``version``, or None when the client needs a snapshot."""
        stored = await self.load(game_id)
        if version is None or version > stored.version or version < 0:
            return None
        return await self.store.patches_after(game_id, version)
