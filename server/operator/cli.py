"""``python -m server.operator``: operator tokens and the action trail.

::

    python -m server.operator token NAME [--expires 30d]   # prints the token on its last line
    python -m server.operator revoke NAME
    python -m server.operator actions [--since YYYY-MM-DD]  # the trail, one JSON per line

The store is the one a server of the same settings uses: ``--redis-url`` (``REDIS_URL``,
``--redis-cluster``), else the embedded Valkey of ``--data-dir`` (``DATA_DIR``, default
``./data``): the running server's, or started here for the command when no server runs.
The key of the tokens derives from the server secret: ``--secret`` (``SERVER_SECRET``),
else the one a server keeps (in Redis, or ``DATA_DIR/secret``).  Issuing and revoking
are in the trail, as the operator ``cli``; no token is ever written there.
Exit status: 0 done, 1 ``revoke`` of an operator with no token, 2 a usage error, 3 a
store error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from server import daily
from server.app import shared_secret
from server.config import env_flag
from server.embedded import EmbeddedValkey, read_or_create_secret, running_url
from server.operator import credentials, trail
from server.redisconn import connect

DONE, NOT_FOUND, USAGE, STORE_ERROR = 0, 1, 2, 3
_DURATION = re.compile(r"^([1-9][0-9]{0,6})([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> int:
    """Seconds of ``30d``, ``12h``, ``90m`` or ``600s``."""
    found = _DURATION.fullmatch(text)
    if not found:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 30d, 12h or 90m")
    seconds = int(found[1]) * _UNITS[found[2]]
    if seconds > credentials.MAX_LIFETIME:
        raise argparse.ArgumentTypeError(
            f"{text!r}: at most {credentials.MAX_LIFETIME // 86400} days"
        )
    return seconds


def operator_name(text: str) -> str:
    try:
        return credentials.valid_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # The store's options, given after the command (as in the README's examples).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""), help="REDIS_URL")
    common.add_argument(
        "--redis-cluster",
        action="store_true",
        default=env_flag(os.environ.get("REDIS_CLUSTER", "")),
        help="--redis-url names a node of a Redis Cluster (REDIS_CLUSTER=1)",
    )
    common.add_argument(
        "--data-dir",
        default=os.environ.get("DATA_DIR", "./data"),
        help="the embedded store's directory when there is no --redis-url (DATA_DIR)",
    )
    common.add_argument(
        "--secret", default=os.environ.get("SERVER_SECRET", ""), help="SERVER_SECRET"
    )
    parser = argparse.ArgumentParser(
        prog="python -m server.operator",
        description="Operator tokens and the action trail (protocol/OPERATOR.md).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    issue = commands.add_parser(
        "token", parents=[common], help="issue NAME's token (its previous one stops working)"
    )
    issue.add_argument("name", type=operator_name)
    issue.add_argument(
        "--expires",
        type=duration,
        default=credentials.DEFAULT_LIFETIME,
        help="lifetime: 30d (the default), 12h, 90m…; at most 365d",
    )
    revoke = commands.add_parser("revoke", parents=[common], help="revoke NAME's token")
    revoke.add_argument("name", type=operator_name)
    actions = commands.add_parser(
        "actions", parents=[common], help="export the trail as JSON lines, oldest first"
    )
    actions.add_argument("--since", default=None, help="a UTC day, YYYY-MM-DD (default: all)")
    args = parser.parse_args(argv)
    since = getattr(args, "since", None)
    if since is not None and not daily.DATE_PATTERN.fullmatch(since):
        parser.error("--since is a UTC day, YYYY-MM-DD")
    return args


@contextlib.contextmanager
def embedded_url(data_dir: Path) -> Iterator[str]:
    """The URL of the embedded store of ``data_dir``: the running server's, else one
    started for the command."""
    url = running_url(data_dir)
    if url is not None:
        yield url
        return
    valkey = EmbeddedValkey(data_dir)
    url = valkey.start()
    try:
        yield url
    finally:
        valkey.stop()


@contextlib.asynccontextmanager
async def store(args: argparse.Namespace) -> AsyncIterator[tuple[Any, bytes]]:
    """A client of the store and the server secret."""
    with contextlib.ExitStack() as stack:
        url, secret = args.redis_url, args.secret
        if not url:
            data_dir = Path(args.data_dir)
            url = stack.enter_context(embedded_url(data_dir))
            secret = secret or read_or_create_secret(data_dir.resolve())
        client = connect(url, args.redis_cluster and bool(args.redis_url))
        try:
            yield client, (secret.encode() if secret else await shared_secret(client, ""))
        finally:
            await client.aclose()


async def run(args: argparse.Namespace) -> int:
    now_ms = int(time.time() * 1000)
    async with store(args) as (redis, secret):
        if args.command == "token":
            token, expires_at = await credentials.issue(
                redis, secret, args.name, now_ms, args.expires
            )
            await trail.record(
                redis,
                operator=credentials.CLI,
                action="operator_token_issued",
                now_ms=now_ms,
                details={"operator": args.name, "expires_at": expires_at},
            )
            print(f"operator {args.name}: token valid until {expires_at} (Unix ms)")
            print(token)
            return DONE
        if args.command == "revoke":
            if not await credentials.revoke(redis, args.name):
                print(f"operator {args.name} holds no token", file=sys.stderr)
                return NOT_FOUND
            await trail.record(
                redis,
                operator=credentials.CLI,
                action="operator_token_revoked",
                now_ms=now_ms,
                details={"operator": args.name},
            )
            print(f"operator {args.name}: token revoked")
            return DONE
        start = 0 if args.since is None else daily.opens_ms(args.since)
        for entry in await trail.since(redis, start):
            print(json.dumps(entry, separators=(",", ":")))
        return DONE


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return asyncio.run(run(args))
    except (RedisError, OSError, RuntimeError) as error:
        print(f"python -m server.operator: the store failed: {error}", file=sys.stderr)
        return STORE_ERROR
