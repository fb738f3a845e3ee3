"""Settings, from command-line flags or the environment."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, fields
from typing import Any

from server.keys import MIN_SECRET_BYTES


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
    #: The keys of tokens and daily seeds derive from it (``server.keys``); at least
    #: ``MIN_SECRET_BYTES`` bytes.  Empty: a random secret kept in Redis (created
    #: once, shared by every instance on that Redis).
    secret: str = ""
    workers: int = 1
    log_level: str = "info"
    #: Seconds an account must exist before it may start a ranked attempt; 0: no minimum.
    ranked_min_account_age: int = 86400
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        check_secret(self.secret)

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
            "limits": limits_from_environment(),
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
                limits=limits,
            )
        except WeakSecret as error:
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
            **limits_to_environment(self.limits),
        }


assert set(LIMIT_OPTIONS) | {"rate_limits"} == {field.name for field in fields(Limits)}
