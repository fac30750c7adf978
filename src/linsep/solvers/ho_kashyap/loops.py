"""The compiled Ho–Kashyap segment: many iterations of the margin-update rule per call.

The Ho–Kashyap iteration is sequential in :math:`k` (:math:`W_{k+1}` needs :math:`E_k`);
on the small data sets it is usually run on, a NumPy iteration costs a dozen
calls' overhead rather than its arithmetic, and no BLAS call can compute
``Y W``, ``E``, the new margin and ``Yᵀ(B + offset)`` in one pass over ``Y``.
:func:`ho_kashyap_segment` does that pass in compiled code (numba), by columns
for data that fit in cache and by rows (fixed chunks of
:func:`linsep._core.threads.row_chunks`, so a fit is bit-identical on any
number of threads) otherwise, with the float32 pass of :mod:`.rows`.  The
NumPy Ho–Kashyap loop of :mod:`.solver` remains for what the compiled one
does not cover (sparse data, modified HK, some SVD factorisations, and the
eigh factorisation of a formed ``Y``) and as the reference the compiled loop is tested against;
both apply the rules of :mod:`.rules`.

``cache=True`` keeps the compiled code on disk, so only the first use of a
loop on a machine, for a kind of data, pays its compilation; a new process
loads it.  The segment is compiled per kind of fit: its selector arguments
(see :func:`ho_kashyap_segment`) leave out of the compiled code every part a
fit does not run, and the float32 pass is chosen by type when numba compiles
(:func:`_pass_of_type`).  :mod:`linsep.warmup` compiles every kind ahead of
time.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from linsep.solvers.ho_kashyap.rules import (
    HK_BUDGET_SPENT,
    HK_CONVERGED,
    HK_ILL_CONDITIONED,
    HK_NOT_SEPARABLE,
    HK_SEPARABLE,
    is_nonseparability_proof,
    patience_spent,
    stop_code,
    validation_improved,
    weights_stand_still,
)

from linsep._core.irls import irls_weights_into
from linsep.solvers.ho_kashyap.rows import (_FAST, _accumulate, _count_rows_narrow, _margin_update, _pass_merged_narrow,
                                            lockstep_pass_narrow)
from linsep._core.threads import chunk_range, row_chunks

__all__ = ["PROGRESS", "SegmentData", "SegmentOptions", "SegmentRecords", "SegmentVectors", "ho_kashyap_segment",
           "lockstep_pass", "lockstep_statistics"]

# --- The segment's records: named tuples, which numba types field by field (and its disk cache keys by class) ------

SegmentData = namedtuple("SegmentData", "X y rows X_val y_val rows_val")
"""The data of :func:`ho_kashyap_segment` in its layout: training ``X, y, rows``, validation ``X_val, y_val, rows_val``."""

SegmentVectors = namedtuple("SegmentVectors", "L W B E D best_W W_prev")
"""What :func:`ho_kashyap_segment` updates in place: the factor ``L``, ``W``, ``B``, ``E``, the IRLS weights ``D``
(empty for squared errors), the best iterate ``best_W`` and the previous one ``W_prev``."""

SegmentRecords = namedtuple("SegmentRecords", "criterion training_errors validation_errors")
"""The per-iterate records a segment fills (one entry per iterate)."""

SegmentOptions = namedtuple("SegmentOptions", "offset mu ridge irls_floor pivot_tol max_steps tol relative "
                            "stop_at_separation can_prove proof_rtol record_first n_iter_no_change validation_tol "
                            "validation_reference merged spectral")
"""The scalars of a segment (:func:`ho_kashyap_segment`), each of one type (float, int or bool) so that numba
compiles one variant: see ``linsep.solvers.ho_kashyap.segments.segment_options``."""

PROGRESS = ("k", "J", "J_prev", "best_iter", "best_count", "last_improvement")
"""The slots of a segment's ``progress`` vector (float64), carried from one segment to the next."""
K, J_NOW, J_PREV, BEST_ITER, BEST_COUNT, LAST_IMPROVEMENT = range(len(PROGRESS))



@njit(cache=True, nogil=True)
def _copy_into(dst, src):
    """``dst[:] = src`` for vectors of one length, element by element.

    The slice assignment would compile numba's broadcasting check, whose
    error message alone (string formatting of the shapes) takes longer to
    compile than this whole function.
    """
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True, nogil=True)
def _copy_matrix_into(dst, src):
    """``dst[:, :] = src`` for matrices of one shape (see :func:`_copy_into`)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, nogil=True, fastmath=_FAST)
def _cholesky_solve(L, g, out):
    """``out = (L Lᵀ)⁻¹ g`` by forward and back substitution (``L`` lower triangular)."""
    p = L.shape[0]
    for i in range(p):
        s = g[i]
        for j in range(i):
            s -= L[i, j] * out[j]
        out[i] = s / L[i, i]
    for i in range(p - 1, -1, -1):
        s = out[i]
        for j in range(i + 1, p):
            s -= L[j, i] * out[j]
        out[i] = s / L[i, i]


@njit(cache=True, nogil=True, fastmath=_FAST)
def _spectral_solve(M, g, out):
    """``out = M (Mᵀ g)``: the W-step of a factor :math:`M = S V \\Lambda^{-1/2}` (``p × r``).

    ``linsep._core.linalg.LeastSquaresFactor``'s eigh path solves
    :math:`(Y^t Y + C \\tilde I)^{+} g = S V \\Lambda^{-1} V^t S g` on the ``r`` eigenvectors it keeps
    (``S`` its column scaling): :math:`M M^t g`, the same two products with :math:`\\Lambda^{-1}`
    split between them (``LeastSquaresFactor.spectral_factor``).
    """
    p, r = M.shape
    for i in range(p):
        out[i] = 0.0
    for j in range(r):
        c = 0.0
        for i in range(p):
            c += M[i, j] * g[i]
        for i in range(p):
            out[i] += M[i, j] * c


@njit(inline="always", fastmath=_FAST)
def _row_score(X, r, W, p_x, bias):
    """``(x_r, 1) W`` (``bias``) or ``x_r W``, summed in float64."""
    s = W[p_x] if bias else 0.0
    for j in range(p_x):
        s += X[r, j] * W[j]
    return s


@njit(inline="always", fastmath=_FAST)
def _margin_row(X, r, i, sign, s, B, offset, two_mu, tol, D, weighted, E, B_next, g, p_x, bias, stats):
    """Training row ``i`` (row ``r`` of ``X``, score ``s = Y_i W``) of :func:`_pass_by_rows`: :math:`E_i`, :math:`B_{k+1, i}`, ``g``."""
    stats, t = _margin_update(i, sign, s, B, offset, two_mu, tol, D, weighted, E, B_next, stats)
    for j in range(p_x):
        g[j] += X[r, j] * t
    if bias:
        g[p_x] += t
    return stats


@njit(cache=True, nogil=True, fastmath=_FAST)
def _pass_by_rows(X, y, rows, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi):
    """One pass over the rows ``lo:hi`` of ``Y`` for the iterate ``W_k``; ``g`` receives their share.

    ``Y`` is given by rows (see :func:`ho_kashyap_segment`): row ``i`` is
    ``y_i (x_r, 1)`` with ``r = rows[i]`` (``rows`` empty: ``r = i``), the
    label ``y_i`` omitted when ``y`` is empty and the bias coordinate when
    ``X`` has as many columns as ``W``.  Computes ``E = Y W − offset − B``
    (offset 1 for Łęski's target ``1 + B``), the next margin
    :math:`B_{k+1} = B + 2\\mu \\max(E, 0)` and the share :math:`Y^t (B_{k+1} + \\mathit{offset})` of
    these rows while each row is in cache, so an iteration reads ``X`` from
    memory once: the layout for data larger than the cache.  For float64
    ``X`` every sum is formed in float64; float32 ``X`` takes
    :func:`_pass_merged_narrow`.
    """
    stats, _ = _pass_merged(X, y, rows, y[:0], rows[:0], W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, 0, 0)
    return stats


@njit(cache=True, nogil=True)
def _pass_merged(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi):
    """:func:`_pass_by_rows` over the rows ``lo:hi``, with the validation rows ``v_lo:v_hi`` of the same ``X`` merged in.

    ``rows_val`` (sorted, like ``rows``) are rows of the same ``X`` with
    labels ``y_val``: each is read in row order between the training rows
    around it, and counted when ``y_v (x_r, 1) W <= 0``.  HKES then reads
    ``X`` once per iteration, front to back, instead of as two row subsets
    (the training pass and the validation count).  Returns the training
    statistics and the validation count; the training rows' arithmetic and
    the order of their sums are those of the unmerged pass.  Float32 ``X``
    takes :func:`linsep.solvers.ho_kashyap.rows._pass_merged_narrow`, any other
    :func:`_pass_merged_wide`: chosen by ``X``'s type when numba compiles
    the caller (:func:`_pass_of_type`), so a float64 fit never compiles the
    float32 pass.  The compiled callers call :func:`_pass_of_type` itself
    (one function fewer to compile); this one is the same, callable from Python.
    """
    return _pass_of_type(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi)


def _pass_of_type(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi):
    """Resolved by numba, at compile time, to the pass of ``X``'s type (the overload below); compiled code only."""


@overload(_pass_of_type)
def _pass_of_type_overload(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo,
                           v_hi):
    if X.dtype == types.float32:
        def narrow(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi):
            return _pass_merged_narrow(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo,
                                       hi, v_lo, v_hi)
        return narrow

    def wide(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi):
        return _pass_merged_wide(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi,
                                 v_lo, v_hi)
    return wide


@njit(cache=True, nogil=True, fastmath=_FAST)
def _pass_merged_wide(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi):
    """:func:`_pass_merged` for float64 ``X``: every product and sum in float64."""
    p_x = X.shape[1]
    bias = W.shape[0] > p_x
    signed = y.shape[0] > 0
    subset = rows.shape[0] > 0
    weighted = D.shape[0] > 0
    g[:] = 0.0
    stats = (0.0, True, 0, True, -np.inf, 0.0)
    count = 0
    v = v_lo
    for i in range(lo, hi):
        r = rows[i] if subset else i
        while v < v_hi and rows_val[v] < r:  # validation rows before this training row
            count += y_val[v] * _row_score(X, rows_val[v], W, p_x, bias) <= 0.0
            v += 1
        sign = y[i] if signed else 1.0
        s = _row_score(X, r, W, p_x, bias) * sign
        stats = _margin_row(X, r, i, sign, s, B, offset, two_mu, tol, D, weighted, E, B_next, g, p_x, bias, stats)
    while v < v_hi:
        count += y_val[v] * _row_score(X, rows_val[v], W, p_x, bias) <= 0.0
        v += 1
    return stats, count


@njit(cache=True, nogil=True)
def _val_bounds(rows, rows_val, n, n_chunks):
    """Validation rows ``bounds[c]:bounds[c + 1]`` merged into chunk ``c`` (those between its training rows)."""
    bounds = np.zeros(n_chunks + 1, dtype=np.int64)
    n_val = rows_val.shape[0]
    for c in range(1, n_chunks):
        lo, _ = chunk_range(n, n_chunks, c)
        bounds[c] = np.searchsorted(rows_val, rows[lo]) if n_val > 0 else 0
    bounds[n_chunks] = n_val
    return bounds


@njit(cache=True, nogil=True, fastmath=_FAST)
def _pass_chunks(X, y, rows, y_val, rows_val, bounds, W, B, offset, two_mu, tol, D, E, B_next, n_chunks, first,
                 stop, parts, reals, flags):
    """:func:`_pass_merged` over the chunks ``first:stop`` of :func:`linsep._core.threads.row_chunks`, one at a time.

    Chunk ``c`` leaves its share of ``g`` in ``parts[c]``, ``(J, max E, max |B|)``
    in ``reals[c]`` and ``(fixed point, wrong, separated, validation count)``
    in ``flags[c]``, for :func:`_reduce_pass` to add in chunk order.
    """
    n, p = E.shape[0], parts.shape[1]
    for c in range(first, stop):
        lo, hi = chunk_range(n, n_chunks, c)
        # Each chunk sums into its own allocation: rows of one shared array would put the end of one
        # thread's sums and the start of the next's on one cache line, written at every row.
        local = np.empty(p)
        stats, count = _pass_of_type(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, local, lo,
                                    hi, bounds[c], bounds[c + 1])
        J, fixed_point, wrong, separated, max_e, max_b = stats
        _copy_into(parts[c], local)
        reals[c, 0], reals[c, 1], reals[c, 2] = J, max_e, max_b
        flags[c, 0], flags[c, 1], flags[c, 2], flags[c, 3] = fixed_point, wrong, separated, count


@njit(cache=True, nogil=True)
def _reduce_pass(parts, reals, flags, g):
    """``g``, the statistics of a pass and its validation count from its chunks (:func:`_pass_chunks`), in chunk order.

    Compiled without reassociation: the order of these sums is the one fixed
    by the chunks, whoever computed them.
    """
    g[:] = 0.0
    J, fixed_point, wrong, separated, max_e, max_b = 0.0, True, 0, True, -np.inf, 0.0
    count = 0
    for c in range(parts.shape[0]):
        for j in range(g.shape[0]):
            g[j] += parts[c, j]
        J += reals[c, 0]
        max_e, max_b = max(max_e, reals[c, 1]), max(max_b, reals[c, 2])
        fixed_point &= flags[c, 0] != 0
        wrong += flags[c, 1]
        separated &= flags[c, 2] != 0
        count += flags[c, 3]
    return (J, fixed_point, wrong, separated, max_e, max_b), count


@njit(cache=True, nogil=True, fastmath=_FAST)
def _pass_by_rows_chunked(X, y, rows, W, B, offset, two_mu, tol, D, E, B_next, g, y_val, rows_val):
    """:func:`_pass_merged` over all rows, in the chunks of :func:`linsep._core.threads.row_chunks`, on this thread.

    Returns the statistics and the count of the merged validation rows
    (``rows_val`` empty: none).
    """
    n, p = E.shape[0], g.shape[0]
    n_chunks = row_chunks(n, X.shape[1])
    if n_chunks == 1:
        return _pass_of_type(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, 0, n, 0,
                            rows_val.shape[0])
    bounds = _val_bounds(rows, rows_val, n, n_chunks)
    parts, reals, flags = np.empty((n_chunks, p)), np.empty((n_chunks, 3)), np.empty((n_chunks, 4), dtype=np.int64)
    _pass_chunks(X, y, rows, y_val, rows_val, bounds, W, B, offset, two_mu, tol, D, E, B_next, n_chunks, 0,
                 n_chunks, parts, reals, flags)
    return _reduce_pass(parts, reals, flags, g)


@njit(cache=True, nogil=True, parallel=True, fastmath=_FAST)
def _pass_by_rows_parallel(X, y, rows, W, B, offset, two_mu, tol, D, E, B_next, g, n_threads, y_val, rows_val):
    """:func:`_pass_by_rows_chunked` with its chunks shared by ``n_threads`` threads: the same result, bit for bit.

    Thread ``t`` computes a contiguous run of chunks; the partial results are
    reduced once, in chunk order, whatever the number of threads or the
    scheduling.
    """
    n, p = E.shape[0], g.shape[0]
    n_chunks = row_chunks(n, X.shape[1])
    if n_chunks == 1:
        return _pass_of_type(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, 0, n, 0,
                            rows_val.shape[0])
    bounds = _val_bounds(rows, rows_val, n, n_chunks)
    parts, reals, flags = np.empty((n_chunks, p)), np.empty((n_chunks, 3)), np.empty((n_chunks, 4), dtype=np.int64)
    workers = max(1, min(n_threads, n_chunks))
    for t in prange(workers):
        _pass_chunks(X, y, rows, y_val, rows_val, bounds, W, B, offset, two_mu, tol, D, E, B_next, n_chunks,
                     t * n_chunks // workers, (t + 1) * n_chunks // workers, parts, reals, flags)
    return _reduce_pass(parts, reals, flags, g)


@njit(inline="always", fastmath=_FAST)
def _product_by_columns(Yt, W, out):
    """``out = Y W`` from ``Yt = Yᵀ`` (C order), accumulated one column of ``Y`` at a time."""
    out[:] = 0.0
    for j in range(Yt.shape[0]):
        w = W[j]
        for i in range(Yt.shape[1]):
            out[i] += w * Yt[j, i]


@njit(cache=True, nogil=True, fastmath=_FAST)
def _pass_by_columns(Yt, W, B, offset, two_mu, tol, D, Z, E, B_next, g):
    """The same pass over the columns of ``Y`` (``Yt = Yᵀ`` in C order).

    ``Z`` is accumulated column by column and ``g`` is one dot product per
    column: long unit-stride loops, which vectorise far better than the
    short per-row products when ``p`` is small.  Reads ``Y`` twice, so it
    serves data that fit in cache.
    """
    p, n = Yt.shape
    _product_by_columns(Yt, W, Z)
    stats = (0.0, True, 0, True, -np.inf, 0.0)
    for i in range(n):
        target = B[i] + offset
        e = Z[i] - target
        E[i] = e
        stats = _accumulate(stats, Z[i], e, target, B[i], tol, D[i] if D.shape[0] else 1.0)
        B_next[i] = B[i] + two_mu * max(e, 0.0)
    for j in range(p):
        acc = 0.0
        for i in range(n):
            acc += Yt[j, i] * (B_next[i] + offset)
        g[j] = acc
    return stats


@njit(cache=True, nogil=True, fastmath=_FAST)
def _ho_kashyap_pass(X, y, rows, by_columns, by_rows, chunked, threads, W, B, offset, two_mu, tol, ridge, D, Z, E,
                     B_next, g, y_val, rows_val):
    """One iteration's pass over ``Y`` and its statistics: by columns (``by_columns`` True, ``by_rows`` None), or
    by rows (the other way round): in one sum (``chunked`` None) or in the fixed chunks of
    :func:`linsep._core.threads.row_chunks`, on this thread (``threads`` None) or shared by ``threads`` threads.

    Returns ``J = EᵀDE + C wᵀw`` (``D = I`` when the IRLS weights ``D`` are
    empty), whether ``|E| <= tol (B + offset)`` (a fixed point), the number
    of samples with ``Z <= 0``, whether every ``Z > 0`` (separated),
    ``max E``, ``max |B|`` and the number of misclassified validation rows
    ``rows_val`` of the same ``X`` read in the same pass (by rows; 0 when
    ``rows_val`` is empty).
    """
    count = 0
    # Two tests, one per layout: numba removes each where its selector is None (see ho_kashyap_segment).
    if by_columns is not None:
        stats = _pass_by_columns(X, W, B, offset, two_mu, tol, D, Z, E, B_next, g)
    if by_rows is not None:
        if chunked is None:  # what the chunked passes do for one chunk
            stats, count = _pass_of_type(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, 0,
                                         E.shape[0], 0, rows_val.shape[0])
        elif threads is not None:
            stats, count = _pass_by_rows_parallel(X, y, rows, W, B, offset, two_mu, tol, D, E, B_next, g, threads,
                                                  y_val, rows_val)
        else:
            stats, count = _pass_by_rows_chunked(X, y, rows, W, B, offset, two_mu, tol, D, E, B_next, g, y_val,
                                                 rows_val)
    J, fixed_point, wrong, separated, max_e, max_b = stats
    for j in range(W.shape[0] - 1):
        J += ridge * W[j] * W[j]
    return J, fixed_point, wrong, separated, max_e, max_b, count


@njit(cache=True, nogil=True, fastmath=_FAST)
def _reweighted_factor(X, y, rows, by_columns, by_rows, chunked, threads, E, B_next, offset, ridge, irls_floor,
                       pivot_tol, D, L, g):
    """IRLS step: new weights ``D``, and the factor ``L`` and right-hand side ``g`` of the weighted system.

    ``D_i = 1 / max(|E_i|, floor · max|E| + tiny)`` (Łęski's absolute-error
    weights), ``YᵀDY + CĨ = L Lᵀ`` through the Cholesky factor of the matrix
    equilibrated by its diagonal (as :class:`linsep._core.linalg.LeastSquaresFactor`
    does), and :math:`g = Y^t D (B_{k+1} + \\mathit{offset})`.  Returns ``False`` where that
    class would not use a Cholesky factor (a pivot ratio below
    ``pivot_tol``, or more columns than rows without ``C``).  By rows, the
    Gram matrix is summed over blocks of rows gathered into float64 (one
    BLAS product per block: no weighted copy of ``Y``, any type and row
    subset of ``X``), in the fixed chunks of :func:`linsep._core.threads.row_chunks`
    shared by ``threads`` threads (None: this thread).
    """
    n, p = E.shape[0], g.shape[0]
    largest = 0.0
    for i in range(n):
        largest = max(largest, abs(E[i]))
    irls_weights_into(E, irls_floor, largest, D)
    if ridge == 0.0 and p > n:
        return False
    if by_columns is not None:  # Yᵀ itself, float64 (asarray: no copy; it only keeps the float32 typing valid)
        Yt = np.asarray(X, dtype=np.float64)
        t = D * (B_next + offset)
        weighted = Yt * D
        G = np.dot(weighted, Yt.T)
        _copy_into(g, np.dot(Yt, t))
    if by_rows is not None:
        G = _weighted_gram_by_rows(X, y, rows, D, B_next, offset, g, chunked, threads)
    norms = np.empty(p)
    for j in range(p):
        norms[j] = np.sqrt(max(G[j, j], 0.0))
        if norms[j] == 0.0:
            norms[j] = 1.0
    # Cholesky of S G S + C S Ĩ S (S = diag(1 / norms)), column by column.
    for j in range(p):
        for i in range(j, p):
            s = G[i, j] / (norms[i] * norms[j])
            if i == j and j < p - 1:
                s += ridge / (norms[j] * norms[j])
            for m in range(j):
                s -= L[i, m] * L[j, m]
            if i == j:
                if not s > 0.0:
                    return False
                L[j, j] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    smallest, biggest = np.inf, 0.0
    for j in range(p):
        smallest = min(smallest, L[j, j])
        biggest = max(biggest, L[j, j])
    if not (np.isfinite(biggest) and smallest > pivot_tol * biggest):
        return False
    # S G S = Lc Lcᵀ  ⇒  G = (S⁻¹Lc)(S⁻¹Lc)ᵀ
    for i in range(p):
        for j in range(i + 1):
            L[i, j] *= norms[i]
    return True


@njit(cache=True, nogil=True, fastmath=_FAST)
def _weighted_gram_by_rows(X, y, rows, D, B_next, offset, g, chunked, threads):
    """:math:`Y^t D Y` and :math:`g = Y^t D (B_{k+1} + \\mathit{offset})` for ``Y`` given by rows (see :func:`_pass_by_rows`).

    Summed chunk by chunk (:func:`linsep._core.threads.row_chunks`; ``chunked``
    None: one chunk) and added in chunk order; ``threads`` threads (None:
    this one) compute the chunks (:func:`_weighted_gram_parallel`) with the
    same result.
    """
    n, p = D.shape[0], g.shape[0]
    if chunked is None:
        return _weighted_gram_rows(X, y, rows, D, B_next, offset, g, 0, n)
    n_chunks = row_chunks(n, X.shape[1])
    if n_chunks == 1:
        return _weighted_gram_rows(X, y, rows, D, B_next, offset, g, 0, n)
    if threads is not None:
        return _weighted_gram_parallel(X, y, rows, D, B_next, offset, g, n_chunks, threads)
    G, grams, parts = np.zeros((p, p)), np.empty((1, p, p)), np.empty((1, p))
    g[:] = 0.0
    for c in range(n_chunks):
        lo, hi = chunk_range(n, n_chunks, c)
        local = np.empty(p)  # the same arguments as the parallel rounds pass
        _copy_matrix_into(grams[0], _weighted_gram_rows(X, y, rows, D, B_next, offset, local, lo, hi))
        _copy_into(parts[0], local)
        _add_in_order(G, g, grams, parts, 1)
    return G


@njit(cache=True, nogil=True, parallel=True, fastmath=_FAST)
def _weighted_gram_parallel(X, y, rows, D, B_next, offset, g, n_chunks, n_threads):
    """:func:`_weighted_gram_by_rows` with ``n_threads`` threads computing ``n_threads`` chunks at a time.

    Each round's Gram matrices are added in chunk order before the next
    round: ``n_threads`` matrices of ``p × p`` in memory, not ``n_chunks``.
    """
    n, p = D.shape[0], g.shape[0]
    workers = max(1, min(n_threads, n_chunks))
    grams, parts = np.empty((workers, p, p)), np.empty((workers, p))
    G = np.zeros((p, p))
    g[:] = 0.0
    for first in range(0, n_chunks, workers):
        m = min(workers, n_chunks - first)
        for t in prange(m):
            lo, hi = chunk_range(n, n_chunks, first + t)
            local = np.empty(p)  # a thread's own allocation (no shared cache lines)
            _copy_matrix_into(grams[t], _weighted_gram_rows(X, y, rows, D, B_next, offset, local, lo, hi))
            _copy_into(parts[t], local)
        _add_in_order(G, g, grams, parts, m)
    return G


@njit(cache=True, nogil=True)
def _add_in_order(G, g, grams, parts, m):
    """``G += grams[0] + … + grams[m−1]`` and the same for ``g``, one term at a time (no reassociation)."""
    for t in range(m):
        G += grams[t]
        g += parts[t]


@njit(cache=True, nogil=True, fastmath=_FAST)
def _weighted_gram_rows(X, y, rows, D, B_next, offset, g, start, stop):
    """:math:`Y^t D Y` and :math:`g = Y^t D (B_{k+1} + \\mathit{offset})` over the rows ``start:stop`` of ``Y``.

    The labels square away in ``YᵀDY``; blocks of rows ``(x_r, 1)`` are
    gathered into float64 and multiplied by BLAS (``np.dot``), whose threads
    follow the BLAS limits.
    """
    n, p = stop - start, g.shape[0]
    p_x = X.shape[1]
    bias = p > p_x
    signed = y.shape[0] > 0
    subset = rows.shape[0] > 0
    size = max(1, min(n, 1024))
    A = np.zeros((size, p))
    Aw = np.zeros((size, p))
    G = np.zeros((p, p))
    g[:] = 0.0
    for lo in range(0, n, size):
        m = min(size, n - lo)
        for i in range(m):
            k = start + lo + i
            r = rows[k] if subset else k
            for j in range(p_x):
                A[i, j] = X[r, j]
            if bias:
                A[i, p_x] = 1.0
            w = float(D[k])
            t = w * (float(B_next[k]) + offset) * (y[k] if signed else 1.0)
            for j in range(p):
                Aw[i, j] = A[i, j] * w
                g[j] += A[i, j] * t
        if m < size:  # the last, partial block: rows left from the previous block must not count
            A[m:, :] = 0.0
            Aw[m:, :] = 0.0
        G += np.dot(A.T, Aw)
    return G


@njit(cache=True, nogil=True)
def _count_rows(X, y, rows, W, lo, hi):
    """Number of rows ``i`` in ``lo:hi`` of ``Y`` (given by rows) with ``Y_i W <= 0``.

    Float32 ``X``: the scores of the float32 pass (:func:`linsep.solvers.ho_kashyap.rows._count_rows_narrow`), so a held-out
    count is the same whether its rows are merged into the training pass or counted apart; chosen by type
    when numba compiles the caller, as :func:`_pass_merged` chooses its pass (and, like it, called by the
    compiled code through :func:`_count_of_type`).
    """
    return _count_of_type(X, y, rows, W, lo, hi)


def _count_of_type(X, y, rows, W, lo, hi):
    """Resolved by numba, at compile time, to the count of ``X``'s type (the overload below); compiled code only."""


@overload(_count_of_type)
def _count_of_type_overload(X, y, rows, W, lo, hi):
    if X.dtype == types.float32:
        return lambda X, y, rows, W, lo, hi: _count_rows_narrow(X, y, rows, W, lo, hi)
    return lambda X, y, rows, W, lo, hi: _count_rows_wide(X, y, rows, W, lo, hi)


@njit(cache=True, nogil=True, fastmath=_FAST)
def _count_rows_wide(X, y, rows, W, lo, hi):
    """:func:`_count_rows` for float64 ``X``."""
    p_x = X.shape[1]
    bias = W.shape[0] > p_x
    signed = y.shape[0] > 0
    subset = rows.shape[0] > 0
    count = 0
    for i in range(lo, hi):
        s = _row_score(X, rows[i] if subset else i, W, p_x, bias)
        count += (y[i] * s if signed else s) <= 0.0
    return count


@njit(cache=True, nogil=True, parallel=True, fastmath=_FAST)
def _count_rows_parallel(X, y, rows, W, n, n_chunks):
    counts = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        counts[c] = _count_of_type(X, y, rows, W, c * n // n_chunks, (c + 1) * n // n_chunks)
    return counts.sum()


@njit(cache=True, nogil=True, fastmath=_FAST)
def _count_nonpositive(X, y, rows, n, by_columns, by_rows, threads, W, z):
    """Number of samples with ``Y_i W <= 0`` (misclassified) among ``n``; ``z`` is scratch space by columns.

    ``by_columns``, ``by_rows`` and ``threads`` as in :func:`_ho_kashyap_pass` (by rows, one chunk per thread).
    """
    count = 0
    if by_columns is not None:
        _product_by_columns(X, W, z)
        for i in range(z.shape[0]):
            count += z[i] <= 0.0
    if by_rows is not None:
        if threads is not None:
            count = _count_rows_parallel(X, y, rows, W, n, threads)
        else:
            count = _count_of_type(X, y, rows, W, 0, n)
    return count


@njit(cache=True, nogil=True, fastmath=_FAST)
def ho_kashyap_segment(data, by_columns, by_rows, chunked, threads, reweighted, vectors, progress, records, options):
    """Run up to ``max_steps`` Ho–Kashyap iterations with a Cholesky factor (or an eigh factor, ``spectral``).

    The iteration of :func:`linsep.solvers.ho_kashyap.ho_kashyap` for the
    margin update, with ``YᵀY + CĨ = L Lᵀ`` (squared errors: ``D`` empty, one
    factor for the whole run) or ``YᵀD_kY + CĨ = L Lᵀ`` (absolute errors:
    ``D`` holds the IRLS weights, refactored at every iteration by
    :func:`_reweighted_factor`), or, with ``spectral`` (squared errors only), ``L`` the ``p × r`` factor
    :math:`M` of an eigendecomposition, :math:`(Y^t Y + C \\tilde I)^{+} = M M^t` (:func:`_spectral_solve`;
    a run-time flag, not a selector: its loop is a few lines of every variant, and a cross-validated fit with
    both factors then compiles one variant, not two):

    :math:`E_k = Y W_k - \\mathit{offset} - B_k`; stop if :math:`Y W_k > 0` (with
    ``stop_at_separation``), if :math:`E_k` proves non-separability (with
    ``can_prove``), or if :math:`|J_k - J_{k-1}| \\le \\mathit{tol} \\cdot J_{k-1}` or
    :math:`|E_k| \\le \\mathit{tol} \\cdot (B_k + \\mathit{offset})` (``relative``; for IRLS,
    :math:`Y W_k > 0` and that or :func:`weights_stand_still`; else
    :math:`|J_k - J_{k-1}| < \\mathit{tol}`), or
    (validation rows, ``n_iter_no_change >= 0``) once the validation error has
    not improved by more than ``validation_tol`` for ``n_iter_no_change``
    iterates (:func:`linsep.solvers.ho_kashyap.rules.patience_spent`);
    otherwise :math:`B_{k+1} = B_k + 2\\mu \\max(E_k, 0)` and
    :math:`W_{k+1} = (L L^t)^{-1} Y^t D (B_{k+1} + \\mathit{offset})` (``spectral``: :math:`M M^t Y^t (B_{k+1} + \\mathit{offset})`).

    The loop over ``k`` is sequential and, on the small problems of the
    paper's benchmark, a NumPy iteration would cost its dozen calls'
    overhead (microseconds each) rather than its arithmetic.

    The arguments are records (named tuples), besides the five selectors: ``data`` a :class:`SegmentData`
    (``X, y, rows`` and ``X_val, y_val, rows_val``: the layouts below), ``vectors`` a :class:`SegmentVectors`,
    ``progress`` the float64 vector of :data:`PROGRESS` (slots named :data:`K`, :data:`J_NOW`, :data:`J_PREV`,
    :data:`BEST_ITER`, :data:`BEST_COUNT`, :data:`LAST_IMPROVEMENT`), ``records`` a :class:`SegmentRecords` and
    ``options`` a :class:`SegmentOptions` (the scalars, fixed for a run but ``record_first`` and ``max_steps``).
    ``vectors`` ``W``, ``B``, ``E``, ``best_W``, ``W_prev`` (the previous iterate, NaN
    before the first step), ``L`` and ``D``, and ``progress`` (:math:`k`, :math:`J_k`, :math:`J_{k-1}` (NaN
    at :math:`k = 0`), best :math:`k`, best validation count, last improving :math:`k`) are updated in
    place, so a run can continue in the next segment; ``options.validation_reference`` is the patience's
    reference error (``inf``: none; :func:`linsep.solvers.ho_kashyap.rules.validation_improved`).
    ``records`` ``criterion``, ``training_errors``
    and ``validation_errors`` (length ``max_steps + 1``) receive one entry per
    iterate; the entry for the starting iterate only when ``options.record_first``.
    By columns (``by_columns`` True, ``by_rows`` None: data that fit in cache), ``X`` is ``Yᵀ`` in C
    order and ``y``, ``rows`` are empty.  By rows (``by_rows`` True, ``by_columns`` None), ``Y`` is never formed:
    row ``i`` of ``Y`` is ``y_i (x_r, 1)`` with ``x_r`` row ``r = rows[i]`` of
    ``X`` (C order, float32 or float64; ``rows`` empty: ``r = i``); an empty
    ``y`` stands for labels already applied, and ``X`` with as many columns
    as ``W`` for a bias column already present (``X = Y`` itself).  A pass
    by rows is summed in the chunks of :func:`linsep._core.threads.row_chunks`
    (``chunked`` True; None where there is one) and runs on ``threads``
    threads (None: this thread; the chunks and the order of their sums are
    fixed by the shape of ``X``, so the result is the same on any number of
    threads).  ``reweighted`` is True for absolute errors (IRLS,
    ``D`` the weights) and None for squared errors (``D`` empty).

    The five selectors ``by_columns``, ``by_rows``, ``chunked``, ``threads``
    and ``reweighted`` are None for a part of the iteration this fit does not
    run: numba removes a branch on ``x is None`` for an argument typed None
    before it compiles, so each combination compiles only the code it runs
    (a serial fit never compiles the parallel passes, squared errors never
    the IRLS refactorisation), and it is kept in numba's disk cache apart.
    Validation has no selector: its count is small beside a whole variant of
    the segment, which a cross-validated fit (folds with validation rows, a
    refit without) would otherwise compile twice.
    ``X_val, y_val, rows_val`` give the validation matrix in the same layout;
    no validation rows disable early stopping.  ``merged`` (by rows, ``X_val``
    the same array as ``X``, ``rows`` and ``rows_val`` sorted): the validation
    rows are counted inside the training pass (:func:`_pass_merged`), one
    read of ``X`` per iteration.  Vectors ``B, E, D`` may be
    float32 (stored rounded); float32 ``X`` by rows takes the float32 pass
    (:func:`linsep.solvers.ho_kashyap.rows._pass_merged_narrow`), every other sum is formed in float64; ``W``, ``L``
    and the right-hand side stay float64.  Returns the stop code (``HK_*``;
    ``HK_ILL_CONDITIONED`` when an IRLS system needs more than a Cholesky
    factor, left to the NumPy loop) and the number of entries recorded.
    """
    X, y, rows, X_val, y_val, rows_val = data
    L, W, B, E, D, best_W, W_prev = vectors
    criterion, training_errors, validation_errors = records
    offset, mu, ridge, irls_floor, pivot_tol = options.offset, options.mu, options.ridge, options.irls_floor, \
        options.pivot_tol
    max_steps, tol, relative, stop_at_separation = options.max_steps, options.tol, options.relative, \
        options.stop_at_separation
    can_prove, proof_rtol, record_first, n_iter_no_change = options.can_prove, options.proof_rtol, \
        options.record_first, options.n_iter_no_change
    validation_tol, merged, spectral = options.validation_tol, options.merged, options.spectral
    n, p = E.shape[0], W.shape[0]
    columns = by_columns is not None
    if columns:
        n_val = X_val.shape[1]
    else:
        n_val = rows_val.shape[0] if rows_val.shape[0] > 0 else X_val.shape[0]
    z_val = np.empty(n_val if columns else 0)
    Z = np.empty(n if columns else 0)
    B_next = np.empty_like(B)
    g = np.empty(p)
    two_mu = 2.0 * mu
    has_val = n_val > 0
    k = int(progress[K])
    J_prev = progress[J_PREV]
    best_iter = int(progress[BEST_ITER])
    best_count = progress[BEST_COUNT]
    last_improvement = int(progress[LAST_IMPROVEMENT])

    # Validation rows read by the training pass itself (merged), or none there.
    pass_y_val, pass_rows_val = (y_val, rows_val) if merged else (y_val[:0], rows_val[:0])
    J, fixed_point, wrong, separated, max_e, max_b, count = _ho_kashyap_pass(
        X, y, rows, by_columns, by_rows, chunked, threads, W, B, offset, two_mu, tol, ridge, D, Z, E, B_next, g,
        pass_y_val, pass_rows_val)
    n_rec = 0
    if record_first:
        criterion[0] = J
        training_errors[0] = wrong
        if has_val:
            if not merged:
                count = _count_nonpositive(X_val, y_val, rows_val, n_val, by_columns, by_rows, threads, W, z_val)
            validation_errors[0] = count
            best_count = count
            last_improvement = k
            _copy_into(best_W, W)
        n_rec = 1

    code = HK_BUDGET_SPENT
    steps = 0
    while True:
        if stop_at_separation and separated:  # every Y_i W > 0 (NaN is not)
            code = HK_SEPARABLE
            break
        if can_prove and max_e <= proof_rtol * max_b and is_nonseparability_proof(E, B, proof_rtol):
            code = HK_NOT_SEPARABLE
            break
        # The fixed point, then the change of J (linsep.solvers.ho_kashyap.rules.stop_code).
        irls = reweighted is not None
        code = stop_code(relative, irls, fixed_point, separated, irls and weights_stand_still(W, W_prev, tol), tol, J,
                         J_prev)
        if code != HK_BUDGET_SPENT:
            break
        if has_val and patience_spent(k, last_improvement, n_iter_no_change):
            code = HK_CONVERGED
            break
        if steps == max_steps:
            break

        if reweighted is not None:
            if not _reweighted_factor(X, y, rows, by_columns, by_rows, chunked, threads, E, B_next, offset, ridge,
                                      irls_floor, pivot_tol, D, L, g):
                code = HK_ILL_CONDITIONED
                break
        _copy_into(B, B_next)
        _copy_into(W_prev, W)
        if spectral:
            _spectral_solve(L, g, W)
        else:
            _cholesky_solve(L, g, W)
        J_prev = J
        J, fixed_point, wrong, separated, max_e, max_b, count = _ho_kashyap_pass(
            X, y, rows, by_columns, by_rows, chunked, threads, W, B, offset, two_mu, tol, ridge, D, Z, E, B_next, g,
            pass_y_val, pass_rows_val)
        k += 1
        steps += 1
        if not np.isfinite(J):
            break
        criterion[n_rec] = J
        training_errors[n_rec] = wrong
        if has_val:
            if not merged:
                count = _count_nonpositive(X_val, y_val, rows_val, n_val, by_columns, by_rows, threads, W, z_val)
            validation_errors[n_rec] = count
            if validation_improved(count / n_val, best_count / n_val, options.validation_reference, validation_tol):
                last_improvement = k
            if count < best_count:
                best_count = count
                best_iter = k
                _copy_into(best_W, W)
        n_rec += 1

    progress[K], progress[J_NOW], progress[J_PREV] = k, J, J_prev
    progress[BEST_ITER], progress[BEST_COUNT], progress[LAST_IMPROVEMENT] = best_iter, best_count, last_improvement
    return code, n_rec


@njit(cache=True, nogil=True, parallel=True)
def _lockstep_parallel(X, y, fold_of, active, runs, out, two_mu, tol, n_groups):
    """:func:`linsep.solvers.ho_kashyap.rows.lockstep_pass_narrow` with the runs split into ``n_groups`` groups, one per thread.

    Each group reads ``X`` once for its runs; a run's arithmetic does not depend on its group.
    """
    n_active = active.shape[0]
    n_chunks = np.empty(n_active, dtype=np.int64)
    for t in prange(n_groups):
        first, stop = t * n_active // n_groups, (t + 1) * n_active // n_groups
        if stop > first:
            n_chunks[first:stop] = lockstep_pass_narrow(X, y, fold_of, active, first, stop, runs, out, two_mu, tol)
    return n_chunks


def lockstep_pass(X, y, fold_of, active, runs, out, two_mu, tol, threads=1):
    """One Ho–Kashyap pass of the runs ``active`` of a cross-validation wave, ``X`` read once (``threads`` groups).

    See :func:`linsep.solvers.ho_kashyap.rows.lockstep_pass_narrow` (float32 ``X``; ``runs`` a
    :class:`~linsep.solvers.ho_kashyap.rows.LockstepRuns`, ``out`` a
    :class:`~linsep.solvers.ho_kashyap.rows.LockstepParts`); the statistics of run
    ``k`` follow from :func:`lockstep_statistics`.  Returns the active runs' numbers of row chunks.
    """
    n_groups = max(1, min(int(threads), active.shape[0]))
    if n_groups == 1:
        return lockstep_pass_narrow(X, y, fold_of, active, 0, active.shape[0], runs, out, two_mu, tol)
    return _lockstep_parallel(X, y, fold_of, active, runs, out, two_mu, tol, n_groups)


@njit(cache=True, nogil=True, fastmath=_FAST)
def lockstep_statistics(parts, reals, flags, W, ridge, g):
    """Run ``k``'s pass from its chunks (``parts[k, :n_chunks]``, …): ``g`` and the statistics of :func:`_ho_kashyap_pass`.

    The chunks are added in order (:func:`_reduce_pass`) and :math:`C w^t w` is added to ``J`` as
    :func:`_ho_kashyap_pass` adds it: the pass of the run alone, bit for bit.
    """
    stats, _ = _reduce_pass(parts, reals, flags, g)
    J, fixed_point, wrong, separated, max_e, max_b = stats
    for j in range(W.shape[0] - 1):
        J += ridge * W[j] * W[j]
    return J, fixed_point, wrong, separated, max_e, max_b
