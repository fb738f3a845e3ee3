"""The TypeScript SDK (clients/ts) reproduces protocol/vectors.json and the recorded sessions.

Runs the SDK's ``node --test`` suite (RNG, deals, views, state hashes, compact patches of every
op, the sessions of protocol/sessions replayed through its GameCopy, typed errors) on its
build, ``clients/ts/dist`` (``scripts/install`` builds it). Fails, rather than skips, when
``node`` or the build is missing: the JavaScript implementation is part of the protocol
contract.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "clients" / "ts"


def test_ts_sdk_matches_vectors_and_sessions() -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH; install Node.js (.ci/run does) to run this test"
    assert (SDK / "dist" / "index.js").is_file(), "clients/ts is not built: run scripts/install"
    # Test files are passed explicitly: `node --test DIR` walks DIR only on Node <= 20.
    test_files = sorted(str(p) for p in (SDK / "test").glob("*.test.mjs"))
    assert len(test_files) >= 5, test_files
    proc = subprocess.run(
        [node, "--test", "--test-reporter=tap", *test_files],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout}\n{proc.stderr}"
    assert "# fail 0" in proc.stdout, proc.stdout
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.MULTILINE)
    assert passed is not None and int(passed.group(1)) >= 100, proc.stdout
