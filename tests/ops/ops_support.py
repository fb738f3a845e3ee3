"""Helpers for the operations tests: ``python -m server`` as a child process whose output
is kept line by line, stopped by the signal a test chooses, every wait bounded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import httpx
from log_check import watch

from server.config import Settings
from server.testing import TEST_DAILY, free_port

ROOT = Path(__file__).resolve().parents[2]
WAIT = 10.0
#: Variables the server reads: a child gets only the ones a test gives it.
#: The small daily selection budgets of test servers (``server.testing.TEST_DAILY``).
TEST_DAILY_ARGS = [
    "--daily-candidate-nodes",
    str(TEST_DAILY.candidate_nodes),
    "--daily-candidates",
    str(TEST_DAILY.candidates),
    "--daily-selection-seconds",
    str(TEST_DAILY.seconds),
]
SERVER_ENV = (*Settings().to_environment(), "PROMETHEUS_MULTIPROC_DIR")
#: What every test server runs with unless a test says otherwise: no rate limits, and new
#: accounts may play ranked dailies at once.
TEST_SERVER_ENV = {"RATE_LIMITS": "off", "RANKED_MIN_ACCOUNT_AGE": "0"}


class ServerProcess:
    """``python -m server ARGS`` on a free loopback port (or ``port``)."""

    def __init__(self, *args: str, port: int | None = None, env: dict[str, str] | None = None):
        self.port = port or free_port()
        self.args = ["--host", "127.0.0.1", "--port", str(self.port), *TEST_DAILY_ARGS, *args]
        self.env = env or {}
        self.process: asyncio.subprocess.Process | None = None
        self.lines: list[str] = []
        self._reader: asyncio.Task[None] | None = None
        watch(lambda: self.output + "\n")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v2/ws"

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def records(self) -> list[dict[str, Any]]:
        """The JSON log records printed so far (every line must be one)."""
        return self.records_of(self.lines)

    @staticmethod
    def records_of(lines: list[str]) -> list[dict[str, Any]]:
        return [json.loads(line) for line in lines if line.strip()]

    async def start(self) -> ServerProcess:
        env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
        env.update(TEST_SERVER_ENV)
        env.update(self.env)
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            *self.args,
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            # Its own process group, so kill() reaches the workers too: they hold the
            # output pipe, and Python 3.11's Process.wait() waits for every pipe to close.
            start_new_session=True,
        )
        self._reader = asyncio.create_task(self._read())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        async with httpx.AsyncClient(timeout=1) as client:
            while True:
                if self.process.returncode is not None:
                    await asyncio.wait_for(self._reader, WAIT)
                    raise AssertionError(f"python -m server exited: {self.output}")
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{self.base_url}/readyz")).status_code == 200:
                        return self
                if loop.time() > deadline:
                    raise AssertionError(f"python -m server did not start: {self.output}")
                await asyncio.sleep(0.05)

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            self.lines.append(line.decode(errors="replace").rstrip("\n"))

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        """Send ``sig`` and wait for the exit: the exit code."""
        process = self.process
        assert process is not None
        if process.returncode is None:
            process.send_signal(sig)
            try:
                await asyncio.wait_for(process.wait(), timeout)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await asyncio.wait_for(process.wait(), WAIT)
                raise AssertionError(f"no exit {timeout}s after {sig!r}: {self.output}") from None
        if self._reader is not None:
            await asyncio.wait_for(self._reader, WAIT)
        assert process.returncode is not None
        return process.returncode

    async def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await asyncio.wait_for(self.process.wait(), WAIT)
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, WAIT)


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (and is not a zombie)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_gone(pid: int, timeout: float = WAIT) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while alive(pid):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def valkey_pid(server: ServerProcess) -> int:
    """The embedded Valkey's pid, from the server's start-up log line."""
    for record in server.records():
        if "valkey_pid" in record:
            return int(record["valkey_pid"])
    raise AssertionError(f"no embedded Valkey start line: {server.output}")


@contextlib.asynccontextmanager
async def started(*args: str, **options: Any):  # type: ignore[no-untyped-def]
    """A started :class:`ServerProcess`, killed at the end if the test did not stop it."""
    server = ServerProcess(*args, **options)
    try:
        await server.start()
        yield server
    finally:
        await server.kill()
