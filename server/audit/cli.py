"""``python -m server.audit``: audit an export file, a stored game or a leaderboard.

::

    python -m server.audit FILE [--clairvoyance] [--json]
    python -m server.audit --game-id ID --redis-url URL [--secret S] [--clairvoyance] [--json]
    python -m server.audit --leaderboard GAME DATE --redis-url URL [--secret S]
                           [--no-clairvoyance] [--json]

``FILE`` is a replay export (JSON, or msgpack when it is not JSON; ``-`` reads
standard input).  Exit status: 0 when everything audited passed; 1 when the
integrity of anything audited is not established (``fail``, or ``chain_only``:
no seed); 2 when every integrity passed but a fair-play signal fired; 3 on a
usage, file or Redis error.  ``--redis-url`` defaults to ``$REDIS_URL``.  The secret is
optional: a stored game keeps its seed; with it, a daily game's stored seed
is also checked against that day's derivation.  ``--clairvoyance`` adds the
``clairvoyance`` signal (seconds of CPU per game); the leaderboard audit runs it unless
``--no-clairvoyance`` asks for a quick integrity sweep of the board.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn, TextIO

import msgpack
from redis.exceptions import RedisError

from server.audit.clairvoyance import WITH_CLAIRVOYANCE
from server.audit.core import EXPORT_SIGNALS, Verdict, audit
from server.audit.stored import BoardAudit, Progress, audit_leaderboard, audit_stored
from server.config import env_flag
from server.daily import DATE_PATTERN
from server.errors import ApiError
from server.redisconn import connect
from server.rules import GAME_NAMES
from server.service import GameService
from server.store import Store

PASSED, INTEGRITY_FAILED, SIGNALS_ONLY, ERROR = 0, 1, 2, 3


class UsageError(Exception):
    """A problem with the command line, a file or Redis: exit status 3."""


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors exit with :data:`ERROR` (argparse's own 2 means "signals only" here)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(ERROR, f"{self.prog}: error: {message}\n")


def exit_status(verdicts: list[Verdict]) -> int:
    """1 if any integrity is not ``pass``, else 2 if any signal fired, else 0."""
    if any(verdict.integrity != "pass" for verdict in verdicts):
        return INTEGRITY_FAILED
    if any(verdict.signals for verdict in verdicts):
        return SIGNALS_ONLY
    return PASSED


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="python -m server.audit",
        description="Audit solitaire replay exports (protocol/AUDIT.md).",
    )
    parser.add_argument("file", nargs="?", help="a replay export, JSON or msgpack ('-': stdin)")
    parser.add_argument("--game-id", help="audit this stored game (needs --redis-url)")
    parser.add_argument(
        "--leaderboard",
        nargs=2,
        metavar=("GAME", "DATE"),
        help="audit every entry of this daily leaderboard (needs --redis-url)",
    )
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL"), help="$REDIS_URL")
    parser.add_argument(
        "--redis-cluster",
        action="store_true",
        default=env_flag(os.environ.get("REDIS_CLUSTER", "")),
        help="--redis-url names a node of a Redis Cluster ($REDIS_CLUSTER=1)",
    )
    parser.add_argument(
        "--secret",
        default=None,
        help="the server secret (optional): also check daily seeds against their derivation",
    )
    parser.add_argument(
        "--clairvoyance",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="look for the clairvoyance signal (needs the seed; seconds of CPU per game); "
        "default: on for --leaderboard, off otherwise",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict(s) as JSON")
    args = parser.parse_args(argv)
    modes = [args.file is not None, args.game_id is not None, args.leaderboard is not None]
    if sum(modes) != 1:
        parser.error("give exactly one of FILE, --game-id or --leaderboard")
    if (args.game_id or args.leaderboard) and not args.redis_url:
        parser.error("--game-id and --leaderboard need --redis-url (or $REDIS_URL)")
    if args.leaderboard and args.leaderboard[0] not in GAME_NAMES:
        parser.error(f"GAME is one of {', '.join(GAME_NAMES)}")
    if args.leaderboard and not DATE_PATTERN.fullmatch(args.leaderboard[1]):
        parser.error("DATE is a UTC day, YYYY-MM-DD")
    if args.clairvoyance is None:
        args.clairvoyance = args.leaderboard is not None
    return args


def read_export(name: str) -> Any:
    """The export in a file (JSON, else msgpack)."""
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {name}: {error.strerror or error}") from None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        pass
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception:  # msgpack raises several unrelated types
        raise UsageError(f"{name} is neither JSON nor msgpack") from None


def describe(verdict: Verdict) -> str:
    """A verdict in a few lines for people."""
    head = f"{verdict.game_id or '?'} ({verdict.game or '?'}"
    head += f", daily {verdict.daily})" if verdict.daily else ")"
    lines = [f"{head}: {verdict.summary}"]
    if verdict.replayed_status is None:
        lines.append(f"  {verdict.moves} moves; not replayed")
    else:
        lines.append(
            f"  {verdict.replayed_moves} of {verdict.moves} moves replayed: "
            f"{verdict.replayed_status}, score {verdict.replayed_score}"
        )
    if verdict.findings:
        lines.append("  integrity findings:")
        lines += [f"  - {finding}" for finding in verdict.findings]
    if verdict.signals:
        lines.append("  fair-play signals:")
        lines += [f"  - {signal}" for signal in verdict.signals]
    return "\n".join(lines)


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def board_table(game: str, date: str, results: list[BoardAudit]) -> str:
    """The summary of a leaderboard audit: one row per entry, then the totals."""
    header = (
        f"{'rank':>5}  {'game id':<20}  {'player':<20}  {'score':>5}  {'moves':>6}  "
        f"{'integrity':<10}  {'trace':<5}  {'signals':<30}  first finding or signal"
    )
    rows = [f"{game} {date}", header]
    for result in results:
        entry, verdict = result.entry, result.verdict
        first = verdict.findings[0] if verdict.findings else None
        first_text = str(first or (verdict.signals[0] if verdict.signals else ""))
        signals = ",".join(signal.name for signal in verdict.signals) or "-"
        trace = {None: "-", True: "yes", False: "no"}[result.trace_recorded]
        rows.append(
            f"{result.rank:>5}  {_cell(verdict.game_id or '-', 20):<20}  "
            f"{_cell(result.player_id, 20):<20}  "
            f"{'-' if entry is None else entry.score:>5}  "
            f"{'-' if entry is None else entry.moves:>6}  "
            f"{verdict.integrity:<10}  {trace:<5}  {_cell(signals, 30):<30}  "
            f"{_cell(first_text, 90)}"
        )
    totals = board_totals(results)
    rows.append(
        f"{totals['audited']} audited: {totals['passed']} passed, "
        f"{totals['integrity_failed']} failed integrity, "
        f"{totals['signals_only']} passed integrity with fair-play signals"
    )
    return "\n".join(rows)


def board_totals(results: list[BoardAudit]) -> dict[str, int]:
    verdicts = [result.verdict for result in results]
    failed = sum(verdict.integrity != "pass" for verdict in verdicts)
    passed = sum(verdict.passed for verdict in verdicts)
    return {
        "audited": len(verdicts),
        "passed": passed,
        "integrity_failed": failed,
        "signals_only": len(verdicts) - passed - failed,
    }


def print_progress(stream: TextIO) -> Progress:
    """Progress lines, ``[12/300] g_xxx pass``, on ``stream``."""

    def progress(done: int, total: int, result: BoardAudit) -> None:
        game_id = result.verdict.game_id or result.player_id
        print(f"[{done}/{total}] {game_id} {result.verdict.summary}", file=stream, flush=True)

    return progress


async def _with_service(args: argparse.Namespace) -> int:
    client = connect(args.redis_url, args.redis_cluster)
    try:
        secret = (args.secret or "").encode()
        service = GameService(Store(client), secret)
        check_seed = bool(args.secret)
        if args.game_id is not None:
            try:
                verdict = await audit_stored(
                    service,
                    args.game_id,
                    check_daily_seed=check_seed,
                    clairvoyance=args.clairvoyance,
                )
            except ApiError as error:
                raise UsageError(error.message) from None
            print(json.dumps(verdict.to_dict(), indent=2) if args.json else describe(verdict))
            return exit_status([verdict])
        game, date = args.leaderboard
        results = await audit_leaderboard(
            service,
            game,
            date,
            check_daily_seed=check_seed,
            progress=print_progress(sys.stderr),
            clairvoyance=args.clairvoyance,
        )
        if args.json:
            document = {
                "game": game,
                "date": date,
                **board_totals(results),
                "entries": [result.to_dict() for result in results],
            }
            print(json.dumps(document, indent=2))
        else:
            print(board_table(game, date, results))
        return exit_status([result.verdict for result in results])
    except (RedisError, OSError) as error:
        raise UsageError(f"redis at {args.redis_url}: {error}") from None
    finally:
        await client.aclose()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.file is not None:
            signals = WITH_CLAIRVOYANCE if args.clairvoyance else EXPORT_SIGNALS
            verdict = audit(read_export(args.file), signals=signals)
            print(json.dumps(verdict.to_dict(), indent=2) if args.json else describe(verdict))
            return exit_status([verdict])
        return asyncio.run(_with_service(args))
    except UsageError as error:
        print(f"python -m server.audit: error: {error}", file=sys.stderr)
        return ERROR
