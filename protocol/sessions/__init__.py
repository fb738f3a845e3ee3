"""Recorded WebSocket sessions, one per game, and the recorder that makes them.

See ``protocol/sessions/README.md``; ``python -m protocol.sessions`` regenerates them.
"""
