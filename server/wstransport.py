"""The WebSocket transport: uvicorn's websockets-sansio protocol with permessage-deflate
as ``--ws-compression`` sets it, and a send that takes no ``await``.

Compression (README.md, "WebSocket compression"):

- ``message``: each message is deflated on its own (``server_no_context_takeover`` and
  ``client_no_context_takeover``), so a socket holds no zlib state between messages, and a
  patch sent to many sockets is deflated once per worker (:func:`encoded_frame`);
- ``context``: the deflate stream carries over from message to message (smaller frames),
  with a small window and memory level, but each socket keeps its own compressor and
  decompressor and each patch is deflated once per socket;
- ``off``: permessage-deflate is not negotiated.

Messages deflated on their own go uncompressed under :data:`MIN_DEFLATED_ALONE` bytes,
with context takeover under :data:`MIN_DEFLATED_IN_CONTEXT`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
import zlib
from collections.abc import Sequence
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.base import Extension, ServerExtensionFactory
from websockets.extensions.permessage_deflate import (
    PerMessageDeflate,
    ServerPerMessageDeflateFactory,
)
from websockets.frames import Frame, Opcode
from websockets.server import ServerProtocol
from websockets.typing import ExtensionParameter

from server.config import WS_COMPRESSION_MODES

#: Messages deflated on their own (``message``) go uncompressed below this size, as the
#: ``ws`` library of Node.js does: deflating a mover's ``accepted`` (about 660 bytes, to
#: 270) took 7 % of a move's CPU, for 400 bytes a move (BENCHMARKS.md, "Move path").
MIN_DEFLATED_ALONE = 1024
#: With context takeover (``context``) small messages shrink most, by referring to earlier
#: ones; below this size deflate's block overhead makes them no smaller.
MIN_DEFLATED_IN_CONTEXT = 128
#: The server's LZ77 window (2**12 = 4 KB): a snapshot fits in it; the zlib minimum is 9.
SERVER_WINDOW_BITS = 12
#: The window a client may use for what it sends (its messages are a few dozen bytes).
CLIENT_WINDOW_BITS = 9
#: zlib's memory level (1-9; default 8): 4 keeps a context compressor near 17 KB.
MEMORY_LEVEL = 4
#: The shortest wait before a ping, as a share of the ping interval (see ``schedule_ping``).
PING_SPREAD = 0.75
#: The key of this protocol object in an ASGI scope's ``extensions``.
SCOPE_KEY = "server.wstransport"
#: After closing for a protocol error (a message over the size limit: 1009), what the
#: client still sends is read and dropped for this long, or this many bytes, before the
#: connection closes: closed with input unread, the kernel resets it, and the close frame
#: can be lost before the client reads it.
LINGER_SECONDS = 2.0
LINGER_BYTES = 16 * 1024 * 1024
#: A binary message's first header byte, and the flag of a deflated one (RSV1).
BINARY_FIN = 0x80 | Opcode.BINARY.value
RSV1 = 0x40


class SmallFramesPlain(PerMessageDeflate):
    """permessage-deflate that leaves small messages as they are (RFC 7692 lets each
    message choose; the client sees RSV1 unset): under :data:`MIN_DEFLATED_ALONE` bytes
    without context takeover, under :data:`MIN_DEFLATED_IN_CONTEXT` with it."""

    def encode(self, frame: Frame) -> Frame:
        smallest = MIN_DEFLATED_ALONE if self.local_no_context_takeover else MIN_DEFLATED_IN_CONTEXT
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY) and len(frame.data) < smallest:
            return frame
        return super().encode(frame)


class BoundedDeflateFactory(ServerPerMessageDeflateFactory):
    """Negotiates permessage-deflate with this module's window and memory bounds."""

    def process_request_params(
        self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Extension]
    ) -> tuple[list[ExtensionParameter], PerMessageDeflate]:
        response, negotiated = super().process_request_params(params, accepted_extensions)
        return response, SmallFramesPlain(
            negotiated.remote_no_context_takeover,
            negotiated.local_no_context_takeover,
            negotiated.remote_max_window_bits,
            negotiated.local_max_window_bits,
            negotiated.compress_settings,
        )


def extension_factories(compression: str) -> list[ServerExtensionFactory]:
    if compression == "off":
        return []
    per_message = compression == "message"
    return [
        BoundedDeflateFactory(
            server_no_context_takeover=per_message,
            client_no_context_takeover=per_message,
            server_max_window_bits=SERVER_WINDOW_BITS,
            client_max_window_bits=CLIENT_WINDOW_BITS,
            compress_settings={"memLevel": MEMORY_LEVEL},
        )
    ]


#: One compressor per window size for the messages deflated on their own, kept for the
#: worker's life: setting one up costs about four times what deflating a patch does.
_compressors: dict[int, Any] = {}


def build_frame(data: bytes, window_bits: int | None) -> bytes:
    """``data`` as one unmasked binary frame (a server's), deflated on its own with
    ``window_bits`` (None: not deflated)."""
    first = BINARY_FIN
    payload = data
    if window_bits is not None and len(data) >= MIN_DEFLATED_ALONE:
        compressor = _compressors.get(window_bits)
        if compressor is None:
            # Level 1: on messages of a few hundred bytes it deflates within a few per cent
            # of the default level's size in three quarters of its time.
            compressor = _compressors[window_bits] = zlib.compressobj(
                zlib.Z_BEST_SPEED, zlib.DEFLATED, -window_bits, MEMORY_LEVEL
            )
        # A full flush forgets the messages before, so this one inflates on its own (no
        # context takeover); it ends with 00 00 ff ff, which RFC 7692 says to leave out.
        payload = (compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH))[:-4]
        first |= RSV1
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", first, size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", first, 126, size)
    else:
        header = struct.pack("!BBQ", first, 127, size)
    return header + payload


#: The message last encoded and its frames by window bits (None: plain): a patch fanned
#: out to a worker's sockets is the same ``bytes`` object for each, so it is encoded once.
_last_message: bytes | None = None
_last_frames: dict[int | None, bytes] = {}


def encoded_frame(data: bytes, window_bits: int | None) -> bytes:
    global _last_message, _last_frames
    if data is not _last_message:
        _last_message, _last_frames = data, {}
    frame = _last_frames.get(window_bits)
    if frame is None:
        frame = _last_frames[window_bits] = build_frame(data, window_bits)
    return frame


class Inbox:
    """The protocol's events for the app, in place of uvicorn's ``asyncio.Queue`` (three
    deques and an ``Event``, about 3 KB per socket): a list and the reader's future."""

    __slots__ = ("events", "waiter")

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.waiter: asyncio.Future[None] | None = None

    def put_nowait(self, event: Any) -> None:
        self.events.append(event)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def empty(self) -> bool:
        return not self.events

    async def get(self) -> Any:
        while not self.events:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        return self.events.pop(0)


class Gate:
    """Whether the transport takes more, in place of an ``asyncio.Event`` (and its deque)."""

    __slots__ = ("opened", "waiters")

    def __init__(self) -> None:
        self.opened = True
        self.waiters: list[asyncio.Future[None]] = []

    def set(self) -> None:
        self.opened = True
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters = []

    def clear(self) -> None:
        self.opened = False

    def is_set(self) -> bool:
        return self.opened

    async def wait(self) -> None:
        if not self.opened:
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            await waiter


#: A socket's own compressor is needed (context takeover): :func:`encoded_frame` cannot serve it.
OWN_CONTEXT = -1


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's protocol with this module's permessage-deflate (``compression``, set by
    the subclasses) and :meth:`send_now`; the ASGI scope carries it under
    :data:`SCOPE_KEY`."""

    compression = "message"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = ServerProtocol(
            extensions=extension_factories(self.compression),
            max_size=self.config.ws_max_size,
            logger=logging.getLogger("uvicorn.error"),
        )
        self.queue = Inbox()  # type: ignore[assignment]
        self.writable = Gate()  # type: ignore[assignment]
        #: How :meth:`send_now` encodes for this socket, known after the handshake.
        self.window_bits: int | None = None
        #: Bytes still dropped after a close for a protocol error (None: not closing so).
        self.linger_left: int | None = None

    def data_received(self, data: bytes) -> None:
        if self.linger_left is None:
            super().data_received(data)
            return
        self.linger_left -= len(data)
        if self.linger_left <= 0:
            self.transport.close()

    def handle_parser_exception(self) -> None:
        """uvicorn's, but the connection is half-closed and lingers (:data:`LINGER_SECONDS`)
        rather than closed at once: the close frame (1009 for a message over the limit,
        in one frame or in fragments) reaches a client that is still sending."""
        close = self.conn.close_sent
        assert close is not None
        self.queue.put_nowait(
            {"type": "websocket.disconnect", "code": close.code, "reason": close.reason}
        )
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.linger_left = LINGER_BYTES
        # As the close timer, it also keeps uvicorn from closing the connection at once
        # when the app returns.
        self.close_timer = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if self.response.status_code != 101:
            return
        for extension in self.conn.extensions:
            if isinstance(extension, PerMessageDeflate):
                self.window_bits = (
                    extension.local_max_window_bits
                    if extension.local_no_context_takeover
                    else OWN_CONTEXT
                )
        self.scope["extensions"][SCOPE_KEY] = self  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        # The scope refers to this protocol (SCOPE_KEY) and this protocol to the scope: a
        # cycle, which only a full garbage collection (rare: see server.app) would free,
        # so every closed socket's protocol, buffers and scope stayed until one.
        scope = getattr(self, "scope", None)  # None: lost before its handshake
        if scope is not None:
            scope["extensions"].pop(SCOPE_KEY, None)

    def start_keepalive(self) -> None:
        # Called once the handshake's response is sent: its request and response go.
        self.request = self.response = None  # type: ignore[assignment]
        super().start_keepalive()

    def schedule_ping(self) -> None:
        """The next ping after a random 75-100 % of ``--ws-ping-interval``: sockets opened
        together (a reconnect storm after a deploy) would otherwise ping together for
        ever, a worker's thousands of pings and pongs in one burst that stalls its moves."""
        assert self.ping_interval is not None
        delay = self.ping_interval * random.uniform(PING_SPREAD, 1.0) - self.last_ping_rtt
        self.ping_timer = self.loop.call_later(max(0.0, delay), self.send_keepalive_ping)

    def send_now(self, data: bytes) -> int | None:
        """Send ``data`` as one binary message now, without waiting for the transport
        (what it cannot take yet it buffers): the bytes it buffers, or None if the socket
        is closing."""
        if not self.handshake_complete or self.close_sent or self.transport.is_closing():
            return None
        if self.window_bits == OWN_CONTEXT:
            self.conn.send_binary(data)
            self.transport.write(b"".join(self.conn.data_to_send()))
        else:
            self.transport.write(encoded_frame(data, self.window_bits))
        return self.transport.get_write_buffer_size()

    def drop(self) -> None:
        """Close the connection now, dropping what the client has not read."""
        self.transport.abort()


class ContextDeflateProtocol(WebSocketProtocol):
    compression = "context"


class PlainProtocol(WebSocketProtocol):
    compression = "off"


#: ``--ws-compression`` -> the uvicorn ``ws`` protocol class.
PROTOCOLS: dict[str, type[WebSocketProtocol]] = {
    "message": WebSocketProtocol,
    "context": ContextDeflateProtocol,
    "off": PlainProtocol,
}


assert set(PROTOCOLS) == set(WS_COMPRESSION_MODES)


def protocol_path(compression: str) -> str:
    """The import path of ``compression``'s protocol class, for ``uvicorn.run(ws=...)``
    (worker processes import it by name)."""
    return f"{__name__}:{PROTOCOLS[compression].__name__}"
