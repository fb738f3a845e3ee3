"""Stock luck: did the hidden cards come to a table prepared for exactly them?

A player who knows the stock order arranges the table for the cards that are coming: keeps
a foundation or a pile waiting for the card that will arrive, turns the stock when the card
that comes fits, leaves alone the pile the next card needs.  A player who sees only the
table cannot do that: whatever they prepared, the card a ``deal`` turns is, from their
point of view, any of the cards they have not seen, each as likely as the next.

So at every **reveal** (a move after which a card the view did not show becomes visible:
Balcony's and Empress of Italy's ``deal`` to the waste, Colorado's new stock top,
Matrimony's deal of 16) the card that came is measured against every card that could have
come, on the same table: its **fit** is a fixed function of the position the player can see
after the move (:func:`fit`: cards that go to the foundations at once, then the moves that
open up).  ``expected`` is the mean fit over the cards the player had not seen (all of them
when one card is revealed; :data:`REVEAL_SAMPLES` orders drawn by
:func:`advice_rng` when several are), ``variance`` its variance.

For an honest player, whatever their strategy, the luck ``fit - expected`` of each reveal
has mean zero given everything before it (the stock order is a uniform shuffle they never
saw), so the sum over the game is a martingale, and ``z = sum(luck) / sqrt(sum(variance))``
is about standard normal: a fair player's z exceeds :data:`Z_THRESHOLD` = 3 about once in
700 games, however strong or weak they are.  A player who knew the order gets the cards
their table was waiting for far more often than chance: their z grows with every reveal.

Reveals after a ``redeal`` (Matrimony) are not counted: the order of a redealt stock
follows from the table, so the player may know it honestly.  Pure and deterministic; no
solver search, so it costs milliseconds per reveal (``BENCHMARKS.md``).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from dataclasses import dataclass

from server.rules import GAMES, PLAYING, RESIGN, Game, IllegalMove, Move, new_game
from server.rules.cards import text as card_text
from server.solver import game_from_view
from server.solver.fair import hidden_cards

#: Stock orders drawn for a reveal of several cards at once (Matrimony's deal).
REVEAL_SAMPLES = 24
#: The z score at which the signal fires (one-sided p about 0.0013 for a fair player)...
Z_THRESHOLD = 3.0
#: ...given at least this many reveals.
MIN_REVEALS = 8
#: Moves replayed per game, at most (bounds the cost).
MAX_MOVES = 1_000
#: Weight of each legal move (not deal/redeal/resign) after the reveal in the fit, beside
#: each card that goes to the foundations at once.
MOVE_WEIGHT = 0.1


@dataclass(frozen=True)
class Reveal:
    """One reveal: ``version`` of the move, the ``cards`` it showed (texts), their ``fit``
    and the ``expected`` fit and ``variance`` over the cards that could have come."""

    version: int
    cards: tuple[str, ...]
    fit: float
    rank: float
    variance: float

    @property
    def luck(self) -> float:
        return self.rank - 0.5


@dataclass(frozen=True)
class StockLuck:
    """The reveals of one game and their z score."""

    reveals: list[Reveal]

    @property
    def luck(self) -> float:
        return sum(reveal.luck for reveal in self.reveals)

    @property
    def z(self) -> float:
        variance = sum(reveal.variance for reveal in self.reveals)
        return self.luck / math.sqrt(variance) if variance > 0 else 0.0

    @property
    def fires(self) -> bool:
        return len(self.reveals) >= MIN_REVEALS and self.z >= Z_THRESHOLD

    def luckiest(self, count: int) -> list[Reveal]:
        """The ``count`` reveals with the most luck, in version order."""
        chosen = sorted(self.reveals, key=lambda reveal: -reveal.luck)[:count]
        return sorted(chosen, key=lambda reveal: reveal.version)


def advice_rng(seed: str, version: int) -> random.Random:
    """The sampler for a reveal of several cards at ``version``: a function of the deal's
    seed and the version only, so every audit of a game draws the same orders."""
    digest = hashlib.sha256(f"stock-luck\n{seed}\n{version}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def cascade(game: Game) -> int:
    """Cards that go to the foundations one after another from ``game`` (the first legal
    move to a foundation each time; no deal).  Stops after a move that takes a card from
    the stock (Colorado's top): what comes next is hidden, and the fit must not see it.
    Plays on ``game``."""
    count = 0
    while game.status == PLAYING and count < 200:
        move = next((m for m in game.legal_moves() if ">foundation" in m), None)
        if move is None:
            break
        stock = len(game.stock)
        game.play(move)
        count += 1
        if len(game.stock) != stock:
            break
    return count


def fit(game: Game) -> float:
    """How well the table suits the cards just revealed: the cards that then go to the
    foundations at once, plus :data:`MOVE_WEIGHT` per move open (not deal, redeal, resign).
    A function of what the player sees (the hidden stock is never dealt here)."""
    moves = sum(1 for move in game.legal_moves() if ">" in move)
    return cascade(game.copy()) + MOVE_WEIGHT * moves


def _revealed(before: list[int], after: list[int]) -> list[int]:
    """Faces hidden before and shown after (a multiset difference of card faces)."""
    gone = Counter(card % 52 for card in before) - Counter(card % 52 for card in after)
    return sorted(gone.elements())


def _fits_if(name: str, view: dict, move: str, stock: list[int]) -> float:
    """The fit after ``move`` on the table of ``view`` had the hidden stock been ``stock``."""
    game = game_from_view(name, view, stock)
    game.play(move)
    return fit(game)


def _reveal(game: Game, view: dict, move: str, version: int, shown: list[int]) -> Reveal | None:
    """The reveal of ``shown`` by ``move`` (already played on ``game``; ``view`` is the view
    before it)."""
    name = game.name
    hidden = hidden_cards(name, view)
    values: list[tuple[float, int]] = []  # (fit, weight)
    try:
        if len(shown) == 1:
            # Every card the player had not seen, turned instead (the next card dealt is
            # the stock's last).
            by_face: dict[int, list[int]] = {}
            for card in hidden:
                by_face.setdefault(card % 52, []).append(card)
            for cards in by_face.values():
                rest = list(hidden)
                rest.remove(cards[0])
                values.append((_fits_if(name, view, move, [*rest, cards[0]]), len(cards)))
        else:
            rng = advice_rng(game.seed, version)
            for _ in range(REVEAL_SAMPLES):
                stock = list(hidden)
                rng.shuffle(stock)
                values.append((_fits_if(name, view, move, stock), 1))
    except (ValueError, IllegalMove):
        return None
    actual = fit(game)
    total = sum(weight for _, weight in values)
    below = sum(weight for value, weight in values if value < actual) / total
    equal = sum(weight for value, weight in values if value == actual) / total
    shares: dict[float, float] = {}
    for value, weight in values:
        shares[value] = shares.get(value, 0.0) + weight / total
    # The mid-rank of the card that came among the cards that could have: uniform-like,
    # mean 1/2 exactly for a fair player; variance (1 - sum of p^3) / 12 over the distinct
    # fits' probabilities p.
    rank = below + equal / 2
    variance = (1 - sum(share**3 for share in shares.values())) / 12
    return Reveal(version, tuple(map(card_text, shown)), actual, rank, variance)


def stock_luck(name: str, seed: str, moves: list[tuple[int, str]]) -> StockLuck:
    """The reveals of the replay of ``moves`` (``(version, move text)`` in version order)
    from the deal of ``seed``.  Stops at an illegal move, at ``resign``, at a ``redeal``
    and after :data:`MAX_MOVES` moves."""
    reveals: list[Reveal] = []
    if "stock" not in GAMES[name].single_piles:
        return StockLuck(reveals)
    game = new_game(name, seed)
    for version, text in moves[:MAX_MOVES]:
        if game.status != PLAYING:
            break
        try:
            played = Move(text)
        except ValueError:
            break
        if played == RESIGN or played == "redeal":
            break
        view = game.view()
        before = hidden_cards(name, view)
        try:
            game.play(played)
        except IllegalMove:
            break
        shown = _revealed(before, hidden_cards(name, game.view()))
        if shown:
            reveal = _reveal(game, view, played, version, shown)
            if reveal is not None and reveal.variance > 0:
                reveals.append(reveal)
    return StockLuck(reveals)
