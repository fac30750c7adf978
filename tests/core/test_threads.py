"""Compiled passes on several threads give the one-thread fit bit for bit (linsep._core.threads).

A pass over a large ``X`` sums its rows in chunks fixed by the shape
(:func:`linsep._core.threads.row_chunks`) and adds them in chunk order; the thread
count, chosen from the machine's load and whether another fit holds the
parallel lock, only decides who computes which chunk.  The data here are just
large enough for several chunks.  The thread count itself follows the BLAS and
numba limits (:func:`linsep._core.threads.pass_threads`, last test).
"""

from __future__ import annotations

import itertools
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from linsep._core.signed_design import SignedDesign
from linsep._core.threads import (
    CHUNK_ROW_MULTIPLE,
    MAX_ROW_CHUNKS,
    PARALLEL_MIN_ENTRIES,
    RowSplitCSR,
    chunk_range,
    row_chunks,
)
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.lsvm.solver import lagrangian_svm

N_ROWS, N_COLS = 70_000, 4  # 280 000 entries: above PARALLEL_MIN_ENTRIES, so 64 chunks


@pytest.fixture(scope="module")
def large_problem():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(N_ROWS, N_COLS))
    y = np.where(X @ rng.normal(size=N_COLS) + rng.normal(scale=2.0, size=N_ROWS) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("n_rows, n_cols", [(10, 3), (65_536, 4), (70_000, 4), (2_500, 200), (300, 10_000),
                                            (10_000_000, 1)])
def test_chunks_cover_the_rows_in_order_on_block_bounds(n_rows, n_cols):
    n_chunks = row_chunks(n_rows, n_cols)
    assert 1 <= n_chunks <= MAX_ROW_CHUNKS
    assert (n_chunks == 1) == (n_rows * n_cols < PARALLEL_MIN_ENTRIES or n_rows <= CHUNK_ROW_MULTIPLE)
    bounds = [chunk_range(n_rows, n_chunks, c) for c in range(n_chunks)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n_rows
    for (lo, hi), (next_lo, _) in itertools.pairwise(bounds):
        assert lo < hi == next_lo and hi % CHUNK_ROW_MULTIPLE == 0


def test_the_data_here_use_several_chunks():
    assert row_chunks(N_ROWS, N_COLS) == MAX_ROW_CHUNKS


HK_CASES = {
    "hk": {"max_iter": 40},
    "mhks": {"C": 0.3, "max_iter": 40},
    "mhka": {"loss": "absolute", "C": 0.5, "max_iter": 15},
    "hk_paper_rule": {"stopping": "paper", "tol": 0.0, "stop_at_separation": False, "max_iter": 25},
}


@pytest.mark.numerics
@pytest.mark.parametrize("case", HK_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hk_family_is_bit_identical_on_one_and_two_threads(large_problem, case, dtype):
    X, y = large_problem
    Y = SignedDesign(X.astype(dtype), y)
    serial = ho_kashyap(Y, **HK_CASES[case], plan={"threads": 1})
    threaded = ho_kashyap(Y, **HK_CASES[case], plan={"threads": 2})
    assert (serial.extra["plan"]["threads"], threaded.extra["plan"]["threads"]) == (1, 2)
    assert (threaded.status, threaded.n_iter) == (serial.status, serial.n_iter)
    assert np.array_equal(threaded.weights, serial.weights)
    assert np.array_equal(threaded.margin, serial.margin)
    for name, trace in (serial.history or {}).items():
        assert np.array_equal(threaded.history[name], trace), name


@pytest.mark.numerics
def test_hk_with_validation_is_bit_identical_on_one_and_three_threads(large_problem):
    X, y = large_problem
    Y, Y_val = SignedDesign(X, y), SignedDesign(X[:20_000], -y[:20_000])  # a validation set that disagrees
    kw = {"C": 0.3, "max_iter": 30, "stop_at_separation": False, "Y_val": Y_val}
    serial = ho_kashyap(Y, **kw, plan={"threads": 1})
    threaded = ho_kashyap(Y, **kw, plan={"threads": 3})
    assert (threaded.n_iter, threaded.best_iter) == (serial.n_iter, serial.best_iter)
    assert np.array_equal(threaded.weights, serial.weights)


@pytest.mark.numerics
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lsvm_is_bit_identical_on_one_and_two_threads(large_problem, dtype):
    X, y = large_problem
    X = X.astype(dtype)
    serial = lagrangian_svm(X, y, C=4.0, max_iter=60, record_history=True, plan={"threads": 1})
    threaded = lagrangian_svm(X, y, C=4.0, max_iter=60, record_history=True, plan={"threads": 2})
    assert (threaded.status, threaded.n_iter) == (serial.status, serial.n_iter)
    assert np.array_equal(threaded.weights, serial.weights)
    assert np.array_equal(threaded.extra["alpha"], serial.extra["alpha"])
    assert np.array_equal(threaded.history["objective"], serial.history["objective"])


@pytest.mark.numerics
def test_concurrent_fits_share_the_threads_and_give_the_serial_result(large_problem):
    """Two fits asking for two threads at once: one runs its chunks on threads, the other (lock taken) on one."""
    X, y = large_problem
    Y = SignedDesign(X, y)
    kw = {"loss": "absolute", "C": 0.5, "max_iter": 10}
    serial = ho_kashyap(Y, **kw, plan={"threads": 1})
    start = threading.Barrier(2)

    def fit(_):
        start.wait()
        return ho_kashyap(Y, **kw, plan={"threads": 2})

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(fit, range(2)))
    for result in results:
        assert result.n_iter == serial.n_iter
        assert np.array_equal(result.weights, serial.weights)
        assert np.array_equal(result.margin, serial.margin)


def test_thread_count_follows_the_blas_and_numba_limits():
    import numba
    from threadpoolctl import threadpool_limits

    from linsep._core.threads import PARALLEL_MIN_ENTRIES, pass_threads

    assert pass_threads(PARALLEL_MIN_ENTRIES - 1) == 1  # small problems stay serial
    assert 1 <= pass_threads(PARALLEL_MIN_ENTRIES) <= numba.get_num_threads()
    with threadpool_limits(limits=1, user_api="blas"):
        assert pass_threads(10 * PARALLEL_MIN_ENTRIES) == 1


# --- Small BLAS work on one thread (serial_blas_below) ------------------------------------------------------

def _blas_threads():
    from threadpoolctl import threadpool_info

    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})


def test_small_work_runs_on_one_blas_thread_and_the_counts_come_back():
    from threadpoolctl import threadpool_limits

    from linsep._core.threads import BLAS_SERIAL_MAX_ENTRIES, serial_blas_below

    with threadpool_limits(limits=2, user_api="blas"):  # as on a machine whose BLAS uses two threads
        with serial_blas_below(BLAS_SERIAL_MAX_ENTRIES - 1):
            assert _blas_threads() == [1]
            with serial_blas_below(10):  # nested: the outer limit holds, and is restored by the outer block only
                assert _blas_threads() == [1]
            assert _blas_threads() == [1]
        assert _blas_threads() == [2]
        with serial_blas_below(BLAS_SERIAL_MAX_ENTRIES):  # large work keeps its threads
            assert _blas_threads() == [2]
        with pytest.raises(ZeroDivisionError), serial_blas_below(5):
            1 / 0
        assert _blas_threads() == [2]  # restored after an error too


def test_a_limit_set_in_one_thread_leaves_the_next_thread_free_to_set_it():
    """A serial block in the main thread, then one in a worker thread: both run on one BLAS thread.

    threadpoolctl (3.8 on) lets only one live Python thread set a process-wide
    OpenBLAS count, the first that sets it; the others' calls do nothing.  A
    block that kept that control on leaving would leave every later fit in a
    worker thread (a threaded grid search) on BLAS's full count.
    """
    from threadpoolctl import threadpool_limits

    from linsep._core.threads import serial_blas

    def set_blas_threads(limits):  # from a thread that then ends, as a program that never limited BLAS has it
        setter = threading.Thread(target=threadpool_limits, kwargs=dict(limits=limits, user_api="blas"))
        setter.start()
        setter.join()

    original = _blas_threads()
    set_blas_threads(2)
    try:
        if _blas_threads() != [2]:
            pytest.skip("BLAS runs one thread here whatever the limit")
        with serial_blas():  # the main thread limits first ...
            assert _blas_threads() == [1]
        assert _blas_threads() == [2]
        inside = []

        def worker():  # ... and then a worker thread, while the main thread still lives
            with serial_blas():
                inside.append(_blas_threads())
            inside.append(_blas_threads())

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(timeout=60)
        assert inside == [[1], [2]]
    finally:
        set_blas_threads(max(original, default=1))


@pytest.mark.parametrize("n_rows, serial", [(300, True), (30_000, False)])
def test_an_estimators_fit_runs_small_data_on_one_blas_thread(n_rows, serial):
    """The fit's compiled segment, observed through the solver plan, sees one BLAS thread for small X only."""
    from threadpoolctl import threadpool_limits

    from linsep import HoKashyapClassifier
    from linsep._core.threads import BLAS_SERIAL_MAX_ENTRIES
    from linsep.solvers.ho_kashyap.loops import ho_kashyap_segment

    seen = []

    class ObservedSegment:  # the compiled segment, recording the BLAS threads it runs under
        def __getattr__(self, name):  # numba's dispatcher API (linsep._core.compilation.prepare compiles through it)
            return getattr(ho_kashyap_segment, name)

        def __call__(self, *args):
            seen.append(_blas_threads())
            return ho_kashyap_segment(*args)

    n_cols = 40
    assert (n_rows * n_cols < BLAS_SERIAL_MAX_ENTRIES) == serial
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_rows, n_cols))
    y = (X[:, 0] + rng.standard_normal(n_rows) > 0).astype(int)
    model = HoKashyapClassifier(C=1.0, max_iter=5)
    model._solver_plan = {"segment": ObservedSegment()}
    with threadpool_limits(limits=2, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
        assert _blas_threads() == [2]
    assert seen and all(counts == ([1] if serial else [2]) for counts in seen), seen


# --- Sparse products on several threads (RowSplitCSR) ------------------------------------------------------

@pytest.mark.numerics
@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("shape, density", [((300, 40), 0.1), ((5, 3000), 0.01), ((1, 50), 0.5), ((200, 30), 0.0)])
def test_row_split_product_is_scipys_bit_for_bit(threads, shape, density):
    M = sp.random(*shape, density=density, format="csr", random_state=0)
    M = sp.vstack([M, sp.csr_matrix(np.ones((1, shape[1])))]).tocsr()  # one full row (the bias row of Yᵀ)
    v = np.random.default_rng(1).standard_normal(shape[1])
    split = RowSplitCSR(M, threads)
    assert split.parts is None or sum(part[2].nnz for part in split.parts) == M.nnz
    np.testing.assert_array_equal(split @ v, M @ v)
    V = np.random.default_rng(2).standard_normal((shape[1], 3))  # a matrix (a lockstep solve's columns): the same runs
    np.testing.assert_array_equal(split @ V, M @ V)


@pytest.mark.numerics
@pytest.mark.parametrize("name", ["hk", "mhks", "hkes", "lsvm"])
def test_threaded_sparse_products_give_the_same_fit(name, iterative):
    # BLAS on one thread in both fits (a threaded fit keeps it there; CG's dot products depend on it),
    # the products on 1 or 2 threads: the same fit, bit for bit, and the plan says which ran.
    from threadpoolctl import threadpool_limits

    from problems import sparse_problem
    from linsep import make_classifier
    from linsep._core.linalg import solver_limits

    X, y = sparse_problem(400, 60, density=0.1, noise=0.05)
    fits = {}
    for threads in (1, 2):
        with threadpool_limits(1), solver_limits(direct_max_columns=1, product_threads=threads), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits[threads] = make_classifier(name, **({"random_state": 0} if name == "hkes" else {})).fit(X, y)
        assert fits[threads]._fit_plans[0]["cg_product_threads"] == threads
    np.testing.assert_array_equal(fits[1].coef_, fits[2].coef_)
    np.testing.assert_array_equal(fits[1].intercept_, fits[2].intercept_)
    assert fits[1].n_iter_ == fits[2].n_iter_ and fits[1].status_ == fits[2].status_


def _threaded_product_in_child(queue):
    M = sp.random(400, 50, density=0.2, format="csr", random_state=0)
    v = np.ones(50)
    queue.put(bool(np.array_equal(RowSplitCSR(M, 2) @ v, M @ v)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork start method (POSIX)")
def test_threaded_products_work_in_a_forked_child():
    # The pool's threads do not survive a fork: the child makes its own pool (a stale one would hang).
    import multiprocessing

    M = sp.random(400, 50, density=0.2, format="csr", random_state=0)
    RowSplitCSR(M, 2) @ np.ones(50)  # the parent's pool exists
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_threaded_product_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and queue.get(timeout=5)
