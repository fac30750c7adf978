"""Threads for the compiled passes: how many a pass may use, and BLAS kept serial while they run.

The compiled passes of :mod:`linsep.solvers.ho_kashyap.loops` and :mod:`linsep.solvers.lsvm.loops`
split their rows over numba threads; this module decides how many, from the
size of the pass, the thread limits the program set (BLAS, OpenMP) and the
machine's load.  What a pass computes never depends on that number: its rows
are summed in chunks fixed by the shape of ``X`` alone (:func:`row_chunks`,
:func:`chunk_range`), and the chunks' partial sums are added in chunk order;
threads only decide who computes which chunk.  So a fit gives the same bits
on one thread or several, on an idle or a loaded machine, alone or beside
other fits.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = ["BLAS_SERIAL_MAX_ENTRIES", "PARALLEL_MIN_ENTRIES", "RowSplitCSR", "chunk_range", "pass_threads",
           "row_chunks", "serial_blas", "serial_blas_below", "serial_blas_for"]

# Below this many entries of X per pass, a pass by rows stays on one thread: starting the threads
# (about 10 µs a pass here) would cost more than splitting the work saves.
PARALLEL_MIN_ENTRIES = 1 << 18
# Above it, the rows are summed in at most this many chunks (enough for an even share on 2–16 threads;
# each chunk costs one partial vector and one reduction step) ...
MAX_ROW_CHUNKS = 64
# ... whose bounds fall on multiples of this many rows: the IRLS Gram matrix is summed in blocks of 1024
# rows within a chunk (linsep.solvers.ho_kashyap.loops._weighted_gram_rows), and a partial block costs a whole one.
CHUNK_ROW_MULTIPLE = 1024
# Below this many entries of X, a fit runs all its BLAS work (products with X, the factorisations of X or of its
# Gram matrix) on one BLAS thread (serial_blas_below): on an idle machine threads rarely pay below it, and on a
# busy one OpenBLAS's threads spin waiting for a descheduled partner.  The measurements:
# benchmarks/bench_blas_threads.py, docs/performance_notes.md.
BLAS_SERIAL_MAX_ENTRIES = 1 << 20
# Concurrent parallel launches from several Python threads are unsafe with numba's workqueue
# threading layer; a pass whose lock is taken runs on one thread instead (no waiting).
PARALLEL_LOCK = threading.Lock()


@functools.cache
def _controller():
    from threadpoolctl import ThreadpoolController  # a scikit-learn dependency

    return ThreadpoolController()


def _thread_pools():
    return [lib for lib in _controller().lib_controllers if lib.user_api in ("blas", "openmp")]


@functools.cache
def _blas_pools():
    return tuple(lib for lib in _controller().lib_controllers if lib.user_api == "blas")


# BLAS thread counts are process-wide: a limit saves them on entry and restores them on exit, so two
# overlapping limits (A in, B in, A out, B out) would leave B's saved count of 1 for good.  One fit at a time
# sets and restores them, from its own thread (a count restored from another Python thread than the one that
# set it did not always reach OpenBLAS).
_SERIAL_BLAS_LOCK = threading.Lock()


@contextlib.contextmanager
def serial_blas(active=True):
    """Keep BLAS to one thread while a block runs (when ``active``).

    Two uses.  The IRLS step's Gram matrix is one BLAS product per block of
    1024 rows (:func:`_weighted_gram_rows`): threads inside each small
    product synchronise a thousand times per pass, and spin while waiting,
    which made the pass several times slower than on one BLAS thread, and
    slower than splitting the rows over :func:`pass_threads` chunks (the
    measurement: ``docs/design.md``, performance notes).  And a whole fit
    on small data (:func:`serial_blas_below`), whose products and
    factorisations are too small for threads to pay.

    The limit is process-wide: only the caller that takes
    ``_SERIAL_BLAS_LOCK`` (without waiting) sets it, and it restores the
    counts it found on leaving; a block running at the same time in another
    thread shares that limit while it lasts and leaves the counts alone.
    Pools already on one thread are not touched, so the limit costs two
    reads of the thread counts where BLAS is serial anyway.
    """
    if not (active and _SERIAL_BLAS_LOCK.acquire(blocking=False)):
        yield
        return
    try:
        threaded = [(pool, pool.num_threads) for pool in _blas_pools()]
        threaded = [(pool, count) for pool, count in threaded if count > 1]
        for pool, _ in threaded:
            pool.set_num_threads(1)
        try:
            yield
        finally:
            for pool, count in threaded:
                pool.set_num_threads(count)
            if threaded:
                _release_blas_control()
    finally:
        _SERIAL_BLAS_LOCK.release()


def _release_blas_control():
    """Give up the right to set OpenBLAS's thread count that setting it gave this thread.

    threadpoolctl (3.8 on) lets one Python thread at a time set the count of
    an OpenBLAS whose thread pool is process-wide: the first thread that sets
    it, for as long as that thread lives; the others' calls then do nothing,
    silently.  Without this, the first fit in the main thread would keep
    every later fit in a worker thread (a threaded grid search, a web server)
    on BLAS's full thread count.  A ``threadpool_limits`` block around the
    fit still works: it takes the control back when it restores its counts.
    A thread that keeps the control (one that set the count outside such a
    block and still runs) is left alone, and then a fit in another thread runs
    with that thread's count.  Older threadpoolctl has no such rule and no such
    method.
    """
    for pool in _blas_pools():
        release = getattr(type(pool), "clear_controlling_thread", None)
        if release is not None:
            release()  # a no-op unless this thread holds the control


def serial_blas_below(n_entries):
    """:func:`serial_blas` for work on fewer than :data:`BLAS_SERIAL_MAX_ENTRIES` entries.

    The rule for small BLAS work, taken once per fit (the estimators'
    ``fit`` and ``partial_fit``, ``linsep.estimators.base``): a fit of a
    matrix with fewer entries keeps every product and factorisation it makes
    on one BLAS thread, whatever the machine's load and BLAS settings; a
    larger fit keeps its threads.
    """
    return serial_blas(n_entries < BLAS_SERIAL_MAX_ENTRIES)


def serial_blas_for(solver):
    """:func:`serial_blas` while ``solver`` multiplies on several threads (its ``product_threads``, 1 if absent).

    Threaded sparse products (:class:`RowSplitCSR`) need the cores that OpenBLAS's waiting threads would
    take after any BLAS call (CG's dot products): without this, no gain was measured on 2 cores.
    """
    return serial_blas(getattr(solver, "product_threads", 1) > 1)


def _machine_busy():
    """Whether the 1-minute load average reaches the number of cores (Unix; never elsewhere).

    With no idle core, OpenMP's threads spin while waiting for a descheduled
    partner: a two-thread pass then costs more than the serial one, whatever
    its size (``docs/design.md``, performance notes).
    """
    try:
        return os.getloadavg()[0] >= (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return False


def pass_threads(n_entries):
    """Threads for a compiled pass over ``n_entries`` entries of ``X``: 1 below :data:`PARALLEL_MIN_ENTRIES`.

    Above it, numba's thread count (``NUMBA_NUM_THREADS``,
    ``numba.set_num_threads``) capped by the current limits of the BLAS and
    OpenMP thread pools (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
    ``threadpoolctl.threadpool_limits``): a program that keeps BLAS to one
    thread per process (as scikit-learn's parallel helpers and ``make test``
    do) gets one thread here too, and never more threads than cores.  A
    machine without an idle core (load average >= cores) gets one thread.
    """
    if n_entries < PARALLEL_MIN_ENTRIES or _machine_busy():
        return 1
    threads = numba.get_num_threads()
    for lib in _thread_pools():
        threads = min(threads, max(1, lib.num_threads))
    return threads


@njit(cache=True, nogil=True)
def row_chunks(n_rows, n_cols):
    """Number of row chunks of a compiled pass over an ``n_rows × n_cols`` matrix: fixed by the shape alone.

    One below :data:`PARALLEL_MIN_ENTRIES` entries (the pass is one serial
    sum); above, one chunk per :data:`CHUNK_ROW_MULTIPLE` rows, at most
    :data:`MAX_ROW_CHUNKS`.  The thread count (:func:`pass_threads`) never
    enters: the order in which a pass adds its rows, and so its rounding,
    is the same on any number of threads.
    """
    if n_rows * n_cols < PARALLEL_MIN_ENTRIES:
        return 1
    return min(MAX_ROW_CHUNKS, (n_rows + CHUNK_ROW_MULTIPLE - 1) // CHUNK_ROW_MULTIPLE)


@njit(cache=True, nogil=True)
def chunk_range(n_rows, n_chunks, chunk):
    """Rows ``lo:hi`` of chunk ``chunk`` among ``n_chunks`` (:func:`row_chunks`): contiguous, whole blocks of rows.

    ``n_chunks = 1`` gives ``0:n_rows``.
    """
    blocks = (n_rows + CHUNK_ROW_MULTIPLE - 1) // CHUNK_ROW_MULTIPLE
    lo = (chunk * blocks // n_chunks) * CHUNK_ROW_MULTIPLE
    hi = ((chunk + 1) * blocks // n_chunks) * CHUNK_ROW_MULTIPLE
    return min(lo, n_rows), min(hi, n_rows)


@functools.cache
def _product_pool():
    """The threads that compute the row parts of :class:`RowSplitCSR` products (one pool per process)."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="linsep-product")


if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's pool threads: it makes its own
    os.register_at_fork(after_in_child=_product_pool.cache_clear)


class RowSplitCSR:
    """A CSR matrix whose products ``M @ v`` run on ``threads`` threads, one run of rows each.

    The conjugate-gradient W-steps on wide sparse data spend most of their time in the products ``Y v``
    and ``Yᵀ u`` (two per CG iteration), which SciPy computes on one thread.  Here the rows are cut into
    ``threads`` contiguous runs holding about as many stored entries each (views of ``M``'s arrays, no
    copy of the data), and each run's product is SciPy's own, in a pool thread (SciPy releases the GIL
    in its sparse kernels).  Every row is summed by SciPy in the same order whatever the thread count,
    so the product is ``M @ v`` bit for bit.  Its gain on the text-like problems of
    ``benchmarks/bench_sparse_text.py`` is in ``docs/performance_notes.md``.

    Parameters
    ----------
    matrix : scipy.sparse CSR matrix
    threads : int
        How many runs of rows (:func:`pass_threads` decides it for a fit); 1 keeps SciPy's product.
    """

    def __init__(self, matrix, threads):
        self.matrix = matrix
        self.shape, self.dtype, self.nnz = matrix.shape, matrix.dtype, matrix.nnz
        self.parts = None
        if threads > 1 and matrix.shape[0] > 1:
            indptr = matrix.indptr
            cuts = np.searchsorted(indptr, np.arange(1, threads) * (matrix.nnz // threads))
            bounds = np.unique(np.r_[0, np.clip(cuts, 0, matrix.shape[0]), matrix.shape[0]])
            self.parts = [(lo, hi, sp.csr_matrix((matrix.data[indptr[lo]:indptr[hi]],
                                                  matrix.indices[indptr[lo]:indptr[hi]],
                                                  indptr[lo:hi + 1] - indptr[lo]), shape=(hi - lo, matrix.shape[1])))
                          for lo, hi in zip(bounds[:-1], bounds[1:])]
            if len(self.parts) < 2:
                self.parts = None

    def __matmul__(self, v):
        v = np.asarray(v)
        if self.parts is None or v.ndim not in (1, 2):
            return self.matrix @ v
        # a vector, or the columns of a matrix (a lockstep solve's directions): the same runs of rows
        out = np.empty((self.shape[0],) + v.shape[1:], dtype=np.result_type(self.dtype, v.dtype))

        def product(part):
            lo, hi, rows = part
            out[lo:hi] = rows @ v

        futures = [_product_pool().submit(product, part) for part in self.parts[1:]]
        product(self.parts[0])  # the calling thread computes one part itself
        for future in futures:
            future.result()
        return out
