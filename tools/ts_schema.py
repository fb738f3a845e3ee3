"""Write the TypeScript SDK's ``clients/ts/src/schema.ts`` from the server's OpenAPI document.

The document (``server/openapi.py``, served at ``/openapi.json``) holds the schemas the REST
routes check their input against and the WebSocket messages' schemas (``server/ws_schema.py``,
components ``Ws…``); the SDK's REST and message types are generated from it, so a change
of the protocol changes ``schema.ts``, and the SDK's build (``tsc``) breaks where the change
matters.  ``tests/clients/test_ts_sdk.py`` fails while the committed file is stale.

Run: ``.venv/bin/python -m tools.ts_schema`` (``--check`` exits 1 when the file differs).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from server.openapi import openapi_document

TARGET = Path(__file__).resolve().parent.parent / "clients" / "ts" / "src" / "schema.ts"
#: Component names that would shadow a global of TypeScript's standard library.
RENAMED = {"Error": "ErrorBody"}
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def type_name(ref: str) -> str:
    name = ref.rsplit("/", 1)[-1]
    return RENAMED.get(name, name)


def literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def comment(text: str, indent: str) -> str:
    return f"{indent}/** {text.replace('*/', '* /')} */\n"


def ts_type(schema: dict[str, Any], indent: str = "") -> str:
    """The TypeScript type of one JSON Schema (the keywords the document uses)."""
    if "$ref" in schema:
        return type_name(schema["$ref"])
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " | ".join(ts_type(branch, indent) for branch in schema[union])
    if "const" in schema:
        return literal(schema["const"])
    if "enum" in schema:
        return " | ".join(literal(value) for value in schema["enum"])
    kinds = schema.get("type")
    if kinds is None:
        return "unknown"
    if isinstance(kinds, list):
        return " | ".join(ts_type({**schema, "type": kind}, indent) for kind in kinds)
    if kinds in ("integer", "number"):
        return "number"
    if kinds in ("string", "boolean", "null"):
        return kinds
    if kinds == "array" and "prefixItems" in schema:  # a tuple of fixed length
        return "[" + ", ".join(ts_type(item, indent) for item in schema["prefixItems"]) + "]"
    if kinds == "array":
        item = ts_type(schema["items"], indent) if "items" in schema else "unknown"
        return f"Array<{item}>"
    assert kinds == "object", schema
    return object_type(schema, indent)


def object_type(schema: dict[str, Any], indent: str) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    if not properties:
        if isinstance(extra, dict):
            return f"Record<string, {ts_type(extra, indent)}>"
        return "Record<string, unknown>"
    required = set(schema.get("required", ()))
    inner = indent + "  "
    lines = ["{\n"]
    for name, prop in properties.items():
        if "description" in prop:
            lines.append(comment(prop["description"], inner))
        key = name if IDENTIFIER.match(name) else literal(name)
        optional = "" if name in required else "?"
        lines.append(f"{inner}{key}{optional}: {ts_type(prop, inner)};\n")
    lines.append(f"{indent}}}")
    return "".join(lines)


def response_schema(operation: dict[str, Any]) -> dict[str, Any] | None:
    for status, response in sorted(operation["responses"].items()):
        if status.startswith("2"):
            content = response.get("content", {})
            for media in ("application/json", "text/plain"):
                if media in content:
                    return content[media].get("schema", {"type": "string"})
    return None


def operation_type(operation: dict[str, Any], indent: str) -> str:
    inner = indent + "  "
    params: dict[str, list[dict[str, Any]]] = {"path": [], "query": [], "header": []}
    for param in operation.get("parameters", []):
        params[param["in"]].append(param)
    fields = []
    for where in ("path", "query", "header"):
        if params[where]:
            schema = {
                "type": "object",
                "required": [p["name"] for p in params[where] if p.get("required")],
                "properties": {
                    p["name"]: {
                        **p["schema"],
                        **({"description": p["description"]} if "description" in p else {}),
                    }
                    for p in params[where]
                },
            }
            fields.append(f"{inner}{where}: {ts_type(schema, inner)};\n")
    body = operation.get("requestBody")
    if body is not None:
        body_type = ts_type(body["content"]["application/json"]["schema"], inner)
        fields.append(f"{inner}body{'' if body.get('required') else '?'}: {body_type};\n")
    response = response_schema(operation)
    fields.append(f"{inner}response: {ts_type(response, inner) if response else 'void'};\n")
    security = operation.get("security")
    auth = "none" if not security else ("optional" if {} in security else "required")
    fields.append(f"{inner}auth: {literal(auth)};\n")
    return "{\n" + "".join(fields) + f"{indent}}}"


def render(document: dict[str, Any]) -> str:
    out = [
        "// GENERATED by `.venv/bin/python -m tools.ts_schema` from the server's OpenAPI\n",
        "// document (server/openapi.py, served at /openapi.json). Do not edit: a test fails\n",
        "// when it is stale.\n",
        "/* eslint-disable */\n\n",
        "/** The version of the OpenAPI document these types come from. */\n",
        f"export const API_VERSION = {literal(document['info']['version'])};\n\n",
    ]
    schemas = document["components"]["schemas"]
    out.append("/** Every error code of protocol/ERRORS.md. */\n")
    out.append(f"export const ERROR_CODES = {literal(schemas['ErrorCode']['enum'])} as const;\n")
    out.append("export type ErrorCode = (typeof ERROR_CODES)[number];\n\n")
    for name, schema in schemas.items():
        if name == "ErrorCode":
            continue  # the type of ERROR_CODES above
        if "description" in schema:
            out.append(comment(schema["description"], ""))
        out.append(f"export type {type_name(name)} = {ts_type(schema)};\n\n")
    out.append("/** Every REST operation: its parameters, body, answer and authentication. */\n")
    out.append("export interface Operations {\n")
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "summary" in operation:
                out.append(comment(operation["summary"], "  "))
            key = literal(f"{method.upper()} {path}")
            out.append(f"  {key}: {operation_type(operation, '  ')};\n")
    out.append("}\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render(openapi_document())
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run python -m tools.ts_schema", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
