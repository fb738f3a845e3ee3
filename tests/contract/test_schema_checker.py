"""server.schema: the checker of REST input against the published request schemas."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import rest
from server.errors import ApiError
from server.rules import UNDO
from server.rules.moves import MalformedMove, Move
from server.schema import INTEGER, check


def error_of(value: object, schema: dict) -> tuple[str, str | None]:
    with pytest.raises(ApiError) as caught:
        check(value, schema)
    return caught.value.code, caught.value.details.get("field")


def test_integral_floats_become_integers_and_nothing_else_does() -> None:
    schema = {"type": "object", "properties": {"n": INTEGER}}
    assert check({"n": 3.0}, schema) == {"n": 3}
    assert type(check({"n": 1.7e12}, schema)["n"]) is int
    for bad in (0.5, True, float(2**64), "1", None):
        assert error_of({"n": bad}, schema) == ("invalid_field", "n"), bad


def test_patterns_match_whole_strings() -> None:
    schema = {"type": "object", "properties": {"seed": rest.SEED}}
    assert check({"seed": "abc"}, schema) == {"seed": "abc"}
    for bad in ("abc\n", "a b", "", "s" * 129):
        assert error_of({"seed": bad}, schema) == ("invalid_seed", "seed"), bad


def test_fields_are_named_to_the_nested_one() -> None:
    body = {"game_id": "g_x", "moves": [{"version": "1"}]}
    assert error_of(body, rest.REPLAY_EXPORT) == ("invalid_field", "moves[0].version")
    assert error_of([], rest.AUDIT_BODY) == ("malformed", None)
    assert error_of({"game": "klondike"}, rest.CREATE_GAME_BODY) == (
        "unknown_game_name",
        "game",
    )


MOVE_TEXT = re.compile(rest.MOVE_TEXT[1:-1])


@settings(max_examples=400, derandomize=True)
@given(
    st.one_of(
        st.text(max_size=30),
        st.from_regex(MOVE_TEXT, fullmatch=True),
        st.builds(
            lambda a, b, c: f"{a}>{b}{c}",
            st.sampled_from(["tableau[3]", " stock", "waste ", "foundation[10]", "x"]),
            st.sampled_from(["foundation[0]", "tableau[01]", "reserve", "bouquet"]),
            st.sampled_from(["", " ", "\t", "\u2003", ">"]),
        ),
    )
)
def test_the_published_move_pattern_is_the_engines_grammar(text: str) -> None:
    """The engine's moves, and ``undo`` (``server.rules.undo``, casual games)."""
    try:
        Move(text)
        parsed = True
    except MalformedMove:
        parsed = text == UNDO
    assert parsed == bool(MOVE_TEXT.fullmatch(text)), text
