"""``--ws-ping-interval``: the server pings an idle WebSocket that often, and closes one
whose pong does not come within as long again."""

from __future__ import annotations

import asyncio
import base64
import os

from ops_support import started

SECRET = "815287940bb76fdc5bfc6e410f741abf1753e8e72bd1c3ea16b135eccfe42eb4"
PING, CLOSE = 0x9, 0x8


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One unmasked server frame: (opcode, payload)."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        size = int.from_bytes(await reader.readexactly(2), "big")
    elif size == 127:
        size = int.from_bytes(await reader.readexactly(8), "big")
    return first & 0x0F, await reader.readexactly(size)


async def open_socket(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket handshake by hand (no client library answering pings for us)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET /v2/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101 ")
    return reader, writer


async def test_an_idle_socket_is_pinged_and_closed_when_it_does_not_answer(
    redis_url: str,
) -> None:
    args = ("--redis-url", redis_url, "--secret", SECRET, "--ws-ping-interval", "1")
    async with started(*args) as server:
        reader, writer = await open_socket(server.port)
        loop = asyncio.get_running_loop()
        opened = loop.time()
        opcode, _ = await asyncio.wait_for(read_frame(reader), 10)
        assert opcode == PING
        assert loop.time() - opened < 3  # at the default, the first ping comes after 20 s
        # No pong: the server gives up on the socket about a second later.
        opcode, payload = await asyncio.wait_for(read_frame(reader), 10)
        assert opcode == CLOSE and int.from_bytes(payload[:2], "big") == 1011
        writer.close()


async def test_sockets_opened_together_are_pinged_at_spread_times(redis_url: str) -> None:
    """Each ping waits a random 75-100 % of the interval: twelve sockets opened at once
    do not all get theirs in one burst."""
    args = ("--redis-url", redis_url, "--secret", SECRET, "--ws-ping-interval", "4")
    async with started(*args) as server:
        sockets = await asyncio.gather(*(open_socket(server.port) for _ in range(12)))
        loop = asyncio.get_running_loop()
        opened = loop.time()

        async def first_ping(reader: asyncio.StreamReader) -> float:
            opcode, _ = await asyncio.wait_for(read_frame(reader), 10)
            assert opcode == PING
            return loop.time() - opened

        delays = sorted(await asyncio.gather(*(first_ping(reader) for reader, _ in sockets)))
        for _, writer in sockets:
            writer.close()
    assert delays[0] >= 3 - 0.5 and delays[-1] <= 4 + 1, delays  # 75-100 % of 4 s
    assert delays[-1] - delays[0] >= 0.2, delays  # twelve draws in 1 s: not one burst
