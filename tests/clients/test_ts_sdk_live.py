"""The TypeScript SDK (clients/ts) against a real server on a real Redis.

``clients/ts/test/live/play.mjs`` plays all five games through the SDK with a reconnect
(while a move is made over REST), a lost reply (the ``accepted`` swallowed and the socket
cut: the SDK re-sends the move with the same id and gets a duplicate), a spectator, and
typed errors, checking each game's copy against the server's snapshot. The package's Node
bot example plays a game to its end. Both run on the SDK's build (``scripts/install``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from sdk_support import server_url_fixture  # noqa: F401

from server.app import create_app
from server.config import Settings
from server.rules import GAME_NAMES
from server.testing import TEST_DAILY, TEST_SECRET, UNLIMITED, free_port, serve_app

SDK = Path(__file__).resolve().parents[2] / "clients" / "ts"
#: Bound on one node run, in seconds.
RUN_TIMEOUT = 90.0


async def start_node(*args: str) -> asyncio.subprocess.Process:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH; install Node.js (.ci/run does)"
    assert (SDK / "dist" / "index.js").is_file(), "clients/ts is not built: run scripts/install"
    # Node 20 has the WebSocket global behind a flag (Node 22 has it by default).
    return await asyncio.create_subprocess_exec(
        node,
        "--experimental-websocket",
        "--no-warnings",
        *args,
        cwd=SDK,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def run_node(*args: str) -> str:
    """stdout of ``node`` run in the SDK's directory (asserting it succeeded)."""
    process = await start_node(*args)
    try:
        out, err = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, f"node {args} failed:\n{out.decode()}\n{err.decode()}"
    return out.decode()


async def test_sdk_plays_every_game_with_reconnect_lost_reply_and_spectator(
    server_url: str,
) -> None:
    out = await run_node("test/live/play.mjs", server_url)
    summary = json.loads(out.strip().splitlines()[-1])
    assert sorted(summary["games"]) == sorted(GAME_NAMES)
    for name, game in summary["games"].items():
        assert game["status"] in ("won", "stuck", "resigned"), name
        assert game["version"] >= 2, name
    # Two reconnects per game: the one asked for and the one after each lost reply.
    assert summary["reconnects"] == 2 * len(GAME_NAMES)
    assert summary["duplicates"] == len(GAME_NAMES)
    assert summary["spectatorChanges"] == sum(g["version"] for g in summary["games"].values())
    assert summary["errors"] == [
        "unknown_game",
        "invalid_seed",
        "illegal_move",
        "stale",
        "not_authenticated",
    ]


async def test_node_bot_example_plays_a_game_to_its_end(server_url: str) -> None:
    out = await run_node("examples/node-bot.mjs", server_url, "colorado", "bot-1")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["name"] == "colorado"
    assert result["status"] in ("won", "stuck", "resigned")
    assert result["moves"] > 0


async def test_sdk_reconnects_after_a_server_restart(redis_url: str) -> None:
    """uvicorn closes every socket with 1012 when it stops; the SDK reconnects to the next
    server on the same address, resyncs and plays on."""
    port = free_port()
    settings = Settings(redis_url=redis_url, secret=TEST_SECRET, limits=UNLIMITED, daily=TEST_DAILY)
    process = None
    try:
        async with asyncio.timeout(RUN_TIMEOUT):
            async with serve_app(create_app(settings), port=port):
                process = await start_node("test/live/restart.mjs", f"http://127.0.0.1:{port}")
                assert process.stdout is not None and process.stderr is not None
                line = await process.stdout.readline()
                # Decoded, so that a failure shows the whole of Node's error, not a repr
                # cut short.
                err = await process.stderr.read() if line.strip() != b"READY" else b""
                assert line.strip() == b"READY", (line + err).decode(errors="replace")
            # Leaving the block stopped the server; the next one takes the same address.
            async with serve_app(create_app(settings), port=port):
                out, err = await process.communicate()
        assert process.returncode == 0, f"{out.decode()}\n{err.decode()}"
        summary = json.loads(out.decode().strip().splitlines()[-1])
        assert summary["closes"] == [1012, 1000]  # the restart, then our own close
        assert summary["version"] == 2
        assert summary["states"][-2:] == ["open", "closed"]
    finally:
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()


async def test_sdk_renews_its_token_and_has_the_account_routes(server_url: str) -> None:
    out = await run_node("test/live/accounts.mjs", server_url)
    summary = json.loads(out.strip().splitlines()[-1])
    # Created (1), no renewal at 14 days (1), renewed at 16 days (2).
    assert summary["tokensKept"] == [1, 1, 2]
    assert summary["name"] == "Ts Renewer" and summary["renewedLifetime"] is True
    assert summary["samePlayer"] is True and summary["exported"] is True
    assert summary["errors"] == ["unknown_transfer_code", "token_revoked"]
    assert summary["deleted"] is True
