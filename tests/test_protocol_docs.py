"""The protocol documents agree with the code they describe."""

from __future__ import annotations

import re
from pathlib import Path

from server.app import ROUTES
from server.errors import ERROR_CODES
from server.ws import HANDLERS
from server.ws_schema import CLIENT_SCHEMAS, SERVER_SCHEMAS

PROTOCOL = Path(__file__).resolve().parent.parent / "protocol"


def test_errors_md_lists_every_error_code_with_its_http_status() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", (PROTOCOL / "ERRORS.md").read_text(), re.M)
    assert {code: int(status) for code, status in rows} == {
        code: status for code, (status, _) in ERROR_CODES.items()
    }


def test_rest_md_lists_every_http_route() -> None:
    text = (PROTOCOL / "REST.md").read_text()
    for route in ROUTES:
        for method in getattr(route, "methods", None) or ():
            if method == "HEAD":
                continue
            documented = re.search(rf"`{method} {re.escape(route.path)}[`?]", text)
            assert documented, f"{method} {route.path}"


def test_websocket_md_documents_every_client_message_type() -> None:
    text = (PROTOCOL / "WEBSOCKET.md").read_text()
    for kind in HANDLERS:
        assert f"| `{kind}` |" in text, kind


def test_every_websocket_message_type_has_a_schema() -> None:
    """WEBSOCKET.md's message types are those of server/ws_schema.py, both directions."""
    text = (PROTOCOL / "WEBSOCKET.md").read_text()
    client_part, server_part = text.split("## Server → client")
    client_part = client_part.split("## Client → server")[1]
    documented_client = set(re.findall(r"^\| `([a-z_]+)` \|", client_part, re.M))
    documented_server = set(re.findall(r"^### `([a-z_]+)`$", server_part, re.M))
    assert documented_client == set(CLIENT_SCHEMAS) == set(HANDLERS)
    assert documented_server == set(SERVER_SCHEMAS)
