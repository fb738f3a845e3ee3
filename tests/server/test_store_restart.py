"""Redis restarted while the server's pooled connections sat idle: once Redis is back,
every request is answered at once.  The soak found it (``benchmarks.soak``): the
standalone pool's connections were made without redis-py's retry, so each connection
the restart had closed failed its next command, and the request using it answered
``store_unavailable`` (a REST 503, a socket refused) seconds after Redis was back.

Its own redis-server (restarted: the session's must not be), append-only in ``tmp_path``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from server_support import run_app
from websockets.asyncio.client import connect

from server.testing import RedisProcess

#: Concurrent requests: enough to hold several pooled connections at once.
WIDTH = 12
#: A WebSocket ``ping`` message (msgpack ``{"type": "ping"}``).
PING = b"\x81\xa4type\xa4ping"


async def test_requests_after_a_redis_restart_are_answered(tmp_path: Path, make_redis) -> None:
    redis: RedisProcess = make_redis(data_dir=tmp_path)
    async with (
        run_app(redis.url) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):

        async def burst() -> list[int]:
            answers = await asyncio.gather(*(http.post("/v1/players") for _ in range(WIDTH)))
            return [answer.status_code for answer in answers]

        async def socket_answers() -> None:
            """A socket opens (its connection place is taken in Redis, through the move
            scripts' pipelined connection) and answers a ping."""
            async with connect(server.ws_url) as socket:
                await socket.send(PING)
                reply = await asyncio.wait_for(socket.recv(), 5)
                assert b"pong" in reply, reply

        assert await burst() == [201] * WIDTH  # the pool now holds several connections
        await socket_answers()
        redis.stop()
        redis.start()  # ready when it returns: it answers PING

        await socket_answers()
        assert await burst() == [201] * WIDTH
