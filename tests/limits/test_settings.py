"""Every limit is a flag and an environment variable, documented in README.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.config import LIMIT_OPTIONS, Limits, Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_flags_set_the_limits() -> None:
    settings = Settings.from_arguments(
        ["--rate-limits", "off", "--players-per-hour", "5", "--max-moves-per-game", "100"]
    )
    assert settings.limits == Limits(rate_limits=False, players_per_hour=5, max_moves_per_game=100)


def test_the_environment_sets_the_limits_and_flags_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RATE_LIMITS", "off")
    monkeypatch.setenv("PLAYERS_PER_HOUR", "7")
    monkeypatch.setenv("MAX_CONNECTIONS_PER_ADDRESS", "9")
    assert Settings.from_environment().limits == Limits(
        rate_limits=False, players_per_hour=7, max_connections_per_address=9
    )
    assert Settings.from_arguments(["--players-per-hour", "8"]).limits.players_per_hour == 8


def test_the_environment_round_trips(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m server`` hands its settings to the uvicorn workers by the environment."""
    settings = Settings(limits=Limits(rate_limits=False, audit_queue=3, message_credits=11))
    for name, value in settings.to_environment().items():
        monkeypatch.setenv(name, value)
    assert Settings.from_environment() == settings


@pytest.mark.parametrize("argv", [["--rate-limits", "maybe"], ["--players-per-hour", "0"]])
def test_bad_values_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        Settings.from_arguments(argv)


def test_every_limit_is_documented_with_its_default() -> None:
    rows = {
        match.group(1): (match.group(2), match.group(3))
        for match in re.finditer(
            r"^\| `(--[a-z-]+)[^`]*` \| `([A-Z_]+)` \| `?(\w+)`? \|", README, re.M
        )
    }
    assert rows["--rate-limits"] == ("RATE_LIMITS", "on")
    for name, (flag, env, _) in LIMIT_OPTIONS.items():
        assert rows[flag] == (env, str(getattr(Limits, name))), flag
