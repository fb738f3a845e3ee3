"""The settings this work added: each flag, its environment variable, and bad values."""

from __future__ import annotations

import subprocess
import sys

import pytest
from ops_support import ROOT, SERVER_ENV

from server.app import FULL_COLLECTION_SPACING
from server.config import PLAYER_IDLE_TTL, Settings


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SERVER_ENV:
        monkeypatch.delenv(name, raising=False)


def test_defaults() -> None:
    settings = Settings.from_arguments([])
    assert settings.data_dir == "./data"
    assert settings.cors_origins == ()
    assert settings.player_idle_ttl == PLAYER_IDLE_TTL == 30 * 24 * 3600
    assert settings.max_header_bytes == 64 * 1024
    assert settings.header_timeout == 10
    assert settings.body_timeout == 30
    assert settings.ws_ping_interval == 20
    assert settings.effective_log_format == "json"  # pytest's stderr is not a terminal


def test_environment_then_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_DIR", "/srv/data")
    monkeypatch.setenv("CORS_ORIGINS", "https://a.example, https://b.example/")
    monkeypatch.setenv("PLAYER_IDLE_TTL", "3600")
    monkeypatch.setenv("LOG_FORMAT", "text")
    monkeypatch.setenv("MAX_HEADER_BYTES", "8192")
    monkeypatch.setenv("HEADER_TIMEOUT", "2.5")
    monkeypatch.setenv("WS_PING_INTERVAL", "45")
    monkeypatch.setenv("BODY_TIMEOUT", "7")
    settings = Settings.from_arguments([])
    assert settings.body_timeout == 7
    assert settings.ws_ping_interval == 45
    assert settings.data_dir == "/srv/data"
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert (settings.player_idle_ttl, settings.log_format) == (3600, "text")
    assert (settings.max_header_bytes, settings.header_timeout) == (8192, 2.5)
    assert Settings.from_environment() == settings  # to_environment round trip below
    flags = Settings.from_arguments(
        ["--data-dir", "d", "--cors-origins", "https://c.example", "--player-idle-ttl", "60"]
        + ["--log-format", "json", "--max-header-bytes", "4096", "--header-timeout", "1"]
        + ["--ws-ping-interval", "90", "--body-timeout", "3.5"]
    )
    assert flags.ws_ping_interval == 90 and flags.body_timeout == 3.5
    assert flags.data_dir == "d" and flags.cors_origins == ("https://c.example",)
    assert (flags.player_idle_ttl, flags.log_format) == (60, "json")
    assert (flags.max_header_bytes, flags.header_timeout) == (4096, 1.0)
    for name, value in flags.to_environment().items():
        monkeypatch.setenv(name, value)
    assert Settings.from_environment() == flags


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("LOG_FORMAT", "xml"),
        ("PLAYER_IDLE_TTL", "0"),
        ("MAX_HEADER_BYTES", "10"),
        ("HEADER_TIMEOUT", "-1"),
        ("BODY_TIMEOUT", "0"),
        ("HEADER_TIMEOUT", "soon"),
        ("WS_PING_INTERVAL", "0"),
        ("WS_PING_INTERVAL", "often"),
        ("SERVER_SECRET", "short"),
    ],
)
def test_a_bad_value_stops_the_server_with_a_message(name: str, value: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "server"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", name: value},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert "python -m server: " in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_an_unusable_data_dir_stops_the_server_with_a_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "server", "--data-dir", str(not_a_directory / "data")],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "LOG_FORMAT": "text"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert "the embedded store did not start" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_worker_freezes_its_start_up_objects_out_of_the_collector() -> None:
    """``app_from_environment`` (what each worker of ``python -m server`` calls) leaves the
    modules, classes and functions loaded by then frozen (``gc.freeze``), so a full
    collection, which stops the worker, walks only what came after, and spaces full
    collections further apart than CPython's default."""
    script = (
        "import gc, os\n"
        "os.environ['REDIS_URL'] = 'redis://127.0.0.1:9/0'\n"  # not connected before start-up
        "from server.app import app_from_environment\n"
        "before = gc.get_freeze_count()\n"
        "app_from_environment()\n"
        "print(before, gc.get_freeze_count(), gc.get_threshold()[2])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    before, after, full_spacing = map(int, done.stdout.split())
    assert before == 0 and after > 10_000, (before, after)
    assert full_spacing == FULL_COLLECTION_SPACING > 10  # rarer full collections
