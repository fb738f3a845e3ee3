"""Schemathesis hooks (``SCHEMATHESIS_HOOKS``) for the contract test: msgpack, the
protocol's second body and answer encoding, in and out, so those cases run too."""

from __future__ import annotations

from typing import Any

import msgpack
import schemathesis


@schemathesis.serializer("application/msgpack")
def to_msgpack(ctx: Any, value: Any) -> bytes:
    try:
        return bytes(msgpack.packb(value, use_bin_type=True))
    except (OverflowError, TypeError, ValueError):
        # Negative cases hold integers beyond 64 bits, which msgpack cannot carry: send
        # a byte msgpack never uses, which the server must refuse as malformed.
        return b"\xc1"


@schemathesis.deserializer("application/msgpack")
def from_msgpack(ctx: Any, response: Any) -> Any:
    return msgpack.unpackb(response.content, raw=False)
