"""``python -m linsep.playground``: the same as ``linsep playground``."""

import sys

from .server import main

sys.exit(main())
