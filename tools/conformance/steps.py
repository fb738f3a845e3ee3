"""The steps a case asks the client to take, and what each step's result must be.

A step is sent to the client's driver as its ``action`` (a small JSON object, see the
README: ``open``, ``move``, ``sync``, ``subscribe``); the driver answers with a result
(``outcome``, ``code``, ``version``, ``duplicate``, ``errors``) that ``expect`` judges.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A judge of a step's result: a failure text, or ``None`` when it is right.
Expect = Callable[[dict[str, Any]], str | None]


@dataclass
class Step:
    action: dict[str, Any]
    expect: Expect
    #: What the step should do, in words (for the report).
    wanted: str


def surfaced(result: dict[str, Any], code: str) -> bool:
    """Whether the client reported ``code``: as the step's outcome or among its errors."""
    return result.get("code") == code or code in (result.get("errors") or [])


def _outcome(result: dict[str, Any]) -> str:
    text = str(result.get("outcome"))
    if result.get("code"):
        text += f" ({result['code']})"
    return text


def ok() -> Expect:
    def judge(result: dict[str, Any]) -> str | None:
        if result.get("outcome") == "ok":
            return None
        return f"expected ok, got {_outcome(result)}"

    return judge


def accepted(duplicate: bool | None = None, version: int | None = None) -> Expect:
    def judge(result: dict[str, Any]) -> str | None:
        if result.get("outcome") != "accepted":
            return f"expected accepted, got {_outcome(result)}"
        if duplicate is not None and result.get("duplicate") is not duplicate:
            return f"expected duplicate={duplicate}, got {result.get('duplicate')}"
        if version is not None and result.get("version") != version:
            return f"expected the game at version {version}, got {result.get('version')}"
        return None

    return judge


def refused(code: str) -> Expect:
    """The client must tell its caller ``code`` (a rejected move or an error)."""

    def judge(result: dict[str, Any]) -> str | None:
        if surfaced(result, code):
            return None
        return (
            f"expected {code} to be reported, got {_outcome(result)}, errors {result.get('errors')}"
        )

    return judge


def refused_or_accepted(code: str) -> Expect:
    """``code`` reported to the caller, or the move accepted after the client sent it
    again by itself (what the protocol allows for a retryable code)."""
    refuse = refused(code)

    def judge(result: dict[str, Any]) -> str | None:
        if result.get("outcome") == "accepted":
            return None
        return refuse(result)

    return judge


def open_game(expect: Expect | None = None) -> Step:
    return Step({"do": "open"}, expect or ok(), "open the socket and hold the game")


def move(
    text: str | None = None,
    *,
    version: int | None = None,
    move_id: str | None = None,
    expect: Expect | None = None,
    wanted: str = "accepted",
) -> Step:
    action: dict[str, Any] = {"do": "move"}
    if text is not None:
        action["move"] = text
    if version is not None:
        action["version"] = version
    if move_id is not None:
        action["move_id"] = move_id
    return Step(action, expect or accepted(), wanted)


def sync(version: int) -> Step:
    return Step({"do": "sync", "version": version}, ok(), f"the copy reaches version {version}")


def subscribe(game_id: str, expect: Expect, wanted: str) -> Step:
    return Step({"do": "subscribe", "game_id": game_id}, expect, wanted)
