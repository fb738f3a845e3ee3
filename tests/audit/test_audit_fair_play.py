"""Two answers (issue 8, finding 7): integrity (is the record faithful and legal?) and
fair play (does it look like a person's play?), with the command line's exit status."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import httpx
from audit_helpers import FakeClock, casual_game, human_steps, run_cli, signals
from redis.asyncio import Redis
from starlette.applications import Starlette

from server.audit import EXPORT_SIGNALS, SIGNALS, Signal, audit, audit_stored
from server.service import GameService
from server.store import StoredGame, game_key


def machine_steps(rng: random.Random) -> Callable[[], int]:
    """A script's pace: 20-90 ms between moves, jittered (so not machine-regular)."""
    return lambda: rng.randint(20, 90)


def paced_steps(rng: random.Random) -> Callable[[], int]:
    """A cheater pacing moves 130-300 ms apart with jitter, as finding 7 describes."""
    return lambda: rng.randint(130, 300)


async def honest_game(
    service: GameService, clock: FakeClock, steps: Callable[[random.Random], Callable[[], int]]
) -> StoredGame:
    rng = random.Random(81)
    return await casual_game(
        service, clock, "empress_of_italy", "fair-play", 60, steps(rng), rng, resign=True
    )


async def test_an_honest_script_at_machine_speed_passes_integrity_but_signals_speed(
    service: GameService, clock: FakeClock, redis_url: str, redis_cluster: bool
) -> None:
    stored = await honest_game(service, clock, machine_steps)
    verdict = await audit_stored(service, stored.id)
    assert verdict.integrity == "pass" and verdict.findings == []
    assert signals(verdict) == {"inhuman_speed"}
    assert not verdict.passed
    assert verdict.summary == "integrity pass; signal: inhuman speed"

    result = await run_cli("--game-id", stored.id, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{stored.id} (empress_of_italy): integrity pass; signal: inhuman speed" in (
        result.stdout
    )
    assert "fair-play signals:" in result.stdout and "integrity findings" not in result.stdout

    result = await run_cli(
        "--game-id", stored.id, "--redis-url", redis_url, "--json", cluster=redis_cluster
    )
    document = json.loads(result.stdout)
    assert (document["passed"], document["integrity"], document["findings"]) == (
        False,
        "pass",
        [],
    )
    [signal] = document["fair_play"]
    assert signal["name"] == "inhuman_speed" and signal["version"] == 2
    assert signal["evidence"]["moves"] >= 8 and signal["evidence"]["fastest_ms"] < 120


async def test_a_tampered_game_fails_integrity_and_exits_1(
    service: GameService, clock: FakeClock, redis_url: str, redis_cluster: bool, redis_client: Redis
) -> None:
    stored = await honest_game(service, clock, human_steps)
    await redis_client.hset(game_key(stored.id), "score", stored.score + 5)
    result = await run_cli("--game-id", stored.id, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "integrity fail; no signal" in result.stdout
    assert "integrity findings:" in result.stdout and "score_mismatch" in result.stdout

    # Tampered and fast: still exit 1 (integrity first), with both answers shown.
    fast = await honest_game(service, clock, machine_steps)
    await redis_client.hset(game_key(fast.id), "score", fast.score + 5)
    result = await run_cli("--game-id", fast.id, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 1
    assert "integrity fail; signal: inhuman speed" in result.stdout


async def test_an_honest_human_paced_game_passes_and_exits_0(
    service: GameService, clock: FakeClock, redis_url: str, redis_cluster: bool
) -> None:
    stored = await honest_game(service, clock, human_steps)
    result = await run_cli("--game-id", stored.id, "--redis-url", redis_url, cluster=redis_cluster)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "integrity pass; no signal" in result.stdout


async def test_a_paced_cheater_raises_no_timing_signal(
    service: GameService, clock: FakeClock
) -> None:
    """Timing cannot tell a paced scout-helped player from a person: the scouting link
    of the leaderboard audit does (test_audit_scouting)."""
    stored = await honest_game(service, clock, paced_steps)
    verdict = await audit_stored(service, stored.id)
    assert verdict.passed, verdict.to_dict()


async def test_rest_answers_the_two_part_verdict(
    app: Starlette, http: httpx.AsyncClient, clock: FakeClock
) -> None:
    stored = await honest_game(app.state.service, clock, machine_steps)
    verdict = (await http.post("/v1/audit", json={"game_id": stored.id})).json()
    assert verdict["passed"] is False
    assert verdict["summary"] == "integrity pass; signal: inhuman speed"
    assert (verdict["integrity"], verdict["findings"]) == ("pass", [])
    assert [signal["name"] for signal in verdict["fair_play"]] == ["inhuman_speed"]

    schema = (await http.get("/openapi.json")).json()["components"]["schemas"]["Verdict"]
    assert {"passed", "integrity", "findings", "fair_play"} <= set(schema["required"])
    assert set(schema["properties"]["fair_play"]["items"]["properties"]["name"]["enum"]) == set(
        SIGNALS
    )
    assert set(verdict) == set(schema["properties"])


async def test_signals_are_one_function_each_and_extensible(
    service: GameService, clock: FakeClock
) -> None:
    stored = await honest_game(service, clock, human_steps)
    export = await service.replay(stored.id, with_seed=True)
    assert audit(export).passed

    def long_game(export: dict[str, object], entries: list[dict[str, object]]) -> Signal | None:
        if len(entries) < 10:
            return None
        return Signal("inhuman_speed", None, "a stand-in signal", {"moves": len(entries)})

    flagged = audit(export, signals=(*EXPORT_SIGNALS, long_game))
    assert flagged.integrity == "pass" and not flagged.passed
    assert flagged.signals[0].evidence == {"moves": len(export["moves"])}
    assert audit(export, signals=()).passed
