"""``python -m server.audit``, run as a child process: files, stored games, leaderboards."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import msgpack
import pytest
from audit_helpers import (
    SECRET,
    FakeClock,
    casual_game,
    daily_game,
    human_steps,
    random_choice,
    read_entry,
    run_cli,
    write_entry,
)
from redis.asyncio import Redis

from server.audit.cli import parse_args
from server.service import GameService


def test_the_clairvoyance_signal_is_on_by_default_for_a_leaderboard_only() -> None:
    url = ["--redis-url", "redis://127.0.0.1:1/0"]
    board = ["--leaderboard", "balcony", "2026-03-14", *url]
    assert parse_args(board).clairvoyance is True
    assert parse_args([*board, "--no-clairvoyance"]).clairvoyance is False
    assert parse_args(["export.json"]).clairvoyance is False
    assert parse_args(["export.json", "--clairvoyance"]).clairvoyance is True
    assert parse_args(["--game-id", "g_x", *url]).clairvoyance is False


async def export_of_a_game(service: GameService, clock: FakeClock) -> dict[str, Any]:
    rng = random.Random(51)
    stored = await casual_game(
        service, clock, "matrimony", "cli", 80, human_steps(rng), rng, resign=True
    )
    return await service.replay(stored.id)


async def test_an_export_file(service: GameService, clock: FakeClock, tmp_path: Path) -> None:
    export = await export_of_a_game(service, clock)
    honest = tmp_path / "honest.json"
    honest.write_text(json.dumps(export))
    result = await run_cli(str(honest))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{export['game_id']} (matrimony): integrity pass; no signal" in result.stdout

    packed = tmp_path / "honest.msgpack"
    packed.write_bytes(msgpack.packb(export))
    result = await run_cli(str(packed), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["passed"] is True

    forged = copy.deepcopy(export)
    forged["moves"][5]["move"] = "deal"
    forged_file = tmp_path / "forged.json"
    forged_file.write_text(json.dumps(forged))
    result = await run_cli(str(forged_file))
    assert result.returncode == 1
    assert ": integrity fail; no signal" in result.stdout
    assert "broken_chain (version 6)" in result.stdout

    result = await run_cli(str(forged_file), "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["findings"][0]["check"] == "broken_chain"


async def test_usage_and_file_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\xc1\xc1 not an export")
    result = await run_cli(str(garbage))
    assert result.returncode == 3
    assert "neither JSON nor msgpack" in result.stderr

    assert (await run_cli(str(tmp_path / "missing.json"))).returncode == 3
    assert (await run_cli()).returncode == 3
    assert (await run_cli("--game-id", "g_x")).returncode == 3  # no Redis URL
    url = "redis://127.0.0.1:1/0"
    assert (
        await run_cli("--leaderboard", "colorado", "14/03/2026", "--redis-url", url)
    ).returncode == 3
    assert (
        await run_cli("--leaderboard", "klondike", "2026-03-14", "--redis-url", url)
    ).returncode == 3
    result = await run_cli("--game-id", "g_x", "--redis-url", "redis://127.0.0.1:1/0")
    assert result.returncode == 3
    assert "redis" in result.stderr


async def test_a_stored_game(
    service: GameService, clock: FakeClock, redis_url: str, redis_cluster: bool, redis_client: Redis
) -> None:
    export = await export_of_a_game(service, clock)
    game_id = export["game_id"]
    result = await run_cli("--game-id", game_id, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "integrity pass; no signal" in result.stdout

    result = await run_cli(
        "--game-id", "g_unknown", "--redis-url", redis_url, cluster=redis_cluster
    )
    assert result.returncode == 3
    assert "g_unknown" in result.stderr

    await redis_client.hset(f"game:{{{game_id}}}", "score", export["score"] + 1)
    result = await run_cli(
        "--game-id", game_id, "--redis-url", redis_url, "--json", cluster=redis_cluster
    )
    assert result.returncode == 1
    assert [f["check"] for f in json.loads(result.stdout)["findings"]] == ["score_mismatch"]


@pytest.mark.timeout(400)  # the leaderboard audit's clairvoyance searches: seconds a game
async def test_a_leaderboard(
    service: GameService, clock: FakeClock, redis_url: str, redis_cluster: bool, redis_client: Redis
) -> None:
    rng = random.Random(52)
    games = []
    for moves in (20, 35, 50):
        games.append(
            await daily_game(
                service,
                clock,
                "empress_of_italy",
                random_choice(rng),
                human_steps(rng),
                moves,
                resign=True,
            )
        )
    date = games[0].daily
    # One entry gets a better score than its game earned.
    forged = await read_entry(redis_client, "empress_of_italy", date, games[1].owner)
    forged["score"] += 20
    await write_entry(redis_client, "empress_of_italy", date, forged)

    result = await run_cli(
        "--leaderboard",
        "empress_of_italy",
        date,
        "--no-clairvoyance",  # the clairvoyance tests cover the signal (seconds per game)
        "--redis-url",
        redis_url,
        "--secret",
        SECRET,
        cluster=redis_cluster,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    progress = result.stderr.splitlines()
    assert len(progress) == 3
    assert all(
        re.fullmatch(r"\[[123]/3\] g_\S+ integrity (pass|fail); no signal", line)
        for line in progress
    )
    assert f"{games[1].id} integrity fail" in result.stderr
    assert "3 audited: 2 passed, 1 failed integrity, 0 passed integrity with" in result.stdout
    row = next(line for line in result.stdout.splitlines() if games[1].id in line)
    assert "leaderboard_mismatch" in row

    result = await run_cli(
        "--leaderboard",
        "empress_of_italy",
        date,
        "--no-clairvoyance",  # the clairvoyance tests cover the signal (seconds per game)
        "--redis-url",
        redis_url,
        "--json",
        cluster=redis_cluster,
    )
    document = json.loads(result.stdout)
    totals = ("audited", "passed", "integrity_failed", "signals_only")
    assert tuple(document[name] for name in totals) == (3, 2, 1, 0)

    # An empty board passes (nothing to fail).
    result = await run_cli(
        "--leaderboard", "colorado", date, "--redis-url", redis_url, cluster=redis_cluster
    )
    assert result.returncode == 0
    assert "0 audited" in result.stdout
