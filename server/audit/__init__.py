"""Audits of games: replay an export and check everything it claims (``protocol/AUDIT.md``).

* :func:`audit` (pure): a replay export, and optionally its leaderboard entry,
  to a :class:`Verdict`: its integrity (:class:`Finding` s) and its fair-play
  :class:`Signal` s (:data:`EXPORT_SIGNALS`, one function per signal;
  :data:`WITH_CLAIRVOYANCE` adds the costly ``clairvoyance`` signal);
* :func:`audit_stored` / :func:`audit_leaderboard`: the server's audits of a
  stored game by id, and of every entry of a daily leaderboard;
* ``python -m server.audit``: the command line (:mod:`server.audit.cli`).
"""

from server.audit.clairvoyance import WITH_CLAIRVOYANCE, clairvoyance
from server.audit.core import (
    CHECKS,
    EXPORT_SIGNALS,
    FORMAT,
    MAX_FINDINGS_PER_CHECK,
    REGULARITY_MAX_CV,
    REGULARITY_WINDOW,
    SIGNALS,
    SPEED_INTERVAL_MS,
    SPEED_RUN,
    Finding,
    Signal,
    SignalCheck,
    Verdict,
    audit,
    inhuman_regularity,
    inhuman_speed,
)
from server.audit.stored import BoardAudit, audit_leaderboard, audit_stored

#: The largest body ``POST /v1/audit`` reads: an export of some 15,000 moves.
AUDIT_BODY_BYTES = 4 * 1024 * 1024

__all__ = [
    "AUDIT_BODY_BYTES",
    "CHECKS",
    "EXPORT_SIGNALS",
    "FORMAT",
    "MAX_FINDINGS_PER_CHECK",
    "REGULARITY_MAX_CV",
    "REGULARITY_WINDOW",
    "SPEED_INTERVAL_MS",
    "SIGNALS",
    "SPEED_RUN",
    "WITH_CLAIRVOYANCE",
    "BoardAudit",
    "Finding",
    "Signal",
    "SignalCheck",
    "Verdict",
    "audit",
    "audit_leaderboard",
    "audit_stored",
    "clairvoyance",
    "inhuman_regularity",
    "inhuman_speed",
]
