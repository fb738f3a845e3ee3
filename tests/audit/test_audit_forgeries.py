"""Each forgery is caught, by the check meant for it, at the entry it touched."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from typing import Any

import pytest
from audit_helpers import (
    FakeClock,
    casual_game,
    checks,
    daily_game,
    findings_of,
    fixed_steps,
    human_steps,
    random_choice,
    read_entry,
    rechain,
    signals,
    signals_of,
    write_entry,
)
from redis.asyncio import Redis

from server.audit import MAX_FINDINGS_PER_CHECK, audit, audit_stored
from server.leaderboard import board_keys
from server.rules import new_game
from server.service import GameService
from server.store import game_key

#: The entry the forgeries below touch (1-based version).
K = 40


@pytest.fixture
async def export(service: GameService, clock: FakeClock) -> dict[str, Any]:
    """An honest, finished 100-move Empress of Italy game's export, seed included."""
    rng = random.Random(3)
    stored = await casual_game(
        service, clock, "empress_of_italy", "forge", 99, human_steps(rng), rng, resign=True
    )
    assert stored.moves == 100 and stored.status == "resigned"
    honest = await service.replay(stored.id)
    assert honest["seed"] is not None and audit(honest).passed
    return honest


def versions(verdict: Any, check: str) -> list[int | None]:
    return [finding.version for finding in findings_of(verdict, check)]


def engine_at(export: dict[str, Any], version: int):  # type: ignore[no-untyped-def]
    """The engine after the export's first ``version`` moves."""
    game = new_game(export["game"], export["seed"])
    for entry in export["moves"][:version]:
        game.play(entry["move"])
    return game


# -- the moves ------------------------------------------------------------------------


def test_an_edited_move_that_is_still_legal(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    recorded = forged["moves"][K - 1]["move"]
    before = engine_at(export, K - 1)
    other = next(move for move in before.legal_moves() if move != recorded)
    forged["moves"][K - 1]["move"] = str(other)

    verdict = audit(forged)
    assert not verdict.passed
    assert versions(verdict, "broken_chain")[0] == K
    assert versions(verdict, "state_hash_mismatch")[0] == K
    # With the chain rewritten too, the replay still gives the forged move away.
    rewritten = audit(rechain(forged))
    assert "broken_chain" not in checks(rewritten)
    assert versions(rewritten, "state_hash_mismatch")[0] == K


def test_an_edited_move_that_is_illegal(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    before = engine_at(export, K - 1)
    illegal = next(
        f"{source}>foundation[0]"
        for source in ("tableau[0]", "tableau[1]", "tableau[2]", "tableau[3]", "waste")
        if f"{source}>foundation[0]" not in before.legal_moves()
    )
    forged["moves"][K - 1]["move"] = illegal
    verdict = audit(rechain(forged))
    [finding] = findings_of(verdict, "illegal_move")
    assert finding.version == K
    assert f"move {K} {illegal!r} (version {K}) is not legal" in finding.detail
    assert verdict.replayed_moves == K - 1  # the replay stopped there
    assert "status_mismatch" not in checks(verdict)  # nothing claimed past the stop


def test_a_dropped_entry(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    del forged["moves"][K - 1]
    verdict = audit(forged)
    assert versions(verdict, "dropped_entry") == [K]
    assert K + 1 in versions(verdict, "broken_chain")


def test_the_last_entry_dropped(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    forged["moves"].pop()
    verdict = audit(forged)
    assert "chain_head" in findings_of(verdict, "broken_chain")[0].detail
    assert "status_mismatch" in checks(verdict)  # the resignation went with it


def test_reordered_entries(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    moves = forged["moves"]
    moves[K - 1], moves[K] = moves[K], moves[K - 1]
    verdict = audit(forged)
    # Checked in version order, the rest holds: the finding says exactly what happened.
    assert checks(verdict) == {"reordered_entries"}
    assert versions(verdict, "reordered_entries") == [K]


def test_a_duplicated_entry(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    forged["moves"].insert(K, copy.deepcopy(forged["moves"][K - 1]))
    verdict = audit(forged)
    assert versions(verdict, "duplicate_entry") == [K]


# -- what the export claims -----------------------------------------------------------


def test_a_forged_score(export: dict[str, Any]) -> None:
    forged = dict(export, score=export["score"] + 5)
    verdict = audit(forged)
    assert checks(verdict) == {"score_mismatch"}
    assert str(export["score"]) in verdict.findings[0].detail


def test_a_forged_status(export: dict[str, Any]) -> None:
    assert checks(audit(dict(export, status="won"))) == {"status_mismatch"}
    # A game over claiming to be on also has a finished_at it should not have.
    on = audit(dict(export, status="playing"))
    assert checks(on) == {"status_mismatch", "finished_at_mismatch"}


def test_a_forged_finished_at(export: dict[str, Any]) -> None:
    assert checks(audit(dict(export, finished_at=export["finished_at"] - 1))) == {
        "finished_at_mismatch"
    }


def test_an_edited_state_hash(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    forged["moves"][K - 1]["state_hash"] = "0" * 64
    verdict = audit(forged)
    assert versions(verdict, "state_hash_mismatch") == [K]
    assert versions(verdict, "broken_chain") == [K]
    assert checks(audit(rechain(forged))) == {"state_hash_mismatch"}


def test_an_edited_deal_hash_or_seed(export: dict[str, Any]) -> None:
    other_deal = new_game(export["game"], "another").state_hash()
    verdict = audit(rechain(dict(export, deal_hash=other_deal)))
    assert checks(verdict) == {"deal_mismatch"}
    assert verdict.replayed_moves == 0
    assert checks(audit(dict(export, seed="another"))) == {"deal_mismatch"}


def test_no_seed_checks_the_chain_only(export: dict[str, Any]) -> None:
    verdict = audit(dict(export, seed=None))
    assert (verdict.passed, verdict.integrity) == (False, "chain_only")
    assert checks(verdict) == {"seed_unavailable"}
    forged = dict(copy.deepcopy(export), seed=None)
    forged["moves"][K - 1]["hash"] = "f" * 64
    assert audit(forged).integrity == "fail"


# -- the chain ----------------------------------------------------------------------------


def test_a_broken_chain(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    forged["moves"][K - 1]["hash"] = "a" * 64
    verdict = audit(forged)
    # The edited link fails, and so does the next, made from the real one.
    assert checks(verdict) == {"broken_chain"}
    assert versions(verdict, "broken_chain") == [K, K + 1]


def test_an_edited_chain_head(export: dict[str, Any]) -> None:
    verdict = audit(dict(export, chain_head="b" * 64))
    assert checks(verdict) == {"broken_chain"}
    assert "chain_head" in verdict.findings[0].detail


def test_an_edited_server_time_breaks_the_chain(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    forged["moves"][K - 1]["server_time"] += 1
    assert versions(audit(forged), "broken_chain") == [K]


def test_many_findings_are_summed_up(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    for entry in forged["moves"]:
        entry["hash"] = "c" * 64
    verdict = audit(forged)
    listed = findings_of(verdict, "broken_chain")
    assert len(listed) == MAX_FINDINGS_PER_CHECK + 1
    assert listed[-1].detail.startswith(f"{101 - MAX_FINDINGS_PER_CHECK} more")


# -- timing ---------------------------------------------------------------------------------


def test_time_travel(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    a, b = forged["moves"][K - 1], forged["moves"][K]
    a["server_time"], b["server_time"] = b["server_time"], a["server_time"]
    verdict = audit(rechain(forged))
    assert checks(verdict) == {"time_travel"}
    assert versions(verdict, "time_travel") == [K + 1]
    first_before_creation = dict(export, created_at=export["moves"][0]["server_time"] + 1)
    assert checks(audit(first_before_creation)) == {"time_travel"}


async def test_inhuman_speed(service: GameService, clock: FakeClock) -> None:
    rng = random.Random(21)
    stored = await casual_game(
        service, clock, "empress_of_italy", "fast", 60, fixed_steps(50), rng, resign=True
    )
    verdict = await audit_stored(service, stored.id)
    assert verdict.integrity == "pass" and not verdict.passed
    assert signals(verdict) == {"inhuman_speed", "inhuman_regularity"}
    [signal] = signals_of(verdict, "inhuman_speed")
    assert signal.version == 2
    assert "each came under 120 ms" in signal.detail
    assert signal.evidence["first_version"] == 2 and signal.evidence["fastest_ms"] == 50


async def test_inhuman_regularity(service: GameService, clock: FakeClock) -> None:
    rng = random.Random(22)
    stored = await casual_game(
        service, clock, "empress_of_italy", "steady", 60, fixed_steps(1000), rng, resign=True
    )
    verdict = await audit_stored(service, stored.id)
    assert verdict.integrity == "pass" and verdict.findings == []
    assert signals(verdict) == {"inhuman_regularity"}
    assert "coefficient of variation of 0.000" in verdict.signals[0].detail
    assert verdict.signals[0].evidence["cv"] == 0


def with_intervals(export: dict[str, Any], intervals: list[int]) -> dict[str, Any]:
    forged = copy.deepcopy(export)
    now = forged["moves"][0]["server_time"]
    for entry, gap in zip(forged["moves"][1:], intervals, strict=False):
        now += gap
        entry["server_time"] = now
    forged["finished_at"] = forged["moves"][-1]["server_time"]
    return rechain(forged)


def test_timing_thresholds(export: dict[str, Any]) -> None:
    human = [random.Random(i).randint(400, 3000) for i in range(99)]
    assert audit(with_intervals(export, human)).passed
    # Seven fast intervals in a row are allowed, eight are not; 120 ms is not fast.
    seven = human[:30] + [60] * 7 + human[37:]
    assert audit(with_intervals(export, seven)).passed
    eight = human[:30] + [60] * 8 + human[38:]
    assert signals(audit(with_intervals(export, eight))) == {"inhuman_speed"}
    assert audit(with_intervals(export, human[:30] + [120] * 20 + human[50:])).passed
    # 29 steady intervals are allowed; 30 with a CV under 0.05 are not.
    steady = [1000 + (i % 2) * 40 for i in range(30)]  # CV ~0.02
    apart = [3000, *steady[:29], 3000]
    assert audit(with_intervals(export, human[:39] + apart + human[70:])).passed
    flagged = audit(with_intervals(export, human[:40] + steady + human[70:]))
    assert signals(flagged) == {"inhuman_regularity"} and flagged.integrity == "pass"
    loose = [1000 + (i % 2) * 120 for i in range(30)]  # CV ~0.057
    assert audit(with_intervals(export, human[:40] + loose + human[70:])).passed


# -- the leaderboard entry --------------------------------------------------------------------


def entry_of(export: dict[str, Any]) -> dict[str, Any]:
    return {
        "rank": 1,
        "player_id": export["owner"],
        "game_id": export["game_id"],
        "score": export["score"],
        "won": False,
        "moves": len(export["moves"]),
        "elapsed_ms": export["finished_at"] - export["created_at"],
        "finished_at": export["finished_at"],
        "replay": f"/v1/games/{export['game_id']}/replay",
    }


@pytest.mark.parametrize(
    "field, value",
    [("score", 104), ("won", True), ("moves", 99), ("game_id", "g_other"), ("elapsed_ms", 5)],
)
def test_a_leaderboard_entry_that_does_not_match(
    export: dict[str, Any], field: str, value: Any
) -> None:
    assert audit(export, entry_of(export)).passed
    verdict = audit(export, dict(entry_of(export), **{field: value}))
    assert checks(verdict) == {"leaderboard_mismatch"}
    assert f"entry's {field}" in verdict.findings[0].detail


# -- forgeries in Redis ------------------------------------------------------------------------


async def ranked(service: GameService, clock: FakeClock) -> Any:
    rng = random.Random(31)
    return await daily_game(
        service, clock, "gloucestershire", random_choice(rng), human_steps(rng), 40, resign=True
    )


async def test_a_leaderboard_entry_edited_in_redis(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    entry = await read_entry(redis_client, stored.game, stored.daily, stored.owner)
    entry["score"] += 10
    await write_entry(redis_client, stored.game, stored.daily, entry)
    verdict = await audit_stored(service, stored.id)
    assert checks(verdict) == {"leaderboard_mismatch"}
    assert "entry's score" in verdict.findings[0].detail


async def test_a_score_edited_in_redis(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    await redis_client.hset(game_key(stored.id), "score", stored.score + 3)
    assert checks(await audit_stored(service, stored.id)) == {"score_mismatch"}


async def test_a_stored_state_replaced_by_another_games(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    rng = random.Random(32)
    other = await casual_game(service, clock, "gloucestershire", "x", 10, human_steps(rng), rng)
    await redis_client.hset(game_key(stored.id), "state", other.state)
    verdict = await audit_stored(service, stored.id)
    assert checks(verdict) == {"stored_state_mismatch"}
    assert "another game or deal" in verdict.findings[0].detail


async def test_a_stored_state_rewound(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    dealt = new_game(stored.game, stored.seed)
    await redis_client.hset(game_key(stored.id), "state", dealt.to_bytes())
    verdict = await audit_stored(service, stored.id)
    assert checks(verdict) == {"stored_state_mismatch"}
    assert "the stored table hashes to" in verdict.findings[0].detail


async def test_a_stored_move_count_edited(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    await redis_client.hset(game_key(stored.id), "moves", stored.moves - 5)
    assert checks(await audit_stored(service, stored.id)) == {"stored_state_mismatch"}


async def test_a_daily_seed_swapped_in_redis(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    await redis_client.hset(game_key(stored.id), "seed", "swapped")
    verdict = await audit_stored(service, stored.id)
    assert {"daily_seed_mismatch", "deal_mismatch"} <= checks(verdict)
    assert "swapped" not in json.dumps(verdict.to_dict())
    # Without the secret the seed cannot be checked against the day; the deal still is.
    unchecked = await audit_stored(service, stored.id, check_daily_seed=False)
    assert "daily_seed_mismatch" not in checks(unchecked)


async def test_a_ranked_game_missing_from_its_leaderboard(
    service: GameService, clock: FakeClock, redis_client: Redis
) -> None:
    stored = await ranked(service, clock)
    _, entries = board_keys(stored.game, stored.daily)
    await redis_client.hdel(entries, stored.owner)
    verdict = await audit_stored(service, stored.id)
    assert checks(verdict) == {"leaderboard_mismatch"}
    assert "not on the" in verdict.findings[0].detail


async def test_the_verdict_never_carries_a_secret_seed(
    service: GameService, clock: FakeClock
) -> None:
    rng = random.Random(33)
    stored = await daily_game(service, clock, "colorado", random_choice(rng), human_steps(rng), 20)
    assert stored.status == "playing"
    verdict = await audit_stored(service, stored.id)
    assert verdict.passed
    assert stored.seed not in json.dumps(verdict.to_dict())
    assert "seed" not in {field.name for field in dataclasses.fields(verdict)}


# -- malformed exports -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e.pop("chain_head"),
        lambda e: e.update(format="solitaire-replay/2"),
        lambda e: e.update(game="klondike"),
        lambda e: e.update(moves="none"),
        lambda e: e.update(score=True),
        lambda e: e.update(seed="not a seed!"),
        lambda e: e["moves"][3].update(hash="XYZ"),
        lambda e: e["moves"][3].update(version=0),
        lambda e: e["moves"][3].update(move="tableau[0]\u00a0>foundation[0]"),
        lambda e: e["moves"][3].pop("server_time"),
    ],
    ids=[
        "no-head",
        "format",
        "game",
        "moves",
        "bool-score",
        "seed",
        "hash",
        "version",
        "non-ascii-move",
        "no-time",
    ],
)
def test_a_malformed_export(export: dict[str, Any], change: Any) -> None:
    forged = copy.deepcopy(export)
    change(forged)
    verdict = audit(forged)
    assert checks(verdict) == {"malformed_export"}
    assert not verdict.passed


@pytest.mark.parametrize("body", [None, [], "export", 3])
def test_not_a_map(body: Any) -> None:
    verdict = audit(body)
    assert checks(verdict) == {"malformed_export"}
    assert verdict.game_id is None


def test_a_gap_of_versions_is_one_finding(export: dict[str, Any]) -> None:
    forged = copy.deepcopy(export)
    forged["moves"][-1]["version"] = 10**15  # no loop over the versions in between
    verdict = audit(forged)
    [finding] = findings_of(verdict, "dropped_entry")
    assert finding.version == 100
    assert f"versions 100..{10**15 - 1}" in finding.detail
