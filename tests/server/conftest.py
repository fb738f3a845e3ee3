"""Registers the fixtures of ``server_support`` for the tests of this folder."""

from server_support import api, http, redis_client, server, spawn_server, ws_connect

__all__ = ["api", "http", "redis_client", "server", "spawn_server", "ws_connect"]
