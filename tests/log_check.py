"""Every server a test starts has its log read when the test ends (a pytest plugin,
registered by ``tests/conftest.py``).

A test fails at teardown when a server it ran logged a traceback, "Exception in ASGI
application", or any error-level line that the test did not say it expects.  In-process
servers (uvicorn as an asyncio task, the ASGI app under httpx) log through Python's
``logging``: a handler on the root logger sees their records.  Child processes
(``python -m server``) print their log: their helpers hand it over with :func:`watch`.

A test that provokes errors names them, as regular expressions searched in each
offending line::

    @pytest.mark.log_errors(r"daily selection: the store failed")
    async def test_...

Each pattern must match at least one line, so an allowance cannot outlive its reason.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

#: Text that marks a line as a problem whatever its level.
PROBLEM_TEXT = ("Traceback (most recent call last)", "Exception in ASGI application")
#: A problem line of the text log format (``2026-12-03 12:00:00,123 LEVEL logger: ...``).
TEXT_PROBLEM = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (ERROR|CRITICAL) ")


@dataclass
class Source:
    """A log read as text: ``read()`` returns everything so far; only what came after
    ``start`` (the length when the test began) is the test's."""

    read: Callable[[], str]
    start: int = 0

    def new_text(self) -> str:
        return self.read()[self.start :]


@dataclass
class LogCheck:
    records: list[logging.LogRecord] = field(default_factory=list)
    #: Sources that live as long as the test.
    sources: list[Source] = field(default_factory=list)


#: Sources that outlive a test (a module's or the session's server): each test reads only
#: what its own time added.
LASTING: list[Source] = []
_current: LogCheck | None = None


def watch(read: Callable[[], str], lasting: bool = False) -> None:
    """Have the log that ``read()`` returns checked at the end of the running test (and
    of every later test too, when ``lasting``: for servers of a module or a session)."""
    source = Source(read)
    if lasting:
        source.start = len(read())
        LASTING.append(source)
    elif _current is not None:
        _current.sources.append(source)


def unwatch(read: Callable[[], str]) -> None:
    LASTING[:] = [source for source in LASTING if source.read is not read]


class _Handler(logging.Handler):
    def __init__(self, check: LogCheck) -> None:
        super().__init__(logging.WARNING)
        self.check = check

    def emit(self, record: logging.LogRecord) -> None:
        self.check.records.append(record)


def record_problem(record: logging.LogRecord) -> str | None:
    """The record's text if it is a problem (error level, an exception, a traceback)."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed record is a problem of its own
        message = f"{record.msg!r} % {record.args!r}"
    text = f"{record.levelname} {record.name}: {message}"
    if record.exc_info and record.exc_info[0] is not None:
        text += f" [{record.exc_info[0].__name__}: {record.exc_info[1]}]"
    if record.levelno >= logging.ERROR or record.exc_info or record.exc_text:
        return text
    if any(marker in message for marker in PROBLEM_TEXT):
        return text
    return None


def line_problem(line: str) -> bool:
    """Whether a printed log line (JSON or text format) is a problem."""
    stripped = line.strip()
    if not stripped:
        return False
    if any(marker in stripped for marker in PROBLEM_TEXT):
        return True
    if stripped.startswith("{"):
        try:
            entry = json.loads(stripped)
        except ValueError:
            entry = None
        if isinstance(entry, dict):
            level = str(entry.get("level", "")).upper()
            return level in ("ERROR", "CRITICAL") or "exception" in entry
    return bool(TEXT_PROBLEM.match(stripped))


def problems(check: LogCheck) -> list[str]:
    found = [text for record in check.records if (text := record_problem(record))]
    for source in (*check.sources, *LASTING):
        found += [line for line in source.new_text().splitlines() if line_problem(line)]
    return found


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "log_errors(*patterns): error lines the test provokes on purpose (regular "
        "expressions, each of which must match some line)",
    )


@pytest.fixture(autouse=True)
def server_logs_are_clean(request: pytest.FixtureRequest) -> Iterator[LogCheck]:
    """Fails the test when a server it ran logged an unexpected error (see the module)."""
    global _current
    check = LogCheck()
    for source in LASTING:
        source.start = len(source.read())
    handler = _Handler(check)
    root = logging.getLogger()
    root.addHandler(handler)
    _current = check
    try:
        yield check
    finally:
        _current = None
        root.removeHandler(handler)
    allowed = [
        re.compile(pattern)
        for marker in request.node.iter_markers("log_errors")
        for pattern in marker.args
    ]
    found = problems(check)
    unexpected = [line for line in found if not any(p.search(line) for p in allowed)]
    unused = [p.pattern for p in allowed if not any(p.search(line) for line in found)]
    assert not unexpected, "the server logged unexpected errors:\n" + "\n".join(unexpected)
    assert not unused, f"log_errors patterns that matched nothing: {unused}"
