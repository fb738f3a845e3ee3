"""Static checks of the container deployment: ``Dockerfile``, ``docker-compose.yml``,
``deploy/nginx.conf`` and the monitoring files (``deploy/prometheus.yml``, ``deploy/grafana``).

Neither Docker nor nginx is needed: the files are parsed (the nginx config by a small
tokenizer of its syntax) and cross-checked against each other and against the project
(``scripts/run``, the server's settings and its body limit), so that the image runs the
same entry point as ``scripts/run``, every port agrees, and the proxy balances over the
replicas and passes WebSocket upgrades.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import pytest
import yaml

from server import metrics
from server.codec import MAX_MESSAGE_BYTES
from server.config import Settings

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
COMPOSE = ROOT / "docker-compose.yml"
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
RUN_SCRIPT = ROOT / "scripts" / "run"

#: What the image must contain to ``pip install .`` the project.
IMAGE_SOURCES = ["pyproject.toml", "README.md", "server", "protocol", "clients"]
HEALTHZ_URL = re.compile(r"http://(?:127\.0\.0\.1|localhost)(?::(\d+))?/healthz\b")
SETTINGS_ENVIRONMENT = list(Settings().to_environment())
PROMETHEUS_CONF = ROOT / "deploy" / "prometheus.yml"
GRAFANA = ROOT / "deploy" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "solitaire.json"


# --- Dockerfile ---------------------------------------------------------------------------


class Instruction(NamedTuple):
    keyword: str
    arguments: str


def dockerfile() -> list[Instruction]:
    """The instructions, continuation lines joined, comments and blank lines dropped."""
    instructions: list[Instruction] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue  # also inside a continued instruction, as Docker does
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, arguments = (pending + stripped).partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip()))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return instructions


def instructions(keyword: str) -> list[str]:
    return [i.arguments for i in dockerfile() if i.keyword == keyword]


def exec_form(arguments: str) -> list[str]:
    """A JSON-array (exec form) CMD, HEALTHCHECK CMD or ENTRYPOINT."""
    assert arguments.startswith("["), f"use the exec form (a JSON array): {arguments}"
    words = json.loads(arguments)
    assert isinstance(words, list) and all(isinstance(w, str) for w in words)
    return words


def image_cmd() -> list[str]:
    commands = instructions("CMD")
    assert commands, "the Dockerfile has no CMD"
    return exec_form(commands[-1])


def image_port(monkeypatch: pytest.MonkeyPatch) -> int:
    """The port the image's CMD makes the server listen on, as the server parses it."""
    for name in SETTINGS_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    return Settings.from_arguments(image_cmd()[3:]).port


def healthz_ports(text: str) -> list[int]:
    return [int(port or 80) for port in HEALTHZ_URL.findall(text)]


def run_script_command() -> tuple[str, str]:
    """(interpreter, module) of the ``exec ... -m MODULE`` line of ``scripts/run``."""
    for line in RUN_SCRIPT.read_text(encoding="utf-8").splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["exec"] and "-m" in words:
            at = words.index("-m")
            return words[at - 1], words[at + 1]
    raise AssertionError("scripts/run has no `exec <python> -m <module>` line")


def dockerignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(path: str) -> bool:
    """Whether ``path`` is left out of the build context by .dockerignore (simplified:
    ``*`` also matches ``/``, which is enough for the patterns used there)."""
    result = False
    for pattern in dockerignore_patterns():
        negated = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        if fnmatch.fnmatchcase(path, pattern):
            result = not negated
    return result


def test_dockerfile_final_image_is_python_311_slim_with_the_web_client_on_the_built_sdk() -> None:
    assert instructions("FROM") == ["node:20-slim AS sdk", "python:3.11-slim"]
    copies = instructions("COPY")
    assert any(c.startswith("clients/web/static/") and "/srv/web/" in c for c in copies)
    # The SDK's browser build, beside WEB_ROOT where server/app.py looks for it.
    assert copies[-1] == "--from=sdk /ts/dist/browser/ /srv/ts/dist/browser/"
    assert "WEB_ROOT=/srv/web" in instructions("ENV")


def test_dockerfile_cmd_runs_the_entry_point_of_scripts_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    interpreter, module = run_script_command()
    assert PurePosixPath(interpreter).name == "python"
    assert module == "server"
    cmd = image_cmd()
    assert cmd[:3] == ["python", "-m", module], cmd
    assert not instructions("ENTRYPOINT"), "an ENTRYPOINT would wrap `python -m server`"
    # The flags are the server's own: they parse, bind every interface, name a port.
    for name in SETTINGS_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    settings = Settings.from_arguments(cmd[3:])
    assert settings.host == "0.0.0.0"
    assert "--port" in cmd
    # REDIS_URL and SERVER_SECRET come from the environment, never baked into the image.
    assert not settings.redis_url and not settings.secret
    for env in instructions("ENV") + instructions("ARG"):
        assert "REDIS_URL" not in env and "SERVER_SECRET" not in env, env


def test_dockerfile_exposes_the_port_of_its_cmd(monkeypatch: pytest.MonkeyPatch) -> None:
    exposed = {int(p.split("/")[0]) for e in instructions("EXPOSE") for p in e.split()}
    assert exposed == {image_port(monkeypatch)}


def test_dockerfile_healthcheck_probes_healthz_with_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (healthcheck,) = instructions("HEALTHCHECK")
    options, _, command = healthcheck.partition("CMD ")
    assert all(option.startswith("--") for option in options.split()), options
    words = exec_form(command.strip())
    assert words[:2] == ["python", "-c"], "python:3.11-slim has neither curl nor wget"
    assert healthz_ports(words[2]) == [image_port(monkeypatch)]


def test_dockerfile_runs_as_a_non_root_user() -> None:
    users = instructions("USER")
    assert users, "the Dockerfile has no USER"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    keywords = [i.keyword for i in dockerfile()]
    assert keywords.index("USER") < keywords.index("CMD")


def test_dockerfile_installs_the_project_not_editable_without_dev_extras() -> None:
    installs = [run for run in instructions("RUN") if "pip install" in run]
    assert len(installs) == 1, installs
    words = shlex.split(installs[0].split("pip install", 1)[1].split("&&")[0])
    assert "--no-cache-dir" in words
    assert "." in words
    assert not {"-e", "--editable"} & set(words)
    assert not any("[" in word for word in words), "no extras (dev) in the image"


def test_dockerfile_copies_every_source_the_install_needs() -> None:
    copied = set()
    for copy in instructions("COPY"):
        if "--from=" in copy:
            continue  # from the build stage, not the build context
        words = [w for w in copy.split() if not w.startswith("--")]
        copied.update(source.strip("/") for source in words[:-1])
    assert set(IMAGE_SOURCES) <= copied, copied
    # Every package that setuptools finds is copied, so the install misses none.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for include in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]:
        assert include.rstrip("*") in copied, include
    for source in copied:
        assert (ROOT / source).exists(), source
        assert not ignored(source), f".dockerignore leaves out {source}, which COPY needs"


def test_dockerignore_keeps_local_state_out_of_the_build_context() -> None:
    local = [".git", ".venv", ".mypy_cache", ".pytest_cache", "tests", "clients/web/node_modules"]
    local += ["clients/ts/node_modules", "clients/ts/dist"]
    local.append(Settings().data_dir.strip("./"))  # the embedded Valkey's data and secret
    for path in local:
        assert ignored(path), path


# --- docker-compose.yml -------------------------------------------------------------------


def compose() -> dict[str, Any]:
    document = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def service(name: str) -> dict[str, Any]:
    services = compose()["services"]
    assert name in services, f"no service {name!r}"
    return services[name]


def environment(spec: dict[str, Any]) -> dict[str, str]:
    """A service's environment, from the mapping or the ``KEY=VALUE`` list form."""
    raw = spec.get("environment", {})
    if isinstance(raw, list):
        raw = dict(item.split("=", 1) for item in raw)
    return {key: str(value) for key, value in raw.items()}


def words(command: str | list[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [str(w) for w in command]


def healthcheck_text(spec: dict[str, Any]) -> str:
    assert "healthcheck" in spec, "no healthcheck"
    test = spec["healthcheck"]["test"]
    return " ".join(test) if isinstance(test, list) else str(test)


def healthy_dependencies(spec: dict[str, Any]) -> set[str]:
    depends = spec.get("depends_on", {})
    assert isinstance(depends, dict), "use the long form of depends_on, with conditions"
    return {name for name, c in depends.items() if c.get("condition") == "service_healthy"}


def volume_mounts(spec: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(source, target, read_only) of a service's volumes, from either syntax."""
    mounts = []
    for volume in spec.get("volumes", []):
        if isinstance(volume, dict):
            mounts.append(
                (volume["source"], volume["target"], bool(volume.get("read_only", False)))
            )
        else:
            source, target, *mode = volume.split(":")
            mounts.append((source, target, "ro" in "".join(mode).split(",")))
    return mounts


def published_ports(spec: dict[str, Any]) -> list[tuple[int, int]]:
    """(host, container) port pairs a service publishes, from either syntax."""
    pairs = []
    for port in spec.get("ports", []):
        if isinstance(port, dict):
            pairs.append((int(port["published"]), int(port["target"])))
            continue
        parts = str(port).split("/")[0].split(":")
        assert len(parts) >= 2, f"{port}: name the host port"
        pairs.append((int(parts[-2]), int(parts[-1])))
    return pairs


def test_compose_uses_the_compose_spec_with_the_three_services() -> None:
    document = compose()
    assert "version" not in document, "the compose spec has no version key"
    assert {"redis", "server", "proxy"} <= set(document["services"])
    for name, spec in document["services"].items():
        assert healthcheck_text(spec), name
        for dependency in spec.get("depends_on", {}):
            assert dependency in document["services"], (name, dependency)


def test_compose_redis_persists_with_append_only_file() -> None:
    redis = service("redis")
    assert redis["image"].startswith("redis:7")
    command = words(redis["command"])
    assert command[0] == "redis-server"
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "everysec"
    (data,) = [m for m in volume_mounts(redis) if m[1] == "/data"]
    assert data[0] in compose()["volumes"], "/data is a named volume"
    assert "redis-cli" in healthcheck_text(redis) and "ping" in healthcheck_text(redis)


def test_compose_server_builds_the_dockerfile_and_runs_two_scalable_replicas() -> None:
    server = service("server")
    build = server["build"]
    if isinstance(build, str):
        build = {"context": build}
    assert build["context"] == "."
    assert (ROOT / build["context"] / build.get("dockerfile", "Dockerfile")) == DOCKERFILE
    assert server["deploy"]["replicas"] == 2
    # Scalable: no fixed name, no host port; nor a command bypassing the image's CMD.
    assert "container_name" not in server
    assert "ports" not in server
    assert "command" not in server and "entrypoint" not in server


def test_compose_server_environment() -> None:
    env = environment(service("server"))
    redis_url = urlsplit(env["REDIS_URL"])
    assert redis_url.scheme == "redis"
    assert redis_url.hostname == "redis" and "redis" in compose()["services"]
    assert redis_url.port == 6379
    # One secret for every replica, which compose refuses to start without.
    assert re.fullmatch(r"\$\{SERVER_SECRET:\?[^}]*\}", env["SERVER_SECRET"]), env
    assert int(env["WORKERS"]) == 2


def test_compose_server_waits_for_redis_and_is_health_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = service("server")
    assert "redis" in healthy_dependencies(server)
    assert healthz_ports(healthcheck_text(server)) == [image_port(monkeypatch)]


def test_compose_proxy_publishes_nginx_with_the_deploy_config() -> None:
    proxy = service("proxy")
    assert proxy["image"].startswith("nginx:")
    ports = published_ports(proxy)
    assert ports, "the proxy publishes a host port"
    assert {container for _, container in ports} <= set(nginx_listen_ports())
    mounts = [m for m in volume_mounts(proxy) if m[1] == "/etc/nginx/nginx.conf"]
    assert len(mounts) == 1, volume_mounts(proxy)
    source, _, read_only = mounts[0]
    assert (ROOT / source).resolve() == NGINX_CONF
    assert read_only
    assert "server" in healthy_dependencies(proxy)
    assert healthz_ports(healthcheck_text(proxy)) == [80]


# --- deploy/nginx.conf --------------------------------------------------------------------


class Directive(NamedTuple):
    name: str
    args: tuple[str, ...]
    #: The directives of its block; None for a simple ``name args;`` directive.
    block: list[Directive] | None


NGINX_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<comment>\#[^\n]*)|"(?P<double>(?:\\.|[^"\\])*)"|"""
    r"""'(?P<single>(?:\\.|[^'\\])*)'|(?P<punct>[{};])|(?P<word>[^\s{};"'#]+)"""
)


def parse_nginx(text: str) -> list[Directive]:
    """The directive tree of an nginx config; fails on unbalanced braces or a missing ``;``."""
    root: list[Directive] = []
    stack = [root]
    pending: list[str] = []
    position = 0
    while position < len(text):
        match = NGINX_TOKEN.match(text, position)
        assert match, f"nginx.conf: cannot read {text[position : position + 40]!r}"
        position = match.end()
        kind = match.lastgroup
        if kind in ("space", "comment"):
            continue
        token = match.group(kind)
        if kind != "punct":
            pending.append(token)
        elif token == ";":
            assert pending, "nginx.conf: empty statement"
            stack[-1].append(Directive(pending[0], tuple(pending[1:]), None))
            pending = []
        elif token == "{":
            assert pending, "nginx.conf: block without a name"
            block: list[Directive] = []
            stack[-1].append(Directive(pending[0], tuple(pending[1:]), block))
            stack.append(block)
            pending = []
        else:
            assert not pending, f"nginx.conf: missing ';' after {' '.join(pending)}"
            assert len(stack) > 1, "nginx.conf: unbalanced '}'"
            stack.pop()
    assert not pending and len(stack) == 1, "nginx.conf: unterminated statement or block"
    return root


def nginx() -> list[Directive]:
    return parse_nginx(NGINX_CONF.read_text(encoding="utf-8"))


def walk(block: list[Directive], name: str) -> Iterator[Directive]:
    for directive in block:
        if directive.name == name:
            yield directive
        if directive.block is not None:
            yield from walk(directive.block, name)


def one(block: list[Directive], name: str) -> Directive:
    found = [d for d in block if d.name == name]
    assert len(found) == 1, f"expected one {name}, got {found}"
    return found[0]


def http_and_server() -> tuple[Directive, Directive]:
    http = one(nginx(), "http")
    assert http.block is not None
    server = one(http.block, "server")
    return http, server


def location(path: str) -> Directive:
    _, server = http_and_server()
    assert server.block is not None
    for directive in walk(server.block, "location"):
        if directive.args[-1] == path and directive.args[0] in ("=", "^~", path):
            return directive
    raise AssertionError(f"nginx.conf has no location for {path}")


def effective(name: str, place: Directive) -> list[Directive]:
    """``name`` directives in force in a location: nginx inherits them from the enclosing
    server, then http, only when the inner level sets none (true of proxy_set_header)."""
    http, server = http_and_server()
    for level in (place, server, http):
        assert level.block is not None
        found = [d for d in level.block if d.name == name]
        if found:
            return found
    return []


def headers(place: Directive) -> dict[str, str]:
    return {d.args[0].lower(): " ".join(d.args[1:]) for d in effective("proxy_set_header", place)}


def seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    match = re.fullmatch(r"(\d+)(ms|s|m|h|d)?", duration)
    assert match, duration
    return int(match.group(1)) * units[match.group(2) or "s"]


def size_bytes(size: str) -> int:
    match = re.fullmatch(r"(\d+)([kKmM])?", size)
    assert match, size
    return (
        int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[(match.group(2) or "").lower()]
    )


def nginx_listen_ports() -> list[int]:
    _, server = http_and_server()
    assert server.block is not None
    return [int(d.args[0].rsplit(":", 1)[-1]) for d in walk(server.block, "listen")]


def proxy_targets() -> list[str]:
    """The ``host:port`` every proxy_pass reaches: through a ``set`` variable (resolved
    per request) or an upstream block's ``server`` lines."""
    http, server = http_and_server()
    assert http.block is not None and server.block is not None
    variables = {d.args[0]: d.args[1] for d in walk(server.block, "set")}
    upstreams = {d.args[0]: d for d in walk(http.block, "upstream")}
    targets = []
    passes = list(walk(server.block, "proxy_pass"))
    assert passes, "nginx.conf proxies nothing"
    for proxy_pass in passes:
        url = proxy_pass.args[0]
        assert url.startswith("http://"), url
        host = re.sub(r"\$\w+", lambda m: variables.get(m.group(0), m.group(0)), url[7:])
        host = host.split("/")[0]
        if host in upstreams:
            upstream = upstreams[host]
            assert upstream.block is not None
            targets += [d.args[0] for d in upstream.block if d.name == "server"]
        else:
            targets.append(host)
    return targets


def test_nginx_conf_is_a_whole_config() -> None:
    top = {d.name for d in nginx()}
    assert {"events", "http"} <= top
    assert nginx_listen_ports(), "the server block listens on a port"


def test_nginx_proxies_every_request_to_the_server_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    targets = proxy_targets()
    assert set(targets) == {f"server:{image_port(monkeypatch)}"}, targets
    # `server` has one address per replica and changes with them: nginx must resolve it at
    # run time through Docker's DNS.
    http, _ = http_and_server()
    assert http.block is not None
    resolvers = [d.args for d in walk(http.block, "resolver")]
    assert resolvers and resolvers[0][0] == "127.0.0.11", resolvers


def test_nginx_upgrades_the_retired_v1_ws_so_its_clients_read_why() -> None:
    retired = location("/v1/ws")
    (version,) = effective("proxy_http_version", retired)
    assert version.args == ("1.1",)
    sent = headers(retired)
    assert sent.get("upgrade") == "$http_upgrade"
    assert sent.get("connection") == headers(location("/v2/ws")).get("connection")


def test_nginx_passes_websocket_upgrades_on_v2_ws() -> None:
    ws = location("/v2/ws")
    (version,) = effective("proxy_http_version", ws)
    assert version.args == ("1.1",)
    sent = headers(ws)
    assert sent.get("upgrade") == "$http_upgrade"
    connection = sent.get("connection")
    if connection == "$connection_upgrade":
        http, _ = http_and_server()
        assert http.block is not None
        maps = [d for d in walk(http.block, "map") if d.args == ("$http_upgrade", connection)]
        assert len(maps) == 1, "map $http_upgrade $connection_upgrade { ... }"
        assert maps[0].block is not None
        values = {d.name: d.args for d in maps[0].block}
        assert values.get("default") == ("upgrade",)
    else:
        assert connection == "upgrade", sent
    (read_timeout,) = effective("proxy_read_timeout", ws)
    assert seconds(read_timeout.args[0]) >= 600, "WebSocket connections are long-lived"


def test_nginx_forwards_client_headers_everywhere() -> None:
    for path in ("/v2/ws", "/v1/ws", "/healthz", "/"):
        sent = headers(location(path))
        assert sent.get("host") == "$host", (path, sent)
        assert sent.get("x-forwarded-for") == "$proxy_add_x_forwarded_for", (path, sent)
        assert sent.get("x-forwarded-proto") == "$scheme", (path, sent)


def test_nginx_proxies_healthz() -> None:
    healthz = location("/healthz")
    assert healthz.block is not None
    assert any(d.name == "proxy_pass" for d in healthz.block)


def test_nginx_body_limit_leaves_room_for_the_servers_own() -> None:
    _, server = http_and_server()
    (limit,) = effective("client_max_body_size", server)
    assert MAX_MESSAGE_BYTES < size_bytes(limit.args[0]) <= 64 * 1024


def test_nginx_does_not_serve_metrics_to_the_public() -> None:
    place = location("/metrics")
    assert place.block is not None
    assert not any(d.name == "proxy_pass" for d in place.block)
    assert [d.args for d in place.block if d.name == "return"] == [("404",)]


# --- monitoring: Prometheus and Grafana -----------------------------------------------------


def test_monitoring_services_are_optional_behind_a_profile() -> None:
    for name in ("prometheus", "grafana"):
        spec = service(name)
        assert spec["profiles"] == ["monitoring"], name
        for host, _ in published_ports(spec):
            assert host in (9090, 3000), (name, host)
        for port in spec.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes to this host only"
    # The stack's own services start without the profile.
    for name in ("redis", "server", "proxy"):
        assert "profiles" not in service(name), name


def mounted(spec: dict[str, Any], target: str) -> Path:
    mounts = [m for m in volume_mounts(spec) if m[1] == target]
    assert len(mounts) == 1, (target, volume_mounts(spec))
    source, _, read_only = mounts[0]
    assert read_only, f"{target} is mounted read-only"
    path = (ROOT / source).resolve()
    assert path.exists(), path
    return path


def metric_sample_names() -> set[str]:
    """The sample names /metrics can show: every collector of server/metrics.py."""
    names = set()
    for value in vars(metrics).values():
        describe = getattr(value, "describe", None)
        if not callable(describe) or not getattr(value, "_name", "").startswith("solitaire_"):
            continue
        for family in describe():
            suffixes = {
                "counter": ["_total"],
                "histogram": ["_bucket", "_sum", "_count"],
                "gauge": [""],
            }[family.type]
            names.update(family.name + suffix for suffix in suffixes)
    return names


def test_prometheus_scrapes_every_server_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = service("prometheus")
    assert mounted(spec, "/etc/prometheus/prometheus.yml") == PROMETHEUS_CONF
    assert "--config.file=/etc/prometheus/prometheus.yml" in words(spec["command"])
    assert "server" in healthy_dependencies(spec)
    config = yaml.safe_load(PROMETHEUS_CONF.read_text(encoding="utf-8"))
    (job,) = config["scrape_configs"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    (discovery,) = job["dns_sd_configs"]
    assert discovery["names"] == ["server"] and discovery["type"] == "A"
    # The replicas serve /metrics on a port of their own, not on the API's.
    metrics_port = int(service("server")["environment"]["METRICS_PORT"])
    assert discovery["port"] == metrics_port != image_port(monkeypatch)


def test_grafana_provisions_the_datasource_and_the_dashboard() -> None:
    spec = service("grafana")
    assert "prometheus" in healthy_dependencies(spec)
    provisioning = mounted(spec, "/etc/grafana/provisioning")
    assert provisioning == (GRAFANA / "provisioning").resolve()
    dashboards_dir = mounted(spec, "/var/lib/grafana/dashboards")
    assert DASHBOARD.parent.resolve() == dashboards_dir
    (provider,) = yaml.safe_load(
        (provisioning / "dashboards" / "solitaire.yml").read_text(encoding="utf-8")
    )["providers"]
    assert provider["options"]["path"] == "/var/lib/grafana/dashboards"
    (source,) = yaml.safe_load(
        (provisioning / "datasources" / "prometheus.yml").read_text(encoding="utf-8")
    )["datasources"]
    assert source["type"] == "prometheus"
    assert urlsplit(source["url"]).hostname == "prometheus"
    assert urlsplit(source["url"]).port == 9090
    assert {9090} == {target for _, target in published_ports(service("prometheus"))}


def test_the_dashboard_charts_only_metrics_the_server_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    known = metric_sample_names()
    assert "solitaire_moves_total" in known and "solitaire_move_seconds_bucket" in known
    source = yaml.safe_load(
        (GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text(encoding="utf-8")
    )["datasources"][0]
    charted = set()
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == source["uid"], panel["title"]
            used = set(re.findall(r"solitaire_[a-z_]+", target["expr"]))
            assert used and used <= known, (panel["title"], used - known)
            charted |= used
    # Everything the issue asks to watch has a panel.
    families = {
        name.rsplit("_", 1)[0] if name.endswith(("_bucket", "_total")) else name for name in charted
    }
    for wanted in (
        "solitaire_moves",
        "solitaire_move_seconds",
        "solitaire_websocket_connections",
        "solitaire_patches_fanned_out",
        "solitaire_redis_command_seconds",
        "solitaire_redis_errors",
        "solitaire_rate_limited",
        "solitaire_audit_queue",
    ):
        assert wanted in families, wanted
