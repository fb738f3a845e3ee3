"""``python -m server.solver stats GAME …``: see :mod:`server.solver.cli`."""

import sys

from server.solver.cli import main

sys.exit(main())
