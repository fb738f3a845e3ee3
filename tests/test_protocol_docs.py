"""The protocol documents agree with the code they describe."""

from __future__ import annotations

import re
from pathlib import Path

from server.app import ROUTES
from server.errors import ERROR_CODES
from server.ws import HANDLERS

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
