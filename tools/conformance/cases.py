"""The case list: what each case sets up on the real server, the steps it asks of the
client, the faults its proxy hooks make, and what it checks beyond the common checks
(every step's result, every reported state against the server's, the client's frames
against ``/asyncapi.json``, convergence, and how many moves the server applied)."""

from __future__ import annotations

import asyncio
import functools
import random
from typing import TYPE_CHECKING, Any

from server.rules import GAME_NAMES, new_game
from server.rules.game import PLAYING
from server.rules.moves import IllegalMove
from server.rules.undo import Timeline
from server.store import PATCH_HISTORY, PATCH_TRIM_EVERY
from tools.conformance.steps import (
    Step,
    accepted,
    move,
    open_game,
    refused,
    refused_or_accepted,
    subscribe,
    sync,
)

if TYPE_CHECKING:
    from tools.conformance.kit import Run
    from tools.conformance.proxy import Link

#: Close codes of WEBSOCKET.md.
POLICY = 1008
TRY_AGAIN_LATER = 1013
SERVICE_RESTART = 1012
#: More moves than the server keeps patches of (the last 200, up to 15 more between trims).
TOO_MANY_MOVES = PATCH_HISTORY + PATCH_TRIM_EVERY + 5


class Case:
    """A scripted behaviour of the server.  Subclasses set the text and override hooks."""

    id = ""
    title = ""
    description = ""
    #: The client must end holding the server's state of the game it was given.
    converges = True
    #: How many moves the server must have applied in the end (``None``: not checked).
    moves: int | None = None

    async def setup(self, run: Run) -> list[Step]:
        raise NotImplementedError

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        """Runs once the client reported step ``index``, before it takes the next one."""

    async def on_connect(self, run: Run, link: Link) -> bool:
        return True

    async def client_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        return True

    async def server_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        return True

    async def before_verdict(self, run: Run) -> None:
        """Runs when the client says it is done, before the run is judged."""

    async def check(self, run: Run) -> list[str]:
        return []


# -- deals the scripted moves can be played on ----------------------------------------


@functools.cache
def seed_for(game: str, script: tuple[str | None, ...]) -> str:
    """The first seed ``conformance-N`` of ``game`` on which every move of ``script``
    (``None``: the first legal move) is legal and the game is still being played after
    each: the client's scripted moves cannot hit the end of the game."""
    for number in range(500):
        seed = f"conformance-{number}"
        timeline = Timeline(new_game(game, seed))
        try:
            for text in script:
                legal = [str(m) for m in timeline.game.legal_moves()]
                if not legal:
                    break
                timeline.play(text or legal[0])
                if timeline.game.status != PLAYING:
                    break
            else:
                return seed
        except IllegalMove:
            continue
    raise RuntimeError(f"no seed of {game} plays {script}")


@functools.cache
def long_playout(moves: int) -> tuple[str, tuple[str, ...]]:
    """A Gloucestershire seed and ``moves`` random legal moves from it, the game still
    being played after them (cards go to and fro: longer than the patch history)."""
    for number in range(100):
        seed = f"conformance-long-{number}"
        game = new_game("gloucestershire", seed)
        rng = random.Random(seed)
        played: list[str] = []
        while game.status == PLAYING and len(played) < moves:
            text = str(rng.choice(game.legal_moves()))
            game.play(text)
            played.append(text)
        if len(played) == moves and game.status == PLAYING:
            return seed, tuple(played)
    raise RuntimeError("no long enough playout")


def first_legal(game: str, seed: str) -> str:
    return str(new_game(game, seed).legal_moves()[0])


# -- playing ---------------------------------------------------------------------------


class Play(Case):
    """Plain play of one game: every kind of op of that game, and an undo."""

    SCRIPT: tuple[str | None, ...] = (None, None, None, None, "undo", None, None)

    def __init__(self, game: str) -> None:
        self.game = game
        self.id = f"play.{game}"
        self.title = f"Play {game}"
        self.description = (
            f"Seven moves of {game} (the first legal move each time, an undo among them), "
            "each accepted with its patch; the copy follows every version."
        )
        self.moves = len(self.SCRIPT)

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game(self.game, seed_for(self.game, self.SCRIPT))
        steps = [open_game()]
        steps += [move(text) for text in self.SCRIPT]
        return steps

    async def check(self, run: Run) -> list[str]:
        subscribes = len(run.sent("subscribe"))
        if subscribes != 1:
            # Each accepted brings the legal moves of its version: nothing to ask for.
            return [f"the client subscribed {subscribes} times where once was enough"]
        return []


# -- faults of the network ---------------------------------------------------------------


class ReplyLost(Case):
    id = "reply.lost"
    title = "A dropped accepted after the move was applied"
    description = (
        "The server applies the client's second move, but its accepted is dropped and the "
        "socket cut (1006). The client must reconnect, subscribe again with its version, "
        "send the move again with the same move_id (answered as a duplicate: it is applied "
        "once), and converge."
    )
    moves = 3

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", seed_for("balcony", (None, None, None)))
        run.notes["accepted"] = 0
        return [open_game(), move(), move(), move()]

    async def server_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if message["type"] != "accepted":
            return True
        run.notes["accepted"] += 1
        if run.notes["accepted"] == 2:
            run.notes["lost"] = message["move_id"]
            link.abort()
            return False
        return True

    async def check(self, run: Run) -> list[str]:
        lost = run.notes.get("lost")
        if lost is None:
            return ["the kit never dropped an accepted"]
        links = {link for link, message in run.sent("move") if message["move_id"] == lost}
        if len(links) < 2:
            return ["the move whose reply was lost was not sent again with the same move_id"]
        return []


class PatchGap(Case):
    id = "patch.gap"
    title = "A version gap"
    description = (
        "Another tab makes three moves; the kit drops the patch of the first. The client "
        "sees a patch two versions ahead: it must subscribe again with its version, apply "
        "the missed patches, and converge."
    )
    moves = 5

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("colorado", seed_for("colorado", (None,) * 5))
        return [open_game(), move(), sync(4), move()]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index == 1:
            await run.other_tab_moves(3)

    async def server_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if message["type"] == "patch" and message["v"] == 2 and not run.notes.get("dropped"):
            run.notes["dropped"] = True
            return False
        return True

    async def check(self, run: Run) -> list[str]:
        resubscribed = [m for _, m in run.sent("subscribe") if m.get("version") == 1]
        if not resubscribed:
            return ["the client did not subscribe again with version 1 after the gap"]
        return []


class HistoryTooOld(Case):
    id = "history.too_old"
    title = "A patch history too old: snapshot fallback"
    description = (
        f"While the client cannot reach the server, {TOO_MANY_MOVES} moves are made from "
        f"another socket (the server keeps the last {PATCH_HISTORY} patches). The client "
        "reconnects, subscribes with its version, gets a snapshot instead of patches, and "
        "converges; "
        "then it moves."
    )
    moves = TOO_MANY_MOVES + 1

    async def setup(self, run: Run) -> list[Step]:
        seed, _ = long_playout(TOO_MANY_MOVES)
        await run.start_game("gloucestershire", seed)
        return [open_game(), sync(TOO_MANY_MOVES), move()]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index != 0:
            return
        _, played = long_playout(TOO_MANY_MOVES)
        run.refuse = True
        run.cut_links()
        try:
            await run.socket_moves(list(played), 0)
        finally:
            run.refuse = False

    async def check(self, run: Run) -> list[str]:
        later = [entry for entry in run.frames if entry["link"] > 0]
        snapshots = [
            e
            for e in later
            if e["dir"] == "recv" and isinstance(e["message"], dict)
            if e["message"].get("type") == "snapshot"
        ]
        if not snapshots:
            return ["the client did not resync from a snapshot after reconnecting"]
        return []


class SecondTab(Case):
    id = "tab.second"
    title = "A second tab moving"
    description = (
        "The same player moves twice from another socket. The client applies both patches "
        "(its legal moves are unknown after them, never stale), then moves with the legal "
        "moves of the version it holds."
    )
    moves = 4

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("empress_of_italy", seed_for("empress_of_italy", (None,) * 4))
        return [open_game(), move(), sync(3), move()]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index == 1:
            await run.other_tab_moves(2)


class DuplicateMoveId(Case):
    id = "move_id.duplicate"
    title = "A duplicate move_id"
    description = (
        "The client sends a move, then sends a move with the same move_id again. Meanwhile "
        "another tab moved and the kit dropped that patch: the duplicate's accepted "
        "(duplicate: true, no patch, the game's current version) is the only sign that the "
        "client is behind. It must not apply anything twice and must catch up."
    )
    moves = 2

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", seed_for("balcony", (None, None)))
        move_id = f"conformance-{run.id}"
        return [
            open_game(),
            move(move_id=move_id),
            move(
                move_id=move_id,
                expect=accepted(duplicate=True, version=2),
                wanted="accepted as a duplicate, at version 2",
            ),
            sync(2),
        ]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index == 1:
            await run.other_tab_moves(1)

    async def server_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if message["type"] == "patch" and message["v"] == 2 and not run.notes.get("dropped"):
            run.notes["dropped"] = True  # the live one; a resync brings it again
            return False
        return True


class SocketClosed(Case):
    """The socket goes away mid-game; moves are made meanwhile; the client reconnects."""

    #: Moves made while the client is away: enough that a client asking again for each
    #: patch's legal moves shows (a subscribe storm), few enough for the patch history.
    MISSED = 12
    moves = 2 + MISSED + 1

    def __init__(self, id: str, how: str, code: int | None) -> None:
        self.id = id
        self.code = code
        self.title = f"A close mid-game ({how}) and reconnect"
        self.description = (
            f"After two moves the socket is {how}; while the client cannot reconnect "
            f"{self.MISSED} moves are made from another socket. The client reconnects, "
            f"subscribes with its version, gets exactly the {self.MISSED} missed patches (no "
            "snapshot), and moves on."
        )

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("matrimony", seed_for("matrimony", (None,) * self.moves))
        return [open_game(), move(), move(), sync(2 + self.MISSED), move()]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index != 2:
            return
        run.refuse = True
        if self.code is None:
            run.cut_links()
        else:
            await run.close_links(self.code, "the conformance kit closes")
        try:
            await run.other_tab_moves(self.MISSED)
        finally:
            run.refuse = False

    async def check(self, run: Run) -> list[str]:
        problems = []
        after = [(link, m) for link, m in run.sent("subscribe") if link > 0]
        if not any(m.get("version") == 2 for _, m in after):
            problems.append("after reconnecting the client did not subscribe with version 2")
        if any(link > 0 for link in {e["link"] for e in run.frames if _is(e, "snapshot")}):
            problems.append("the client took a snapshot where the missed patches were enough")
        return problems


def _is(entry: dict[str, Any], kind: str) -> bool:
    message = entry["message"]
    return entry["dir"] == "recv" and isinstance(message, dict) and message.get("type") == kind


class ProtocolRetired(Case):
    converges = False
    moves = 0
    #: How long the kit watches for reconnections once the client is done (seconds).
    GRACE = 0.4

    def __init__(self, anonymous: bool) -> None:
        self.anonymous = anonymous
        self.id = "protocol.retired" + (".anonymous" if anonymous else "")
        self.title = "A retired protocol path" + (" (no token)" if anonymous else "")
        self.description = (
            "The client is given the /v1/ws address"
            + (" and no token (it sends nothing before the server speaks)" if anonymous else "")
            + ". The server sends protocol_retired and closes with 1008. The client must "
            "report protocol_retired and not reconnect (a retired protocol will not come back)."
        )

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", "conformance-retired")
        if self.anonymous:
            run.token = None
        run.ws_path = "/v1/ws"
        return [open_game(expect=refused("protocol_retired"))]

    async def before_verdict(self, run: Run) -> None:
        await asyncio.sleep(self.GRACE)

    async def check(self, run: Run) -> list[str]:
        if len(run.links) > 1:
            return [f"the client opened /v1/ws {len(run.links)} times: it kept reconnecting"]
        return []


class RefusedConnection(Case):
    """A reconnection is refused with an error and a close code; the next one succeeds."""

    moves = 2

    def __init__(self, code: str, close_code: int) -> None:
        self.error_code = code
        self.close_code = close_code
        self.id = f"connect.{code}"
        self.title = f"A reconnection refused with {code}"
        self.description = (
            f"After a move the socket is cut; the client's next socket answers its first frame "
            f"with an error {code} and is closed with {close_code}. The client must keep "
            "reconnecting "
            "with backoff (this is not a reason to give up) and move on once a socket works."
        )

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("colorado", seed_for("colorado", (None, None)))
        return [open_game(), move(), move()]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index == 1:
            run.cut_links()

    async def client_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if link.index != 1:
            return True
        # Sent once the client spoke, so that it is the answer to its auth.
        await link.to_client(_error(self.error_code, None, None))
        await link.close(self.close_code, self.error_code)
        return False

    async def check(self, run: Run) -> list[str]:
        if len(run.links) < 3:
            return ["the client did not reconnect after the refused socket"]
        return []


# -- typed errors ----------------------------------------------------------------------


class RealError(Case):
    """A typed error the real server gives for what the client is asked to do."""

    def __init__(
        self,
        code: str,
        description: str,
        steps: Any,
        moves: int,
        own_game: bool = True,
        token: str | None = "player",
        converges: bool = True,
    ) -> None:
        self.id = f"error.{code}"
        self.title = f"The server's {code}"
        self.description = description
        self.code = code
        self.make_steps = steps
        self.moves = moves
        self.own_game = own_game
        self.token = token
        self.converges = converges

    async def setup(self, run: Run) -> list[Step]:
        seed = seed_for("balcony", (None, None))
        if self.own_game:
            await run.start_game("balcony", seed)
        else:
            _, owner = await run.new_player()
            run.game_id = await run.new_game(owner, "balcony", seed)
            run.player_id, run.token = await run.new_player()
        if self.token is None:
            run.token = None
        elif self.token != "player":
            run.token = self.token
        steps: list[Step] = self.make_steps(run, refused(self.code), first_legal("balcony", seed))
        return steps


def _error(code: str, in_reply_to: str | None, game_id: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "error",
        "in_reply_to": in_reply_to,
        "game_id": game_id,
        "code": code,
        "message": f"{code} (sent by the conformance kit)",
        **extra,
    }


def _rejected(code: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "rejected",
        "move_id": message["move_id"],
        "game_id": message["game_id"],
        "code": code,
        "message": f"{code} (sent by the conformance kit)",
        **extra,
    }


#: The extra fields of each injected code (ERRORS.md's "extra fields" column).
EXTRA: dict[str, dict[str, Any]] = {
    "undo_ranked": {"version": 0},
    "daily_closed": {"closes": 1_700_000_000_000},
    "daily_open": {"closes": 4_000_000_000_000},
    "move_limit": {"version": 0},
    "rate_limited": {"limit": "player_moves", "retry_after_ms": 150},
    "missing_field": {"field": "move_id"},
    "unknown_field": {"field": "colour"},
    "invalid_field": {"field": "version"},
}


class RejectedMove(Case):
    """The kit answers the client's first move with a ``rejected`` in the server's place
    (the move never reaches the server: nothing changed)."""

    def __init__(self, code: str, retryable: bool = False) -> None:
        self.code = code
        self.retryable = retryable
        self.id = f"error.{code}" + (".move" if code == "store_unavailable" else "")
        self.title = f"A move rejected with {code}"
        then = (
            "report it or send the move again with the same move_id after the delay"
            if retryable
            else "report it to its caller"
        )
        self.description = (
            f"The client's first move is answered with rejected {code} (the kit answers in "
            f"the server's place; nothing changed). The client must {then}, keep its copy "
            "unchanged, and play the next move."
        )
        self.moves = None if retryable else 1

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", seed_for("balcony", (None, None)))
        expect = refused_or_accepted(self.code) if self.retryable else refused(self.code)
        return [open_game(), move(expect=expect, wanted=f"{self.code} reported"), move()]

    async def client_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if message["type"] != "move" or "rejected" in run.notes:
            return True
        run.notes["rejected"] = (message["move_id"], run.frames[-1]["t"])
        extra = dict(EXTRA.get(self.code, {}))
        if "version" in extra:
            extra["version"] = message["version"]
        await link.to_client(_rejected(self.code, message, **extra))
        return False

    async def check(self, run: Run) -> list[str]:
        if "rejected" not in run.notes:
            return ["the client never moved"]
        move_id, at = run.notes["rejected"]
        again = [
            e
            for e in run.frames
            if e["dir"] == "send"
            and isinstance(e["message"], dict)
            and e["message"].get("move_id") == move_id
            and e["t"] > at
        ]
        problems = []
        if again and not self.retryable:
            problems.append(f"the client sent a move again after {self.code}")
        wait = EXTRA.get(self.code, {}).get("retry_after_ms")
        if again and wait is not None and again[0]["t"] - at < wait:
            problems.append(f"the client sent the move again before retry_after_ms ({wait})")
        log = await run.moves_in_log(run.game_id or "")
        wanted = sum(
            1
            for result in run.results.values()
            if result.get("outcome") == "accepted" and not result.get("duplicate")
        )
        if len(log) != wanted:
            problems.append(f"the server applied {len(log)} moves for {wanted} accepted")
        return problems


class NotReplicated(Case):
    id = "error.not_replicated"
    title = "A move stored but not replicated"
    description = (
        "The client's first move reaches the server and is applied, but the kit replaces "
        "its accepted with rejected not_replicated (what a server run with --durability "
        "replica sends when no replica confirmed it). The client must send the move again "
        "with the same move_id until it is accepted (as a duplicate) — or resync — and "
        "converge: the move is applied once."
    )
    moves = 2

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", seed_for("balcony", (None, None)))
        return [
            open_game(),
            move(expect=refused_or_accepted("not_replicated"), wanted="accepted in the end"),
            move(),
        ]

    async def server_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if message["type"] != "accepted" or "swapped" in run.notes:
            return True
        run.notes["swapped"] = message["move_id"]
        await link.to_client(
            _rejected("not_replicated", message, version=message["applied_version"])
        )
        return False


class SubscribeError(Case):
    """The kit answers the client's subscribe with an ``error`` in the server's place."""

    converges = False
    moves = 0

    def __init__(self, code: str, may_retry: bool = False) -> None:
        self.code = code
        self.may_retry = may_retry
        suffix = ".subscribe" if code == "store_unavailable" else ""
        self.id = f"error.{code}{suffix}"
        self.title = f"A subscribe answered with {code}"
        self.description = (
            f"The client's subscribe is answered with error {code} (in_reply_to subscribe). "
            "The client must report it to its caller"
            + (" (or subscribe again after a while and hold the game)." if may_retry else ".")
        )

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", "conformance-subscribe")
        if self.may_retry:
            return [open_game(expect=_refused_or_ok(self.code))]
        return [open_game(expect=refused(self.code))]

    async def client_frame(self, run: Run, link: Link, message: dict[str, Any]) -> bool:
        if message["type"] != "subscribe" or "answered" in run.notes:
            return True
        run.notes["answered"] = True
        extra = dict(EXTRA.get(self.code, {}))
        if self.code == "rate_limited":
            extra["limit"] = "messages"
        await link.to_client(_error(self.code, "subscribe", message["game_id"], **extra))
        return False


def _refused_or_ok(code: str) -> Any:
    refuse = refused(code)

    def judge(result: dict[str, Any]) -> str | None:
        return None if result.get("outcome") == "ok" else refuse(result)

    return judge


class UnsolicitedError(Case):
    """An ``error`` the kit sends on its own (not a reply to the client's frames)."""

    moves = 1

    def __init__(self, code: str, close: int | None = None) -> None:
        self.code = code
        self.close = close
        self.id = f"error.{code}"
        self.title = f"An error {code}" + (f" and a close ({close})" if close else "")
        closing = (
            f", then closes the socket with {close}: the client must reconnect and resync"
            if close
            else ""
        )
        self.description = (
            f"Once the client holds the game, the kit sends error {code} (in_reply_to "
            f"null){closing}. The client must report it and still make its next move."
        )

    async def setup(self, run: Run) -> list[Step]:
        await run.start_game("balcony", seed_for("balcony", (None,)))
        expect = _accepted_and_surfaced(self.code)
        return [open_game(), move(expect=expect, wanted=f"accepted, {self.code} reported")]

    async def after_step(self, run: Run, index: int, result: dict[str, Any]) -> None:
        if index != 0:
            return
        link = run.links[-1]
        await link.to_client(_error(self.code, None, None))
        if self.close is not None:
            await link.close(self.close, self.code)


def _accepted_and_surfaced(code: str) -> Any:
    accept, refuse = accepted(), refused(code)

    def judge(result: dict[str, Any]) -> str | None:
        return accept(result) or refuse({**result, "code": None})

    return judge


def _real_errors() -> list[Case]:
    def illegal(run: Run, expect: Any, legal: str) -> list[Step]:
        return [
            open_game(),
            move("tableau[0]>tableau[0]", expect=expect, wanted="illegal_move"),
            move(),
        ]

    def malformed(run: Run, expect: Any, legal: str) -> list[Step]:
        return [open_game(), move("sideways", expect=expect, wanted="malformed_move"), move()]

    def stale(run: Run, expect: Any, legal: str) -> list[Step]:
        return [open_game(), move(), move(version=0, expect=expect, wanted="stale"), move()]

    def game_over(run: Run, expect: Any, legal: str) -> list[Step]:
        return [open_game(), move("resign"), move("undo", expect=expect, wanted="game_over")]

    def unknown(run: Run, expect: Any, legal: str) -> list[Step]:
        missing = f"g_conformance{run.id}".replace("-", "x")
        return [open_game(), subscribe(missing, expect, "unknown_game"), move()]

    def not_yours(run: Run, expect: Any, legal: str) -> list[Step]:
        return [open_game(), move(legal, version=0, expect=expect, wanted=run.case.id[6:])]

    def bad_token(run: Run, expect: Any, legal: str) -> list[Step]:
        return [open_game(expect=expect)]

    return [
        RealError(
            "illegal_move",
            "A move the rules refuse (tableau[0]>tableau[0]): rejected illegal_move with a "
            "reason_code; the copy is unchanged and the next move is accepted.",
            illegal,
            moves=1,
        ),
        RealError(
            "malformed_move",
            "A move text that is not a move ('sideways'): rejected malformed_move.",
            malformed,
            moves=1,
        ),
        RealError(
            "stale",
            "A legal move sent with an old version: rejected stale (with the current version); "
            "the next move, at the copy's version, is accepted.",
            stale,
            moves=2,
        ),
        RealError(
            "game_over",
            "The client resigns, then asks for an undo: rejected game_over.",
            game_over,
            moves=1,
        ),
        RealError(
            "unknown_game",
            "A subscribe to a game that does not exist: error unknown_game; the game the "
            "client holds goes on.",
            unknown,
            moves=1,
        ),
        RealError(
            "forbidden",
            "The client, authenticated, moves in another player's game (which it follows as "
            "a spectator): rejected forbidden.",
            not_yours,
            moves=0,
            own_game=False,
        ),
        RealError(
            "not_authenticated",
            "The client has no token and moves in a game it follows: rejected not_authenticated.",
            not_yours,
            moves=0,
            own_game=False,
            token=None,
        ),
        RealError(
            "unauthorized",
            "The client's token is forged: its auth is answered with error unauthorized.",
            bad_token,
            moves=0,
            token="v1.p_conformance.forged",
            converges=False,
        ),
    ]


def _all_cases() -> list[Case]:
    cases: list[Case] = [Play(game) for game in GAME_NAMES]
    cases += [
        ReplyLost(),
        PatchGap(),
        HistoryTooOld(),
        SecondTab(),
        DuplicateMoveId(),
        SocketClosed("close.abort", "cut (1006)", None),
        SocketClosed("close.restart", "closed with 1012 (server restart)", SERVICE_RESTART),
        ProtocolRetired(anonymous=False),
        ProtocolRetired(anonymous=True),
        RefusedConnection("store_unavailable", TRY_AGAIN_LATER),
        RefusedConnection("too_many_connections", POLICY),
    ]
    cases += _real_errors()
    cases += [
        RejectedMove(code)
        for code in (
            "undo_ranked",
            "daily_closed",
            "move_limit",
            "missing_field",
            "invalid_field",
            "internal",
        )
    ]
    cases += [RejectedMove("rate_limited", retryable=True)]
    cases += [RejectedMove("store_unavailable", retryable=True), NotReplicated()]
    cases += [
        SubscribeError(code)
        for code in ("daily_open", "unknown_field", "frame_too_large", "malformed")
    ]
    cases += [SubscribeError("store_unavailable", may_retry=True)]
    cases += [UnsolicitedError("unknown_type"), UnsolicitedError("too_many_errors", POLICY)]
    return cases


#: Every case, by id, in the order a driver runs them.
CASES: dict[str, Case] = {case.id: case for case in _all_cases()}
