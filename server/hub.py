"""Fan-out of patches from Redis pub/sub to this process's WebSocket clients.

One pub/sub connection per process, subscribed to the channel of every game
that has a local watcher.  The move script publishes each patch inside the
same atomic step that stores it, so patches arrive in version order.  When
the pub/sub connection drops, the hub reconnects by itself and tells every
watcher to resync from Redis, so nothing published meanwhile is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import msgpack
from redis.asyncio import Redis
from redis.exceptions import RedisError

from server import metrics, store

log = logging.getLogger("server.hub")

#: A published patch: (from version, to version, the msgpack frame as published).
Patch = tuple[int, int, bytes]
#: Called with (game_id, patch) for each patch, or (game_id, None) to resync.
Listener = Callable[[str, Patch | None], None]


class Hub:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._listeners: dict[str, set[Listener]] = {}
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="hub")

    async def stop(self) -> None:
        self._stopping = True
        # redis-py can swallow a cancellation that lands while it connects: insist.
        while self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=0.1)
        if self._pubsub is not None:
            await self._pubsub.aclose()

    async def add(self, game_id: str, listener: Listener) -> None:
        """Start delivering ``game_id``'s patches to ``listener``."""
        listeners = self._listeners.setdefault(game_id, set())
        listeners.add(listener)
        if len(listeners) == 1 and self._pubsub is not None:
            await self._pubsub.subscribe(store.channel(game_id))

    async def remove(self, game_id: str, listener: Listener) -> None:
        listeners = self._listeners.get(game_id)
        if not listeners:
            return
        listeners.discard(listener)
        if not listeners:
            del self._listeners[game_id]
            if self._pubsub is not None:
                # On failure the reconnect loop resubscribes to live games only.
                with contextlib.suppress(RedisError):
                    await self._pubsub.unsubscribe(store.channel(game_id))

    async def _run(self) -> None:
        delay = 0.1
        while not self._stopping:
            try:
                self._pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
                # A placeholder channel keeps the connection in subscribe mode.
                await self._pubsub.subscribe("hub:keepalive")
                channels = [store.channel(game_id) for game_id in self._listeners]
                if channels:
                    await self._pubsub.subscribe(*channels)
                    self._resync_all()
                delay = 0.1
                await self._listen()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as error:
                log.warning("pub/sub connection lost (%s); reconnecting", error)
                pubsub, self._pubsub = self._pubsub, None
                if pubsub is not None:
                    with contextlib.suppress(RedisError, OSError):
                        await pubsub.aclose()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def _listen(self) -> None:
        while True:
            message = await self._pubsub.get_message(timeout=5.0)
            if message is None or message["type"] != "message":
                continue
            name = message["channel"]
            game_id = store.game_id_of_channel(name.decode() if isinstance(name, bytes) else name)
            frame = message["data"]
            header = msgpack.unpackb(frame)
            patch = (header["from"], header["to"], frame)
            listeners = list(self._listeners.get(game_id, ()))
            for listener in listeners:
                listener(game_id, patch)
            metrics.patches_fanned_out(len(listeners))

    def _resync_all(self) -> None:
        for game_id, listeners in list(self._listeners.items()):
            for listener in list(listeners):
                listener(game_id, None)
