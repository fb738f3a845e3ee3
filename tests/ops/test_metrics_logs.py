"""``/metrics`` (every worker's counts, in Prometheus multiprocess mode) and the JSON
logs (one object per line, with the request or connection id, never a token)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import json
import logging
import re
import time
from pathlib import Path

import httpx
import msgpack
import pytest
from ops_support import started
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis
from starlette.types import Message, Receive, Scope, Send
from websockets.asyncio.client import connect

from server import daily, metrics
from server.daily.selection import load_choice
from server.logs import ContextFilter, JsonFormatter, RequestIds, request_id
from server.testing import free_port

#: The first test's ``--metrics-token`` (without one the API's port serves no metrics).
METRICS_TOKEN = "5b1e9d0c7a3f4e2d8c6b0a9f1e2d3c4b"
SCRAPER = {"Authorization": f"Bearer {METRICS_TOKEN}"}


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """(sample name, labels) -> value."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


async def recv(ws, kind: str) -> dict:  # type: ignore[no-untyped-def]
    while True:
        message = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == kind:
            return message


async def test_metrics_count_every_workers_moves_connections_and_redis(tmp_path: Path) -> None:
    async with (
        started(
            "--data-dir",
            str(tmp_path),
            "--workers",
            "2",
            "--log-format",
            "json",
            "--metrics-token",
            METRICS_TOKEN,
        ) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):
        player = (await http.post("/v1/players")).json()
        headers = {"Authorization": f"Bearer {player['token']}"}
        game = (await http.post("/v1/games", json={"game": "balcony"}, headers=headers)).json()
        legal = game["legal_moves"]
        async with connect(server.ws_url) as watcher, connect(server.ws_url) as mover:
            await watcher.send(msgpack.packb({"type": "subscribe", "game_id": game["id"]}))
            await recv(watcher, "snapshot")
            await mover.send(msgpack.packb({"type": "auth", "token": player["token"]}))
            await recv(mover, "authenticated")
            for version in range(3):  # three over the WebSocket ...
                await mover.send(
                    msgpack.packb(
                        {
                            "type": "move",
                            "game_id": game["id"],
                            "move": legal[0],
                            "version": version,
                            "move_id": f"w{version}",
                        }
                    )
                )
                legal = (await recv(mover, "accepted"))["legal_moves"]
                await recv(watcher, "patch")
            for version in range(3, 5):  # ... two over REST ...
                moved = await http.post(
                    f"/v1/games/{game['id']}/moves",
                    json={"move": legal[0], "version": version},
                    headers=headers,
                )
                assert moved.status_code == 200, moved.text
                legal = moved.json()["snapshot"]["legal_moves"]
                await recv(watcher, "patch")
            # ... and one stale.
            stale = await http.post(
                f"/v1/games/{game['id']}/moves",
                json={"move": legal[0], "version": 1},
                headers=headers,
            )
            assert stale.status_code == 409
            # Both sockets are open now, whichever worker holds them.
            found = samples((await http.get("/metrics", headers=SCRAPER)).text)
            assert value(found, "solitaire_websocket_connections") == 2
        await asyncio.sleep(metrics.FLUSH_INTERVAL + 0.5)  # each worker handed over its tallies
        found = samples((await http.get("/metrics", headers=SCRAPER)).text)
        accepted = {"outcome": "accepted", "code": ""}
        assert value(found, "solitaire_moves_total", transport="websocket", **accepted) == 3
        assert value(found, "solitaire_moves_total", transport="rest", **accepted) == 2
        rejected = {"transport": "rest", "outcome": "rejected", "code": "stale"}
        assert value(found, "solitaire_moves_total", **rejected) == 1
        assert value(found, "solitaire_move_seconds_count", transport="websocket") == 3
        assert value(found, "solitaire_move_seconds_count", transport="rest") == 3
        latency = value(found, "solitaire_move_seconds_sum", transport="websocket")
        assert 0 < latency < 3
        assert value(found, "solitaire_patches_fanned_out_total") == 5
        # Each of the five moves (one at a time) went as a pipeline of the batcher.
        assert value(found, "solitaire_redis_command_seconds_count", command="pipeline") >= 5
        assert value(found, "solitaire_http_requests_total", status="409") == 1
        await asyncio.sleep(0.2)  # the sockets' close reaches the server
        found = samples((await http.get("/metrics", headers=SCRAPER)).text)
        assert value(found, "solitaire_websocket_connections") == 0

        # An open day's ranked game: its seed must never be logged.
        started_daily = await http.post("/v1/daily/balcony", headers=headers)
        assert started_daily.status_code == 200, started_daily.text
        date = daily.today(int(time.time() * 1000))
        secret = (tmp_path / "secret").read_text().strip().encode()
        redis = Redis(unix_socket_path=str(tmp_path / "valkey.sock"))
        choice = await load_choice(redis, "balcony", date)
        await redis.aclose()
        assert choice is not None
        seed = daily.candidate_seed(secret, "balcony", date, choice.k)
        published = (await http.get(f"/v1/daily/balcony/{date}")).json()["commitment"]
        assert daily.commitment("balcony", date, seed) == published  # the real seed

        # The logs: JSON lines with ids, and no token anywhere.
        answer = await http.get("/v1/games", headers={"X-Request-Id": "req-42"})
        assert answer.headers["x-request-id"] == "req-42"
        odd = await http.get("/v1/games", headers={"X-Request-Id": "a b;c"})
        assert odd.headers["x-request-id"] != "a b;c"
        await server.stop()
    records = server.records()  # every line parses as JSON
    ours = [r for r in records if r.get("request_id") == "req-42"]
    assert ours and ours[0]["path"] == "/v1/games" and ours[0]["status"] == 200
    assert any(r.get("request_id") == odd.headers["x-request-id"] for r in records)
    assert any("connection_id" in r and r["message"] == "websocket closed" for r in records)
    assert player["token"] not in server.output
    assert seed not in server.output
    assert player["token"].rsplit(".", 1)[1] not in server.output


def test_tallied_counts_and_observations_expose_as_the_librarys_own() -> None:
    registry = CollectorRegistry()
    buckets = (0.001, 0.01, 0.1)
    tallied = Histogram("tallied_seconds", "t", ["kind"], buckets=buckets, registry=registry)
    direct = Histogram("direct_seconds", "d", ["kind"], buckets=buckets, registry=registry)
    tallied_count = Counter("tallied", "t", registry=registry)
    values = [0.0, 0.0005, 0.001, 0.002, 0.01, 0.05, 0.1, 0.2, 7.0, 0.001]
    for observed in values:
        metrics.observe(tallied.labels("a"), observed)
        direct.labels("a").observe(observed)
        metrics.count(tallied_count, 2)
    assert value(samples(generate_latest(registry).decode()), "tallied_total") == 0  # not yet
    metrics.flush()
    found = samples(generate_latest(registry).decode())
    compared = 0
    for (name, labels), number in found.items():
        if name.startswith("direct_seconds") and not name.endswith("_created"):
            assert found[(name.replace("direct", "tallied", 1), labels)] == number, name
            compared += 1
    assert compared == len(buckets) + 1 + 2  # the buckets, +Inf, _count and _sum
    assert value(found, "tallied_total") == 2 * len(values)
    assert value(found, "tallied_seconds_count", kind="a") == len(values)


def test_the_calls_other_modules_make_show_in_the_exposition() -> None:
    before = samples(metrics.exposition().decode())
    metrics.rate_limited("move")
    metrics.audit_queue(+2)
    metrics.audit_queue(-1)
    after = samples(metrics.exposition().decode())
    kind = {"kind": "move"}
    rate_limited = "solitaire_rate_limited_total"
    assert value(after, rate_limited, **kind) == value(before, rate_limited, **kind) + 1
    assert value(after, "solitaire_audit_queue") == value(before, "solitaire_audit_queue") + 1
    metrics.audit_queue(-1)


def test_a_logged_token_is_scrubbed_and_the_request_id_kept() -> None:
    token = "v1.p_abcdefghijkl.1798695778.6ZkcQppynKR4vlQRaN3kO6UTxFte6AzaB4zB0dxAgzw"
    record = logging.LogRecord("server", logging.WARNING, __file__, 1, "got %s", (token,), None)
    record.request_id = "r-1"
    record.header = f"Bearer {token}"
    line = JsonFormatter().format(record)
    entry = json.loads(line)
    assert token not in line and "6ZkcQppyn" not in line
    assert entry["message"] == "got [scrubbed]" and entry["header"] == "[scrubbed]"
    assert entry["request_id"] == "r-1" and entry["level"] == "warning"
    assert request_id.get() is None


@pytest.mark.log_errors(
    r"Exception in ASGI application",
    r"pub/sub shard failed",
    r"a warning \[KeyError",
    r"an error line without a traceback",
    r"Task exception was never retrieved",
)
async def test_an_exception_logged_with_its_traceback_is_counted_by_its_logger() -> None:
    """``solitaire_unhandled_exceptions_total``: uvicorn's "Exception in ASGI application",
    a task's exception nobody retrieved, a server part's ``log.exception``; not a plain
    error line, nor an exception logged below error level."""
    metrics.count_logged_exceptions()
    metrics.count_logged_exceptions()  # once a process, however often it is asked
    name = "solitaire_unhandled_exceptions_total"
    before = samples(metrics.exposition().decode())
    try:
        raise KeyError("server.wstransport")
    except KeyError:
        logging.getLogger("uvicorn.error").exception("Exception in ASGI application\n")
        logging.getLogger("server.hub").exception("pub/sub shard failed")
        logging.getLogger("server.hub").warning("a warning", exc_info=True)
    logging.getLogger("server.hub").error("an error line without a traceback")

    async def fails() -> None:
        raise RuntimeError("read() called while another coroutine is already waiting")

    task = asyncio.get_running_loop().create_task(fails())
    await asyncio.sleep(0)
    del task  # collected with its exception unretrieved: asyncio logs it
    gc.collect()
    after = samples(metrics.exposition().decode())
    for location, added in (("uvicorn.error", 1), ("server.hub", 1), ("asyncio", 1)):
        grown = value(after, name, location=location) - value(before, name, location=location)
        assert grown == added, location


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("req-42", True),
        ("0f8c2a9e-6b1d-4c1e-9a55-3d2f7c1b8e40", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("a b;c", False),
        ("v1.p_abcdefghijkl.1798695778.6ZkcQppynKR4vlQRaN3kO6UTxFte6AzaB4zB0dxAgzw", False),
        ("Bearer-v1.p_abc.1.sig", False),
        ("id:with:colons", False),
        ("", False),
    ],
)
async def test_a_request_id_is_kept_only_in_a_plain_short_form(
    given: str, kept: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A token (or anything else) sent as ``X-Request-Id`` is replaced by a new id, and
    never logged: not as the access line's id, nor anywhere in the record."""
    caplog.set_level(logging.INFO, logger="server.access")

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    headers = [(b"x-request-id", given.encode())] if given else []
    scope = {"type": "http", "method": "GET", "path": "/v1/games", "headers": headers}
    with contextlib.closing(logging.StreamHandler(io.StringIO())) as handler:
        handler.setFormatter(JsonFormatter())
        handler.addFilter(ContextFilter())
        logging.getLogger("server.access").addHandler(handler)
        try:
            await RequestIds(answer)(scope, receive, send)
        finally:
            logging.getLogger("server.access").removeHandler(handler)
        line = handler.stream.getvalue()
    echoed = dict(sent[0]["headers"])[b"x-request-id"].decode()
    [record] = [r for r in caplog.records if r.name == "server.access"]
    assert getattr(record, "request_id", None) == echoed
    assert json.loads(line)["request_id"] == echoed
    if kept:
        assert echoed == given
    else:
        assert echoed != given and re.fullmatch(r"[0-9a-f]{16}", echoed)
        if given:
            assert given not in line


async def test_metrics_behind_a_token(tmp_path: Path) -> None:
    token = "3f9c1e0b7a5d4c2e8f6a1b0c9d8e7f6a"
    async with (
        started("--data-dir", str(tmp_path), "--metrics-token", token) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):
        assert (await http.get("/healthz")).status_code == 200
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": token}):
            refused = await http.get("/metrics", headers=headers)
            assert refused.status_code == 401, refused.text
            assert refused.json()["error"]["code"] == "unauthorized"
            assert "solitaire_" not in refused.text
        scraped = await http.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert scraped.status_code == 200
        assert value(samples(scraped.text), "solitaire_http_requests_total", status="200") >= 1
    assert token not in server.output


async def test_metrics_on_a_port_of_their_own(tmp_path: Path) -> None:
    metrics_port = free_port()
    async with (
        started(
            "--data-dir", str(tmp_path), "--workers", "2", "--metrics-port", str(metrics_port)
        ) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):
        for _ in range(3):
            assert (await http.post("/healthz")).status_code == 405
        on_api = await http.get("/metrics")
        assert on_api.status_code == 404 and "solitaire_" not in on_api.text
        own = f"http://127.0.0.1:{metrics_port}"
        counted = 0.0
        for _ in range(50):  # the workers hand their tallies over once a second
            scraped = await http.get(f"{own}/metrics")
            assert scraped.status_code == 200
            counted = value(samples(scraped.text), "solitaire_http_requests_total", status="405")
            if counted >= 3:
                break
            await asyncio.sleep(0.2)
        assert counted == 3
        assert (await http.get(f"{own}/v1/games")).status_code == 404
