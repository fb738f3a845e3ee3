"""Bytes in, bytes out: JSON and msgpack bodies, frames and field checks."""

from __future__ import annotations

import json
import math
from typing import Any

import msgpack
from starlette.requests import Request
from starlette.responses import Response

from server.errors import ApiError

JSON = "application/json"
MSGPACK = "application/msgpack"
MSGPACK_ALIASES = ("application/msgpack", "application/x-msgpack", "application/vnd.msgpack")

#: Largest REST body or WebSocket frame the server reads, in bytes.
MAX_MESSAGE_BYTES = 16 * 1024
#: Deepest nesting of lists and maps in a body or frame (a replay export needs 3).
MAX_DEPTH = 16
#: Integers are 64-bit (what msgpack carries): the range a number may take.
MIN_INT, MAX_INT = -(2**63), 2**64 - 1


def check_depth(message: Any) -> Any:
    """``message`` if no list or map in it is nested deeper than :data:`MAX_DEPTH`."""
    level = [message]
    for _ in range(MAX_DEPTH + 1):
        level = [
            item
            for value in level
            if isinstance(value, dict | list)
            for item in (value.values() if isinstance(value, dict) else value)
        ]
        if not level:
            return message
    raise ApiError("malformed", f"lists and maps nest at most {MAX_DEPTH} deep")


def _json_int(text: str) -> int:
    if len(text) > 20 or not MIN_INT <= int(text) <= MAX_INT:
        raise ApiError("malformed", "JSON integers are 64-bit, as in msgpack")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ApiError("malformed", "JSON numbers are finite 64-bit floats, as in msgpack")
    return value


def _json_constant(name: str) -> None:
    raise ApiError("malformed", f"{name} is not JSON")


def unpack(data: bytes, limit: int = MAX_MESSAGE_BYTES) -> Any:
    """Decode a msgpack message of at most ``limit`` bytes, or raise ``malformed``."""
    if len(data) > limit:
        raise ApiError("frame_too_large", f"messages are at most {limit} bytes")
    try:
        message = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as error:  # msgpack raises several unrelated types
        raise ApiError("malformed", f"not valid msgpack: {error}") from None
    return check_depth(message)


def pack(message: Any) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def parse_json(data: bytes, limit: int = MAX_MESSAGE_BYTES) -> Any:
    if len(data) > limit:
        raise ApiError("frame_too_large", f"bodies are at most {limit} bytes")
    try:
        message = json.loads(
            data,
            parse_int=_json_int,
            parse_float=_json_float,
            parse_constant=_json_constant,
        )
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise ApiError("malformed", f"not valid JSON: {str(error)[:200]}") from None
    return check_depth(message)


def wants_msgpack(request: Request) -> bool:
    """Content negotiation on Accept (by q-value): msgpack or JSON (the default)."""
    accept = request.headers.get("accept", "").strip()
    if not accept:
        return False
    ranked = []
    for position, part in enumerate(accept.split(",")):
        media, *params = (piece.strip() for piece in part.split(";"))
        quality = 1.0
        for param in params:
            if param.startswith("q="):
                try:
                    quality = float(param[2:])
                except ValueError:
                    quality = 0.0
        ranked.append((-quality, position, media.lower()))
    for negative_quality, _, media in sorted(ranked):
        if negative_quality == 0:
            break
        if media in MSGPACK_ALIASES:
            return True
        if media in (JSON, "*/*", "application/*"):
            return False
    raise ApiError("not_acceptable", "Accept must allow application/json or application/msgpack")


async def read_body(request: Request, limit: int = MAX_MESSAGE_BYTES) -> Any:
    """The request body (at most ``limit`` bytes) decoded by its Content-Type (JSON when
    absent)."""
    data, media = await read_raw(request, limit)
    return decode_body(data, media, limit)


async def read_raw(request: Request, limit: int = MAX_MESSAGE_BYTES) -> tuple[bytes, str]:
    """The request body's bytes (at most ``limit``) and its media type, not decoded."""
    declared = request.headers.get("content-length")
    if declared and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise ApiError("frame_too_large", f"bodies are at most {limit} bytes")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError("frame_too_large", f"bodies are at most {limit} bytes")
        chunks.append(chunk)
    media = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
    return b"".join(chunks), media


def decode_body(data: bytes, media: str, limit: int = MAX_MESSAGE_BYTES) -> Any:
    """A body decoded by its media type (an empty body is ``{}``)."""
    if not data:
        return {}
    if media in MSGPACK_ALIASES:
        return unpack(data, limit)
    if media in (JSON, "text/json", ""):
        return parse_json(data, limit)
    raise ApiError("unsupported_media_type", f"Content-Type {media!r}: use {JSON} or {MSGPACK}")


def respond(request: Request, content: Any, status: int = 200) -> Response:
    """``content`` as JSON or msgpack, whichever the client asked for."""
    try:
        use_msgpack = wants_msgpack(request)
    except ApiError:
        use_msgpack = False  # a 406 is itself answered in JSON
    if use_msgpack:
        return Response(pack(content), status, media_type=MSGPACK)
    body = json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()
    return Response(body, status, media_type=JSON)


def check_fields(
    message: Any,
    required: dict[str, type | tuple[type, ...]],
    optional: dict[str, type | tuple[type, ...]] | None = None,
) -> dict[str, Any]:
    """``message`` as a dict with exactly these fields, or the typed error."""
    if not isinstance(message, dict):
        raise ApiError("malformed", "a message is a map")
    optional = optional or {}
    for name in message:
        if name not in required and name not in optional:
            raise ApiError("unknown_field", f"unknown field {str(name)[:40]!r}", field=str(name))
    for name, kind in {**required, **optional}.items():
        if name not in message:
            if name in required:
                raise ApiError("missing_field", f"missing field {name!r}", field=name)
            continue
        value = message[name]
        if value is None and name in optional:
            continue
        # bool is an int in Python; no field of the protocol accepts true/false as a number.
        if isinstance(value, bool) and kind is not bool:
            raise ApiError("invalid_field", f"field {name!r} has the wrong type", field=name)
        if isinstance(value, float) and accepts_int(kind):
            message[name] = value = integral(name, value)
        if not isinstance(value, kind):
            raise ApiError("invalid_field", f"field {name!r} has the wrong type", field=name)
    return message


def accepts_int(kind: type | tuple[type, ...]) -> bool:
    return int in kind if isinstance(kind, tuple) else kind is int


def integral(name: str, value: float) -> int:
    """An integral float as the integer it is (JavaScript encoders send integers of
    2^32 and more, such as ``Date.now()``, as float64), or ``invalid_field``."""
    if not math.isfinite(value) or not value.is_integer() or not MIN_INT <= value <= MAX_INT:
        raise ApiError("invalid_field", f"field {name!r} is an integer", field=name)
    return int(value)
