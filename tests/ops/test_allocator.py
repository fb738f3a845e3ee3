"""``--allocator``: the server's Python processes run on jemalloc (which gives freed memory
back to the OS) when the system has it, the embedded Valkey on its own allocator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ops_support import started, valkey_pid

from server import allocator

# CI installs libjemalloc2 (.ci/run): without it these tests fail rather than skip.
JEMALLOC_MISSING = "libjemalloc2 is not installed (.ci/run installs it)"


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def on_jemalloc(pid: int) -> bool:
    return allocator.JEMALLOC in Path(f"/proc/{pid}/maps").read_text()


async def test_by_default_the_workers_run_on_jemalloc_and_valkey_on_its_own(
    tmp_path: Path,
) -> None:
    assert allocator.jemalloc_installed(), JEMALLOC_MISSING
    async with started("--data-dir", str(tmp_path), "--workers", "2") as server:
        assert server.process is not None
        valkey = valkey_pid(server)
        pythons = [pid for pid in children(server.process.pid) if pid != valkey]
        assert len(pythons) >= 2  # the workers (and the supervisor's resource tracker)
        assert on_jemalloc(server.process.pid)
        assert all(on_jemalloc(pid) for pid in pythons)
        assert not on_jemalloc(valkey)
        started_lines = [r for r in server.records() if r.get("message", "").startswith("memory")]
        assert [r["message"] for r in started_lines] == ["memory allocator: jemalloc"]


async def test_allocator_pymalloc_keeps_cpythons_own(tmp_path: Path) -> None:
    async with started("--data-dir", str(tmp_path), "--allocator", "pymalloc") as server:
        assert server.process is not None
        assert not on_jemalloc(server.process.pid)
        assert "memory allocator: pymalloc" in server.output


def test_memory_freed_on_jemalloc_goes_back_to_the_os() -> None:
    """What the server's configuration does for a burst: two million small objects made
    and freed, then a second and a half idle (the background thread purges)."""
    assert allocator.jemalloc_installed(), JEMALLOC_MISSING
    script = """
import gc, time
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
before = rss()
burst = [(i, str(i)) for i in range(2_000_000)]
peak = rss()
del burst
gc.collect()
time.sleep(1.5)
print(before, peak, rss())
"""
    environment = allocator.environment_for_jemalloc(os.environ)
    output = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=60
    )
    before, peak, after = map(int, output.stdout.split())
    assert peak - before > 100 * 2**20, output
    assert after - before < 0.15 * (peak - before), (before, peak, after)


def test_the_environments_add_and_take_away_only_jemalloc() -> None:
    operator = {"LD_PRELOAD": "libother.so", "PATH": "/bin"}
    environment = allocator.environment_for_jemalloc(operator)
    assert environment["LD_PRELOAD"] == f"{allocator.JEMALLOC} libother.so"
    assert environment["PYTHONMALLOC"] == "malloc"
    assert environment["MALLOC_CONF"] == allocator.MALLOC_CONF
    assert allocator.environment_without_jemalloc(environment) == operator
    tuned = allocator.environment_for_jemalloc({"MALLOC_CONF": "narenas:2"})
    assert tuned["MALLOC_CONF"] == "narenas:2"  # the operator's settings win
    assert allocator.environment_without_jemalloc(tuned) == {"MALLOC_CONF": "narenas:2"}


def test_allocator_jemalloc_without_the_library_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert allocator.wanted("pymalloc") == "pymalloc"
    monkeypatch.setattr(allocator, "jemalloc_installed", lambda: False)
    assert allocator.wanted("auto") == "pymalloc"
    with pytest.raises(RuntimeError, match="libjemalloc2"):
        allocator.wanted("jemalloc")
