"""Logging: one JSON object per line (or plain text), each record tagged with the id of
the request or WebSocket connection it belongs to; tokens are scrubbed from every line.

``RequestIds`` (middleware) takes the request id from ``X-Request-Id`` when it is a
plain short identifier (:data:`REQUEST_ID`), else makes one (the given one is not
logged), echoes it on the response, and keeps it in a context variable that
:class:`ContextFilter` adds to every record logged meanwhile (the tasks a connection
starts inherit it).  The server never logs request bodies, headers
or WebSocket frames; the scrubber is the second line of defence for tokens.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
import time
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "x-request-id"
#: A client's request id is kept only in a plain, short form (a UUID, a proxy's hex id):
#: no log injection, and no token (``v1.<player>.<expiry>.<signature>``: its dots) or
#: other long secret a client might send there by mistake goes into the logs.
REQUEST_ID = re.compile(r"[A-Za-z0-9-]{1,64}")
#: Bearer tokens (``server.auth``), Authorization header values, transfer codes as shown
#: (``server.accounts.transfer``: four groups of four, any case) and JWTs (ID tokens:
#: their header is base64url JSON, so it starts ``eyJ``).
TOKEN = re.compile(
    r"v1\.[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]+|(?i:bearer)\s+[A-Za-z0-9._~+/=-]+"
    r"|\b(?i:[0-9A-Z]{4}(?:-[0-9A-Z]{4}){3})\b"
    r"|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"
)
SCRUBBED = "[scrubbed]"

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
connection_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "connection_id", default=None
)


def scrub(text: str) -> str:
    return TOKEN.sub(SCRUBBED, text)


class ContextFilter(logging.Filter):
    """Adds ``request_id`` / ``connection_id`` of the current context to each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        record.connection_id = connection_id.get()
        return True


#: Attributes every LogRecord has; the others were passed with ``extra=``.
STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",
    "request_id",
    "connection_id",
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": scrub(record.getMessage()),
        }
        for name in ("request_id", "connection_id"):
            value = getattr(record, name, None)
            if value:
                entry[name] = value
        for name, value in vars(record).items():
            if name not in STANDARD and not name.startswith("_"):
                entry[name] = value if isinstance(value, int | float | bool) else scrub(str(value))
        if record.exc_info:
            entry["exception"] = scrub(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


JsonFormatter.converter = time.gmtime


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ids = [getattr(record, n, None) for n in ("request_id", "connection_id")]
        tag = " ".join(f"[{value}]" for value in ids if value)
        return scrub(f"{text} {tag}" if tag else text)


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the server and uvicorn (every worker applies
    it).  uvicorn's own access log is off: :class:`RequestIds` logs each request."""
    formatter: dict[str, Any]
    if log_format == "json":
        formatter = {"()": "server.logs.JsonFormatter"}
    else:
        formatter = {
            "()": "server.logs.TextFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
        }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "server.logs.ContextFilter"}},
        "formatters": {"default": formatter},
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "default",
                "filters": ["context"],
            }
        },
        "root": {"handlers": ["default"], "level": level.upper()},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            "uvicorn.access": {"handlers": [], "propagate": False},
        },
    }


access_log = logging.getLogger("server.access")


def new_id() -> str:
    return secrets.token_hex(8)


class RequestIds:
    """Gives each request (or WebSocket connection) an id, echoes it in ``X-Request-Id``
    and logs one access line per HTTP request (path without its query)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = ""
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                given = value.decode("latin-1")
                break
        ident = given if REQUEST_ID.fullmatch(given) else new_id()
        if scope["type"] == "websocket":
            connection_token = connection_id.set(ident)
            started = time.perf_counter()
            access_log.info("websocket open %s", scope["path"], extra={"path": scope["path"]})
            try:
                await self.app(scope, receive, send)
            finally:
                seconds = round(time.perf_counter() - started, 3)
                access_log.info("websocket closed", extra={"duration_s": seconds})
                connection_id.reset(connection_token)
            return

        token = request_id.set(ident)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)["X-Request-Id"] = ident
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            access_log.info(
                "%s %s %d",
                scope["method"],
                scope["path"],
                status,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                },
            )
            request_id.reset(token)
