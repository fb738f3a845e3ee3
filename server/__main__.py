"""``python -m server``: run the game server under uvicorn.

With no Redis URL it first starts the embedded store (:mod:`server.embedded`) and stops
it after the last worker has finished.  Each run gets a fresh directory for the
Prometheus multiprocess files (so ``/metrics`` adds up every worker's counts).
"""

from __future__ import annotations

import contextlib
import logging
import logging.config
import os
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType

import uvicorn

from server import allocator
from server.config import Settings
from server.logs import logging_config
from server.wstransport import protocol_path

#: WebSocket frames above this are refused by the transport (close 1009); the
#: protocol's own, smaller limit answers bigger frames with a typed error.
WS_TRANSPORT_LIMIT = 1024 * 1024
#: Seconds a stopping worker waits for in-flight requests and moves before cancelling them.
GRACEFUL_SHUTDOWN = 10
#: Seconds an idle kept-alive HTTP connection stays open.
KEEP_ALIVE = 5
#: Seconds a worker may take to answer the supervisor's health check before it is killed
#: and replaced (uvicorn's default, 5, killed workers holding thousands of WebSockets on
#: a loaded machine: a full garbage collection over them holds the GIL that long).
WORKER_HEALTHCHECK_TIMEOUT = 30
#: The HTTP protocol: uvicorn's h11 one with a deadline on request heads.
HTTP_PROTOCOL = "server.http:HeaderDeadlineH11Protocol"
METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"
#: Set in the environment of ``python -m server`` executed again on jemalloc: it is not
#: executed a third time if the library could not be preloaded.
REEXECUTED = "SOLITAIRE_ALLOCATOR_REEXECUTED"

log = logging.getLogger("server")


def exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """uvicorn re-raises SIGTERM once it has shut down: exit through ``finally`` blocks
    (so the embedded store is stopped) instead of dying on the default handler."""
    raise SystemExit(0)


@contextlib.contextmanager
def metrics_directory() -> Iterator[None]:
    """``PROMETHEUS_MULTIPROC_DIR`` for this run: the operator's (emptied now) or a
    temporary one (removed at exit)."""
    given = os.environ.get(METRICS_DIR)
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
        yield
        return
    path = Path(tempfile.mkdtemp(prefix="solitaire-metrics-"))
    os.environ[METRICS_DIR] = str(path)
    try:
        yield
    finally:
        shutil.rmtree(path, ignore_errors=True)


def raise_open_file_limit() -> None:
    """Lift the soft limit on open files to the hard one (often 1,024 of 20,000 or more):
    each WebSocket is a file, and the workers inherit the limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def serve(settings: Settings) -> None:
    raise_open_file_limit()
    os.environ.update(settings.to_environment())
    if settings.metrics_port:
        # Imported here: its collectors pick their kind at import, and only now is
        # PROMETHEUS_MULTIPROC_DIR set (a single worker runs in this process).
        from server import metrics

        metrics.serve_listener(settings.host, settings.metrics_port, settings.metrics_token)
    uvicorn.run(
        "server.app:app_from_environment",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_config=logging_config(settings.effective_log_format, settings.log_level),
        log_level=settings.log_level,
        access_log=False,  # server.logs.RequestIds logs each request, with its id
        http=HTTP_PROTOCOL,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        timeout_keep_alive=KEEP_ALIVE,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_TIMEOUT,
        ws_max_size=WS_TRANSPORT_LIMIT,
        ws=protocol_path(settings.ws_compression),
        ws_ping_interval=settings.ws_ping_interval,
        ws_ping_timeout=settings.ws_ping_interval,
        lifespan="on",
    )


def run_on_allocator(choice: str, argv: list[str]) -> None:
    """Execute ``python -m server argv`` again on jemalloc if ``--allocator choice`` asks
    for it and this process does not run on it yet (:mod:`server.allocator`)."""
    try:
        wanted = allocator.wanted(choice)
    except RuntimeError as error:
        sys.exit(f"python -m server: {error}")
    running = allocator.in_use()
    if wanted == "jemalloc" and running != "jemalloc":
        if os.environ.get(REEXECUTED):
            log.warning("could not preload %s: running on pymalloc", allocator.JEMALLOC)
            return
        environment = {**allocator.environment_for_jemalloc(os.environ), REEXECUTED: "1"}
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "server", *argv], environment)
    log.info("memory allocator: %s", running)


def main(argv: list[str] | None = None, reexecute: bool = False) -> None:
    """``python -m server``; with ``reexecute`` (the command itself) it first executes
    itself again on the allocator ``--allocator`` asks for, if it does not run on it."""
    try:
        settings = Settings.from_arguments(argv)
    except ValueError as error:  # a bad value in the environment or a flag
        sys.exit(f"python -m server: {error}")
    logging.config.dictConfig(logging_config(settings.effective_log_format, settings.log_level))
    if reexecute:
        run_on_allocator(settings.allocator, sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    with metrics_directory():
        if settings.redis_url:
            serve(settings)
            return
        from server.embedded import EmbeddedValkey, read_or_create_secret

        data_dir = Path(settings.data_dir)
        valkey = EmbeddedValkey(data_dir)
        try:
            url = valkey.start()
        except (RuntimeError, OSError) as error:  # e.g. a data directory we may not write
            log.error("the embedded store did not start: %s", error)
            sys.exit(1)
        try:
            secret = settings.secret or read_or_create_secret(valkey.data_dir)
            log.info("no REDIS_URL: embedded Valkey, data in %s", valkey.data_dir)
            serve(replace(settings, redis_url=url, secret=secret))
        finally:
            valkey.stop()
            log.info("embedded Valkey stopped")


if __name__ == "__main__":
    main(sys.argv[1:], reexecute=True)
