"""The HTTP/1.1 protocol ``python -m server`` runs: uvicorn's h11 protocol plus a deadline
on each request head.

uvicorn bounds a request head's size (``h11_max_incomplete_event_size``: a bigger head
gets ``400`` and the connection is closed) and the wait between keep-alive requests
(``timeout_keep_alive``), but not the time a client takes to send the head: a client
sending one header byte a second would hold its connection for ever (slowloris).  Here a
connection that has not sent a whole request head within ``HEADER_TIMEOUT`` seconds of
connecting (or of starting its next request) is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.config import Settings


class HeaderDeadlineH11Protocol(H11Protocol):
    #: Read once per worker from the environment ``python -m server`` sets.
    header_timeout = Settings.from_environment().header_timeout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._head_deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the head is complete (or the request failed)

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
