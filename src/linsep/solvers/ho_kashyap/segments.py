"""The dense design's fast path, driven from Python: the Ho–Kashyap iteration in compiled segments.

This module holds no compiled code: the segment is in :mod:`.loops` (and the float32 row pass in :mod:`.rows`);
here its records are filled, it is called segment by segment, and the cross-validation's lockstep is run.
:func:`iterate_compiled` runs ``linsep.solvers.ho_kashyap.loops.ho_kashyap_segment`` (the
same rules as the Python driver of :mod:`linsep.solvers.ho_kashyap`, from
``linsep.solvers.ho_kashyap.rules``) on an :class:`~linsep.designs.memory.InMemoryDesign`
with a Cholesky factor (or the factor of an eigendecomposition).  On the paper's small data sets a Python iteration
costs a dozen calls' overhead per step rather than its arithmetic; this loop
is an order of magnitude faster there (``benchmarks/bench_ho_kashyap.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linsep.solvers.ho_kashyap.rules import (
    HK_BUDGET_SPENT,
    HK_CONVERGED,
    HK_ILL_CONDITIONED,
    HK_NOT_SEPARABLE,
    HK_SEPARABLE,
    PROOF_RTOL,
    HKRun,
    is_nonseparability_proof,
    patience_code,
)
from linsep._core.certificates import nonseparability_certificate
from linsep._core.linalg import PIVOT_TOL
from linsep.solvers.ho_kashyap.loops import (PROGRESS, SegmentData, SegmentOptions, SegmentRecords, SegmentVectors,
                                             ho_kashyap_segment)
from linsep._core.result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE
from linsep._core.threads import PARALLEL_LOCK, pass_threads, row_chunks, serial_blas
from linsep._core.compilation import prepare

__all__ = ["SEGMENT_STEPS", "Lockstep", "LockstepTicket", "iterate_compiled", "segment_options"]

# Iterations per call of the compiled loop: its history buffers are allocated
# per segment, so an unbounded max_iter never allocates an unbounded array.
SEGMENT_STEPS = 4096

_STATUS_OF_CODE = {HK_SEPARABLE: SEPARABLE, HK_NOT_SEPARABLE: NOT_SEPARABLE, HK_CONVERGED: CONVERGED}


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
    observe them (``ho_kashyap(..., plan=HKPlan(segment=..., blas_limit=...))``).  ``spectral`` (squared errors
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
    progress = np.array([0.0, np.nan, np.nan, 0.0, np.inf, 0.0])  # loops.PROGRESS, at k = 0
    assert progress.shape == (len(PROGRESS),)
    L = np.array(L, dtype=float, order="C")  # refactored in place by IRLS
    D = np.ones(n_samples) if absolute else np.empty(0)  # IRLS weights D_0 = I
    data = SegmentData(X, y, rows, X_val, y_val, rows_val)
    vectors = SegmentVectors(L, W, B, E, D, best_W, W_prev)
    options = segment_options(offset=offset, learning_rate=learning_rate, ridge=ridge, irls_floor=irls_floor,
                              pivot_tol=PIVOT_TOL if pivot_tol is None else pivot_tol, tol=tol, relative=relative,
                              stop_at_separation=stop_at_separation, can_prove=can_prove,
                              n_iter_no_change=n_iter_no_change, validation_tol=validation_tol,
                              validation_reference=validation_reference, merged=merged, spectral=spectral)
    traces = {"criterion": [], "training_errors": [], "validation_error": []}
    blas_limit = serial_blas if blas_limit is None else blas_limit
    parallel = n_chunks > 1 and PARALLEL_LOCK.acquire(blocking=False)
    try:
        with blas_limit(absolute and not by_columns):  # IRLS Gram products: rows split over chunks, not BLAS
            status = _run_segments(data, vectors, progress, options, traces, by_columns=by_columns,
                                   threads=n_chunks if parallel else 1, factor=factor, has_val=has_val,
                                   n_val=Y_val.shape[0] if has_val else 0, max_iter=max_iter,
                                   segment_steps=segment_steps, check_finite=check_finite,
                                   segment=ho_kashyap_segment if segment is None else segment)
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
    return HKRun(W=W, B=B, k=int(progress[PROGRESS.index("k")]), status=status, factor=factor,
                 certificate=certificate, history=history, best_W=best_W if has_val else None,
                 best_iter=int(progress[PROGRESS.index("best_iter")])), threads_used


def segment_options(*, offset, learning_rate, ridge, irls_floor, pivot_tol, tol, relative, stop_at_separation,
                    can_prove, n_iter_no_change, validation_tol, validation_reference, merged, spectral,
                    max_steps=0, record_first=True):
    """The :class:`~linsep.solvers.ho_kashyap.loops.SegmentOptions` of a run, each field cast to its one type.

    numba compiles a variant per type of each field: a ``C`` given as an int, or a tolerance as a NumPy float,
    would compile the segment anew.  ``n_iter_no_change`` is the rules' code (``rules.patience_code``) or ``None``.
    """
    return SegmentOptions(offset=float(offset), mu=float(learning_rate), ridge=float(ridge),
                          irls_floor=float(irls_floor), pivot_tol=float(pivot_tol), max_steps=int(max_steps),
                          tol=float(tol), relative=bool(relative), stop_at_separation=bool(stop_at_separation),
                          can_prove=bool(can_prove), proof_rtol=float(PROOF_RTOL), record_first=bool(record_first),
                          n_iter_no_change=int(patience_code(n_iter_no_change)), validation_tol=float(validation_tol),
                          validation_reference=float(validation_reference), merged=bool(merged),
                          spectral=bool(spectral))


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


def _run_segments(data, vectors, progress, options, traces, *, by_columns, threads, factor, has_val, n_val, max_iter,
                  segment_steps, check_finite, segment):
    """Call the compiled loop segment by segment; return the status, or ``None`` for an ill-conditioned IRLS system."""
    E, D = vectors.E, vectors.D
    chunked = not by_columns and row_chunks.py_func(E.shape[0], data.X.shape[1]) > 1
    selectors = segment_selectors(by_columns=by_columns, chunked=chunked, threads=threads, reweighted=D.shape[0] > 0)
    status = None
    while status is None:
        steps = min(segment_steps, max_iter - int(progress[0]))
        records = SegmentRecords(np.empty(steps + 1), np.empty(steps + 1, dtype=np.int64),
                                 np.empty(steps + 1 if has_val else 0, dtype=np.int64))
        first = not traces["criterion"]
        args = (data, *selectors, vectors, progress, records,
                options._replace(max_steps=int(steps), record_first=first))
        if first:
            # The variant is decided by the selectors and the types of the data and vectors (the rest is fixed).
            prepare(segment, args, "the Ho–Kashyap loop",
                    key=(selectors, data.X.dtype, data.X_val.dtype, vectors.B.dtype, E.dtype, D.dtype, data.y.dtype,
                         data.y_val.dtype))
        code, n_recorded = segment(*args)
        if code == HK_ILL_CONDITIONED:
            return None
        traces["criterion"].append(records.criterion[:n_recorded])
        traces["training_errors"].append(records.training_errors[:n_recorded])
        traces["validation_error"].append(records.validation_errors[:n_recorded] / max(n_val, 1))
        if progress[0] > 0:  # a non-finite J_0 (from huge initial weights) is repaired by the first solve
            check_finite(progress[1], int(progress[0]), factor)
        if code != HK_BUDGET_SPENT:
            status = _STATUS_OF_CODE[code]
        elif progress[0] >= max_iter:
            status = MAX_ITER
    return status


@dataclass
class _LockstepRun:
    """A run handed to :class:`Lockstep`: its fold, factor, start, and what finishes its result."""

    fold: int
    factor_matrix: np.ndarray
    spectral: bool
    W: np.ndarray
    B: np.ndarray
    n_val: int
    options: dict
    factor: object
    finish: object
    check_finite: object


class Lockstep:
    """The runs of a cross-validation wave on one ``X``, iterated side by side: one read of ``X`` per iteration.

    ``HoKashyapClassifierCV`` hands each (C, fold) run of a wave to
    :func:`linsep.solvers.ho_kashyap.ho_kashyap` with ``plan=HKPlan(lockstep=(lockstep, fold))``; a run the compiled
    segment would iterate by rows, with the fold's validation rows merged into its pass, is set up there
    (its factor, ``W_1``) and left here (:meth:`add` returns a ticket), any other runs as usual.  :meth:`results`
    then iterates every ticket's run at once: each iteration is one pass over ``X``
    (:func:`linsep.solvers.ho_kashyap.loops.lockstep_pass`) for all of them, and each run applies the rules of
    :func:`linsep.solvers.ho_kashyap.loops.ho_kashyap_segment` to its own statistics, in the same order, with the
    same compiled W-step.  A run's iterates, validation curve and verdict are those it has alone, bit for bit;
    what changes is that ``X`` is read once per iteration for the wave instead of once per run.

    Parameters
    ----------
    X : ndarray of shape (N, d), float32, C order
    y : ndarray of shape (N,)
        The problem's labels ``±1`` (every run's signs).
    fold_of : ndarray of shape (N,) of int
        The fold whose validation set holds each row (the folds partition the rows): run ``f``'s training rows
        are the others, in row order.
    threads : int
        Groups of runs on threads (:func:`linsep._core.threads.pass_threads` of the caller's pass).
    """

    def __init__(self, X, y, fold_of, threads=1):
        self.X = X
        self.y = np.asarray(y, dtype=X.dtype)
        self.fold_of = np.asarray(fold_of, dtype=np.int64)
        self.n_train = {f: int(np.count_nonzero(self.fold_of != f)) for f in np.unique(self.fold_of)}
        self.threads = int(threads)
        self.runs = []

    @staticmethod
    def serves(X):
        """Whether runs on ``X`` can go in lockstep (float32, C order: the pass of :mod:`.rows`)."""
        return isinstance(X, np.ndarray) and X.dtype == np.float32 and X.ndim == 2 and X.flags.c_contiguous

    def accepts(self, design, Y_val, fold):
        """Whether a run (``design``, ``Y_val`` views of ``X``) is fold ``fold``'s training rows and validation rows."""
        from linsep._core.signed_design import SignedDesign

        Y, V = getattr(design, "Y", None), getattr(Y_val, "Y", None)
        return (isinstance(Y, SignedDesign) and isinstance(V, SignedDesign) and Y.X is self.X and V.X is self.X
                and Y.rows is not None and Y.rows.shape[0] == self.n_train.get(fold, -1)
                and V.rows is not None and V.rows.shape[0] == self.X.shape[0] - Y.rows.shape[0]
                and design.size > design.by_columns_max_entries and _increasing(Y.rows) and _increasing(V.rows))

    def add(self, fold, factor_matrix, spectral, W, B, *, factor, options, n_val, finish, check_finite):
        """Leave a run here; returns its ticket for :meth:`results`.

        ``finish`` makes the run's result from its :class:`HKRun`; ``check_finite(J, k, factor)`` raises on a
        non-finite criterion, as :func:`iterate_compiled`'s does.
        """
        self.runs.append(_LockstepRun(fold, np.array(factor_matrix, dtype=float, order="C"), bool(spectral),
                                      np.array(W, dtype=float), np.asarray(B, dtype=self.X.dtype), int(n_val),
                                      options, factor, finish, check_finite))
        return LockstepTicket(self, len(self.runs) - 1)

    def results(self, done):
        """``done`` with every ticket replaced by its run's result, the runs iterated side by side."""
        finished = self._iterate() if self.runs else []
        return [finished[item.index] if isinstance(item, LockstepTicket) and item.lockstep is self else item
                for item in done]

    def _iterate(self):
        from linsep.solvers.ho_kashyap.loops import _cholesky_solve, _spectral_solve, lockstep_pass, lockstep_statistics
        from linsep.solvers.ho_kashyap.rows import LockstepParts, LockstepRuns
        from linsep.solvers.ho_kashyap.rules import is_nonseparability_proof, patience_spent, stop_code, \
            validation_improved

        runs, X = self.runs, self.X
        options = runs[0].options  # the rules' settings are the fit's, the same for every run
        n_runs, p = len(runs), runs[0].W.shape[0]
        n_train = np.array([self.n_train[run.fold] for run in runs], dtype=np.int64)
        n_max = int(n_train.max())
        dtype = X.dtype
        W = np.stack([run.W for run in runs])
        B = np.zeros((n_runs, n_max), dtype=dtype)
        for k, run in enumerate(runs):
            B[k, :n_train[k]] = run.B
        E, B_next = np.zeros_like(B), np.zeros_like(B)
        offset = np.array([run.options["offset"] for run in runs])
        ridge = [run.options["ridge"] for run in runs]
        max_chunks = int(max(row_chunks.py_func(int(n), X.shape[1]) for n in n_train))
        parts, reals = np.zeros((n_runs, max_chunks, p)), np.zeros((n_runs, max_chunks, 3))
        flags, counts = np.zeros((n_runs, max_chunks, 4), dtype=np.int64), np.zeros(n_runs, dtype=np.int64)
        run_fold = np.array([run.fold for run in runs], dtype=np.int64)
        two_mu, tol, relative = 2.0 * options["learning_rate"], float(options["tol"]), bool(options["relative"])
        max_iter, patience = options["max_iter"], patience_code(options["n_iter_no_change"])
        g = np.empty((n_runs, p))

        def pass_of(active):
            """The pass of the runs ``active``: their statistics and validation counts, by run."""
            index = np.asarray(active, dtype=np.int64)
            chunks = lockstep_pass(X, self.y, self.fold_of, index, LockstepRuns(W, B, E, B_next, n_train, offset, run_fold),
                                   LockstepParts(parts, reals, flags, counts), two_mu, tol, self.threads)
            out = {}
            for a, k in enumerate(active):
                c = int(chunks[a])
                out[k] = (*lockstep_statistics(parts[k, :c], reals[k, :c], flags[k, :c], W[k], ridge[k], g[k]),
                          int(counts[k]))
            return out

        state = [dict(k=0, J_prev=np.nan, best_iter=0, last_improvement=0, status=None, W_prev=np.full(p, np.nan),
                      criterion=[], training_errors=[], validation=[]) for _ in runs]
        active = list(range(n_runs))
        stats = pass_of(active)
        for k in active:  # the starting iterate, recorded
            J, _, wrong, _, _, _, count = stats[k]
            s = state[k]
            s.update(J=J, best_count=count, best_W=W[k].copy())
            s["criterion"].append(J)
            s["training_errors"].append(wrong)
            s["validation"].append(count)
        while active:
            stepping = []
            for k in active:
                s, run = state[k], runs[k]
                J, fixed_point, wrong, separated, max_e, max_b, _ = stats[k]
                n = n_train[k]
                code = HK_BUDGET_SPENT
                if options["stop_at_separation"] and separated:
                    code = HK_SEPARABLE
                elif (run.options["can_prove"] and max_e <= PROOF_RTOL * max_b
                      and is_nonseparability_proof(E[k, :n], B[k, :n], PROOF_RTOL)):
                    code = HK_NOT_SEPARABLE
                else:
                    code = stop_code(relative, False, fixed_point, separated, False, tol, J, s["J_prev"])
                    if code == HK_BUDGET_SPENT and patience_spent(s["k"], s["last_improvement"], patience):
                        code = HK_CONVERGED
                if code != HK_BUDGET_SPENT:
                    s["status"] = _STATUS_OF_CODE[code]
                elif s["k"] >= max_iter:
                    s["status"] = MAX_ITER
                else:
                    B[k, :n] = B_next[k, :n]
                    s["W_prev"] = W[k].copy()
                    w = np.empty(p)
                    (_spectral_solve if run.spectral else _cholesky_solve)(run.factor_matrix, g[k], w)
                    W[k] = w
                    s["J_prev"] = J
                    stepping.append(k)
            active = stepping
            if not active:
                break
            stats = pass_of(active)
            for k in active:
                s, run = state[k], runs[k]
                J, _, wrong, _, _, _, count = stats[k]
                s["k"] += 1
                s["J"] = J
                run.check_finite(J, s["k"], run.factor)
                s["criterion"].append(J)
                s["training_errors"].append(wrong)
                s["validation"].append(count)
                n_val = run.n_val
                if validation_improved(count / n_val, s["best_count"] / n_val, run.options["validation_reference"],
                                       run.options["validation_tol"]):
                    s["last_improvement"] = s["k"]
                if count < s["best_count"]:
                    s["best_count"], s["best_iter"], s["best_W"] = count, s["k"], W[k].copy()
        finished = []
        for k, (s, run) in enumerate(zip(state, runs)):
            n = n_train[k]
            certificate = None
            if s["status"] == NOT_SEPARABLE and is_nonseparability_proof(E[k, :n].astype(float), B[k, :n].astype(float),
                                                                         PROOF_RTOL):
                certificate = nonseparability_certificate(E[k, :n].copy(), None)
            history = {"criterion": np.array(s["criterion"], dtype=float),
                       "training_errors": np.array(s["training_errors"], dtype=np.int64),
                       "validation_error": np.array(s["validation"], dtype=np.int64) / max(run.n_val, 1)}
            hk = HKRun(W=W[k].copy(), B=B[k, :n].copy(), k=s["k"], status=s["status"], factor=run.factor,
                       certificate=certificate, history=history, best_W=s["best_W"], best_iter=s["best_iter"])
            finished.append(run.finish(hk))
        return finished


@dataclass
class LockstepTicket:
    """A run left to a :class:`Lockstep`: its result comes from :meth:`Lockstep.results`."""

    lockstep: Lockstep
    index: int
