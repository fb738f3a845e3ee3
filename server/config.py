"""Settings, from command-line flags or the environment."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

from server.keys import MIN_SECRET_BYTES

#: The values of ``--durability`` (``DURABILITY``), the default first.
DURABILITY_LEVELS = ("none", "replica")


def flag(value: str) -> bool:
    """An environment flag: ``1``/``true``/``yes`` (any case) is on."""
    return value.strip().lower() in ("1", "true", "yes")


class WeakSecret(ValueError):
    """A configured server secret too short to resist offline guessing."""


def check_secret(secret: str) -> None:
    """Refuse a configured secret under :data:`MIN_SECRET_BYTES` bytes (empty: none given).

    A player's token and the published daily commitments let anyone test guesses
    of the secret offline, so a short one is found by brute force.
    """
    size = len(secret.encode())
    if 0 < size < MIN_SECRET_BYTES:
        raise WeakSecret(
            f"the server secret (--secret / SERVER_SECRET) is {size} bytes; it must be at "
            f"least {MIN_SECRET_BYTES} (e.g. `openssl rand -hex 32`), or left unset for a "
            "random one kept in Redis"
        )


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    #: Empty: the embedded in-process store (nothing persists).
    redis_url: str = ""
    #: The keys of tokens and daily seeds derive from it (``server.keys``); at least
    #: ``MIN_SECRET_BYTES`` bytes.  Empty: a random secret kept in Redis (created
    #: once, shared by every instance on that Redis).
    secret: str = ""
    workers: int = 1
    log_level: str = "info"
    #: Seconds an account must exist before it may start a ranked attempt; 0: no minimum.
    ranked_min_account_age: int = 86400
    #: ``redis_url`` names one node of a Redis Cluster (the rest are discovered).
    redis_cluster: bool = False
    #: ``none``: a move is acknowledged once its Redis primary has it; ``replica``: once a
    #: replica of that primary has it too (``WAIT``), so a failover loses no acknowledged move.
    durability: str = "none"

    def __post_init__(self) -> None:
        check_secret(self.secret)
        if self.durability not in DURABILITY_LEVELS:
            raise ValueError(f"durability is one of {', '.join(DURABILITY_LEVELS)}")
        if not self.redis_url and (self.redis_cluster or self.durability != "none"):
            raise ValueError("--redis-cluster and --durability replica need --redis-url")

    @classmethod
    def _environment_values(cls) -> dict[str, Any]:
        return {
            "host": os.environ.get("HOST", cls.host),
            "port": int(os.environ.get("PORT", cls.port)),
            "redis_url": os.environ.get("REDIS_URL", cls.redis_url),
            "secret": os.environ.get("SERVER_SECRET", cls.secret),
            "workers": int(os.environ.get("WORKERS", cls.workers)),
            "log_level": os.environ.get("LOG_LEVEL", cls.log_level),
            "ranked_min_account_age": int(
                os.environ.get("RANKED_MIN_ACCOUNT_AGE", cls.ranked_min_account_age)
            ),
            "redis_cluster": flag(os.environ.get("REDIS_CLUSTER", "")),
            "durability": os.environ.get("DURABILITY", cls.durability),
        }

    @classmethod
    def from_environment(cls) -> Settings:
        """The settings of the environment (:class:`WeakSecret` for a short secret)."""
        return cls(**cls._environment_values())

    @classmethod
    def from_arguments(cls, argv: list[str] | None = None) -> Settings:
        """The settings of the command line over the environment's; a usage error
        (exit status 2) names ``--secret`` / ``SERVER_SECRET`` when the secret is short."""
        defaults = argparse.Namespace(**cls._environment_values())
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
            help=f"server secret, at least {MIN_SECRET_BYTES} bytes (SERVER_SECRET); "
            "none: a random one kept in Redis",
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
        parser.add_argument(
            "--redis-cluster",
            action="store_true",
            default=defaults.redis_cluster,
            help="--redis-url names a node of a Redis Cluster (REDIS_CLUSTER=1)",
        )
        parser.add_argument(
            "--durability",
            choices=DURABILITY_LEVELS,
            default=defaults.durability,
            help="acknowledge a move once its Redis primary has it (none, the default) or "
            "once a replica has it too (replica) (DURABILITY)",
        )
        args = parser.parse_args(argv)
        if defaults.durability not in DURABILITY_LEVELS:
            parser.error(f"DURABILITY is one of {', '.join(DURABILITY_LEVELS)}")
        if args.ranked_min_account_age < 0:
            parser.error("--ranked-min-account-age is 0 (off) or a number of seconds")
        try:
            return cls(
                host=args.host,
                port=args.port,
                redis_url=args.redis_url,
                secret=args.secret,
                workers=args.workers,
                log_level=args.log_level,
                ranked_min_account_age=args.ranked_min_account_age,
                redis_cluster=args.redis_cluster,
                durability=args.durability,
            )
        except ValueError as error:  # a weak secret, or a setting that needs another
            parser.error(str(error))

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
            "REDIS_CLUSTER": "1" if self.redis_cluster else "0",
            "DURABILITY": self.durability,
        }
