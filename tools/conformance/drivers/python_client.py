"""The conformance driver of the Python SDK (``clients/python``): runs every case of a
conformance kit (or those named) through :class:`clients.python.Connection` and prints
one JSON summary line.

Usage: ``python tools/conformance/drivers/python_client.py KIT_URL [--agent NAME] [CASE ...]``
(exit status 1 when a case failed).  ``tools/conformance/README.md`` describes what a
driver does; this one is the reference.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from typing import Any

import httpx

from clients.python import ApiError, Connection, GameCopy, MoveRejected, Update


def view_hash(copy: GameCopy) -> str:
    """SHA-256 of the canonical JSON of the copy's status, version and view."""
    document = {"status": copy.status, "version": copy.version, "view": copy.view}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class Driver:
    """One run: the connection under test and what it reports to the kit."""

    def __init__(self, start: dict[str, Any]) -> None:
        self.start = start
        self.timeout = start["timeout_ms"] / 1000
        self.connection: Connection | None = None
        #: States not reported yet, and the last one reported per game.
        self.states: list[dict[str, Any]] = []
        self.last: dict[str, tuple[Any, ...]] = {}
        #: Error codes the SDK surfaced during the current step.
        self.errors: list[str] = []

    def note_state(self, copy: GameCopy) -> None:
        if not copy.synced:
            return
        key = (copy.version, copy.status, view_hash(copy), copy.legal_moves)
        if self.last.get(copy.game_id) == key:
            return
        self.last[copy.game_id] = key
        self.states.append(
            {
                "game_id": copy.game_id,
                "version": copy.version,
                "status": copy.status,
                "hash": key[2],
                "legal_moves": copy.legal_moves,
            }
        )

    def on_update(self, update: Update) -> None:
        if update.copy is not None:
            self.note_state(update.copy)
        if update.kind == "error" and update.message is not None:
            self.errors.append(str(update.message.get("code")))

    async def take(self, action: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self._take(action)
        except MoveRejected as error:
            return {"outcome": "rejected", "code": error.code}
        except ApiError as error:
            return {"outcome": "error", "code": error.code}
        except TimeoutError:
            return {"outcome": "timeout"}
        except Exception as error:  # reported, so the kit can say what went wrong
            return {"outcome": "error", "code": None, "detail": repr(error)}

    async def _take(self, action: dict[str, Any]) -> dict[str, Any]:
        game_id = self.start["game_id"]
        if action["do"] == "open":
            connection = Connection(
                self.start["ws_url"],
                self.start["token"],
                timeout=self.timeout,
                min_backoff=0.02,
                max_backoff=0.5,
                on_update=self.on_update,
            )
            await connection.open()
            self.connection = connection
            if game_id is not None:
                await connection.subscribe(game_id)
            return {"outcome": "ok"}
        if self.connection is None:
            return {"outcome": "error", "code": None, "detail": "no connection"}
        return await self._on_connection(self.connection, action, game_id)

    async def _on_connection(
        self, connection: Connection, action: dict[str, Any], game_id: str
    ) -> dict[str, Any]:
        if action["do"] == "subscribe":
            await connection.subscribe(action["game_id"])
            return {"outcome": "ok"}
        copy = connection.copies[game_id]
        if action["do"] == "sync":
            await connection.wait_for(lambda: (copy.version or 0) >= action["version"])
            return {"outcome": "ok"}
        if action["do"] == "move":
            text = action.get("move")
            if text is None:
                await connection.wait_for(lambda: copy.legal_moves is not None)
                assert copy.legal_moves, "no legal move"
                text = copy.legal_moves[0]
            reply = await connection.move(
                game_id, text, version=action.get("version"), move_id=action.get("move_id")
            )
            return {
                "outcome": "accepted",
                "version": reply["version"],
                "duplicate": reply["duplicate"],
            }
        return {"outcome": "error", "code": None, "detail": f"unknown step {action['do']}"}

    def pending_states(self) -> list[dict[str, Any]]:
        if self.connection is not None:
            for copy in self.connection.copies.values():
                self.note_state(copy)
        states, self.states = self.states, []
        return states


async def run_case(http: httpx.AsyncClient, kit: str, case: str, agent: str) -> dict[str, Any]:
    response = await http.post(f"{kit}/cases/{case}/runs", json={"agent": agent})
    response.raise_for_status()
    start = response.json()
    driver = Driver(start)
    report = f"{kit}/runs/{start['run']}/report"
    try:
        for index, action in enumerate(start["steps"]):
            result = await driver.take(action)
            # The errors surfaced since the last report (the kit may send one meanwhile).
            step = {"index": index, **result, "errors": driver.errors}
            driver.errors = []
            answer = await http.post(report, json={"states": driver.pending_states(), "step": step})
            answer.raise_for_status()
    finally:
        if driver.connection is not None:
            await driver.connection.close()
    answer = await http.post(report, json={"states": driver.pending_states(), "done": True})
    answer.raise_for_status()
    verdict: dict[str, Any] = answer.json()
    return verdict


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kit", help="the kit's URL, e.g. http://127.0.0.1:9100")
    parser.add_argument("cases", nargs="*", help="case ids (default: every case)")
    parser.add_argument("--agent", default="python-sdk")
    args = parser.parse_args()
    kit = args.kit.rstrip("/")
    async with httpx.AsyncClient(timeout=60) as http:
        cases = args.cases or [
            case["id"] for case in (await http.get(f"{kit}/cases")).json()["cases"]
        ]
        results = {case: await run_case(http, kit, case, args.agent) for case in cases}
    failed = {case: v["failures"] for case, v in results.items() if not v["passed"]}
    summary = {"agent": args.agent, "cases": len(results), "failed": failed}
    print(json.dumps(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
