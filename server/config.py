"""Settings, from command-line flags or the environment."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from dataclasses import dataclass, fields
from typing import Any

from server.keys import MIN_SECRET_BYTES

#: The values of ``--durability`` (``DURABILITY``), the default first.
DURABILITY_LEVELS = ("none", "replica")
#: The values of ``--ws-compression`` (``WS_COMPRESSION``), the default first
#: (``server.wstransport`` says what each does).
WS_COMPRESSION_MODES = ("message", "context", "off")
#: The values of ``--allocator`` (``ALLOCATOR``), the default first (``server.allocator``).
ALLOCATORS = ("auto", "jemalloc", "pymalloc")


def env_flag(value: str) -> bool:
    """An environment flag: ``1``/``true``/``yes`` (any case) is on."""
    return value.strip().lower() in ("1", "true", "yes")


#: Default time an anonymous player record lives without activity (seconds): 30 days, the
#: lifetime of its token.
PLAYER_IDLE_TTL = 30 * 24 * 3600


class WeakSecret(ValueError):
    """A configured server secret too short, or too regular, to resist offline guessing."""


#: Make a secret so (the refusals say it).
MAKE_A_SECRET = "`openssl rand -hex 32`"
#: Fewest distinct characters a secret may have (``openssl rand -hex 32`` has ~16 of 64).
MIN_DISTINCT_CHARACTERS = 8
#: The characters of a secret that are analysed (zxcvbn's longest password).
ANALYSED_CHARACTERS = 72
#: Largest share of the analysed characters that words, names, keyboard runs, sequences
#: and repeats (zxcvbn's matches of 4 characters or more) may cover: in random hex (which
#: spells "dead", "8888"...) at most 0.31 of 32 characters and 0.19 of 64 were seen over
#: 300 draws each; a secret of words has half or more.
MAX_PATTERN_SHARE = 0.4
#: Fewest guesses (zxcvbn's estimate, a power of ten: about 80 bits) a secret must need.
MIN_GUESSES_LOG10 = 24
#: zxcvbn's matches that count as patterns (a "date" is any run of digits in a hex string).
PATTERNS = ("dictionary", "spatial", "repeat", "sequence")


@functools.lru_cache(maxsize=16)
def secret_weakness(secret: str) -> str | None:
    """Why ``secret`` is not random enough to be the server secret (None: it is), in
    words that never quote it.  Repeated patterns, few distinct characters and words are
    what a guesser tries first: a secret of four words was found from one public daily
    commitment in 16 guesses.  zxcvbn (Dropbox's estimator) finds words, names, keyboard
    runs, sequences and repeats."""
    from zxcvbn import zxcvbn  # its dictionaries load on first use: only when checking

    distinct = len(set(secret))
    if distinct < MIN_DISTINCT_CHARACTERS:
        return f"it has {distinct} distinct characters"
    analysed = secret[:ANALYSED_CHARACTERS]
    estimate = zxcvbn(analysed, max_length=ANALYSED_CHARACTERS)
    covered = sum(
        len(match["token"])
        for match in estimate["sequence"]
        if match["pattern"] in PATTERNS and len(match["token"]) >= 4
    )
    if covered > MAX_PATTERN_SHARE * len(analysed):
        return "it is made of words, keyboard runs, sequences or repeats"
    if float(estimate["guesses_log10"]) < MIN_GUESSES_LOG10:
        return "it is too easy to guess"
    return None


def check_secret(secret: str) -> None:
    """Refuse a configured secret under :data:`MIN_SECRET_BYTES` bytes (empty: none given),
    or not random enough (:func:`secret_weakness`).

    A player's token and the published daily commitments let anyone test guesses
    of the secret offline, so a short or regular one is found by brute force.
    """
    size = len(secret.encode())
    if size == 0:
        return
    if size < MIN_SECRET_BYTES:
        raise WeakSecret(
            f"the server secret (--secret / SERVER_SECRET) is {size} bytes; it must be at "
            f"least {MIN_SECRET_BYTES} (e.g. {MAKE_A_SECRET}), or left unset for a "
            "random one kept in Redis (or in DATA_DIR/secret for the embedded store)"
        )
    weakness = secret_weakness(secret)
    if weakness is not None:
        raise WeakSecret(
            f"the server secret (--secret / SERVER_SECRET) is not random enough: {weakness}. "
            f"Make one with {MAKE_A_SECRET}, or leave it unset for a random one kept in "
            "Redis (or in DATA_DIR/secret for the embedded store)"
        )


def default_log_format() -> str:
    """``text`` on a terminal, ``json`` otherwise (services, containers, pipes)."""
    return "text" if sys.stderr.isatty() else "json"


def origins(text: str) -> tuple[str, ...]:
    """The origins of a comma-separated list (blanks dropped, trailing slashes removed)."""
    return tuple(part.strip().rstrip("/") for part in text.split(",") if part.strip())


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
    #: Display-name changes (``PUT``/``PATCH /v1/players/me``) per player per hour.
    name_changes_per_hour: int = 10
    #: Transfer codes made per player per hour, and redemptions tried per address per hour.
    transfer_codes_per_hour: int = 5
    transfer_redeems_per_hour: int = 20
    #: Revocations of a player's tokens (sign out everywhere, deletion) per player per hour.
    revocations_per_hour: int = 10
    #: Requests to ``/v1/operator/...`` per operator (or client address) per minute.
    operator_requests_per_minute: int = 120
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
    #: ``POST /v1/games/{id}/hint`` per player per minute.
    hints_per_minute: int = 20
    #: Hints computed at once per process, and hints waiting for a turn.
    hint_workers: int = 1
    hint_queue: int = 4


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
    "name_changes_per_hour": (
        "--name-changes-per-hour",
        "NAME_CHANGES_PER_HOUR",
        "display-name changes (PUT/PATCH /v1/players/me) per player per hour",
    ),
    "transfer_codes_per_hour": (
        "--transfer-codes-per-hour",
        "TRANSFER_CODES_PER_HOUR",
        "transfer codes made (POST /v1/players/me/transfer) per player per hour",
    ),
    "transfer_redeems_per_hour": (
        "--transfer-redeems-per-hour",
        "TRANSFER_REDEEMS_PER_HOUR",
        "transfer codes tried (POST /v1/players/transfer) per client address per hour",
    ),
    "revocations_per_hour": (
        "--revocations-per-hour",
        "REVOCATIONS_PER_HOUR",
        "signing out everywhere or deleting the account (DELETE /v1/players/me/tokens, "
        "DELETE /v1/players/me) per player per hour",
    ),
    "operator_requests_per_minute": (
        "--operator-requests-per-minute",
        "OPERATOR_REQUESTS_PER_MINUTE",
        "requests to /v1/operator/... per operator (or client address) per minute",
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
    "hints_per_minute": (
        "--hints-per-minute",
        "HINTS_PER_MINUTE",
        "POST /v1/games/{id}/hint per player per minute",
    ),
    "hint_workers": ("--hint-workers", "HINT_WORKERS", "hints computed at once per process"),
    "hint_queue": ("--hint-queue", "HINT_QUEUE", "hints waiting per process"),
}


@dataclass(frozen=True)
class DailySelection:
    """The solver's budget for choosing a day's deal (``server.daily.selection``)."""

    #: Positions the solver searches per candidate deal.
    candidate_nodes: int = 200_000
    #: Candidates tried at most per game and day.
    candidates: int = 40
    #: Seconds of selection at most per game and day.
    seconds: float = 120.0

    def __post_init__(self) -> None:
        if self.candidate_nodes < 1 or self.candidates < 1 or self.seconds <= 0:
            raise ValueError("the daily selection budgets are positive")


#: field -> (flag, environment variable, help)
DAILY_OPTIONS: dict[str, tuple[str, str, str]] = {
    "candidate_nodes": (
        "--daily-candidate-nodes",
        "DAILY_CANDIDATE_NODES",
        "positions the solver searches per candidate daily deal",
    ),
    "candidates": (
        "--daily-candidates",
        "DAILY_CANDIDATES",
        "candidate deals tried at most per game and day",
    ),
    "seconds": (
        "--daily-selection-seconds",
        "DAILY_SELECTION_SECONDS",
        "seconds of selection at most per game and day",
    ),
}


def daily_selection_from_environment() -> DailySelection:
    values: dict[str, Any] = {}
    for name, (_, env, _) in DAILY_OPTIONS.items():
        if env in os.environ:
            kind = float if name == "seconds" else int
            values[name] = kind(os.environ[env])
    return DailySelection(**values)


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


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    #: Empty: ``python -m server`` starts the embedded Valkey under ``data_dir``.
    redis_url: str = ""
    #: The keys of tokens and daily seeds derive from it (``server.keys``); at least
    #: ``MIN_SECRET_BYTES`` bytes.  Empty: with a Redis URL, a random secret kept in Redis
    #: (created once, shared by every instance on that Redis); embedded, ``DATA_DIR/secret``.
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
    #: permessage-deflate: ``message`` (each message on its own), ``context`` or ``off``.
    ws_compression: str = "message"
    #: Seconds between the server's pings on an idle WebSocket; a socket whose pong has
    #: not come within as long again is closed. Each ping costs a write and a read per
    #: socket: 2,500 a second for 50,000 sockets at the default (uvicorn's).
    ws_ping_interval: float = 20.0
    #: The processes' memory allocator (``server.allocator``): ``jemalloc`` gives memory
    #: back after a burst of closed sockets; ``auto`` takes it when the system has it.
    allocator: str = "auto"
    limits: Limits = Limits()
    #: ``json`` (one object per line) or ``text``; empty: :func:`default_log_format`.
    log_format: str = ""
    #: The embedded store's files (append-only file, socket, secret).
    data_dir: str = "./data"
    #: Origins allowed to call the API from a browser (CORS); none by default.
    cors_origins: tuple[str, ...] = ()
    #: Seconds an anonymous player record lives without activity.
    player_idle_ttl: int = PLAYER_IDLE_TTL
    #: Largest request head (request line and headers) accepted, in bytes.
    max_header_bytes: int = 64 * 1024
    #: Seconds a client has to send a whole request head.
    header_timeout: float = 10.0
    #: Seconds a client has to send a whole request body, from the end of its head.
    body_timeout: float = 30.0
    #: Port of a listener of its own for ``/metrics`` (0: on the API's port).
    metrics_port: int = 0
    #: Bearer token ``/metrics`` requires (empty: none).
    metrics_token: str = ""
    #: The solver's budget for choosing the dailies.
    daily: DailySelection = DailySelection()
    #: The operator's OpenID Connect provider (``protocol/ACCOUNTS.md``): the ``iss`` and
    #: ``aud`` its ID tokens must carry, and where its keys are (a JWKS URL or file).
    #: All three empty: no sign-in with an identity.
    identity_issuer: str = ""
    identity_audience: str = ""
    identity_jwks: str = ""
    #: A linked identity is a condition of ranked play (``403 identity_required``).
    ranked_requires_identity: bool = False
    #: Days the operators' action trail keeps an entry (``server.operator.trail``).
    operator_trail_days: int = 400
    #: CPU seconds the post-close audit spends per game and day before it stops running the costly
    #: clairvoyance check (``server.operator.postclose``; BENCHMARKS.md, "Post-close audit").
    review_budget_seconds: float = 3600.0

    def __post_init__(self) -> None:
        check_secret(self.secret)
        if self.operator_trail_days < 1:
            raise ValueError("--operator-trail-days is at least 1")
        if self.review_budget_seconds < 0:
            raise ValueError("--review-budget-seconds is 0 or more")
        identity = (self.identity_issuer, self.identity_audience, self.identity_jwks)
        if any(identity) and not all(identity):
            raise ValueError(
                "--identity-issuer, --identity-audience and --identity-jwks go together"
            )
        if self.ranked_requires_identity and not all(identity):
            raise ValueError("--ranked-requires-identity needs an identity provider")
        if self.log_format not in ("", "json", "text"):
            raise ValueError(f"the log format is json or text, not {self.log_format!r}")
        if self.player_idle_ttl < 1:
            raise ValueError("the player idle TTL is a positive number of seconds")
        if self.max_header_bytes < 1024:
            raise ValueError("the request head limit is at least 1024 bytes")
        if self.header_timeout <= 0:
            raise ValueError("the request head timeout is a positive number of seconds")
        if self.body_timeout <= 0:
            raise ValueError("the request body timeout is a positive number of seconds")
        if not 0 <= self.metrics_port <= 65535:
            raise ValueError("the metrics port is 1-65535 (0: the API's own)")
        if self.durability not in DURABILITY_LEVELS:
            raise ValueError(f"durability is one of {', '.join(DURABILITY_LEVELS)}")
        if self.ws_compression not in WS_COMPRESSION_MODES:
            raise ValueError(f"ws compression is one of {', '.join(WS_COMPRESSION_MODES)}")
        if self.allocator not in ALLOCATORS:
            raise ValueError(f"the allocator is one of {', '.join(ALLOCATORS)}")
        if not 1 <= self.ws_ping_interval <= 3600:
            raise ValueError("the WebSocket ping interval is 1 to 3600 seconds")
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
            "redis_cluster": env_flag(os.environ.get("REDIS_CLUSTER", "")),
            "durability": os.environ.get("DURABILITY", cls.durability),
            "ws_compression": os.environ.get("WS_COMPRESSION", cls.ws_compression),
            "ws_ping_interval": float(os.environ.get("WS_PING_INTERVAL", cls.ws_ping_interval)),
            "allocator": os.environ.get("ALLOCATOR", cls.allocator),
            "limits": limits_from_environment(),
            "log_format": os.environ.get("LOG_FORMAT", cls.log_format),
            "data_dir": os.environ.get("DATA_DIR", cls.data_dir),
            "cors_origins": origins(os.environ.get("CORS_ORIGINS", "")),
            "player_idle_ttl": int(os.environ.get("PLAYER_IDLE_TTL", cls.player_idle_ttl)),
            "max_header_bytes": int(os.environ.get("MAX_HEADER_BYTES", cls.max_header_bytes)),
            "header_timeout": float(os.environ.get("HEADER_TIMEOUT", cls.header_timeout)),
            "body_timeout": float(os.environ.get("BODY_TIMEOUT", cls.body_timeout)),
            "metrics_port": int(os.environ.get("METRICS_PORT") or cls.metrics_port),
            "metrics_token": os.environ.get("METRICS_TOKEN", cls.metrics_token),
            "daily": daily_selection_from_environment(),
            "identity_issuer": os.environ.get("IDENTITY_ISSUER", cls.identity_issuer),
            "identity_audience": os.environ.get("IDENTITY_AUDIENCE", cls.identity_audience),
            "identity_jwks": os.environ.get("IDENTITY_JWKS", cls.identity_jwks),
            "ranked_requires_identity": env_flag(os.environ.get("RANKED_REQUIRES_IDENTITY", "")),
            "operator_trail_days": int(
                os.environ.get("OPERATOR_TRAIL_DAYS", cls.operator_trail_days)
            ),
            "review_budget_seconds": float(
                os.environ.get("REVIEW_BUDGET_SECONDS", cls.review_budget_seconds)
            ),
        }

    @classmethod
    def from_environment(cls) -> Settings:
        """The settings of the environment (:class:`WeakSecret` for a short secret)."""
        return cls(**cls._environment_values())

    @classmethod
    def from_arguments(cls, argv: list[str] | None = None) -> Settings:
        """The settings of the command line over the environment's; a bad value (a short
        secret, say) is a usage error (exit status 2) that names it."""
        defaults = argparse.Namespace(**cls._environment_values())
        parser = argparse.ArgumentParser(
            prog="python -m server", description="Run the solitaire game server."
        )
        parser.add_argument("--host", default=defaults.host, help="bind address (HOST)")
        parser.add_argument("--port", type=int, default=defaults.port, help="port (PORT)")
        parser.add_argument(
            "--redis-url",
            default=defaults.redis_url,
            help="Redis URL (REDIS_URL); none: a private Valkey with its data in --data-dir",
        )
        parser.add_argument(
            "--secret",
            default=defaults.secret,
            help=f"server secret, at least {MIN_SECRET_BYTES} bytes (SERVER_SECRET); none: "
            "a random one kept in Redis, or in DATA_DIR/secret for the embedded store",
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
        if defaults.durability not in DURABILITY_LEVELS:
            parser.error(f"DURABILITY is one of {', '.join(DURABILITY_LEVELS)}")
        parser.add_argument(
            "--ws-compression",
            choices=WS_COMPRESSION_MODES,
            default=defaults.ws_compression,
            help="WebSocket permessage-deflate: each message on its own (message, the "
            "default), carried over between messages (context), or off (WS_COMPRESSION)",
        )
        if defaults.ws_compression not in WS_COMPRESSION_MODES:
            parser.error(f"WS_COMPRESSION is one of {', '.join(WS_COMPRESSION_MODES)}")
        parser.add_argument(
            "--allocator",
            choices=ALLOCATORS,
            default=defaults.allocator,
            help="memory allocator of the server's processes: jemalloc (gives memory back "
            "after a burst of closed sockets; needs libjemalloc.so.2), pymalloc (CPython's "
            "own), or auto, the default: jemalloc when the system has it (ALLOCATOR)",
        )
        if defaults.allocator not in ALLOCATORS:
            parser.error(f"ALLOCATOR is one of {', '.join(ALLOCATORS)}")
        parser.add_argument(
            "--ws-ping-interval",
            type=float,
            default=defaults.ws_ping_interval,
            metavar="SECONDS",
            help="seconds between pings on a WebSocket (each after a random 75-100 %% of "
            "it), and to wait for the pong (WS_PING_INTERVAL; default 20)",
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
        parser.add_argument(
            "--log-format",
            choices=["json", "text"],
            default=defaults.log_format or None,
            help="json: one JSON object per line; text (LOG_FORMAT; default: text on a "
            "terminal, else json)",
        )
        parser.add_argument(
            "--data-dir",
            default=defaults.data_dir,
            help="the embedded store's directory (DATA_DIR; default ./data)",
        )
        parser.add_argument(
            "--cors-origins",
            default=",".join(defaults.cors_origins),
            help="comma-separated origins allowed to call the API from browsers "
            "(CORS_ORIGINS; default none)",
        )
        parser.add_argument(
            "--player-idle-ttl",
            type=int,
            default=defaults.player_idle_ttl,
            help="seconds an anonymous player record lives without activity "
            "(PLAYER_IDLE_TTL; default 30 days)",
        )
        parser.add_argument(
            "--max-header-bytes",
            type=int,
            default=defaults.max_header_bytes,
            help="largest request head in bytes (MAX_HEADER_BYTES; default 65536)",
        )
        parser.add_argument(
            "--header-timeout",
            type=float,
            default=defaults.header_timeout,
            help="seconds to receive a whole request head (HEADER_TIMEOUT; default 10)",
        )
        parser.add_argument(
            "--body-timeout",
            type=float,
            default=defaults.body_timeout,
            help="seconds to receive a whole request body once its head is in "
            "(BODY_TIMEOUT; default 30)",
        )
        parser.add_argument(
            "--metrics-port",
            type=int,
            default=defaults.metrics_port,
            help="serve /metrics on this port of its own, not on the API's "
            "(METRICS_PORT; default: the API's port)",
        )
        parser.add_argument(
            "--metrics-token",
            default=defaults.metrics_token,
            help="bearer token /metrics requires (METRICS_TOKEN; default none)",
        )
        parser.add_argument(
            "--identity-issuer",
            default=defaults.identity_issuer,
            metavar="URL",
            help="the 'iss' of the OpenID Connect provider's ID tokens (IDENTITY_ISSUER)",
        )
        parser.add_argument(
            "--identity-audience",
            default=defaults.identity_audience,
            help="the 'aud' they must carry: the app's client id (IDENTITY_AUDIENCE)",
        )
        parser.add_argument(
            "--identity-jwks",
            default=defaults.identity_jwks,
            metavar="URL|FILE",
            help="the provider's signing keys: its JWKS URL, or a JWKS file (IDENTITY_JWKS)",
        )
        parser.add_argument(
            "--ranked-requires-identity",
            action="store_true",
            default=defaults.ranked_requires_identity,
            help="ranked play needs a linked identity (RANKED_REQUIRES_IDENTITY=1)",
        )
        parser.add_argument(
            "--operator-trail-days",
            type=count,
            default=defaults.operator_trail_days,
            metavar="DAYS",
            help="days the operators' action trail keeps an entry (OPERATOR_TRAIL_DAYS; "
            "default 400)",
        )
        parser.add_argument(
            "--review-budget-seconds",
            type=float,
            default=defaults.review_budget_seconds,
            metavar="SECONDS",
            help="CPU seconds per game and day after which the post-close audit stops "
            "checking clairvoyance (REVIEW_BUDGET_SECONDS; default 3600)",
        )
        for name, (flag, env, text) in DAILY_OPTIONS.items():
            parser.add_argument(
                flag,
                type=float if name == "seconds" else count,
                dest=f"daily_{name}",
                default=getattr(defaults.daily, name),
                help=f"{text} ({env}; default {getattr(DailySelection, name)})",
            )
        args = parser.parse_args(argv)
        limits = Limits(
            rate_limits=args.rate_limits, **{name: getattr(args, name) for name in LIMIT_OPTIONS}
        )
        if args.ranked_min_account_age < 0:
            parser.error("--ranked-min-account-age is 0 (off) or a number of seconds")
        try:
            selection = DailySelection(
                **{name: getattr(args, f"daily_{name}") for name in DAILY_OPTIONS}
            )
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
                ws_compression=args.ws_compression,
                ws_ping_interval=args.ws_ping_interval,
                allocator=args.allocator,
                limits=limits,
                log_format=args.log_format or "",
                data_dir=args.data_dir,
                cors_origins=origins(args.cors_origins),
                player_idle_ttl=args.player_idle_ttl,
                max_header_bytes=args.max_header_bytes,
                header_timeout=args.header_timeout,
                body_timeout=args.body_timeout,
                metrics_port=args.metrics_port,
                metrics_token=args.metrics_token,
                daily=selection,
                identity_issuer=args.identity_issuer,
                identity_audience=args.identity_audience,
                identity_jwks=args.identity_jwks,
                ranked_requires_identity=args.ranked_requires_identity,
                operator_trail_days=args.operator_trail_days,
                review_budget_seconds=args.review_budget_seconds,
            )
        except ValueError as error:  # a weak secret, or a setting that needs another
            parser.error(str(error))

    @property
    def effective_log_format(self) -> str:
        return self.log_format or default_log_format()

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
            "WS_COMPRESSION": self.ws_compression,
            "WS_PING_INTERVAL": str(self.ws_ping_interval),
            "ALLOCATOR": self.allocator,
            **limits_to_environment(self.limits),
            "LOG_FORMAT": self.log_format,
            "DATA_DIR": self.data_dir,
            "CORS_ORIGINS": ",".join(self.cors_origins),
            "PLAYER_IDLE_TTL": str(self.player_idle_ttl),
            "MAX_HEADER_BYTES": str(self.max_header_bytes),
            "HEADER_TIMEOUT": str(self.header_timeout),
            "BODY_TIMEOUT": str(self.body_timeout),
            "METRICS_PORT": str(self.metrics_port),
            "METRICS_TOKEN": self.metrics_token,
            **{env: str(getattr(self.daily, name)) for name, (_, env, _) in DAILY_OPTIONS.items()},
            "IDENTITY_ISSUER": self.identity_issuer,
            "IDENTITY_AUDIENCE": self.identity_audience,
            "IDENTITY_JWKS": self.identity_jwks,
            "RANKED_REQUIRES_IDENTITY": "1" if self.ranked_requires_identity else "0",
            "OPERATOR_TRAIL_DAYS": str(self.operator_trail_days),
            "REVIEW_BUDGET_SECONDS": str(self.review_budget_seconds),
        }


assert set(LIMIT_OPTIONS) | {"rate_limits"} == {field.name for field in fields(Limits)}
