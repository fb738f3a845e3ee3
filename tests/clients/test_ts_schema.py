"""The TypeScript SDK's generated ``src/schema.ts`` is the server's OpenAPI document of now,
and the SDK type-checks against it: a protocol change breaks the SDK's build, not its users."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path

from server.openapi import openapi_document
from tools import ts_schema

SDK = Path(__file__).resolve().parents[2] / "clients" / "ts"


def test_generated_schema_is_current() -> None:
    committed = ts_schema.TARGET.read_text(encoding="utf-8")
    assert committed == ts_schema.render(openapi_document()), (
        "clients/ts/src/schema.ts is stale: run .venv/bin/python -m tools.ts_schema"
    )


def test_a_changed_schema_changes_the_generated_types() -> None:
    document = copy.deepcopy(openapi_document())  # its schemas are the module's dicts
    snapshot = document["components"]["schemas"]["Snapshot"]
    snapshot["properties"]["moves_left"] = {"type": "integer"}
    snapshot["required"].append("moves_left")
    assert "moves_left: number;" in ts_schema.render(document)


def test_a_changed_websocket_message_changes_the_generated_types() -> None:
    document = copy.deepcopy(openapi_document())  # its schemas are the module's dicts
    accepted = document["components"]["schemas"]["WsAccepted"]
    accepted["properties"]["moves_left"] = {"type": "integer"}
    accepted["required"].append("moves_left")
    rendered = ts_schema.render(document)
    assert "export type WsAccepted = {" in rendered
    assert "moves_left: number;" in rendered.split("export type WsAccepted = {")[1]


def test_sdk_type_checks() -> None:
    npx = shutil.which("npx")
    assert npx is not None, "npx is not on PATH; install Node.js (.ci/run does)"
    assert (SDK / "node_modules" / "typescript").is_dir(), (
        "run scripts/install (npm ci in clients/ts)"
    )
    proc = subprocess.run(
        [npx, "--no-install", "tsc", "--noEmit", "-p", "tsconfig.json"],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_api_reference_is_current() -> None:
    """clients/ts/docs/API.md is what scripts/api-docs.mjs makes of the built types."""
    node = shutil.which("node")
    assert node is not None, "node is not on PATH; install Node.js (.ci/run does)"
    assert (SDK / "dist" / "index.d.ts").is_file(), "clients/ts is not built: run scripts/install"
    proc = subprocess.run(
        [node, "scripts/api-docs.mjs", "--check"],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
