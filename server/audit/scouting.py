"""Scouting links: other attempts of the same day made from the same client.

Each ranked attempt's record (``game:{id}``) keeps keyed, per-day hashes of its
client's address and of the install id its client sent: the fields
``client_hash`` and ``install_hash`` (lowercase hex; empty when there was
nothing to hash).  A record without those fields has no trace recorded.  The
day's attempts are listed by ``daily:{game:date}:attempts`` (player id -> game
id).  Two attempts that share a non-empty hash were made from one address or
one installation: if one of them gave up early, it may have been a scout that
dealt the deal out for the other.  The leaderboard audit reports every such
link as the fair-play signal ``scouting_link`` (``protocol/AUDIT.md``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server import daily
from server.audit.core import Signal
from server.rules import GAMES, IllegalMove, new_game
from server.store import attempts_key, game_key

if TYPE_CHECKING:
    from server.service import GameService

#: The trace fields of a ranked game's record, and what each hashes.
TRACES = {"client_hash": "client address", "install_hash": "install id"}
#: Linked attempts listed in one signal's evidence; further ones are counted.
MAX_LINKS_LISTED = 20
#: Records read per Redis round trip.
BATCH = 500
_RECORD_FIELDS = (
    "owner",
    "game",
    "seed",
    "status",
    "moves",
    "score",
    "created_at",
    "finished_at",
    *TRACES,
)
#: How an attempt ended, as the evidence says it (``protocol/AUDIT.md``).
ENDINGS = {
    "won": "won",
    "stuck": "stuck (no legal move left)",
    "resigned": "resigned",
    "dealt_through_stock": "dealt through the stock, then stopped (resigned or left)",
    "abandoned": "abandoned (never moved, or still unfinished at the close)",
    "playing": "still being played (the day is open)",
}


@dataclass(frozen=True)
class Attempt:
    """A ranked attempt as the scouting report needs it (None: not recorded)."""

    game_id: str
    player_id: str
    game: str
    seed: str
    status: str
    moves: int
    score: int
    created_at: int
    finished_at: int
    #: Trace field -> its hash ("" when nothing was hashed); a field missing from
    #: the record is absent here too.
    traces: dict[str, str]

    @property
    def trace_recorded(self) -> bool:
        return bool(self.traces)

    def shared_with(self, other: Attempt) -> list[str]:
        """The trace fields both attempts share (never an empty hash)."""
        return [
            name for name, value in self.traces.items() if value and other.traces.get(name) == value
        ]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else "" if value is None else str(value)


def _number(value: Any) -> int:
    text = _text(value)
    return int(text) if text.lstrip("-").isdigit() else 0


def _attempt(game_id: str, player_id: str, values: list[Any]) -> Attempt | None:
    fields = dict(zip(_RECORD_FIELDS, values, strict=True))
    if fields["game"] is None:
        return None
    return Attempt(
        game_id=game_id,
        player_id=_text(fields["owner"]) or player_id,
        game=_text(fields["game"]),
        seed=_text(fields["seed"]),
        status=_text(fields["status"]),
        moves=_number(fields["moves"]),
        score=_number(fields["score"]),
        created_at=_number(fields["created_at"]),
        finished_at=_number(fields["finished_at"]),
        traces={name: _text(fields[name]) for name in TRACES if fields[name] is not None},
    )


async def read_attempts(service: GameService, pairs: Iterable[tuple[str, str]]) -> list[Attempt]:
    """The records of ``(player id, game id)`` pairs that still exist."""
    pairs = list(pairs)
    found = []
    for start in range(0, len(pairs), BATCH):
        chunk = pairs[start : start + BATCH]
        async with service.store.redis.pipeline(transaction=False) as pipe:
            for _, game_id in chunk:
                pipe.hmget(game_key(game_id), _RECORD_FIELDS)
            replies = await pipe.execute()
        for (player_id, game_id), values in zip(chunk, replies, strict=True):
            attempt = _attempt(game_id, player_id, values)
            if attempt is not None:
                found.append(attempt)
    return found


class DayAttempts:
    """Every recorded attempt of one day's challenge, indexed by trace."""

    def __init__(self, service: GameService, game: str, date: str, index: dict[str, str]) -> None:
        self.service = service
        self.game = game
        self.date = date
        #: game id -> player id, as the attempts index lists them.
        self.index = index
        self.attempts: dict[str, Attempt] = {}
        self._by_trace: dict[tuple[str, str], list[str]] = {}
        self._endings: dict[str, str] = {}

    @classmethod
    async def load(cls, service: GameService, game: str, date: str) -> DayAttempts:
        raw = await service.store.redis.hgetall(attempts_key(game, date))
        index = {_text(game_id): _text(player_id) for player_id, game_id in raw.items()}
        day = cls(service, game, date, index)
        for attempt in await read_attempts(service, ((p, g) for g, p in index.items())):
            day.add(attempt)
        return day

    def add(self, attempt: Attempt) -> None:
        self.attempts[attempt.game_id] = attempt
        for name, value in attempt.traces.items():
            if value:
                self._by_trace.setdefault((name, value), []).append(attempt.game_id)

    async def attempt(self, game_id: str, player_id: str) -> Attempt | None:
        """A ranked game's record, read if it is not in the index (a forged entry)."""
        if game_id not in self.attempts:
            found = await read_attempts(self.service, [(player_id, game_id)])
            if not found:
                return None
            self.attempts[game_id] = found[0]
        return self.attempts[game_id]

    def linked(self, attempt: Attempt) -> list[tuple[Attempt, list[str]]]:
        """The day's other attempts sharing a trace with ``attempt``, oldest first."""
        others: set[str] = set()
        for name, value in attempt.traces.items():
            if value:
                others.update(self._by_trace.get((name, value), ()))
        others.discard(attempt.game_id)
        found = [
            (self.attempts[game_id], attempt.shared_with(self.attempts[game_id]))
            for game_id in others
        ]
        return sorted(found, key=lambda pair: (pair[0].created_at, pair[0].game_id))

    async def ending(self, attempt: Attempt) -> str:
        """How ``attempt`` ended: a key of :data:`ENDINGS`."""
        if attempt.game_id not in self._endings:
            self._endings[attempt.game_id] = await self._ending(attempt)
        return self._endings[attempt.game_id]

    async def _ending(self, attempt: Attempt) -> str:
        if attempt.status in ("won", "stuck"):
            return attempt.status
        if attempt.moves == 0:
            return "abandoned"
        moves = [entry["move"] for entry in await self.service.store.log(attempt.game_id)]
        through = await asyncio.to_thread(dealt_through_stock, attempt.game, attempt.seed, moves)
        if through:
            return "dealt_through_stock"
        if attempt.status == "resigned":
            return "resigned"
        closed = daily.is_closed(self.date, self.service.clock())
        return "abandoned" if closed else "playing"

    async def signal(self, attempt: Attempt) -> Signal | None:
        """``scouting_link`` for ``attempt`` when other attempts share its traces."""
        links = self.linked(attempt)
        if not links:
            return None
        listed: list[dict[str, Any]] = []
        for other, shared in links[:MAX_LINKS_LISTED]:
            ended = await self.ending(other)
            listed.append(
                {
                    "game_id": other.game_id,
                    "player_id": other.player_id,
                    "shared": [TRACES[name] for name in shared],
                    "ended": ended,
                    "status": other.status,
                    "moves": other.moves,
                    "score": other.score,
                    "created_at": other.created_at,
                    "finished_at": other.finished_at or None,
                    "started_before_this_ended": not attempt.finished_at
                    or other.created_at < attempt.finished_at,
                }
            )
        described = "; ".join(
            f"{link['game_id']} by {link['player_id']} (same {' and '.join(link['shared'])}; "
            f"{ENDINGS[link['ended']]}, {link['moves']} moves)"
            for link in listed
        )
        more = len(links) - len(listed)
        tail = f"; and {more} more" if more else ""
        return Signal(
            "scouting_link",
            None,
            f"{len(links)} other attempt(s) at the {self.game} {self.date} challenge share "
            f"this one's client address or install id: {described}{tail}",
            {"links": listed, "more": more},
        )


def dealt_through_stock(name: str, seed: str, moves: list[str]) -> bool:
    """Whether replaying ``moves`` from the deal of ``seed`` ever empties the stock
    (never for a game without one)."""
    if name not in GAMES:
        return False
    try:
        game = new_game(name, seed)
    except ValueError:
        return False
    stock = game.stock_slot
    if stock < 0:
        return False
    for move in moves:
        if not game.piles[stock]:
            return True
        try:
            game.play(move)
        except IllegalMove:
            return False
    return not game.piles[stock]
