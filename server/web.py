"""Browser-facing headers: CORS for the API, security headers on every response.

The web client's page and files get a Content-Security-Policy that allows only the
server's own scripts, styles and sockets (the page has no inline script or style) and
forbids framing; every response gets ``X-Content-Type-Options: nosniff`` and
``Referrer-Policy: no-referrer``.  API answers get a CSP that allows nothing at all.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The web client's pages and their files (``/``, ``/operator`` and ``/static/...``).
PAGE_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
#: Everything else (JSON, msgpack, metrics): nothing to run or embed.
API_POLICY = "default-src 'none'; frame-ancestors 'none'"

COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: What a browser may send on a cross-origin API call.
CORS_METHODS = ["GET", "POST", "OPTIONS"]
CORS_HEADERS = ["Authorization", "Content-Type", "Accept", "X-Request-Id"]
#: Response headers a cross-origin script may read.
CORS_EXPOSED = ["X-Request-Id", "Retry-After"]


def is_page(path: str) -> bool:
    return path in ("/", "/operator") or path.startswith("/static/")


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = PAGE_POLICY if is_page(scope["path"]) else API_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in COMMON_HEADERS.items():
                    headers.setdefault(name, value)
                headers.setdefault("Content-Security-Policy", policy)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def middleware(cors_origins: tuple[str, ...]) -> list[Middleware]:
    """Security headers outside, CORS inside (so preflight answers get them too)."""
    return [
        Middleware(SecurityHeaders),
        Middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=CORS_METHODS,
            allow_headers=CORS_HEADERS,
            expose_headers=CORS_EXPOSED,
            max_age=600,
        ),
    ]
