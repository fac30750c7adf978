"""``run_benchmark``: every (data set, method, split) run, in parallel, cached, then the report.

Each run's result is written as one JSON file under
``OUT/cache/<protocol>-seed<seed>/<data set>/<method>/<split>.json`` as soon as
it finishes (atomically), so an interrupted run continues where it stopped;
a cached file is reused only if it was produced by the same configuration
(protocol, seed, linsep version, cache format, and the same linsep source
code — a digest of the package's ``.py`` files).  Results do not depend on
``jobs``: every random choice is seeded by ``(seed, split)``.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from linsep._version import BASE_VERSION, git_state
from linsep.datasets import BENCHMARKS
from linsep.experiments.methods import default_methods, get_method
from linsep.experiments.protocol import PROTOCOLS, run_one
from linsep.experiments.provenance import cpu_model, data_checksums, provenance, python_call
from linsep.experiments.report import (TABLE_OF_PROTOCOL, error_markdown, error_table, figure_grid, figure_iterations,
                     time_markdown, time_table, write_csv, write_raw)
from linsep.experiments.stats import TESTS

CACHE_FORMAT = 2  # 2: timings without compilation (warm_up_s, n_retimed, n_compiles)
QUICK_SPLITS = 10
# Rough cost order, so the slow runs start first and the workers finish together.
DASK_CONNECT_TIMEOUT = "10s"
"""How long ``--scheduler`` waits for the Dask scheduler to answer, at most: a shorter
``distributed.comm.timeouts.connect`` in Dask's configuration (``dask.config.set``) is waited instead."""
_COST = {"svm": 0, "linear_svc": 1, "hkesa_cv": 2, "mhka": 2, "lsvm": 3, "hkesa": 4, "mhks": 5, "hkes_cv": 5,
         "hkes_cv_c": 5}


@dataclass
class BenchmarkReport:
    """What :func:`run_benchmark` produced.

    Attributes
    ----------
    out : Path
        The output folder.
    protocol : str
        ``"validation"`` or ``"test"``.
    results : list of dict
        One record per run (:func:`run_one`), cached or computed.
    error_rows, time_rows : list of dict
        The rows of the error table (Table 1 or 3) and of the time table (Table 2).
    markdown : str
        The tables as printed.
    files : list of Path
        The files written under ``out``.
    failures : list
        Runs that raised, with their error.
    n_computed, n_cached : int
        Runs computed now, and read from the cache.

    See Also
    --------
    run_benchmark : Returns it.

    Examples
    --------
    >>> import tempfile
    >>> from linsep.experiments import run_benchmark
    >>> report = run_benchmark(datasets=["thyroid"], methods=["hk"], n_splits=2,
    ...                        out=tempfile.mkdtemp(), progress=False)
    >>> report.protocol, [path.name for path in report.files][:2]
    ('validation', ['table1.md', 'table1.csv'])
    """

    out: Path
    protocol: str
    results: list
    error_rows: list
    time_rows: list
    markdown: str
    files: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    n_computed: int = 0
    n_cached: int = 0


def _code_digest():
    """SHA-256 of linsep's Python sources: editing any solver invalidates cached runs."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _config(protocol, seed):
    # the declared version, not the commit: a commit that leaves src/linsep alone keeps the cache (the digest
    # of the sources decides)
    return {"cache_format": CACHE_FORMAT, "protocol": protocol, "seed": int(seed), "linsep": BASE_VERSION,
            "code": _code_digest()}


def _cache_path(out, protocol, seed, dataset, method, split):
    return Path(out) / "cache" / f"{protocol}-seed{seed}" / dataset / method / f"{split:03d}.json"


def _load_cached(path, config):
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if record.get("config") == config and "test_error" in record else None


_WARMED_UP = set()
"""The (data set, method, protocol) this process has already run once: the compiled code they use is loaded."""


def _task(dataset, method, split, protocol, seed, path, config):
    """Worker: one run, written to its cache file; exceptions are returned, not raised.

    ``method`` is a name or a ``Method`` record (:func:`run_one`).  The first run
    of a (data set, method) in a worker process warms up first, untimed
    (``run_one(..., warm_up=True)``): the compiled code a method needs is
    compiled, or loaded from numba's cache, on its first call in each process,
    and that must not be timed.  Warming up once per worker and (data set,
    method) rather than once per method keeps the same shapes, hence the same
    fit plan and compiled paths, as the timed runs; the cost is one extra
    fit (a grid method's: one of its 20) per worker, method and data set.
    """
    name = getattr(method, "name", method)
    key = (dataset, name, protocol)
    try:
        record = run_one(dataset, method, split, protocol, seed, keep_curve=(split == 0),
                         warm_up=key not in _WARMED_UP)
    except Exception as exc:  # one failing method must not lose the others' results
        return {"dataset": dataset, "method": name, "split": split,
                "error": f"{type(exc).__name__}: {exc}"}
    _WARMED_UP.add(key)
    record["config"] = config
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)
    return record


def plan(datasets=None, methods=None, n_splits=None, quick=False):
    """The data sets, methods and per-data-set split counts a run would use."""
    datasets = list(BENCHMARKS) if not datasets else list(datasets)
    for d in datasets:
        if d not in BENCHMARKS:
            raise ValueError(f"unknown data set {d!r}; available: {', '.join(BENCHMARKS)}")
    methods = default_methods(quick) if not methods else list(methods)
    for m in methods:
        get_method(m)  # fails early on an unknown name
    if n_splits is None and quick:
        n_splits = QUICK_SPLITS
    if n_splits is not None and int(n_splits) < 1:
        raise ValueError("the number of splits must be at least 1")
    counts = {d: BENCHMARKS[d].n_realizations if n_splits is None else min(int(n_splits), BENCHMARKS[d].n_realizations)
              for d in datasets}
    return datasets, methods, counts


@contextmanager
def dask_backend(address):
    """joblib's Dask backend on a ``distributed.Client`` connected to the scheduler at ``address``.

    Needs the ``dask`` extra; ``ValueError`` if it is missing or the scheduler
    cannot be reached within :data:`DASK_CONNECT_TIMEOUT` (or Dask's own connect
    timeout, if shorter).  The workers import linsep and write the run cache
    under ``out`` themselves: on a cluster of several machines, ``out`` should
    be on a shared file system.
    """
    try:
        import joblib
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs Dask: pip install -e '.[dask]' in linsep's checkout") from None
    try:
        client = Client(address, timeout=_connect_timeout(), set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
    try:
        with joblib.parallel_backend("dask", client=client):
            yield client
    finally:
        client.close()


def _connect_timeout():
    """:data:`DASK_CONNECT_TIMEOUT`, or ``distributed.comm.timeouts.connect`` of Dask's configuration if shorter."""
    import dask
    from dask.utils import parse_timedelta

    configured = dask.config.get("distributed.comm.timeouts.connect", None)
    if configured is not None and parse_timedelta(configured, "s") < parse_timedelta(DASK_CONNECT_TIMEOUT, "s"):
        return configured
    return DASK_CONNECT_TIMEOUT


def run_benchmark(datasets=None, methods=None, protocol="validation", n_splits=None, quick=False,
                  jobs=1, out="results", seed=0, test="ttest", progress=True, scheduler=None, command=None):
    """Run the comparison of Lauer & Bloch (2006), §3, and write its tables and figures.

    No timing includes a compilation: each worker process runs every (data
    set, method) once, untimed, before its first timed run of it (see
    :func:`run_one`).  The output folder also receives ``provenance.json``:
    the command, the date (UTC), the seed, linsep's code digest and the
    environment (Python, NumPy, SciPy, scikit-learn, numba versions, BLAS
    libraries and thread counts, CPU model and count, platform); the error
    table ends with the command and the seed.

    Parameters
    ----------
    datasets, methods : list of str or None
        Default: the nine data sets; the paper's seven methods (``quick``:
        ``linear_svc`` instead of the slow libsvm ``svm``).
    protocol : {"validation", "test"}
        §3.2 (Table 1) or §3.3 (Table 3, optimistic).
    n_splits : int or None
        Realizations per data set; default the protocol's 100 (20 for image
        and splice), ``quick``: 10.
    quick : bool, default=False
        The quick run of ``make demo``: 10 splits per data set and
        ``linear_svc`` instead of the slow libsvm ``svm``.
    jobs : int
        joblib workers over the runs (-1: all cores).
    scheduler : str or None
        Address of a Dask scheduler (``tcp://host:8786``): the runs go to its
        workers through joblib's Dask backend (``linsep.experiments.runner.dask_backend``; ``jobs``
        is then ignored).  Results are the same: every run is seeded by
        ``(seed, split)``.
    out : path
        Output folder (tables, figures, raw results, cache).
    seed : int
        Seed of the splits.
    test : {"ttest", "wilcoxon"}
        Paired test of the asterisks.
    progress : bool, default=True
        Show a progress bar (tqdm) over the runs.
    command : str or None
        The command that started the run (``linsep bench`` passes its command
        line), written to ``provenance.json`` and under the error table; default:
        this call, written as Python.

    Returns
    -------
    BenchmarkReport

    See Also
    --------
    run_one : One run.
    BenchmarkReport : What it returns.

    Examples
    --------
    >>> import tempfile
    >>> from linsep.experiments import run_benchmark
    >>> report = run_benchmark(datasets=["heart"], methods=["hk", "hkes"], n_splits=2,
    ...                        out=tempfile.mkdtemp(), progress=False)
    >>> len(report.results), report.n_computed
    (4, 4)
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; choose from {', '.join(TESTS)}")
    if command is None:
        command = python_call("linsep.experiments.run_benchmark", datasets=datasets, methods=methods,
                              protocol=protocol, n_splits=n_splits, quick=quick, jobs=jobs, out=str(out), seed=seed,
                              test=test, scheduler=scheduler)
    datasets, methods, counts = plan(datasets, methods, n_splits, quick)
    # the commit and dirty flag of the code this process runs: read now, not when the run ends (a commit made
    # during a long run would be named otherwise); git_state() keeps this answer for the process
    git = git_state()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = _config(protocol, seed)

    results, todo = [], []
    for d in datasets:
        for m in methods:
            for s in range(counts[d]):
                path = _cache_path(out, protocol, seed, d, m, s)
                cached = _load_cached(path, config)
                if cached is not None:
                    results.append(cached)
                else:
                    todo.append((d, m, s, path))
    n_cached = len(results)
    todo.sort(key=lambda t: (_COST.get(t[1], 9), -BENCHMARKS[t[0]].n_train, t[0], t[2]))

    failures = []
    if todo:
        from joblib import Parallel, delayed
        from tqdm.auto import tqdm

        with nullcontext() if scheduler is None else dask_backend(scheduler):
            runs = Parallel(n_jobs=jobs if scheduler is None else -1, return_as="generator_unordered")(
                delayed(_task)(d, m, s, protocol, seed, path, config) for d, m, s, path in todo)
            for record in tqdm(runs, total=len(todo), desc=f"linsep bench ({protocol})", unit="run",
                               disable=not progress, smoothing=0.05):
                (failures if "error" in record else results).append(record)
    results.sort(key=lambda r: (datasets.index(r["dataset"]), methods.index(r["method"]), r["split"]))

    table = TABLE_OF_PROTOCOL[protocol]
    error_rows = error_table(results, datasets, methods, protocol, test)
    time_rows = time_table(results, datasets, methods) if "hkes" in methods else []
    md = error_markdown(error_rows, datasets, methods, protocol, test)
    files = []
    (out / f"table{table}.md").write_text(md + f"\nCommand: `{command}` (seed {seed}); the environment, date and "
                                          f"code digest are in provenance.json.\n")
    write_csv(out / f"table{table}.csv", error_rows)
    files += [out / f"table{table}.md", out / f"table{table}.csv"]
    if time_rows:
        tmd = time_markdown(time_rows, datasets, methods)
        workers = f"{jobs} joblib worker(s)" if scheduler is None else f"the Dask cluster at {scheduler}"
        (out / "table2.md").write_text(tmd + f"\nMachine: {cpu_model()}, {os.cpu_count()} logical CPUs, {workers}; "
                                       f"compilation excluded (each worker warms up first). Command: `{command}`.\n")
        write_csv(out / "table2.csv", time_rows)
        files += [out / "table2.md", out / "table2.csv"]
        md += "\n" + tmd
    files += write_raw(out, results)
    for fig in (figure_iterations(results, out / "fig1_hkes_validation.png", datasets),
                figure_grid(results, out / "fig2_lsvm_validation_vs_C.png", datasets)):
        if fig is not None:
            files.append(fig)
    if failures:
        (out / "failures.json").write_text(json.dumps(failures, indent=1))
        files.append(out / "failures.json")
    record = provenance(command, seed, protocol=protocol, datasets=datasets, methods=methods, splits=counts,
                        jobs=jobs, scheduler=scheduler, test=test, quick=bool(quick), code=config["code"],
                        git=git, data_sha256=data_checksums(datasets),
                        cache_format=CACHE_FORMAT, n_computed=len(todo), n_cached=n_cached,
                        n_failed=len(failures),
                        timing=("time_s excludes compilation: each worker process runs every (data set, method) "
                                "once, untimed, before timing it, and a timing during which numba still compiled "
                                "or loaded code is repeated (n_retimed, n_compiles in results.json); "
                                f"the {n_cached} runs reused from the cache were timed by earlier runs of the same "
                                "code and seed"))
    (out / "provenance.json").write_text(json.dumps(record, indent=1))
    files.append(out / "provenance.json")
    return BenchmarkReport(out=out, protocol=protocol, results=results, error_rows=error_rows,
                           time_rows=time_rows, markdown=md, files=files, failures=failures,
                           n_computed=len(todo), n_cached=n_cached)
