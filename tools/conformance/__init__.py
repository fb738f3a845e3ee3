"""The conformance kit for client implementations: ``python -m tools.conformance serve``
(``README.md`` here)."""
