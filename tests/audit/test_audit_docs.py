"""``protocol/AUDIT.md`` agrees with the code: its checks, thresholds and worked example."""

from __future__ import annotations

import json
import re
from pathlib import Path

from protocol import chain
from server import audit as audit_module
from server.audit import CHECKS, SIGNALS, audit
from server.audit.scouting import ENDINGS
from server.rules import new_game

TEXT = (Path(__file__).resolve().parents[2] / "protocol" / "AUDIT.md").read_text()


def json_blocks() -> list[object]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", TEXT, re.S)]


def test_every_check_and_signal_is_documented_in_a_table_row() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", TEXT, re.M))
    assert set(CHECKS) <= documented
    assert set(SIGNALS) <= documented
    assert not set(CHECKS) & set(SIGNALS)


def test_every_way_an_attempt_ends_is_documented() -> None:
    for ending in ENDINGS:
        assert f"`{ending}`" in TEXT, ending


def test_the_thresholds_are_the_documented_ones() -> None:
    for name in ("SPEED_INTERVAL_MS", "SPEED_RUN", "REGULARITY_WINDOW", "REGULARITY_MAX_CV"):
        value = getattr(audit_module, name)
        assert f"| `{name}` | {value} |" in TEXT, name


def test_the_worked_example_is_what_the_code_computes() -> None:
    game = new_game("balcony", "abc")
    deal_hash = game.state_hash()
    link = chain.genesis("g_example", "balcony", deal_hash)
    assert f"= {deal_hash}" in TEXT and f"= {link}" in TEXT
    for version, (move, server_time) in enumerate(
        [("tableau[0]>foundation[1]", 1795980677456), ("deal", 1795980679012)], 1
    ):
        game.play(move)
        link = chain.next_link(link, version, move, server_time, game.state_hash())
        assert f"state_hash = {game.state_hash()}" in TEXT
        assert f"= {link}" in TEXT


def test_the_example_export_passes_and_the_example_verdict_is_its_forgery() -> None:
    export, verdict, _link = json_blocks()
    assert isinstance(export, dict)
    assert audit(export).passed
    assert audit(dict(export, score=3)).to_dict() == verdict
