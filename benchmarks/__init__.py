"""Benchmarks (run from the repository root, e.g. ``.venv/bin/python -m benchmarks.engine``)."""

#: ``python -m server`` flags keeping its background daily selection to about a second of
#: CPU: a benchmark's measured windows would otherwise share the machine's two cores with
#: minutes of solving (``server/daily/selection.py``).
QUIET_DAILIES = [
    "--daily-candidates",
    "1",
    "--daily-candidate-nodes",
    "1000",
    "--daily-selection-seconds",
    "1",
]
