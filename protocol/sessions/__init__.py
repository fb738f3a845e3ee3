"""Recorded WebSocket sessions, one per game (the recorder is ``tools.sessions``).

See ``protocol/sessions/README.md``; ``python -m tools.sessions`` regenerates them.
"""
