"""Fan-out of patches from Redis sharded pub/sub to this process's WebSocket clients.

The move script publishes each patch with ``SPUBLISH`` on the game's shard
channel, in the same atomic step that stores it, so patches arrive in version
order; in front of the patch goes its origin (``store.ORIGIN_BYTES``): the tag
of the socket that made the move, whose ``accepted`` carries the patch already.
The script publishes only when a process other than the mover's watches the
game: the hub enters this process in each watched game's watcher set
(``store.watchers_key``) once its subscription is confirmed and renews the
entries while it watches (an entry lapses unrenewed, or is taken out when the
hub stops); a patch nobody else watches is handed to this process's sockets by
:meth:`Hub.deliver`.
On a Redis Cluster only the primary owning the game's slot carries that channel,
so the hub keeps one pub/sub connection per primary (a *shard*) and subscribes
each watched game on the shard its slot maps to (on a standalone Redis there is
one shard).

When a shard's connection drops, when Redis tells it a channel's slot moved
away (an unasked ``sunsubscribe``), or when the periodic layout check finds a
game on the wrong shard (a failover promoted a replica), the hub re-learns the
cluster's layout, subscribes each game on the shard that owns it now, enters
this process in the game's watcher set again, and tells the sockets watching
the game to resync from Redis, so nothing published meanwhile is lost.

Each shard's connection has one reader, the shard's own task (:meth:`Hub._run`):
commands on it (``SSUBSCRIBE``, ``SUNSUBSCRIBE``, a ``PING``) are only written, from
whichever task needs them (:meth:`Hub._send`), never read back there, and never
reconnect it.  redis-py's own health check is off on these connections (it sent a PING
and read its answer from the subscribing task while the listener was reading: "read()
called while another coroutine is already waiting"); the listener checks the
connection itself, with a PING after :data:`server.redisconn.HEALTH_CHECK_INTERVAL`
seconds without a message, whose answer it reads like any other.  Routing subscribes
through the listener instead would make each one wait for the listener's read to end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from server import metrics, redisconn, store
from server.redisconn import RedisNodes, stop_task

log = logging.getLogger("server.hub")

#: A published patch: (from version, to version, the msgpack frame to send, its origin:
#: the tag of the socket whose move it is, ``store.NO_ORIGIN`` for none).
Patch = tuple[int, int, bytes, bytes]
#: Called with (game_id, patch) for each patch, or (game_id, None) to resync.
Listener = Callable[[str, Patch | None], None]
#: Seconds between checks that every game is subscribed on the shard owning it (cluster).
LAYOUT_CHECK_INTERVAL = 5.0
#: Longest wait before reconnecting a shard, in seconds.
MAX_RECONNECT_DELAY = 2.0
#: Longest wait, in seconds, for Redis to confirm a new subscription before the watcher
#: reads the game (past it, a patch published meanwhile reaches the watcher by resync).
SUBSCRIBE_CONFIRM_WAIT = 2.0
#: A watcher entry lapses this long after its last renewal (ms): a process that stops
#: without taking its entries out costs the games' movers a needless publish until then.
WATCH_TTL_MS = 60_000
#: Seconds between renewals of this process's watcher entries.
WATCH_RENEW_INTERVAL = 15.0
#: Watcher entries written per pipeline.
WATCH_BATCH = 500
#: Longest wait, in seconds, for taking this process's watcher entries out as it stops.
STOP_WAIT = 2.0


@dataclass(eq=False)
class Shard:
    """The pub/sub connection to one Redis primary and the games subscribed on it."""

    name: str
    client: Any
    games: set[str] = field(default_factory=set)
    #: Connected and subscribed (None while connecting or after a failure).
    pubsub: Any = None
    task: asyncio.Task[None] | None = None
    #: Channel -> future resolved when Redis confirms its SSUBSCRIBE.
    confirming: dict[str, asyncio.Future[None]] = field(default_factory=dict)


def channels_by_slot(game_ids: list[str]) -> list[list[str]]:
    """The channels of ``game_ids`` grouped by slot: one SSUBSCRIBE may not span slots."""
    groups: dict[int, list[str]] = {}
    for game_id in game_ids:
        name = store.channel(game_id)
        groups.setdefault(key_slot(name.encode()), []).append(name)
    return list(groups.values())


class Hub:
    def __init__(self, nodes: RedisNodes, watcher: str) -> None:
        """``watcher``: this process's name in the games' watcher sets
        (``Store.watcher``, which the move script compares with them)."""
        self.nodes = nodes
        self.watcher = watcher
        self._listeners: dict[str, set[Listener]] = {}
        self._shards: dict[str, Shard] = {}
        self._shard_of: dict[str, Shard] = {}
        #: Watched games whose watcher entry could not be written: their patches may
        #: not be published, so they are resynced once the renewal writes it.
        self._unentered: set[str] = set()
        #: Game -> when this process's entry in its watchers lapses (Unix ms).
        self._entries: dict[str, int] = {}
        self._layout_task: asyncio.Task[None] | None = None
        self._renew_task: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        if self.nodes.cluster:
            self._layout_task = asyncio.create_task(self._check_layout(), name="hub:layout")
        self._renew_task = asyncio.create_task(self._renew_entries(), name="hub:watchers")

    async def stop(self) -> None:
        self._stopping = True
        tasks = [shard.task for shard in self._shards.values() if shard.task is not None]
        for task in (self._layout_task, self._renew_task):
            if task is not None:
                tasks.append(task)
        for task in tasks:
            await stop_task(task)
        for shard in self._shards.values():
            await self._close(shard)
        self._forget_lapsed_entries()
        entered = list(self._entries)
        with contextlib.suppress(RedisError, OSError, TimeoutError):  # else they lapse
            await asyncio.wait_for(self._write_entries(entered, enter=False), STOP_WAIT)

    async def add(self, game_id: str, listener: Listener) -> None:
        """Start delivering ``game_id``'s patches to ``listener``."""
        listeners = self._listeners.setdefault(game_id, set())
        listeners.add(listener)
        if len(listeners) == 1:
            await self._attach(game_id)

    async def remove(self, game_id: str, listener: Listener) -> None:
        listeners = self._listeners.get(game_id)
        if not listeners:
            return
        listeners.discard(listener)
        if not listeners:
            del self._listeners[game_id]
            # Its watcher entry lapses unrenewed (WATCH_TTL_MS): taken out now, a removal
            # could overtake the entry of a socket that watches the game again at once.
            self._unentered.discard(game_id)
            shard = self._shard_of.pop(game_id, None)
            if shard is not None:
                shard.games.discard(game_id)
                shard.confirming.pop(store.channel(game_id), None)
                # On failure the reconnect subscribes to live games only.
                with contextlib.suppress(RedisError, OSError):
                    await self._send(shard, "SUNSUBSCRIBE", store.channel(game_id))

    async def _attach(self, game_id: str) -> None:
        """Subscribe ``game_id`` on the shard owning its slot (now, or when that shard
        connects, which then resyncs it), and wait, briefly, until Redis confirms it: the
        watcher reads the game after this, so no patch falls between the read and the
        subscription."""
        channel = store.channel(game_id)
        name = self.nodes.owner(channel)
        shard = self._shards.get(name)
        if shard is None:
            shard = self._shards[name] = Shard(name, self.nodes.subscriber(name))
            shard.task = asyncio.create_task(self._run(shard), name=f"hub:{name}")
        shard.games.add(game_id)
        self._shard_of[game_id] = shard
        confirmed = shard.confirming.setdefault(channel, asyncio.get_running_loop().create_future())
        try:
            await self._send(shard, "SSUBSCRIBE", channel)
        except (RedisError, OSError) as error:
            # The shard's own loop sees the broken connection, reconnects and subscribes.
            log.warning("subscribing %s on %s failed (%s)", game_id, name, error)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(confirmed), SUBSCRIBE_CONFIRM_WAIT)
        # Subscribed first, entered second, read (by the watcher) third: a move stored
        # before the entry is in what the watcher reads, one stored after is published.
        try:
            await self._write_entries([game_id], enter=True)
        except (RedisError, OSError) as error:
            log.warning("entering %s's watchers failed (%s)", game_id, error)
            self._unentered.add(game_id)

    async def _write_entries(self, game_ids: list[str], enter: bool) -> None:
        """Enter (or renew) this process in the watcher sets of ``game_ids``, or take it
        out of them."""
        lapse = int(time.time() * 1000) + WATCH_TTL_MS
        for start in range(0, len(game_ids), WATCH_BATCH):
            batch = game_ids[start : start + WATCH_BATCH]
            async with self.nodes.client.pipeline(transaction=False) as pipe:
                for game_id in batch:
                    key = store.watchers_key(game_id)
                    if enter:
                        pipe.zadd(key, {self.watcher: lapse})
                        pipe.pexpire(key, WATCH_TTL_MS)
                    else:
                        pipe.zrem(key, self.watcher)
                await pipe.execute()
            for game_id in batch:
                if enter:
                    self._entries[game_id] = lapse
                else:
                    self._entries.pop(game_id, None)

    def _forget_lapsed_entries(self) -> None:
        now = int(time.time() * 1000)
        self._entries = {game: lapse for game, lapse in self._entries.items() if lapse > now}

    async def _renew_entries(self) -> None:
        while True:
            await asyncio.sleep(WATCH_RENEW_INTERVAL)
            await self.renew_entries()

    async def renew_entries(self) -> None:
        """Renew this process's watcher entries (every :data:`WATCH_RENEW_INTERVAL`); the
        games whose entries were missing have their sockets resynced once it succeeds."""
        self._forget_lapsed_entries()
        watched = list(self._listeners)
        try:
            await self._write_entries(watched, enter=True)
        except (RedisError, OSError) as error:
            # Lapsing entries would leave their games' patches unpublished: resync them
            # all once a renewal gets through.
            log.warning("renewing this process's watcher entries failed (%s)", error)
            self._unentered.update(watched)
            return
        entered = [game_id for game_id in self._unentered if game_id in self._listeners]
        self._unentered.clear()
        self._resync(entered)

    async def _run(self, shard: Shard) -> None:
        """Connect the shard, subscribe its games, and read its connection (this task
        alone reads it) until the hub stops; reconnect after any failure."""
        delay = 0.1
        while not self._stopping:
            try:
                pubsub = shard.client.pubsub()
                await pubsub.connect()
                shard.pubsub = pubsub
                games = list(shard.games)
                for channels in channels_by_slot(games):
                    await self._send(shard, "SSUBSCRIBE", *channels)
                # A Redis that restarted (or a replica promoted before it had them) may
                # have lost this process's entries: without them nothing is published to
                # it until the next renewal.
                await self._write_entries(games, enter=True)
                self._resync(games)
                delay = 0.1
                await self._listen(shard)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # noqa: BLE001 - the shard must outlive any failure
                if isinstance(error, RedisError | OSError):
                    log.warning("pub/sub shard %s lost (%s); reconnecting", shard.name, error)
                else:
                    # Not expected (counted in /metrics), but the games still need a listener.
                    log.exception("pub/sub shard %s failed; reconnecting", shard.name)
                await self._close(shard)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_RECONNECT_DELAY)
                await self._reroute()
                if not shard.games:  # its games moved to another primary: let it go
                    del self._shards[shard.name]
                    return

    @staticmethod
    async def _send(shard: Shard, *command: str) -> None:
        """Write ``command`` on the shard's connection, if it is up; its reply is read by
        the shard's task.  It neither reads nor reconnects (the shard's task does both)."""
        connection = shard.pubsub.connection if shard.pubsub is not None else None
        if connection is not None and connection.is_connected:
            try:
                await connection.send_command(*command, check_health=False)
            except AttributeError as error:
                # redis-py writes in a task of its own (wait_for): a failed read on the
                # shard's task may drop the connection in between, leaving no writer.
                raise RedisConnectionError(f"pub/sub connection to {shard.name} dropped") from error

    async def _listen(self, shard: Shard) -> None:
        pinged = False
        while True:
            if not shard.pubsub.connection.is_connected:
                # A write that failed dropped it: redis-py would reconnect it silently,
                # without the subscriptions (the reconnect here resubscribes and resyncs).
                raise RedisConnectionError(f"pub/sub connection to {shard.name} dropped")
            message = await shard.pubsub.get_message(timeout=redisconn.HEALTH_CHECK_INTERVAL)
            if message is None:
                # Quiet for an interval: the connection may be dead without a word (a
                # peer or a link gone); a PING's answer says it is not.
                if pinged:
                    raise RedisConnectionError(f"no answer to PING on {shard.name}")
                await self._send(shard, "PING")
                pinged = True
                continue
            pinged = False
            kind = message["type"]
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind == "pong":
                continue
            channel = message["channel"]
            channel = channel.decode() if isinstance(channel, bytes) else channel
            game_id = store.game_id_of_channel(channel)
            if kind == "smessage":
                self._fan_out(game_id, message["data"])
            elif kind == "ssubscribe":
                confirmed = shard.confirming.pop(channel, None)
                if confirmed is not None and not confirmed.done():
                    confirmed.set_result(None)
            elif kind == "sunsubscribe" and game_id in shard.games:
                # Not asked for: Redis dropped the channel because its slot moved away.
                await self._reroute()

    def _fan_out(self, game_id: str, data: bytes) -> None:
        # A function of its own: the list of listeners dies with it.  As a local of the
        # listening loop it lived until the shard's next message, and with it every socket
        # of the last patch's audience, closed or not.
        origin, frame = data[: store.ORIGIN_BYTES], data[store.ORIGIN_BYTES :]
        version = msgpack.unpackb(frame)["v"]
        self.deliver(game_id, (version - 1, version, frame, origin))

    def deliver(self, game_id: str, patch: Patch) -> None:
        """Hand ``patch`` to this process's sockets on its game: a published one, or one
        the move script did not publish (no other process watches the game)."""
        listeners = list(self._listeners.get(game_id, ()))
        for listener in listeners:
            listener(game_id, patch)
        metrics.patches_fanned_out(len(listeners))

    async def _reroute(self) -> None:
        """Learn the layout anew and move every game whose slot another primary owns now
        to that primary's shard, resyncing its watchers."""
        with contextlib.suppress(RedisError, OSError):
            await self.nodes.refresh()
        for game_id, shard in list(self._shard_of.items()):
            name = self.nodes.owner(store.channel(game_id))
            if name == shard.name:
                continue
            shard.games.discard(game_id)
            with contextlib.suppress(RedisError, OSError):
                await self._send(shard, "SUNSUBSCRIBE", store.channel(game_id))
            await self._attach(game_id)
            self._resync([game_id])

    async def _check_layout(self) -> None:
        while True:
            await asyncio.sleep(LAYOUT_CHECK_INTERVAL)
            if self._shard_of:
                await self._reroute()

    @staticmethod
    async def _close(shard: Shard) -> None:
        pubsub, shard.pubsub = shard.pubsub, None
        if pubsub is not None:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()

    def _resync(self, game_ids: list[str]) -> None:
        for game_id in game_ids:
            for listener in list(self._listeners.get(game_id, ())):
                listener(game_id, None)
