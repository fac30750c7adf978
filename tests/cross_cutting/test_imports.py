"""What ``import linsep`` loads: numpy, scipy, scikit-learn and numba, never the optional dependencies.

One fresh interpreter answers for all of them (starting one costs seconds:
scikit-learn's import), instead of one interpreter per optional package.
"""

import json
import subprocess
import sys

CODE = ("import json, sys, linsep, linsep.inspection; linsep.HoKashyapClassifier(); "
        "print(json.dumps(sorted(sys.modules)))")


def test_import_linsep_imports_neither_matplotlib_nor_dask():
    """Moved here from test_plotting.py (matplotlib) and test_dask.py (dask, distributed).

    The interpreter runs with ``-OO`` (docstrings stripped): ``import linsep`` must not depend on them.
    """
    out = subprocess.run([sys.executable, "-OO", "-c", CODE], capture_output=True, text=True, check=True)
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "linsep" in modules and "linsep.inspection" in modules
    assert "matplotlib" not in modules  # imported only when drawing
    assert "dask" not in modules and "distributed" not in modules  # imported only when a dask collection arrives
