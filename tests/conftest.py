"""Fixtures shared by the whole suite: a real Redis for the tests that need one.

The tests never use a mock or an in-process stand-in for Redis.  A session-scoped
``redis-server`` is started on a free loopback port (unless ``REDIS_URL`` names one to
use instead); a missing ``redis-server`` is a test failure, not a skip.  ``redis_url``
hands a test the URL of a freshly flushed database.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

#: Bound on every wait for a redis-server to start or stop, in seconds.
REDIS_START_TIMEOUT = 10.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisProcess:
    """A ``redis-server`` child process on a loopback port, started and stopped on demand.

    ``data_dir`` turns the append-only file on (so data survives a restart on the same
    directory); without it nothing is persisted.
    """

    def __init__(self, port: int | None = None, data_dir: Path | None = None) -> None:
        self.port = port or free_port()
        self.data_dir = data_dir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail(
                "redis-server is not on PATH: the server tests need a real Redis "
                "(install the redis-server package; .ci/run does)"
            )
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--daemonize", "no"]
        if self.data_dir is None:
            args += ["--appendonly", "no"]
        else:
            args += ["--appendonly", "yes", "--dir", str(self.data_dir)]
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        deadline = time.monotonic() + REDIS_START_TIMEOUT
        try:
            while True:
                if self.process.poll() is not None:
                    output = self.process.stdout.read().decode(errors="replace")  # type: ignore[union-attr]
                    pytest.fail(
                        f"redis-server exited at start ({self.process.returncode}):\n{output}"
                    )
                try:
                    if client.ping():
                        return
                except redis.exceptions.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"redis-server did not answer PING within {REDIS_START_TIMEOUT}s")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(REDIS_START_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(REDIS_START_TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """The URL of the session's Redis: ``REDIS_URL`` if set, else our own redis-server."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    server = RedisProcess()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server_url: str) -> Iterator[str]:
    """The session Redis, its database flushed before (and after) the test."""
    client = redis.Redis.from_url(redis_server_url, socket_timeout=5)
    try:
        client.flushdb()
        yield redis_server_url
        client.flushdb()
    finally:
        client.close()


@pytest.fixture
def make_redis() -> Iterator[Callable[..., RedisProcess]]:
    """``make_redis(data_dir=None)``: a private, started redis-server (stopped at the end)
    for a test that must stop or restart its Redis."""
    made: list[RedisProcess] = []

    def make(data_dir: Path | None = None) -> RedisProcess:
        server = RedisProcess(data_dir=data_dir)
        made.append(server)
        server.start()
        return server

    yield make
    for server in made:
        server.stop()
