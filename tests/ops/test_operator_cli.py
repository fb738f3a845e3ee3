"""``python -m server.operator`` on the embedded store of a ``--data-dir`` (issue 25): it
reaches a running server's store, and starts one for the command when none runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import httpx
from ops_support import ROOT, SERVER_ENV, WAIT, started


def operator_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
    return subprocess.run(
        [sys.executable, "-m", "server.operator", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_command_line_reaches_the_embedded_store_of_the_same_data_dir(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = str(tmp_path / "data")
    # No server yet: the command starts the store itself, and the token outlives it.
    early = await asyncio.to_thread(operator_cli, "token", "erin", "--data-dir", data)
    assert early.returncode == 0, early.stderr
    early_token = early.stdout.strip().splitlines()[-1]
    async with started("--data-dir", data) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=WAIT) as client:
            answer = await client.get("/v1/operator/actions", headers=auth(early_token))
            assert answer.status_code == 200, answer.text
            # With the server running, the command uses its store.
            issued = await asyncio.to_thread(operator_cli, "token", "frank", "--data-dir", data)
            assert issued.returncode == 0, issued.stderr
            token = issued.stdout.strip().splitlines()[-1]
            answer = await client.get("/v1/operator/actions", headers=auth(token))
            assert answer.status_code == 200, answer.text
            assert [entry["details"]["operator"] for entry in answer.json()["actions"]] == [
                "frank",
                "erin",
            ]
            revoked = await asyncio.to_thread(operator_cli, "revoke", "erin", "--data-dir", data)
            assert revoked.returncode == 0, revoked.stderr
            answer = await client.get("/v1/operator/actions", headers=auth(early_token))
            assert answer.status_code == 401
        await server.stop()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
