"""Properties of every game under random legal play, checked at every step.

Each example deals one game from a random seed and plays up to ``MAX_MOVES`` random legal
moves (favouring moves to a foundation, so that games get somewhere), checking at each
step:

* every card id of the decks lies in exactly one pile;
* the legal moves are exactly those a separate reading of RULES.md (``rules_say_legal``
  below, written from RULES.md and not from the engine) finds on the table;
* every listed move applies (checked every fifth step); a random move that is not listed
  is refused with IllegalMove and changes nothing;
* ``to_bytes`` writes the msgpack of the whole state, and ``load_game`` reads it back;
  the same seed and moves give the same hashes;
* the client view shows every face-up card and no face-down one (by card ids);
* the ops a move returns turn the previous view into the new one;
* the score is the number of cards on the foundations; the status is "won" exactly when
  every card is on a foundation and "stuck" exactly when nothing is legal otherwise.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.cards import RANKS, card_text
from server.rules import GAME_NAMES, IllegalMove, load_game, new_game
from server.rules.game import SERIAL_FORMAT, Game

MAX_MOVES = 300
SEED_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
seeds = st.text(alphabet=SEED_CHARS, min_size=1, max_size=24)
PROPERTY_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# -- RULES.md, read again from the table's card texts ------------------------------------

CARD_TEXTS = frozenset(card_text(face) for face in range(52))
MATRIMONY_FIRST_CARDS = ("QD", "JD", "JH", "JH", "10S", "10S", "10C", "10C")

#: Which kinds of pile a top card may go to, per game and source kind (RULES.md).
ROUTES: dict[str, dict[str, set[str]]] = {
    "balcony": {
        "tableau": {"tableau", "foundation"},
        "waste": {"tableau", "foundation"},
        "reserve": {"tableau", "foundation"},  # a tableau pile only when empty, see below
        "foundation": {"tableau"},
    },
    "empress_of_italy": {
        "tableau": {"tableau", "foundation"},
        "waste": {"tableau", "foundation"},
        "reserve": {"tableau", "foundation"},
        "foundation": {"tableau"},
    },
    "colorado": {"tableau": {"foundation"}, "stock": {"tableau", "foundation"}},
    "gloucestershire": {
        "tableau": {"tableau", "foundation"},
        "bouquet": {"tableau", "foundation"},
        "foundation": {"tableau"},
    },
    "matrimony": {"tableau": {"foundation"}},
}


def rank(card: str) -> int:
    return RANKS.index(card[:-1]) + 1


def red(card: str) -> bool:
    return card[-1] in "DH"


def follows(card: str, top: str, delta: int, wrap: bool, in_suit: bool) -> bool:
    """``card`` is one rank from ``top`` in direction ``delta``, in suit or other colour."""
    wanted = rank(top) + delta
    if not 1 <= wanted <= 13:
        if not wrap:
            return False
        wanted = (wanted - 1) % 13 + 1
    if rank(card) != wanted:
        return False
    return card[-1] == top[-1] if in_suit else red(card) != red(top)


def foundation_takes(name: str, table: dict[str, Any], index: int, card: str) -> bool:
    foundations = table["foundations"]
    pile = foundations[index]
    if name in ("balcony", "empress_of_italy"):
        if not pile:
            return rank(card) == rank(table["base_rank"] + "C")
        return len(pile) < 13 and follows(card, pile[-1], +1, wrap=True, in_suit=False)
    if name == "colorado":
        group = range(0, 4) if index < 4 else range(4, 8)
        if not pile:
            suits = {foundations[i][0][-1] for i in group if foundations[i]}
            return rank(card) == (1 if index < 4 else 13) and card[-1] not in suits
        delta = +1 if index < 4 else -1
        return len(pile) < 13 and follows(card, pile[-1], delta, wrap=False, in_suit=True)
    if name == "gloucestershire":
        if not pile:
            return rank(card) == 1 and card[-1] not in {f[0][-1] for f in foundations if f}
        return len(pile) < 26 and follows(card, pile[-1], +1, wrap=True, in_suit=True)
    assert name == "matrimony"
    if not pile:
        return card == MATRIMONY_FIRST_CARDS[index]
    delta = +1 if index == 0 else -1
    return len(pile) < 13 and follows(card, pile[-1], delta, wrap=True, in_suit=True)


def tableau_takes(name: str, table: dict[str, Any], index: int, card: str, source: str) -> bool:
    pile = table["tableau"][index]
    if name == "balcony":
        if not pile:
            return True
        return source != "reserve" and follows(card, pile[-1], -1, wrap=False, in_suit=False)
    if name == "empress_of_italy":
        if not pile:
            return not table["stock"] and not table["waste"]
        return follows(card, pile[-1], -1, wrap=False, in_suit=False)
    if name == "colorado":
        return source == "stock"
    if name == "gloucestershire":
        return not pile or follows(card, pile[-1], -1, wrap=True, in_suit=False)
    return False


def rules_say_legal(name: str, table: dict[str, Any]) -> set[str]:
    """The legal moves on ``table`` (a ``Game.table()``) as RULES.md reads."""
    piles: list[tuple[str, str, list[str]]] = []
    for kind, key in (("foundation", "foundations"), ("tableau", "tableau")):
        piles += [(f"{kind}[{i}]", kind, pile) for i, pile in enumerate(table[key])]
    for kind in ("reserve", "stock", "waste", "bouquet"):
        if kind in table:
            piles.append((kind, kind, table[kind]))
    moves = set()
    for source, source_kind, pile in piles:
        reach = ROUTES[name].get(source_kind, set())
        if not pile or not reach:
            continue
        card = pile[-1]
        for target, target_kind, _ in piles:
            if target == source or target_kind not in reach:
                continue
            index = int(target[target.index("[") + 1 : -1])
            if target_kind == "foundation" and foundation_takes(name, table, index, card):
                moves.add(f"{source}>{target}")
            if target_kind == "tableau" and tableau_takes(name, table, index, card, source_kind):
                moves.add(f"{source}>{target}")
    if name in ("balcony", "empress_of_italy", "matrimony") and table["stock"]:
        moves.add("deal")
    if name == "matrimony" and not table["stock"] and table["redeals_left"] > 0:
        moves.add("redeal")
    return moves


# -- the client's side: what it sees and how it applies ops ------------------------------


def pile_in_view(view: dict[str, Any], name: str) -> list[str]:
    if "[" in name:
        kind, index = name[:-1].split("[")
        return view["foundations" if kind == "foundation" else kind][int(index)]
    return view[name]


def apply_ops(view: dict[str, Any], ops: list[dict[str, Any]], move: str) -> dict[str, Any]:
    """What a client does with a move's ops: the new view from the old one."""
    view = copy.deepcopy(view)
    for op in ops:
        if op["op"] == "move":
            if op["from"] == "stock":
                if "top" in view["stock"]:
                    assert view["stock"]["top"] == op["card"]
                view["stock"]["count"] -= 1
            else:
                assert pile_in_view(view, op["from"]).pop() == op["card"]
            assert op["to"] != "stock"
            pile_in_view(view, op["to"]).append(op["card"])
        elif op["op"] == "reveal":
            assert op["pile"] == "stock"
            view["stock"]["top"] = op["card"]
        else:
            assert op["op"] == "set", op
            pile_in_view(view, op["pile"])[:] = op["cards"]
    if move == "redeal":  # the redeal counter is not a pile: the client counts its redeals
        view["redeals_left"] -= 1
    return view


def card_texts_in(data: Any) -> Counter[str]:
    """Every card text anywhere in a view, however deep (rank-only values aside)."""
    found: list[str] = []
    waiting = [data]
    while waiting:
        item = waiting.pop()
        if isinstance(item, dict):
            waiting += item.values()
        elif isinstance(item, list):
            waiting += item
        elif isinstance(item, str) and item in CARD_TEXTS:
            found.append(item)
    return Counter(found)


def face_up_cards(game: Game) -> list[int]:
    """Ids of the cards a player may see: all but the stock's, save Colorado's top."""
    stock_slot = game.slot("stock") if "stock" in game.single_piles else -1
    cards = [card for slot, pile in enumerate(game.piles) if slot != stock_slot for card in pile]
    if game.name == "colorado" and game.stock:
        cards.append(game.stock[-1])
    return cards


# -- the checks ----------------------------------------------------------------------------


def check_cards_are_conserved(game: Game) -> None:
    every_card = sorted(card for pile in game.piles for card in pile)
    assert every_card == list(range(52 * game.decks))


def check_view_hides_face_down_cards(game: Game) -> None:
    view = game.view()
    assert card_texts_in(view) == Counter(card_text(card) for card in face_up_cards(game))
    if "stock" in game.single_piles:
        expected = {"count": len(game.stock)}
        if game.name == "colorado":
            expected["top"] = card_text(game.stock[-1]) if game.stock else None
        assert view["stock"] == expected


def check_score_and_status(game: Game) -> None:
    on_foundations = sum(len(pile) for pile in game.table()["foundations"])
    assert game.score == on_foundations
    if game.status == "resigned":
        return
    everything_up = on_foundations == 52 * game.decks
    assert (game.status == "won") == everything_up
    assert (game.status == "stuck") == (not everything_up and not game.legal_moves())
    assert (game.status == "playing") == bool(game.legal_moves())


def check_round_trip(game: Game) -> None:
    # The bytes written from each pile's kept msgpack are those of the whole state at once.
    fields = (game.name, game.seed, game.status, game.moves_played, game.base_rank)
    whole = [SERIAL_FORMAT, *fields, game.redeals_left, game.piles]
    assert game.to_bytes() == msgpack.packb(whole)
    loaded = load_game(game.to_bytes())
    assert type(loaded) is type(game)
    assert loaded.to_bytes() == game.to_bytes()
    assert loaded.state_hash() == game.state_hash()
    assert loaded.table() == game.table()
    assert loaded.legal_moves() == game.legal_moves()
    assert (loaded.status, loaded.score) == (game.status, game.score)


PILE_ORDER = {"foundation": 0, "tableau": 1, "reserve": 2, "stock": 3, "waste": 4, "bouquet": 5}


def pile_order(name: str) -> tuple[int, int]:
    kind, _, index = name.rstrip("]").partition("[")
    return PILE_ORDER[kind], int(index or 0)


def check_legal_move_order(legal: list[str]) -> None:
    """Card moves by source pile then target pile (DIFF.md §2), then deal, then redeal."""
    card_moves = [move for move in legal if ">" in move]
    actions = [move for move in legal if ">" not in move]
    keys = [tuple(pile_order(pile) for pile in move.split(">")) for move in card_moves]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert legal == card_moves + actions
    assert actions in ([], ["deal"], ["redeal"], ["deal", "redeal"])


def check_listed_moves_apply(game: Game, moves: list[str]) -> None:
    for move in moves:
        trial = game.copy()
        trial.play(move)
        assert trial.to_bytes() != game.to_bytes()


def some_move_not_listed(game: Game, rnd: random.Random) -> str:
    names = [str(pile) for pile in game.piles_of_layout] + ["bouquet", "reserve", "tableau[30]"]
    choice = rnd.random()
    if choice < 0.1:
        return rnd.choice(["deal", "redeal"])
    return f"{rnd.choice(names)}>{rnd.choice(names)}"


def check_moves_not_listed_are_refused(game: Game, rnd: random.Random, tries: int = 4) -> None:
    listed = set(game.legal_moves())
    for _ in range(tries):
        move = some_move_not_listed(game, rnd)
        if move in listed:
            continue
        before = game.to_bytes()
        try:
            game.play(move)
        except IllegalMove as refused:
            assert refused.reason
        else:
            raise AssertionError(f"{move} is not listed but was played")
        assert game.to_bytes() == before
        assert set(game.legal_moves()) == listed


def choose(moves: list[str], rnd: random.Random) -> str:
    """A random move, with one to a foundation half the time when there is one."""
    upward = [move for move in moves if move.endswith("]") and ">foundation" in move]
    if upward and rnd.random() < 0.5:
        return rnd.choice(upward)
    return rnd.choice(moves)


def play_randomly(
    name: str,
    seed: str,
    rnd: random.Random,
    check_all: bool = True,
    resign_at: int | None = None,
) -> tuple[Game, list[str], list[str]]:
    """Play a random game checking every property (resigning at move ``resign_at``);
    return the game, the moves and the state hash after each move."""
    game = new_game(name, seed)
    moves_played: list[str] = []
    hashes = [game.state_hash()]
    for step in range(MAX_MOVES):
        table = game.table()
        legal = game.legal_moves()
        check_cards_are_conserved(game)
        check_score_and_status(game)
        if game.status != "playing":
            break
        if check_all:
            assert set(legal) == rules_say_legal(name, table), (name, seed, step)
            assert "resign" not in legal
            check_legal_move_order([str(move) for move in legal])
            check_view_hides_face_down_cards(game)
            check_round_trip(game)
            if step % 5 == 0:
                check_listed_moves_apply(game, legal)
            check_moves_not_listed_are_refused(game, rnd)
        move = "resign" if step == resign_at else choose(legal, rnd)
        before = game.view() if check_all else None
        ops = game.play(move)
        if before is not None:
            assert apply_ops(before, ops, move) == game.view(), (name, seed, move, ops)
        moves_played.append(move)
        hashes.append(game.state_hash())
    if check_all and game.status != "playing":
        assert game.legal_moves() == []
        check_moves_not_listed_are_refused(game, rnd)
        for move in ("resign", *(move for move in rules_say_legal(name, game.table()))):
            try:
                game.play(move)
            except IllegalMove as refused:
                assert refused.code == "game_over"
            else:
                raise AssertionError(f"{move} was played in a {game.status} game")
    return game, moves_played, hashes


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(GAME_NAMES),
    seed=seeds,
    choices=st.integers(0, 2**32 - 1),
    resign_at=st.none() | st.integers(0, MAX_MOVES),
)
def test_random_legal_play_keeps_every_rule_and_invariant(name, seed, choices, resign_at):
    play_randomly(name, seed, random.Random(choices), resign_at=resign_at)


@PROPERTY_SETTINGS
@given(name=st.sampled_from(GAME_NAMES), seed=seeds, choices=st.integers(0, 2**32 - 1))
def test_the_same_seed_and_moves_give_the_same_states(name, seed, choices):
    game, moves, hashes = play_randomly(name, seed, random.Random(choices), check_all=False)
    replay = new_game(name, seed)
    assert replay.state_hash() == hashes[0]
    halfway = len(moves) // 2
    for number, move in enumerate(moves, start=1):
        replay.play(move)
        assert replay.state_hash() == hashes[number]
        if number == halfway:  # a stored game goes on exactly like the original
            replay = load_game(replay.to_bytes())
    assert replay.to_bytes() == game.to_bytes()


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(GAME_NAMES), seed=seeds)
def test_every_deal_is_a_function_of_game_and_seed(name, seed):
    first, second = new_game(name, seed), new_game(name, seed)
    assert first.to_bytes() == second.to_bytes()
    assert first.state_hash() == second.state_hash()
    check_cards_are_conserved(first)
    check_view_hides_face_down_cards(first)
    check_score_and_status(first)
