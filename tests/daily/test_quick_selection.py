"""A fresh store's first day (issue 29): every game is first tried with a short time, and
a choice it settles is stored at once, the one the full budget makes; the others wait for
the full budget."""

from __future__ import annotations

from server.config import DailySelection
from server.daily.selection import DailySelector, choose, load_choice
from server.redisconn import connect

SECRET = bytes.fromhex("05c16ccda9db0143f1d9b1488a9b044eef963cd806ca6c99b4509370fac679f2")
DAY = "2026-11-29"
FULL = DailySelection(candidate_nodes=20_000, candidates=8, seconds=30.0)


def test_a_choice_cut_short_by_time_says_so() -> None:
    quick = choose(SECRET, "balcony", DAY, FULL)
    assert not quick.cut_short and quick.winnable
    starved = choose(SECRET, "matrimony", DAY, DailySelection(20_000, 8, 0.000_001))
    assert starved.cut_short


async def test_the_quick_pass_stores_only_what_it_settled(
    redis_url: str, redis_cluster: bool
) -> None:
    redis = connect(redis_url, redis_cluster)
    try:
        selector = DailySelector(redis, SECRET, FULL, lambda: 0, quick_seconds=0.000_001)
        # Nothing settles in a microsecond: nothing is stored, the full pass will choose.
        assert await selector.ensure("matrimony", DAY, quick=True) is False
        assert await load_choice(redis, "matrimony", DAY) is None
        roomy = DailySelector(redis, SECRET, FULL, lambda: 0, quick_seconds=30.0)
        assert await roomy.ensure("balcony", DAY, quick=True) is True
        stored = await load_choice(redis, "balcony", DAY)
        full = choose(SECRET, "balcony", DAY, FULL)
        assert stored is not None and (stored.k, stored.verdict) == (full.k, full.verdict)
        await selector.stop()
        await roomy.stop()
    finally:
        await redis.aclose()
