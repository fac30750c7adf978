"""``python -m linsep``: the ``linsep`` command line (:mod:`linsep.cli`)."""

from linsep.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
