"""The conformance kit: a real server (on a throwaway Redis), the fault proxy in front of
it, and the HTTP API a client's driver talks to (``README.md`` of this folder).

A run is one case played by one client (``agent``): the driver starts it, takes its steps,
reports each step's result and its copy's state per version, and ends it; the kit then
judges the run and writes its report.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from pathlib import Path
from typing import Any

import httpx
import msgpack
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from websockets.asyncio.client import connect

from server import schema
from server.app import create_app
from server.asyncapi import asyncapi_document
from server.config import DailySelection, Settings
from server.errors import ApiError
from server.testing import TEST_SECRET, UNLIMITED, RedisProcess, serve_app
from server.ws_schema import CLIENT_SCHEMAS, SERVER_SCHEMAS
from tools.conformance import report
from tools.conformance.cases import CASES, Case
from tools.conformance.proxy import Link, Proxy
from tools.conformance.steps import Step
from tools.conformance.truth import Version, history

#: How long a driver waits for one step (ms), unless the kit is told otherwise.
STEP_TIMEOUT_MS = 5000
#: More subscribes than this on one socket is a storm, whatever the case.
MAX_SUBSCRIBES = 10
#: Bound on one of the kit's own calls to the server, in seconds.
CALL_TIMEOUT = 10.0
#: The kit's server chooses no real dailies (no case needs one): the smallest budgets.
NO_DAILY_WORK = DailySelection(candidate_nodes=1, candidates=1, seconds=0.05)


def _inline(node: Any, schemas: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, schemas) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(schemas[node["$ref"].rsplit("/", 1)[1]], schemas)
    return {key: _inline(value, schemas) for key, value in node.items()}


def _payloads() -> dict[str, Any]:
    """Each message's payload schema from ``/asyncapi.json``, by message type."""
    components = asyncapi_document()["components"]
    return {
        kind: _inline(components["messages"][kind]["payload"], components["schemas"])
        for kind in [*CLIENT_SCHEMAS, *SERVER_SCHEMAS]
    }


PAYLOADS = _payloads()


def frame_problem(message: Any, kinds: Any) -> str | None:
    """Why ``message`` is not a valid message of one of ``kinds`` (``None``: it is)."""
    if not isinstance(message, dict) or message.get("type") not in kinds:
        return f"not a msgpack map with a known type: {str(message)[:120]}"
    try:
        schema.check(message, PAYLOADS[message["type"]])
    except ApiError as error:
        return f"{error.code}: {error.message}"
    return None


class Run:
    """One case played by one client: what the kit set up, what the client did."""

    def __init__(self, kit: Kit, case: Case, agent: str) -> None:
        self.kit = kit
        self.case = case
        self.agent = agent
        self.id = secrets.token_urlsafe(9)
        self.started = time.time()
        self.started_monotonic = time.monotonic()
        #: The player and game the client is given (``token`` ``None``: it has none).
        self.player_id = ""
        self.token: str | None = None
        self.game_id: str | None = None
        #: Every game the kit created in this run: id -> (game, seed).
        self.games: dict[str, tuple[str, str]] = {}
        self.ws_path = "/v2/ws"
        self.steps: list[Step] = []
        self.results: dict[int, dict[str, Any]] = {}
        self.states: list[dict[str, Any]] = []
        self.frames: list[dict[str, Any]] = []
        self.links: list[Link] = []
        #: While set, new client sockets are cut at once (the server is unreachable).
        self.refuse = False
        #: The case's own notes (counters, the ids it watches).
        self.notes: dict[str, Any] = {}
        self.verdict: dict[str, Any] | None = None

    # -- the proxy's hooks ------------------------------------------------------------

    def record(self, entry: dict[str, Any]) -> None:
        """Keep a frame or socket event, its time in ms since the run started."""
        entry["t"] = round((entry["t"] - self.started_monotonic) * 1000, 1)
        self.frames.append(entry)

    async def on_connect(self, link: Link) -> bool:
        self.links.append(link)
        if self.refuse:
            link.abort()
            return False
        return await self.case.on_connect(self, link)

    async def client_frame(self, link: Link, message: dict[str, Any]) -> bool:
        return await self.case.client_frame(self, link, message)

    async def server_frame(self, link: Link, message: dict[str, Any]) -> bool:
        return await self.case.server_frame(self, link, message)

    # -- the real server, for cases ---------------------------------------------------

    async def new_player(self) -> tuple[str, str]:
        response = await self.kit.http.post("/v1/players")
        response.raise_for_status()
        body = response.json()
        return body["player_id"], body["token"]

    async def new_game(self, token: str, game: str, seed: str) -> str:
        response = await self.kit.http.post(
            "/v1/games", json={"game": game, "seed": seed}, headers=_bearer(token)
        )
        response.raise_for_status()
        game_id: str = response.json()["id"]
        self.games[game_id] = (game, seed)
        return game_id

    async def start_game(self, game: str, seed: str) -> None:
        """A fresh player and a game of theirs: what the client is given."""
        self.player_id, token = await self.new_player()
        self.token = token
        self.game_id = await self.new_game(token, game, seed)

    async def snapshot(self, game_id: str | None = None) -> dict[str, Any]:
        game_id = game_id or self.game_id
        response = await self.kit.http.get(f"/v1/games/{game_id}", headers=_bearer(self.token))
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    async def other_tab_moves(self, count: int) -> int:
        """``count`` moves (the first legal one each) from a second socket of the client's
        player, straight to the server; the game's version after them."""
        version = 0
        for _ in range(count):
            state = await self.snapshot()
            version = await self.socket_moves([state["legal_moves"][0]], state["version"])
        return version

    async def socket_moves(self, moves: list[str], version: int) -> int:
        """``moves``, the first made against ``version``, sent back to back on a socket of
        the client's player straight to the server (another tab); the version after them."""
        async with connect(self.kit.server_ws + "/v2/ws", compression=None) as tab:
            await tab.send(msgpack.packb({"type": "auth", "token": self.token}))
            for number, text in enumerate(moves):
                self.notes["tab_moves"] = self.notes.get("tab_moves", 0) + 1
                move = {
                    "type": "move",
                    "game_id": self.game_id,
                    "move": text,
                    "version": version + number,
                    "move_id": f"other-tab-{self.id}-{self.notes['tab_moves']}",
                }
                await tab.send(msgpack.packb(move))
            replies = 0
            while replies < len(moves):
                frame = await asyncio.wait_for(tab.recv(), CALL_TIMEOUT)
                message = msgpack.unpackb(frame, raw=False)
                if message["type"] in ("rejected", "error"):
                    raise RuntimeError(f"the kit's own move failed: {message}")
                replies += message["type"] == "accepted"
        return version + len(moves)

    async def moves_in_log(self, game_id: str) -> list[str]:
        response = await self.kit.http.get(f"/v1/games/{game_id}/log")
        response.raise_for_status()
        return [entry["move"] for entry in response.json()["moves"]]

    def cut_links(self) -> None:
        for link in self.links:
            if not link.closed:
                link.abort()

    async def close_links(self, code: int, reason: str = "") -> None:
        for link in self.links:
            if not link.closed:
                await link.close(code, reason)

    def sent(self, kind: str) -> list[tuple[int, dict[str, Any]]]:
        """The client's frames of type ``kind``, with the socket (link) each came on."""
        return [
            (entry["link"], entry["message"])
            for entry in self.frames
            if entry["dir"] == "send"
            and isinstance(entry["message"], dict)
            and entry["message"].get("type") == kind
        ]

    def received(self, kind: str, link: int | None = None) -> list[dict[str, Any]]:
        """What the client was sent of type ``kind`` (not the frames the kit dropped)."""
        return [
            entry["message"]
            for entry in self.frames
            if entry["dir"] == "recv"
            and not entry.get("dropped")
            and isinstance(entry["message"], dict)
            and entry["message"].get("type") == kind
            and (link is None or entry["link"] == link)
        ]

    # -- the driver's side ------------------------------------------------------------

    def start_answer(self) -> dict[str, Any]:
        return {
            "run": self.id,
            "case": self.case.id,
            "ws_url": f"ws://127.0.0.1:{self.kit.proxy.port}/runs/{self.id}{self.ws_path}",
            "token": self.token,
            "game_id": self.game_id,
            "timeout_ms": self.kit.step_timeout_ms,
            "steps": [step.action for step in self.steps],
        }

    async def take_report(self, body: dict[str, Any]) -> dict[str, Any]:
        for state in body.get("states") or []:
            if isinstance(state, dict):
                self.states.append({**state, "step": len(self.results)})
        step = body.get("step")
        if isinstance(step, dict) and isinstance(step.get("index"), int):
            index = step["index"]
            self.results[index] = step
            if 0 <= index < len(self.steps):
                await self.case.after_step(self, index, step)
        if body.get("done"):
            return await self.finish()
        return {}

    async def finish(self) -> dict[str, Any]:
        if self.verdict is None:
            await self.case.before_verdict(self)
            self.verdict = await judge(self)
            report.write_run(self.kit.report_dir, self.verdict)
            report.write_index(self.kit.report_dir, self.agent, self.kit.verdicts(self.agent))
            self.cut_links()
        return {
            "passed": self.verdict["passed"],
            "failures": self.verdict["failures"],
            "report": str(report.run_path(self.kit.report_dir, self.verdict, "html")),
        }


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def judge(run: Run) -> dict[str, Any]:
    """The run's verdict: every failure found, and what it was judged on."""
    failures: list[str] = []
    for index, step in enumerate(run.steps):
        result = run.results.get(index)
        if result is None:
            failures.append(f"step {index} ({step.action['do']}): never reported")
            continue
        problem = step.expect(result)
        if problem:
            failures.append(f"step {index} ({step.action['do']}): {problem}")
    truths: dict[str, list[Version]] = {}
    for game_id, (game, seed) in run.games.items():
        truths[game_id] = history(game, seed, await run.moves_in_log(game_id))
    for state in run.states:
        failures += _state_problems(state, truths)
    if run.case.converges and run.game_id is not None:
        failures += _convergence_problems(run, truths[run.game_id])
    for entry in run.frames:
        if entry["dir"] == "send":
            problem = frame_problem(entry["message"], CLIENT_SCHEMAS)
            if problem:
                failures.append(f"the client sent a bad frame on socket {entry['link']}: {problem}")
    for link in run.links:
        count = sum(1 for index, _ in run.sent("subscribe") if index == link.index)
        if count > MAX_SUBSCRIBES:
            failures.append(f"the client sent {count} subscribes on socket {link.index}")
    if run.case.moves is not None and run.game_id is not None:
        made = len(truths[run.game_id]) - 1
        if made != run.case.moves:
            failures.append(f"the server applied {made} moves, not {run.case.moves}")
    failures += await run.case.check(run)
    return {
        "agent": run.agent,
        "case": run.case.id,
        "title": run.case.title,
        "description": run.case.description,
        "passed": not failures,
        "failures": failures,
        "seconds": round(time.time() - run.started, 3),
        "game": run.games.get(run.game_id or "", (None, None))[0],
        "steps": [
            {"action": step.action, "wanted": step.wanted, "result": run.results.get(index)}
            for index, step in enumerate(run.steps)
        ],
        "states": run.states,
        "server_versions": len(truths[run.game_id]) - 1 if run.game_id in truths else None,
        "frames": run.frames,
    }


def _state_problems(state: dict[str, Any], truths: dict[str, list[Version]]) -> list[str]:
    game_id, version = state.get("game_id"), state.get("version")
    if game_id not in truths:
        return [f"a state reported for a game the kit did not give: {game_id}"]
    truth = truths[game_id]
    if not isinstance(version, int) or not 0 <= version < len(truth):
        return [f"a state at version {version}, which the game never had"]
    problems = []
    if state.get("hash") != truth[version].hash:
        problems.append(f"the view at version {version} differs from the server's (hash)")
    legal = state.get("legal_moves")
    if legal is not None and sorted(legal) != sorted(truth[version].legal_moves):
        problems.append(f"the legal moves held at version {version} are not the server's")
    return problems


def _convergence_problems(run: Run, truth: list[Version]) -> list[str]:
    mine = [state for state in run.states if state.get("game_id") == run.game_id]
    final = truth[-1]
    if not mine:
        return ["the client reported no state of the game"]
    last = mine[-1]
    if last.get("version") != final.version:
        return [f"the client ended at version {last.get('version')}, the server at {final.version}"]
    if last.get("hash") != final.hash:
        return [f"the client's final view differs from the server's (version {final.version})"]
    return []


class Kit:
    """The running kit: ``async with Kit(report_dir) as kit: ... kit.url ...``."""

    def __init__(
        self,
        report_dir: Path,
        redis_url: str | None = None,
        step_timeout_ms: int = STEP_TIMEOUT_MS,
        port: int | None = None,
    ) -> None:
        self.report_dir = report_dir
        self.redis_url = redis_url
        self.step_timeout_ms = step_timeout_ms
        self.port = port
        self.runs: dict[str, Run] = {}
        self.server_ws = ""
        self.url = ""
        self.http = httpx.AsyncClient()
        self.proxy = Proxy("", self.runs.get)
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Kit:
        try:
            await self._start()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()

    async def _start(self) -> None:
        redis_url = self.redis_url
        if redis_url is None:
            redis = RedisProcess()
            await asyncio.to_thread(redis.start)
            self._stack.callback(redis.stop)
            redis_url = redis.url
        settings = Settings(
            redis_url=redis_url,
            secret=TEST_SECRET,
            ranked_min_account_age=0,
            limits=UNLIMITED,
            daily=NO_DAILY_WORK,
        )
        server_port = await self._stack.enter_async_context(serve_app(create_app(settings)))
        self.server_ws = f"ws://127.0.0.1:{server_port}"
        self.http = httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{server_port}", timeout=CALL_TIMEOUT
        )
        self._stack.push_async_callback(self.http.aclose)
        self.proxy.upstream = self.server_ws
        await self.proxy.start()
        self._stack.push_async_callback(self.proxy.stop)
        port = await self._stack.enter_async_context(serve_app(self.api(), port=self.port))
        self.url = f"http://127.0.0.1:{port}"

    def verdicts(self, agent: str) -> list[dict[str, Any]]:
        """The verdict of ``agent``'s latest finished run of each case, in case order."""
        latest: dict[str, dict[str, Any]] = {}
        for run in self.runs.values():
            if run.agent == agent and run.verdict is not None:
                latest[run.case.id] = run.verdict
        return [latest[case] for case in CASES if case in latest]

    # -- the driver's API -------------------------------------------------------------

    def api(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/", self._index, methods=["GET"]),
                Route("/cases", self._cases, methods=["GET"]),
                Route("/cases/{case}/runs", self._start_run, methods=["POST"]),
                Route("/runs/{run}/report", self._report, methods=["POST"]),
            ]
        )

    async def _index(self, request: Request) -> Response:
        agents = sorted({run.agent for run in self.runs.values()})
        return HTMLResponse(report.index_page({agent: self.verdicts(agent) for agent in agents}))

    async def _cases(self, request: Request) -> Response:
        return JSONResponse(
            {
                "cases": [
                    {"id": case.id, "title": case.title, "description": case.description}
                    for case in CASES.values()
                ]
            }
        )

    async def _start_run(self, request: Request) -> Response:
        case = CASES.get(request.path_params["case"])
        if case is None:
            return JSONResponse({"error": "no such case"}, status_code=404)
        body = await _json(request)
        agent = str(body.get("agent") or "client")[:64]
        run = Run(self, case, agent)
        run.steps = await case.setup(run)
        self.runs[run.id] = run
        return JSONResponse(run.start_answer(), status_code=201)

    async def _report(self, request: Request) -> Response:
        run = self.runs.get(request.path_params["run"])
        if run is None:
            return JSONResponse({"error": "no such run"}, status_code=404)
        return JSONResponse(await run.take_report(await _json(request)))


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
