"""Compile linsep's loops ahead of time: :func:`warm_up`, ``linsep warm-up`` on the command line.

numba compiles each of linsep's loops the first time it runs on a kind of
data and keeps the result in its disk cache (``linsep._core.compilation``);
this runs one small fit of each kind, so that no later fit on the machine
waits for a compilation.
"""

from __future__ import annotations

import sys
import time
import warnings
from numbers import Integral

import numba
import numpy as np
import scipy.sparse as sp

from linsep._core.signed_design import SignedDesign
from linsep.estimators.registry import available_classifiers, make_classifier
from linsep._core.compilation import notices_paused
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.lsvm.solver import lagrangian_svm

__all__ = ["SCOPES", "warm_up", "warm_up_steps"]


SCOPES = ("all", "bench")
"""What :func:`warm_up` compiles: everything, or the paths of ``linsep bench`` (dense float64 data by columns on
one thread: the Ho–Kashyap segment with squared and absolute errors and the LSVM pass)."""


def warm_up_steps(scope="all", *, parallel=None):
    """The fits :func:`warm_up` runs, as ``(description, callable)`` pairs.

    Each runs a few iterations of a loop on small data laid out as the fit
    plan lays out data of that kind, so that numba compiles the version the
    real fits will load: the Ho–Kashyap segment (by columns; by rows in one
    sum and in chunks; squared and absolute errors; float64 and float32), the
    LSVM pass, and one fit of every registered classifier on float64 and
    float32 data (the perceptron and LMS epochs, Kozinec and SK, kernels), and
    on sparse data (the perceptron and LMS epochs on CSR rows, the minimum-norm
    map of wide sparse Ho–Kashyap fits).

    Parameters
    ----------
    scope : {"all", "bench"}, default="all"
        Everything, or what ``linsep bench`` runs (:data:`SCOPES`).
    parallel : bool or None, default=None
        Also compile the passes that split rows over threads (used where a
        pass over enough entries finds idle cores); ``None``: when numba has
        more than one thread.

    Returns
    -------
    list of (str, callable)

    See Also
    --------
    warm_up : Runs these fits one after the other.

    Examples
    --------
    >>> from linsep.warmup import warm_up_steps
    >>> [description for description, _ in warm_up_steps("bench")]  # doctest: +NORMALIZE_WHITESPACE
    ['Ho–Kashyap by columns, squared errors, float64', 'Ho–Kashyap by columns, absolute errors, float64',
     'LSVM pass, float64']
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    if parallel is None:
        parallel = numba.get_num_threads() > 1
    rng = np.random.default_rng(0)

    def data(n, d, dtype):
        X = rng.standard_normal((n, d)).astype(dtype)
        return X, np.where(X[:, 0] + rng.standard_normal(n) > 0, 1.0, -1.0)

    def quiet(fit):
        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit()
        return run

    def hk(n, d, dtype, loss, plan):
        X, y = data(n, d, dtype)
        fit_rows, val_rows = np.arange(0, n, 2), np.arange(1, n, 2)
        return quiet(lambda: ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows), C=0.5, loss=loss, max_iter=3,
                                        Y_val=SignedDesign(X, y[val_rows], val_rows),
                                        plan={"driver": "compiled", **plan}))

    if scope == "bench":
        X, y = data(6000, 60, "float64")
        return [(f"Ho–Kashyap by columns, {loss} errors, float64", hk(200, 8, "float64", loss, {}))
                for loss in ("squared", "absolute")] + [
            ("LSVM pass, float64", quiet(lambda: lagrangian_svm(X, y, C=1.0, max_iter=3, plan={"threads": 1})))]
    steps = []
    layouts = [("by columns", 200, 8, {}), ("by rows", 2000, 8, {"by_columns_max_entries": 0, "threads": 1}),
               ("by rows, chunked", 6000, 100, {"by_columns_max_entries": 0, "threads": 1})]
    if parallel:
        layouts.append(("by rows, threads", 6000, 100, {"by_columns_max_entries": 0, "threads": 2}))
    for dtype in ("float64", "float32"):
        for layout, n, d, plan in layouts:
            if dtype == "float32" and layout == "by columns":
                continue  # the columns are stored in float64 whatever the data
            for loss in ("squared", "absolute"):
                steps.append((f"Ho–Kashyap {layout}, {loss} errors, {dtype}", hk(n, d, dtype, loss, plan)))
    def cv_lockstep():
        # HoKashyapClassifierCV's runs on views of large float32 X, a wave side by side (its folds above
        # BY_COLUMNS_MAX_ENTRIES: read by rows); the thread groups of a lockstep compile on first use
        from linsep.estimators.ho_kashyap_cv import HoKashyapClassifierCV

        X, y = data(25_000, 30, "float32")
        clf = HoKashyapClassifierCV(Cs=[None, 1.0], max_iter=3, random_state=0)
        clf._fold_design = "views"
        return quiet(lambda: clf.fit(X, y))

    steps.append(("Ho–Kashyap CV, a wave's runs in lockstep, float32", cv_lockstep()))
    for dtype in ("float64", "float32"):
        for threads in (1, 2) if parallel else (1,):
            X, y = data(6000, 60, dtype)
            steps.append((f"LSVM pass, {dtype}{', threads' if threads > 1 else ''}",
                          quiet(lambda X=X, y=y, threads=threads: lagrangian_svm(
                              X, y, C=1.0, max_iter=3, plan={"threads": threads}))))
    for name in available_classifiers():
        for dtype in ("float64", "float32"):
            X, y = data(60, 4, dtype)
            steps.append((f"{name}, {dtype}", quiet(lambda name=name, X=X, y=y: make_classifier(name).fit(X, y))))
    for dtype in ("float64", "float32"):
        X = sp.random(60, 30, density=0.2, format="csr", dtype=dtype, random_state=rng)
        y = np.where(np.asarray(X.sum(axis=1)).ravel() > np.median(np.asarray(X.sum(axis=1))), 1, -1)
        for name in ("perceptron", "lms", "kernel_perceptron"):
            steps.append((f"{name}, sparse {dtype}",
                          quiet(lambda name=name, X=X, y=y: make_classifier(name).fit(X, y))))
    signal = rng.random((300, 5))
    X = sp.hstack([sp.csr_matrix(signal), sp.random(300, 2500, density=0.01, random_state=rng)], format="csr")
    y = np.where(signal.sum(axis=1) > 2.5, 1, -1)
    steps.append(("Ho–Kashyap on wide sparse data (minimum-norm map)",
                  quiet(lambda: make_classifier("hk", max_iter=5).fit(X, y))))
    return steps


def warm_up(scope="all", *, progress=True, parallel=None, jobs=1):
    """Compile linsep's loops for every kind of data ahead of time (numba keeps them on disk).

    Later processes on this machine load them instead of compiling at their
    first fit.  Runs the fits of :func:`warm_up_steps` one after the other, or
    shared among ``jobs`` processes: numba compiles each loop on one core, so on
    a machine with idle cores the whole warm-up takes about ``1 / jobs`` of the
    time.  The processes write their entries into the one disk cache side by
    side (linsep's cache index takes concurrent writers: ``linsep._core.numba_cache``).

    Parameters
    ----------
    scope : {"all", "bench"}, default="all"
        See :func:`warm_up_steps`.
    progress : bool, default=True
        Show a progress bar (tqdm where installed, else one line per step) on stderr.
    parallel : bool or None, default=None
        See :func:`warm_up_steps`.
    jobs : int, default=1
        Processes that run the fits (each takes the next fit as it finishes
        one).  ``1``: all of them in this process.

    Returns
    -------
    float
        The seconds it took.

    See Also
    --------
    warm_up_steps : The fits it runs.

    Examples
    --------
    >>> from linsep.warmup import warm_up
    >>> seconds = warm_up(progress=False)  # doctest: +SKIP
    """
    if isinstance(jobs, bool) or not isinstance(jobs, Integral) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if parallel is None:  # decided here, once: every process compiles the same list
        parallel = numba.get_num_threads() > 1
    steps = warm_up_steps(scope, parallel=parallel)
    start = time.perf_counter()
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            bar = tqdm(total=len(steps), desc="linsep warm-up", unit="fit", file=sys.stderr)

    def report(index, description, done):
        if bar is not None:
            bar.set_postfix_str(description)
            bar.update(done)
        elif progress and not done:
            print(f"linsep warm-up {index}/{len(steps)}: {description}", file=sys.stderr, flush=True)

    if jobs == 1:
        with notices_paused():
            for index, (description, run) in enumerate(steps, 1):
                report(index, description, 0)
                run()
                report(index, description, 1)
    else:
        _run_in_processes(steps, scope, parallel, jobs, report)
    if bar is not None:
        bar.close()
    return time.perf_counter() - start


def _run_in_processes(steps, scope, parallel, jobs, report):
    """Run the fits of ``steps`` in ``jobs`` fresh processes, each taking the next fit as it finishes one.

    Fresh processes, not forks of this one (which would copy its numba threads and locks): joblib's loky
    executor (scikit-learn's own dependency), which unlike ``multiprocessing``'s "spawn" runs from any caller,
    a script without a ``__main__`` guard, standard input or a notebook.  Each process builds the same list of
    fits (:func:`warm_up_steps` draws its data from a fixed seed) and runs the ones it is handed by index.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    from joblib.externals.loky import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(steps)), initializer=_start_worker,
                             initargs=(scope, parallel)) as pool:
        pending = {pool.submit(_run_step, index): index for index in range(len(steps))}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    future.result()  # a failed fit fails the warm-up, as it does in one process
                    report(index + 1, steps[index][0], 0)  # the fits are named as they finish
                    report(index + 1, steps[index][0], 1)
        except BaseException:  # a failure or Ctrl-C: the fits not started are not started
            for future in pending:
                future.cancel()
            raise


_worker_steps = None  # in a warm-up worker process: the fits of warm_up_steps, built once


def _start_worker(scope, parallel):
    global _worker_steps
    _worker_steps = warm_up_steps(scope, parallel=parallel)


def _run_step(index):
    with notices_paused():
        _worker_steps[index][1]()
