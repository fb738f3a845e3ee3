"""Verify a replay export: pure, no I/O (``protocol/AUDIT.md`` is the reference).

:func:`audit` takes the export of ``GET /v1/games/{id}/replay`` (a dict, as
decoded from JSON or msgpack) and, optionally, the game's leaderboard entry,
and returns a :class:`Verdict` that answers two separate questions:

* **integrity**: is this a faithful, legal, untampered record?  Every problem
  is a :class:`Finding` naming the check (:data:`CHECKS`), the move version it
  concerns (or None) and a sentence saying what is wrong; ``integrity`` is
  ``pass`` or ``fail``, or ``chain_only`` when the export has no seed (a casual
  game still on, a daily game whose day is still open): only its chain and
  ordering could be checked, so its integrity is not established.
* **fair play**: does anything in it look unlike fair human play?  Each
  :class:`Signal` that fires (:data:`SIGNALS`) carries its evidence.  A signal
  is a suspicion, not a proof: an honest script playing fast raises one.

``passed`` is true only when integrity passes and no signal fires.  Nothing in
a verdict reveals the seed.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from protocol import chain
from protocol.rng import InvalidSeed, validate_seed
from server.rules import GAMES, IllegalMove, Timeline, new_game

FORMAT = "solitaire-replay/1"

#: An interval between two consecutive moves shorter than this (ms) is "fast"...
SPEED_INTERVAL_MS = 120
#: ...and this many fast intervals in a row is ``inhuman_speed``.
SPEED_RUN = 8
#: ``inhuman_regularity``: some run of this many consecutive intervals...
REGULARITY_WINDOW = 30
#: ...whose coefficient of variation (population stdev / mean) is under this.
REGULARITY_MAX_CV = 0.05
#: Findings listed per check; further ones are summed up in one last finding.
MAX_FINDINGS_PER_CHECK = 10

STATUSES = ("playing", "won", "stuck", "resigned")

#: Every check, with what its finding means.  ``protocol/AUDIT.md`` lists them all.
CHECKS: dict[str, str] = {
    "malformed_export": "the export is not a solitaire-replay/1 document (missing or "
    "invalid fields); nothing else is checked",
    "seed_unavailable": "the export has no seed (a casual game still on, a daily game whose "
    "day is still open): only the chain and the ordering were checked (integrity "
    "chain_only)",
    "deal_mismatch": "the seed does not deal the table whose hash is deal_hash",
    "dropped_entry": "a version between 1 and the last one has no entry",
    "reordered_entries": "the entries are not listed in version order",
    "duplicate_entry": "two entries have the same version",
    "illegal_move": "the rules do not allow a move at that point of the replay "
    "(the replay stops there)",
    "state_hash_mismatch": "an entry's state_hash is not the hash of the replayed table",
    "broken_chain": "an entry's hash is not the link computed from the previous link and "
    "the entry, or chain_head is not the last link",
    "status_mismatch": "the export's status is not the replayed game's",
    "score_mismatch": "the export's score is not the replayed game's",
    "finished_at_mismatch": "finished_at is not the last move's server_time of a game "
    "that is over (or is set on a game still being played)",
    "leaderboard_mismatch": "the leaderboard entry does not match the game (score, win, "
    "moves, game id, player, times)",
    "time_travel": "a server_time is earlier than the one before it (or than created_at)",
    # Checks of the server-side audit of a stored game (server.audit.stored):
    "stored_state_mismatch": "the game record in Redis (its state, version or move count) "
    "does not match the replay",
    "daily_seed_mismatch": "the stored seed of a daily game is not that day's seed "
    "(checked only when the server secret is known)",
    "missing_game": "a leaderboard entry's game no longer exists",
}

#: Every fair-play signal, with what it means.  ``protocol/AUDIT.md`` lists them all.
SIGNALS: dict[str, str] = {
    "inhuman_speed": f"at least {SPEED_RUN} consecutive intervals between moves are each "
    f"under {SPEED_INTERVAL_MS} ms",
    "inhuman_regularity": f"{REGULARITY_WINDOW} consecutive intervals between moves have a "
    f"coefficient of variation under {REGULARITY_MAX_CV}",
    # Only when asked, and in the leaderboard audit (server.audit.clairvoyance):
    "clairvoyance": "at the positions where knowing the stock order changes the best move, "
    "the player chose the move that is best with the real stock order more often than a "
    "fair player plausibly would",
    # Raised by the server's audit of a leaderboard (server.audit.scouting):
    "scouting_link": "other attempts at the same daily challenge were made from the same "
    "client address or install id (a scout may have dealt the deal out for this one)",
}

_HEX64 = re.compile(r"[0-9a-f]{64}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Finding:
    """One problem: the check that found it, the move version (or None), what is wrong."""

    check: str
    version: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "version": self.version, "detail": self.detail}

    def __str__(self) -> str:
        where = "" if self.version is None else f" (version {self.version})"
        return f"{self.check}{where}: {self.detail}"


@dataclass(frozen=True)
class Signal:
    """A fair-play signal that fired: its name, the move version it starts at (or None),
    a sentence for people and the evidence as data."""

    name: str
    version: int | None
    detail: str
    evidence: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "detail": self.detail,
            "evidence": self.evidence,
        }

    def __str__(self) -> str:
        where = "" if self.version is None else f" (version {self.version})"
        return f"{self.name}{where}: {self.detail}"


@dataclass
class Verdict:
    """The result of an audit.  ``replayed_*`` are None when nothing could be replayed."""

    game_id: str | None
    game: str | None
    daily: str | None = None
    #: Entries in the export.
    moves: int = 0
    #: Entries replayed through the engine (fewer than ``moves`` if the replay stopped).
    replayed_moves: int = 0
    replayed_score: int | None = None
    replayed_status: str | None = None
    #: The state hash after the last replayed move (the deal's hash with no moves).
    replayed_state_hash: str | None = None
    #: What integrity checks found.
    findings: list[Finding] = field(default_factory=list)
    #: The fair-play signals that fired.
    signals: list[Signal] = field(default_factory=list)

    @property
    def integrity(self) -> str:
        """``pass`` (no finding), ``chain_only`` (only ``seed_unavailable``) or ``fail``."""
        if not self.findings:
            return "pass"
        if all(finding.check == "seed_unavailable" for finding in self.findings):
            return "chain_only"
        return "fail"

    @property
    def passed(self) -> bool:
        """Integrity passes and no fair-play signal fired."""
        return not self.findings and not self.signals

    @property
    def summary(self) -> str:
        """E.g. ``integrity pass; signal: inhuman speed``."""
        names = [signal.name.replace("_", " ") for signal in self.signals]
        if not names:
            return f"integrity {self.integrity}; no signal"
        label = "signal" if len(names) == 1 else "signals"
        return f"integrity {self.integrity}; {label}: {', '.join(names)}"

    @property
    def replay_complete(self) -> bool:
        """Every entry was replayed: the replayed figures are the whole game's."""
        return self.replayed_status is not None and self.replayed_moves == self.moves

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "summary": self.summary,
            "integrity": self.integrity,
            "findings": [finding.to_dict() for finding in self.findings],
            "fair_play": [signal.to_dict() for signal in self.signals],
            "game_id": self.game_id,
            "game": self.game,
            "daily": self.daily,
            "moves": self.moves,
            "replayed_moves": self.replayed_moves,
            "replayed_score": self.replayed_score,
            "replayed_status": self.replayed_status,
            "replayed_state_hash": self.replayed_state_hash,
        }


#: A fair-play signal that looks at one export: given the (well-formed) export and its
#: entries in version order, the :class:`Signal` when it fires, else None.  One function
#: per signal; :data:`EXPORT_SIGNALS` lists those :func:`audit` runs.
SignalCheck = Callable[[dict[str, Any], list[dict[str, Any]]], "Signal | None"]


def audit(
    export: Any,
    leaderboard_entry: dict[str, Any] | None = None,
    signals: tuple[SignalCheck, ...] | None = None,
) -> Verdict:
    """Check a replay export (and the game's leaderboard entry, if given).

    ``signals`` are the fair-play signals to look for (default
    :data:`EXPORT_SIGNALS`).

    ``leaderboard_entry`` is an entry as the leaderboard routes show it
    (``score``, ``won``, ``moves``, ``game_id``; ``player_id``, ``elapsed_ms``,
    ``finished_at`` are compared too when present).
    """
    return _Audit(export, leaderboard_entry, EXPORT_SIGNALS if signals is None else signals).run()


def intervals_of(times: list[int]) -> list[int]:
    """The gaps between consecutive times (ms)."""
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def fastest_run(intervals: list[int]) -> tuple[int, int]:
    """``(start, length)`` of the longest run of intervals under :data:`SPEED_INTERVAL_MS`."""
    best_start, best_length, start = 0, 0, None
    for index, gap in enumerate([*intervals, SPEED_INTERVAL_MS]):
        if gap < SPEED_INTERVAL_MS:
            start = index if start is None else start
            continue
        if start is not None and index - start > best_length:
            best_start, best_length = start, index - start
        start = None
    return best_start, best_length


def most_regular_window(intervals: list[int]) -> tuple[int, float] | None:
    """``(start, cv)`` of the window of :data:`REGULARITY_WINDOW` consecutive intervals
    with the lowest coefficient of variation; None for fewer intervals than that.

    Running integer sums keep it O(n) and exact: for a window of ``n`` gaps with sum
    ``s`` and sum of squares ``q``, ``cv = sqrt(n*q - s*s) / s``.
    """
    n = REGULARITY_WINDOW
    if len(intervals) < n:
        return None
    best: tuple[int, float] | None = None
    total = sum(intervals[:n])
    squares = sum(gap * gap for gap in intervals[:n])
    for start in range(len(intervals) - n + 1):
        if start:
            leaving, entering = intervals[start - 1], intervals[start + n - 1]
            total += entering - leaving
            squares += entering * entering - leaving * leaving
        # A window with no time in it is inhuman_speed (or time_travel), not regularity.
        cv = math.inf if total <= 0 else math.sqrt(max(0, n * squares - total * total)) / total
        if best is None or cv < best[1]:
            best = (start, cv)
    return best


def _intervals_and_versions(entries: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    times = [entry["server_time"] for entry in entries]
    return intervals_of(times), [entry["version"] for entry in entries]


def inhuman_speed(export: dict[str, Any], entries: list[dict[str, Any]]) -> Signal | None:
    """At least :data:`SPEED_RUN` intervals in a row under :data:`SPEED_INTERVAL_MS`."""
    intervals, versions = _intervals_and_versions(entries)
    start, length = fastest_run(intervals)
    if length < SPEED_RUN:
        return None
    run = intervals[start : start + length]
    first, last = versions[start + 1], versions[start + length]
    median = statistics.median(run)
    return Signal(
        "inhuman_speed",
        first,
        f"{length} consecutive moves (versions {first}..{last}) each came under "
        f"{SPEED_INTERVAL_MS} ms after the one before (median {median:g} ms, fastest "
        f"{min(run)} ms); a person needs longer to see, point and move",
        {
            "first_version": first,
            "last_version": last,
            "moves": length,
            "median_ms": median,
            "fastest_ms": min(run),
            "threshold_ms": SPEED_INTERVAL_MS,
            "run_threshold": SPEED_RUN,
        },
    )


def inhuman_regularity(export: dict[str, Any], entries: list[dict[str, Any]]) -> Signal | None:
    """Some :data:`REGULARITY_WINDOW` intervals in a row with a coefficient of variation
    under :data:`REGULARITY_MAX_CV`."""
    intervals, versions = _intervals_and_versions(entries)
    window = most_regular_window(intervals)
    if window is None or window[1] >= REGULARITY_MAX_CV:
        return None
    start, cv = window
    gaps = intervals[start : start + REGULARITY_WINDOW]
    first, last = versions[start + 1], versions[start + REGULARITY_WINDOW]
    return Signal(
        "inhuman_regularity",
        first,
        f"{REGULARITY_WINDOW} consecutive intervals (versions {first}..{last}) average "
        f"{statistics.mean(gaps):.0f} ms with a coefficient of variation of {cv:.3f} (under "
        f"{REGULARITY_MAX_CV}): people are not that regular",
        {
            "first_version": first,
            "last_version": last,
            "mean_ms": round(statistics.mean(gaps), 1),
            "cv": round(cv, 4),
            "window": REGULARITY_WINDOW,
            "threshold_cv": REGULARITY_MAX_CV,
        },
    )


#: The signals :func:`audit` looks for in every export, in this order.
EXPORT_SIGNALS: tuple[SignalCheck, ...] = (inhuman_speed, inhuman_regularity)


class _Audit:
    """One run of :func:`audit`: the findings gathered so far and the replay."""

    def __init__(
        self, export: Any, entry: dict[str, Any] | None, signals: tuple[SignalCheck, ...]
    ) -> None:
        self.export = export
        self.entry = entry
        self.signals = signals
        self.counts: dict[str, int] = {}
        self.verdict = Verdict(game_id=None, game=None)

    def find(self, check: str, version: int | None, detail: str) -> None:
        assert check in CHECKS, check
        count = self.counts[check] = self.counts.get(check, 0) + 1
        if count <= MAX_FINDINGS_PER_CHECK:
            self.verdict.findings.append(Finding(check, version, detail))

    def run(self) -> Verdict:
        export = self.export
        if isinstance(export, dict):
            game_id, game, daily = export.get("game_id"), export.get("game"), export.get("daily")
            self.verdict.game_id = game_id if isinstance(game_id, str) else None
            self.verdict.game = game if isinstance(game, str) else None
            self.verdict.daily = daily if isinstance(daily, str) else None
            if isinstance(export.get("moves"), list):
                self.verdict.moves = len(export["moves"])
        problems = shape_problems(export)
        if problems:
            for problem in problems:
                self.find("malformed_export", None, problem)
            return self._finish()
        entries = self._ordered_entries()
        self._check_chain(entries)
        self._check_times(entries)
        for signal_check in self.signals:
            signal = signal_check(export, entries)
            if signal is not None:
                assert signal.name in SIGNALS, signal.name
                self.verdict.signals.append(signal)
        seed = export["seed"]
        if seed is None:
            self.find(
                "seed_unavailable",
                None,
                "the export has no seed (it is revealed once a casual game is over, a daily "
                "game's once its day has closed): the moves could not be replayed; only the "
                "chain and the ordering were checked",
            )
        else:
            self._replay(seed, entries)
        self._check_entry()
        return self._finish()

    def _finish(self) -> Verdict:
        for check, count in self.counts.items():
            if count > MAX_FINDINGS_PER_CHECK:
                more = count - MAX_FINDINGS_PER_CHECK
                self.verdict.findings.append(
                    Finding(check, None, f"{more} more {check} finding(s) not listed")
                )
        return self.verdict

    # -- ordering -------------------------------------------------------------

    def _ordered_entries(self) -> list[dict[str, Any]]:
        """The entries in version order, after reporting gaps, repeats and disorder."""
        entries: list[dict[str, Any]] = self.export["moves"]
        versions = [entry["version"] for entry in entries]
        ordered = sorted(entries, key=lambda entry: int(entry["version"]))
        seen: set[int] = set()
        for version in versions:
            if version in seen:
                self.find("duplicate_entry", version, f"version {version} has several entries")
            seen.add(version)
        expected = 1  # gap by gap: a forged version can be huge
        for version in sorted(seen):
            if version == expected + 1:
                self.find("dropped_entry", expected, f"there is no entry for version {expected}")
            elif version > expected:
                self.find(
                    "dropped_entry",
                    expected,
                    f"there are no entries for versions {expected}..{version - 1}",
                )
            expected = version + 1
        if versions != sorted(versions):
            position = next(i for i in range(len(versions) - 1) if versions[i] > versions[i + 1])
            self.find(
                "reordered_entries",
                versions[position + 1],
                f"entry {position + 2} of the list is version {versions[position + 1]} but "
                f"comes after version {versions[position]}: the entries were reordered "
                "(they are checked in version order)",
            )
        return ordered

    # -- the hash chain -----------------------------------------------------------

    def _check_chain(self, entries: list[dict[str, Any]]) -> None:
        """Each link from the *recorded* previous link, so a fault shows where it is."""
        export = self.export
        previous = chain.genesis(export["game_id"], export["game"], export["deal_hash"])
        for entry in entries:
            version = entry["version"]
            link = chain.next_link(
                previous, version, entry["move"], entry["server_time"], entry["state_hash"]
            )
            if entry["hash"] != link:
                what = "the genesis link" if version == 1 else "the previous entry's hash"
                self.find(
                    "broken_chain",
                    version,
                    f"hash {entry['hash'][:12]}… is not the link of {what} and this "
                    f"entry's version, move, server_time and state_hash ({link[:12]}…): "
                    "the entry or the link was altered",
                )
            previous = entry["hash"]
        if export["chain_head"] != previous:
            last = entries[-1]["version"] if entries else None
            self.find(
                "broken_chain",
                last,
                f"chain_head {export['chain_head'][:12]}… is not the last link "
                f"({previous[:12]}…): entries were dropped from the end, or the head altered",
            )

    # -- times --------------------------------------------------------------------

    def _check_times(self, entries: list[dict[str, Any]]) -> None:
        export = self.export
        times = [entry["server_time"] for entry in entries]
        versions = [entry["version"] for entry in entries]
        if times and times[0] < export["created_at"]:
            self.find(
                "time_travel",
                versions[0],
                f"the first move's server_time {times[0]} is before created_at "
                f"{export['created_at']}",
            )
        intervals = intervals_of(times)
        for index, gap in enumerate(intervals):
            if gap < 0:
                self.find(
                    "time_travel",
                    versions[index + 1],
                    f"server_time {times[index + 1]} is {-gap} ms before the previous "
                    f"move's ({times[index]})",
                )
        status, finished_at = export["status"], export["finished_at"]
        if status == "playing" and finished_at is not None:
            self.find("finished_at_mismatch", None, "a game being played has a finished_at")
        if status != "playing" and times and finished_at != times[-1]:
            self.find(
                "finished_at_mismatch",
                versions[-1],
                f"the game is {status} but finished_at {finished_at} is not its last "
                f"move's server_time {times[-1]}",
            )

    # -- the replay -----------------------------------------------------------------

    def _replay(self, seed: str, entries: list[dict[str, Any]]) -> None:
        export = self.export
        game = new_game(export["game"], seed)
        deal_hash = game.state_hash()
        if deal_hash != export["deal_hash"]:
            self.find(
                "deal_mismatch",
                None,
                f"the seed deals a table with hash {deal_hash[:12]}…, not deal_hash "
                f"{export['deal_hash'][:12]}…: the seed or the deal hash is wrong "
                "(the moves were not replayed)",
            )
            return
        verdict = self.verdict
        verdict.replayed_state_hash = deal_hash
        verdict.replayed_status, verdict.replayed_score = game.status, game.score
        # ``undo`` (casual games only) means what it means on the server: one Timeline.
        timeline = Timeline(game, ranked=export["daily"] is not None)
        for number, entry in enumerate(entries, 1):
            version, move = entry["version"], entry["move"]
            try:
                timeline.play(move)
                game = timeline.game
            except IllegalMove as error:
                self.find(
                    "illegal_move",
                    version,
                    f"move {number} {move!r} (version {version}) is not legal: {error.reason} "
                    f"[{error.code}]; the replay stops here",
                )
                verdict.replayed_status, verdict.replayed_score = game.status, game.score
                return
            state_hash = game.state_hash()
            verdict.replayed_moves = number
            verdict.replayed_state_hash = state_hash
            if entry["state_hash"] != state_hash:
                self.find(
                    "state_hash_mismatch",
                    version,
                    f"after move {move!r} the table's hash is {state_hash[:12]}…, not the "
                    f"recorded {entry['state_hash'][:12]}…",
                )
        verdict.replayed_status, verdict.replayed_score = game.status, game.score
        if verdict.replayed_status != export["status"]:
            self.find(
                "status_mismatch",
                None,
                f"the export says {export['status']!r}; the replay ends "
                f"{verdict.replayed_status!r}",
            )
        if verdict.replayed_score != export["score"]:
            self.find(
                "score_mismatch",
                None,
                f"the export says score {export['score']}; the replay ends with "
                f"{verdict.replayed_score} cards on the foundations",
            )

    # -- the leaderboard entry ------------------------------------------------------

    def _check_entry(self) -> None:
        """Against the replay when it ran to the end, else against the export's claims."""
        entry, export, verdict = self.entry, self.export, self.verdict
        if entry is None:
            return
        if not isinstance(entry, dict):
            self.find("leaderboard_mismatch", None, "the leaderboard entry is not a map")
            return
        if verdict.replay_complete:
            score, status, source = verdict.replayed_score, verdict.replayed_status, "replay"
        else:
            score, status, source = export["score"], export["status"], "export"
        finished_at = export["finished_at"]
        if entry.get("status") == "playing":
            # An attempt still on (or cut off by its day's close): its entry follows its
            # score; its moves and times are those at which it reached that score.
            if status != "playing":
                self.find(
                    "leaderboard_mismatch", None, f"the game is {status} but its entry says playing"
                )
            expected_now = {"game_id": export["game_id"], "score": score, "won": False}
            for name, value in expected_now.items():
                if entry.get(name) != value:
                    found = entry.get(name)
                    self.find(
                        "leaderboard_mismatch",
                        None,
                        f"the entry's {name} is {found!r} but the {source} gives {value!r}",
                    )
            return
        expected: dict[str, Any] = {
            "game_id": export["game_id"],
            "score": score,
            "won": status == "won",
            "moves": len(export["moves"]),
            "player_id": export["owner"],
            "finished_at": finished_at,
            "elapsed_ms": None if finished_at is None else finished_at - export["created_at"],
        }
        required = ("game_id", "score", "won", "moves")
        for name, value in expected.items():
            if name not in entry:
                if name in required:
                    self.find("leaderboard_mismatch", None, f"the entry has no {name!r}")
                continue
            if entry[name] != value or type(entry[name]) is not type(value):
                self.find(
                    "leaderboard_mismatch",
                    None,
                    f"the entry's {name} is {entry[name]!r} but the {source} gives {value!r}",
                )
        if status == "playing":
            self.find(
                "leaderboard_mismatch", None, "the game is still being played but has an entry"
            )


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_hex64(value: Any) -> bool:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def shape_problems(export: Any) -> list[str]:
    """What makes ``export`` not a ``solitaire-replay/1`` document (empty when fine)."""
    if not isinstance(export, dict):
        return [f"an export is a map, not {type(export).__name__}"]
    problems = []

    def need(name: str, ok: bool, wanted: str) -> None:
        if name not in export:
            problems.append(f"missing field {name!r}")
        elif not ok:
            problems.append(f"field {name!r} must be {wanted}, not {export[name]!r:.60}")

    get = export.get
    need("format", get("format") == FORMAT, repr(FORMAT))
    game_id = get("game_id")
    need("game_id", isinstance(game_id, str) and game_id != "" and game_id.isascii(), "a game id")
    need("game", get("game") in GAMES, f"one of {', '.join(GAMES)}")
    daily = get("daily")
    need(
        "daily",
        daily is None or (isinstance(daily, str) and bool(_DATE.fullmatch(daily))),
        "a date",
    )
    need("owner", isinstance(get("owner"), str), "a player id")
    seed = get("seed")
    need("seed", seed is None or _valid_seed(seed), "a seed (RNG.md) or null")
    need("deal_hash", _is_hex64(get("deal_hash")), "64 lowercase hex digits")
    need("created_at", _is_int(get("created_at")), "Unix ms")
    finished = get("finished_at")
    need("finished_at", finished is None or _is_int(finished), "Unix ms or null")
    need("status", get("status") in STATUSES, f"one of {', '.join(STATUSES)}")
    need("score", _is_int(get("score")), "an integer")
    need("chain_head", _is_hex64(get("chain_head")), "64 lowercase hex digits")
    moves = get("moves")
    need("moves", isinstance(moves, list), "a list of entries")
    if isinstance(moves, list):
        for position, entry in enumerate(moves, 1):
            problem = _entry_problem(entry)
            if problem:
                problems.append(f"moves entry {position}: {problem}")
                if len(problems) >= MAX_FINDINGS_PER_CHECK:
                    break
    return problems


def _valid_seed(seed: Any) -> bool:
    try:
        validate_seed(seed)
    except (InvalidSeed, TypeError):
        return False
    return True


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "an entry is a map"
    version = entry.get("version")
    if not _is_int(version) or version < 1:
        return "'version' must be an integer from 1"
    move = entry.get("move")
    if not isinstance(move, str) or not move.isascii():
        return "'move' must be ASCII text"
    if not _is_int(entry.get("server_time")):
        return "'server_time' must be Unix ms"
    client_time = entry.get("client_time")
    if client_time is not None and not _is_int(client_time):
        return "'client_time' must be Unix ms or null"
    for name in ("state_hash", "hash"):
        if not _is_hex64(entry.get(name)):
            return f"{name!r} must be 64 lowercase hex digits"
    return None
