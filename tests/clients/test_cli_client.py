"""The terminal client: input parsing, drawing, and whole sessions in a subprocess."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from sdk_support import WAIT, anonymous_fixture, client_fixture, proxy_fixture, server_url_fixture  # noqa: F401

from clients.cli import parse_command, render, render_moves
from clients.python import Client, GameCopy

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ["tableau[0]>foundation[1]", "reserve>tableau[2]", "deal"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", ("move", "tableau[0]>foundation[1]")),
        (" 3 ", ("move", "deal")),
        ("4", ("error", "no legal move number 4")),
        ("t3 f0", ("move", "tableau[3]>foundation[0]")),
        ("t12>f10", ("move", "tableau[12]>foundation[10]")),
        ("t3f0", ("move", "tableau[3]>foundation[0]")),
        ("r t2", ("move", "reserve>tableau[2]")),
        ("w f1", ("move", "waste>foundation[1]")),
        ("s t19", ("move", "stock>tableau[19]")),
        ("b t0", ("move", "bouquet>tableau[0]")),
        ("tableau[3]>foundation[0]", ("move", "tableau[3]>foundation[0]")),
        ("tableau[3] > foundation[0]", ("move", "tableau[3]>foundation[0]")),
        ("d", ("move", "deal")),
        ("r", ("move", "redeal")),
        ("resign", ("move", "resign")),
        ("q", ("quit", "")),
        ("h", ("help", "")),
        ("", ("show", "")),
        ("jump", ("move", "jump")),  # the server says why it is not a move
    ],
)
def test_parse_command(text: str, expected: tuple[str, str]) -> None:
    assert parse_command(text, LEGAL) == expected


def test_render_colorado_and_matrimony() -> None:
    from server.rules import new_game

    for name, needles in [
        ("colorado", ["Stock    84 card(s), top KC", "f7:--", "t19 "]),
        ("matrimony", ["redeals left 16", "Stock    86 card(s)"]),
        ("gloucestershire", ["Bouquet  "]),
        ("empress_of_italy", ["base rank", "Reserve", "Waste"]),
    ]:
        game = new_game(name, "abc")
        copy = GameCopy("g_x")
        copy.role = "owner"
        copy.on_snapshot(
            {
                "id": "g_x",
                "game": name,
                "version": 0,
                "status": game.status,
                "score": game.score,
                "view": game.view(),
                "legal_moves": game.legal_moves(),
            }
        )
        text = render(copy)
        for needle in needles:
            assert needle in text, (name, needle, text)
    assert render_moves(None) == "Legal moves: (not known yet)\n"
    assert "  2. reserve>tableau[2]" in render_moves(LEGAL)


async def run_cli(*args: str, stdin: bytes = b"") -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        *args,
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(stdin), WAIT * 3)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_play_balcony_from_piped_input(server_url: str, client: Client) -> None:
    lines = ["1", "t0 f1", "d", "99", "foo", "", "w t3", "q"]
    code, output = await run_cli(
        "play", "balcony", "--seed", "abc", "--server", server_url, stdin="\n".join(lines).encode()
    )
    assert code == 0, output
    # The table: foundations, tableau rows, reserve/waste/stock, base rank, score, status.
    assert "== Balcony · game g_" in output
    assert "Foundations f0:9C      f1:--" in output
    assert "  t0  9H\n  t1  QH\n" in output
    assert "Reserve  7 card(s), top 8C" in output and "Stock    37 card(s)" in output
    assert "base rank 9 · score 1 · status playing · version 0" in output
    assert "  1. tableau[0]>foundation[1]" in output and "  7. deal" in output
    # The moves and the server's reasons.
    assert "Played tableau[0]>foundation[1] -> version 1" in output
    assert "Rejected (illegal_move): tableau[0] is empty" in output
    assert "Played deal -> version 2" in output
    assert "? no legal move number 99" in output
    assert "Rejected (malformed_move): 'foo' is not a move" in output
    assert "Rejected (illegal_move): A♠ cannot go on A♥" in output
    assert "Played resign -> version 3" in output
    game_id = re.search(r"game (g_[\w-]+)", output)
    assert game_id is not None
    log = await client.log(game_id.group(1))
    assert [entry["move"] for entry in log["moves"]] == [
        "tableau[0]>foundation[1]",
        "deal",
        "resign",
    ]


async def test_end_of_input_leaves_the_game(server_url: str) -> None:
    code, output = await run_cli(
        "play", "colorado", "--seed", "abc", "--server", server_url, stdin=b"s t0\n"
    )
    assert code == 0, output
    assert "Stock    84 card(s), top KC" in output
    assert "Played stock>tableau[0] -> version 1" in output
    assert "Stock    83 card(s), top" in output
    assert "End of input: leaving game g_" in output


async def test_daily_and_errors(server_url: str) -> None:
    code, output = await run_cli(
        "play", "matrimony", "--daily", "--server", server_url, stdin=b"d\nq\n"
    )
    assert code == 0, output
    assert re.search(r"\(daily \d{4}-\d\d-\d\d, owner\)", output)
    assert "redeals left 16" in output and "Played deal -> version 1" in output
    code, output = await run_cli("watch", "g_nope", "--server", server_url)
    assert code == 1 and "Error (unknown_game)" in output


async def test_watch_as_a_spectator(server_url: str, client: Client) -> None:
    game_id = (await client.new_game("balcony", seed="abc"))["id"]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        "watch",
        game_id,
        "--server",
        server_url,
        cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert process.stdout is not None
    seen = ""
    try:
        while "version 0" not in seen:
            line = await asyncio.wait_for(process.stdout.readline(), WAIT)
            assert line, seen
            seen += line.decode()
        await client.move_rest(game_id, "deal", 0)
        await client.move_rest(game_id, "deal", 1)
        await client.move_rest(game_id, "resign", 2)
        rest, _ = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    output = seen + rest.decode()
    assert process.returncode == 0, output
    assert "(casual, spectator)" in output
    assert "-- deal (version 1)" in output and "-- resign (version 3)" in output
    assert "Game over: resigned, score 1." in output
