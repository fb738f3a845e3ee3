"""The OpenAPI document is a checked contract: schemathesis runs every check over every
operation of ``/openapi.json`` against a real server (real Redis), and any failure fails
the build.  Bounded: ``MAX_EXAMPLES`` cases per operation and phase, fixed seed."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

import httpx
import pytest

from server.testing import serve

#: Cases per operation and generation phase: with the coverage phase's own, about 3,600 in
#: all over the 43 operations (80 made 5,100, the fuzzing phase taking 100 of 130 s of a
#: loaded run).
MAX_EXAMPLES = 40
SEED = 20261201
#: Bound on the whole run, in seconds (under a minute on two cores, even busy ones).
RUN_TIMEOUT = 420

ROOT = Path(__file__).resolve().parents[2]


#: ``{id}`` of every case is a real game of the token's player, so the game routes and
#: moves reach the rules (not only ``404 unknown_game``).  A move the schema takes may
#: still be illegal in that deal: ``422 illegal_move`` is a documented answer to
#: well-formed data, which no schema can rule out, so positive cases may get it too.
#: The routes that end a token (sign out everywhere, delete the account) get a player of
#: their own each, so the other operations keep a valid token all through the run.
CONFIG = """
headers = {{ Authorization = "Bearer {token}" }}

[parameters]
"path.id" = "{game_id}"

[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]

[[operations]]
include-path = "/v1/players/me/tokens"
include-method = "DELETE"
headers = {{ Authorization = "Bearer {spare_tokens}" }}

[[operations]]
include-path = "/v1/players/me"
include-method = "DELETE"
headers = {{ Authorization = "Bearer {spare_deleted}" }}
"""


# Bounded by RUN_TIMEOUT, not the suite's 120 s per test: 41 operations (the operator
# routes among them) take 150 s on a loaded two-core machine.
@pytest.mark.timeout(RUN_TIMEOUT + 60)
async def test_every_schemathesis_check_passes_on_every_operation(
    redis_url: str, tmp_path: Path
) -> None:
    async with serve(redis_url) as base:
        async with httpx.AsyncClient(base_url=base) as http:
            token, spare_tokens, spare_deleted = [
                (await http.post("/v1/players")).json()["token"] for _ in range(3)
            ]
            game = await http.post(
                "/v1/games",
                json={"game": "colorado", "seed": "contract"},
                headers={"Authorization": f"Bearer {token}"},
            )
        config = tmp_path / "schemathesis.toml"
        config.write_text(
            CONFIG.format(
                game_id=game.json()["id"],
                token=token,
                spare_tokens=spare_tokens,
                spare_deleted=spare_deleted,
            )
        )
        command = [
            sys.executable,
            "-m",
            "schemathesis.cli",
            f"--config-file={config}",
            "run",
            f"{base}/openapi.json",
            "--checks=all",
            f"--max-examples={MAX_EXAMPLES}",
            f"--seed={SEED}",
            "--generation-deterministic",
            "--workers=1",
            "--request-timeout=30",
            "--no-color",
        ]
        environment = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.contract.schemathesis_hooks",
            "PYTHONPATH": str(ROOT),
        }
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=tmp_path,  # schemathesis keeps a crash cache in its working directory
            env=environment,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        elapsed = time.monotonic() - started
    report = output.decode(errors="replace")
    cases = re.search(r"Test cases:\s*\n?\s*(\d+) generated", report)
    print(report)
    print(f"schemathesis: {cases.group(1) if cases else '?'} cases in {elapsed:.1f} s")
    assert process.returncode == 0, report[-20000:]
    assert cases is not None and int(cases.group(1)) >= 1000, report[-5000:]
