"""The batcher (``server/batcher.py``): the commands queued for a primary go to it as one
pipeline on the batcher's own connection; each caller gets its own reply or its own
error."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any

from redis.asyncio.connection import Connection as RedisPyConnection
from redis.exceptions import ConnectionError, NoScriptError, ResponseError

from server import redisconn
from server.batcher import Batcher, packed
from server.redisconn import RedisNodes

ECHO = "return {KEYS[1], ARGV[1]}"


async def test_each_caller_gets_its_own_reply_or_error(redis_client) -> None:
    """Keys of many slots (every primary of a cluster), one unknown script and one
    command error among them, all in one round."""
    await redis_client.ping()  # a cluster client learns the layout
    nodes = RedisNodes(redis_client)
    batcher = Batcher(nodes)
    sha = hashlib.sha1(ECHO.encode()).hexdigest()
    for name in {nodes.owner(f"k{{{i}}}") for i in range(40)}:
        await nodes.node_client(name).script_load(ECHO)
    keys = [f"k{{{i}}}" for i in range(40)]
    calls = [batcher.execute(key, ("EVALSHA", sha, 1, key, f"v{i}")) for i, key in enumerate(keys)]
    calls.append(batcher.execute("lost", ("EVALSHA", "0" * 40, 1, "lost", "x")))
    calls.append(batcher.execute("bad{1}", ("EVALSHA", sha, "not-a-number", "bad{1}")))
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert [bytes(key) for key, _ in results[:40]] == [key.encode() for key in keys]
    assert [value for _, value in results[:40]] == [f"v{i}".encode() for i in range(40)]
    assert isinstance(results[40], NoScriptError)
    assert isinstance(results[41], ResponseError) and not isinstance(results[41], NoScriptError)


async def test_one_round_is_one_pipeline(redis_client) -> None:
    """Twenty commands of one round, to one primary, use one connection of its pool, and
    a second round the same one."""
    await redis_client.ping()
    nodes = RedisNodes(redis_client)
    batcher = Batcher(nodes)
    pool = nodes.node_client(nodes.owner("n")).connection_pool
    replies = await asyncio.gather(*(batcher.execute("n", ("INCR", "n")) for _ in range(20)))
    assert sorted(replies) == list(range(replies[0], replies[0] + 20))
    opened = [*pool._get_free_connections(), *pool._get_in_use_connections()]
    assert len(opened) == 1, "the round did not go as one pipeline"
    again = await asyncio.gather(*(batcher.execute("n", ("INCR", "n")) for _ in range(20)))
    assert sorted(again) == list(range(replies[-1] + 1, replies[-1] + 21))
    assert [*pool._get_free_connections(), *pool._get_in_use_connections()] == opened


async def test_commands_queued_while_a_pipeline_is_out_go_in_the_next(redis_client) -> None:
    """Callers arriving in later rounds, while the first pipeline awaits its replies, are
    sent together after it: two pipelines for three rounds."""
    await redis_client.ping()
    nodes = RedisNodes(redis_client)
    batcher = Batcher(nodes)
    sent: list[int] = []
    first = [asyncio.ensure_future(batcher.execute("q", ("INCR", "q"))) for _ in range(3)]
    await asyncio.sleep(0)  # the three are queued; the lane's sender starts next round
    lane = batcher._lanes[nodes.owner("q")]
    real_round_trip = lane._round_trip

    async def counted(commands: list[tuple[Any, ...]]) -> list[Any]:
        sent.append(len(commands))
        return await real_round_trip(commands)

    lane._round_trip = counted  # type: ignore[method-assign]
    later = []
    for _ in range(2):  # two more rounds while the first pipeline is out
        later += [asyncio.ensure_future(batcher.execute("q", ("INCR", "q"))) for _ in range(4)]
        await asyncio.sleep(0)
    replies = await asyncio.gather(*first, *later)
    assert sorted(replies) == list(range(replies[0], replies[0] + 11))
    assert sent == [3, 8], sent


async def test_a_lost_connection_fails_every_caller_of_the_round(
    make_redis: Callable[..., Any],
) -> None:
    process = make_redis()
    client = redisconn.connect(process.url, cluster=False)
    try:
        batcher = Batcher(RedisNodes(client))
        assert await batcher.execute("a", ("SET", "a", "1")) == b"OK"  # as Redis sent it
        process.stop()
        results = await asyncio.gather(
            *(batcher.execute("a", ("GET", "a")) for _ in range(5)), return_exceptions=True
        )
        assert all(isinstance(result, ConnectionError | OSError) for result in results), results
    finally:
        await client.aclose()


async def test_a_script_redis_lost_is_loaded_again(redis_client) -> None:
    """The EVALSHA of a script the primary no longer has (a restart, SCRIPT FLUSH) is
    answered after the batcher loads it there, for every caller of the pipeline."""
    await redis_client.ping()
    nodes = RedisNodes(redis_client)
    batcher = Batcher(nodes)
    sha = hashlib.sha1(ECHO.encode()).hexdigest()
    owner = nodes.node_client(nodes.owner("s{1}"))
    await owner.script_flush()
    calls = [batcher.execute("s{1}", ("EVALSHA", sha, 1, "s{1}", f"v{i}"), ECHO) for i in range(3)]
    replies = await asyncio.gather(*calls)
    assert [value for _, value in replies] == [b"v0", b"v1", b"v2"]
    assert (await owner.script_exists(sha)) == [True]


async def test_a_client_that_sent_nothing_yet_is_routed(
    redis_url: str, redis_cluster: bool
) -> None:
    """The first command of a process can be the batcher's (a rate limit at its first
    request): a cluster client learns its layout then."""
    client = redisconn.connect(redis_url, redis_cluster)
    try:
        batcher = Batcher(RedisNodes(client))
        assert await batcher.execute("fresh{1}", ("INCR", "fresh{1}")) == 1
    finally:
        await client.aclose()


def test_a_command_is_packed_as_redis_py_packs_it() -> None:
    reference = RedisPyConnection()
    commands: list[tuple[Any, ...]] = [
        ("EVALSHA", "0" * 40, 2, "game:{g}", "game:{g}:log", b"\x00\xff" * 3000),
        ("SET", "clé", "värde ✓", "PX", 1500),
        ("INCRBY", "n", -7),
        ("ZADD", "z", 0.25, "m", 1e-05, b""),
    ]
    for command in commands:
        assert packed(command) == b"".join(reference.pack_commands([command])), command


async def test_a_value_redis_cannot_take_fails_its_caller_alone(redis_client) -> None:
    await redis_client.ping()
    batcher = Batcher(RedisNodes(redis_client))
    for bad in (None, True, ["a"]):
        good = batcher.execute("n", ("INCR", "n"))
        results = await asyncio.gather(
            batcher.execute("n", ("SET", "n", bad)), good, return_exceptions=True
        )
        assert isinstance(results[0], TypeError), results
        assert isinstance(results[1], int), results
