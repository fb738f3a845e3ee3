"""The HTTP/1.1 protocol ``python -m server`` runs: uvicorn's h11 protocol plus a deadline
on each request head.

uvicorn bounds the wait between keep-alive requests (``timeout_keep_alive``) and, through
h11's ``max_incomplete_event_size``, the part of a request head received so far (``400``
when it grows past the limit) -- but a whole head that arrives at once passes h11 at any
size, and nothing bounds the time a client takes to send its head: one header byte a
second would hold a connection for ever (slowloris).  So here a request head over
``h11_max_incomplete_event_size`` bytes (``MAX_HEADER_BYTES``) is answered ``431`` and
the connection closed (after a lingering half-close, so the answer is not lost to a
reset), and a connection that has not sent a whole head within
``HEADER_TIMEOUT`` seconds of connecting (or of starting its next request) is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.config import Settings

DEFAULT_MAX_HEAD = 64 * 1024
#: After a refusal, input still in flight is read and dropped for this long (or this many
#: bytes) before the socket closes: closing with unread input makes the kernel send a reset,
#: which can destroy the answer before the client has read it (nginx's lingering close).
LINGER_SECONDS = 2.0
LINGER_BYTES = 1 << 20
HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\ncontent-length: 29\r\n"
    b"connection: close\r\n\r\nthe request head is too large"
)


class HeaderDeadlineH11Protocol(H11Protocol):
    #: Read once per worker from the environment ``python -m server`` sets.
    header_timeout = Settings.from_environment().header_timeout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None
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

    def _refuse_head(self) -> None:
        self._disarm()
        self.logger.info("request head over %d bytes: refused", self.max_head_bytes)
        self.transport.write(HEAD_TOO_LARGE)
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self._linger_left = LINGER_BYTES
        self._head_deadline = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
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
