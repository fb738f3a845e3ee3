"""Record one real WebSocket session per game (``protocol/sessions/README.md``).

The recorder plays a short game against a real server with a raw WebSocket, writes down
every frame both ways (decoded, and as msgpack hex) and, after each server frame that
changed the client's state, that state as :class:`clients.python.GameCopy` computes it.  It
checks every state against the server's own snapshot (``GET /v1/games/{id}``) once a move
has fully arrived, and that every frame re-encodes to its exact wire bytes.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect

from clients.python import GameCopy
from server.rules import UNDO, Game, Move, Timeline, new_game

FORMAT = "solitaire-session/1"
DIRECTORY = Path(__file__).resolve().parents[2] / "protocol" / "sessions"
#: Bound on each wait for a frame or an answer, in seconds.
WAIT = 10.0
#: Moves per session (both WebSocket and REST ones, the final resign not counted).
MOVES = 20
#: After this many moves the socket is closed, REST_MOVES moves are made over REST,
#: and the client reconnects and re-subscribes with its version.
RECONNECT_AFTER = 11
REST_MOVES = 2
ILLEGAL_AT = 4
STALE_AT = 7
#: Before this step's move, UNDOS undos in a row take back the last moves.
UNDO_AT = 15
UNDOS = 2
#: A game id no game has (the recorded error frame: unknown_game).
UNKNOWN_GAME = "g_no_such_game"
PLACEHOLDERS = {
    "<game_id>": "the game's id (g_…), which the server draws at random",
    "<player_id>": "the player's id (p_…), drawn at random",
    "<token>": "the player's bearer token, signed with the server's secret",
    "<server_time>": "a pong's server_time (Unix ms; an integer on the wire)",
}


def pack(message: Any) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def choose(rng: random.Random, game: str, legal: Sequence[str], step: int, previous: str) -> str:
    """The session's policy: foundation moves first, deals now and then (every 4th
    step when legal; Matrimony deals and redeals whenever it can, half the time), never
    straight back the way the previous move went when there is anything else."""
    back = ">".join(reversed(previous.split(">")))
    legal = [move for move in legal if move != back] or legal
    if "deal" in legal and (step % 4 == 1 or (game == "matrimony" and rng.random() < 0.5)):
        return "deal"
    if "redeal" in legal and rng.random() < 0.5:
        return "redeal"
    foundation = [move for move in legal if ">foundation" in move]
    if foundation and rng.random() < 0.7:
        return rng.choice(foundation)
    return rng.choice(legal)


def playout(game: str, seed: str) -> list[str] | None:
    """The moves the policy plays from (game, seed); None if the game ends too soon, goes
    round in circles, or the session would miss a deal (a redeal for Matrimony)."""
    timeline = Timeline(new_game(game, seed))
    rng = random.Random(f"{game}:{seed}")
    moves = [""]
    for step in range(MOVES):
        if step == UNDO_AT:
            for _ in range(UNDOS):
                timeline.play(UNDO)
        engine = timeline.game
        if engine.status != "playing":
            return None
        move = choose(rng, game, engine.legal_moves(), step, moves[-1])
        timeline.play(move)
        moves.append(move)
    engine = timeline.game
    card_moves = Counter(move for move in moves if ">" in move)
    if engine.status != "playing" or max(card_moves.values(), default=0) > 3:
        return None  # over, or shuffling a card to and fro
    wanted = {"matrimony": {"deal", "redeal"}, "empress_of_italy": {"deal"}, "balcony": {"deal"}}
    if not wanted.get(game, set()) <= set(moves):
        return None
    return moves[1:]


def session_seed(game: str) -> str:
    """The first seed ``session-N`` whose playout suits a session (deterministic)."""
    for n in range(1, 1000):
        if playout(game, f"session-{n}") is not None:
            return f"session-{n}"
    raise RuntimeError(f"no seed for a {game} session")


def illegal_move(engine: Game) -> str:
    """A well-formed card move the rules refuse now, preferring a wrong card on a pile."""
    piles = [str(pile) for pile in engine.piles_of_layout]
    candidates = [f"{a}>{b}" for a in piles for b in piles if a != b and b != "stock"]
    legal = set(engine.legal_moves())
    refused = [(engine.explain(Move(text))[1], text) for text in candidates if text not in legal]
    for reason in ("not_accepted", "wrong_target", "empty_source"):
        for code, text in refused:
            if code == reason:
                return text
    return refused[0][1]


@dataclass
class Session:
    game: str
    seed: str
    game_id: str = ""
    player_id: str = ""
    token: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)

    def normalise(self, value: Any, key: str | None = None) -> Any:
        """``value`` with the run's random ids, token and times replaced by placeholders."""
        if key == "server_time":
            return "<server_time>"
        if isinstance(value, dict):
            return {k: self.normalise(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.normalise(item) for item in value]
        replacements = {self.game_id: "<game_id>", self.player_id: "<player_id>"}
        replacements[self.token] = "<token>"
        if isinstance(value, str) and value in replacements and value:
            return replacements[value]
        if isinstance(value, str) and self.game_id and self.game_id in value:
            return value.replace(self.game_id, "<game_id>")
        return value

    def frame(self, direction: str, data: bytes, state: dict[str, Any] | None) -> None:
        message = msgpack.unpackb(data, raw=False)
        if pack(message) != data:
            raise AssertionError(f"a frame does not re-encode to its bytes: {message!r}")
        shown = self.normalise(message)
        event: dict[str, Any] = {"dir": direction, "message": shown, "hex": pack(shown).hex()}
        if state is not None:
            event["state"] = state
        self.events.append(event)

    def document(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "game": self.game,
            "seed": self.seed,
            "placeholders": PLACEHOLDERS,
            "events": self.events,
        }


class Recorder:
    """Plays one session against ``base_url`` and records it."""

    def __init__(self, base_url: str, game: str, seed: str) -> None:
        self.base_url = base_url
        self.ws_url = base_url.replace("http://", "ws://", 1) + "/v2/ws"
        self.session = Session(game, seed)
        #: The game as the server should have it (``undo`` included), and its version.
        self.timeline = Timeline(new_game(game, seed))
        self.version = 0
        self.rng = random.Random(f"{game}:{seed}")
        self.copy: GameCopy | None = None
        self.ws: ClientConnection | None = None
        self.http: httpx.AsyncClient | None = None
        self.move_ids = 0
        #: The moves sent so far.
        self.sent: set[str] = set()
        self.step = 0
        self.previous = ""

    # -- frames ---------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        data = pack(message)
        self.session.frame("send", data, None)
        await self.ws.send(data)

    async def recv(self) -> dict[str, Any]:
        assert self.ws is not None and self.copy is not None
        data = await asyncio.wait_for(self.ws.recv(), WAIT)
        assert isinstance(data, bytes), data
        message = msgpack.unpackb(data, raw=False)
        game_id = message.get("g") if message.get("type") == "patch" else message.get("game_id")
        changed = game_id == self.copy.game_id and self.copy.on_message(message)
        self.session.frame("recv", data, self.copy.state() if changed else None)
        return dict(message)

    async def recv_until(self, done: Any) -> dict[str, Any]:
        while True:
            message = await self.recv()
            if done(message):
                return message

    # -- REST -----------------------------------------------------------------------

    async def rest(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        assert self.http is not None
        headers = {"Authorization": f"Bearer {self.session.token}"} if self.session.token else {}
        response = await self.http.request(method, path, json=body, headers=headers)
        response.raise_for_status()
        return response.json()

    async def check_state(self) -> None:
        """The copy must equal the server's snapshot of the game."""
        assert self.copy is not None
        snapshot = await self.rest("GET", f"/v1/games/{self.copy.game_id}")
        server = {key: snapshot[key] for key in ("version", "status", "score", "view")}
        server["legal_moves"] = snapshot["legal_moves"]
        if server != self.copy.state():
            raise AssertionError(f"copy {self.copy.state()} != server {server}")

    # -- the session ----------------------------------------------------------------

    async def connect(self) -> None:
        self.session.events.append({"dir": "connect"})
        self.ws = await connect(self.ws_url, open_timeout=WAIT)
        await self.send({"type": "auth", "token": self.session.token})
        await self.recv_until(lambda m: m["type"] == "authenticated")

    async def disconnect(self) -> None:
        assert self.ws is not None
        await asyncio.wait_for(self.ws.close(), WAIT)
        self.ws = None
        self.session.events.append({"dir": "disconnect"})

    async def move(self, move: str, version: int | None = None) -> dict[str, Any]:
        """Send a move; wait for its reply (an ``accepted`` carries the move's patch)."""
        assert self.copy is not None and self.copy.version is not None
        self.move_ids += 1
        self.sent.add(move)
        move_id = f"m{self.move_ids}"
        message = {
            "type": "move",
            "game_id": self.copy.game_id,
            "move": move,
            "version": self.copy.version if version is None else version,
            "move_id": move_id,
        }
        await self.send(message)
        reply = await self.recv_until(
            lambda m: m["type"] in ("accepted", "rejected") and m["move_id"] == move_id
        )
        if reply["type"] == "accepted":
            self.timeline.play(move)
            self.version += 1
            copy = self.copy
            while copy.version is None or copy.version < reply["version"]:
                await self.recv()
            await self.check_state()
        return reply

    async def play_one(self) -> None:
        assert self.copy is not None and self.copy.legal_moves is not None
        move = choose(self.rng, self.session.game, self.copy.legal_moves, self.step, self.previous)
        self.step += 1
        self.previous = move
        reply = await self.move(move)
        assert reply["type"] == "accepted", reply

    async def rest_move(self) -> None:
        legal = self.timeline.game.legal_moves()
        move = choose(self.rng, self.session.game, legal, self.step, self.previous)
        self.step += 1
        self.previous = move
        version = self.version
        body = {"move": move, "version": version}
        self.session.events.append(
            {
                "dir": "rest",
                "request": {"method": "POST", "path": "/v1/games/<game_id>/moves", "body": body},
                "status": 200,
            }
        )
        await self.rest("POST", f"/v1/games/{self.session.game_id}/moves", body)
        self.timeline.play(move)
        self.version += 1

    async def reconnect_after_rest_moves(self) -> None:
        """Close the socket, move over REST, reconnect and resync from our version."""
        copy = self.copy
        assert copy is not None
        await self.disconnect()
        for _ in range(REST_MOVES):
            await self.rest_move()
        await self.connect()
        await self.send({"type": "subscribe", "game_id": copy.game_id, "version": copy.version})
        target = self.version
        await self.recv_until(lambda m: copy.version == target)
        await self.check_state()

    async def run(self) -> dict[str, Any]:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=WAIT) as http:
            self.http = http
            player = await self.rest("POST", "/v1/players")
            self.session.player_id, self.session.token = player["player_id"], player["token"]
            created = await self.rest(
                "POST", "/v1/games", {"game": self.session.game, "seed": self.session.seed}
            )
            self.session.game_id = created["id"]
            self.session.events.append(
                {
                    "dir": "rest",
                    "request": {
                        "method": "POST",
                        "path": "/v1/games",
                        "body": {"game": self.session.game, "seed": self.session.seed},
                    },
                    "status": 201,
                }
            )
            self.copy = GameCopy(self.session.game_id)
            await self.connect()
            await self.send({"type": "subscribe", "game_id": self.session.game_id})
            await self.recv_until(lambda m: m["type"] == "snapshot")
            await self.check_state()
            await self.send({"type": "ping", "nonce": 1})
            await self.recv_until(lambda m: m["type"] == "pong")
            while self.step < MOVES:
                if self.step == ILLEGAL_AT:
                    reply = await self.move(illegal_move(self.timeline.game))
                    assert reply["type"] == "rejected" and reply["code"] == "illegal_move", reply
                if self.step == STALE_AT:
                    assert self.copy.version and self.copy.legal_moves
                    stale = self.copy.version - 1
                    reply = await self.move(self.copy.legal_moves[0], version=stale)
                    assert reply["type"] == "rejected" and reply["code"] == "stale", reply
                if self.step == UNDO_AT and UNDO not in self.sent:
                    for _ in range(UNDOS):
                        reply = await self.move(UNDO)
                        assert reply["type"] == "accepted", reply
                if self.step == RECONNECT_AFTER:
                    await self.reconnect_after_rest_moves()
                    continue
                await self.play_one()
            reply = await self.move("resign")
            assert reply["type"] == "accepted", reply
            reply = await self.move("deal")
            assert reply["type"] == "rejected" and reply["code"] == "game_over", reply
            # The last message types, so that every one has a recorded frame: an error
            # (a game that does not exist) and an unsubscribe.
            await self.send({"type": "subscribe", "game_id": UNKNOWN_GAME})
            error = await self.recv_until(lambda m: m["type"] == "error")
            assert error["code"] == "unknown_game", error
            await self.send({"type": "unsubscribe", "game_id": self.session.game_id})
            await self.recv_until(lambda m: m["type"] == "unsubscribed")
            await self.disconnect()
        return self.session.document()


async def record(base_url: str, game: str) -> dict[str, Any]:
    """The session of ``game`` recorded against the server at ``base_url``."""
    return await Recorder(base_url, game, session_seed(game)).run()


def write(document: dict[str, Any], directory: Path = DIRECTORY) -> Path:
    """Write a session as ``<game>.json``: one event per line, for readable diffs."""
    path = directory / f"{document['game']}.json"
    head = {key: value for key, value in document.items() if key != "events"}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2] + ',\n "events": [\n'
    text += ",\n".join(json.dumps(event, ensure_ascii=False) for event in document["events"])
    text += "\n ]\n}\n"
    assert json.loads(text) == document
    path.write_text(text, encoding="utf-8")
    return path
