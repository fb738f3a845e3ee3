"""protocol/ is the wire contract a client team works from alone: it imports nothing from the
server, the clients or the tools (tools that need both live in tools/)."""

from __future__ import annotations

import ast
from pathlib import Path

PROTOCOL = Path(__file__).resolve().parent.parent / "protocol"
FORBIDDEN = ("server", "clients", "tools", "tests", "benchmarks")


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_protocol_modules_import_nothing_from_server_clients_or_tools() -> None:
    sources = sorted(PROTOCOL.rglob("*.py"))
    assert sources, "protocol/ has Python modules"
    offending = {
        f"{path.relative_to(PROTOCOL.parent)}: {module}"
        for path in sources
        for module in imported_modules(path)
        if module.split(".")[0] in FORBIDDEN
    }
    assert offending == set()
