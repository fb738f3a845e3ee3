"""A check of the cluster's layout that finds nothing moved leaves the connections alone.

redis-py's ``NodesManager.initialize`` marks every pooled connection of every node for
reconnection, moved or not; the hub checked the layout that way every 5 s while games
were watched, and once per ``SUNSUBSCRIBE`` Redis sends after a failover (one per
channel of a moved slot), so the commands of the next subscribe each paid a reconnection:
the soak's first subscribes after a replica promotion were 4-6x a fresh server's.
``RedisNodes.refresh`` now learns the layout anew only when ``CLUSTER SLOTS`` says it
changed.  (On a standalone Redis there is no layout: nothing to refresh either way.)
"""

from __future__ import annotations

import redis

from server import redisconn
from server.redisconn import RedisNodes

#: Keys spread over the slots of every primary.
KEYS = [f"layout-check:{index}" for index in range(24)]


def connections_received(ports: list[int], counters: dict[int, redis.Redis]) -> int:
    """Connections every node accepted so far (through one client per node, kept)."""
    total = 0
    for port in ports:
        client = counters.setdefault(port, redis.Redis(port=port, socket_timeout=5))
        total += int(client.info("stats")["total_connections_received"])
    return total


async def test_a_layout_check_with_nothing_moved_keeps_every_connection(
    redis_url: str, redis_cluster: bool
) -> None:
    client = redisconn.connect(redis_url, redis_cluster)
    nodes = RedisNodes(client)
    counters: dict[int, redis.Redis] = {}
    try:
        await nodes.ready()
        ports = (
            [node.port for node in client.get_nodes()]
            if redis_cluster
            else [client.connection_pool.connection_kwargs["port"]]
        )
        for key in KEYS:
            await client.set(key, 1)
        before = connections_received(ports, counters)
        for _ in range(3):
            await nodes.refresh()
            for key in KEYS:
                assert await client.get(key) == b"1"
        assert connections_received(ports, counters) == before
        # The layout is still known: every key's owner is a primary that has the key.
        for key in KEYS:
            owner = nodes.owner(key)
            assert await nodes.node_client(owner).exists(key) == 1
    finally:
        for counter in counters.values():
            counter.close()
        await nodes.aclose()
        await client.aclose()
