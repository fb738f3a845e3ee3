"""Accounts that last (``protocol/ACCOUNTS.md``): token renewal and revocation, transfer
codes, export and deletion of a player's data.

* :mod:`server.accounts.revocation`: "sign out everywhere", checked on every instance
  within :data:`~server.accounts.revocation.REFUSAL_BOUND` seconds, sockets included;
* :mod:`server.accounts.transfer`: one-time codes that move a player to a new device;
* :mod:`server.accounts.erasure`: a player's data exported, or deleted;
* :mod:`server.accounts.identity`, :mod:`~server.accounts.binding`,
  :mod:`~server.accounts.signin`: sign-in with the operator's OpenID Connect provider;
* :mod:`server.accounts.tokens`: renewal, and signing out everywhere;
* :mod:`server.accounts.routes`: the REST routes under ``/v1/players``.
"""
