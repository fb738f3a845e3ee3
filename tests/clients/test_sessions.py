"""The recorded sessions of ``protocol/sessions``: their frames decode to their messages,
the SDK's GameCopy replays them to every recorded state, and recording them again against
today's server gives the same exchange."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

from clients.python import GameCopy
from server.rules import GAME_NAMES
from server.testing import serve
from server.ws_schema import CLIENT_SCHEMAS, SERVER_SCHEMAS
from tools.sessions.record import FORMAT, record

SESSIONS = Path(__file__).resolve().parents[2] / "protocol" / "sessions"


def load(game: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((SESSIONS / f"{game}.json").read_text("utf-8"))
    return document


def frames(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in document["events"] if event["dir"] in ("send", "recv")]


@pytest.mark.parametrize("game", GAME_NAMES)
def test_hex_is_the_msgpack_of_the_message(game: str) -> None:
    for event in frames(load(game)):
        data = bytes.fromhex(event["hex"])
        assert msgpack.unpackb(data, raw=False) == event["message"]
        assert msgpack.packb(event["message"], use_bin_type=True) == data


@pytest.mark.parametrize("game", GAME_NAMES)
def test_game_copy_replays_the_session(game: str) -> None:
    document = load(game)
    assert (document["format"], document["game"]) == (FORMAT, game)
    copy = GameCopy("<game_id>")
    replies: dict[str, int] = {}
    states = 0
    for index, event in enumerate(document["events"]):
        if event["dir"] != "recv":
            if event["dir"] == "send" and event["message"]["type"] == "move":
                replies[event["message"]["move_id"]] = 0
            continue
        message = event["message"]
        if message["type"] in ("accepted", "rejected"):
            replies[message["move_id"]] += 1
        before = copy.state()
        game_id = message.get("g") if message["type"] == "patch" else message.get("game_id")
        changed = game_id == "<game_id>" and copy.on_message(message)
        if "state" in event:
            assert changed and copy.state() == event["state"], f"event {index}"
            states += 1
        else:
            assert not changed and copy.state() == before, f"event {index}"
    assert set(replies.values()) == {1}, "every move gets exactly one reply"
    assert states >= 15 and copy.status == "resigned"


@pytest.mark.parametrize("game", GAME_NAMES)
def test_sessions_show_what_they_promise(game: str) -> None:
    events = load(game)["events"]
    sent = [e["message"] for e in events if e["dir"] == "send"]
    received = [e["message"] for e in events if e["dir"] == "recv"]
    moves = [m["move"] for m in sent if m["type"] == "move"]
    codes = {m["code"] for m in received if m["type"] == "rejected"}
    assert codes == {"illegal_move", "stale", "game_over"}
    accepted = [m for m in received if m["type"] == "accepted"]
    # Protocol v2: the mover's accepted carries the patch; only the 2 moves made over REST
    # come as patch frames (after the resubscribe).
    frames = [m for m in received if m["type"] == "patch"]
    assert len(frames) == 2 and all(m["patch"] is not None for m in accepted)
    patches = frames + [m["patch"] for m in accepted]
    assert 15 <= len(patches) <= 30
    if game in ("empress_of_italy", "balcony", "matrimony"):
        assert "deal" in moves
    if game == "matrimony":
        assert "redeal" in [p["m"] for p in patches]
    if game == "colorado":
        assert any(op[0] == "r" for p in patches for op in p["o"])
    assert [e["dir"] for e in events].count("connect") == 2
    assert any(m["type"] == "subscribe" and "version" in m for m in sent)
    assert moves.count("undo") == 2
    # Every message type occurs (the examples of /asyncapi.json come from these frames).
    assert {m["type"] for m in sent} == set(CLIENT_SCHEMAS)
    assert {m["type"] for m in received} == set(SERVER_SCHEMAS)


def canonical(document: dict[str, Any]) -> list[Any]:
    """The exchange with the order of the frames received between two sends sorted
    (``accepted`` and ``patch`` may come either way round) and no states."""
    result: list[Any] = []
    segment: list[str] = []
    for event in document["events"]:
        if event["dir"] == "recv":
            segment.append(json.dumps(event["message"], sort_keys=True))
            continue
        result.append(sorted(segment))
        segment = []
        result.append({key: value for key, value in event.items() if key != "hex"})
    return [*result, sorted(segment)]


@pytest.mark.parametrize("game", GAME_NAMES)
async def test_recording_again_gives_the_same_session(redis_url: str, game: str) -> None:
    async with serve(redis_url) as base_url:
        fresh = await record(base_url, game)
    assert canonical(fresh) == canonical(load(game)), (
        "the server's messages changed: run `python -m tools.sessions` and review the diff"
    )
