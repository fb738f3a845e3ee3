"""The server's Redis: one standalone server, or a Redis Cluster named by any of its nodes.

Most commands go through one client, a ``redis.asyncio.Redis`` or a
``redis.asyncio.RedisCluster`` (which routes each command by its key's slot).
Two things must reach the very node that owns a game's slot, on one connection
of their own: sharded pub/sub (``SSUBSCRIBE``) and a move acknowledged only once
a replica has it (``EVALSHA`` then ``WAIT`` on the same connection).
:class:`RedisNodes` hands out a plain client per primary for those; on a
standalone server that is the one client itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.utils
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff, NoBackoff
from redis.crc import key_slot
from redis.exceptions import NoScriptError, RedisClusterException, RedisError, ResponseError

from server import metrics

#: The name of the one node of a standalone Redis.
STANDALONE = "redis"
#: Connections per process (per node on a cluster) shared by all requests.
MAX_CONNECTIONS = 64
#: Seconds a request waits for a free connection, or for a node to answer a connect.
CONNECT_TIMEOUT = 5
#: Seconds a connection may sit idle before its next command is preceded by a PING
#: (redis-py's health check).  Not on pub/sub connections: see :meth:`RedisNodes.subscriber`.
HEALTH_CHECK_INTERVAL: float = 10
#: Times a command on the standalone pool is sent again after its connection failed (each
#: after a reconnection, 10-100 ms apart): enough for the connections a restart closed,
#: short enough that an outage is answered ``store_unavailable`` within a second.
RECONNECT_RETRIES = 3
#: Seconds a starting worker waits for Redis to answer (a restart or failover under way):
#: a worker that fails to start makes uvicorn stop the whole server, so a worker replaced
#: while Redis was down took every other worker with it.
START_WAIT = 60.0

log = logging.getLogger(__name__)

T = TypeVar("T")

# redis-py 8 reads its own version for every connection it makes (for CLIENT SETINFO), by
# parsing the installed package's METADATA file: about 6 ms of CPU a connection, paid again
# at each reconnection and by each node's pool of a cluster.  The version cannot change
# while the process runs.
redis.utils.get_lib_version = functools.cache(redis.utils.get_lib_version)  # type: ignore[method-assign]


async def wait_for_redis(client: Any, seconds: float = START_WAIT) -> None:
    """Return once ``client`` answers a PING; retry every 0.1-2 s meanwhile, and raise the
    last error after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    delay = 0.1
    while True:
        try:
            await client.ping()
            return
        except (RedisError, RedisClusterException, OSError) as error:
            if loop.time() + delay > deadline:
                raise
            if delay == 0.1:
                log.warning("redis not answering at start (%s): waiting %.0f s", error, seconds)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


def connect(url: str, cluster: bool) -> Any:
    """A client of the Redis at ``url``; ``cluster``: ``url`` names one node of a cluster.
    The standalone client times its commands for ``/metrics``; the cluster one does not."""
    if cluster:
        return RedisCluster.from_url(
            url,
            socket_connect_timeout=CONNECT_TIMEOUT,
            health_check_interval=HEALTH_CHECK_INTERVAL,
        )
    # A blocking pool waits for a free connection where the default one fails
    # ("Too many connections") under a few hundred busy clients.  Its connections retry
    # a command once reconnected (a pool made apart from its client gets no retry from
    # redis-py): after a Redis restart each connection it closed would fail its next
    # command, a 503 with Redis back (the soak found it).
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=CONNECT_TIMEOUT,
        health_check_interval=HEALTH_CHECK_INTERVAL,
        retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.1), RECONNECT_RETRIES),
    )
    return metrics.MeasuredRedis.from_pool(pool)  # owns the pool: aclose() closes it


class RedisNodes:
    """Plain clients of the primaries of ``client`` (just ``client`` when not a cluster)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.cluster = isinstance(client, RedisCluster)
        self._clients: dict[str, Any] = {}
        self._subscribers: dict[str, Any] = {}

    async def ready(self) -> None:
        """Learn the cluster's layout if the client has not yet (at its first command):
        :meth:`owner` reads it."""
        if self.cluster:
            await self.client.initialize()  # once; a flag check after that

    def owner(self, key: str) -> str:
        """The name of the primary owning ``key``'s slot, as this process last learnt the
        cluster's layout (:meth:`refresh` updates it)."""
        if not self.cluster:
            return STANDALONE
        return str(self.client.nodes_manager.get_node_from_slot(key_slot(key.encode())).name)

    def node_client(self, name: str) -> Any:
        """A plain client of the primary ``name``."""
        if not self.cluster:
            return self.client
        client = self._clients.get(name)
        if client is None:
            host, port = name.rsplit(":", 1)
            options = self.client.get_connection_kwargs()
            client = Redis(
                host=host,
                port=int(port),
                username=options.get("username"),
                password=options.get("password"),
                socket_connect_timeout=CONNECT_TIMEOUT,
                max_connections=MAX_CONNECTIONS,
            )
            self._clients[name] = client
        return client

    def subscriber(self, name: str) -> Any:
        """A client of the primary ``name`` for pub/sub, which never reconnects by
        itself: redis-py would resubscribe silently, and the patches published while
        it was away would be lost without anyone resyncing.  Without redis-py's health
        check, which reads a PING's answer from whichever task sends a command, while
        the hub's listener reads the same connection (``server.hub`` checks it)."""
        client = self._subscribers.get(name)
        if client is None:
            pool = self.node_client(name).connection_pool
            options = {
                **pool.connection_kwargs,
                "retry": Retry(NoBackoff(), 0),
                "health_check_interval": 0,
            }
            client = Redis(
                connection_pool=ConnectionPool(connection_class=pool.connection_class, **options)
            )
            self._subscribers[name] = client
        return client

    async def run_script(
        self, key: str, script: str | None, attempt: Callable[[], Awaitable[T]]
    ) -> T:
        """``attempt()``, which sends the ``EVALSHA`` of ``script`` (or another command
        when None) to the primary owning ``key``; again after loading ``script`` there if
        Redis lost it (a restart), or after learning the layout anew if the slot moved
        (failover, resharding)."""
        for _attempt in range(3):
            try:
                return await attempt()
            except NoScriptError:
                if script is None:
                    raise
                await self.node_client(self.owner(key)).script_load(script)
            except ResponseError as error:
                if not str(error).startswith(("MOVED", "TRYAGAIN")):
                    raise
                await self.refresh()
        raise ResponseError(f"the slot of {key} kept moving")

    async def refresh(self) -> None:
        """Learn the cluster's layout anew if it changed (a failover, a slot migration).
        Only then: redis-py's ``initialize`` marks every pooled connection of every node
        for reconnection, moved or not, and the hub checks the layout every few seconds
        and at each channel a failover drops, so the next commands each paid a
        reconnection (the soak's first subscribes after a promotion: 4-6x a fresh
        server's)."""
        if self.cluster and await self._layout_changed():
            await self.client.nodes_manager.initialize()

    async def _layout_changed(self) -> bool:
        """Whether ``CLUSTER SLOTS`` (one command, on a pooled connection of some node)
        names another primary than the one this process knows for some slot range."""
        manager = self.client.nodes_manager
        ranges = await self.client.execute_command(
            "CLUSTER SLOTS", target_nodes=RedisCluster.RANDOM
        )  # redis-py's reply: {(start, end): {"primary": (host, port), ...}}
        for (start, end), nodes in ranges.items():
            host, port = nodes["primary"]
            if not host:
                return True  # a node that does not know its address: learn it all anew
            name = "{}:{}".format(*manager.remap_host_port(host, int(port)))
            for slot in (int(start), int(end)):
                known = manager.slots_cache.get(slot)
                if not known or known[0].name != name:
                    return True
        return False

    async def aclose(self) -> None:
        clients = [*self._clients.values(), *self._subscribers.values()]
        self._clients, self._subscribers = {}, {}
        for client in clients:
            await client.aclose()


async def end_task(task: asyncio.Task[Any] | None, seconds: float) -> None:
    """Wait up to ``seconds`` for ``task``, told to stop, to end by itself (not cancelled in
    the middle of a Redis command), then cancel it."""
    if task is None:
        return
    try:
        await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def stop_task(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for it to end.  redis-py can swallow a cancellation
    that lands while it connects, so cancel again until it has ended."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.1)
