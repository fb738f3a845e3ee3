"""Pipelining of the move scripts of concurrent moves.

Under load a worker has many moves in flight, each an ``EVALSHA`` of its own.  Through
the client's pool each would take a connection, write, read and give it back (about
100 µs of a worker's CPU per command in redis-py's pool, timeouts and bookkeeping,
``BENCHMARKS.md``).  Instead the batcher keeps one connection per primary (a *lane*) and
sends what is queued on it as one pipeline: one write and one read for all of them.
While a pipeline is out, the commands of the moves arriving meanwhile queue for the next
one, so a busy worker batches more, and an idle one sends each command at once (after
the event-loop round that queued it, with the others of that round).  On a Redis Cluster
the commands go to the lane of the primary owning their key's slot (each command touches
one slot).

Each caller gets its own reply (as Redis sent it: no client-side conversion), or its own
error: a command's error (a script Redis lost, a slot that moved) is raised to that caller
only; a broken or silent connection is raised to every caller of the pipeline (each one's
request then fails as ``store_unavailable``, as an unbatched one would) and the lane
connects again for the next.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from redis.exceptions import ConnectionError, RedisError, ResponseError

from server import metrics
from server.redisconn import RedisNodes

#: Commands sent in one pipeline at most (more wait for the next).
MAX_BATCH = 256
#: Seconds a pipeline's replies may take, all together.
REPLY_TIMEOUT = 5.0
#: A command in RESP, and the future of its caller.
Queued = tuple[bytes, "asyncio.Future[Any]"]


def packed(command: tuple[Any, ...]) -> bytes:
    """``command`` in RESP, the bytes redis-py's ``pack_command`` writes (a test compares)
    in a third of its time (7 µs for a move's ``EVALSHA``), packed by its caller so that a
    value Redis cannot take fails that caller alone."""
    parts = [b"*%d\r\n" % len(command)]
    for arg in command:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, bool) or not isinstance(arg, bytes | int | float):
            raise TypeError(f"a Redis argument is bytes, str, int or float, not {arg!r}")
        elif isinstance(arg, int):
            arg = b"%d" % arg
        elif isinstance(arg, float):
            arg = repr(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


class Lane:
    """One primary's connection and the commands waiting for it."""

    def __init__(self, client: Any) -> None:
        self.pool = client.connection_pool
        #: Taken from the client's pool and never given back, so it closes with the client.
        self.connection: Any = None
        self.queued: list[Queued] = []
        self.sender: asyncio.Task[None] | None = None

    def add(self, command: bytes, future: asyncio.Future[Any]) -> None:
        self.queued.append((command, future))
        if self.sender is None:
            # The task's first step runs after every callback already ready in this round:
            # the moves whose frames arrived together are all queued by then.
            self.sender = asyncio.create_task(self._send_all())

    async def _send_all(self) -> None:
        try:
            while self.queued:
                batch, self.queued = self.queued[:MAX_BATCH], self.queued[MAX_BATCH:]
                await self._send(batch)
        except asyncio.CancelledError:
            for _, future in self.queued:
                future.cancel()
            self.queued = []
            raise
        finally:
            self.sender = None

    async def _send(self, batch: list[Queued]) -> None:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(REPLY_TIMEOUT):
                replies = await self._round_trip([command for command, _ in batch])
        except (RedisError, OSError) as error:  # OSError: the deadline's TimeoutError too
            if self.connection is not None:
                await self.connection.disconnect(nowait=True)
            if not isinstance(error, RedisError):
                error = ConnectionError(f"the pipeline to Redis failed: {error!r}")
            metrics.redis_error(error)
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        except asyncio.CancelledError:
            if self.connection is not None:
                await self.connection.disconnect(nowait=True)
            for _, future in batch:
                future.cancel()
            raise
        finally:
            metrics.redis_round_trip("pipeline", time.perf_counter() - started)
        for (_, future), reply in zip(batch, replies, strict=True):
            if future.done():  # its caller gave up (cancelled)
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _round_trip(self, commands: list[bytes]) -> list[Any]:
        connection = self.connection
        if connection is not None:
            await self._drop_if_closed(connection)  # no I/O: what the socket already said
        if connection is None:
            connection = self.connection = await self.pool.get_connection()
            # Without a socket timeout redis-py neither wraps each write in a task nor
            # each read in a timeout: the whole pipeline has one deadline (REPLY_TIMEOUT).
            connection.socket_timeout = None
        await connection.send_packed_command(b"".join(commands))
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(await connection.read_response())
            except ResponseError as error:  # this command's own error
                replies.append(error)
        return replies

    async def _drop_if_closed(self, connection: Any) -> None:
        """Disconnect (to connect again at once) a connection Redis closed while it sat
        idle, before anything is sent on it: after a Redis restart its next pipeline
        would fail every caller with Redis back (the soak found it).  Nothing was sent,
        so nothing is ambiguous; a pipeline cut while out still fails its callers.

        A close is either an end of stream (a FIN, which the parser's ``can_read`` sees)
        or a reset (an RST: the reader holds an error and no end of stream, so only the
        transport says it): both are checked."""
        writer = getattr(connection, "_writer", None)  # redis-py's asyncio StreamWriter
        try:
            closed = (
                writer is None
                or writer.is_closing()
                or await connection.can_read()  # no reply is due: data means closed
            )
        except (RedisError, OSError):
            closed = True
        if closed:
            await connection.disconnect(nowait=True)


class Batcher:
    """Sends the commands given to it as pipelines, one connection per primary."""

    def __init__(self, nodes: RedisNodes) -> None:
        self.nodes = nodes
        self._lanes: dict[str, Lane] = {}

    async def execute(self, key: str, command: tuple[Any, ...], script: str | None = None) -> Any:
        """``command`` (which touches ``key``'s slot only) sent with the others queued
        for its primary; its reply, or its error raised.  When ``command`` is the
        ``EVALSHA`` of ``script``, a Redis that lost it (a restart) gets it loaded again;
        a slot that moved (failover, resharding) is looked up again."""
        return await self.nodes.run_script(key, script, lambda: self._queue(key, command))

    async def _queue(self, key: str, command: tuple[Any, ...]) -> Any:
        data = packed(command)
        await self.nodes.ready()
        name = self.nodes.owner(key)
        lane = self._lanes.get(name)
        if lane is None:
            lane = self._lanes[name] = Lane(self.nodes.node_client(name))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        lane.add(data, future)
        return await future
