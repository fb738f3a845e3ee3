"""StoredGame.after_move makes what dataclasses.replace would."""

from __future__ import annotations

import dataclasses

import pytest

from server.store import StoredGame


@pytest.mark.parametrize("finished", [False, True])
def test_after_move_is_the_replace_of_the_fields_a_move_changes(finished: bool) -> None:
    stored = StoredGame(
        "g1", "balcony", "seed", "p1", "2026-12-02", 4, b"old", "playing", 7, 4, "deal",
        "head4", 100, 200, 0, "client", "install", True,
    )  # fmt: skip
    moved = stored.after_move(b"new", "won", 8, "head5", 300, finished)
    assert moved == dataclasses.replace(
        stored,
        version=5,
        moves=5,
        state=b"new",
        status="won",
        score=8,
        chain_head="head5",
        updated_at=300,
        finished_at=300 if finished else 0,
    )
    assert stored.version == 4 and stored.state == b"old"  # the original is unchanged
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.version = 6  # type: ignore[misc]
