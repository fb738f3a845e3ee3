"""The HTTP/1.1 protocol ``python -m server`` runs: uvicorn's h11 protocol plus a deadline
on each request head and body, and a refusal of a body too large to be read.

uvicorn bounds the wait between keep-alive requests (``timeout_keep_alive``) and, through
h11's ``max_incomplete_event_size``, the part of a request head received so far (``400``
when it grows past the limit) -- but a whole head that arrives at once passes h11 at any
size, and nothing bounds the time a client takes to send its head or its body: one byte a
second would hold a connection for ever (slowloris), even after the app has answered
(uvicorn reads a body the app did not want to its end before the next request).  So here:

- a request head over ``h11_max_incomplete_event_size`` bytes (``MAX_HEADER_BYTES``) is
  answered ``431`` and the connection closed (after a lingering half-close, so the answer
  is not lost to a reset);
- a connection that has not sent a whole head within ``HEADER_TIMEOUT`` seconds of
  connecting (or of starting its next request) is closed;
- a body not received in full within ``BODY_TIMEOUT`` seconds of its head is given up:
  ``408`` if the app has not answered yet, and the connection closed;
- a chunk announcing more than any route takes (:data:`LARGEST_BODY`) is answered ``413``
  at once, and the connection closed.

The app sees a given-up body as a client gone (``ClientDisconnect``), which it answers
with an access line and nothing else (``server.app``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.audit import AUDIT_BODY_BYTES
from server.config import Settings

DEFAULT_MAX_HEAD = 64 * 1024
#: After a refusal, input still in flight is read and dropped for this long (or this many
#: bytes) before the socket closes: closing with unread input makes the kernel send a reset,
#: which can destroy the answer before the client has read it (nginx's lingering close).
LINGER_SECONDS = 2.0
LINGER_BYTES = 1 << 20
#: The largest body any route reads (an audit's).
LARGEST_BODY = AUDIT_BODY_BYTES


def refusal(status: str, text: str) -> bytes:
    """A whole plain-text answer that closes the connection."""
    body = text.encode()
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


HEAD_TOO_LARGE = refusal("431 Request Header Fields Too Large", "the request head is too large")
BODY_TOO_SLOW = refusal("408 Request Timeout", "the request body came too slowly")
BODY_TOO_LARGE = refusal("413 Content Too Large", f"bodies are at most {LARGEST_BODY} bytes")


class HeaderDeadlineH11Protocol(H11Protocol):
    #: Read once per worker from the environment ``python -m server`` sets.
    header_timeout = Settings.from_environment().header_timeout
    body_timeout = Settings.from_environment().body_timeout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None
        self._body_deadline: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._linger_left: int | None = None  # bytes still dropped after a refusal
        self.max_head_bytes = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._linger_left is not None:
            self._linger_left -= len(data)
            if self._linger_left <= 0:
                self.transport.close()
            return
        if self.conn.their_state is h11.IDLE:
            if self._head_deadline is None:
                self._arm()  # the first bytes of the next request on a kept-alive connection
            end = data.find(b"\r\n\r\n")
            self._head_bytes += len(data) if end < 0 else end + 4
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()
                return
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the head is complete (or the request failed)
            self._head_bytes = 0
        if self.conn.their_state is h11.SEND_BODY:
            if self._body_deadline is None:
                self._body_deadline = self.loop.call_later(self.body_timeout, self._body_too_slow)
            # h11 keeps the announced size of the chunk it is reading to itself.
            chunk = getattr(getattr(self.conn, "_reader", None), "_bytes_in_chunk", 0)
            if chunk > LARGEST_BODY:
                self.logger.info("request body chunk of %d bytes: refused", chunk)
                self._give_up_body(BODY_TOO_LARGE)
        elif self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None

    def _refuse_head(self) -> None:
        self._disarm()
        self.logger.info("request head over %d bytes: refused", self.max_head_bytes)
        self._answer_and_close(HEAD_TOO_LARGE)

    def _answer_and_close(self, answer: bytes) -> None:
        """Write ``answer`` and close, dropping the input in flight for a while first."""
        self.transport.write(answer)
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self._linger_left = LINGER_BYTES
        self._head_deadline = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def _body_too_slow(self) -> None:
        self._body_deadline = None
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            seconds = self.body_timeout
            self.logger.info("no whole request body within %.1f s: closing", seconds)
            self._give_up_body(BODY_TOO_SLOW)

    def _give_up_body(self, answer: bytes) -> None:
        """Stop reading the body: ``answer`` if the app has not begun its own (the app's
        read ends as if the client had gone), and close."""
        if self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None
        cycle = self.cycle
        if cycle is None or cycle.response_started or cycle.disconnected:
            self.transport.close()
            return
        # The app's reads and writes end here: nothing of it goes after the answer.
        cycle.disconnected = True
        cycle.message_event.set()
        self._answer_and_close(answer)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_slow)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            seconds = self.header_timeout
            self.logger.info("no whole request head within %.1f s: closing", seconds)
            self.transport.close()
