"""``python -m server.audit`` (see :mod:`server.audit.cli`)."""

from server.audit.cli import main

raise SystemExit(main())
