"""Fits running in several threads at once give the serial results and leave process-wide settings as found.

linsep's compiled passes release the GIL, share one lock for their parallel
launches (:data:`linsep._core.threads.PARALLEL_LOCK`) and one for the process-wide
BLAS thread limit (:func:`linsep._core.threads.serial_blas`); estimators keep their
fit-time state on the instance.  Threads fitting different estimators, or
scikit-learn's threading backend running a grid search, must therefore see
exactly what serial fits see.

Bit for bit under the same BLAS thread count, and only there (``tests/README.md``).  A BLAS call gives the
same bits whichever Python thread makes it and wherever its operands lie in memory (checked on OpenBLAS's
Haswell, Zen, SkylakeX, Sandybridge and Prescott kernels), but not on another number of BLAS threads:
OpenBLAS shares a ``dtrsm``'s right-hand sides (a ``dgemm``'s blocks) among its threads, and on some kernels
the columns left over by a share take another code path.  The serial fits were once made at the
environment's count (one thread under ``make test``) and the threaded ones at two: under the Haswell, Zen
and Prescott kernels the 22 right-hand sides of the kernel map's ``R⁻ᵀ V``
(:class:`linsep.solvers.ho_kashyap.kernel.EmpiricalKernelMap`) went 11 and 11, and 105 of ``kernel_hkes``'s
180 decision scores moved by an ulp or two.  And a fit of small data runs on one BLAS thread
(:func:`linsep._core.threads.serial_blas_below`), a limit that is process-wide but, set from a worker thread,
does not reach OpenBLAS's count everywhere: under two BLAS threads a small fit in a worker thread may run on
one or two.  So the bits are compared with every fit under ``threadpool_limits(1)`` (no limit changes
anything), and the process-wide settings are checked apart, under ``threadpool_limits(2)``, where a fit that
lowered the BLAS count and failed to restore it would show.
"""

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pytest
import scipy.linalg as sla
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from threadpoolctl import threadpool_info, threadpool_limits

from linsep import available_classifiers, make_classifier

NAMES = list(available_classifiers())
# warnings.catch_warnings is not thread-safe: the budget warnings of the small max_iter are filtered here instead
pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"), pytest.mark.numerics]


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d)) + 1.5 * np.eye(3, d)[y]  # three overlapping classes: every verdict occurs
    return X, y


def _estimator(name):
    estimator = make_classifier(name)
    params = estimator.get_params()
    budget = {key: value for key, value in {"max_iter": 100, "cv": 3}.items()
              if key in params and (params[key] is None or params[key] > value)}
    if "random_state" in params:
        budget["random_state"] = 0
    return estimator.set_params(**budget)


def _fit_scores(name, X, y):
    model = _estimator(name).fit(X, y)
    return model.decision_function(X), np.asarray(model.n_iter_), np.asarray(model.status_, dtype=object)


def _process_settings():
    """What a fit could change for the whole process: BLAS/OpenMP thread counts and numba's.

    Read inside ``threadpool_limits(2)``: a fit that lowers the BLAS count
    (:func:`linsep._core.threads.serial_blas`) and failed to restore it would show,
    even where the environment keeps BLAS to one thread.
    """
    pools = {(pool["user_api"], pool["internal_api"], pool["filepath"]): pool["num_threads"]
             for pool in threadpool_info()}
    return pools, numba.get_num_threads()


def _unchanged(before, after):
    """Whether the pools of ``before`` keep their thread counts in ``after``, numba's too (a pool loaded in
    between, such as the OpenMP library of numba's first parallel pass, is no change of a setting)."""
    (pools, numba_threads), (later, later_numba) = before, after
    return {key: later.get(key) for key in pools} == pools and later_numba == numba_threads


@functools.cache
def _lapack_ignores_blas_threads():
    """Whether SciPy's LAPACK gives the same bits on one and two BLAS threads (``eigh``, as the kernel map calls it).

    The threaded fits below run inside ``threadpool_limits(2)`` and the serial ones on the environment's BLAS
    threads (one under ``make test``), and a fit may run under another thread's serial-BLAS limit: equality bit for
    bit then also needs LAPACK results that do not depend on the thread count.  SciPy 1.13's OpenBLAS (0.3.27)
    and later give them; SciPy 1.10 to 1.12's (0.3.18, 0.3.21.dev) give another last bit in ``eigh`` (1e-14 in the
    kernel Ho–Kashyap decision values).
    """
    A = np.random.default_rng(0).normal(size=(60, 40))
    A = A.T @ A
    with threadpool_limits(limits=1, user_api="blas"):
        one = sla.eigh(A, check_finite=False)
    with threadpool_limits(limits=2, user_api="blas"):
        two = sla.eigh(A, check_finite=False)
    return all(np.array_equal(a, b) for a, b in zip(one, two))


def _assert_same_scores(scores, serial, err_msg=""):
    """Equal bit for bit; to 1e-10 of their scale where LAPACK's bits depend on the BLAS thread count (above)."""
    if _lapack_ignores_blas_threads():
        np.testing.assert_array_equal(scores, serial, err_msg=err_msg)
    else:
        np.testing.assert_allclose(scores, serial, rtol=0, atol=1e-10 * max(np.abs(serial).max(), 1.0),
                                   err_msg=err_msg)


def test_every_estimator_fitted_in_threads_at_once_equals_its_serial_fit():
    X, y = _data()
    with threadpool_limits(limits=1):  # one BLAS thread for every fit: BLAS rounds by its thread count
        serial = {name: _fit_scores(name, X, y) for name in NAMES}
        threaded = _fit_in_threads(X, y)
    with threadpool_limits(limits=2):  # the settings, where a limit left set would show (module docstring)
        settings = _process_settings()
        _fit_in_threads(X, y)
        assert _unchanged(settings, _process_settings())
    for name, (scores, n_iter, status) in threaded:
        _assert_same_scores(scores, serial[name][0], err_msg=name)
        np.testing.assert_array_equal(n_iter, serial[name][1], err_msg=name)
        np.testing.assert_array_equal(status, serial[name][2], err_msg=name)


def _fit_in_threads(X, y):
    """Every estimator fitted at least twice by four threads, the first four fits starting together."""
    start = threading.Barrier(4)

    def fit(job, name):
        if job < 4:
            start.wait()  # the first four fits begin together
        return _fit_scores(name, X, y)

    jobs = NAMES[:4] + NAMES * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [(name, pool.submit(fit, job, name)) for job, name in enumerate(jobs)]
        return [(name, future.result()) for name, future in futures]


@pytest.mark.parametrize("name, grid", [
    ("hk", {"learning_rate": [0.2, 0.6]}),
    ("mhka", {"C": [0.1, 1.0]}),  # IRLS: the serial-BLAS limit taken and restored by each fit
    ("hkes_cv", {"C": [None, 0.5]}),
    ("lsvm", {"C": [0.5, 2.0]}),
    ("perceptron", {"learning_rate": [0.5, 1.0]}),
    ("kernel_hk", {"gamma": [0.5, 2.0]}),
    ("kernel_sk", {"C": [1.0, 10.0]}),
])
def test_grid_search_with_the_threading_backend_equals_the_serial_search(name, grid):
    X, y = _data()
    cv = StratifiedKFold(3, shuffle=True, random_state=0)

    def search(n_jobs):
        return GridSearchCV(_estimator(name), grid, cv=cv, n_jobs=n_jobs).fit(X, y)

    with threadpool_limits(limits=1):  # one BLAS thread for every fit: BLAS rounds by its thread count
        serial = search(1)
        with parallel_backend("threading", n_jobs=4):
            threaded = search(4)
    with threadpool_limits(limits=2), parallel_backend("threading", n_jobs=4):  # the settings (module docstring)
        settings = _process_settings()
        search(4)
        assert _unchanged(settings, _process_settings())
    # bit for bit: the same operations on the same BLAS count
    np.testing.assert_array_equal(threaded.cv_results_["mean_test_score"], serial.cv_results_["mean_test_score"])
    assert threaded.best_params_ == serial.best_params_
    _assert_same_scores(threaded.decision_function(X), serial.decision_function(X))
