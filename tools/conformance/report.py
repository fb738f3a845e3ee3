"""The reports: per run a JSON file and a readable HTML page, per client (agent) a summary
(``index.json``, ``index.html``), all under the report directory::

    <report dir>/<agent>/index.html, index.json
    <report dir>/<agent>/<case id>.json, <case id>.html
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
.pass { color: #175e1d; font-weight: bold; } .fail { color: #a4161a; font-weight: bold; }
.dropped { text-decoration: line-through; color: #888; } .injected { background: #fff3c4; }
code, pre { font: 12px/1.3 ui-monospace, monospace; white-space: pre-wrap; margin: 0; }
"""


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "client"


def run_path(report_dir: Path, verdict: dict[str, Any], suffix: str) -> Path:
    return report_dir / _safe(verdict["agent"]) / f"{_safe(verdict['case'])}.{suffix}"


def write_run(report_dir: Path, verdict: dict[str, Any]) -> None:
    path = run_path(report_dir, verdict, "json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(verdict, indent=1, default=str) + "\n")
    run_path(report_dir, verdict, "html").write_text(run_page(verdict))


def summary(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cases": len(verdicts),
        "passed": sum(1 for v in verdicts if v["passed"]),
        "failed": [v["case"] for v in verdicts if not v["passed"]],
        "results": [
            {
                "case": v["case"],
                "passed": v["passed"],
                "failures": v["failures"],
                "seconds": v["seconds"],
            }
            for v in verdicts
        ],
    }


def write_index(report_dir: Path, agent: str, verdicts: list[dict[str, Any]]) -> None:
    folder = report_dir / _safe(agent)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.json").write_text(
        json.dumps({"agent": agent, **summary(verdicts)}, indent=1) + "\n"
    )
    (folder / "index.html").write_text(index_page({agent: verdicts}, link_prefix=""))


def _verdict_cell(passed: bool) -> str:
    return '<td class="pass">pass</td>' if passed else '<td class="fail">FAIL</td>'


def index_page(agents: dict[str, list[dict[str, Any]]], link_prefix: str | None = None) -> str:
    """The summary of every agent's runs (one table per agent)."""
    parts = [f"<!doctype html><meta charset=utf-8><title>Conformance</title><style>{STYLE}</style>"]
    parts.append("<h1>Client conformance</h1>")
    if not agents:
        parts.append("<p>No run finished yet.</p>")
    for agent, verdicts in agents.items():
        passed = sum(1 for v in verdicts if v["passed"])
        parts.append(f"<h2>{html.escape(agent)}: {passed} of {len(verdicts)} cases passed</h2>")
        parts.append("<table><tr><th>case</th><th>verdict</th><th>what</th><th>failures</th></tr>")
        prefix = f"{_safe(agent)}/" if link_prefix is None else link_prefix
        for v in verdicts:
            link = f"{prefix}{_safe(v['case'])}.html"
            failures = "<br>".join(html.escape(f) for f in v["failures"])
            parts.append(
                f'<tr><td><a href="{html.escape(link)}">{html.escape(v["case"])}</a></td>'
                f"{_verdict_cell(v['passed'])}<td>{html.escape(v['title'])}</td>"
                f"<td>{failures}</td></tr>"
            )
        parts.append("</table>")
    return "\n".join(parts)


def _json(value: Any) -> str:
    return html.escape(json.dumps(value, separators=(", ", ": "), default=str))


def run_page(v: dict[str, Any]) -> str:
    """One run, readable: the case, the verdict, each step, the states, every frame."""
    title = f"{v['case']} — {v['agent']}"
    parts = [
        f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style>",
        f"<p><a href='index.html'>all cases of {html.escape(v['agent'])}</a></p>",
        f"<h1>{html.escape(v['case'])}: {html.escape(v['title'])}</h1>",
        f"<p>{html.escape(v['description'])}</p>",
        "<p>Verdict: "
        + ('<span class="pass">pass</span>' if v["passed"] else '<span class="fail">FAIL</span>')
        + f" ({v['seconds']} s; the server's game at version {v['server_versions']})</p>",
    ]
    if v["failures"]:
        parts.append(
            "<ul>" + "".join(f"<li>{html.escape(f)}</li>" for f in v["failures"]) + "</ul>"
        )
    parts.append(
        "<h2>Steps</h2><table><tr><th>#</th><th>asked</th><th>wanted</th><th>result</th></tr>"
    )
    for index, step in enumerate(v["steps"]):
        parts.append(
            f"<tr><td>{index}</td><td><code>{_json(step['action'])}</code></td>"
            f"<td>{html.escape(step['wanted'])}</td><td><code>{_json(step['result'])}</code></td></tr>"
        )
    parts.append("</table><h2>States the client reported</h2>")
    parts.append("<table><tr><th>after step</th><th>version</th><th>status</th><th>hash</th>")
    parts.append("<th>legal moves</th></tr>")
    for state in v["states"]:
        legal = state.get("legal_moves")
        parts.append(
            f"<tr><td>{state.get('step')}</td><td>{state.get('version')}</td>"
            f"<td>{html.escape(str(state.get('status')))}</td>"
            f"<td><code>{html.escape(str(state.get('hash'))[:16])}…</code></td>"
            f"<td>{'unknown' if legal is None else len(legal)}</td></tr>"
        )
    parts.append("</table><h2>Frames</h2>")
    parts.append("<p>send: client → server; recv: server → client. Struck out: dropped by the ")
    parts.append("kit; highlighted: sent by the kit in the server's place.</p>")
    parts.append("<table><tr><th>ms</th><th>socket</th><th>dir</th><th>message</th></tr>")
    for entry in v["frames"]:
        css = "dropped" if entry.get("dropped") else "injected" if entry.get("injected") else ""
        parts.append(
            f'<tr class="{css}"><td>{entry["t"]}</td><td>{entry["link"]}</td>'
            f"<td>{entry['dir']}</td><td><code>{_json(entry['message'])}</code></td></tr>"
        )
    parts.append("</table>")
    return "\n".join(parts)
