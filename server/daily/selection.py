"""Choosing each day's deal: the first candidate the solver proves winnable (``DAILY.md``).

A day's candidates are the seeds ``daily.candidate_seed(secret, game, date, k)`` for
k = 0, 1, 2, …  :func:`choose` solves them in order (perfect information, each within
``--daily-candidate-nodes`` positions) and keeps the first proven win; when none is
found among ``--daily-candidates`` candidates or within ``--daily-selection-seconds``,
the candidate with the best proven score (the lowest k among equals).  A deal with no
legal move is never chosen.

:class:`DailySelector` is the background task (started in the app's lifespan) that
chooses today's and tomorrow's deals of every game ahead of play, once per cluster: a
Redis lock (``SET NX PX``) per game and day, then the choice is stored in Redis.  The
solver runs in a child process at a lower priority, never on the event loop nor on a
player's request: in a thread it would hold the GIL for minutes, and each time the event
loop let go of it (every socket write) the loop would wait a switch interval to get it
back (opening sockets ran 7x slower, ``BENCHMARKS.md``).  The choice's par line is as
secret as the seed until the day closes: it is stored, never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from redis.exceptions import RedisError

from server import daily
from server.config import DailySelection
from server.daily import Choice
from server.limits import audit_process_setup
from server.redisconn import end_task
from server.rules import GAMES, new_game
from server.solver import WON, Budget, Result, solve

log = logging.getLogger(__name__)

#: The background task looks again this often (seconds): tomorrow's choice is made
#: within this long of midnight UTC at the latest, normally a day ahead.
REFRESH_SECONDS = 600.0
#: While a choice is wanted but another instance holds its lock, look again this often.
RETRY_SECONDS = 1.0
#: Seconds :meth:`DailySelector.stop` waits for the task to end before cancelling it.
STOP_SECONDS = 5.0
#: A day already open with no choice (a fresh store): every game is first tried with this
#: much time (seconds), and a choice that took less, cut short by nothing, is stored at
#: once (the full budget would choose the same deal); the others then get the full budget.
#: Most games' days are proven in well under a second (``BENCHMARKS.md``), so a fresh
#: server opens most dailies within seconds instead of after every game's full selection.
QUICK_SECONDS = 5.0
#: ``Retry-After`` of ``daily_not_ready`` (ms).
NOT_READY_RETRY_MS = 2000
#: Children are forked from a server process that has imported this module once (the
#: first selection starts it): a child starts in milliseconds, with nothing of the
#: parent's event loop or threads.
FORK_CONTEXT = multiprocessing.get_context("forkserver")
FORK_CONTEXT.set_forkserver_preload([__name__])
#: Candidates looked at past ``--daily-candidates`` only to find a deal with a legal
#: move, should every candidate so far have none (never seen in practice).
MOVABLE_SEARCH = 1000


def choice_key(game: str, date: str) -> str:
    """The hash of a day's choice (its own hash tag: one slot per game and day)."""
    return f"daily-choice:{{daily-choice:{game}:{date}}}"


def lock_key(game: str, date: str) -> str:
    """The lock of a day's selection (its own hash tag, apart from the choice)."""
    return f"daily-lock:{{daily-lock:{game}:{date}}}"


# KEYS: the lock.  ARGV: the holder's token.  Deletes the lock only if it is ours.
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def choose(
    secret: bytes,
    game: str,
    date: str,
    selection: DailySelection,
    stop: Callable[[], bool] = lambda: False,
) -> Choice:
    """The day's choice (see the module docstring).  CPU-bound: run it off the event loop.
    ``stop`` (asked every few hundred positions) ends the selection early; the best
    candidate so far is kept, as when the total time runs out."""
    started = time.monotonic()
    deadline = started + selection.seconds
    cut = False

    def out_of_time() -> bool:
        nonlocal cut
        cut = cut or stop() or time.monotonic() > deadline
        return cut

    best: tuple[int, int, Result] | None = None  # (score, k, result)
    k = 0
    while True:
        past_budget = k >= selection.candidates or out_of_time()
        if past_budget and best is not None:
            break
        if k >= selection.candidates + MOVABLE_SEARCH:
            raise RuntimeError(f"no {game} deal with a legal move among {k} candidates")
        dealt = new_game(game, daily.candidate_seed(secret, game, date, k))
        k += 1
        if dealt.is_over or not dealt.legal_moves():
            continue  # stuck at the deal: never a daily
        if past_budget:
            result = solve(dealt, Budget(nodes=1))
        else:
            result = solve(dealt, Budget(nodes=selection.candidate_nodes, out_of_time=out_of_time))
        if result.verdict == WON:
            best = (result.best_score, k - 1, result)
            break
        if best is None or result.best_score > best[0]:
            best = (result.best_score, k - 1, result)
    _, index, found = best
    line = found.moves if found.moves is not None else found.best_line
    return Choice(
        k=index,
        verdict=found.verdict,
        score=found.best_score,
        total=found.total_cards,
        par=tuple(line),
        candidates=k,
        seconds=round(time.monotonic() - started, 3),
        cut_short=cut,
    )


async def load_choice(redis: Any, game: str, date: str) -> Choice | None:
    fields = await redis.hgetall(choice_key(game, date))
    return Choice.from_redis(fields) if fields else None


def tomorrow(date: str) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()


#: In the selection process: the selector's stop flag (non-zero: stop).
_stop_flag: Any = None


def selection_process_setup(stop_flag: Any) -> None:
    """Like an audit's child: at a lower priority, and dying with its parent (the
    forkserver, which exits with the worker), never left waiting for work."""
    global _stop_flag
    _stop_flag = stop_flag
    audit_process_setup()
    # The forkserver gives each child the write end of the pipe on which it waits for the
    # worker to go (so that a child could start processes of its own).  Held here, it kept
    # the forkserver alive after the worker exited, and so this process (the signal above
    # comes when the forkserver exits): both held the server's output open for as long.
    server: Any = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None


def choose_in_process(secret: bytes, game: str, date: str, selection: DailySelection) -> Choice:
    return choose(secret, game, date, selection, lambda: bool(_stop_flag.value))


class DailySelector:
    """Chooses the dailies ahead of play (``app.state.dailies``): today's and tomorrow's
    of every game, plus days asked for by :meth:`request`; once per cluster."""

    def __init__(
        self,
        redis: Any,
        secret: bytes,
        selection: DailySelection,
        clock: Callable[[], int],
        quick_seconds: float = QUICK_SECONDS,
    ) -> None:
        self.redis = redis
        self.quick_seconds = quick_seconds
        self.secret = secret
        self.selection = selection
        #: Unix ms (the service's clock: tests move it).
        self.clock = clock
        #: Choices this instance made (the others were made elsewhere, or are pending).
        self.selections = 0
        self._wanted: set[str] = set()
        self._wake = asyncio.Event()
        #: Non-zero once stopping; read by this task and by the selection process (shared
        #: memory with no lock: a multiprocessing Event's semaphores would outlive a killed
        #: worker).
        self._stop_flag = FORK_CONTEXT.RawValue("b", 0)
        #: The selection process, started at this instance's first selection.
        self._processes: ProcessPoolExecutor | None = None
        self._task: asyncio.Task[None] | None = None
        self._release = redis.register_script(RELEASE_SCRIPT)

    @property
    def _stopping(self) -> bool:
        return bool(self._stop_flag.value)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="daily-selection")

    def request(self, date: str) -> None:
        """Have the background task choose ``date``'s deals soon (``server.testing``: a
        test's clock moved past the task's last look).  No request of a client does."""
        if date not in self._wanted:
            self._wanted.add(date)
            self._wake.set()

    async def stop(self) -> None:
        """Stop the task: a selection running stops within a few hundred positions (its
        day is chosen at the next start).  The task ends by itself rather than being
        cancelled in the middle of a Redis command."""
        self._stop_flag.value = 1
        self._wake.set()
        await end_task(self._task, STOP_SECONDS)
        if self._processes is not None:
            self._processes.shutdown(wait=True, cancel_futures=True)
            self._processes = None

    async def _run(self) -> None:
        while not self._stopping:
            pending = False
            self._wake.clear()  # before the pass: a request during it starts another
            try:
                pending = await self.choose_ahead()
            except (RedisError, OSError) as error:
                log.warning("daily selection: the store failed (%s); retrying", error)
                pending = True
            except Exception:  # a bug must not end the task: every later day needs it
                log.exception("daily selection failed; retrying")
                pending = True
            if self._processes is not None and not pending:
                # Days are chosen a day ahead: the process and its solver's memory go
                # until the next day needs them.
                self._processes.shutdown(wait=False)
                self._processes = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._wake.wait(), RETRY_SECONDS if pending else REFRESH_SECONDS
                )

    async def _choose(self, game: str, date: str, selection: DailySelection) -> Choice:
        """:func:`choose` in the selection process."""
        if self._processes is None:
            self._processes = ProcessPoolExecutor(
                1,
                mp_context=FORK_CONTEXT,
                initializer=selection_process_setup,
                initargs=(self._stop_flag,),
            )
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._processes, choose_in_process, self.secret, game, date, selection
            )
        except BrokenProcessPool:
            self._processes = None  # the process died (killed?): a new one next time
            raise

    async def choose_ahead(self) -> bool:
        """One pass: every wanted day's choices made or found; True while some are held
        by another instance's lock (look again soon)."""
        today = daily.today(self.clock())
        dates = [today, tomorrow(today), *sorted(self._wanted)]
        pending = False
        for game in GAMES:  # players are waiting: the quick ones first
            if self._stopping:
                return False
            await self.ensure(game, today, quick=True)
        for date in dict.fromkeys(dates):
            held = False
            for game in GAMES:
                if self._stopping:
                    return False
                held |= not await self.ensure(game, date)
            if not held:
                self._wanted.discard(date)
            pending |= held
        return pending

    async def ensure(self, game: str, date: str, quick: bool = False) -> bool:
        """Make sure ``game``'s choice of ``date`` is stored: True when it is, False when
        another instance holds its lock (and is choosing it), or, ``quick``, when its
        quick time (:data:`QUICK_SECONDS`) did not settle it (the full budget comes later)."""
        key = choice_key(game, date)
        if await self.redis.exists(key):
            return True
        token = secrets.token_hex(8)
        lock = lock_key(game, date)
        selection = (
            dataclasses.replace(
                self.selection, seconds=min(self.quick_seconds, self.selection.seconds)
            )
            if quick
            else self.selection
        )
        lease_ms = int((selection.seconds + 60) * 1000)
        if not await self.redis.set(lock, token, nx=True, px=lease_ms):
            return False
        try:
            if await self.redis.exists(key):  # chosen while we were taking the lock
                return True
            choice = await self._choose(game, date, selection)
            if self._stopping:
                return True  # cut short: leave it to the next start
            if quick and choice.cut_short and selection.seconds < self.selection.seconds:
                return False  # not settled in the quick time: the full pass chooses it
            await self.redis.hset(key, mapping=choice.to_redis())
            self.selections += 1
            # Neither seed nor par: both are secret until the day closes.
            log.info(
                "daily %s %s chosen: candidate %d of %d, %s, score %d/%d, %.1f s",
                game,
                date,
                choice.k,
                choice.candidates,
                choice.verdict,
                choice.score,
                choice.total,
                choice.seconds,
            )
            return True
        finally:
            with contextlib.suppress(RedisError, OSError):
                await self._release(keys=[lock], args=[token])
