"""The server's own audits: a stored game by id, and a whole daily leaderboard.

These read Redis through a :class:`~server.service.GameService` and add the
checks only the server can make to the pure :func:`~server.audit.core.audit`
of the game's export (built *with* its seed): the stored ``state`` bytes,
version and move count against the replay (``stored_state_mismatch``), the
game's own leaderboard entry, and, when the server secret is known, the
stored seed of a daily game against that day's derivation
(``daily_seed_mismatch``).  The leaderboard audit also looks, for each
entry, for other attempts of the day made from the same client
(:mod:`server.audit.scouting`, the ``scouting_link`` signal).  No verdict
carries the seed.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.audit.clairvoyance import WITH_CLAIRVOYANCE
from server.audit.core import EXPORT_SIGNALS, Finding, Verdict, audit
from server.audit.scouting import DayAttempts
from server.errors import ApiError
from server.leaderboard import Entry, board_keys, player_of_member
from server.rules import UnknownGame, load_game

if TYPE_CHECKING:
    from server.service import GameService


async def audit_stored(
    service: GameService,
    game_id: object,
    *,
    entry: Entry | None = None,
    check_daily_seed: bool = True,
    clairvoyance: bool = False,
) -> Verdict:
    """Audit the stored game ``game_id`` (``unknown_game`` if there is none).

    ``entry`` is the leaderboard entry to hold the game to; by default a daily
    game's own entry (looked up by game, day and owner).  ``check_daily_seed``
    needs ``service.secret`` to be the server's real secret.  ``clairvoyance``
    adds the ``clairvoyance`` signal (seconds of CPU: the operator's tools ask for
    it, never a player's request, whose verdict would tell an open day's deal).
    """
    stored, export = await service.stored_replay(game_id, with_seed=True)
    if entry is None and stored.daily:
        entry = await service.leaderboards.entry(stored.game, stored.daily, stored.owner)
    entry_dict = None if entry is None else dataclasses.asdict(entry)
    signals = WITH_CLAIRVOYANCE if clairvoyance else EXPORT_SIGNALS
    # The replay is CPU work: keep the event loop free for other requests meanwhile.
    verdict = await asyncio.to_thread(audit, export, entry_dict, signals)
    extra = verdict.findings.append

    if stored.version != len(export["moves"]) or stored.moves != len(export["moves"]):
        extra(
            Finding(
                "stored_state_mismatch",
                None,
                f"the record says version {stored.version} and {stored.moves} moves; "
                f"its log has {len(export['moves'])} entries",
            )
        )
    try:
        state = load_game(stored.state)
    except (UnknownGame, ValueError) as error:
        extra(Finding("stored_state_mismatch", None, f"the stored state is unreadable: {error}"))
    else:
        if state.name != stored.game or state.seed != stored.seed:
            extra(
                Finding(
                    "stored_state_mismatch",
                    None,
                    "the stored state is of another game or deal than the record",
                )
            )
        elif verdict.replay_complete and state.state_hash() != verdict.replayed_state_hash:
            extra(
                Finding(
                    "stored_state_mismatch",
                    None,
                    f"the stored table hashes to {state.state_hash()[:12]}…, the replayed "
                    f"final table to {str(verdict.replayed_state_hash)[:12]}…",
                )
            )
    if stored.daily and stored.status != "playing" and entry is None:
        extra(
            Finding(
                "leaderboard_mismatch",
                None,
                f"the ranked game ended ({stored.status}) but is not on the "
                f"{stored.game} {stored.daily} leaderboard",
            )
        )
    if (
        check_daily_seed
        and stored.daily
        and stored.seed != await service.chosen_daily_seed(stored.game, stored.daily)
    ):
        extra(
            Finding(
                "daily_seed_mismatch",
                None,
                f"the stored seed is not the {stored.game} {stored.daily} challenge's seed",
            )
        )
    return verdict


@dataclass
class BoardAudit:
    """One member of a leaderboard and the verdict on its game."""

    rank: int
    player_id: str
    entry: Entry | None
    verdict: Verdict
    #: Whether the entry's game recorded its client's traces (None: no game).
    trace_recorded: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "player_id": self.player_id,
            "entry": None if self.entry is None else dataclasses.asdict(self.entry),
            "trace_recorded": self.trace_recorded,
            "verdict": self.verdict.to_dict(),
        }


#: ``progress(done, total, audited)``, called after each member.
Progress = Callable[[int, int, BoardAudit], None]


async def audit_leaderboard(
    service: GameService,
    game: str,
    date: str,
    *,
    check_daily_seed: bool = True,
    progress: Progress | None = None,
    clairvoyance: bool = True,
) -> list[BoardAudit]:
    """Audit the game of every member of the ``game`` board of ``date``, best first.

    Besides each game's audit, a member must have its entry, its sort key must
    encode that entry, and the entry's game must be that day's ranked game of
    that player; and a ``scouting_link`` signal lists the day's other attempts
    sharing its game's client address or install id hash.  Each ranked game is
    also examined for ``clairvoyance`` unless that is turned off.
    """
    day = await DayAttempts.load(service, game, date)
    board, _ = board_keys(game, date)
    members = [
        member.decode() if isinstance(member, bytes) else str(member)
        for member in await service.store.redis.zrange(board, 0, -1)
    ]
    results = []
    for rank, member in enumerate(members, 1):
        player_id = player_of_member(member)
        entry = await service.leaderboards.entry(game, date, player_id)
        if entry is None:
            verdict = Verdict(game_id=None, game=game, daily=date)
            verdict.findings.append(
                Finding("leaderboard_mismatch", None, f"member {member!r} has no entry")
            )
        else:
            verdict = await _audit_member(
                service, game, date, member, entry, check_daily_seed, clairvoyance
            )
        result = BoardAudit(rank, player_id, entry, verdict)
        if entry is not None:
            attempt = await day.attempt(entry.game_id, player_id)
            if attempt is not None:
                result.trace_recorded = attempt.trace_recorded
                signal = await day.signal(attempt)
                if signal is not None:
                    verdict.signals.append(signal)
        results.append(result)
        if progress is not None:
            progress(rank, len(members), result)
    return results


async def _audit_member(
    service: GameService,
    game: str,
    date: str,
    member: str,
    entry: Entry,
    check_daily_seed: bool,
    clairvoyance: bool,
) -> Verdict:
    try:
        verdict = await audit_stored(
            service,
            entry.game_id,
            entry=entry,
            check_daily_seed=check_daily_seed,
            clairvoyance=clairvoyance,
        )
    except ApiError as error:
        if error.code != "unknown_game":
            raise
        verdict = Verdict(game_id=entry.game_id, game=game, daily=date)
        verdict.findings.append(
            Finding("missing_game", None, f"the entry's game {entry.game_id!r} does not exist")
        )
        return verdict
    if verdict.game != game or verdict.daily != date:
        verdict.findings.append(
            Finding(
                "leaderboard_mismatch",
                None,
                f"the entry's game is a {verdict.game} game of {verdict.daily or 'no day'}, "
                f"not this {game} {date} challenge",
            )
        )
    if entry.member() != member:
        verdict.findings.append(
            Finding(
                "leaderboard_mismatch",
                None,
                f"the board ranks the player by {member!r}, which is not its entry's key "
                f"{entry.member()!r}",
            )
        )
    return verdict
