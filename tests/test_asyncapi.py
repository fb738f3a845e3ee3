"""``/asyncapi.json``: the AsyncAPI 3 document of the WebSocket protocol.

* The AsyncAPI parser (npm ``@asyncapi/parser``, a devDependency of clients/ts) finds no
  error in it (``clients/ts/scripts/validate-asyncapi.mjs``).
* Its message payloads are the schemas the server checks frames with
  (``server/ws_schema.py``), and every message has a recorded example that is valid under
  its payload. (Every frame the server sends in the server tests is checked against the
  same payloads: ``tests/server/server_support.py``, ``check_frame``.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from server import schema
from server.asyncapi import asyncapi_document, draft7
from server.errors import ApiError
from server.openapi import SCHEMAS
from server.ws_schema import CLIENT_SCHEMAS, CLOSE_CODES, SERVER_SCHEMAS

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "clients" / "ts"


def inline(node: Any, schemas: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [inline(item, schemas) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return inline(schemas[node["$ref"].removeprefix("#/components/schemas/")], schemas)
    return {key: inline(value, schemas) for key, value in node.items()}


def payload(kind: str) -> dict[str, Any]:
    components = asyncapi_document()["components"]
    return inline(components["messages"][kind]["payload"], components["schemas"])


def test_the_asyncapi_parser_validates_the_document(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH; install Node.js (.ci/run does)"
    assert (SDK / "node_modules" / "@asyncapi" / "parser").is_dir(), "run scripts/install"
    document = tmp_path / "asyncapi.json"
    document.write_text(json.dumps(asyncapi_document()), encoding="utf-8")
    proc = subprocess.run(
        [node, "scripts/validate-asyncapi.mjs", str(document)],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "valid: AsyncAPI 3" in proc.stdout, proc.stdout
    assert " error " not in proc.stdout


def test_the_parser_check_has_teeth(tmp_path: Path) -> None:
    """A reference to nothing is an error the parser reports (so the test above can fail)."""
    node = shutil.which("node")
    assert node is not None
    broken = json.loads(json.dumps(asyncapi_document()))
    broken["operations"]["receive_auth"]["messages"].append({"$ref": "#/channels/v2/messages/x"})
    document = tmp_path / "broken.json"
    document.write_text(json.dumps(broken), encoding="utf-8")
    proc = subprocess.run(
        [node, "scripts/validate-asyncapi.mjs", str(document)],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_payloads_are_the_schemas_the_server_validates_frames_with() -> None:
    document = asyncapi_document()
    messages = document["components"]["messages"]
    assert set(messages) == set(CLIENT_SCHEMAS) | set(SERVER_SCHEMAS)
    for kind, name in {**CLIENT_SCHEMAS, **SERVER_SCHEMAS}.items():
        assert messages[kind]["payload"] == {"$ref": f"#/components/schemas/{name}"}
    for name, component in document["components"]["schemas"].items():
        assert component == draft7(SCHEMAS[name]), name
    channel = document["channels"]["v2"]
    assert channel["address"] == "/v2/ws"
    assert {row["code"] for row in channel["x-close-codes"]} == set(CLOSE_CODES)


@pytest.mark.parametrize("kind", sorted({*CLIENT_SCHEMAS, *SERVER_SCHEMAS}))
def test_every_message_has_a_recorded_example_valid_under_its_payload(kind: str) -> None:
    message = asyncapi_document()["components"]["messages"][kind]
    examples = message.get("examples")
    assert examples, f"{kind} has no example"
    for example in examples:
        assert example["payload"]["type"] == kind
        schema.check(example["payload"], payload(kind))


def test_a_frame_outside_its_payload_is_refused() -> None:
    patch = dict(asyncapi_document()["components"]["messages"]["patch"]["examples"][0]["payload"])
    for bad in (
        {**patch, "o": [["m", "t3", "f0"]]},
        {**patch, "o": [["m", "tableau[3]", "f0", "JC"]]},
        {**patch, "s": "playing!"},
        {**patch, "extra": 1},
    ):
        with pytest.raises(ApiError):
            schema.check(bad, payload("patch"))
