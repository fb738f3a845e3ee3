"""Sign-in with the operator's OpenID Connect provider (issue 24): ID tokens signed here
with keys made here; the keys served from a JWKS file and from a loopback HTTP server.
Every forgery class is refused with its reason, and counted in /metrics."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from server_support import (
    SECRET,
    WAIT,
    Api,
    Player,
    RunningServer,
    all_keys,
    bearer,
    error_code,
    run_app,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server import metrics
from server.app import create_app
from server.config import Settings
from server.testing import TEST_DAILY, UNLIMITED, dailies_chosen, free_port, serve_app

ISSUER = "https://id.example.test"
AUDIENCE = "solitaire-app"


class Keys:
    """Signing keys made for the test, and their public JWKS."""

    def __init__(self) -> None:
        self.private: dict[str, Any] = {
            "rsa-1": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec-1": ec.generate_private_key(ec.SECP256R1()),
            "ed-1": ed25519.Ed25519PrivateKey.generate(),
        }
        self.algorithm = {"rsa-1": "RS256", "ec-1": "ES256", "ed-1": "EdDSA"}

    def add(self, kid: str) -> None:
        self.private[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.algorithm[kid] = "RS256"

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.private.items():
            algorithm = jwt.get_algorithm_by_name(self.algorithm[kid])
            jwk = json.loads(algorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": keys}

    def sign(self, kid: str = "rsa-1", key: Any = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 600}
        body.update(claims)
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(
            body,
            key or self.private[kid],
            algorithm=self.algorithm.get(kid, "RS256"),
            headers={"kid": kid},
        )


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    head = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    return f"{head}.{b64(signature)}"


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


def settings(redis_url: str, cluster: bool, jwks: str, **extra: Any) -> Settings:
    return Settings(
        redis_url=redis_url,
        secret=SECRET,
        ranked_min_account_age=0,
        redis_cluster=cluster,
        limits=UNLIMITED,
        daily=TEST_DAILY,
        identity_issuer=ISSUER,
        identity_audience=AUDIENCE,
        identity_jwks=jwks,
        **extra,
    )


@pytest.fixture
async def server(
    redis_url: str, redis_cluster: bool, keys: Keys, tmp_path: Path
) -> AsyncIterator[RunningServer]:
    """An instance whose provider's keys are in a JWKS file."""
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(keys.jwks()))
    app = create_app(settings(redis_url, redis_cluster, str(path)))
    async with run_app(redis_url, app=app) as running:
        yield running


async def login(http: httpx.AsyncClient, id_token: str) -> httpx.Response:
    return await http.post("/v1/players/login", json={"id_token": id_token})


async def test_the_first_sign_in_creates_the_player_and_the_next_finds_it(http, keys: Keys) -> None:
    first = await login(http, keys.sign(sub="alice"))
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["created"] is True and set(body) >= {"player_id", "token", "expires_at"}
    me = await http.get("/v1/players/me", headers=bearer(body["token"]))
    assert me.json()["identity"]["issuer"] == ISSUER
    # Another device, a token signed with another of the provider's keys.
    for kid in ("ec-1", "ed-1"):
        again = await login(http, keys.sign(kid, sub="alice"))
        assert again.status_code == 200, again.text
        assert again.json()["player_id"] == body["player_id"]
        assert again.json()["created"] is False
    other = await login(http, keys.sign(sub="bob"))
    assert other.json()["player_id"] != body["player_id"]


async def test_an_anonymous_player_links_an_identity_and_keeps_its_history(
    http, api: Api, keys: Keys
) -> None:
    me = await api.player()
    game = await api.create_game(me, "balcony", "linked")
    linked = await http.post(
        "/v1/players/me/identity", json={"id_token": keys.sign(sub="carol")}, headers=me.headers
    )
    assert linked.status_code == 200, linked.text
    assert linked.json()["identity"]["issuer"] == ISSUER
    # Signing in with it on a new device finds the same player and its games.
    signed_in = await login(http, keys.sign("ec-1", sub="carol"))
    assert signed_in.json()["player_id"] == me.player_id and signed_in.json()["created"] is False
    device = Player(me.player_id, signed_in.json()["token"])
    games = (await http.get("/v1/players/me/games", headers=device.headers)).json()["games"]
    assert [entry["id"] for entry in games] == [game["id"]]
    # An identity bound elsewhere cannot be linked: 409, and nothing changes.
    someone = await api.player()
    taken = await http.post(
        "/v1/players/me/identity",
        json={"id_token": keys.sign(sub="carol")},
        headers=someone.headers,
    )
    assert taken.status_code == 409 and error_code(taken) == "identity_taken"
    assert (await http.get("/v1/players/me", headers=someone.headers)).json()["identity"] is None
    assert (await login(http, keys.sign(sub="carol"))).json()["player_id"] == me.player_id


async def failures(http: httpx.AsyncClient) -> dict[str, float]:
    metrics.flush()  # the in-process server's tallies (its /metrics is off: no token)
    text = metrics.exposition().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("solitaire_identity_verification_failures_total{"):
            reason = line.split('reason="')[1].split('"')[0]
            found[reason] = float(line.rsplit(" ", 1)[1])
    return found


async def test_every_forgery_is_refused_with_its_reason_and_counted(http, keys: Keys) -> None:
    now = int(time.time())
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = (
        keys.private["rsa-1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "iat": now, "exp": now + 600}
    confused = unsigned({"alg": "HS256", "kid": "rsa-1", "typ": "JWT"}, claims)
    head, body, _ = confused.split(".")
    confused = f"{head}.{body}." + b64(
        hmac.new(public_pem, f"{head}.{body}".encode(), hashlib.sha256).digest()
    )
    es_on_rsa = jwt.encode(
        claims, keys.private["ec-1"], algorithm="ES256", headers={"kid": "rsa-1"}
    )
    forgeries = {
        "signature": keys.sign(key=stranger, sub="mallory"),
        "issuer": keys.sign(iss="https://evil.example.test"),
        "audience": keys.sign(aud="another-app"),
        "expired": keys.sign(iat=now - 3600, exp=now - 120),
        "algorithm": unsigned({"alg": "none", "kid": "rsa-1"}, claims),
        "unknown_key": keys.sign("rsa-9", key=stranger),
        "oversized": keys.sign(padding="x" * 9000),
        "malformed": "not.a.jwt",
        "missing_claim": keys.sign(sub=None),
        "not_yet_valid": keys.sign(iat=now + 3600, nbf=now + 3600),
    }
    cases = [*forgeries.items(), ("algorithm", confused), ("algorithm", es_on_rsa)]
    before = await failures(http)
    for reason, id_token in cases:
        response = await login(http, id_token)
        assert response.status_code == 401, (reason, response.text)
        error = response.json()["error"]
        assert (error["code"], error["reason"]) == ("invalid_id_token", reason), reason
    after = await failures(http)
    for reason in forgeries:
        expected = 1 + (2 if reason == "algorithm" else 0)
        assert after.get(reason, 0) - before.get(reason, 0) == expected, reason
    # Within the leeway (a minute) an expired token is still taken.
    late = await login(http, keys.sign(iat=now - 600, exp=now - 30, sub="leeway"))
    assert late.status_code == 200, late.text


async def test_bad_bodies_are_typed(http, api: Api) -> None:
    me = await api.player()
    for path, headers in (("/v1/players/login", {}), ("/v1/players/me/identity", me.headers)):
        for body, code in (
            ({}, "missing_field"),
            ({"id_token": 5}, "invalid_field"),
            ({"id_token": "x", "sub": "y"}, "unknown_field"),
            ([1], "malformed"),
        ):
            response = await http.post(path, json=body, headers=headers)
            assert response.status_code == 400 and error_code(response) == code, (path, body)
    assert error_code(await http.post("/v1/players/me/identity", json={"id_token": "x"})) == (
        "unauthorized"
    )


async def test_ranked_play_may_require_an_identity(
    redis_url: str, redis_cluster: bool, keys: Keys, tmp_path: Path
) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(keys.jwks()))
    app = create_app(settings(redis_url, redis_cluster, str(path), ranked_requires_identity=True))
    async with (
        run_app(redis_url, app=app) as running,
        httpx.AsyncClient(base_url=running.base_url, timeout=WAIT * 2) as http,
    ):
        await dailies_chosen(app)
        anonymous = await Api(http).player()
        refused = await http.post("/v1/daily/balcony", headers=anonymous.headers)
        assert refused.status_code == 403 and error_code(refused) == "identity_required"
        casual = await http.post("/v1/games", json={"game": "balcony"}, headers=anonymous.headers)
        assert casual.status_code == 201  # casual play needs none
        linked = await http.post(
            "/v1/players/me/identity",
            json={"id_token": keys.sign(sub="ranked-dave")},
            headers=anonymous.headers,
        )
        assert linked.status_code == 200, linked.text
        ranked = await http.post("/v1/daily/balcony", headers=anonymous.headers)
        assert ranked.status_code == 200, ranked.text


async def test_an_unreachable_provider_without_keys_is_503(
    redis_url: str, redis_cluster: bool, keys: Keys
) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/jwks"
    app = create_app(settings(redis_url, redis_cluster, nowhere))
    async with (
        run_app(redis_url, app=app) as running,
        httpx.AsyncClient(base_url=running.base_url, timeout=WAIT * 2) as http,
    ):
        response = await login(http, keys.sign(sub="frank"))
        assert response.status_code == 503 and error_code(response) == "identity_unavailable"


async def test_keys_from_a_url_are_refreshed_on_an_unknown_kid_at_a_bounded_rate(
    redis_url: str, redis_cluster: bool, keys: Keys
) -> None:
    fetches: list[float] = []
    served = {"jwks": keys.jwks(), "delay": 0.0}

    async def jwks(request: Request) -> Response:
        fetches.append(time.monotonic())
        await asyncio.sleep(served["delay"])
        return JSONResponse(served["jwks"])

    provider = Starlette(routes=[Route("/jwks", jwks)])
    async with serve_app(provider) as port:
        app = create_app(settings(redis_url, redis_cluster, f"http://127.0.0.1:{port}/jwks"))
        async with (
            run_app(redis_url, app=app) as running,
            httpx.AsyncClient(base_url=running.base_url, timeout=WAIT * 2) as http,
        ):
            verifier = app.state.identity
            # 30 s in production; 3 s here: the five logins below fit well within it even
            # on a loaded machine (at 1 s they sometimes did not, and a third refresh was due).
            verifier.min_refresh_seconds = 3.0
            stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            assert len(fetches) == 1  # read at start
            assert (await login(http, keys.sign(sub="erin"))).status_code == 200
            assert len(fetches) == 1  # cached
            await asyncio.sleep(3.1)
            # The provider rotates in a new key: the first token with it brings a refresh.
            rotated_kid = f"rotated-{len(keys.private)}"  # new in each run of the module
            keys.add(rotated_kid)
            served["jwks"] = keys.jwks()
            rotated = await login(http, keys.sign(rotated_kid, sub="erin"))
            assert rotated.status_code == 200, rotated.text
            assert len(fetches) == 2
            # Unknown kids do not make the server hammer the provider: one refresh per
            # interval at most, however many tokens name them.
            for _ in range(5):
                response = await login(http, keys.sign("rsa-9", key=stranger))
                assert response.json()["error"]["reason"] == "unknown_key"
            assert len(fetches) == 2
            await asyncio.sleep(3.1)
            for _ in range(5):
                response = await login(http, keys.sign("rsa-9", key=stranger))
                assert response.json()["error"]["reason"] == "unknown_key"
            assert len(fetches) == 3
            # A provider that does not answer: the refresh gives up after its timeout.
            verifier.min_refresh_seconds = 0.0
            verifier.fetch_timeout = 0.5
            served["delay"] = 5.0
            started = time.monotonic()
            response = await login(http, keys.sign("rsa-8", key=stranger))
            assert response.json()["error"]["reason"] == "unknown_key"
            assert time.monotonic() - started < 2.5
            served["delay"] = 0.0
            # The keys read before still serve.
            assert (await login(http, keys.sign(rotated_kid, sub="erin"))).status_code == 200


async def test_a_deleted_account_releases_its_identity(http, keys: Keys, redis_client) -> None:
    first = (await login(http, keys.sign(sub="gina"))).json()
    deleted = await http.request(
        "DELETE", "/v1/players/me", json={"confirm": True}, headers=bearer(first["token"])
    )
    assert deleted.status_code == 200, deleted.text
    assert not [key for key in await all_keys(redis_client) if key.startswith(b"identity:")]
    again = (await login(http, keys.sign(sub="gina"))).json()
    assert again["created"] is True and again["player_id"] != first["player_id"]
    refused = await http.get("/v1/players/me", headers=bearer(first["token"]))
    assert error_code(refused) == "token_revoked"
