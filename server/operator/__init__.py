"""Operators: the people who run a deployment act on what the audit finds
(``protocol/OPERATOR.md``).

* :mod:`server.operator.credentials`: named operator tokens, under their own key;
* :mod:`server.operator.trail`: the append-only action trail (a Redis stream);
* :mod:`server.operator.actions`: void / reinstate attempts, suspend / unsuspend,
  reset a name, revoke a player's tokens;
* :mod:`server.operator.suspension`: suspensions from ranked play;
* :mod:`server.operator.review`: the review queue the post-close audit fills
  (:mod:`server.operator.postclose`);
* :mod:`server.operator.routes`: ``/v1/operator/...``;
* ``python -m server.operator``: issue and revoke tokens, export the trail
  (:mod:`server.operator.cli`).
"""
