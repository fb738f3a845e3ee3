"""Request limits of ``python -m server`` (``server.http``): a head above
``--max-header-bytes`` is refused at once, a client that sends its head too slowly
(slowloris) is disconnected ``--header-timeout`` seconds after it connected, one that
sends its body too slowly ``--body-timeout`` seconds after its head, answered or not; a
chunk of an impossible size is refused at once; a client gone mid-body is one access
line."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from ops_support import ServerProcess, started

HEADER_TIMEOUT = 1.5
#: Long enough that an answer "at once" stands apart from one at the timeout on a loaded
#: machine (the suite's parallel workers share two cores).
BODY_TIMEOUT = 4.0


# One server serves every test of this module: each opens its own connections and reads
# only the log lines printed since it started (a ``python -m server`` start-up, its Valkey
# and workers, costs about a CPU second).  So the tests run in the module's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server_process(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ServerProcess]:
    async with started(
        "--data-dir",
        str(tmp_path_factory.mktemp("http-limits")),
        "--header-timeout",
        str(HEADER_TIMEOUT),
        "--body-timeout",
        str(BODY_TIMEOUT),
        "--log-format",
        "json",
    ) as running:
        yield running


@dataclass
class ServerSince:
    """The module's server as one test sees it: its port, and its log from the test's start."""

    process: ServerProcess
    first_line: int

    @property
    def port(self) -> int:
        return self.process.port

    def records(self) -> list[dict[str, Any]]:
        return ServerProcess.records_of(self.process.lines[self.first_line :])


@pytest_asyncio.fixture(loop_scope="module")
async def server(server_process: ServerProcess) -> ServerSince:
    return ServerSince(server_process, len(server_process.lines))


def unexpected(records: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    """The log records with a traceback or at error level."""
    return [r for r in records if "exception" in r or r["level"] in ("error", "critical")]


async def read_all(reader: asyncio.StreamReader, timeout: float) -> bytes:
    """Everything until the server closes the connection (bounded by ``timeout``)."""
    chunks = []
    async with asyncio.timeout(timeout):
        while chunk := await reader.read(65536):
            chunks.append(chunk)
    return b"".join(chunks)


async def test_a_head_over_the_limit_is_refused_fast(server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    started_at = time.monotonic()
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
    await writer.drain()
    answer = await read_all(reader, 5)
    writer.close()
    assert answer.split(b"\r\n")[0].split(b" ")[1] in (b"400", b"431"), answer[:200]
    assert time.monotonic() - started_at < 2


async def test_a_head_growing_over_the_limit_in_pieces_is_refused(server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    for index in range(20):  # 20 headers of 8 KB, each sent on its own
        writer.write(b"X-P%d: %s\r\n" % (index, b"p" * 8192))
        await writer.drain()
        await asyncio.sleep(0.01)
    answer = await read_all(reader, 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]


async def test_the_refusal_survives_input_still_in_flight(server) -> None:
    """The server drains what the client sent past the limit before it closes: closing
    with unread input would reset the connection and destroy the 431 on its way."""
    for _ in range(10):
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        headers = b"".join(b"X-P%d: %s\r\n" % (i, b"p" * 8192) for i in range(20))
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + headers)
        await writer.drain()
        answer = await read_all(reader, 5)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]


async def test_a_head_under_the_limit_is_served(server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    headers = b"".join(b"X-H%d: %s\r\n" % (i, b"b" * 1000) for i in range(40))  # 40 KB
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n")
    answer = await read_all(reader, 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


async def test_a_slowloris_client_is_cut_after_the_header_timeout(server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    started_at = time.monotonic()
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"z" * 100

    async def trickle() -> None:
        for byte in head:  # one byte every 0.25 s: the head would take 30 s
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.25)

    sender = asyncio.create_task(trickle())
    try:
        answer = await read_all(reader, HEADER_TIMEOUT + 6)
    except ConnectionResetError:  # closed with the trickle's latest bytes unread: a reset
        answer = b""
    finally:
        sender.cancel()
        writer.close()
    elapsed = time.monotonic() - started_at
    assert answer == b""  # closed, no response
    # Cut at the header timeout, not when the head ends (30 s); the slack is a loaded machine's.
    assert HEADER_TIMEOUT - 0.2 <= elapsed < HEADER_TIMEOUT + 4.5, elapsed


async def test_a_silent_connection_is_cut_and_keep_alive_requests_still_work(server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    started_at = time.monotonic()
    assert await read_all(reader, HEADER_TIMEOUT + 6) == b""
    assert time.monotonic() - started_at < HEADER_TIMEOUT + 4.5
    writer.close()

    # Two requests on one connection, the second after a pause shorter than the timeouts.
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    for index in range(2):
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        status = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert status.startswith(b"HTTP/1.1 200"), (index, status)
        await asyncio.wait_for(
            reader.readexactly(int(status.split(b"content-length: ")[1].split(b"\r\n")[0])), 5
        )
        await asyncio.sleep(HEADER_TIMEOUT * 0.6)
    writer.close()


async def drip(writer: asyncio.StreamWriter, data: bytes, every: float) -> None:
    for byte in data:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(every)


@pytest.mark.parametrize("path", ["/v1/players", "/v1/audit"])
async def test_a_body_dripped_slowly_is_cut_after_the_body_timeout(server, path: str) -> None:
    """Dripped to a route that reads it (408), or that answers before reading it (the
    audit's 401): either way the connection ends once the body timeout is up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    started_at = time.monotonic()
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n".encode()
    )
    sender = asyncio.create_task(drip(writer, b"{" + b" " * 999, 0.1))  # 100 s in all
    try:
        answer = await read_all(reader, BODY_TIMEOUT + 8)
    finally:
        sender.cancel()
        writer.close()
    elapsed = time.monotonic() - started_at
    status = answer.split(b"\r\n")[0]
    assert status in (b"HTTP/1.1 408 Request Timeout", b"HTTP/1.1 401 Unauthorized"), answer
    assert BODY_TIMEOUT - 0.2 <= elapsed < BODY_TIMEOUT + 4, elapsed  # the drip: 100 s
    await asyncio.sleep(0.5)
    assert unexpected(server.records()) == []


async def test_a_chunk_of_an_impossible_size_is_refused_at_once(server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    started_at = time.monotonic()
    writer.write(
        b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nffffffffffff\r\n{}"
    )
    await writer.drain()
    answer = await read_all(reader, 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert time.monotonic() - started_at < BODY_TIMEOUT - 1  # not at the body timeout
    await asyncio.sleep(0.5)
    assert unexpected(server.records()) == []


async def test_a_client_gone_mid_body_is_one_info_line(server) -> None:
    for _ in range(5):
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"name": '
        )
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.close()

    def gone_lines() -> list[dict]:
        return [
            r for r in server.records() if r.get("path") == "/v1/players" and r.get("status") == 499
        ]

    async with asyncio.timeout(10):  # the server notices each close as it is scheduled
        while len(gone_lines()) < 5:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # anything it would log after them
    assert unexpected(server.records()) == []
    gone = gone_lines()
    assert len(gone) == 5 and all(r["level"] == "info" for r in gone), gone
