"""``python -m server`` with two worker processes: the flags reach every worker, and the
buckets in Redis are shared by them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import httpx
from limits_support import assert_rate_limited
from log_check import watch

from server.testing import TEST_SECRET, free_port

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0


async def test_two_workers_share_the_account_limit(redis_url: str, tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "server.log"
    log = log_path.open("wb")
    environment = {k: v for k, v in os.environ.items() if k not in ("RATE_LIMITS", "REDIS_URL")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--port",
        str(port),
        "--redis-url",
        redis_url,
        "--secret",
        TEST_SECRET,
        "--workers",
        "2",
        "--players-per-hour",
        "4",
        "--log-level",
        "warning",
        cwd=ROOT,
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log,
        stderr=asyncio.subprocess.STDOUT,
    )
    log.close()  # the child has its own copy
    watch(log_path.read_text)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            async with asyncio.timeout(START_TIMEOUT):
                while True:
                    with contextlib.suppress(httpx.TransportError):
                        if (await http.get("/healthz")).status_code == 200:
                            break
                    assert process.returncode is None, "python -m server exited"
                    await asyncio.sleep(0.1)
            # New connections each time, so both workers answer some of them.
            for _ in range(4):
                async with httpx.AsyncClient(base_url=http.base_url, timeout=5) as fresh:
                    assert (await fresh.post("/v1/players")).status_code == 201
            for _ in range(3):
                async with httpx.AsyncClient(base_url=http.base_url, timeout=5) as fresh:
                    assert_rate_limited(await fresh.post("/v1/players"), "players")
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 15)
