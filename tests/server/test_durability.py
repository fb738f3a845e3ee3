"""``--durability replica``: a move is acknowledged only once a replica holds it, so a
failover loses no acknowledged move (a private Redis Cluster whose primary is killed);
and with no replica to confirm it, the typed ``not_replicated`` error."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from server_support import WAIT, Api, Player, WSClient, apply_patch, run_app, ws_clients

from server.audit import audit_stored
from server.redisconn import RedisNodes, connect
from server.rules import new_game
from server.store import game_key
from server.testing import RedisClusterProcesses, RedisProcess

#: Bound on the whole move stream of the failover test, in seconds.
STREAM_DEADLINE = 60.0
#: Moves acknowledged before the primary is killed, and in all.
BEFORE_KILL, TOTAL = 6, 24


def fresh_cluster() -> RedisClusterProcesses:
    cluster = RedisClusterProcesses()
    try:
        cluster.start()
    except RuntimeError as error:
        pytest.fail(str(error))
    return cluster


def rejoin(cluster: RedisClusterProcesses, killed: RedisProcess) -> None:
    """Once a replica has taken over from ``killed``, start it again: it rejoins as that
    replica's replica, so moves can be confirmed again."""
    cluster.wait_until_ready(STREAM_DEADLINE)  # three primaries again: the failover is done
    killed.start()
    cluster.wait_until_ready(STREAM_DEADLINE)


async def watch(spectator: WSClient, last: int) -> dict[str, Any]:
    """The spectator's view once it reaches version ``last``, from the snapshot it got
    and the patches and snapshots that follow, each patch starting where it stands."""
    snapshot = (await spectator.recv("snapshot", timeout=STREAM_DEADLINE))["snapshot"]
    view, version = snapshot["view"], snapshot["version"]
    while version < last:
        message = await spectator.recv(timeout=STREAM_DEADLINE)
        if message["type"] == "snapshot":
            view, version = message["snapshot"]["view"], message["snapshot"]["version"]
        elif message["type"] == "patch":
            assert message["v"] == version + 1, (message["v"], version)
            view, version = apply_patch(view, message), message["v"]
    return view


async def post_until_acknowledged(
    http: httpx.AsyncClient, player: Player, game_id: str, move: str, version: int, move_id: str
) -> tuple[dict[str, Any], list[str]]:
    """Send the move until the server acknowledges it, always with the same move id
    (what a client does): the reply, and the error codes seen before it."""
    errors: list[str] = []
    deadline = time.monotonic() + STREAM_DEADLINE
    while time.monotonic() < deadline:
        try:
            response = await http.post(
                f"/v1/games/{game_id}/moves",
                json={"move": move, "version": version, "move_id": move_id},
                headers=player.headers,
            )
        except httpx.TransportError as error:
            errors.append(type(error).__name__)
        else:
            if response.status_code == 200:
                return response.json(), errors
            errors.append(response.json()["error"]["code"])
            assert response.status_code == 503, response.text
        await asyncio.sleep(0.1)
    raise AssertionError(f"move {move_id} never acknowledged; errors: {errors[-5:]}")


async def test_killing_the_primary_loses_no_acknowledged_move() -> None:
    cluster = fresh_cluster()
    try:
        async with (
            run_app(cluster.url, redis_cluster=True, durability="replica") as running,
            httpx.AsyncClient(base_url=running.base_url, timeout=WAIT * 2) as http,
            ws_clients(running.ws_url) as open_socket,
        ):
            api = Api(http)
            player = await api.player()
            game_id = (await api.create_game(player, "colorado", "failover"))["id"]
            local = new_game("colorado", "failover")
            # The primary owning the game's slot, as a fresh client sees the cluster.
            probe = connect(cluster.url, cluster=True)
            await probe.initialize()
            owner = RedisNodes(probe).owner(game_key(game_id))
            await probe.aclose()
            primary = cluster.node(int(owner.rsplit(":", 1)[1]))
            # A spectator, whose patches come over the shard channel of the killed primary.
            spectator = await open_socket()
            await spectator.subscribe(game_id)
            watched = asyncio.create_task(watch(spectator, TOTAL))

            acknowledged: list[tuple[int, str]] = []
            errors_after_kill: list[str] = []
            rejoined: asyncio.Task[None] | None = None
            for index in range(TOTAL):
                if index == BEFORE_KILL:
                    primary.kill()  # SIGKILL: what it had not sent its replica is gone
                    rejoined = asyncio.create_task(asyncio.to_thread(rejoin, cluster, primary))
                move = str(local.legal_moves()[0])
                reply, errors = await post_until_acknowledged(
                    http, player, game_id, move, index, f"m{index}"
                )
                errors_after_kill += errors
                assert reply["applied_version"] == index + 1
                local.play(local.legal_moves()[0])
                acknowledged.append((index + 1, move))
            assert rejoined is not None
            await asyncio.wait_for(rejoined, STREAM_DEADLINE)

            assert errors_after_kill, "the kill went unnoticed"
            # The spectator was moved to the new primary's shard and resynced: it holds the
            # game as it is, having seen no patch out of order.
            view = await asyncio.wait_for(watched, STREAM_DEADLINE)
            assert view == (await api.get(game_id))["view"]
            log = await api.log(game_id)
            assert [(m["version"], m["move"]) for m in log["moves"]] == acknowledged
            verdict = await audit_stored(running.app.state.service, game_id)
            assert verdict.integrity == "pass", verdict.to_dict()
    finally:
        cluster.stop()


async def test_a_move_no_replica_confirms_is_refused_typed_then_a_duplicate(
    make_redis: Any,
) -> None:
    """A standalone Redis with no replica: WAIT never sees one, so the move (stored on
    the primary) is answered ``not_replicated``; resent with the same move id it is the
    same error, never applied twice."""
    redis = make_redis()
    async with (
        run_app(redis.url, durability="replica") as running,
        httpx.AsyncClient(base_url=running.base_url, timeout=WAIT * 2) as http,
    ):
        api = Api(http)
        player = await api.player()
        game_id = (await api.create_game(player, "balcony", "lonely"))["id"]
        for _ in range(2):
            response = await http.post(
                f"/v1/games/{game_id}/moves",
                json={"move": "deal", "version": 0, "move_id": "only"},
                headers=player.headers,
            )
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert (error["code"], error["version"]) == ("not_replicated", 1)
        assert [m["version"] for m in (await api.log(game_id))["moves"]] == [1]
