"""The memory allocator of the server's processes: jemalloc when the system has it.

CPython's own allocator (pymalloc) takes memory from the OS in arenas of 1 MiB and gives
an arena back only once every object in it is freed.  After a burst of WebSockets closes,
the few objects that outlive them (pooled Redis connections, free lists, caches) are
spread over most of the arenas the burst filled, so a worker kept most of its peak:
12,000 sockets, 183 of 217 MB kept (``BENCHMARKS.md``, "Connections").  With
``PYTHONMALLOC=malloc`` every object comes from the C allocator, and jemalloc hands back
each run of free pages a second after it was freed, from a background thread: 30 of
226 MB kept, at no measurable cost to the move path.

The allocator must be chosen before the interpreter starts, so ``python -m server``
executes itself again with the variables set (once; the workers, the daily selection's
and the audits' processes inherit them).  ``--allocator auto`` (the default) does so when
``libjemalloc.so.2`` is installed (Debian: ``libjemalloc2``, which ``redis-server``
depends on) and otherwise runs on pymalloc, saying so in the log.
"""

from __future__ import annotations

import ctypes.util
import os
from collections.abc import Mapping
from pathlib import Path

#: The library preloaded for ``jemalloc``.
JEMALLOC = "libjemalloc.so.2"
#: jemalloc's settings unless the operator gives ``MALLOC_CONF``: purge freed pages from
#: a background thread after a second (an idle worker allocates nothing that would
#: trigger a purge), and skip the "muzzy" stage (pages lazily freed, still counted).
MALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0"


def _preloaded(environ: Mapping[str, str]) -> list[str]:
    """The libraries ``LD_PRELOAD`` names (separated by spaces or colons)."""
    return environ.get("LD_PRELOAD", "").replace(":", " ").split()


def jemalloc_installed() -> bool:
    return ctypes.util.find_library("jemalloc") is not None


def in_use(environ: Mapping[str, str] = os.environ) -> str:
    """``jemalloc`` when this process runs on it (preloaded, Python objects included),
    else ``pymalloc``."""
    if environ.get("PYTHONMALLOC") == "malloc" and JEMALLOC in _preloaded(environ):
        maps = Path("/proc/self/maps")
        if not maps.exists() or JEMALLOC in maps.read_text():
            return "jemalloc"
    return "pymalloc"


def wanted(choice: str) -> str:
    """The allocator ``--allocator choice`` asks for on this system; raises
    RuntimeError for ``jemalloc`` without the library."""
    if choice == "pymalloc":
        return "pymalloc"
    if jemalloc_installed():
        return "jemalloc"
    if choice == "jemalloc":
        raise RuntimeError(f"--allocator jemalloc: {JEMALLOC} is not installed (libjemalloc2)")
    return "pymalloc"


def environment_for_jemalloc(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with jemalloc preloaded and serving every Python object."""
    others = [lib for lib in _preloaded(environ) if lib != JEMALLOC]
    return {
        **environ,
        "LD_PRELOAD": " ".join([JEMALLOC, *others]),
        "PYTHONMALLOC": "malloc",
        "MALLOC_CONF": environ.get("MALLOC_CONF") or MALLOC_CONF,
    }


def environment_without_jemalloc(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without what :func:`environment_for_jemalloc` added, for a program that
    brings its own allocator (the embedded Valkey)."""
    environment = {
        name: value
        for name, value in environ.items()
        if name not in ("LD_PRELOAD", "PYTHONMALLOC", "MALLOC_CONF")
    }
    if others := [lib for lib in _preloaded(environ) if lib != JEMALLOC]:
        environment["LD_PRELOAD"] = " ".join(others)
    if environ.get("MALLOC_CONF", MALLOC_CONF) != MALLOC_CONF:
        environment["MALLOC_CONF"] = environ["MALLOC_CONF"]
    return environment
