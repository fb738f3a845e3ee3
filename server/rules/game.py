"""The table, moves and bookkeeping shared by the five games.

A game module subclasses :class:`Game` and says, in the words of RULES.md:

* its layout (how many foundations and tableau piles, which other piles);
* ``routes``: where a card from each kind of pile may go;
* ``deal_table(deck)``: how the shuffled deck is laid out;
* ``foundation_wants(i)`` / ``tableau_wants(i)``: which faces a pile takes next;
* optionally ``after_move`` (automatic refills), ``can_deal``/``deal``,
  ``can_redeal``/``redeal``, and the rule texts used in error messages.

Everything else (legal-move listing, applying a move, status, score, the
client view, serialisation, the state hash) lives here once.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import msgpack

from protocol.rng import shuffled_deck, validate_seed
from server.rules import cards
from server.rules.moves import DEAL, REDEAL, RESIGN, IllegalMove, Move, Pile

PLAYING, WON, STUCK, RESIGNED = "playing", "won", "stuck", "resigned"

#: ``foundation_wants``/``tableau_wants`` return this when any card is taken.
ANY: tuple[int, ...] = tuple(range(52))
NOTHING: tuple[int, ...] = ()

#: Route targets: a route to ``EMPTY_TABLEAU`` reaches only an empty tableau pile.
EMPTY_TABLEAU = "empty tableau"

#: A change to the table, as sent to clients (see ``protocol/DIFF.md``).
Op = dict[str, Any]

SERIAL_FORMAT = 1

#: JSON text of each card id's text (up to 4 decks), e.g. ``'"10H"'``.
_CARD_JSON = tuple(f'"{cards.FACE_TEXT[card % 52]}"' for card in range(52 * 4))


def _pile_json(pile: list[int]) -> str:
    return "[" + ",".join(map(_CARD_JSON.__getitem__, pile)) + "]"


#: msgpack of each card id (a positive fixint below 128, else uint 8).
_CARD_MSGPACK = tuple(msgpack.packb(card) for card in range(52 * 4))


def _array_header(length: int) -> bytes:
    """msgpack's header of an array of ``length`` (fixarray, else array 16)."""
    return bytes([0x90 | length]) if length < 16 else b"\xdc" + length.to_bytes(2, "big")


#: The array headers of every pile length (a pile holds at most 208 cards).
_ARRAY_HEADERS = tuple(_array_header(length) for length in range(52 * 4 + 1))


class Game:
    """A game in progress.  Create one with :func:`server.rules.new_game`."""

    name: ClassVar[str]
    title: ClassVar[str]
    decks: ClassVar[int]
    foundation_count: ClassVar[int]
    tableau_count: ClassVar[int]
    #: The single piles this game has, among reserve, stock, waste, bouquet.
    single_piles: ClassVar[tuple[str, ...]]
    #: Source kind -> the kinds of pile its top card may go to.
    routes: ClassVar[dict[str, tuple[str, ...]]]
    #: Most cards a foundation holds.
    foundation_size: ClassVar[int] = 13
    #: Whether the stock's top card is face up (Colorado).
    stock_face_up: ClassVar[bool] = False
    #: Whether what an empty foundation takes depends on the other foundations (the
    #: suits already started): then a change to any foundation renews what each takes.
    foundation_wants_read_all: ClassVar[bool] = False
    #: Rule texts for error messages: "foundation", "tableau", "empty foundation",
    #: "empty tableau"; ``{base}`` is replaced by the base rank.
    rule_texts: ClassVar[dict[str, str]]
    summary: ClassVar[str]
    pile_hints: ClassVar[dict[str, str]]

    # Filled in by __init_subclass__ from the layout.
    piles_of_layout: ClassVar[tuple[Pile, ...]]
    slot_of: ClassVar[dict[Pile, int]]
    _slot_names: ClassVar[tuple[str, ...]]
    _source_slots: ClassVar[tuple[int, ...]]
    _route_table: ClassVar[tuple[tuple[int, ...], ...]]
    _reaches_tableau: ClassVar[tuple[bool, ...]]
    #: Keys :meth:`table` may have, sorted (the canonical JSON's order).
    _table_keys: ClassVar[tuple[str, ...]]
    _single_slots: ClassVar[dict[str, int]]
    #: 0 for a foundation, 1 for a tableau pile, -1 for the others.
    _group_of_slot: ClassVar[tuple[int, ...]]
    _move_table: ClassVar[tuple[tuple[Move | None, ...], ...]]
    #: Per source slot: the slot, its rows of the two tables, whether it reaches the tableau.
    _source_rows: ClassVar[tuple[tuple[int, tuple[int, ...], tuple[Move | None, ...], bool], ...]]
    _move_slots: ClassVar[dict[str, tuple[int, int]]]
    #: Slots of the single piles (-1 when the game has no such pile).
    stock_slot: ClassVar[int]
    tableau_slots: ClassVar[range]
    foundation_slots: ClassVar[range]
    waste_slot: ClassVar[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return  # a family of games (games/base_rank.py), not a game
        layout = [Pile("foundation", i) for i in range(cls.foundation_count)]
        layout += [Pile("tableau", i) for i in range(cls.tableau_count)]
        layout += [Pile(kind) for kind in cls.single_piles]
        cls.piles_of_layout = tuple(layout)
        cls.slot_of = {pile: slot for slot, pile in enumerate(layout)}
        cls._slot_names = tuple(str(pile) for pile in layout)
        cls._source_slots = tuple(s for s, p in enumerate(layout) if p.kind in cls.routes)
        # _route_table[source][target]: 0 no route, 1 route, 2 route to an empty pile only.
        table = []
        for source in layout:
            row = []
            for target in layout:
                reach = cls.routes.get(source.kind, ())
                if source == target:
                    row.append(0)
                elif target.kind in reach:
                    row.append(1)
                elif target.kind == "tableau" and EMPTY_TABLEAU in reach:
                    row.append(2)
                else:
                    row.append(0)
            table.append(tuple(row))
        cls._route_table = tuple(table)
        cls._reaches_tableau = tuple(
            any(row[s] for s, p in enumerate(layout) if p.kind == "tableau") for row in table
        )
        cls._group_of_slot = tuple(
            {"foundation": 0, "tableau": 1}.get(pile.kind, -1) for pile in layout
        )
        cls._single_slots = {kind: cls.slot_of[Pile(kind)] for kind in cls.single_piles}
        cls._table_keys = tuple(
            sorted(["foundations", "tableau", "base_rank", "redeals_left", *cls.single_piles])
        )
        cls.foundation_slots = range(cls.foundation_count)
        cls.tableau_slots = range(cls.foundation_count, cls.foundation_count + cls.tableau_count)
        cls.stock_slot = cls.slot_of.get(Pile("stock"), -1)
        cls.waste_slot = cls.slot_of.get(Pile("waste"), -1)
        cls._move_slots = {
            str(Move.between(s, t)): (i, j)
            for i, s in enumerate(layout)
            for j, t in enumerate(layout)
            if table[i][j]
        }
        cls._move_table = tuple(
            tuple(Move.between(s, t) if table[i][j] else None for j, t in enumerate(layout))
            for i, s in enumerate(layout)
        )
        cls._source_rows = tuple(
            (s, cls._route_table[s], cls._move_table[s], cls._reaches_tableau[s])
            for s in cls._source_slots
        )

    def __init__(self, seed: str) -> None:
        """An empty table; :meth:`new` deals one."""
        self.seed = seed
        self.piles: list[list[int]] = [[] for _ in self.piles_of_layout]
        self.foundations = self.piles[: self.foundation_count]
        self.tableau = self.piles[
            self.foundation_count : self.foundation_count + self.tableau_count
        ]
        self.status = PLAYING
        self.moves_played = 0
        self.base_rank: int | None = None
        self.redeals_left: int | None = None
        # Each foundation and tableau pile: the rule saying what it takes, and its index.
        self._wanter_of: dict[int, tuple[Callable[[int], Sequence[int]], int]] = {
            **{slot: (self.foundation_wants, slot) for slot in self.foundation_slots},
            **{slot: (self.tableau_wants, i) for i, slot in enumerate(self.tableau_slots)},
        }
        # Canonical JSON pieces for state_hash (None where a pile changed), and each pile's
        # msgpack for to_bytes (b"" where it changed: a packed pile is never empty).
        self._pile_json: list[str | None] = []
        self._group_json: list[str | None] = []
        self._pile_msgpack: list[bytes] = []
        # What each foundation and tableau pile takes, kept until a move changes it, and
        # from that the piles taking each face (ascending), for legal_moves.
        self._wanted: dict[int, Sequence[int]] = {}
        self._takers: dict[int, list[int]] = {}
        self._takes_any: list[int] = []
        self._stale_wants: set[int] = set()
        self._score: int | None = None
        self._forget_kept()
        self._hash_prefix = '{"game":"' + self.name + '","seed":' + json.dumps(seed) + ","
        self._legal: list[Move] | None = None

    @classmethod
    def new(cls, seed: str) -> Game:
        """Deal a new game from ``seed`` (see ``protocol/RNG.md`` and ``protocol/DEALS.md``)."""
        game = cls(validate_seed(seed))
        game.deal_table(shuffled_deck(seed, cls.decks))
        game._refresh_status()
        return game

    # -- piles -------------------------------------------------------------

    def slot(self, kind: str, index: int | None = None) -> int:
        """Position of a pile in :attr:`piles`."""
        return self.slot_of[Pile(kind, index)]

    def pile(self, kind: str, index: int | None = None) -> list[int]:
        """The cards of a pile, bottom first (ids; see :mod:`server.rules.cards`)."""
        if index is None:
            return self.piles[self._single_slots[kind]]
        return self.piles[self.slot_of[Pile(kind, index)]]

    @property
    def reserve(self) -> list[int]:
        return self.pile("reserve")

    @property
    def stock(self) -> list[int]:
        return self.pile("stock")

    @property
    def waste(self) -> list[int]:
        return self.pile("waste")

    @property
    def bouquet(self) -> list[int]:
        return self.pile("bouquet")

    @property
    def score(self) -> int:
        """Cards on the foundations."""
        if self._score is None:
            self._score = sum(map(len, self.foundations))
        return self._score

    @property
    def total_cards(self) -> int:
        return 52 * self.decks

    @property
    def is_over(self) -> bool:
        return self.status != PLAYING

    # -- the rules each game supplies ----------------------------------------

    def deal_table(self, deck: list[int]) -> None:
        """Lay out the shuffled deck, taking cards from its front."""
        raise NotImplementedError

    def foundation_wants(self, index: int) -> Sequence[int]:
        """The faces ``foundation[index]`` takes next (:data:`ANY`, or a tuple)."""
        raise NotImplementedError

    def tableau_wants(self, index: int) -> Sequence[int]:
        """The faces ``tableau[index]`` takes next (:data:`ANY`, or a tuple)."""
        raise NotImplementedError

    def after_move(self, source: int, target: int) -> list[Op]:
        """Automatic actions triggered by a card move (slots); returns their ops."""
        return []

    def can_deal(self) -> str | None:
        """``None`` when ``deal`` is legal, else the reason it is not.

        By default a game with a waste deals one card from the stock onto it,
        in one pass (Balcony, Empress of Italy).
        """
        if "waste" not in self.single_piles:
            return f"{self.title} has no deal"
        return None if self.stock else "the stock is empty (one pass, no redeal)"

    def deal(self) -> list[Op]:
        return self._move_card(self.stock_slot, self.waste_slot)

    def can_redeal(self) -> str | None:
        """``None`` when ``redeal`` is legal, else the reason it is not."""
        return f"{self.title} has no redeal"

    def redeal(self) -> list[Op]:
        raise NotImplementedError

    # -- legal moves ---------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Every legal card move, then ``deal``/``redeal`` when legal (never ``resign``)."""
        if self._legal is None:
            self._legal = self._generate_moves() if self.status == PLAYING else []
        return list(self._legal)

    def _generate_moves(self) -> list[Move]:
        piles = self.piles
        takers, takes_any = self._current_takers()
        moves: list[Move] = []
        for source, routes, row, reaches_tableau in self._source_rows:
            pile = piles[source]
            if not pile:
                continue
            targets: Sequence[int] = takers.get(pile[-1] % 52, ())
            if takes_any and reaches_tableau:
                targets = sorted([*targets, *takes_any])
            for target in targets:
                route = routes[target]
                if route == 1 or (route == 2 and not piles[target]):
                    move = row[target]
                    assert move is not None
                    moves.append(move)
        if self.can_deal() is None:
            moves.append(DEAL)
        if self.can_redeal() is None:
            moves.append(REDEAL)
        return moves

    def _current_takers(self) -> tuple[dict[int, list[int]], list[int]]:
        """Face -> the piles taking it, and the piles taking any card (each ascending),
        renewed for the piles whose wants went stale (a move touches two or three)."""
        stale = self._stale_wants
        if stale:
            takers, takes_any, wanted = self._takers, self._takes_any, self._wanted
            for slot in stale:
                old = wanted.get(slot)
                if old is ANY:
                    takes_any.remove(slot)
                elif old is not None:
                    for face in old:
                        takers[face].remove(slot)
                wants, index = self._wanter_of[slot]
                new = wanted[slot] = wants(index)
                if new is ANY:
                    bisect.insort(takes_any, slot)
                else:
                    for face in new:
                        bisect.insort(takers.setdefault(face, []), slot)
            stale.clear()
        return self._takers, self._takes_any

    def is_legal(self, move: Move | str) -> bool:
        """Whether ``move`` is legal now: ``move in legal_moves()`` (or ``resign``
        while playing), decided without listing every move."""
        if self.status != PLAYING:
            return False
        if not isinstance(move, Move):
            move = Move(move)
        if move == RESIGN:
            return True
        if move == DEAL:
            return self.can_deal() is None
        if move == REDEAL:
            return self.can_redeal() is None
        slots = self._move_slots.get(move)
        if slots is None:
            return False  # no such pile, or no route between the two
        source, target = slots
        pile = self.piles[source]
        if not pile or (self._route_table[source][target] == 2 and self.piles[target]):
            return False
        wants, index = self._wanter_of[target]
        wanted = wants(index)
        return wanted is ANY or pile[-1] % 52 in wanted

    def _has_a_move(self) -> bool:
        if self._legal is not None:
            return bool(self._legal)
        if self.can_deal() is None or self.can_redeal() is None:
            return True
        return bool(self.legal_moves())

    # -- playing -------------------------------------------------------------

    def play(self, move: Move | str) -> list[Op]:
        """Apply a move (a :class:`Move` or its text); return the changes it made.

        Raises :class:`IllegalMove` saying why, and leaves the game unchanged,
        when the move is not legal.
        """
        if not isinstance(move, Move):
            move = Move(move)
        if move == RESIGN:
            if self.status != PLAYING:
                raise IllegalMove(f"the game is over ({self.status})", "game_over")
            self.status = RESIGNED
            self.moves_played += 1
            self._legal = []
            return []
        if not self.is_legal(move):
            raise IllegalMove(*self.explain(move))
        if move == DEAL:
            ops = self.deal()
        elif move == REDEAL:
            ops = self.redeal()
        else:
            source, target = self._move_slots[move]
            ops = self._move_card(source, target)
            ops += self.after_move(source, target)
        self.moves_played += 1
        self._update_status()
        return ops

    def _move_card(self, source: int, target: int) -> list[Op]:
        source_pile, target_pile = self.piles[source], self.piles[target]
        card = source_pile.pop()
        target_pile.append(card)
        # The two piles' kept JSON and msgpack follow the card (a stock or waste pile
        # holds up to 160 cards: writing it again would cost more than the move).
        json_texts, packed = self._pile_json, self._pile_msgpack
        card_json, card_msgpack = _CARD_JSON[card], _CARD_MSGPACK[card]
        text = json_texts[source]
        if text is not None:
            cut = len(card_json) + 1 if source_pile else len(card_json)
            json_texts[source] = text[: -1 - cut] + "]"
        text = json_texts[target]
        if text is not None:
            comma = "," if len(target_pile) > 1 else ""
            json_texts[target] = text[:-1] + comma + card_json + "]"
        headers = _ARRAY_HEADERS
        data = packed[source]
        if data:
            left = len(source_pile)
            body = data[len(headers[left + 1]) : -len(card_msgpack)]
            packed[source] = headers[left] + body
        data = packed[target]
        if data:
            count = len(target_pile)
            packed[target] = headers[count] + data[len(headers[count - 1]) :] + card_msgpack
        self._changed(source, target)
        return [self.move_op(source, target, card)]

    def move_op(self, source: int, target: int, card: int) -> Op:
        return {
            "op": "move",
            "from": self._slot_names[source],
            "to": self._slot_names[target],
            "card": cards.text(card),
        }

    def _refresh_status(self) -> None:
        """Recompute everything derived from the piles: call it after editing
        :attr:`piles` by hand (moves keep it up to date themselves)."""
        self._forget_kept()
        self._update_status()

    def _update_status(self) -> None:
        self._legal = None
        if self.score == self.total_cards:
            self.status = WON
        elif not self._has_a_move():
            self.status = STUCK

    def explain(self, move: Move) -> tuple[str, str]:
        """Why ``move`` is illegal now: ``(reason, code)``."""
        if self.status != PLAYING:
            return f"the game is over ({self.status})", "game_over"
        if move == DEAL:
            return self.can_deal() or "deal is not legal now", "no_deal"
        if move == REDEAL:
            return self.can_redeal() or "redeal is not legal now", "no_redeal"
        assert move.source is not None and move.target is not None
        for pile in (move.source, move.target):
            if pile not in self.slot_of:
                return f"{self.title} has no {pile}", "no_such_pile"
        source, target = self.slot_of[move.source], self.slot_of[move.target]
        if source == target:
            return "a card cannot move onto its own pile", "same_pile"
        kind = move.source.kind
        if kind not in self.routes:
            if kind == "stock" and self.can_deal() is None:
                return "cards leave the stock only by 'deal'", "wrong_source"
            return f"no card may be moved from the {kind} in {self.title}", "wrong_source"
        if not self.piles[source]:
            return f"{move.source} is empty", "empty_source"
        card = self.piles[source][-1]
        route = self._route_table[source][target]
        if route == 0:
            reach = " or ".join(
                "an empty tableau pile" if r == EMPTY_TABLEAU else f"a {r}"
                for r in self.routes[kind]
            )
            return f"a card from the {kind} may go only to {reach}", "wrong_target"
        if route == 2 and self.piles[target]:
            return f"a card from the {kind} may go to a tableau pile only when it is empty", (
                "wrong_target"
            )
        target_pile = self.piles[target]
        target_kind = move.target.kind
        base = cards.rank_text(self.base_rank) if self.base_rank else ""
        if not target_pile:
            rule = self.rule_texts.get(f"empty {target_kind}", "").format(base=base)
            return f"{cards.pretty(card)} cannot go on empty {move.target}: {rule}", "not_accepted"
        if target_kind == "foundation" and len(target_pile) >= self.foundation_size:
            return f"{move.target} is complete ({self.foundation_size} cards)", "not_accepted"
        rule = self.rule_texts[target_kind].format(base=base)
        top = cards.pretty(target_pile[-1])
        return f"{cards.pretty(card)} cannot go on {top}: {rule}", "not_accepted"

    # -- what can be seen ----------------------------------------------------

    def table(self) -> dict[str, Any]:
        """The full state as plain data (card texts, piles bottom first)."""
        return self._plain(hide_stock=False)

    def view(self) -> dict[str, Any]:
        """What a player may see: the table with the face-down stock as a count.

        See ``protocol/VIEW.md``.  Colorado's face-up stock top is included.
        """
        return self._plain(hide_stock=True)

    def _plain(self, hide_stock: bool) -> dict[str, Any]:
        texts = cards.FACE_TEXT
        plain: dict[str, Any] = {
            "foundations": [[texts[c % 52] for c in pile] for pile in self.foundations],
            "tableau": [[texts[c % 52] for c in pile] for pile in self.tableau],
        }
        for kind in self.single_piles:
            pile = self.pile(kind)
            if kind == "stock" and hide_stock:
                stock: dict[str, Any] = {"count": len(pile)}
                if self.stock_face_up:
                    stock["top"] = texts[pile[-1] % 52] if pile else None
                plain["stock"] = stock
            else:
                plain[kind] = [texts[c % 52] for c in pile]
        if self.base_rank is not None:
            plain["base_rank"] = cards.rank_text(self.base_rank)
        if self.redeals_left is not None:
            plain["redeals_left"] = self.redeals_left
        return plain

    def state_hash(self) -> str:
        """SHA-256 (hex) of the canonical JSON of game, seed, status and table.

        Canonical JSON: keys sorted, no whitespace, ASCII (``protocol/STATE.md``);
        written here directly rather than through ``json.dumps(..., sort_keys=True)``
        (the same text, a test checks) because audits hash every position.
        The seed is in it so that, while the seed is secret, nobody can find the
        order of the last few stock cards by trying each against a published hash.
        """
        fields = []
        for key in self._table_keys:
            if key == "foundations" or key == "tableau":
                group = 0 if key == "foundations" else 1
                value = self._group_json[group] or self._build_group_json(group)
            elif key == "base_rank":
                if self.base_rank is None:
                    continue
                value = '"' + cards.rank_text(self.base_rank) + '"'
            elif key == "redeals_left":
                if self.redeals_left is None:
                    continue
                value = str(self.redeals_left)
            else:
                slot = self._single_slots[key]
                value = self._pile_json[slot] or self._build_pile_json(slot)
            fields.append(f'"{key}":{value}')
        canonical = f'{self._hash_prefix}"status":"{self.status}","table":{{{",".join(fields)}}}}}'
        return hashlib.sha256(canonical.encode()).hexdigest()

    # Each pile's canonical JSON, and each group's (foundations, tableau), is kept
    # until a move changes it: a move touches two or three of up to 30 piles.

    def _build_pile_json(self, slot: int) -> str:
        text = self._pile_json[slot] = _pile_json(self.piles[slot])
        return text

    def _build_group_json(self, group: int) -> str:
        slots = self.foundation_slots if group == 0 else self.tableau_slots
        texts = [self._pile_json[slot] or self._build_pile_json(slot) for slot in slots]
        text = self._group_json[group] = "[" + ",".join(texts) + "]"
        return text

    def _changed(self, *slots: int) -> None:
        """A card moved between ``slots``, whose own JSON and msgpack the mover brought up
        to date: forget what derives from them (their group's JSON, what they take, the
        score)."""
        for slot in slots:
            group = self._group_of_slot[slot]
            if group >= 0:
                self._group_json[group] = None
                self._stale_wants.add(slot)
                if group == 0:
                    self._score = None
                    if self.foundation_wants_read_all:
                        self._stale_wants.update(self.foundation_slots)

    def _forget_kept(self) -> None:
        """Forget everything kept about the piles (after they changed in place)."""
        self._pile_json = [None] * len(self.piles)
        self._group_json = [None, None]
        self._pile_msgpack = [b""] * len(self.piles)
        self._wanted.clear()
        self._takers.clear()
        self._takes_any.clear()
        self._stale_wants.update(self._wanter_of)
        self._score = None

    # -- storage -------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The full state (stock order included: server side only) as msgpack: the array
        ``[format, name, seed, status, moves played, base rank, redeals left, piles]``.

        Written from each pile's msgpack, kept until a move changes the pile (a move
        touches two or three of up to 30), as the same bytes ``msgpack.packb`` would
        write for the whole list (a test checks)."""
        packed = self._pile_msgpack
        for slot, pile in enumerate(self.piles):
            if not packed[slot]:
                packed[slot] = msgpack.packb(pile)
        fields = msgpack.packb(
            [
                SERIAL_FORMAT,
                self.name,
                self.seed,
                self.status,
                self.moves_played,
                self.base_rank,
                self.redeals_left,
            ]
        )
        # fields is a fixarray of 7 (0x97): make it 8 long and append the piles' array.
        return b"\x98" + fields[1:] + _ARRAY_HEADERS[len(packed)] + b"".join(packed)

    @classmethod
    def from_bytes(cls, data: bytes) -> Game:
        """The inverse of :meth:`to_bytes` (``cls`` is the game's class)."""
        fmt, name, seed, status, moves_played, base_rank, redeals_left, piles = msgpack.unpackb(
            data
        )
        if fmt != SERIAL_FORMAT or name != cls.name or len(piles) != len(cls.piles_of_layout):
            raise ValueError(f"not a stored {cls.name} game")
        game = cls(seed)
        for slot, pile in enumerate(piles):
            game.piles[slot][:] = pile
        game.status, game.moves_played = status, moves_played
        game.base_rank, game.redeals_left = base_rank, redeals_left
        return game

    def copy(self) -> Game:
        return type(self).from_bytes(self.to_bytes())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} seed={self.seed!r} {self.status} score={self.score}>"
