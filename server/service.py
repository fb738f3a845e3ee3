"""What the server does, independent of REST or WebSocket framing."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from protocol import chain
from protocol.rng import InvalidSeed, random_seed, validate_seed
from server import auth, daily, keys
from server.accounts import binding, transfer
from server.accounts.revocation import Revocations
from server.codec import pack
from server.config import Limits
from server.daily import Choice
from server.daily.selection import NOT_READY_RETRY_MS, load_choice
from server.errors import ApiError
from server.hub import Patch
from server.leaderboard import Entry, Leaderboards
from server.operator import suspension
from server.patches import compact_patch
from server.players import valid_name
from server.rules import (
    GAMES,
    UNDO,
    UNDOABLE,
    Game,
    IllegalMove,
    Move,
    Op,
    UnknownGame,
    load_game,
    new_game,
    undo_logged,
)
from server.store import NO_ORIGIN, RANKED_TTL, Store, StoredGame

REPLAY_FORMAT = "solitaire-replay/1"

#: Games in play kept decoded in memory per process, to skip a Redis read per move (a
#: game won or resigned leaves: it takes no move again).
CACHE_SIZE = 10_000
#: A game nobody moved in for this long (ms, on the service's clock) leaves the cache at the
#: next move in any game: one Redis read when its player comes back.
CACHE_IDLE_MS = 10 * 60_000
#: Largest ``client_time`` taken (the largest msgpack signed integer).
MAX_CLIENT_TIME = 2**63 - 1
#: Games whose outbox is read per round trip when re-driving them.
REDRIVE_BATCH = 500
#: Longest client-supplied install id (``X-Install-Id``), in characters.
MAX_INSTALL_ID = 128


def now_ms() -> int:
    return int(time.time() * 1000)


def new_game_id() -> str:
    return "g_" + secrets.token_urlsafe(12)


def owner_moves(stored: StoredGame, game: Game, now: int) -> list[Move]:
    """The moves its owner may make at ``now`` (Unix ms): none in a ranked attempt whose day
    has closed, as every move there is refused with ``daily_closed``."""
    if stored.daily and daily.is_closed(stored.daily, now):
        return []
    return game.legal_moves()


def snapshot(stored: StoredGame, game: Game, viewer: str | None, now: int) -> dict[str, Any]:
    """A game's full client state at ``now``; ``legal_moves`` only for its owner."""
    owner = viewer == stored.owner
    return {
        "id": stored.id,
        "game": stored.game,
        "version": stored.version,
        "status": game.status,
        "score": game.score,
        "view": game.view(),
        "legal_moves": owner_moves(stored, game, now) if owner else None,
        "daily": stored.daily or None,
        "assisted": stored.assisted,
    }


def daily_game_id(secret: bytes, name: str, date: str, player_id: str) -> str:
    """The id of the player's ranked game of the day: the same at every try, so a retried
    start finds (or recreates) the same game; unguessable without the secret."""
    key = keys.derive_key(secret, keys.DAILY_GAME_ID)
    digest = hmac.new(key, f"{name}:{date}:{player_id}".encode(), hashlib.sha256).digest()
    return "g_" + base64.urlsafe_b64encode(digest[:12]).decode()


def scouting_hash(secret: bytes, date: str, kind: str, value: str | None) -> str:
    """The per-day keyed hash of a client address or install id ("" for none): equal
    values of one day match, nothing else can be learnt from it (``DAILY.md``)."""
    if not value:
        return ""
    key = keys.derive_key(secret, keys.SCOUTING_TRACE)
    return hmac.new(key, f"{date}:{kind}:{value}".encode(), hashlib.sha256).hexdigest()


def outbox_value(stored: StoredGame, game: Game) -> str:
    """The board entry of a ranked game as it stands (``stored`` and ``game`` agree), as
    written to its outbox: at its start, when its score changes, when it ends."""
    entry = Entry(
        player_id=stored.owner,
        game_id=stored.id,
        score=game.score,
        won=game.status == "won",
        moves=stored.moves,
        elapsed_ms=(stored.finished_at or stored.updated_at) - stored.created_at,
        finished_at=stored.finished_at,
        status=game.status,
    )
    pending = {"game": stored.game, "date": stored.daily, "entry": dataclasses.asdict(entry)}
    return json.dumps(pending)


def not_replicated(version: int | None) -> ApiError:
    return ApiError(
        "not_replicated",
        "the move is stored but no replica confirmed it in time; send it again with the "
        "same move_id",
        version=version,
    )


def check_game_name(name: object) -> str:
    if not isinstance(name, str) or name not in GAMES:
        raise ApiError("unknown_game_name", f"unknown game {str(name)[:40]!r}")
    return name


class GameService:
    def __init__(
        self,
        store: Store,
        secret: bytes,
        clock: Callable[[], int] = now_ms,
        ranked_min_account_age: int = 0,
    ) -> None:
        self.store = store
        #: Unix ms; tests move it to close a day.
        self.clock = clock
        #: Seconds an account must exist before it may start a ranked attempt (0: none).
        self.ranked_min_account_age = ranked_min_account_age
        #: A ranked attempt needs a linked identity (``--ranked-requires-identity``).
        self.ranked_requires_identity = False
        self.leaderboards = Leaderboards(store.redis)
        self.players = store.players
        self.secret = secret
        #: This process's copy of the token revocations (the app starts its reading).
        self.revocations = Revocations(store.redis, lambda: self.clock() / 1000)
        #: Moves a game takes before only ``resign`` is (README.md, "Limits").
        self.max_moves_per_game = Limits.max_moves_per_game
        #: Called with a stored patch the move script did not publish (no other process
        #: watches its game): the app's hub hands it to this process's sockets.
        self.deliver_unpublished: Callable[[str, Patch], None] = lambda game_id, patch: None
        # game id -> (stored record, decoded game at that record's version)
        #: Game id -> (stored, game, last use on the clock), least recently used first.
        self._cache: OrderedDict[str, tuple[StoredGame, Game, int]] = OrderedDict()

    # -- players ------------------------------------------------------------

    async def create_player(self, name: object = None) -> dict[str, Any]:
        """A new player, named ``name`` if given (claimed before the player exists, so
        a taken name creates nothing)."""
        player_id = auth.new_player_id()
        display = None if name is None else valid_name(name)
        if display is not None:
            await self.players.set_name(player_id, display, self.clock(), self.store.player_ttl())
        await self.store.add_player(player_id, self.clock())
        return {
            "player_id": player_id,
            "token": auth.issue_token(self.secret, player_id, self.clock() / 1000),
            "name": display,
        }

    async def me(self, player_id: str) -> dict[str, Any]:
        now = self.clock()
        created_at = await self.store.player_created_at(player_id, now)
        name = await self.players.name(player_id)
        codes = await transfer.pending_codes(self.store.redis, player_id, now)
        suspended = await suspension.read(self.store.redis, player_id, now)
        return {
            "player_id": player_id,
            "name": name,
            "created_at": created_at,
            "transfer_codes": codes,
            "identity": await binding.linked(self.store.redis, player_id),
            "suspended": suspended is not None,
            "suspended_until": None if suspended is None else suspended["until"],
        }

    async def rename(self, player_id: str, name: object) -> dict[str, Any]:
        """Set (a string) or clear (None) the player's display name."""
        display = None if name is None else valid_name(name)
        await self.players.set_name(player_id, display, self.clock(), self.store.player_ttl())
        return await self.me(player_id)

    async def my_games(self, player_id: str, cursor: str | None, limit: int) -> dict[str, Any]:
        """A page of the player's games, newest first (``REST.md``, "Players")."""
        members, next_cursor = await self.players.history(player_id, cursor, limit)
        ids = [member.split(".", 1)[1] for member in members]
        games, gone = [], []
        for member, stored in zip(members, await self.store.load_many(ids), strict=True):
            if stored is None or stored.owner != player_id:
                gone.append(member)
                continue
            void = None
            if stored.daily:
                void = (await self.leaderboards.voids(stored.game, stored.daily, [player_id]))[0]
            games.append(
                {
                    "id": stored.id,
                    "game": stored.game,
                    "daily": stored.daily or None,
                    "status": stored.status,
                    "score": stored.score,
                    "moves": stored.moves,
                    "created_at": stored.created_at,
                    "finished_at": stored.finished_at or None,
                    "assisted": stored.assisted,
                    "restart_of": stored.restart_of or None,
                    # The void's reason code only: the operator's text is theirs.
                    "void_reason": None if void is None else json.loads(void)["code"],
                }
            )
        # Expired games leave the history when a page meets them.
        await self.players.forget_games(player_id, gone)
        return {"player_id": player_id, "games": games, "next": next_cursor}

    async def my_stats(self, player_id: str) -> dict[str, Any]:
        return {"player_id": player_id, "games": await self.players.stats(player_id)}

    async def _record_finish(self, stored: StoredGame, game: Game) -> None:
        """Count a game that just ended in its player's stats (one round trip)."""
        await self.players.record_finish(
            stored.owner,
            stored.id,
            stored.game,
            game.status == "won",
            game.score,
            stored.finished_at,
            self.store.player_ttl(stored.ranked),
        )

    async def _reopen(self, stored: StoredGame) -> None:
        """An undo took a stuck casual game back into play: its stats' count waits for
        its next end, and a verdict computed while it was stuck is dropped."""
        await self.players.reopen(stored.owner, stored.id, stored.game)
        await self.store.forget_verdict(stored.id)

    def authenticate(self, token: object) -> str:
        return self.token_claims(token).player_id

    def token_claims(self, token: object) -> auth.Claims:
        """The claims of a valid token not revoked; ``unauthorized`` or ``token_revoked``."""
        claims = auth.verify(self.secret, token, self.clock() / 1000)
        self.revocations.check(claims)
        return claims

    # -- games --------------------------------------------------------------

    async def create_game(
        self, owner: str, name: object, seed: object, practice: str | None = None
    ) -> dict[str, Any]:
        """Start a casual game: a random seed unless one is given, or the deal of the
        closed day ``practice`` (unranked practice of a past daily challenge)."""
        name = check_game_name(name)
        if practice is not None:
            if seed is not None:
                raise ApiError(
                    "invalid_field", "give a seed or a daily date, not both", field="seed"
                )
            seed = await self.closed_daily_seed(name, practice)
        elif seed is None:
            seed = random_seed()
        try:
            seed = validate_seed(seed)  # type: ignore[arg-type]
        except InvalidSeed as error:
            raise ApiError("invalid_seed", str(error)) from None
        stored, game = await self._deal(new_game_id(), owner, name, seed)
        return snapshot(stored, game, owner, self.clock())

    async def restart_game(self, owner: str, game_id: object) -> dict[str, Any]:
        """A new casual game on the deal of ``game_id`` (its owner's, casual), recorded as
        its restart. A ranked attempt is never restarted: one try at the day's board.
        Anyone else meets ``daily_open`` for an open day's ranked game, as every read."""
        stored = await self.readable(game_id, owner)
        if stored.owner != owner:
            raise ApiError("forbidden", "only the game's owner may restart it")
        if stored.ranked:
            raise ApiError(
                "restart_ranked",
                f"a ranked daily attempt ({stored.daily}) has one try: it cannot be restarted",
            )
        new, game = await self._deal(
            new_game_id(), owner, stored.game, stored.seed, restart_of=stored.id
        )
        return snapshot(new, game, owner, self.clock())

    async def closed_daily_seed(self, name: str, date: str) -> str:
        """The seed of a day's challenge once the day has closed (it is public then)."""
        now = self.clock()
        try:
            opens = daily.opens_ms(date)
        except ApiError:
            raise ApiError("invalid_field", "daily is a date (YYYY-MM-DD)", field="daily") from None
        if now < opens:
            raise ApiError("not_open", f"the {date} challenge has not opened yet")
        if not daily.is_closed(date, now):
            closes = daily.closes_ms(date)
            raise ApiError(
                "daily_open", f"the {date} challenge is open until {closes}", closes=closes
            )
        return (await self.daily_choice(name, date))[0]

    async def daily_choice(self, name: str, date: str) -> tuple[str, Choice]:
        """The seed and choice of ``name``'s challenge on ``date``, from what is stored:
        ``no_daily`` for a closed day that has none (nobody could play it), else
        ``daily_not_ready`` while the background selection, on its own schedule, has not
        stored it.  No request starts solver work: an anonymous read of past days had
        each of them chosen, minutes of CPU per day."""
        choice = await load_choice(self.store.redis, name, date)
        if choice is None:
            if daily.is_closed(date, self.clock()):
                raise ApiError("no_daily", f"no {name} challenge was held on {date}")
            raise ApiError(
                "daily_not_ready",
                f"the {name} {date} deal is still being chosen; retry shortly",
                retry_after_ms=NOT_READY_RETRY_MS,
            )
        return daily.candidate_seed(self.secret, name, date, choice.k), choice

    async def chosen_daily_seed(self, name: str, date: str) -> str | None:
        """The seed of a day's chosen deal; None when none has been chosen."""
        choice = await load_choice(self.store.redis, name, date)
        return None if choice is None else daily.candidate_seed(self.secret, name, date, choice.k)

    async def _deal(
        self,
        game_id: str,
        owner: str,
        name: str,
        seed: str,
        daily: str = "",
        client_hash: str = "",
        install_hash: str = "",
        restart_of: str = "",
    ) -> tuple[StoredGame, Game]:
        """Deal and store a new game; a game already stored under ``game_id`` (a retried
        daily start) is returned as it is instead."""
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
            client_hash=client_hash,
            install_hash=install_hash,
            restart_of=restart_of,
        )
        outbox = outbox_value(stored, game) if daily else ""
        if not await self.store.create_game(stored, outbox):
            stored = await self.load(game_id)
            game = load_game(stored.state)
        elif game.is_over:
            await self._record_finish(stored, game)
        return stored, game

    # -- daily challenges -----------------------------------------------------

    async def challenge(self, name: object, date: str | None = None) -> dict[str, Any]:
        now = self.clock()
        name = check_game_name(name)
        date = date or daily.today(now)
        daily.check_open(date, now)
        seed, choice = await self.daily_choice(name, date)
        return daily.challenge(name, date, now, seed, choice)

    async def start_daily(
        self,
        player_id: str,
        name: object,
        client_address: str | None = None,
        install_id: str | None = None,
    ) -> dict[str, Any]:
        """The player's one ranked attempt at today's challenge, started or resumed.

        Its game id derives from the game, the day and the player, and the game is
        created only if absent before the attempt is indexed: a start that failed
        half-way (the store went away) converges to the same one game when retried.
        """
        name = check_game_name(name)
        now = self.clock()
        date = daily.today(now)
        game_id = daily_game_id(self.secret, name, date, player_id)
        seed, _ = await self.daily_choice(name, date)
        existing = await self.store.daily_attempt(name, date, player_id)
        if existing is not None:
            stored_game = await self.store.load(existing)
            if stored_game is not None:
                await self.drain_outbox(existing)  # in case a start stopped short
                return snapshot(stored_game, load_game(stored_game.state), player_id, self.clock())
            # The indexed game is gone (it expired, or an older server lost it): start anew.
        else:
            await suspension.check_ranked(self.store.redis, player_id, now)
            if self.ranked_requires_identity and not await binding.linked(
                self.store.redis, player_id
            ):
                raise ApiError(
                    "identity_required",
                    "ranked play on this server needs an identity: sign in with it "
                    "(POST /v1/players/me/identity)",
                )
            if self.ranked_min_account_age:
                await self._check_account_age(player_id, now)
        if install_id is not None and not (
            len(install_id) <= MAX_INSTALL_ID and install_id.isascii() and install_id.isprintable()
        ):
            raise ApiError(
                "invalid_field",
                f"an install id is at most {MAX_INSTALL_ID} printable ASCII characters",
                field="X-Install-Id",
            )
        stored, game = await self._deal(
            game_id,
            player_id,
            name,
            seed,
            daily=date,
            client_hash=scouting_hash(self.secret, date, "addr", client_address),
            install_hash=scouting_hash(self.secret, date, "install", install_id),
        )
        await self.store.index_daily_attempt(name, date, player_id, stored.id)
        await self.drain_outbox(stored.id)
        return snapshot(stored, game, player_id, self.clock())

    async def _check_account_age(self, player_id: str, now: int) -> None:
        created_at = await self.store.player_created_at(player_id, now)
        eligible_at = created_at + self.ranked_min_account_age * 1000
        if now < eligible_at:
            raise ApiError(
                "account_too_new",
                f"this account may start a ranked attempt from {eligible_at} (Unix ms); "
                "until then, practise a closed day's challenge",
                eligible_at=eligible_at,
            )

    async def leaderboard(
        self, name: object, date: str, limit: int, viewer: str | None = None
    ) -> dict[str, Any]:
        """The top of a day's board; while the day is open only ``viewer``'s own entry
        links to its game."""
        name = check_game_name(name)
        now = self.clock()
        closed = daily.is_closed(date, now)
        pending = await self.leaderboards.review_pending(name, date, daily.closes_ms(date), now)
        return {
            "game": name,
            "date": date,
            "size": await self.leaderboards.size(name, date),
            "entries": await self.leaderboards.top(name, date, limit, viewer, closed, pending),
        }

    async def my_rank(self, name: object, date: str, player_id: str, radius: int) -> dict[str, Any]:
        name = check_game_name(name)
        now = self.clock()
        closed = daily.is_closed(date, now)
        pending = await self.leaderboards.review_pending(name, date, daily.closes_ms(date), now)
        rank, entries = await self.leaderboards.around(
            name, date, player_id, radius, closed, pending
        )
        return {
            "game": name,
            "date": date,
            "player_id": player_id,
            "rank": rank,
            "entries": entries,
        }

    async def drain_outbox(self, game_id: str, value: str | None = None) -> None:
        """Record the board entry a ranked game's last write called for, if not yet
        done: ``value`` as written, else as read from the game.  Idempotent: the board
        keeps an entry made after more moves, and an ended attempt's entry is final."""
        if value is None:
            value = await self.store.outbox(game_id)
            if value is None:
                return
        pending = json.loads(value)
        entry = Entry(**pending["entry"])
        await self.leaderboards.record(pending["game"], pending["date"], entry, RANKED_TTL)
        await self.store.clear_outbox(game_id, value)

    async def redrive_outboxes(self) -> int:
        """Drain the board entries left pending by a process that stopped between a
        ranked game's write and its board update (today's and yesterday's attempts,
        the only ones still taking moves): how many there were."""
        now = self.clock()
        days = (daily.today(now), daily.today(now - daily.DAY_MS))
        drained = 0
        for name in GAMES:
            for date in days:
                game_ids = await self.store.daily_attempts(name, date)
                for start in range(0, len(game_ids), REDRIVE_BATCH):
                    batch = game_ids[start : start + REDRIVE_BATCH]
                    for game_id, value in (await self.store.outboxes(batch)).items():
                        await self.drain_outbox(game_id, value)
                        drained += 1
        return drained

    # -- games ----------------------------------------------------------------

    async def load(self, game_id: object) -> StoredGame:
        if not isinstance(game_id, str) or len(game_id) > 64:
            raise ApiError("unknown_game", "no such game")
        stored = await self.store.load(game_id)
        if stored is None:
            raise ApiError("unknown_game", f"no game {game_id!r} (it may have expired)")
        return stored

    def check_readable(self, stored: StoredGame, viewer: str | None) -> None:
        """Only its player may read a ranked game while its day is open: its table,
        log or patches would show everyone else that day's deal."""
        if stored.daily and viewer != stored.owner:
            closes = daily.closes_ms(stored.daily)
            if self.clock() < closes:
                raise ApiError(
                    "daily_open",
                    f"a ranked game of {stored.daily} is its player's alone until the day "
                    f"closes at {closes} (Unix ms)",
                    closes=closes,
                )

    async def readable(self, game_id: object, viewer: str | None) -> StoredGame:
        """The stored game, if ``viewer`` may read it (:meth:`check_readable`)."""
        stored = await self.load(game_id)
        self.check_readable(stored, viewer)
        return stored

    async def snapshot(self, game_id: object, viewer: str | None) -> dict[str, Any]:
        stored = await self.readable(game_id, viewer)
        return snapshot(stored, load_game(stored.state), viewer, self.clock())

    async def play(
        self,
        game_id: str,
        player_id: str,
        move: str,
        version: int,
        move_id: str = "",
        client_time: int | None = None,
        origin: bytes = NO_ORIGIN,
    ) -> tuple[dict[str, Any], dict[str, Any] | None, Game]:
        """Apply ``move`` made against ``version``: ``(reply, patch, game)``.

        ``reply`` is ``{"version", "applied_version", "duplicate"}``; ``patch`` is the
        compact patch message (``server.patches``), None for a duplicate move id; it is
        published with ``origin`` (the socket that made the move).  Raises ``stale``,
        ``illegal_move`` and the rest.
        """
        if client_time is not None and not 0 <= client_time <= MAX_CLIENT_TIME:
            # Unix ms; unbounded JSON integers would make the log unencodable as msgpack.
            raise ApiError("invalid_field", "client_time is Unix milliseconds", field="client_time")
        # The cached copy first; if the store's chain head says it was built on a write
        # the store no longer has, once more on the stored game.
        for cached in (True, False):
            stored, game = await self._take(game_id, version, cached)
            played = await self._play_on(
                stored, game, player_id, move, version, move_id, client_time, origin
            )
            if played is not None:
                return played
        stored = await self.load(game_id)  # changed again meanwhile: the client retries
        raise ApiError(
            "stale",
            f"the game is at version {stored.version}, not {version}",
            version=stored.version,
        )

    async def _play_on(
        self,
        stored: StoredGame,
        game: Game,
        player_id: str,
        move: str,
        version: int,
        move_id: str,
        client_time: int | None,
        origin: bytes,
    ) -> tuple[dict[str, Any], dict[str, Any] | None, Game] | None:
        """:meth:`play` on ``stored`` and ``game`` (taken from the cache); None when the
        store refused it as ``diverged`` (``stored`` is not what the store holds)."""
        game_id = stored.id
        if stored.owner != player_id:
            self._put(stored, game)
            raise ApiError("forbidden", "only the game's owner may move in it")
        if stored.daily and daily.is_closed(stored.daily, self.clock()):
            self._put(stored, game)
            if move_id and await self.store.move_id_version(game_id, move_id) is not None:
                return await self._duplicate(game_id, move_id)  # applied before the close
            closes = daily.closes_ms(stored.daily)
            raise ApiError(
                "daily_closed",
                f"the {stored.daily} challenge closed at {closes} (Unix ms): the attempt "
                "is ranked as it stands",
                closes=closes,
            )
        if stored.version != version:
            self._put(stored, game)
            if move_id and await self.store.move_id_version(game_id, move_id) is not None:
                return await self._duplicate(game_id, move_id)
            raise ApiError(
                "stale",
                f"the game is at version {stored.version}, not {version}",
                version=stored.version,
            )
        score_before, status_before, redeals_before = game.score, game.status, game.redeals_left
        if move == UNDO and stored.ranked:
            self._put(stored, game)
            raise ApiError(
                "undo_ranked", "undo is for casual games: a ranked game takes none", version=version
            )
        try:
            # The normal form is what is logged and chained (ASCII, no stray spaces).
            move = UNDO if move == UNDO else Move(move)
            if stored.moves >= self.max_moves_per_game and move != "resign":
                self._put(stored, game)
                raise ApiError(
                    "move_limit",
                    f"the game took its {self.max_moves_per_game} moves: only 'resign' is left",
                    version=stored.version,
                )
            if move == UNDO:
                game, ops = await self._undo(stored, game)
            else:
                ops = game.play(move)
        except IllegalMove as error:
            self._put(stored, game)
            if move_id and await self.store.move_id_version(game_id, move_id) is not None:
                return await self._duplicate(game_id, move_id)  # re-sent after it applied
            code = error.code if error.code in ("malformed_move", "game_over") else "illegal_move"
            raise ApiError(
                code, error.reason, reason_code=error.code, version=stored.version
            ) from None
        patch = compact_patch(game_id, version, str(move), ops, game, status_before, redeals_before)
        score = game.score
        now = self.clock()
        state = game.to_bytes()
        state_hash = game.state_hash()
        link = chain.next_link(stored.chain_head, version + 1, str(move), now, state_hash)
        new = stored.after_move(state, game.status, score, link, now, game.is_over)
        # The board entry goes into the game's own slot with the move (the outbox), so a
        # stop between the move and the board update cannot lose it.
        board_changes = score != score_before or game.is_over
        outbox = outbox_value(new, game) if new.ranked and board_changes else ""
        frame = pack(patch)
        result = await self.store.apply_move(
            game_id,
            expected_version=version,
            move_id=move_id,
            state=state,
            status=game.status if game.status != status_before else None,
            score=score if score != score_before else None,
            patch=frame,
            origin=origin,
            move=str(move),
            client_time=client_time,
            server_time=now,
            state_hash=state_hash,
            chain=link,
            finished=game.is_over,
            ranked=stored.ranked,
            expected_head=stored.chain_head,
            outbox=outbox,
            reopened=status_before == "stuck" and not game.is_over,
        )
        if result.outcome == "ok":
            if not result.published:
                self.deliver_unpublished(game_id, (version, result.version, frame, origin))
            self._put(new, game)
            if outbox:
                await self.drain_outbox(game_id, outbox)
            if game.is_over:
                await self._record_finish(new, game)
            elif status_before == "stuck":
                await self._reopen(new)
            if not result.replicated:
                raise not_replicated(result.version)
            reply = {
                "version": result.version,
                "applied_version": result.version,
                "duplicate": False,
            }
            return reply, patch, game
        if result.outcome == "diverged":
            return None
        if result.outcome == "duplicate":
            return await self._duplicate(game_id, move_id)
        if result.outcome == "missing":
            raise ApiError("unknown_game", f"no game {game_id!r} (it may have expired)")
        raise ApiError(
            "stale",
            f"the game is at version {result.version}, not {version}",
            version=result.version,
        )

    async def _undo(self, stored: StoredGame, game: Game) -> tuple[Game, list[Op]]:
        """``undo`` on ``stored`` (``game``): its moves still in effect but the last,
        replayed from the deal (:func:`~server.rules.undo_logged`). The log is read only
        for an undo, so other moves cost nothing more; the replay is bounded by
        ``max_moves_per_game`` (``benchmarks/undo.py``)."""
        # Before reading the log: won and resigned are final (the ranked were refused).
        if game.status not in UNDOABLE:
            raise IllegalMove(f"the game is over ({game.status})", "game_over")
        entries = await self.store.log(stored.id)
        moves = [entry["move"] for entry in entries if entry["version"] <= stored.version]
        if len(moves) != stored.version:
            raise ApiError("stale", "the game changed meanwhile", version=len(entries))
        return undo_logged(game, new_game(stored.game, stored.seed), moves)

    async def _duplicate(self, game_id: str, move_id: str) -> tuple[dict[str, Any], None, Game]:
        """A move id already applied: the game as it is now (``version``, and the
        game), and the version that move produced (``applied_version``)."""
        applied, replicated = await self.store.replicated_move_id_version(game_id, move_id)
        if not replicated:
            raise not_replicated(applied)
        stored = await self.load(game_id)
        game = load_game(stored.state)
        if stored.ranked:  # the board update may be what failed the first time
            await self.drain_outbox(game_id)
        if game.is_over:  # and so may the stats' update (they count a game once)
            await self._record_finish(stored, game)
        reply = {"version": stored.version, "applied_version": applied, "duplicate": True}
        return reply, None, game

    async def _take(
        self, game_id: str, version: int, cached: bool = True
    ) -> tuple[StoredGame, Game]:
        """The game at ``version`` if cached (removed from the cache while in use) and
        ``cached`` allows it, else as stored now.  The move script checks that the
        cached copy's chain head is still the stored one."""
        copy = self._cache.pop(game_id, None)
        if cached and copy is not None and copy[0].version == version:
            return copy[0], copy[1]
        stored = await self.load(game_id)
        try:
            return stored, load_game(stored.state)
        except (UnknownGame, ValueError) as error:
            raise ApiError("internal", f"stored game {game_id!r} is unreadable") from error

    def _put(self, stored: StoredGame, game: Game) -> None:
        if game.is_over and game.status != "stuck":
            # Won or resigned: no move comes again (a stuck game's undo may reopen it).
            # Kept, every game played stayed decoded here until 10,000 others pushed it
            # out (the soak's worker RSS grew with every game).
            self._cache.pop(stored.id, None)
            return
        now = self.clock()
        self._cache[stored.id] = (stored, game, now)
        self._cache.move_to_end(stored.id)
        # The least recently used first: games left in play (a player gone for the day)
        # go after CACHE_IDLE_MS, not only when 10,000 others push them out.
        while self._cache and (
            len(self._cache) > CACHE_SIZE
            or next(iter(self._cache.values()))[2] < now - CACHE_IDLE_MS
        ):
            self._cache.popitem(last=False)

    def seed_revealed(self, stored: StoredGame) -> bool:
        """A casual game's seed is told once it is over; a daily game's once its day closed
        (the challenge route then tells it to everybody anyway)."""
        if stored.daily:
            return daily.is_closed(stored.daily, self.clock())
        return stored.status != "playing"

    async def log(
        self, game_id: str, viewer: str | None, after: str | None, limit: int
    ) -> dict[str, Any]:
        """One page of the log: ``limit`` moves after the cursor ``after``."""
        stored = await self.readable(game_id, viewer)
        moves, cursor = await self.store.log_page(game_id, after, limit)
        return {
            "game_id": game_id,
            "game": stored.game,
            "status": stored.status,
            "version": stored.version,
            "seed": stored.seed if self.seed_revealed(stored) else None,
            "assisted": stored.assisted,
            "moves": moves,
            "next": cursor,
        }

    async def replay(self, game_id: object, with_seed: bool = False) -> dict[str, Any]:
        """The replay export (``protocol/AUDIT.md``).  ``with_seed`` is for the
        server's own audit: the seed of a game still secret never leaves it."""
        return (await self.stored_replay(game_id, with_seed))[1]

    async def public_replay(self, game_id: object, viewer: str | None) -> dict[str, Any]:
        """The replay export as ``viewer`` may read it (``GET /v1/games/{id}/replay``)."""
        stored, export = await self.stored_replay(game_id)
        self.check_readable(stored, viewer)
        return export

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
            "assisted": stored.assisted,
            "moves": moves,
            "chain_head": stored.chain_head,
        }

    # -- hints -------------------------------------------------------------------

    async def hint_position(self, game_id: object, player_id: str) -> tuple[StoredGame, Game]:
        """The game a hint is asked for, if its owner may have one: ``forbidden`` for
        anyone else (``daily_open`` for an open day's ranked game, as every read),
        ``hints_ranked`` in a ranked attempt, ``game_over`` once it ended."""
        stored = await self.readable(game_id, player_id)
        if stored.owner != player_id:
            raise ApiError("forbidden", "only the game's owner may ask for a hint")
        if stored.ranked:
            raise ApiError("hints_ranked", "hints are for casual games, not a ranked attempt")
        game = load_game(stored.state)
        if game.is_over:
            raise ApiError("game_over", f"the game is over ({game.status})")
        return stored, game

    async def mark_assisted(self, stored: StoredGame) -> None:
        """Record that a hint was taken (snapshot, log and export say ``assisted``)."""
        if not await self.store.mark_assisted(stored.id):
            raise ApiError("unknown_game", f"no game {stored.id!r} (it may have expired)")
        self._cache.pop(stored.id, None)

    async def resync(self, game_id: str, version: int | None) -> list[bytes] | None:
        """Patches after ``version``, or None when the client needs a snapshot."""
        stored = await self.load(game_id)
        if version is None or version > stored.version or version < 0:
            return None
        return await self.store.patches_after(game_id, version)
