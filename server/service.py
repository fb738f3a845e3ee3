"""What the server does, independent of REST or WebSocket framing."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from protocol import chain
from protocol.rng import InvalidSeed, random_seed, validate_seed
from server import auth, daily
from server.codec import pack
from server.config import Limits
from server.errors import ApiError
from server.leaderboard import Entry, Leaderboards
from server.rules import (
    GAMES,
    Game,
    IllegalMove,
    Move,
    UnknownGame,
    load_game,
    new_game,
)
from server.store import RANKED_TTL, Store, StoredGame

REPLAY_FORMAT = "solitaire-replay/1"

#: Games kept decoded in memory per process, to skip a Redis read per move.
CACHE_SIZE = 10_000
#: Largest ``client_time`` taken (the largest msgpack signed integer).
MAX_CLIENT_TIME = 2**63 - 1


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
        "daily": stored.daily or None,
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


def check_game_name(name: object) -> str:
    if not isinstance(name, str) or name not in GAMES:
        raise ApiError("unknown_game_name", f"unknown game {str(name)[:40]!r}")
    return name


class GameService:
    def __init__(self, store: Store, secret: bytes, clock: Callable[[], int] = now_ms) -> None:
        self.store = store
        #: Unix ms; tests move it to close a day.
        self.clock = clock
        self.leaderboards = Leaderboards(store.redis)
        self.secret = secret
        #: Moves a game takes before only ``resign`` is (README.md, "Limits").
        self.max_moves_per_game = Limits.max_moves_per_game
        # game id -> (stored record, decoded game at that record's version)
        self._cache: OrderedDict[str, tuple[StoredGame, Game]] = OrderedDict()

    # -- players ------------------------------------------------------------

    async def create_player(self) -> dict[str, str]:
        player_id = auth.new_player_id()
        await self.store.add_player(player_id, self.clock())
        return {
            "player_id": player_id,
            "token": auth.issue_token(self.secret, player_id, time.time()),
        }

    def authenticate(self, token: object) -> str:
        return auth.verify_token(self.secret, token, time.time())

    # -- games --------------------------------------------------------------

    async def create_game(self, owner: str, name: object, seed: object) -> dict[str, Any]:
        """Start a casual game (a random seed unless one is given)."""
        if seed is None:
            seed = random_seed()
        try:
            seed = validate_seed(seed)  # type: ignore[arg-type]
        except InvalidSeed as error:
            raise ApiError("invalid_seed", str(error)) from None
        stored, game = await self._deal(new_game_id(), owner, check_game_name(name), seed)
        return snapshot(stored, game, owner)

    async def _deal(
        self, game_id: str, owner: str, name: str, seed: str, daily: str = ""
    ) -> tuple[StoredGame, Game]:
        game = new_game(name, seed)
        deal_hash = game.state_hash()
        now = self.clock()
        stored = StoredGame(
            id=game_id,
            game=name,
            seed=seed,
            owner=owner,
            daily=daily,
            version=0,
            state=game.to_bytes(),
            status=game.status,
            score=game.score,
            moves=0,
            deal_hash=deal_hash,
            chain_head=chain.genesis(game_id, name, deal_hash),
            created_at=now,
            updated_at=now,
            # Some deals are stuck before any move (about 1 in 20 Gloucestershire deals).
            finished_at=now if game.is_over else 0,
        )
        await self.store.create_game(stored)
        if stored.ranked and game.is_over:
            await self._record_ranked(stored, game)
        return stored, game

    # -- daily challenges -----------------------------------------------------

    def challenge(self, name: object, date: str | None = None) -> dict[str, Any]:
        now = self.clock()
        return daily.challenge(self.secret, check_game_name(name), date or daily.today(now), now)

    async def start_daily(self, player_id: str, name: object) -> dict[str, Any]:
        """The player's one ranked attempt at today's challenge, started or resumed."""
        name = check_game_name(name)
        date = daily.today(self.clock())
        game_id = new_game_id()
        existing = await self.store.claim_daily_attempt(name, date, player_id, game_id)
        if existing is None:
            stored, game = await self._deal(
                game_id, player_id, name, daily.daily_seed(self.secret, name, date), daily=date
            )
            return snapshot(stored, game, player_id)
        for _ in range(50):  # the first request may still be dealing it
            stored_game = await self.store.load(existing)
            if stored_game is not None:
                return snapshot(stored_game, load_game(stored_game.state), player_id)
            await asyncio.sleep(0.02)
        raise ApiError("internal", "the daily attempt could not be read back")

    async def leaderboard(self, name: object, date: str, limit: int) -> dict[str, Any]:
        name = check_game_name(name)
        daily.parse_date(date)
        return {
            "game": name,
            "date": date,
            "size": await self.leaderboards.size(name, date),
            "entries": await self.leaderboards.top(name, date, limit),
        }

    async def my_rank(self, name: object, date: str, player_id: str, radius: int) -> dict[str, Any]:
        name = check_game_name(name)
        daily.parse_date(date)
        rank, entries = await self.leaderboards.around(name, date, player_id, radius)
        return {
            "game": name,
            "date": date,
            "player_id": player_id,
            "rank": rank,
            "entries": entries,
        }

    async def _record_ranked(self, stored: StoredGame, game: Game) -> None:
        """Put a ranked game that just ended on its day's leaderboard."""
        entry = Entry(
            player_id=stored.owner,
            game_id=stored.id,
            score=game.score,
            won=game.status == "won",
            moves=stored.moves,
            elapsed_ms=stored.finished_at - stored.created_at,
            finished_at=stored.finished_at,
        )
        await self.leaderboards.record(stored.game, stored.daily, entry, RANKED_TTL)

    # -- games ----------------------------------------------------------------

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

        ``reply`` is ``{"version", "applied_version", "duplicate"}``; ``patch`` is
        None for a duplicate move id.  Raises ``stale``, ``illegal_move`` and the rest.
        """
        if client_time is not None and not 0 <= client_time <= MAX_CLIENT_TIME:
            # Unix ms; unbounded JSON integers would make the log unencodable as msgpack.
            raise ApiError("invalid_field", "client_time is Unix milliseconds", field="client_time")
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
            # The normal form is what is logged and chained (ASCII, no stray spaces).
            move = Move(move)
            if stored.moves >= self.max_moves_per_game and move != "resign":
                self._put(stored, game)
                raise ApiError(
                    "move_limit",
                    f"the game took its {self.max_moves_per_game} moves: only 'resign' is left",
                    version=stored.version,
                )
            ops = game.play(move)
        except IllegalMove as error:
            self._put(stored, game)
            if move_id and await self.store.move_id_version(game_id, move_id) is not None:
                return await self._duplicate(game_id, move_id)  # re-sent after it applied
            code = error.code if error.code in ("malformed_move", "game_over") else "illegal_move"
            raise ApiError(
                code, error.reason, reason_code=error.code, version=stored.version
            ) from None
        patch = patch_message(game_id, version, str(move), ops, game)
        now = self.clock()
        state = game.to_bytes()
        state_hash = game.state_hash()
        link = chain.next_link(stored.chain_head, version + 1, patch["move"], now, state_hash)
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
            state_hash=state_hash,
            chain=link,
            finished=game.is_over,
            ranked=stored.ranked,
        )
        if result.outcome == "ok":
            new = dataclasses.replace(
                stored,
                version=result.version,
                state=state,
                status=game.status,
                score=game.score,
                moves=stored.moves + 1,
                chain_head=link,
                updated_at=now,
                finished_at=now if game.is_over else 0,
            )
            self._put(new, game)
            if new.ranked and game.is_over:
                await self._record_ranked(new, game)
            reply = {
                "version": result.version,
                "applied_version": result.version,
                "duplicate": False,
            }
            return reply, patch, game
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
        """A move id already applied: the game as it is now (``version``, and the
        game), and the version that move produced (``applied_version``)."""
        applied = await self.store.move_id_version(game_id, move_id)
        stored = await self.load(game_id)
        game = load_game(stored.state)
        reply = {"version": stored.version, "applied_version": applied, "duplicate": True}
        return reply, None, game

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

    def seed_revealed(self, stored: StoredGame) -> bool:
        """A casual game's seed is told once it is over; a daily game's once its day closed
        (the challenge route then tells it to everybody anyway)."""
        if stored.daily:
            return daily.is_closed(stored.daily, self.clock())
        return stored.status != "playing"

    async def log(self, game_id: str, after: str | None, limit: int) -> dict[str, Any]:
        """One page of the log: ``limit`` moves after the cursor ``after``."""
        stored = await self.load(game_id)
        moves, cursor = await self.store.log(game_id, after, limit)
        return {
            "game_id": game_id,
            "game": stored.game,
            "status": stored.status,
            "version": stored.version,
            "seed": stored.seed if self.seed_revealed(stored) else None,
            "moves": moves,
            "next": cursor,
        }

    async def replay(self, game_id: object, with_seed: bool = False) -> dict[str, Any]:
        """The replay export (``protocol/AUDIT.md``).  ``with_seed`` is for the
        server's own audit: the seed of a game still secret never leaves it."""
        return (await self.stored_replay(game_id, with_seed))[1]

    async def stored_replay(
        self, game_id: object, with_seed: bool = False
    ) -> tuple[StoredGame, dict[str, Any]]:
        """The game's record and its replay export, read together (they agree)."""
        if not isinstance(game_id, str) or len(game_id) > 64:
            raise ApiError("unknown_game", "no such game")
        stored, moves = await self.store.load_with_log(game_id)
        if stored is None:
            raise ApiError("unknown_game", f"no game {game_id!r} (it may have expired)")
        return stored, {
            "format": REPLAY_FORMAT,
            "game_id": stored.id,
            "game": stored.game,
            "daily": stored.daily or None,
            "owner": stored.owner,
            "seed": stored.seed if with_seed or self.seed_revealed(stored) else None,
            "deal_hash": stored.deal_hash,
            "created_at": stored.created_at,
            "finished_at": stored.finished_at or None,
            "status": stored.status,
            "score": stored.score,
            "moves": moves,
            "chain_head": stored.chain_head,
        }

    async def resync(self, game_id: str, version: int | None) -> list[bytes] | None:
        """Patches after ``version``, or None when the client needs a snapshot."""
        stored = await self.load(game_id)
        if version is None or version > stored.version or version < 0:
            return None
        return await self.store.patches_after(game_id, version)
