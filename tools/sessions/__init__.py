"""Records ``protocol/sessions/``: ``python -m tools.sessions`` (see that folder's README)."""
