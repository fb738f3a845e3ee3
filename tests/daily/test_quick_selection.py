"""A fresh store's first day (issue 29): every game is first tried with a short time, and
a choice it settles is stored at once, the one the full budget makes; the others wait for
the full budget."""

from __future__ import annotations

from server import daily
from server.config import DailySelection
from server.dailies import DailySelector, choice_key, choose, load_choice
from server.redisconn import connect
from server.store import RANKED_TTL

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


async def test_a_choice_lives_as_long_as_its_days_ranked_games_and_no_longer(
    redis_url: str, redis_cluster: bool
) -> None:
    """The soak's key census (issue 23): one choice per game and day, kept forever, the
    one family of keys without a bound.  A choice made a day ahead or on its day expires
    when its day's ranked games and board can last have (``RANKED_TTL`` after the close),
    whatever the day it was made."""
    redis = connect(redis_url, redis_cluster)
    cheap = DailySelection(candidate_nodes=300, candidates=1, seconds=1.0)
    try:
        for date, now in (
            ("2026-10-04", daily.opens_ms("2026-10-04") - 5 * 3600_000),  # a day ahead
            ("2026-10-05", daily.opens_ms("2026-10-05") + 20 * 3600_000),  # late on its day
        ):
            selector = DailySelector(redis, SECRET, cheap, lambda now=now: now)
            assert await selector.ensure("balcony", date) is True
            await selector.stop()
            left = await redis.pttl(choice_key("balcony", date))
            until = daily.closes_ms(date) + RANKED_TTL * 1000 - now
            assert until - 60_000 <= left <= until, (date, left, until)
    finally:
        await redis.aclose()
