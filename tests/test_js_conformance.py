"""The JavaScript reference (protocol/js/rng.mjs) must reproduce protocol/vectors.json.

Runs Node's built-in test runner. This test fails, rather than skips, when ``node`` is not
installed: the JavaScript reference is part of the protocol contract.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "protocol" / "js"


def test_js_reference_matches_vectors() -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH; install Node.js (.ci/run does) to run this test"
    # Test files are passed explicitly: `node --test DIR` walks DIR only on Node <= 20.
    test_files = sorted(str(p) for p in JS_DIR.glob("test-*.mjs"))
    assert test_files, f"no test-*.mjs files in {JS_DIR}"
    proc = subprocess.run(
        [node, "--test", "--test-reporter=tap", *test_files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout}\n{proc.stderr}"
    assert "# fail 0" in proc.stdout, proc.stdout
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.MULTILINE)
    assert passed is not None and int(passed.group(1)) > 0, proc.stdout
