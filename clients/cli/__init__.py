"""Terminal client: play or watch a game as text, with the Python SDK.

    python -m clients.cli play colorado --seed abc [--server http://127.0.0.1:8000]
    python -m clients.cli play balcony --daily
    python -m clients.cli watch g_XXXX
    python -m clients.cli games

Input (one per line): the number of a listed legal move, a move text
(``tableau[3]>foundation[0]``), or a short form: ``t3 f0`` (piles: ``t``ableau,
``f``oundation, ``r``eserve, ``s``tock, ``w``aste, ``b``ouquet; ``t3f0`` and ``t3>f0`` work
too), ``d`` deal, ``r`` redeal, ``resign``, ``h`` help, an empty line to redraw, ``q`` to
resign and quit.  At the end of input the client leaves the game as it is.  No curses:
it reads lines from stdin and writes text to stdout, so it can be driven by a pipe.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from clients.python import ApiError, Client, Connection, GameCopy, MoveRejected, Update, move_text

TITLES = {
    "empress_of_italy": "Empress of Italy",
    "colorado": "Colorado",
    "gloucestershire": "Gloucestershire",
    "matrimony": "Matrimony",
    "balcony": "Balcony",
}
SHORT_PILES = {"t": "tableau", "f": "foundation"}
SHORT_SINGLE = {"r": "reserve", "s": "stock", "w": "waste", "b": "bouquet"}
_PILE_TOKEN = re.compile(
    r"\s*(?:(tableau|foundation)\[(\d+)\]|(reserve|stock|waste|bouquet)|([tf])(\d+)|([rswb]))\s*"
)
HELP = """\
Enter a move: its number in the list, its text (tableau[3]>foundation[0]) or a short form
(t3 f0, t3f0, r t2 = reserve>tableau[2], w f1, s t0); d = deal, r = redeal,
resign = give up, q = resign and quit, empty line = redraw, h = this help.
"""

ReadLine = Callable[[str], Awaitable[str | None]]


# -- drawing --------------------------------------------------------------------------


def _pile_top(pile: list[str]) -> str:
    if not pile:
        return "--"
    return pile[-1] if len(pile) == 1 else f"{pile[-1]}({len(pile)})"


def render(copy: GameCopy) -> str:
    """The table of ``copy`` as text: foundations, tableau rows, the other piles, status."""
    view = copy.view or {}
    title = TITLES.get(copy.game or "", copy.game or "?")
    kind = f"daily {copy.daily}" if copy.daily else "casual"
    lines = [f"== {title} · game {copy.game_id} ({kind}, {copy.role}) =="]
    foundations = view.get("foundations", [])
    for start in range(0, len(foundations), 8):
        cells = [
            f"f{i}:{_pile_top(foundations[i]):<7}"
            for i in range(start, min(start + 8, len(foundations)))
        ]
        lines.append(("Foundations " if start == 0 else " " * 12) + " ".join(cells).rstrip())
    lines.append("Tableau")
    for i, pile in enumerate(view.get("tableau", [])):
        lines.append(f"  t{i:<3}{' '.join(pile) if pile else '--'}")
    for key in ("reserve", "waste"):
        if key in view:
            pile = view[key]
            top = pile[-1] if pile else "--"
            lines.append(f"{key.capitalize():<8} {len(pile)} card(s), top {top}")
    if "bouquet" in view:
        lines.append(f"Bouquet  {' '.join(view['bouquet']) or '--'}")
    if "stock" in view:
        stock = view["stock"]
        text = f"Stock    {stock['count']} card(s)"
        if "top" in stock:
            text += f", top {stock['top'] or '--'}"
        lines.append(text)
    extras = []
    if "base_rank" in view:
        extras.append(f"base rank {view['base_rank']}")
    if "redeals_left" in view:
        extras.append(f"redeals left {view['redeals_left']}")
    extras += [f"score {copy.score}", f"status {copy.status}", f"version {copy.version}"]
    lines.append(" · ".join(extras))
    return "\n".join(lines) + "\n"


def render_moves(legal_moves: list[str] | None) -> str:
    """The legal moves, numbered from 1, three to a line."""
    if legal_moves is None:
        return "Legal moves: (not known yet)\n"
    if not legal_moves:
        return "Legal moves: none\n"
    cells = [f"{n:>3}. {move:<26}" for n, move in enumerate(legal_moves, 1)]
    rows = [" ".join(cells[i : i + 3]).rstrip() for i in range(0, len(cells), 3)]
    return "Legal moves:\n" + "\n".join(rows) + "\n"


# -- input ----------------------------------------------------------------------------


def _pile(match: re.Match[str]) -> str:
    long_kind, long_index, single, short_kind, short_index, short_single = match.groups()
    if long_kind:
        return f"{long_kind}[{int(long_index)}]"
    if single:
        return str(single)
    if short_kind:
        return f"{SHORT_PILES[short_kind]}[{int(short_index)}]"
    return SHORT_SINGLE[short_single]


def parse_command(text: str, legal_moves: list[str] | None) -> tuple[str, str]:
    """One input line as ``(action, argument)``: ``("move", move text)``, ``("quit", "")``,
    ``("help", "")``, ``("show", "")`` or ``("error", why)``."""
    text = text.strip()
    lower = text.lower()
    if not text:
        return "show", ""
    if lower in ("q", "quit", "exit"):
        return "quit", ""
    if lower in ("h", "?", "help"):
        return "help", ""
    if lower in ("d", "deal"):
        return "move", "deal"
    if lower in ("r", "redeal"):
        return "move", "redeal"
    if lower == "resign":
        return "move", "resign"
    if text.isdigit():
        number = int(text)
        if legal_moves and 1 <= number <= len(legal_moves):
            return "move", legal_moves[number - 1]
        return "error", f"no legal move number {number}"
    first = _PILE_TOKEN.match(lower)
    if first:
        rest = lower[first.end() :]
        rest = rest[1:] if rest.startswith(">") else rest
        second = _PILE_TOKEN.fullmatch(rest)
        if second:
            return "move", f"{_pile(first)}>{_pile(second)}"
    # Anything else goes to the server as it is: it says why it is not a move.
    return "move", text


# -- playing and watching -------------------------------------------------------------


def stdin_reader(stream: TextIO, out: TextIO) -> ReadLine:
    """Read lines from ``stream`` without blocking the event loop; None at its end.
    A piped line is echoed after the prompt, so the transcript reads like a session."""

    async def read_line(prompt: str) -> str | None:
        out.write(prompt)
        out.flush()
        line = await asyncio.get_running_loop().run_in_executor(None, stream.readline)
        if not line:
            return None
        if not stream.isatty():
            out.write(line if line.endswith("\n") else line + "\n")
        return line

    return read_line


async def play_loop(
    connection: Connection, copy: GameCopy, read_line: ReadLine, out: TextIO
) -> int:
    """Draw, read a command, play it, until the game ends, ``q`` or the end of input."""
    redraw = True
    while True:
        if redraw:
            out.write("\n" + render(copy) + render_moves(copy.legal_moves))
            redraw = False
        if copy.status != "playing":
            out.write(f"Game over: {copy.status}, score {copy.score}.\n")
            return 0
        line = await read_line("move> ")
        if line is None:
            out.write(f"End of input: leaving game {copy.game_id} as it is.\n")
            return 0
        action, argument = parse_command(line, copy.legal_moves)
        if action == "help":
            out.write(HELP)
            continue
        if action == "show":
            redraw = True
            continue
        if action == "error":
            out.write(f"? {argument}\n")
            continue
        move = "resign" if action == "quit" else argument
        try:
            reply = await connection.move(copy.game_id, move)
        except MoveRejected as error:
            out.write(f"Rejected ({error.code}): {error.message}\n")
            continue
        out.write(f"Played {move} -> version {reply['version']}\n")
        if action == "quit":
            out.write(f"Resigned game {copy.game_id}, score {copy.score}.\n")
            return 0
        redraw = True


async def play(args: argparse.Namespace, read_line: ReadLine, out: TextIO) -> int:
    async with Client(args.server, token=args.token) as client:
        if client.token is None:
            await client.create_player()
        if args.daily:
            snapshot = await client.start_daily(args.game)
        else:
            snapshot = await client.new_game(args.game, args.seed)
        async with client.connection() as connection:
            copy = await connection.subscribe(snapshot["id"])
            return await play_loop(connection, copy, read_line, out)


async def watch(args: argparse.Namespace, out: TextIO) -> int:
    """Print the game, then every move and the table after it, until the game ends."""
    queue: asyncio.Queue[Update] = asyncio.Queue()
    async with Client(args.server, token=args.token) as client:
        connection = client.connection(on_update=queue.put_nowait)
        async with connection:
            copy = await connection.subscribe(args.game_id)
            while not queue.empty():  # what brought the copy here is already drawn
                queue.get_nowait()
            out.write(render(copy))
            out.flush()
            while copy.status == "playing":
                update = await queue.get()
                if update.game_id != copy.game_id or update.kind not in ("patch", "snapshot"):
                    continue
                message = update.message or {}
                if update.kind == "patch":
                    out.write(f"\n-- {move_text(message['m'])} (version {message['v']})\n")
                out.write(render(copy))
                out.flush()
            out.write(f"Game over: {copy.status}, score {copy.score}.\n")
    return 0


async def list_games(args: argparse.Namespace, out: TextIO) -> int:
    async with Client(args.server) as client:
        for game in await client.games():
            out.write(f"{game['name']:<18} {game['title']} ({game['decks']} deck(s))\n")
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m clients.cli", description=__doc__.split("\n")[0])
    main.add_argument(
        "--server",
        default=os.environ.get("SOLITAIRE_SERVER", "http://127.0.0.1:8000"),
        help="the server's address (SOLITAIRE_SERVER; default http://127.0.0.1:8000)",
    )
    main.add_argument(
        "--token",
        default=os.environ.get("SOLITAIRE_TOKEN"),
        help="a player token (default: a new player)",
    )
    commands = main.add_subparsers(dest="command", required=True)
    play_command = commands.add_parser("play", help="start a game and play it")
    play_command.add_argument("game", choices=sorted(TITLES))
    how = play_command.add_mutually_exclusive_group()
    how.add_argument("--seed", help="deal from this seed (default: a random one)")
    how.add_argument("--daily", action="store_true", help="today's ranked daily challenge")
    watch_command = commands.add_parser("watch", help="watch a game as a spectator")
    watch_command.add_argument("game_id")
    commands.add_parser("games", help="list the games")
    return main


def main(
    argv: list[str] | None = None, stdin: TextIO | None = None, out: TextIO | None = None
) -> int:
    """Run the terminal client; its exit status."""
    argv = sys.argv[1:] if argv is None else argv
    # Options may also follow the command (play balcony --server URL).
    args = parser().parse_args(_options_first(argv))
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    try:
        if args.command == "play":
            return asyncio.run(play(args, stdin_reader(stdin, out), out))
        if args.command == "watch":
            return asyncio.run(watch(args, out))
        return asyncio.run(list_games(args, out))
    except ApiError as error:
        out.write(f"Error ({error.code}): {error.message}\n")
        return 1
    except (OSError, TimeoutError) as error:
        out.write(f"Cannot reach the server at {args.server}: {error or type(error).__name__}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        out.flush()


def _options_first(argv: list[str]) -> list[str]:
    """Move ``--server X`` and ``--token X`` before the command, where argparse wants them."""
    front: list[str] = []
    rest: list[str] = []
    items = iter(argv)
    for item in items:
        name = item.split("=", 1)[0]
        if name in ("--server", "--token"):
            front.append(item)
            if "=" not in item:
                front.append(next(items, ""))
        else:
            rest.append(item)
    return front + rest
