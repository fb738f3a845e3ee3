"""``python -m tools.sessions``: record the five sessions into ``protocol/sessions/``.

Starts its own ``redis-server`` on a free loopback port (or uses ``--redis-url``, whose
database it flushes first) and the server in-process, then records one session per game.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import redis

from server.rules import GAME_NAMES
from server.testing import RedisProcess, serve
from tools.sessions.record import DIRECTORY, record, write


@contextlib.contextmanager
def flushed(url: str) -> Iterator[str]:
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        client.flushdb()
        yield url
    finally:
        client.close()


@contextlib.contextmanager
def own_redis() -> Iterator[str]:
    with RedisProcess() as redis_process:
        yield redis_process.url


async def record_all(redis_url: str, directory: Path, games: list[str]) -> list[Path]:
    async with serve(redis_url) as base_url:
        return [write(await record(base_url, game), directory) for game in games]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.sessions", description=__doc__)
    parser.add_argument("--out", type=Path, default=DIRECTORY, help="directory to write to")
    parser.add_argument("--redis-url", help="a Redis to use (its database is FLUSHED)")
    parser.add_argument("games", nargs="*", choices=[[], *GAME_NAMES], default=[])
    args = parser.parse_args(argv)
    games = args.games or list(GAME_NAMES)
    if args.redis_url:
        server: contextlib.AbstractContextManager[str] = flushed(args.redis_url)
    else:
        server = own_redis()
    with server as url:
        for path in asyncio.run(record_all(url, args.out, games)):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
