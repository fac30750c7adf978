"""Where a benchmark's numbers come from: the code, the data, the software, the machine, the command, the date, the seed.

:func:`run_benchmark` writes :func:`provenance` as ``provenance.json`` in every
results folder and states the command and seed under ``table1.md`` (or
``table3.md``), so a table can be traced to the run that produced it — the
git commit and whether the tree had local changes (:func:`linsep._version.git_state`),
the SHA-256 of each bundled data file it read (:func:`data_checksums`) — and
timings compared only between like machines.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import sys
from datetime import datetime, timezone
from importlib import metadata, resources

from linsep._version import git_state, version

PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "llvmlite", "joblib", "threadpoolctl")
"""The distributions whose versions are recorded beside linsep's."""

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER",
                    "NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")
"""Environment variables that change thread counts or compiled code; those set are recorded."""


def _version(distribution):
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def cpu_model():
    """The processor's model name (``/proc/cpuinfo`` on Linux, else :func:`platform.processor`).

    Returns
    -------
    str
        E.g. ``"AMD EPYC 7B13"``; the machine type (``"x86_64"``) when no model
        name can be read.
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _blas():
    """threadpoolctl's view of the loaded BLAS / OpenMP libraries: API, implementation, version, threads."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - a dependency of scikit-learn
        return []
    keys = ("user_api", "internal_api", "version", "num_threads", "threading_layer", "architecture", "prefix")
    return [{k: lib.get(k) for k in keys if k in lib} for lib in threadpool_info()]


def _numba():
    try:
        import numba
    except ImportError:  # pragma: no cover - a dependency
        return {}
    config = numba.config
    return {"num_threads": int(config.NUMBA_NUM_THREADS), "threading_layer": str(config.THREADING_LAYER),
            "cache_dir": str(config.CACHE_DIR) or None, "disable_jit": bool(config.DISABLE_JIT)}


def environment():
    """The software and the machine of this process, as a JSON-ready dict.

    Returns
    -------
    dict
        ``python`` (version, implementation, executable), ``packages``
        (linsep and :data:`PACKAGES`: versions, None when not installed),
        ``blas`` (threadpoolctl's list of loaded BLAS and OpenMP libraries
        with their thread counts), ``numba`` (thread count, threading layer,
        cache folder), ``thread_variables`` (those of :data:`THREAD_VARIABLES`
        that are set), ``cpu`` (model, logical CPUs, CPUs this process may
        use), ``load_average`` (1, 5 and 15 minutes, when the record is made;
        None where the system has none) and ``platform``.

    See Also
    --------
    provenance : This, with the command, date and seed of a run.

    Examples
    --------
    >>> from linsep.experiments.provenance import environment
    >>> env = environment()
    >>> sorted(env)
    ['blas', 'cpu', 'load_average', 'numba', 'packages', 'platform', 'python', 'thread_variables']
    >>> env["packages"]["linsep"] == __import__("linsep").__version__
    True
    """
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "packages": {"linsep": version(), **{name: _version(name) for name in PACKAGES}},
        "blas": _blas(),
        "numba": _numba(),
        "thread_variables": {name: os.environ[name] for name in THREAD_VARIABLES if name in os.environ},
        "cpu": {"model": cpu_model(), "logical_cpus": os.cpu_count(), "usable_cpus": usable},
        # other processes' load shares the cores: timings of a loaded machine are not those of an idle one
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": {"system": platform.system(), "release": platform.release(), "machine": platform.machine(),
                     "platform": platform.platform()},
    }


def data_checksums(datasets):
    """SHA-256 of the bundled file of each data set, as read from the installed package.

    Parameters
    ----------
    datasets : iterable of str
        Names of :data:`linsep.datasets.BENCHMARKS`.

    Returns
    -------
    dict
        ``{name: {"file": "<name>.csv.gz", "sha256": <64 hex>}}`` in the order given.

    See Also
    --------
    provenance : Records them as ``data_sha256`` in ``provenance.json``.

    Examples
    --------
    >>> from linsep.experiments.provenance import data_checksums
    >>> record = data_checksums(["heart"])["heart"]
    >>> record["file"], len(record["sha256"])
    ('heart.csv.gz', 64)
    """
    folder = resources.files("linsep.datasets") / "data"
    out = {}
    for name in datasets:
        path = folder / f"{name}.csv.gz"
        out[name] = {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return out


def python_call(function, **arguments):
    """The Python call ``function(name=value, …)`` as text: the command of a run started from Python.

    Parameters
    ----------
    function : str
        The qualified name of the function called.
    **arguments
        Its keyword arguments, written with :func:`repr`.

    Returns
    -------
    str
        E.g. ``"linsep.experiments.run_benchmark(seed=0)"``.
    """
    return f"{function}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


def command_line(argv, prog="linsep"):
    """``prog`` and ``argv`` quoted as a shell would need them.

    Parameters
    ----------
    argv : list of str
        The arguments after the program's name.
    prog : str, default="linsep"
        The program's name.

    Returns
    -------
    str
        E.g. ``"linsep bench --quick --out 'my results'"``.
    """
    return shlex.join([prog, *map(str, argv)])


def provenance(command, seed, **details):
    """What ``provenance.json`` holds: the command, the date (ISO 8601, UTC), the seed, the git state and :func:`environment`.

    Parameters
    ----------
    command : str
        The command line (``linsep bench …``) or Python call that started the run.
    seed : int
        The seed of the splits.
    **details
        Other JSON-ready facts of the run (protocol, data sets, methods, split
        counts, workers, code digest, data checksums, runs computed and reused, …).

    Returns
    -------
    dict
        ``command``, ``argv`` (this process's ``sys.argv``), ``date_utc``,
        ``seed``, ``linsep`` (the version, ``+g<commit>[.dirty]`` in a checkout),
        ``git`` (``commit``, ``short``, ``dirty``: whether tracked files differed
        from the commit; None when linsep is not run from a git checkout),
        the ``details`` and ``environment``.

    See Also
    --------
    environment : The software and machine part.

    Examples
    --------
    >>> from linsep.experiments.provenance import provenance
    >>> record = provenance("linsep bench --quick", seed=0, protocol="validation")
    >>> record["command"], record["seed"], record["protocol"], record["date_utc"].endswith("+00:00")
    ('linsep bench --quick', 0, 'validation', True)
    """
    return {"command": command, "argv": list(sys.argv), "seed": int(seed),
            "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "linsep": version(), "git": git_state(), **details, "environment": environment()}
