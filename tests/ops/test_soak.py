"""The soak test's short form (``python -m benchmarks.soak --short``): two short rounds of
human-paced play on standalone Redis and a Redis Cluster, 16 simulated days apart (the
players' tokens renewed by the SDK on the calendar, a day closed and new dailies chosen,
Redis aged with the calendar), an idle spell longer than the in-process servers' Redis
health check and WebSocket ping (both shortened to 1 s), Redis restarted and a replica
promoted; every check of the soak holds, and every family of keys is bounded.  The
worker SIGKILL is the long form's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import redis

from benchmarks.soak import CALENDAR_TTL_MS, ChildServer, age_redis
from server.__main__ import WORKER_HEALTHCHECK_TIMEOUT
from server.testing import RedisProcess

ROOT = Path(__file__).resolve().parents[2]


def test_soak_short_form_passes_every_check(tmp_path: Path) -> None:
    result_file = tmp_path / "soak.json"
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", "--short", "--json", str(result_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "soak: all checks passed" in run.stdout
    result = json.loads(result_file.read_text())
    assert result["moves"] > 0 and result["games_ranked"] > 0
    assert result["simulated_days"] >= 30
    assert result["tokens_renewed"] > 0
    assert set(result["faults"]) == {"restart-redis", "promote-replica"}
    assert result["unhandled_exceptions"] == 0 and result["tracebacks_logged"] == 0
    assert result["first_subscribe_ms"]["standalone"]["idle"]
    for checked in result["checks"].values():
        assert checked["acked_moves_lost"] == 0
        assert checked["ended_games_audited"] > 0
        assert checked["spectated_games"] > 0 and not checked["spectator_copies_wrong"]
    # Every family of keys is bounded: a TTL on each key, or one key (the review queue), or
    # the archive of each day's choices, kept by design (``protocol/REDIS.md``).
    archive = set(result["archive_families"])
    assert archive == {"daily-choice:{}"}
    for census in result["key_census"].values():
        for family, (count, untimed) in census.items():
            assert untimed == 0 or count == 1 or family in archive, (family, count)
    assert result["redis_restart_ready_s"]["max"] is not None


def test_a_redis_process_that_logs_a_lot_keeps_answering() -> None:
    """A soak's cluster nodes log every failover to a pipe that nobody read: past 64 KiB
    Redis blocks on its next log line and stops answering (the pipe filled by about 160
    connections logged at ``verbose``; a node of the long soak held 7 KiB after 7
    promotions).  ``RedisProcess`` reads its log once started."""
    process = RedisProcess()
    process.start()
    try:
        admin = redis.Redis(port=process.port, socket_timeout=2)
        admin.config_set("loglevel", "verbose")
        for _ in range(400):  # two log lines each, about 400 bytes
            client = redis.Redis(port=process.port, socket_timeout=2)
            assert client.ping()
            client.close()
        assert admin.ping()
        admin.close()
    finally:
        process.stop()


def test_redis_ageing_follows_the_calendar_to_the_end_of_a_ttl() -> None:
    """A key whose TTL a jump leaves below the calendar threshold (hours) is gone at the
    next jump of days, unless the server renewed it; locks and other short keys keep the
    wall clock.  (Before, such keys kept their hours of wall time: weeks of the soak's
    calendar, and the long soak's key families grew.)"""
    day = 86_400_000
    process = RedisProcess()
    process.start()
    client = redis.Redis(port=process.port, socket_timeout=5)
    try:
        client.set("game:{ending}", "x", px=day + CALENDAR_TTL_MS // 2)
        client.set("game:{renewed}", "x", px=day + CALENDAR_TTL_MS // 2)
        client.set("game:{long}", "x", px=30 * day)
        client.set("lock:{short}", "x", px=60_000)
        dwindling: set[bytes] = set()
        assert age_redis([process.port], day, dwindling) == 0
        assert dwindling == {b"game:{ending}", b"game:{renewed}"}
        assert 0 < client.pttl("game:{ending}") <= CALENDAR_TTL_MS // 2
        client.pexpire("game:{renewed}", 30 * day)  # the server touched it
        assert age_redis([process.port], day, dwindling) == 1
        time.sleep(0.01)  # its TTL set to 1 ms
        assert client.exists("game:{ending}") == 0
        assert client.pttl("game:{renewed}") > 28 * day
        assert 27 * day < client.pttl("game:{long}") <= 28 * day
        assert 0 < client.pttl("lock:{short}") <= 60_000
        assert dwindling == set()
    finally:
        client.close()
        process.stop()


def test_the_worker_kill_fault_kills_a_worker_and_the_supervisor_replaces_it(
    tmp_path: Path,
) -> None:
    """The soak's ``kill-worker`` fault: ``ChildServer.workers`` names the uvicorn workers
    only (before, its first pid was multiprocessing's resource tracker, so the fault killed
    the tracker once and its zombie ever after, and no worker was ever killed)."""
    store = RedisProcess()
    store.start()
    child = ChildServer(f"redis://127.0.0.1:{store.port}/0", tmp_path / "child.log")
    try:
        child.start()
        workers = child.workers()
        assert len(workers) == 2
        for pid in workers:
            assert b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
        os.kill(workers[0], signal.SIGKILL)
        # A worker killed while the supervisor's health check waits for its answer is seen
        # dead only when the check times out (uvicorn keeps the pipe's other end open):
        # allow one whole check, as tests/server/test_processes.py does.
        deadline = time.monotonic() + WORKER_HEALTHCHECK_TIMEOUT + 15
        while time.monotonic() < deadline:
            now = child.workers()
            if len(now) == 2 and workers[0] not in now:
                break
            time.sleep(0.1)
        assert workers[0] not in now and workers[1] in now and len(now) == 2, (workers, now)
        assert httpx.get(f"{child.base}/readyz", timeout=5).status_code == 200
    finally:
        child.stop()
        store.stop()
    assert child.tracebacks() == 0
