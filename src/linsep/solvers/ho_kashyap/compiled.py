"""The dense design's fast path: the Ho–Kashyap iteration in compiled segments.

:func:`iterate_compiled` runs ``linsep.solvers.ho_kashyap.loops.ho_kashyap_segment`` (the
same rules as the Python driver of :mod:`linsep.solvers.ho_kashyap`, from
``linsep.solvers.ho_kashyap.rules``) on an :class:`~linsep.designs.memory.InMemoryDesign`
with a Cholesky factor (or the factor of an eigendecomposition).  On the paper's small data sets a Python iteration
costs a dozen calls' overhead per step rather than its arithmetic; this loop
is an order of magnitude faster there (``benchmarks/bench_ho_kashyap.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linsep.solvers.ho_kashyap.rules import (
    HK_BUDGET_SPENT,
    HK_CONVERGED,
    HK_ILL_CONDITIONED,
    HK_NOT_SEPARABLE,
    HK_SEPARABLE,
    PROOF_RTOL,
    is_nonseparability_proof,
    patience_code,
)
from linsep._core.certificates import nonseparability_certificate
from linsep._core.linalg import PIVOT_TOL
from linsep.solvers.ho_kashyap.loops import ho_kashyap_segment
from linsep._core.result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE
from linsep._core.threads import PARALLEL_LOCK, pass_threads, row_chunks, serial_blas
from linsep._core.compilation import prepare

__all__ = ["SEGMENT_STEPS", "HKRun", "iterate_compiled"]

# Iterations per call of the compiled loop: its history buffers are allocated
# per segment, so an unbounded max_iter never allocates an unbounded array.
SEGMENT_STEPS = 4096

_STATUS_OF_CODE = {HK_SEPARABLE: SEPARABLE, HK_NOT_SEPARABLE: NOT_SEPARABLE, HK_CONVERGED: CONVERGED}


@dataclass
class HKRun:
    """Where an iteration loop ended: the final iterate and what was recorded on the way."""

    W: np.ndarray
    B: object
    k: int
    status: str
    factor: object
    certificate: object = None
    history: dict = field(default_factory=dict)
    best_W: np.ndarray | None = None
    best_iter: int = 0
    stats: object = None  # the last pass's statistics (Python driver)


def iterate_compiled(design, L, W, B, *, factor, absolute, irls_floor, learning_rate, max_iter, tol, relative,
                     stop_at_separation, ridge, offset, can_prove, Y_val, n_iter_no_change=None,
                     validation_tol=0.0, validation_reference=np.inf, segment_steps=SEGMENT_STEPS, threads=None,
                     pivot_tol=None, check_finite, segment=None, blas_limit=None, spectral=False):
    """The iteration in compiled segments of ``segment_steps``, from ``YᵀY + CĨ = L Lᵀ`` (``spectral``: ``= (L Lᵀ)⁺``).

    ``design`` and ``Y_val`` are in-memory dense designs.  Returns ``(run, threads)``,
    with ``run`` ``None`` if an IRLS step (``absolute``) meets a system that
    ``linsep._core.linalg.LeastSquaresFactor`` would not factor by Cholesky:
    the Python driver then runs the whole solve.  ``threads`` (``None``:
    ``linsep._core.threads.pass_threads``) splits a pass by rows; ``pivot_tol`` (``None``: the
    factorisation's own) is the Cholesky pivot test of the IRLS systems.  ``segment`` (``None``:
    ``ho_kashyap_segment``) is the compiled segment called and ``blas_limit`` (``None``:
    ``linsep._core.threads.serial_blas``) the BLAS limit the IRLS pass runs under: tests pass wrappers that
    observe them (``ho_kashyap(..., _plan={"segment": ..., "blas_limit": ...})``).  ``spectral`` (squared errors
    only): ``L`` is the ``p × r`` factor of an eigendecomposition
    (``linsep._core.linalg.LeastSquaresFactor.spectral_factor``), each W-step ``L (Lᵀ g)``.
    """
    if spectral and absolute:
        raise ValueError("an eigh factor (spectral) serves squared errors only: IRLS refactors by Cholesky")
    n_samples, n_cols = design.shape
    has_val = Y_val is not None
    # Data that fit in cache are swept by columns (better vectorised), larger data by rows (one pass).
    by_columns = max(design.size, Y_val.size if has_val else 0) <= design.by_columns_max_entries
    if by_columns:
        dtype = np.float64
        X, y, rows = design.by_columns(), np.empty(0), np.empty(0, dtype=np.intp)
        X_val = Y_val.by_columns() if has_val else np.empty((n_cols, 0))
        y_val, rows_val = y, rows
        n_chunks = 1
    else:
        X, y, rows = design.by_rows()
        dtype = X.dtype
        X_val, y_val, rows_val = Y_val.by_rows(dtype) if has_val else (
            np.empty((0, X.shape[1]), dtype=dtype), y[:0], rows[:0])
        n_chunks = pass_threads(X.shape[1] * n_samples) if threads is None else int(threads)
    # Held-out rows of the same X (HKES's own split): counted inside the training pass, so an
    # iteration reads X once, front to back, rather than as two row subsets.
    merged = (has_val and not by_columns and X_val is X and _increasing(rows) and _increasing(rows_val))
    W = np.array(W, dtype=float)  # updated in place
    B = np.array(B, dtype=dtype)
    E = np.empty(n_samples, dtype=dtype)
    best_W = np.empty(n_cols)
    W_prev = np.full(n_cols, np.nan)  # the previous iterate (IRLS fixed point); none yet
    # k, J_k, J_{k-1}, best k, best count, improving k, the patience's reference error
    state = np.array([0.0, np.nan, np.nan, 0.0, np.inf, 0.0, float(validation_reference)])
    L = np.array(L, dtype=float, order="C")  # refactored in place by IRLS
    D = np.ones(n_samples) if absolute else np.empty(0)  # IRLS weights D_0 = I
    traces = {"criterion": [], "training_errors": [], "validation_error": []}
    blas_limit = serial_blas if blas_limit is None else blas_limit
    parallel = n_chunks > 1 and PARALLEL_LOCK.acquire(blocking=False)
    try:
        with blas_limit(absolute and not by_columns):  # IRLS Gram products: rows split over chunks, not BLAS
            status = _run_segments(
                X, y, rows, X_val, y_val, rows_val, by_columns, n_chunks if parallel else 1, L, W, B, E, D, state,
                best_W, W_prev, traces, merged=merged, factor=factor, has_val=has_val, n_val=Y_val.shape[0] if has_val else 0,
                irls_floor=irls_floor, learning_rate=learning_rate, max_iter=max_iter, tol=tol, relative=relative,
                stop_at_separation=stop_at_separation, ridge=ridge, offset=offset, can_prove=can_prove,
                segment_steps=segment_steps, check_finite=check_finite, spectral=bool(spectral),
                segment=ho_kashyap_segment if segment is None else segment,
                n_iter_no_change=patience_code(n_iter_no_change), validation_tol=float(validation_tol),
                pivot_tol=PIVOT_TOL if pivot_tol is None else float(pivot_tol))
    finally:
        if parallel:
            PARALLEL_LOCK.release()
    threads_used = n_chunks if parallel else 1
    if status is None:
        return None, threads_used
    history = {name: np.concatenate(parts) for name, parts in traces.items()}
    if not has_val:
        del history["validation_error"]
    certificate = None
    if status == NOT_SEPARABLE and is_nonseparability_proof(np.asarray(E, dtype=float), np.asarray(B, dtype=float),
                                                            PROOF_RTOL):
        certificate = nonseparability_certificate(E, D if absolute else None)
    return HKRun(W=W, B=B, k=int(state[0]), status=status, factor=factor, certificate=certificate,
                 history=history, best_W=best_W if has_val else None, best_iter=int(state[3])), threads_used


def segment_selectors(*, by_columns, chunked, threads, reweighted):
    """The selector arguments of :func:`linsep.solvers.ho_kashyap.loops.ho_kashyap_segment`, in its order.

    Each is None for a part of the iteration the fit does not run (numba then
    compiles the segment without it) and True, or the thread count, for one it runs.
    """
    return (True if by_columns else None, None if by_columns else True, True if chunked else None,
            int(threads) if threads > 1 else None, True if reweighted else None)


def _increasing(rows):
    """Whether ``rows`` is a non-empty, strictly increasing list of row indices."""
    return rows.shape[0] > 0 and bool(np.all(rows[1:] > rows[:-1]))


def _run_segments(X, y, rows, X_val, y_val, rows_val, by_columns, n_chunks, L, W, B, E, D, state, best_W, W_prev,
                  traces, *, merged, factor, has_val, n_val, irls_floor, learning_rate, max_iter, tol, relative,
                  stop_at_separation, ridge, offset, can_prove, segment_steps, check_finite, pivot_tol,
                  n_iter_no_change, validation_tol, segment, spectral):
    """Call the compiled loop segment by segment; return the status, or ``None`` for an ill-conditioned IRLS system."""
    chunked = not by_columns and row_chunks.py_func(E.shape[0], X.shape[1]) > 1
    selectors = segment_selectors(by_columns=by_columns, chunked=chunked, threads=n_chunks, reweighted=D.shape[0] > 0)
    status = None
    while status is None:
        steps = min(segment_steps, max_iter - int(state[0]))
        criterion = np.empty(steps + 1)
        training_errors = np.empty(steps + 1, dtype=np.int64)
        validation_counts = np.empty(steps + 1 if has_val else 0, dtype=np.int64)
        # Scalars cast to one type each, so that numba compiles the loop once, not per argument type.
        args = (X, y, rows, X_val, y_val, rows_val, *selectors, L, W, B, E, D, float(offset), float(learning_rate),
                float(ridge), float(irls_floor), pivot_tol, best_W, state, criterion, training_errors,
                validation_counts, int(steps), float(tol), bool(relative), bool(stop_at_separation), bool(can_prove),
                PROOF_RTOL, not traces["criterion"], W_prev, int(n_iter_no_change), float(validation_tol),
                bool(merged), spectral)
        if not traces["criterion"]:
            # The variant is decided by the selectors and the types of the data and vectors (the rest is fixed).
            prepare(segment, args, "the Ho–Kashyap loop",
                    key=(selectors, X.dtype, X_val.dtype, B.dtype, E.dtype, D.dtype, y.dtype, y_val.dtype))
        code, n_recorded = segment(*args)
        if code == HK_ILL_CONDITIONED:
            return None
        traces["criterion"].append(criterion[:n_recorded])
        traces["training_errors"].append(training_errors[:n_recorded])
        traces["validation_error"].append(validation_counts[:n_recorded] / max(n_val, 1))
        if state[0] > 0:  # a non-finite J_0 (from huge initial weights) is repaired by the first solve
            check_finite(state[1], int(state[0]), factor)
        if code != HK_BUDGET_SPENT:
            status = _STATUS_OF_CODE[code]
        elif state[0] >= max_iter:
            status = MAX_ITER
    return status
