"""One run of Lauer & Bloch (2006), §3: a (data set, method, split) → test error.

Protocols
---------
``"validation"`` (§3.2, Table 1)
    The training split is divided at random (seeded) into a training part of
    2/3 of its size and a validation part (the other 1/3).  Models are fitted
    on the 2/3 part, hyperparameters chosen on the validation part, and the
    error is measured on the untouched test split.  The final model is the
    one fitted on the 2/3 part (the paper does not refit on the whole split).
``"test"`` (§3.3, Table 3)
    Models are fitted on the whole training split and the hyperparameters
    chosen on the test split itself — the error reported on that same split
    is optimistic (biased low), and the output says so.

Tuning (§3.1)
-------------
``C`` grid: ``C = 2^-10, 2^-8, …, 2^10`` (11 values), then 9 values evenly
spaced in exponent over ``[2^(p-1), 2^(p+1)]`` around the best ``2^p`` —
20 tested values.  Ties keep the first value in scan order (smallest ``C``
of the coarse grid; the best of the fine scan, which contains ``2^p``, is
never worse than the coarse best).  HKES/HKESA receive the tuning set as
``fit(X, y, X_val=..., y_val=...)`` and choose their stopping iteration
``k̂`` within that one fit.  linsep's extensions ``hkes_cv`` / ``hkesa_cv``
(tuning ``"cv"``) are fitted once on the whole training split and choose
``k̂`` by their own cross-validation; their ``tuning_error`` is that
cross-validation error at ``k̂``.
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from functools import lru_cache

import numpy as np
from sklearn.preprocessing import StandardScaler

from linsep.datasets import BENCHMARKS, load_benchmark, split_indices
from linsep.experiments.methods import Method, get_method

PROTOCOLS = ("validation", "test")
COARSE_EXPONENTS = np.arange(-10, 11, 2)
FINE_POINTS = 9
TRAIN_FRACTION = 2 / 3


def coarse_grid():
    """``2^-10, 2^-8, …, 2^10`` (11 values).

    Returns
    -------
    ndarray of shape (11,)
        The first step of the paper's search over ``C`` (§3.1).

    See Also
    --------
    fine_grid : The second step, around the best coarse value.

    Examples
    --------
    >>> from linsep.experiments import coarse_grid
    >>> coarse_grid()[[0, 5, -1]]
    array([9.765625e-04, 1.000000e+00, 1.024000e+03])
    """
    return 2.0 ** COARSE_EXPONENTS


def fine_grid(p):
    """9 values ``2^t``, ``t`` evenly spaced in ``[p - 1, p + 1]`` (contains ``2^p``).

    Parameters
    ----------
    p : int
        Exponent of the best coarse value ``2^p``.

    Returns
    -------
    ndarray of shape (9,)
        The second step of the paper's search over ``C`` (§3.1).

    See Also
    --------
    coarse_grid : The first step.

    Examples
    --------
    >>> from linsep.experiments import fine_grid
    >>> fine_grid(0)[[0, 4, -1]]
    array([0.5, 1. , 2. ])
    """
    return 2.0 ** np.linspace(p - 1, p + 1, FINE_POINTS)


@lru_cache(maxsize=None)
def _data(name):
    return load_benchmark(name)


def load_split(dataset, split, protocol="validation", random_state=0):
    """Arrays ``(X_fit, y_fit, X_tune, y_tune, X_test, y_test)`` of one run.

    Realization ``split`` is the one :func:`linsep.datasets.benchmark_splits`
    yields (same indices from :func:`~linsep.datasets.split_indices`, same
    standardisation with the training split's statistics); the validation
    protocol then divides its training part with a generator seeded by
    ``(random_state, split)`` so every method sees the same three sets.

    Parameters
    ----------
    dataset : str
        One of :data:`linsep.datasets.BENCHMARKS`.
    split : int
        The realization's number.
    protocol : {"validation", "test"}, default="validation"
        ``"validation"``: the training part is divided 2/3 for fitting, 1/3 for
        tuning; ``"test"``: fitting on the whole training part, tuning on the
        test part (the paper's optimistic Table 3).
    random_state : int, default=0
        Seed of the realization and of the division.

    Returns
    -------
    tuple of ndarray
        ``(X_fit, y_fit, X_tune, y_tune, X_test, y_test)``.

    See Also
    --------
    run_one : Tune, fit and test one method on one realization.

    Examples
    --------
    >>> from linsep.experiments import load_split
    >>> X_fit, y_fit, X_tune, y_tune, X_test, y_test = load_split("heart", 0)
    >>> X_fit.shape, X_tune.shape, X_test.shape
    ((113, 13), (57, 13), (100, 13))
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    X, y = _data(dataset)
    train, test = split_indices(dataset, split, random_state)
    scaler = StandardScaler().fit(X[train])
    X_train, y_train = scaler.transform(X[train]), y[train]
    X_test, y_test = scaler.transform(X[test]), y[test]
    if protocol == "test":
        return X_train, y_train, X_test, y_test, X_test, y_test
    order = np.random.default_rng([int(random_state), int(split), 2]).permutation(len(y_train))
    n_fit = int(round(TRAIN_FRACTION * len(y_train)))
    fit, val = order[:n_fit], order[n_fit:]
    return X_train[fit], y_train[fit], X_train[val], y_train[val], X_test, y_test


def error_rate(estimator, X, y):
    """Misclassification rate in percent."""
    return 100.0 * float(np.mean(estimator.predict(X) != y))


def _grid_search(method, X_fit, y_fit, X_tune, y_tune):
    """Two-step grid of §3.1; returns (best estimator, best C, [(C, tuning error %)] in scan order)."""
    tested, models = [], {}

    def evaluate(C):
        key = float(C)
        if key not in models:  # the fine scan repeats 2^p: reuse that fit
            models[key] = method.build(C=key).fit(X_fit, y_fit)
        error = error_rate(models[key], X_tune, y_tune)
        tested.append((key, error))
        return error

    coarse = [evaluate(C) for C in coarse_grid()]
    p = COARSE_EXPONENTS[int(np.argmin(coarse))]
    fine = [(evaluate(C), float(C)) for C in fine_grid(p)]
    best_C = min(fine, key=lambda pair: pair[0])[1]  # min() keeps the first of equal errors
    return models[best_C], best_C, tested


@contextmanager
def _compiler_activity():
    """Count numba's entries into its compiler while the block runs: compilations and loads from its disk cache.

    Yields a list that holds, after the block, one item per time the global
    compiler lock was taken (numba's documented event API,
    ``numba.core.event``; calls of already loaded code do not take it).  An
    empty list if numba's event API is missing.
    """
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba is a dependency; an older one without events
        yield []
        return
    starts = []
    with event.install_recorder("numba:compiler_lock") as recorder:
        yield starts
    starts.extend(e for _, e in recorder.buffer if e.is_start)


def _tuned_fit(spec, X_fit, y_fit, X_tune, y_tune, X_all, y_all):
    """The timed work of a run: ``(estimator, record fields)`` — the grid, the early-stopping fit or the one fit."""
    if spec.tuning == "C":
        est, best_C, tested = _grid_search(spec, X_fit, y_fit, X_tune, y_tune)
        return est, {"C": best_C, "n_fits": len(tested), "c_curve": tested}
    if spec.tuning == "cv":
        est = spec.build().fit(X_all, y_all)
        return est, {"best_iter": np.asarray(est.best_iter_).tolist(), "n_fits": 1}
    if spec.tuning == "early_stopping":
        est = spec.build().fit(X_fit, y_fit, X_val=X_tune, y_val=y_tune)
        return est, {"best_iter": int(est.best_iter_), "n_fits": 1}
    return spec.build().fit(X_fit, y_fit), {"n_fits": 1}


def _warm_up(spec, X_fit, y_fit, X_tune, y_tune, X_all, y_all):
    """Untimed: run once what the timed part will run, so that it loads (or compiles) every compiled function first.

    The same arrays (same dtype, shape and memory layout: the same compiled
    signatures and the same fit plan) and the same call.  For the methods tuned
    over ``C`` it is one fit of the grid (``C = 1``) and its prediction of the
    tuning set, not the 20: every value of the grid runs the same functions on
    the same arrays, and one fit costs a twentieth.  The other methods make
    one fit call per run, and that call is repeated as it is (a cheaper stand-in,
    e.g. a smaller problem, could take another path of the fit plan).  Should a
    timed run still enter numba's compiler, :func:`run_one` times it again.
    """
    if spec.tuning == "C":
        error_rate(spec.build(C=1.0).fit(X_fit, y_fit), X_tune, y_tune)
    else:
        est, _ = _tuned_fit(spec, X_fit, y_fit, X_tune, y_tune, X_all, y_all)
        error_rate(est, X_tune, y_tune)


def run_one(dataset, method, split, protocol="validation", random_state=0, keep_curve=False, warm_up=False):
    """Tune and fit ``method`` on realization ``split`` of ``dataset``; return a JSON-ready dict.

    The time ``time_s`` covers everything the method needs on that split
    (all grid fits, or the one early-stopping fit), not the final test
    prediction — as in the paper's Table 2.  It never includes a compilation
    of numba code: with ``warm_up`` the run first calls, untimed, what it is
    about to time (the same fit on the same arrays; for a grid over ``C``,
    one fit of it), and a timed part during which numba
    still compiled or loaded code (counted through numba's event API) is
    timed a second time, which is the one kept.  ``keep_curve`` stores the
    validation error per iteration of an early-stopping fit (Fig. 1).

    Parameters
    ----------
    dataset : str
        One of :data:`linsep.datasets.BENCHMARKS`.
    method : str or Method
        A name :func:`get_method` knows, or a ``Method`` record (a name, a
        ``build`` function and a tuning kind) for a method of one's own.
    split : int
        The realization's number.
    protocol : {"validation", "test"}, default="validation"
        See :func:`load_split`.
    random_state : int, default=0
        Seed of the realization.
    keep_curve : bool, default=False
        Also store the validation error per iteration (early stopping).
    warm_up : bool, default=False
        Run the method once, untimed, before the timed part (what
        :func:`run_benchmark` does before a worker's first run of each
        method on each data set).

    Returns
    -------
    dict
        ``test_error`` and ``tuning_error`` (%), ``time_s``, ``n_fits``, the
        chosen ``C`` or ``best_iter``, ``n_iter``, ``status``, ``n_warnings``
        and the identifying keys; what ``results.csv`` holds per row.
        ``warm_up_s`` is the untimed warm-up's duration (0 without one),
        ``n_retimed`` is 1 when the first timed attempt entered numba's compiler
        and was discarded, and ``n_compiles`` counts its entries during the
        kept timing (0 when the timing is clean).

    See Also
    --------
    run_benchmark : Every run of a comparison, in parallel and cached.

    Examples
    --------
    >>> from linsep.experiments import run_one
    >>> record = run_one("heart", "hkes", split=0, warm_up=True)
    >>> record["test_error"], record["n_fits"], record["n_compiles"]
    (17.0, 1, 0)
    """
    if dataset not in BENCHMARKS:
        raise ValueError(f"unknown data set {dataset!r}; available: {', '.join(BENCHMARKS)}")
    spec = method if isinstance(method, Method) else get_method(method)
    X_fit, y_fit, X_tune, y_tune, X_test, y_test = load_split(dataset, split, protocol, random_state)
    record = {"dataset": dataset, "method": spec.name, "split": int(split), "protocol": protocol,
              "seed": int(random_state), "tuning": spec.tuning}
    X_all = y_all = None
    if spec.tuning == "cv":  # the whole training split: the fitting part and (validation protocol) the tuning part
        X_all, y_all = ((np.vstack([X_fit, X_tune]), np.concatenate([y_fit, y_tune]))
                        if protocol == "validation" else (X_fit, y_fit))
    arrays = (X_fit, y_fit, X_tune, y_tune, X_all, y_all)
    record["warm_up_s"] = 0.0
    if warm_up:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the timed run below records its own
            start = time.perf_counter()
            _warm_up(spec, *arrays)
            record["warm_up_s"] = time.perf_counter() - start
    record["n_retimed"] = 0
    for attempt in range(2):
        with warnings.catch_warnings(record=True) as caught, _compiler_activity() as compiles:
            warnings.simplefilter("always")
            start = time.perf_counter()
            est, fields = _tuned_fit(spec, *arrays)
            elapsed = time.perf_counter() - start
        if not compiles or attempt == 1:
            break
        record["n_retimed"] = 1  # that timing included numba's compiler: time the same work again, now loaded
    record.update(fields)
    record["time_s"] = elapsed
    record["n_compiles"] = len(compiles)
    record["n_warnings"] = len(caught)
    if spec.tuning == "cv":  # the cross-validation error at k̂ (per class, averaged)
        curves = est.cv_curve_ if isinstance(est.cv_curve_, list) else [est.cv_curve_]
        record["tuning_error"] = 100.0 * float(np.mean([np.min(c) for c in curves]))
    else:
        record["tuning_error"] = error_rate(est, X_tune, y_tune)
    record["test_error"] = error_rate(est, X_test, y_test)
    for attr in ("n_iter_", "status_"):
        value = getattr(est, attr, None)
        if value is not None:
            record[attr.rstrip("_")] = np.asarray(value).tolist()
    if keep_curve and spec.tuning == "early_stopping":
        record["iter_curve"] = (100.0 * np.asarray(est.history_["validation_error"])).tolist()
    elif keep_curve and spec.tuning == "cv" and not isinstance(est.cv_curve_, list):
        record["iter_curve"] = (100.0 * est.cv_curve_).tolist()
    return record
