"""Dailies worth playing (issue 10): each day's deal is chosen ahead by the solver, once
per cluster, and its par line is told only after the close."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import httpx
from redis.asyncio import Redis

from server.app import create_app
from server.config import DailySelection, Settings
from server.daily import DAY_MS, candidate_seed, commitment, opens_ms
from server.daily.selection import (
    FORK_CONTEXT,
    choose,
    load_choice,
    lock_key,
    selection_process_setup,
)
from server.rules import GAMES, new_game
from server.solver import Budget, solve
from server.testing import TEST_DAILY, UNLIMITED, dailies_chosen

SECRET = "05c16ccda9db0143f1d9b1488a9b044eef963cd806ca6c99b4509370fac679f2"
DAY = "2026-11-29"
NOON = opens_ms(DAY) + DAY_MS // 2
#: Search enough for most Balcony and Colorado deals to be proven won.
SOLVING = DailySelection(candidate_nodes=20_000, candidates=8, seconds=30.0)


class Clock:
    def __init__(self) -> None:
        self.now = NOON

    def __call__(self) -> int:
        return self.now


@contextlib.asynccontextmanager
async def served(
    redis_url: str, cluster: bool, clock: Clock, selection: DailySelection = SOLVING
) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    """An in-process app on ``clock`` with its lifespan (and so its selection) running."""
    settings = Settings(
        redis_url=redis_url,
        redis_cluster=cluster,
        secret=SECRET,
        ranked_min_account_age=0,
        limits=UNLIMITED,
        daily=selection,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        app.state.service.clock = clock
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            yield app, http


async def test_the_daily_is_the_first_proven_win_and_only_its_commitment_is_out(
    redis_url: str,
    redis_cluster: bool,
) -> None:
    clock = Clock()
    async with served(redis_url, redis_cluster, clock) as (app, http):
        await dailies_chosen(app, DAY)
        choice = await load_choice(app.state.service.store.redis, "balcony", DAY)
        assert choice is not None and choice.verdict == "won" and choice.score == choice.total
        # Every earlier candidate is stuck or not proven winnable within the budget.
        for k in range(choice.k):
            early = new_game("balcony", candidate_seed(SECRET.encode(), "balcony", DAY, k))
            if early.legal_moves():
                result = solve(early, Budget(nodes=SOLVING.candidate_nodes))
                assert result.verdict != "won", k
        seed = candidate_seed(SECRET.encode(), "balcony", DAY, choice.k)
        response = await http.get("/v1/daily/balcony")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["winnable"] is True and body["proven_score"] == 52
        assert body["commitment"] == commitment("balcony", DAY, seed)
        assert body["seed"] is None and body["par"] is None and body["candidate"] is None
        # Nothing of another candidate is sent, nor the seed, nor the par line.
        assert seed not in response.text
        for k in range(SOLVING.candidates):
            other = candidate_seed(SECRET.encode(), "balcony", DAY, k)
            if other != seed:
                assert commitment("balcony", DAY, other) not in response.text
        assert choice.par[0] not in response.text


async def test_the_par_is_told_after_the_close_and_replays_to_a_win(
    redis_url: str, redis_cluster: bool
) -> None:
    clock = Clock()
    async with served(redis_url, redis_cluster, clock) as (app, http):
        await dailies_chosen(app, DAY)
        for game in ("balcony", "colorado"):
            open_day = (await http.get(f"/v1/daily/{game}/{DAY}")).json()
            assert open_day["par"] is None and open_day["seed"] is None
        clock.now = opens_ms(DAY) + DAY_MS  # the close
        for game in ("balcony", "colorado"):
            closed = (await http.get(f"/v1/daily/{game}/{DAY}")).json()
            assert closed["commitment"] == commitment(game, DAY, closed["seed"])
            assert closed["seed"] == candidate_seed(SECRET.encode(), game, DAY, closed["candidate"])
            par = closed["par"]
            assert par["length"] == len(par["moves"]) > 0
            replay = new_game(game, closed["seed"])
            for move in par["moves"]:
                replay.play(move)
            if closed["winnable"]:
                assert par["won"] and replay.status == "won"
            assert replay.score == closed["proven_score"]
        assert closed["winnable"] or open_day["winnable"], "no proven win among two games"


async def test_two_instances_choose_each_daily_once(redis_url: str, redis_cluster: bool) -> None:
    clock = Clock()
    small = DailySelection(candidate_nodes=2_000, candidates=4, seconds=10.0)
    async with (
        served(redis_url, redis_cluster, clock, small) as (first, http_first),
        served(redis_url, redis_cluster, clock, small) as (second, http_second),
    ):
        await dailies_chosen(first, DAY)
        await dailies_chosen(second, DAY)
        await dailies_chosen(first, "2026-11-30")  # tomorrow's, chosen ahead
        await dailies_chosen(second, "2026-11-30")
        # Both started with the real date's today and tomorrow too: every (game, day)
        # they chose was chosen by exactly one of them.
        redis = first.state.service.store.redis
        chosen = len([key async for key in redis.scan_iter("daily-choice:*")])
        assert first.state.dailies.selections + second.state.dailies.selections == chosen
        assert chosen >= 2 * len(GAMES)
        for game in GAMES:
            one = (await http_first.get(f"/v1/daily/{game}")).json()
            two = (await http_second.get(f"/v1/daily/{game}")).json()
            assert one["commitment"] == two["commitment"]


async def test_a_day_not_chosen_yet_answers_503_and_is_never_solved_on_the_request(
    redis_url: str, redis_cluster: bool
) -> None:
    clock = Clock()
    async with served(redis_url, redis_cluster, clock, TEST_DAILY) as (app, http):
        redis: Redis = app.state.service.store.redis
        # Today by the clock (set after the start): no background pass has looked at it.
        response = await http.get("/v1/daily/colorado")
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "daily_not_ready"
        assert response.headers["Retry-After"] == "2"
        token = (await http.post("/v1/players")).json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        start = await http.post("/v1/daily/colorado", headers=headers)
        assert start.status_code in (200, 503), start.text  # 200 once chosen meanwhile
        # The background task picks the day up; then it answers.
        await dailies_chosen(app, DAY)
        assert (await http.get("/v1/daily/colorado")).status_code == 200
        assert (await http.post("/v1/daily/colorado", headers=headers)).status_code == 200
        # A closed day with no stored choice had no challenge (no server chose it, so
        # nobody played it), yesterday or long ago: answered from what is stored, and
        # nothing is chosen for it (an anonymous read had every game of a recent day
        # solved, minutes of CPU a day).
        for past in ("2026-11-28", "2026-11-25", "2026-10-01"):
            for game in GAMES:
                response = await http.get(f"/v1/daily/{game}/{past}")
                assert response.status_code == 404 and "no_daily" in response.text
            practice = await http.post(
                "/v1/games", json={"game": "colorado", "daily": past}, headers=headers
            )
            assert practice.status_code == 404 and "no_daily" in practice.text
        await asyncio.sleep(1.0)  # what a request had started would be under way
        for past in ("2026-11-28", "2026-11-25", "2026-10-01"):
            for game in GAMES:
                assert await redis.exists(lock_key(game, past)) == 0, (game, past)
                assert await load_choice(redis, game, past) is None


def test_the_choice_passes_over_every_earlier_candidate_not_proven_won() -> None:
    # The server's choice above is Balcony's first candidate (most Balcony deals are won):
    # here Colorado days whose first candidates the budget does not prove, with no time
    # limit, so that what is passed over depends on the search alone.
    by_nodes = DailySelection(candidate_nodes=20_000, candidates=8, seconds=float("inf"))
    passed_over = 0
    for day in ("2026-11-21", "2026-11-22"):
        choice = choose(SECRET.encode(), "colorado", day, by_nodes)
        assert choice.verdict == "won" and not choice.cut_short, day
        for k in range(choice.k):
            early = new_game("colorado", candidate_seed(SECRET.encode(), "colorado", day, k))
            if early.legal_moves():
                result = solve(early, Budget(nodes=by_nodes.candidate_nodes))
                assert result.verdict != "won", (day, k)
            passed_over += 1
    assert passed_over > 0, "no candidate was passed over: nothing above was checked"


async def test_selection_keeps_the_best_proven_score_when_no_win_is_found() -> None:
    # Gloucestershire deals are rarely won: with a tiny budget no win is proven, and the
    # candidate reaching the most cards is kept (never one stuck at the deal).
    tiny = DailySelection(candidate_nodes=300, candidates=5, seconds=10.0)
    choice = choose(SECRET.encode(), "gloucestershire", DAY, tiny)
    assert choice.verdict != "won" and choice.candidates == 5
    scores = []
    for k in range(5):
        game = new_game(
            "gloucestershire", candidate_seed(SECRET.encode(), "gloucestershire", DAY, k)
        )
        if game.legal_moves():
            scores.append(solve(game, Budget(nodes=tiny.candidate_nodes)).best_score)
    assert choice.score == max(scores)
    replay = new_game(
        "gloucestershire", candidate_seed(SECRET.encode(), "gloucestershire", DAY, choice.k)
    )
    assert replay.legal_moves()
    for move in choice.par:
        replay.play(move)
    assert replay.score == choice.score


async def test_the_event_loop_keeps_turning_while_the_selection_solves(
    redis_url: str, redis_cluster: bool
) -> None:
    """The solver runs in a child process: in a thread of the server's it would hold the
    GIL, and the event loop would wait a switch interval (5 ms) each time it gave it up,
    at every poll and socket write: 2,400-4,000 turns a second here, against some 125,000
    with the solver in its own process."""
    clock = Clock()
    searching = DailySelection(candidate_nodes=10_000_000, candidates=40, seconds=60.0)
    async with served(redis_url, redis_cluster, clock, searching) as (app, _):
        loop = asyncio.get_running_loop()
        turns, started = 0, loop.time()
        while loop.time() - started < 1.0:
            await asyncio.sleep(0)
            turns += 1
        assert app.state.dailies.selections < len(GAMES)  # still solving today's
    assert turns > 12_000, f"{turns} event-loop turns in 1 s"


#: Evaluated in a selection process: the forkserver's "worker alive" pipe end it holds.
ALIVE_FD_OF_CHILD = (
    "__import__('multiprocessing.forkserver').forkserver._forkserver._forkserver_alive_fd"
)


def test_a_selection_process_lets_the_forkserver_end_with_its_worker() -> None:
    """The forkserver exits when no process holds its "worker alive" pipe, and the
    selection process dies with the forkserver; a selection process holding that pipe (the
    forkserver gives it one) kept both alive after the worker was gone, with the server's
    output open (a stopped server's pipe did not close for seconds)."""
    with ProcessPoolExecutor(
        1,
        mp_context=FORK_CONTEXT,
        initializer=selection_process_setup,
        initargs=(FORK_CONTEXT.RawValue("b", 0),),
    ) as pool:
        assert pool.submit(eval, ALIVE_FD_OF_CHILD).result(timeout=30) is None
