"""Benchmarks (run from the repository root, e.g. ``.venv/bin/python -m benchmarks.engine``)."""
