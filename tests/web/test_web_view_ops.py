"""The web client's ``static/view.mjs`` replays the protocol's playouts (``node --test``).

Fails, rather than skips, when ``node`` is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_client_view_ops_match_protocol_vectors() -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH; install Node.js (.ci/run does)"
    proc = subprocess.run(
        [node, "--test", "--test-reporter=tap", "tests/web/view_vectors.test.mjs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout}\n{proc.stderr}"
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.MULTILINE)
    assert passed is not None and int(passed.group(1)) == 3, proc.stdout
    assert "# fail 0" in proc.stdout, proc.stdout
