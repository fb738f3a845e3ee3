"""Python SDK of the solitaire game server: REST (:class:`Client`) and a self-healing
WebSocket (:class:`Connection`) that keeps a :class:`GameCopy` of every watched game.

See ``clients/python/README.md``.
"""

from clients.python.errors import ApiError, ConnectionLost, MoveRejected, OutOfSync
from clients.python.hashes import genesis, next_link, state_hash
from clients.python.operator import OperatorClient
from clients.python.ops import apply_ops, expand_ops, move_text, pile_at, score_of
from clients.python.rest import Client
from clients.python.state import GameCopy, Gap
from clients.python.ws import Connection, Update

__all__ = [
    "ApiError",
    "Client",
    "Connection",
    "ConnectionLost",
    "GameCopy",
    "Gap",
    "MoveRejected",
    "OperatorClient",
    "OutOfSync",
    "Update",
    "apply_ops",
    "expand_ops",
    "genesis",
    "move_text",
    "next_link",
    "pile_at",
    "score_of",
    "state_hash",
]
