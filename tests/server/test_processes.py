"""``python -m server`` as real processes: two instances on one Redis, and the run
command with no Redis at all."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time

import httpx
from server_support import SECRET, Api, WSClient, apply_patch
from websockets.asyncio.client import connect

from benchmarks.soak import ChildServer
from server.__main__ import WORKER_HEALTHCHECK_TIMEOUT
from server.rules import new_game
from server.testing import RedisProcess


async def open_socket(url: str) -> WSClient:
    return WSClient(await asyncio.wait_for(connect(url, max_size=None), 5))


async def test_two_instances_share_patches(
    redis_url: str, redis_cluster: bool, spawn_server
) -> None:
    args = ["--redis-url", redis_url, "--secret", SECRET, "--log-level", "warning"]
    if redis_cluster:
        args.append("--redis-cluster")
    first = await spawn_server(*args)
    second = await spawn_server(*args)
    async with (
        httpx.AsyncClient(base_url=first.base_url, timeout=10) as http_a,
        httpx.AsyncClient(base_url=second.base_url, timeout=10) as http_b,
    ):
        api_a, api_b = Api(http_a), Api(http_b)
        owner = await api_a.player()
        created = await api_a.create_game(owner, "empress_of_italy", "two-instances")
        game_id = created["id"]
        # A token from instance A works on B (shared secret), the game is on both.
        assert (await api_b.get(game_id, owner))["legal_moves"] == created["legal_moves"]

        spectator = await open_socket(second.ws_url)
        mover = await open_socket(first.ws_url)
        try:
            assert (await spectator.subscribe(game_id))["role"] == "spectator"
            view = (await spectator.recv("snapshot"))["snapshot"]["view"]
            await mover.auth(owner)

            engine = new_game("empress_of_italy", "two-instances")
            rng = random.Random(20)
            version = 0
            for index in range(20):
                move = rng.choice(engine.legal_moves())
                reply = await mover.move(game_id, move, version, f"a{index}")
                assert reply["type"] == "accepted", reply
                engine.play(move)
                version = reply["version"]
            assert version == 20

            for expected in range(20):
                patch = await spectator.recv("patch")
                assert patch["v"] == expected + 1
                view = apply_patch(view, patch)
            assert view == engine.view()
            assert await spectator.ping() == []
            assert (await api_b.get(game_id))["view"] == engine.view()

            # And back: moves made on B reach a watcher on A.
            watcher = await open_socket(first.ws_url)
            await watcher.subscribe(game_id, 20)
            reply = await api_b.move(owner, game_id, engine.legal_moves()[0], 20)
            assert reply["snapshot"]["version"] == 21
            patch = await watcher.recv("patch")
            assert patch["v"] == 21
            assert (await spectator.recv("patch"))["v"] == 21
            await watcher.close()
        finally:
            await spectator.close()
            await mover.close()


async def test_run_command_without_redis(spawn_server, tmp_path) -> None:
    # No --redis-url and no REDIS_URL in its environment: the embedded Valkey.
    process = await spawn_server("--data-dir", str(tmp_path), "--log-format", "text")
    await process.wait_for_line("embedded Valkey")
    assert (tmp_path / "appendonlydir").is_dir()
    async with httpx.AsyncClient(base_url=process.base_url, timeout=10) as http:
        api = Api(http)
        owner = await api.player()
        created = await api.create_game(owner, "balcony", "embedded")
        move = created["legal_moves"][0]
        reply = await api.move(owner, created["id"], move, 0)
        engine = new_game("balcony", "embedded")
        engine.play(move)
        assert reply["snapshot"]["view"] == engine.view()
        assert reply["snapshot"]["version"] == 1
        assert (await http.get("/readyz")).status_code == 200

        ws = await open_socket(process.ws_url)
        try:
            await ws.subscribe(created["id"])
            assert (await ws.recv("snapshot"))["snapshot"]["version"] == 1
            reply = await api.move(owner, created["id"], "resign", 1)
            assert (await ws.recv("patch"))["v"] == 2
        finally:
            await ws.close()


def test_a_worker_replaced_while_redis_is_down_waits_for_it(tmp_path) -> None:
    """A worker dies while Redis restarts: its replacement waits for Redis at start instead
    of failing, and the server goes on (before: uvicorn stopped the whole server when the
    replacement failed to start, "Child process [...] failed to start")."""
    store = RedisProcess()
    store.start()
    child = ChildServer(f"redis://127.0.0.1:{store.port}/0", tmp_path / "child.log")
    try:
        child.start()
        [killed, kept] = child.workers()
        store.stop()
        os.kill(killed, signal.SIGKILL)
        # Redis stays down until the replacement has started and found it down (a fixed
        # sleep raced the replacement's start on a loaded machine).  A worker killed while
        # the supervisor's health check waits for its answer is replaced only when that
        # check times out (the supervisor keeps the pipe's other end open: no EOF), so allow
        # for a whole check.
        deadline = time.monotonic() + WORKER_HEALTHCHECK_TIMEOUT + 15
        while "redis not answering at start" not in child.log_path.read_text():
            assert time.monotonic() < deadline, child.log_path.read_text()[-3000:]
            time.sleep(0.1)
        store.start()
        deadline = time.monotonic() + 30
        workers: list[int] = []
        while time.monotonic() < deadline:
            workers = child.workers()
            if len(workers) == 2 and killed not in workers:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{child.base}/readyz", timeout=2).status_code == 200:
                        break
            time.sleep(0.2)
        assert child.process is not None and child.process.poll() is None
        assert kept in workers and killed not in workers and len(workers) == 2, workers
    finally:
        child.stop()
        store.stop()
    log = child.log_path.read_text()
    assert "failed to start" not in log and "Traceback" not in log
    assert "redis not answering at start" in log
