"""``python -m server``: run the game server under uvicorn."""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from server.config import Settings

#: WebSocket frames above this are refused by the transport (close 1009); the
#: protocol's own, smaller limit answers bigger frames with a typed error.
WS_TRANSPORT_LIMIT = 1024 * 1024


def main(argv: list[str] | None = None) -> None:
    settings = Settings.from_arguments(argv)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s"
    )
    workers = settings.workers
    if not settings.redis_url and workers > 1:
        logging.getLogger("server").warning(
            "the embedded store lives in one process: running 1 worker, not %d", workers
        )
        workers = 1
    os.environ.update(settings.to_environment())
    uvicorn.run(
        "server.app:app_from_environment",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level=settings.log_level,
        ws_max_size=WS_TRANSPORT_LIMIT,
        ws="websockets-sansio",
        lifespan="on",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
