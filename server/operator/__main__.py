"""``python -m server.operator`` (:mod:`server.operator.cli`)."""

import sys

from server.operator.cli import main

sys.exit(main())
