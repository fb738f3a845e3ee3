"""A WebSocket closed at any point of its opening leaves no traceback: before its
handshake is answered, between the answer and the server's first look at Redis (the
connection limit), and just after; the server goes on serving."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import socket
import struct
from typing import Any

import pytest
from redis.asyncio import RedisCluster
from server_support import RunningServer, WSClient
from websockets.asyncio.client import connect

#: How long Redis holds its writes while a socket opens (ms): the limiter's script waits.
PAUSE_MS = 400


def upgrade_request(port: int) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET /v2/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


async def open_and_drop(port: int, wait_for_answer: bool, linger: float) -> None:
    """Send a WebSocket upgrade, optionally wait for its 101, wait ``linger`` seconds,
    then reset the connection (no close frame, no FIN)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(upgrade_request(port))
        await writer.drain()
        if wait_for_answer:
            answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert answer.startswith(b"HTTP/1.1 101"), answer
        if linger:
            await asyncio.sleep(linger)
    finally:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def pause_writes(client: Any, milliseconds: int) -> None:
    """``CLIENT PAUSE ... WRITE`` on the Redis (each primary of a cluster)."""
    if isinstance(client, RedisCluster):
        await client.initialize()
        for node in client.get_primaries():
            await client.execute_command(
                "CLIENT", "PAUSE", milliseconds, "WRITE", target_nodes=node
            )
    else:
        await client.execute_command("CLIENT", "PAUSE", milliseconds, "WRITE")


async def test_a_socket_closed_during_its_opening_leaves_no_traceback(
    server: RunningServer, redis_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    # Closed before the handshake's answer, and at once or soon after it.
    for linger in (0.0, 0.001, 0.005, 0.02):
        await asyncio.gather(*(open_and_drop(server.port, False, linger) for _ in range(10)))
        await asyncio.gather(*(open_and_drop(server.port, True, linger) for _ in range(10)))
    # Closed while the server waits on Redis for the socket's connection place.
    await pause_writes(redis_client, PAUSE_MS)
    await asyncio.gather(*(open_and_drop(server.port, True, 0.0) for _ in range(10)))
    await asyncio.sleep(PAUSE_MS / 1000 + 0.2)
    client = WSClient(await asyncio.wait_for(connect(server.ws_url), 5))
    assert await client.ping() == []
    await client.close()
    logged = [
        f"{record.name}: {record.getMessage()} {record.exc_info!r}"
        for record in caplog.records
        if record.exc_info or record.levelno >= logging.ERROR
    ]
    assert logged == []
