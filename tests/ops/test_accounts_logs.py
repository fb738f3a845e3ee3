"""Tokens, ID tokens and transfer codes never reach the logs (issue 24): every account
route is used, right and wrong, by ``python -m server`` logging JSON at debug level, and
its whole output is searched for each secret it was handed."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from ops_support import started

from server.logs import JsonFormatter

ISSUER = "https://id.example.test"
AUDIENCE = "solitaire-app"


def id_token(key: rsa.RSAPrivateKey, sub: str, **claims: object) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600, **claims}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": "k1"})


async def test_no_token_id_token_or_code_is_logged(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.get_algorithm_by_name("RS256").to_jwk(key.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "k1"}]}))
    secrets: list[str] = []
    async with (
        started(
            "--data-dir",
            str(tmp_path / "data"),
            "--log-format",
            "json",
            "--log-level",
            "debug",
            "--identity-issuer",
            ISSUER,
            "--identity-audience",
            AUDIENCE,
            "--identity-jwks",
            str(tmp_path / "jwks.json"),
        ) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as http,
    ):
        created = (await http.post("/v1/players", json={"name": "Log Watcher"})).json()
        token = created["token"]
        renewed = (
            await http.post("/v1/players/me/token", headers={"Authorization": f"Bearer {token}"})
        ).json()["token"]
        headers = {"Authorization": f"Bearer {renewed}"}
        code = (await http.post("/v1/players/me/transfer", headers=headers)).json()["code"]
        moved = (await http.post("/v1/players/transfer", json={"code": code.lower()})).json()
        used = await http.post("/v1/players/transfer", json={"code": code})
        assert used.status_code == 404
        good = id_token(key, "watcher")
        linked = await http.post(
            "/v1/players/me/identity", json={"id_token": good}, headers=headers
        )
        assert linked.status_code == 200, linked.text
        signed_in = (await http.post("/v1/players/login", json={"id_token": good})).json()
        expired = id_token(key, "watcher", exp=int(time.time()) - 3600)
        assert (await http.post("/v1/players/login", json={"id_token": expired})).status_code == 401
        forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
        assert (await http.post("/v1/players/login", json={"id_token": forged})).status_code == 401
        export = await http.get("/v1/players/me/export", headers=headers)
        assert export.status_code == 200
        assert (await http.delete("/v1/players/me/tokens", headers=headers)).status_code == 200
        revoked = await http.get("/v1/players/me", headers=headers)
        assert revoked.status_code == 401
        # Signed out everywhere, the identity signs in again.
        again = (await http.post("/v1/players/login", json={"id_token": good})).json()
        last = {"Authorization": f"Bearer {again['token']}"}
        gone = await http.request("DELETE", "/v1/players/me", json={"confirm": True}, headers=last)
        assert gone.status_code == 200, gone.text
        secrets = [token, renewed, moved["token"], signed_in["token"], again["token"]]
        secrets += [good, expired, forged]
        secrets += [code, code.replace("-", ""), code.lower()]
        await server.stop()
    output = server.output
    assert server.records()  # it did log (JSON lines), requests included
    assert any(record.get("path") == "/v1/players/login" for record in server.records())
    for secret in secrets:
        assert secret not in output
    for secret in (token, renewed, good):
        assert secret.rsplit(".", 1)[1] not in output  # not even a signature


def test_the_scrubber_takes_codes_and_id_tokens() -> None:
    code = "7KQ2-M9XD-4TPA-HV0C"
    jwt_text = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    record = logging.LogRecord(
        "server", logging.WARNING, __file__, 1, "got %s and %s", (code.lower(), jwt_text), None
    )
    line = JsonFormatter().format(record)
    assert code.lower() not in line and "c2lnbmF0dXJl" not in line
    assert json.loads(line)["message"] == "got [scrubbed] and [scrubbed]"
