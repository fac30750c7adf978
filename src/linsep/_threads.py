"""Threads for the compiled passes: how many a pass may use, and BLAS kept serial while they run.

The compiled passes of :mod:`linsep._loops` and :mod:`linsep._lsvm_loops`
split their rows over numba threads; this module decides how many, from the
size of the pass, the thread limits the program set (BLAS, OpenMP) and the
machine's load.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading

import numba

__all__ = ["PARALLEL_MIN_ENTRIES", "pass_threads", "serial_blas"]

# Below this many entries of X per pass, a pass by rows stays on one thread: starting the threads
# (about 10 µs a pass here) would cost more than splitting the work saves.
PARALLEL_MIN_ENTRIES = 1 << 18
# Concurrent parallel launches from several Python threads are unsafe with numba's workqueue
# threading layer; a pass whose lock is taken runs on one thread instead (no waiting).
_PARALLEL_LOCK = threading.Lock()


@functools.cache
def _controller():
    from threadpoolctl import ThreadpoolController  # a scikit-learn dependency

    return ThreadpoolController()


def _thread_pools():
    return [lib for lib in _controller().lib_controllers if lib.user_api in ("blas", "openmp")]


# BLAS thread counts are process-wide: threadpoolctl saves them on entry and restores them on exit, so two
# overlapping limits (A in, B in, A out, B out) would leave B's saved count of 1 for good.  One fit at a time
# sets and restores them (threadpoolctl also lets only one live Python thread set OpenBLAS's count).
_SERIAL_BLAS_LOCK = threading.Lock()


@contextlib.contextmanager
def serial_blas(active=True):
    """Keep BLAS to one thread while a compiled loop that calls it runs (when ``active``).

    The IRLS step's Gram matrix is one BLAS product per block of 1024 rows
    (:func:`_weighted_gram_rows`): threads inside each small product
    synchronise a thousand times per pass, and spin while waiting.  Measured
    at ``N = 10⁶, d = 100`` on 2 cores with other work running: 1.3 s with
    one BLAS thread, 12.7 s with two; splitting the rows over
    :func:`pass_threads` chunks instead gave 1.0 s.  This holds for a serial
    pass too, so every such loop asks for the limit, not only the one holding
    :data:`_PARALLEL_LOCK`.

    The limit is process-wide: only the caller that takes
    ``_SERIAL_BLAS_LOCK`` (without waiting) sets it, and it restores the
    counts it found on leaving; a loop running at the same time in another
    thread shares that limit while it lasts and leaves the counts alone.
    """
    if not (active and _SERIAL_BLAS_LOCK.acquire(blocking=False)):
        yield
        return
    try:
        with _controller().limit(limits=1, user_api="blas"):
            yield
    finally:
        _SERIAL_BLAS_LOCK.release()


def _machine_busy():
    """Whether the 1-minute load average reaches the number of cores (Unix; never elsewhere).

    With no idle core, OpenMP's threads spin while waiting for a descheduled
    partner: a two-thread pass on a 2-core machine at load 5 took 90 ms more
    than the serial pass, whatever its size.
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
