"""The server secret: long enough, and never a key itself (issue 8, finding 6).

A short secret is found offline from a player's own token or a day's commitment;
tokens and daily seeds are keyed by separate keys derived from the secret, so a
token never helps to guess a seed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from server import auth, daily
from server.app import SECRET_KEY, shared_secret
from server.config import Settings, WeakSecret
from server.keys import DAILY_SEED, MIN_SECRET_BYTES, TOKEN_SIGNING, derive_key
from server.redisconn import connect

ROOT = Path(__file__).resolve().parents[2]
#: Bound on one run of ``python -m server`` refusing to start, in seconds.
RUN_TIMEOUT = 60
SECRET = b"cbafc6f4934db1f1b080f63d2ca5ba3add078ae504c0ee3425699b87dcd0e092"
DAILY_MD = ROOT / "protocol" / "DAILY.md"


def run_server(*args: str, secret_env: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "SERVER_SECRET"}
    if secret_env is not None:
        env["SERVER_SECRET"] = secret_env
    return subprocess.run(
        [sys.executable, "-m", "server", "--port", "1", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def test_the_server_refuses_to_start_with_a_short_secret_flag() -> None:
    result = run_server("--secret", "short")
    assert result.returncode != 0
    assert "--secret" in result.stderr and "SERVER_SECRET" in result.stderr
    assert f"at least {MIN_SECRET_BYTES}" in result.stderr
    assert "Uvicorn running" not in result.stderr


def test_the_server_refuses_to_start_with_a_short_secret_in_the_environment() -> None:
    result = run_server(secret_env="x" * (MIN_SECRET_BYTES - 1))
    assert result.returncode != 0
    assert "SERVER_SECRET" in result.stderr and "31 bytes" in result.stderr


def test_settings_take_a_secret_of_32_bytes_or_none() -> None:
    for short in ("s", "x" * (MIN_SECRET_BYTES - 1), "é" * 15):  # bytes, not characters
        with pytest.raises(WeakSecret, match="--secret / SERVER_SECRET"):
            Settings(secret=short)
    random_hex = secrets.token_hex(32)  # what `openssl rand -hex 32` makes
    assert Settings(secret=random_hex).secret == random_hex
    accented = "é" + secrets.token_hex(8)[:15] + "ü"  # 17 characters, 19 bytes
    with pytest.raises(WeakSecret, match="19 bytes"):
        Settings(secret=accented)
    assert Settings().secret == ""
    assert Settings.from_arguments(["--secret", random_hex]).secret == random_hex


#: Secrets long enough but not random: a repeated byte or word, few distinct bytes, words
#: (with digits and separators), keyboard runs, sequences, a look-alike of a hex secret.
WEAK_SECRETS = [
    "a" * 32,
    "x" * 64,
    "password" * 4,
    "solitaire" * 4,
    "ab" * 20,
    "0123456789" * 4,
    "abcdefghijklmnopqrstuvwxyz0123456789",
    "qwertyuiopasdfghjklzxcvbnmqwertyuiop",
    "correcthorsebatterystaplecorrecthorse",
    "server-test-secret-of-at-least-32-bytes",
    "my-very-own-production-secret-2026!",
    "deadbeef" * 8,
    "é" * 16,
]


@pytest.mark.parametrize("weak", WEAK_SECRETS)
def test_a_secret_that_is_not_random_is_refused_without_being_quoted(weak: str) -> None:
    with pytest.raises(WeakSecret) as refused:
        Settings(secret=weak)
    message = str(refused.value)
    assert "--secret / SERVER_SECRET" in message and "openssl rand -hex 32" in message
    assert weak not in message and weak[:8] not in message


def test_random_secrets_of_every_usual_form_are_taken() -> None:
    for _ in range(20):
        for made in (secrets.token_hex(32), secrets.token_hex(16), secrets.token_urlsafe(32)):
            assert Settings(secret=made).secret == made


def test_the_server_refuses_to_start_with_a_secret_of_words() -> None:
    weak = "solitaire" * 4
    result = run_server(secret_env=weak)
    assert result.returncode != 0
    assert "not random enough" in result.stderr and "openssl rand -hex 32" in result.stderr
    assert weak not in result.stderr and "solitaire" not in result.stderr
    assert "Uvicorn running" not in result.stderr


@pytest.fixture
async def redis(redis_url: str, redis_cluster: bool) -> AsyncIterator[Redis]:
    client = connect(redis_url, redis_cluster)
    try:
        yield client
    finally:
        await client.aclose()


async def test_a_secret_the_server_makes_is_32_random_bytes_kept_in_redis(redis: Redis) -> None:
    first = await shared_secret(redis, "")
    assert len(first) == MIN_SECRET_BYTES
    assert await shared_secret(redis, "") == first  # every instance gets the same
    assert await redis.get(SECRET_KEY) == first
    await redis.delete(SECRET_KEY)
    assert await shared_secret(redis, "") != first
    # One planted in Redis by hand must be as long as a configured one.
    await redis.set(SECRET_KEY, b"weak")
    with pytest.raises(WeakSecret, match="4 bytes"):
        await shared_secret(redis, "")
    assert await shared_secret(redis, "z" * 40) == b"z" * 40


def b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def hkdf_sha256(secret: bytes, info: bytes) -> bytes:
    """RFC 5869 with no salt and L = 32, written out here independently of server.keys."""
    prk = hmac.new(bytes(32), secret, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()


def test_the_key_derivation_is_hkdf_sha256() -> None:
    # RFC 5869, test case 3 (no salt, no info): the first 32 bytes of its OKM.
    assert derive_key(b"\x0b" * 22, "").hex() == (
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
    )
    assert derive_key(SECRET, DAILY_SEED) == hkdf_sha256(SECRET, b"solitaire/daily-seed/v1")
    assert derive_key(SECRET, TOKEN_SIGNING) == hkdf_sha256(SECRET, b"solitaire/token-signing/v1")


def test_a_token_is_signed_by_its_own_key_not_by_the_secret_nor_the_seed_key() -> None:
    token = auth.issue_token(SECRET, "p_alice", time.time())
    payload, _, signature = token.rpartition(".")
    assert payload.startswith("v1.p_alice.")

    def signed_by(key: bytes) -> str:
        return b64(hmac.new(key, payload.encode(), hashlib.sha256).digest())

    assert signature != signed_by(SECRET)
    assert signature != signed_by(hkdf_sha256(SECRET, b"solitaire/daily-seed/v1"))
    assert signature == signed_by(hkdf_sha256(SECRET, b"solitaire/token-signing/v1"))
    assert auth.verify_token(SECRET, token, time.time()) == "p_alice"
    # A token made the old way (HMAC under the bare secret) is refused.
    forged = f"{payload}.{signed_by(SECRET)}"
    with pytest.raises(auth.ApiError, match="signature"):
        auth.verify_token(SECRET, forged, time.time())


def test_the_daily_seed_is_the_documented_formula_under_the_derived_key() -> None:
    message = b"daily-seed:v2:colorado:2026-11-29:3"
    seed = daily.candidate_seed(SECRET, "colorado", "2026-11-29", 3)
    key = hkdf_sha256(SECRET, b"solitaire/daily-seed/v1")
    assert seed == hmac.new(key, message, hashlib.sha256).hexdigest()
    assert seed != hmac.new(SECRET, message, hashlib.sha256).hexdigest()
    assert seed != hmac.new(derive_key(SECRET, TOKEN_SIGNING), message, "sha256").hexdigest()


def test_daily_md_works_its_example_exactly() -> None:
    text = DAILY_MD.read_text()
    values = dict(re.findall(r"^(server_secret|seed_key|commitment) += (\S+)", text, re.M))
    secret = values["server_secret"].strip('"').encode()
    (seed,) = re.findall(r"seed_0 \(colorado, 2026-11-29\)\s+= ([0-9a-f]{64})", text)
    assert len(secret) >= MIN_SECRET_BYTES
    assert values["seed_key"] == hkdf_sha256(secret, b"solitaire/daily-seed/v1").hex()
    assert seed == daily.candidate_seed(secret, "colorado", "2026-11-29", 0)
    assert values["commitment"] == daily.commitment("colorado", "2026-11-29", seed)
    assert 'info = "solitaire/daily-seed/v1"' in text
