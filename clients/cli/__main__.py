"""``python -m clients.cli``: see :mod:`clients.cli`."""

import sys

from clients.cli import main

sys.exit(main())
