"""Project tools that need both the server and the clients (``protocol/`` imports neither)."""
