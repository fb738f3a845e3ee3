"""Settings, from command-line flags or the environment."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    #: Empty: the embedded in-process store (nothing persists).
    redis_url: str = ""
    #: Signs tokens and derives daily seeds.  Empty: a secret kept in Redis
    #: (created once, shared by every instance on that Redis).
    secret: str = ""
    workers: int = 1
    log_level: str = "info"
    #: Seconds an account must exist before it may start a ranked attempt; 0: no minimum.
    ranked_min_account_age: int = 86400

    @classmethod
    def from_environment(cls) -> Settings:
        return cls(
            host=os.environ.get("HOST", cls.host),
            port=int(os.environ.get("PORT", cls.port)),
            redis_url=os.environ.get("REDIS_URL", cls.redis_url),
            secret=os.environ.get("SERVER_SECRET", cls.secret),
            workers=int(os.environ.get("WORKERS", cls.workers)),
            log_level=os.environ.get("LOG_LEVEL", cls.log_level),
            ranked_min_account_age=int(
                os.environ.get("RANKED_MIN_ACCOUNT_AGE", cls.ranked_min_account_age)
            ),
        )

    @classmethod
    def from_arguments(cls, argv: list[str] | None = None) -> Settings:
        defaults = cls.from_environment()
        parser = argparse.ArgumentParser(
            prog="python -m server", description="Run the solitaire game server."
        )
        parser.add_argument("--host", default=defaults.host, help="bind address (HOST)")
        parser.add_argument("--port", type=int, default=defaults.port, help="port (PORT)")
        parser.add_argument(
            "--redis-url",
            default=defaults.redis_url,
            help="Redis URL (REDIS_URL); none: embedded in-process store, nothing persists",
        )
        parser.add_argument(
            "--secret",
            default=defaults.secret,
            help="token and daily-seed secret (SERVER_SECRET); none: one kept in Redis",
        )
        parser.add_argument(
            "--workers", type=int, default=defaults.workers, help="worker processes (WORKERS)"
        )
        parser.add_argument("--log-level", default=defaults.log_level, help="(LOG_LEVEL)")
        parser.add_argument(
            "--ranked-min-account-age",
            type=int,
            default=defaults.ranked_min_account_age,
            metavar="SECONDS",
            help="age an account needs to start a ranked attempt (RANKED_MIN_ACCOUNT_AGE; "
            "default 86400, 0: off)",
        )
        args = parser.parse_args(argv)
        if args.ranked_min_account_age < 0:
            parser.error("--ranked-min-account-age is 0 (off) or a number of seconds")
        return cls(
            host=args.host,
            port=args.port,
            redis_url=args.redis_url,
            secret=args.secret,
            workers=args.workers,
            log_level=args.log_level,
            ranked_min_account_age=args.ranked_min_account_age,
        )

    def to_environment(self) -> dict[str, str]:
        """The environment that makes :meth:`from_environment` return these settings."""
        return {
            "HOST": self.host,
            "PORT": str(self.port),
            "REDIS_URL": self.redis_url,
            "SERVER_SECRET": self.secret,
            "WORKERS": str(self.workers),
            "LOG_LEVEL": self.log_level,
            "RANKED_MIN_ACCOUNT_AGE": str(self.ranked_min_account_age),
        }
