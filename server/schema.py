"""Input checked against the JSON Schemas that ``/openapi.json`` publishes.

Each REST route declares its body and query schemas once, next to its handler
(``server/rest.py``); :func:`check` validates a decoded body against that schema and
``server/openapi.py`` puts the same dict in the document, so what the server accepts
and what the document says cannot drift.  Only the JSON Schema keywords in
:data:`KEYWORDS` are understood (a test walks every request schema for others).

The rules beyond plain JSON Schema, stated in ``protocol/REST.md``:

* a float with no fractional part is an integer (as JSON Schema 2020-12 says) and is
  handed on as an ``int``; ``true``/``false`` are never numbers;
* ``pattern`` must be anchored (``^...$``) and matches the whole string (no trailing
  newline slips past ``$``);
* ``x-error-code`` names the error of a value outside ``pattern`` or ``enum`` where it
  is more telling than ``invalid_field`` (``invalid_seed``, ``unknown_game_name``).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from server.codec import MAX_INT, MIN_INT
from server.errors import ApiError

#: The extension keyword naming the error code of a refused value.
ERROR_CODE = "x-error-code"
#: The keywords :func:`check` enforces, and the annotations it ignores.
KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "pattern",
        "format",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "anyOf",
        ERROR_CODE,
    }
)
ANNOTATIONS = frozenset({"description", "default", "examples", "title"})

#: The integers of the protocol: 64-bit, as msgpack carries them.
INTEGER: dict[str, Any] = {"type": "integer", "minimum": MIN_INT, "maximum": MAX_INT}

_TYPES: dict[str, Any] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "integer": lambda value: _is_number(value) and float(value).is_integer(),
    "number": lambda value: _is_number(value),
}


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and (not isinstance(value, float) or math.isfinite(value))
    )


@cache
def _whole(pattern: str) -> re.Pattern[str]:
    assert pattern.startswith("^") and pattern.endswith("$"), pattern
    return re.compile(pattern[1:-1])


def check(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` if it is valid under ``schema`` (integral floats made ints where an
    integer is expected), else the typed error: ``malformed`` for a body that is not
    a map, ``missing_field``, ``unknown_field`` or ``invalid_field`` naming the field."""
    branches = schema.get("anyOf", [schema])
    if not isinstance(value, dict) and all(b.get("type") == "object" for b in branches):
        raise ApiError("malformed", "a message is a map")
    return _check(value, schema, "")


def _fail(path: str, message: str, code: str = "invalid_field") -> ApiError:
    name = path or "body"
    return ApiError(code, f"field {name[:60]!r} {message}", field=name[:60])


def _check(value: Any, schema: dict[str, Any], path: str) -> Any:
    if "anyOf" in schema:
        return _any_of(value, schema["anyOf"], path)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[kind](value) for kind in kinds):
            raise _fail(path, f"must be {' or '.join(kinds)}")
        if "integer" in kinds and isinstance(value, float):
            value = int(value)
    if "const" in schema and value != schema["const"]:
        raise _fail(path, f"must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        code = schema.get(ERROR_CODE, "invalid_field")
        raise _fail(path, "is not one of the allowed values", code)
    if isinstance(value, str):
        _check_string(value, schema, path)
    elif _is_number(value):
        if value < schema.get("minimum", -math.inf) or value > schema.get("maximum", math.inf):
            raise _fail(path, "is out of range")
    elif isinstance(value, list):
        if len(value) > schema.get("maxItems", math.inf):
            raise _fail(path, f"has more than {schema['maxItems']} items")
        if len(value) < schema.get("minItems", 0):
            raise _fail(path, f"has fewer than {schema['minItems']} items")
        # A tuple types its first items by position: prefixItems (2020-12, OpenAPI 3.1),
        # or items as a list (draft-07, the AsyncAPI document); then items (or
        # additionalItems) the rest.
        prefix: list[dict[str, Any]] = schema.get("prefixItems", [])
        rest = schema.get("items")
        if isinstance(rest, list):
            prefix, rest = rest, schema.get("additionalItems")
        checked = []
        for i, item in enumerate(value):
            spec = prefix[i] if i < len(prefix) else rest
            checked.append(item if spec is None else _check(item, spec, f"{path}[{i}]"))
        value = checked
    elif isinstance(value, dict):
        value = _check_object(value, schema, path)
    return value


def _check_string(value: str, schema: dict[str, Any], path: str) -> None:
    if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", math.inf):
        raise _fail(path, "has the wrong length")
    if "pattern" in schema and not _whole(schema["pattern"]).fullmatch(value):
        code = schema.get(ERROR_CODE, "invalid_field")
        raise _fail(path, f"must match {schema['pattern']}", code)
    if schema.get("format") == "date":
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            raise _fail(path, "must be a date YYYY-MM-DD") from None
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value, re.ASCII):
            raise _fail(path, "must be a date YYYY-MM-DD")


def _check_object(value: dict[Any, Any], schema: dict[str, Any], path: str) -> dict[Any, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    prefix = f"{path}." if path else ""
    for name in value:
        if name not in properties and extra is False:
            text = str(name)[:40]
            raise ApiError("unknown_field", f"unknown field {text!r}", field=prefix + text)
    checked = {}
    for name, item in value.items():
        if name in properties:
            item = _check(item, properties[name], prefix + name)
        elif isinstance(extra, dict):
            item = _check(item, extra, prefix + str(name))
        checked[name] = item
    for name in schema.get("required", ()):
        if name not in value:
            raise ApiError("missing_field", f"missing field {name!r}", field=prefix + name)
    return checked


def _any_of(value: Any, branches: list[dict[str, Any]], path: str) -> Any:
    """The first branch ``value`` is valid under; else the error of the branch it most
    likely meant: the one with the most of its required fields, then the fewest of
    them missing (the first of equals)."""
    errors = []
    fields = set(value) if isinstance(value, dict) else set()
    for branch in branches:
        try:
            return _check(value, branch, path)
        except ApiError as error:
            required = set(branch.get("required", ()))
            errors.append(((-len(fields & required), len(required - fields)), error))
    raise min(errors, key=lambda pair: pair[0])[1]


def query(params: Mapping[str, str], specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The query parameters of ``specs`` (OpenAPI parameter objects) read from
    ``params``: each absent one at its schema's default, an integer from at most 9
    ASCII digits (``str.isdigit`` also takes digits such as '²'), else ``invalid_field``."""
    values: dict[str, Any] = {}
    for spec in specs:
        name, schema = spec["name"], spec["schema"]
        text = params.get(name)
        if text is None:
            values[name] = schema.get("default")
            continue
        value: Any = text
        if schema.get("type") == "integer":
            if not (text.isascii() and text.isdigit() and len(text) <= 9):
                low, high = schema.get("minimum"), schema.get("maximum")
                raise ApiError(
                    "invalid_field", f"{name} is an integer from {low} to {high}", field=name
                )
            value = int(text)
        values[name] = _check(value, schema, name)
    return values
