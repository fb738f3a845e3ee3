"""The soak test's short form (``python -m benchmarks.soak --short``): about a minute of
human-paced play on standalone Redis and a Redis Cluster over two simulated weeks, with a
worker SIGKILLed, Redis restarted and a replica promoted; every check of the soak holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert result["simulated_days"] >= 14
    assert set(result["faults"]) == {"restart-redis", "kill-worker", "promote-replica"}
    assert result["unhandled_exceptions"] == 0 and result["tracebacks_logged"] == 0
    for checked in result["checks"].values():
        assert checked["acked_moves_lost"] == 0
        assert checked["ended_games_audited"] > 0
