"""Settings, from command-line flags or the environment."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Every limit a client can run into (README.md, "Limits").

    Rates are token buckets in Redis shared by every instance: a bucket holds the
    per-period count and refills at that count per period.  ``rate_limits=False``
    (``--rate-limits off``) turns the buckets and the per-socket message credits off;
    the other limits (connections, moves per game, the audit pool) always hold.
    """

    rate_limits: bool = True
    #: Accounts created per client address per hour.
    players_per_hour: int = 20
    #: REST requests per client address / per player per minute.
    address_requests_per_minute: int = 1200
    player_requests_per_minute: int = 600
    #: Moves (REST and WebSocket) per client address / per player per minute.
    address_moves_per_minute: int = 1200
    player_moves_per_minute: int = 600
    #: ``POST /v1/audit`` per player per minute.
    audits_per_minute: int = 6
    #: Open WebSockets per client address, over every instance.
    max_connections_per_address: int = 64
    #: Frames a WebSocket may send in a burst, and their refill per second.
    message_credits: int = 200
    message_credits_per_second: int = 50
    #: Moves a game takes; then only ``resign``.
    max_moves_per_game: int = 5000
    #: Audits run at once per process, and audits waiting for a turn.
    audit_workers: int = 1
    audit_queue: int = 8


#: field -> (flag, environment variable, help)
LIMIT_OPTIONS: dict[str, tuple[str, str, str]] = {
    "players_per_hour": (
        "--players-per-hour",
        "PLAYERS_PER_HOUR",
        "accounts created per client address per hour",
    ),
    "address_requests_per_minute": (
        "--address-requests-per-minute",
        "ADDRESS_REQUESTS_PER_MINUTE",
        "REST requests per client address per minute",
    ),
    "player_requests_per_minute": (
        "--player-requests-per-minute",
        "PLAYER_REQUESTS_PER_MINUTE",
        "REST requests per player per minute",
    ),
    "address_moves_per_minute": (
        "--address-moves-per-minute",
        "ADDRESS_MOVES_PER_MINUTE",
        "moves (REST and WebSocket) per client address per minute",
    ),
    "player_moves_per_minute": (
        "--player-moves-per-minute",
        "PLAYER_MOVES_PER_MINUTE",
        "moves (REST and WebSocket) per player per minute",
    ),
    "audits_per_minute": (
        "--audits-per-minute",
        "AUDITS_PER_MINUTE",
        "POST /v1/audit per player per minute",
    ),
    "max_connections_per_address": (
        "--max-connections-per-address",
        "MAX_CONNECTIONS_PER_ADDRESS",
        "open WebSockets per client address (every instance)",
    ),
    "message_credits": (
        "--message-credits",
        "MESSAGE_CREDITS",
        "WebSocket frames a socket may send in a burst",
    ),
    "message_credits_per_second": (
        "--message-credits-per-second",
        "MESSAGE_CREDITS_PER_SECOND",
        "WebSocket frame credits refilled per second",
    ),
    "max_moves_per_game": (
        "--max-moves-per-game",
        "MAX_MOVES_PER_GAME",
        "moves a game takes (then only 'resign')",
    ),
    "audit_workers": ("--audit-workers", "AUDIT_WORKERS", "audits run at once per process"),
    "audit_queue": ("--audit-queue", "AUDIT_QUEUE", "audits waiting per process"),
}


def on_off(text: str) -> bool:
    if text.lower() in ("on", "1", "true", "yes"):
        return True
    if text.lower() in ("off", "0", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is neither 'on' nor 'off'")


def count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1")
    return value


def limits_from_environment() -> Limits:
    values: dict[str, Any] = {}
    if "RATE_LIMITS" in os.environ:
        values["rate_limits"] = on_off(os.environ["RATE_LIMITS"])
    for name, (_, env, _) in LIMIT_OPTIONS.items():
        if env in os.environ:
            values[name] = count(os.environ[env])
    return Limits(**values)


def limits_to_environment(limits: Limits) -> dict[str, str]:
    environment = {"RATE_LIMITS": "on" if limits.rate_limits else "off"}
    for name, (_, env, _) in LIMIT_OPTIONS.items():
        environment[env] = str(getattr(limits, name))
    return environment


#: Environment variables the limits are read from.
LIMIT_ENVIRONMENT = ("RATE_LIMITS", *(env for _, env, _ in LIMIT_OPTIONS.values()))


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
    limits: Limits = Limits()

    @classmethod
    def from_environment(cls) -> Settings:
        return cls(
            host=os.environ.get("HOST", cls.host),
            port=int(os.environ.get("PORT", cls.port)),
            redis_url=os.environ.get("REDIS_URL", cls.redis_url),
            secret=os.environ.get("SERVER_SECRET", cls.secret),
            workers=int(os.environ.get("WORKERS", cls.workers)),
            log_level=os.environ.get("LOG_LEVEL", cls.log_level),
            limits=limits_from_environment(),
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
            "--rate-limits",
            type=on_off,
            default=defaults.limits.rate_limits,
            metavar="on|off",
            help="rate limits and message credits (RATE_LIMITS); off for development",
        )
        for name, (flag, env, text) in LIMIT_OPTIONS.items():
            parser.add_argument(
                flag,
                type=count,
                dest=name,
                metavar="N",
                default=getattr(defaults.limits, name),
                help=f"{text} ({env})",
            )
        args = parser.parse_args(argv)
        limits = Limits(
            rate_limits=args.rate_limits, **{name: getattr(args, name) for name in LIMIT_OPTIONS}
        )
        return cls(
            host=args.host,
            port=args.port,
            redis_url=args.redis_url,
            secret=args.secret,
            workers=args.workers,
            log_level=args.log_level,
            limits=limits,
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
            **limits_to_environment(self.limits),
        }


assert set(LIMIT_OPTIONS) | {"rate_limits"} == {field.name for field in fields(Limits)}
