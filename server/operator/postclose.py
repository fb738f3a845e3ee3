"""The post-close audit: every ranked attempt of a day, audited once the day has closed
(``protocol/OPERATOR.md``, "Post-close audit").

:class:`PostCloseAuditor` is a background task of every instance (like the daily
selection, ``server.daily.selection``): each pass takes the closed days of the last
:data:`~server.leaderboard.REVIEW_WINDOW_DAYS` days, and each game's day not yet done,
once per cluster (a Redis lock per game and day, renewed after each attempt).  Every
attempt's verdict is stored as it is made (``server.operator.review``), so a restart
resumes after the attempts already audited.  The audits run in a child process at a
lower priority, never on the event loop nor on a player's request.

For each attempt, in board order: the replay audit (integrity, timing), the scouting
links of the day, and clairvoyance where the game has a face-down stock while the CPU
budget of the game's day (``--review-budget-seconds``) lasts; past it, the rest of that
board gets the other checks only (the done marker counts them).  Without clairvoyance
10,000 attempts take under a CPU minute; clairvoyance takes seconds each (BENCHMARKS.md,
"Post-close audit"), hence the budget.  An integrity failure is voided at once (reason
code ``integrity``, operator ``system`` in the trail); a fair-play signal puts the
attempt in the review queue with its evidence; anything else is cleared.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from redis.exceptions import RedisError

from server import daily, metrics
from server.audit.clairvoyance import WITH_CLAIRVOYANCE, is_examined
from server.audit.core import EXPORT_SIGNALS, Finding, Verdict, audit
from server.audit.scouting import DayAttempts
from server.daily.selection import FORK_CONTEXT, RELEASE_SCRIPT
from server.errors import ApiError
from server.leaderboard import REVIEW_WINDOW_DAYS, board_keys, player_of_member, review_keys
from server.limits import audit_process_setup
from server.operator import review
from server.operator.actions import Operations
from server.operator.credentials import SYSTEM
from server.redisconn import end_task
from server.rules import GAMES
from server.store import attempts_key

log = logging.getLogger("server.operator.postclose")

#: The task looks again this often (seconds); a day is taken within this of its close.
REFRESH_SECONDS = 60.0
#: While another instance holds a day's lock, look again this often.
RETRY_SECONDS = 5.0
#: A day's lock lasts this long (ms) unless renewed (after each attempt).
LEASE_MS = 120_000
#: Seconds :meth:`PostCloseAuditor.stop` waits for the task before cancelling it.
STOP_SECONDS = 5.0


def lock_key(game: str, date: str) -> str:
    return f"review-lock:{{review-lock:{game}:{date}}}"


def audit_in_process(
    export: dict[str, Any], entry: dict[str, Any] | None, clairvoyance: bool
) -> tuple[Verdict, float]:
    """In the child: the pure audit of an export and its CPU seconds."""
    started = time.process_time()
    signals = WITH_CLAIRVOYANCE if clairvoyance else EXPORT_SIGNALS
    verdict = audit(export, entry, signals)
    return verdict, time.process_time() - started


class PostCloseAuditor:
    """``app.state.postclose``."""

    def __init__(
        self, operations: Operations, budget_seconds: float, clock: Callable[[], int]
    ) -> None:
        self.operations = operations
        self.service = operations.service
        self.redis: Any = operations.redis
        self.budget_seconds = budget_seconds
        #: Unix ms (the service's clock: tests move it past a close).
        self.clock = clock
        #: Attempts this instance audited.
        self.audited = 0
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._processes: ProcessPoolExecutor | None = None
        self._release = self.redis.register_script(RELEASE_SCRIPT)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="post-close-audit")

    def wake(self) -> None:
        self._wake.set()

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        await end_task(self._task, STOP_SECONDS)
        if self._processes is not None:
            self._processes.shutdown(wait=True, cancel_futures=True)
            self._processes = None

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            pending = False
            try:
                pending = await self.run_pass()
            except (RedisError, OSError) as error:
                log.warning("post-close audit: the store failed (%s); retrying", error)
                pending = True
            except Exception:  # a bug must not end the task: every later day needs it
                log.exception("post-close audit failed; retrying")
                pending = True
            if self._processes is not None and not pending:
                self._processes.shutdown(wait=False)
                self._processes = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._wake.wait(), RETRY_SECONDS if pending else REFRESH_SECONDS
                )

    async def run_pass(self) -> bool:
        """Every closed day of the window audited or found done; True while some day
        is held by another instance."""
        now = self.clock()
        today = daily.today(now)
        days = [
            (game, daily.today(daily.opens_ms(today) - back * daily.DAY_MS))
            for back in range(1, REVIEW_WINDOW_DAYS + 1)
            for game in GAMES
        ]
        # Which days have attempts and no review yet, in one round trip: most passes find none.
        async with self.redis.pipeline(transaction=False) as pipe:
            for game, date in days:
                pipe.exists(review_keys(game, date)[2])
                pipe.exists(attempts_key(game, date))
            found = await pipe.execute()
        held = False
        for (game, date), done, attempted in zip(days, found[::2], found[1::2], strict=True):
            if done or not attempted:
                continue
            if self._stopping:
                return False
            held |= not await self.audit_day(game, date)
        metrics.review_queue(await review.queue_length(self.redis))
        return held

    async def audit_day(self, game: str, date: str) -> bool:
        """Audit the day's attempts not audited yet: True when the day is done, False
        when another instance holds it."""
        done_key = review_keys(game, date)[2]
        # A day with no attempt has nothing to write (and no lock to take).
        if await self.redis.exists(done_key) or not await self.redis.exists(
            attempts_key(game, date)
        ):
            return True
        token = secrets.token_hex(8)
        lock = lock_key(game, date)
        if not await self.redis.set(lock, token, nx=True, px=LEASE_MS):
            return False
        try:
            index = await self.redis.hgetall(attempts_key(game, date))
            game_of = {p.decode(): g.decode() for p, g in index.items()}
            # The board's order first: the budget for clairvoyance goes to the top.
            ranked = [
                player_of_member(m)
                for m in await self.redis.zrange(board_keys(game, date)[0], 0, -1)
            ]
            order = [p for p in ranked if p in game_of] + sorted(set(game_of) - set(ranked))
            attempts = [(player, game_of[player]) for player in order]
            seen = await review.audited_players(self.redis, game, date)
            cpu_key = f"{done_key}:cpu"
            spent = float(await self.redis.get(cpu_key) or 0)
            day = await DayAttempts.load(self.service, game, date)
            skipped = 0
            for player_id, game_id in attempts:
                if self._stopping:
                    return True  # the next start resumes
                if player_id in seen:
                    continue
                clairvoyance = is_examined(game) and spent < self.budget_seconds
                skipped += is_examined(game) and not clairvoyance
                verdict, cpu = await self._audit(game_id, clairvoyance)
                attempt = await day.attempt(game_id, player_id)
                if attempt is not None:
                    signal = await day.signal(attempt)
                    if signal is not None:
                        verdict.signals.append(signal)
                spent = float(await self.redis.incrbyfloat(cpu_key, cpu))
                await self.redis.expire(cpu_key, 30 * 86400)
                await self.settle(game, date, player_id, game_id, verdict, clairvoyance)
                await self.redis.pexpire(lock, LEASE_MS)
            now = self.clock()
            summary = {"done_at": now, "attempts": len(attempts), "cpu_seconds": round(spent, 3)}
            await self.redis.set(
                done_key, json.dumps({**summary, "clairvoyance_skipped": skipped}), ex=30 * 86400
            )
            metrics.postclose_lag(max(0.0, (now - daily.closes_ms(date)) / 1000))
            log.info("post-close audit of %s %s done: %s", game, date, summary)
            return True
        finally:
            with contextlib.suppress(RedisError, OSError):
                await self._release(keys=[lock], args=[token])

    async def _audit(self, game_id: str, clairvoyance: bool) -> tuple[Verdict, float]:
        """The attempt's verdict (its game gone: a ``missing_game`` finding) and CPU."""
        try:
            stored, export = await self.service.stored_replay(game_id, with_seed=True)
        except ApiError:
            verdict = Verdict(game_id=game_id, game=None)
            verdict.findings.append(Finding("missing_game", None, "the game no longer exists"))
            return verdict, 0.0
        entry = await self.service.leaderboards.entry(stored.game, stored.daily, stored.owner)
        entry_dict = None if entry is None else dataclasses.asdict(entry)
        if self._processes is None:
            self._processes = ProcessPoolExecutor(
                1, mp_context=FORK_CONTEXT, initializer=audit_process_setup
            )
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._processes, audit_in_process, export, entry_dict, clairvoyance
            )
        except BrokenProcessPool:
            self._processes = None
            raise

    async def settle(
        self,
        game: str,
        date: str,
        player_id: str,
        game_id: str,
        verdict: Verdict,
        clairvoyance: bool,
    ) -> None:
        """Void, flag or clear the attempt, and store its item."""
        missing = any(finding.check == "missing_game" for finding in verdict.findings)
        if verdict.integrity == "fail" and not missing:
            state = "voided"
            reason = f"integrity: {verdict.findings[0]}"[:500]
            await self.operations.void(SYSTEM, game_id, reason, "integrity")
            metrics.void_made("auto")
        elif verdict.signals or missing:  # a game gone before its audit: a person looks
            state = "flagged"
        else:
            state = "cleared"
        links = [
            link
            for signal in verdict.signals
            if signal.name == "scouting_link"
            for link in signal.evidence.get("links", [])
        ]
        item = {
            "id": game_id,
            "game_id": game_id,
            "player_id": player_id,
            "game": game,
            "date": date,
            "state": state,
            "integrity": verdict.integrity,
            "findings": [finding.to_dict() for finding in verdict.findings],
            "signals": [signal.to_dict() for signal in verdict.signals],
            "links": links,
            "replay": f"/v1/games/{game_id}/replay",
            "clairvoyance_checked": clairvoyance,
            "audited_at": self.clock(),
            "decision": None,
        }
        await review.store_item(self.redis, item)
        self.audited += 1
        metrics.postclose_audited(state, [signal.name for signal in verdict.signals])
