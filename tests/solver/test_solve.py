"""Perfect-information solving: won lines replay, lost means lost, budgets hold."""

from __future__ import annotations

import random
from typing import Any

import pytest
from solver_testkit import late_position, plain_search, reversed_tableau, won_position

from server.rules import GAME_NAMES, PLAYING, WON, Game, new_game
from server.solver import LOST, UNKNOWN, Budget, solve
from server.solver import search as search_module
from server.solver.models import ColoradoModel, GloucestershireModel, model_for
from server.solver.search import search

#: Deals each game's solver wins within a few thousand positions (found by a scan).
QUICK_WINS = {
    "balcony": ["t1", "t2", "t3", "t5", "t7"],
    "colorado": ["t2", "t19", "t26", "t27"],
    "empress_of_italy": ["t4", "t5", "t6", "t7"],
}


#: Games in the plain-search comparison.  Not Balcony and Empress of Italy: their
#: foundations' tops may all come back onto the tableau (a foundation read backwards is a
#: valid tableau build), so from any late position both searches can unbuild the whole
#: deck; lost positions are out of reach of an exhaustive search, won ones are won by
#: either.  test_models checks their every move and canonical key against the engine.
#: Nor Gloucestershire, whose tableau builds with wrap: few of its late positions are
#: small enough; its lost verdicts are checked on real deals instead.
PLAIN_GAMES = ("colorado", "matrimony")
#: Cards taken off the foundations: enough to stack several on some of Matrimony's 16 piles.
PLAIN_CARDS_OFF = {"colorado": 6, "matrimony": 20}
#: Positions the plain search may use: Matrimony's lost positions past 6,000 cost seconds
#: each and add no case the others lack (the suite stays fast).
PLAIN_LIMIT = {"colorado": 20_000, "matrimony": 6_000}


def replay(game_name: str, seed: str, moves: tuple[str, ...]) -> None:
    game = new_game(game_name, seed)
    for move in moves:
        game.play(move)
    assert game.status == WON


@pytest.mark.parametrize(
    ("name", "seed"), [(name, seed) for name, seeds in QUICK_WINS.items() for seed in seeds]
)
def test_won_deals_replay_to_a_win(name: str, seed: str) -> None:
    result = solve(new_game(name, seed), Budget(nodes=20_000))
    assert result.verdict == "won" and result.moves
    assert result.best_score == result.total_cards
    replay(name, seed, result.moves)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_won_late_positions_replay_to_a_win(name: str) -> None:
    """Every game, Matrimony and Gloucestershire included (whose deals are rarely won):
    positions a few dozen cards from the end, solved and replayed by the engine."""
    rng = random.Random(f"late-{name}")
    for deal in range(4):
        game = late_position(name, f"late-{deal}", 30, rng)
        result = solve(game, Budget(nodes=50_000))
        assert result.verdict == "won" and result.moves is not None
        replay_game = game.copy()
        for move in result.moves:
            replay_game.play(move)
        assert replay_game.status == WON


@pytest.mark.parametrize("name", PLAIN_GAMES)
def test_verdicts_match_a_plain_exhaustive_search(name: str) -> None:
    """The transposition table, symmetry and safe moves change no verdict: positions
    near the end, half of them with their tableau piles turned over (often unwinnable), solved
    both ways; those too big for the plain search are passed over, but at least six are
    compared and both verdicts occur."""
    rng = random.Random(f"plain-{name}")
    verdicts = []
    for deal in range(16):
        game = late_position(name, f"plain-{deal}", PLAIN_CARDS_OFF[name], rng)
        if deal % 2:
            game = reversed_tableau(game)
        expected = plain_search(game, limit=PLAIN_LIMIT[name])
        if expected is None:
            continue
        result = solve(game)
        assert result.verdict == ("won" if expected else LOST), (deal, game.table())
        verdicts.append(result.verdict)
    assert len(verdicts) >= 6 and set(verdicts) == {"won", LOST}


def test_gloucestershire_deals_proven_lost_are_lost() -> None:
    """Real deals the solver proves lost in a few positions, checked by the plain search."""
    for seed in ("t1", "t3", "t5", "t9", "t12", "t14", "t26"):
        game = new_game("gloucestershire", seed)
        result = solve(game)
        assert result.verdict == LOST
        assert result.best_score < result.total_cards
        assert plain_search(game) is False


def _colorado_clubs_jam() -> Game:
    """Colorado, stock empty, all but 14 clubs on the foundations: the clubs ace pile holds
    AC (wants 2C), the king pile K..3 (wants 2C). tableau[0] is 2C under 3C..KC,
    tableau[1] AC under 2C.  Either pile can take tableau[1]'s 2C, but then the piles
    want 3C or 2C, both under tableau[0]'s KC, which no pile takes: lost, after a search
    of both choices."""
    game = late_position("colorado", "lost", 0, random.Random(0))
    ace = next(p for p in game.foundations[:4] if p[0] % 52 == 0)
    king = next(p for p in game.foundations[4:] if p[0] % 52 == 12)
    loose = ace[1:] + king[11:]
    del ace[1:], king[11:]
    twos = sorted(c for c in loose if c % 52 == 1)
    ace_of_clubs = next(c for c in loose if c % 52 == 0)
    rest = sorted((c for c in loose if c % 52 > 1 and c != twos[1]), key=lambda c: c % 52)
    game.tableau[0][:] = [twos[0], *rest]
    game.tableau[1][:] = [ace_of_clubs, twos[1]]
    game.status = PLAYING
    game._refresh_status()
    return game


def test_a_constructed_lost_position_is_proven_lost() -> None:
    """The clubs jam of :func:`_colorado_clubs_jam`: lost, and the model sees it at once
    (4C must go up, as its king pile has passed it, but only after the 3C under it, which
    must go up too), where the plain search plays both choices out."""
    game = _colorado_clubs_jam()
    assert game.score == 104 - 14 and len(game.legal_moves()) == 2
    result = solve(game)
    assert result.verdict == LOST and result.moves is None
    assert result.nodes == 1 and result.best_score == 104 - 14
    assert not plain_search(game)


def test_node_budget_is_respected_and_deterministic() -> None:
    game = new_game("matrimony", "stats-1")
    first = solve(game, Budget(nodes=2_000))
    second = solve(game, Budget(nodes=2_000))
    assert first.verdict == UNKNOWN and first.moves is None
    assert first.nodes == 2_000
    assert first == second
    assert 0 < first.best_score < first.total_cards
    assert len(first.best_line) > 0


def test_out_of_time_callable_stops_the_search() -> None:
    calls = []

    def out_of_time() -> bool:
        calls.append(1)
        return len(calls) >= 3

    result = solve(new_game("colorado", "stats-1"), Budget(out_of_time=out_of_time))
    assert result.verdict == UNKNOWN
    assert len(calls) >= 3
    assert result.nodes == 3 * 256


@pytest.mark.parametrize(
    ("name", "seed", "nodes"), [("colorado", "stats-1", 3_000), ("matrimony", "stats-2", 20_000)]
)
def test_best_line_reaches_the_best_score(name: str, seed: str, nodes: int) -> None:
    game = new_game(name, seed)
    result = solve(game, Budget(nodes=nodes))
    for move in result.best_line:
        game.play(move)
    assert game.score == result.best_score


def test_finished_games() -> None:
    won = late_position("balcony", "done", 0, random.Random(0))
    assert solve(won).verdict == "won" and solve(won).moves == ()
    resigned = new_game("balcony", "t1")
    resigned.play("resign")
    assert solve(resigned).verdict == LOST


def test_luby_restart_lengths() -> None:
    assert [search_module.luby(k) for k in range(1, 16)] == [
        1,
        1,
        2,
        1,
        1,
        2,
        4,
        1,
        1,
        2,
        1,
        1,
        2,
        4,
        8,
    ]


def test_a_bounded_transposition_table_keeps_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``TABLE_LIMIT`` keys the table keeps only the path's: positions are searched
    again, "lost" is still a complete search and "won" lines still replay."""
    lost = new_game("gloucestershire", "stats-1")  # proven lost in a few hundred positions
    full = solve(lost)
    won = late_position("colorado", "bounded", 8, random.Random(3))
    monkeypatch.setattr(search_module, "TABLE_LIMIT", 200)
    bounded = solve(lost)
    assert full.verdict == bounded.verdict == LOST
    assert bounded.nodes > full.nodes > 200  # the small table made it search again
    result = solve(won, Budget(nodes=100_000))
    assert result.verdict == "won" and result.moves is not None
    for move in result.moves:
        won.play(move)
    assert won.status == WON


def test_colorado_stock_safe_move_keeps_verdicts() -> None:
    """The stock's card played alone to its foundation when the other copy is on the
    other pile of its suit: positions near the end with two cards back in the stock (the
    last one taken off a foundation on top, so the safe move applies), the odd ones with
    their tableau turned over, solved with the model's reductions and by the plain search
    on the engine (deals found by a scan: the safe move is offered, both verdicts occur,
    the plain search fits its limit).  The lost ones are proven lost from the start
    (``ColoradoModel._lost``): the model offers no move there at all."""
    verdicts = []
    for deal in (2, 3, 4, 6, 11, 21):
        rng = random.Random(f"stock-safe-{deal}")
        game = late_position("colorado", f"stock-safe-{deal}", 8, rng)
        for _ in range(2):
            source = rng.choice([f for f in game.foundations if f])
            game.stock.append(source.pop())
        game._refresh_status()
        if deal % 2:
            game = reversed_tableau(game)
        model = model_for(game)
        moves = model.moves(model.state_of(game))
        expected = plain_search(game, limit=10_000)
        assert expected is not None
        if expected:
            assert len(moves) == 1 and model.text(moves[0]).startswith("stock>foundation")
        else:
            assert moves == []
        result = solve(game)
        assert result.verdict == ("won" if expected else LOST), (deal, game.table())
        verdicts.append(result.verdict)
    assert set(verdicts) == {"won", LOST}


def test_restarts_reorder_moves_but_keep_every_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart's order holds the same moves as the model's, so a short run that is not
    cut is still a complete search: a lost position is proven lost by restarts of one
    position each at first, and a won one is won with a line that replays."""
    rng = random.Random("reorder")
    for name in ("colorado", "empress_of_italy"):
        game = new_game(name, "reorder")
        model = model_for(game)
        moves_of = search_module._shaken(model.moves, random.Random(1))
        state = model.state_of(game)
        for _ in range(300):
            listed = model.moves(state)
            if not listed:
                break
            assert sorted(moves_of(state)) == sorted(listed)
            state = model.play(state, rng.choice(listed))
    monkeypatch.setattr(search_module, "FIRST_NODES", 1)
    monkeypatch.setattr(ColoradoModel, "restart_unit", 1)
    assert solve(_colorado_clubs_jam(), Budget(nodes=1_000)).verdict == LOST
    won = late_position("colorado", "reorder", 8, random.Random(5))
    result = solve(won, Budget(nodes=200_000))
    assert result.verdict == "won" and result.moves is not None
    replay_game = won.copy()
    for move in result.moves:
        replay_game.play(move)
    assert replay_game.status == WON


def test_colorado_restarts_stay_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Colorado's restarts are capped at ``longest_restart`` units (a win comes within
    the first couple of hundred positions of a run or not at all); uncapped, the Luby
    lengths grow within the same budget."""
    caps: list[int | None] = []
    real_search = search_module.search

    def recording(model: Any, root: Any, budget: Budget, shake: int | None = None) -> Any:
        if shake is not None:
            caps.append(budget.nodes)
        return real_search(model, root, budget, shake)

    monkeypatch.setattr(search_module, "search", recording)
    unit = ColoradoModel.restart_unit
    assert ColoradoModel.longest_restart == 2
    result = solve(new_game("colorado", "stats-54"), Budget(nodes=20_000))
    assert result.verdict == UNKNOWN
    assert max(cap or 0 for cap in caps) == 2 * unit
    caps.clear()
    monkeypatch.setattr(ColoradoModel, "longest_restart", None)
    solve(new_game("colorado", "stats-54"), Budget(nodes=20_000))
    assert max(cap or 0 for cap in caps) >= 8 * unit


def _colorado_six_trap() -> Game:
    """Colorado, stock empty, all but 15 clubs home: the ace pile holds A..5 (wants 6),
    the king pile K..8 (wants 7).  tableau[0] is a 6, tableau[1] a 7 under the other 6,
    tableau[2] the other 7 under the 8, tableau[3] A..5 under K..9 (9 on top).  Only the
    ace pile takes either 6; tableau[0]'s, the one that looks free to go, leaves both
    piles wanting a 7 with neither 7 free: stuck.  The win plays tableau[1]'s 6 instead:
    7 up, 8 up, the other 7 down, tableau[0]'s 6 down, then the rest."""
    game = won_position("colorado", "six-trap")
    ace = next(p for p in game.foundations[:4] if p[0] % 52 == 0)
    king = next(p for p in game.foundations[4:] if p[0] % 52 == 12)
    up, down = ace[5:], king[6:]  # ranks 6..K; ranks 7..A
    del ace[5:], king[6:]
    by_rank: dict[int, list[int]] = {}
    for card in up + down:
        by_rank.setdefault(card % 13 + 1, []).append(card)
    six, other_six = by_rank[6]
    seven, other_seven = by_rank[7]
    game.tableau[0][:] = [six]
    game.tableau[1][:] = [seven, other_six]
    game.tableau[2][:] = [other_seven, *by_rank[8]]
    game.tableau[3][:] = [by_rank[rank][0] for rank in (1, 2, 3, 4, 5, 13, 12, 11, 10, 9)]
    game.status = PLAYING
    game._refresh_status()
    return game


def test_a_card_only_one_foundation_takes_is_not_forced_there() -> None:
    """In :func:`_colorado_six_trap`, tableau[0]'s 6 goes only to the ace pile and the
    move triggers no refill, yet playing it loses: the model offers the other 6 too
    (such a move is safe only when the other copy is already home), and the solver wins."""
    game = _colorado_six_trap()
    assert plain_search(game) is True
    sixes = [move for move in game.legal_moves() if ">foundation" in move]
    assert sorted(move.split(">")[0] for move in sixes) == ["tableau[0]", "tableau[1]"]
    trap = game.copy()
    trap.play(sixes[0] if sixes[0].startswith("tableau[0]") else sixes[1])
    assert plain_search(trap) is False
    model = model_for(game)
    offered = {model.text(move) for move in model.moves(model.state_of(game))}
    assert set(sixes) <= offered
    result = solve(game, Budget(nodes=10_000))
    assert result.verdict == "won" and result.moves is not None
    for move in result.moves:
        game.play(move)
    assert game.status == WON


def test_a_paused_run_resumes_where_it_stopped() -> None:
    """A run paused every few hundred positions and resumed ends exactly as the same
    search run in one go: same verdict, positions and best score."""
    game = new_game("gloucestershire", "stats-170")
    model = model_for(game)
    root = model.state_of(game)
    whole = search(model, root, Budget())
    run = search_module._steps(model, root, 1_000, None)
    pauses = 0
    outcome = next(run)
    while True:
        assert outcome.verdict == UNKNOWN and outcome.nodes == 1_000 + 777 * pauses
        pauses += 1
        try:
            outcome = run.send(outcome.nodes + 777)
        except StopIteration as finished:
            outcome = finished.value
            break
    assert whole.verdict == LOST and pauses > 20
    assert (outcome.verdict, outcome.nodes, outcome.best_score) == (
        whole.verdict,
        whole.nodes,
        whole.best_score,
    )


def test_a_mostly_lost_game_keeps_a_complete_run_that_proves_its_losses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Gloucestershire ``stats-170`` is lost, and a complete search takes some 21,000
    positions: more than any restart of a 50,000-position budget.  The complete run,
    resumed after each restart with half of the budget, proves the loss; without its
    share the same budget leaves the deal unknown."""
    game = new_game("gloucestershire", "stats-170")
    result = solve(game, Budget(nodes=50_000))
    assert result.verdict == LOST and result.nodes <= 50_000
    monkeypatch.setattr(GloucestershireModel, "complete_share", 0.0)
    result = solve(game, Budget(nodes=50_000))
    assert result.verdict == UNKNOWN and result.nodes == 50_000


def test_a_run_cut_in_the_last_cascade_reports_the_win() -> None:
    """A search that reaches its limit while the deal's last cards can go up one by one
    plays them (Balcony `stats-548`: a restart spent its 500 positions on the position
    one move from the win, and the deal was reported unknown at 51 of 52 cards)."""
    game = new_game("balcony", "t1")
    line = solve(game, Budget(nodes=20_000)).moves
    assert line is not None and all(">foundation" in move for move in line[-3:])
    for move in line[:-3]:
        game.play(move)
    assert game.score == game.total_cards - 3
    model = model_for(game)
    outcome = search(model, model.state_of(game), Budget(nodes=1))
    assert outcome.verdict == "won" and outcome.line is not None
    for step in outcome.line:
        game.play(model.text(step))
    assert game.status == WON
