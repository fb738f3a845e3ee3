"""A real server on loopback, for the session recorder and the client tests:
a ``redis-server`` child process and the app served by uvicorn as an asyncio task."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator

import redis
import uvicorn

from server.app import create_app
from server.config import Settings

#: Bound on every start-up or shut-down wait, in seconds.
START_TIMEOUT = 10.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A throw-away ``redis-server`` (nothing persisted) on a free loopback port: its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not on PATH")
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    args += ["--appendonly", "no", "--daemonize", "no"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start ({process.returncode})")
            with contextlib.suppress(redis.exceptions.ConnectionError):
                if client.ping():
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not answer PING")
            time.sleep(0.02)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        try:
            process.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(START_TIMEOUT)


@contextlib.asynccontextmanager
async def serve(redis_url: str, secret: str = "s") -> AsyncIterator[str]:
    """``create_app`` on a free loopback port while the block runs: its base URL."""
    app = create_app(Settings(redis_url=redis_url, secret=secret))
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        ws="websockets-sansio",
        ws_max_size=2**20,
        lifespan="on",
        log_level="warning",
        log_config=None,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(), name=f"uvicorn:{port}")
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("uvicorn stopped during start-up")
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, START_TIMEOUT * 2)
