"""Pipelining of the move scripts of concurrent moves.

Under load a worker has many moves in flight, each an ``EVALSHA`` of its own: one
connection taken from the pool, one write, one read each.  The batcher gathers the
commands handed to it while the event loop runs one round of ready callbacks (the moves
of every socket whose frame arrived in that round), and sends them to each primary as
one pipeline: one write and one read for all of them.  On a Redis Cluster the commands
are grouped by the primary owning their key's slot (each command touches one slot).

Each caller gets its own reply, or its own error: a command's error (a script Redis
lost, a slot that moved) is raised to that caller only; a broken connection is raised
to every caller of the batch (each one's request then fails as ``store_unavailable``,
as an unbatched one would).
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis.exceptions import RedisError, ResponseError

from server.redisconn import RedisNodes

#: Commands sent in one pipeline at most (a bigger round is split).
MAX_BATCH = 256

Queued = tuple[tuple[Any, ...], "asyncio.Future[Any]"]


class Batcher:
    """Sends the commands given during one event-loop round as a pipeline per primary."""

    def __init__(self, nodes: RedisNodes) -> None:
        self.nodes = nodes
        self._queued: dict[str, list[Queued]] = {}
        self._flush_scheduled = False
        self._sending: set[asyncio.Task[None]] = set()

    async def execute(self, key: str, command: tuple[Any, ...]) -> Any:
        """``command`` (which touches ``key``'s slot only) sent with the others of this
        round; its reply, or its error raised."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queued.setdefault(self.nodes.owner(key), []).append((command, future))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            # call_soon runs after every callback already ready in this round: the moves
            # whose frames arrived together are all queued by then.
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._flush_scheduled = False
        queued, self._queued = self._queued, {}
        for name, items in queued.items():
            for start in range(0, len(items), MAX_BATCH):
                task = asyncio.create_task(self._send(name, items[start : start + MAX_BATCH]))
                self._sending.add(task)
                task.add_done_callback(self._sending.discard)

    async def _send(self, name: str, items: list[Queued]) -> None:
        try:
            if len(items) == 1:  # nothing to gather: no pipeline's bookkeeping
                command, future = items[0]
                replies = [await self._one(name, command)]
            else:
                async with self.nodes.node_client(name).pipeline(transaction=False) as pipe:
                    for command, _ in items:
                        pipe.execute_command(*command)
                    replies = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as error:
            for _, future in items:
                if not future.done():
                    future.set_exception(error)
            return
        except asyncio.CancelledError:
            for _, future in items:
                future.cancel()
            raise
        for (_, future), reply in zip(items, replies, strict=True):
            if future.done():  # its caller gave up (cancelled)
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _one(self, name: str, command: tuple[Any, ...]) -> Any:
        try:
            return await self.nodes.node_client(name).execute_command(*command)
        except ResponseError as error:
            return error  # the command's own error, as a pipeline reports it
