"""Verifying the ID tokens of the operator's OpenID Connect provider (``protocol/ACCOUNTS.md``,
"Sign-in with an identity provider").

The signature, issuer, audience, expiry (with :data:`LEEWAY` seconds of leeway) and
algorithm are checked by PyJWT; this module only chooses the key and says no in typed
ways.  Algorithms are an allow-list of asymmetric ones (:data:`ALGORITHMS`): never
``none``, never an HMAC (so a public key can never serve as an HMAC secret), and the
header's algorithm must be the one of the key its ``kid`` names.

The keys (a JWKS) come from a URL or a file (``--identity-jwks``), are kept in memory,
and are read again when a token names a ``kid`` they lack (a provider's key rotation),
at most once per :data:`MIN_REFRESH_SECONDS`, each fetch bounded by
:data:`FETCH_TIMEOUT` seconds and :data:`MAX_JWKS_BYTES`; and every
:data:`MAX_KEY_AGE` seconds in any case.  Each refusal is counted in ``/metrics`` by reason.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import NamedTuple

import httpx
import jwt

from server import metrics
from server.errors import ApiError

log = logging.getLogger("server.accounts")

#: The algorithms taken, and the JWK key type each needs.
ALGORITHMS = {"RS256": "RSA", "ES256": "EC", "EdDSA": "OKP"}
#: Seconds of clock difference allowed on ``exp``, ``iat`` and ``nbf``.
LEEWAY = 60
#: The longest ID token taken, in characters (a real one is 1-2 KB).
MAX_ID_TOKEN = 8 * 1024
#: Bounds on reading the keys: seconds per fetch, bytes, refreshes.
FETCH_TIMEOUT = 5.0
MAX_JWKS_BYTES = 256 * 1024
MIN_REFRESH_SECONDS = 30.0
MAX_KEY_AGE = 3600.0
#: Every reason a token is refused (the metric's label values).
REASONS = (
    "malformed",
    "oversized",
    "algorithm",
    "unknown_key",
    "signature",
    "issuer",
    "audience",
    "expired",
    "not_yet_valid",
    "missing_claim",
)


class Identity(NamedTuple):
    """Who a valid ID token says signed in."""

    issuer: str
    subject: str


def refused(reason: str, message: str) -> ApiError:
    metrics.identity_refused(reason)
    return ApiError("invalid_id_token", message, reason=reason)


class IdentityVerifier:
    """The provider's keys and the checks of its ID tokens (``app.state.identity``)."""

    def __init__(self, issuer: str, audience: str, jwks: str) -> None:
        self.issuer = issuer
        self.audience = audience
        #: A JWKS URL (http or https) or the path of a JWKS file.
        self.source = jwks
        self.keys: dict[str | None, jwt.PyJWK] = {}
        self.min_refresh_seconds = MIN_REFRESH_SECONDS
        self.fetch_timeout = FETCH_TIMEOUT
        self._loaded_at = -float("inf")
        self._tried_at = -float("inf")
        self._lock = asyncio.Lock()

    @property
    def is_url(self) -> bool:
        return self.source.startswith(("https://", "http://"))

    async def start(self) -> None:
        """Read the keys once; a missing or broken file is a start-up error, an
        unreachable URL is tried again on the first sign-in."""
        if self.is_url:
            await self.refresh(force=True)
        else:
            self._install(await asyncio.to_thread(Path(self.source).read_bytes))

    async def refresh(self, force: bool = False) -> bool:
        """Read the keys again, unless that was tried within the refresh interval: True
        when new keys were read."""
        async with self._lock:
            now = time.monotonic()
            if not force and now - self._tried_at < self.min_refresh_seconds:
                return False
            self._tried_at = now
            try:
                # The timeout bounds each read; this bounds the whole fetch too.
                async with asyncio.timeout(self.fetch_timeout * 2):
                    self._install(await self._fetch())
            except (OSError, TimeoutError, httpx.HTTPError, ValueError, jwt.PyJWTError) as error:
                log.warning("reading the identity provider's keys failed: %s", error)
                return False
            return True

    async def _fetch(self) -> bytes:
        if not self.is_url:
            return await asyncio.to_thread(Path(self.source).read_bytes)
        async with (
            httpx.AsyncClient(timeout=self.fetch_timeout, follow_redirects=False) as client,
            client.stream("GET", self.source) as response,
        ):
            response.raise_for_status()
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_JWKS_BYTES:
                    raise ValueError(f"the JWKS is over {MAX_JWKS_BYTES} bytes")
            return body

    def _install(self, body: bytes) -> None:
        keys = jwt.PyJWKSet.from_dict(json.loads(body)).keys
        self.keys = {key.key_id: key for key in keys}
        self._loaded_at = time.monotonic()

    async def _key(self, kid: str | None) -> jwt.PyJWK | None:
        if time.monotonic() - self._loaded_at > MAX_KEY_AGE:
            await self.refresh()
        key = self.keys.get(kid)
        if key is None and kid is None and len(self.keys) == 1:
            key = next(iter(self.keys.values()))  # a provider with one key may omit kid
        if key is None and await self.refresh():
            key = self.keys.get(kid)
        if key is None and not self.keys:
            raise ApiError(
                "identity_unavailable", "the identity provider's keys cannot be read; retry"
            )
        return key

    async def verify(self, id_token: str) -> Identity:
        """Who signed in, or ``invalid_id_token`` with its ``reason``."""
        if len(id_token) > MAX_ID_TOKEN:
            raise refused("oversized", f"an ID token is at most {MAX_ID_TOKEN} characters")
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError:
            raise refused("malformed", "that is not a signed JWT") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in ALGORITHMS:
            raise refused("algorithm", f"only {', '.join(ALGORITHMS)} are taken")
        if kid is not None and not isinstance(kid, str):
            raise refused("malformed", "kid is a string")
        key = await self._key(kid)
        if key is None:
            raise refused("unknown_key", "the token is signed by a key the provider does not list")
        if key.key_type != ALGORITHMS[algorithm] or key.algorithm_name != algorithm:
            raise refused("algorithm", "the token's algorithm is not its key's")
        try:
            claims = jwt.decode(
                id_token,
                key=key.key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["iss", "aud", "sub", "exp", "iat"]},
            )
        except jwt.ExpiredSignatureError:
            raise refused("expired", "the ID token has expired") from None
        except jwt.ImmatureSignatureError:
            raise refused("not_yet_valid", "the ID token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise refused("audience", "the ID token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise refused("issuer", "the ID token is from another issuer") from None
        except jwt.MissingRequiredClaimError as error:
            raise refused("missing_claim", f"the ID token lacks '{error.claim}'") from None
        except jwt.InvalidSignatureError:
            raise refused("signature", "the ID token's signature is wrong") from None
        except jwt.PyJWTError:
            raise refused("malformed", "that is not a valid ID token") from None
        subject = claims["sub"]
        if not isinstance(subject, str) or not 1 <= len(subject) <= 255:
            raise refused("missing_claim", "the ID token's 'sub' is not a string of 1-255")
        return Identity(self.issuer, subject)
