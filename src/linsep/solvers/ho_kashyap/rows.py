"""Row arithmetic of the compiled Ho–Kashyap pass (:mod:`linsep.solvers.ho_kashyap.loops`), and its float32 variant.

:func:`_margin_update` is one training row's share of a pass (its error, next
margin and statistics), shared by the float64 pass
(:func:`linsep.solvers.ho_kashyap.loops._pass_merged`) and the float32 one here,
:func:`_pass_merged_narrow`, which forms each row's products in float32 (as
float32 BLAS does) and adds them up in float64 across blocks of rows.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from linsep._core.threads import chunk_range, row_chunks

# Reassociation lets LLVM vectorise the dot products (the result may differ
# from a left-to-right sum in the last bits, which no rule here depends on);
# no 'nnan'/'ninf' flags: inputs are validated finite, and we do not want
# comparisons with NaN to be optimised away if that ever changes.
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(inline="always", fastmath=_FAST)
def _accumulate(stats, z, e, target, b, tol, d):
    """Add sample ``i`` (IRLS weight ``d``) to the pass statistics (see :func:`linsep.solvers.ho_kashyap.loops._ho_kashyap_pass`)."""
    J, fixed_point, wrong, separated, max_e, max_b = stats
    return (J + d * e * e, fixed_point & (target > 0.0) & (abs(e) <= tol * target), wrong + (z <= 0.0),
            separated & (z > 0.0), max(max_e, e), max(max_b, abs(b)))


@njit(inline="always", fastmath=_FAST)
def _margin_update(i, sign, s, B, offset, two_mu, tol, D, weighted, E, B_next, stats):
    """Training row ``i`` (score :math:`s = Y_i W`) of :func:`linsep.solvers.ho_kashyap.loops._pass_by_rows`: :math:`E_i`, :math:`B_{k+1, i}`; returns the
    statistics and :math:`t = y_i (B_{k+1, i} + \\mathit{offset})`, the weight of the row's share :math:`t x_r` of ``g``."""
    b = float(B[i])
    target = b + offset
    e = s - target
    E[i] = e
    stats = _accumulate(stats, s, e, target, b, tol, D[i] if weighted else 1.0)
    b_next = b + two_mu * max(e, 0.0)
    B_next[i] = b_next
    return stats, sign * (float(B_next[i]) + offset)  # the stored (rounded) margin, as the next pass reads it


NARROW_BLOCK = 16
"""Rows whose shares of ``g`` a float32 pass (:func:`_pass_merged_narrow`) sums in float32 before adding to ``g``."""


@njit(inline="always", fastmath=_FAST)
def _narrow_score(X, r, W, W_x, p_x, bias):
    """``(x_r, 1) W`` for float32 ``X``: the float32 sum of the products ``x_rj W_x[j]`` (``W_x``: ``W`` in
    float32), as float32 BLAS forms ``X W``; the bias is added in float64."""
    s = np.float32(0.0)
    for j in range(p_x):
        s += X[r, j] * W_x[j]
    return float(s) + (W[p_x] if bias else 0.0)


@njit(cache=True, nogil=True, fastmath=_FAST)
def _pass_merged_narrow(X, y, rows, y_val, rows_val, W, B, offset, two_mu, tol, D, E, B_next, g, lo, hi, v_lo, v_hi):
    """:func:`_pass_merged` for float32 ``X``: float32 products, float64 margins and statistics.

    A row's score is the float32 sum of its float32 products
    (:func:`_narrow_score`) and the shares ``t x_r`` of :data:`NARROW_BLOCK`
    rows are summed in float32 before they are added to ``g`` in float64.
    Float64 arithmetic on every element of ``X`` made the pass compute-bound:
    an HKES iteration on 10⁷ × 50 float32 rows took 1.31 times one float32
    ``X @ v``, and takes 0.83 times with this pass
    (``benchmarks/bench_hkes_large.py``, 2 cores; one thread over all rows:
    2.0 times, now 1.0 times).

    Its loop is :func:`linsep.solvers.ho_kashyap.loops._pass_merged`'s with the float32 row
    arithmetic, written twice on purpose: one body with a type test inside
    the loop ran 1.6 to 2.7 times slower (LLVM no longer vectorised the
    row loops), typed numba overloads ran 2 times slower unless inlined into
    the loop's IR, and inlined they make numba warn
    (``NumbaIRAssumptionWarning``) on every first compilation.
    """
    p_x = X.shape[1]
    bias = W.shape[0] > p_x
    signed = y.shape[0] > 0
    subset = rows.shape[0] > 0
    weighted = D.shape[0] > 0
    W_x = np.empty(p_x, dtype=X.dtype)
    W_x[:] = W[:p_x]
    block = np.zeros(p_x, dtype=X.dtype)
    g[:] = 0.0
    stats = (0.0, True, 0, True, -np.inf, 0.0)
    count = 0
    v = v_lo
    for i in range(lo, hi):
        r = rows[i] if subset else i
        while v < v_hi and rows_val[v] < r:  # validation rows before this training row
            count += y_val[v] * _narrow_score(X, rows_val[v], W, W_x, p_x, bias) <= 0.0
            v += 1
        sign = y[i] if signed else 1.0
        s = _narrow_score(X, r, W, W_x, p_x, bias) * sign
        stats, t = _margin_update(i, sign, s, B, offset, two_mu, tol, D, weighted, E, B_next, stats)
        t_x = np.float32(t)
        for j in range(p_x):
            block[j] += X[r, j] * t_x
        if bias:
            g[p_x] += t
        if (i - lo + 1) % NARROW_BLOCK == 0:
            for j in range(p_x):
                g[j] += block[j]
                block[j] = 0.0
    for j in range(p_x):
        g[j] += block[j]
    while v < v_hi:
        count += y_val[v] * _narrow_score(X, rows_val[v], W, W_x, p_x, bias) <= 0.0
        v += 1
    return stats, count


@njit(cache=True, nogil=True, fastmath=_FAST)
def _count_rows_narrow(X, y, rows, W, lo, hi):
    """``linsep.solvers.ho_kashyap.loops._count_rows`` for float32 ``X``: the rows ``i`` in ``lo:hi`` with ``Y_i W <= 0``, scored
    as :func:`_pass_merged_narrow` scores them."""
    p_x = X.shape[1]
    bias = W.shape[0] > p_x
    signed = y.shape[0] > 0
    subset = rows.shape[0] > 0
    W_x = np.empty(p_x, dtype=X.dtype)
    W_x[:] = W[:p_x]
    count = 0
    for i in range(lo, hi):
        s = _narrow_score(X, rows[i] if subset else i, W, W_x, p_x, bias)
        count += (y[i] * s if signed else s) <= 0.0
    return count


LOCKSTEP_TILE = 64
"""Rows of ``X`` that :func:`lockstep_pass_narrow` reads for every run in turn: a tile stays in cache meanwhile,
and each run's vectors are looked up once per tile, not once per row."""


LockstepRuns = namedtuple("LockstepRuns", "W B E B_next n_train offset fold")
"""The runs of a lockstep, indexed by run: ``W`` (runs × p, float64, bias last), ``B``, ``E``, ``B_next`` (runs ×
max ``n_train``, float32), ``n_train`` (training rows), ``offset`` and ``fold`` (the fold whose rows it holds out)."""

LockstepParts = namedtuple("LockstepParts", "parts reals flags counts")
"""What a lockstep pass leaves per run: the chunks' shares of ``g`` (``parts``), ``(J, max E, max |B|)`` (``reals``),
``(fixed point, wrong, separated, 0)`` (``flags``) and the validation ``counts``."""


@njit(cache=True, nogil=True, fastmath=_FAST)
def lockstep_pass_narrow(X, y, fold_of, active, first, stop, runs, out, two_mu, tol):
    """:func:`_pass_merged_narrow` of the runs ``active[first:stop]`` of a cross-validation, in one read of ``X``.

    Run ``k`` iterates on the rows ``r`` of ``X`` with ``fold_of[r] != run_fold[k]`` (its training rows, in row
    order; ``n_train[k]`` of them) and counts those of its fold (its validation rows, merged).  ``X`` is read
    once, in tiles of :data:`LOCKSTEP_TILE` rows, and each tile serves every run while it is in cache: the runs
    of a wave (the folds, and the values of ``C``) then share one read of ``X`` per iteration instead of one
    each.  Each run's arithmetic is that of its own pass, in the same order (its row chunks of
    :func:`linsep._core.threads.row_chunks` on its training rows, its float32 blocks of :data:`NARROW_BLOCK`
    rows counted from each chunk's start, the chunks left for :func:`linsep.solvers.ho_kashyap.loops._reduce_pass`
    in ``parts[k]``, ``reals[k]``, ``flags[k]``), so a run ends as it would alone, bit for bit.

    ``runs`` (:class:`LockstepRuns`) and ``out`` (:class:`LockstepParts`; ``counts``: the validation rows with
    ``y_r (x_r, 1) W <= 0``) are indexed by run; only the runs ``active[first:stop]`` are read and written.
    Returns their numbers of chunks.
    """
    W, B, E, B_next, n_train, offset, run_fold = runs
    parts, reals, flags, counts = out
    n_rows, p_x = X.shape
    m = stop - first
    W_x = np.empty((m, p_x), dtype=X.dtype)
    blocks = np.zeros((m, p_x), dtype=X.dtype)
    local = np.zeros((m, p_x + 1))
    n_chunks = np.empty(m, dtype=np.int64)
    chunk = np.zeros(m, dtype=np.int64)
    chunk_lo = np.zeros(m, dtype=np.int64)
    chunk_hi = np.empty(m, dtype=np.int64)
    index = np.zeros(m, dtype=np.int64)
    reals_now = np.zeros((m, 3))  # J, max E, max |B| of the chunk under way
    reals_now[:, 1] = -np.inf
    flags_now = np.zeros((m, 3), dtype=np.int64)  # fixed point, wrong, separated
    flags_now[:, 0] = 1
    flags_now[:, 2] = 1
    for k in range(m):
        run = active[first + k]
        for j in range(p_x):
            W_x[k, j] = W[run, j]
        n_chunks[k] = row_chunks(n_train[run], p_x)
        chunk_hi[k] = chunk_range(n_train[run], n_chunks[k], 0)[1]
        counts[run] = 0
    D = np.empty(0, dtype=B.dtype)
    for t0 in range(0, n_rows, LOCKSTEP_TILE):
        t1 = min(t0 + LOCKSTEP_TILE, n_rows)
        for k in range(m):
            run = active[first + k]
            W_run, W_xk, B_run, E_run, N_run = W[run], W_x[k], B[run], E[run], B_next[run]
            block, g = blocks[k], local[k]
            fold, off = run_fold[run], offset[run]
            i, c, lo, hi = index[k], chunk[k], chunk_lo[k], chunk_hi[k]
            stats = (reals_now[k, 0], flags_now[k, 0] != 0, flags_now[k, 1], flags_now[k, 2] != 0, reals_now[k, 1],
                     reals_now[k, 2])
            count = 0
            for r in range(t0, t1):
                sign = float(y[r])
                if fold_of[r] == fold:  # a validation row of this run
                    count += sign * _narrow_score(X, r, W_run, W_xk, p_x, True) <= 0.0
                    continue
                if i == hi:  # this run's next chunk starts: the last one is done
                    _close_chunk(block, g, stats, parts[run, c], reals[run, c], flags[run, c])
                    stats = (0.0, True, 0, True, -np.inf, 0.0)
                    c += 1
                    lo, hi = chunk_range(n_train[run], n_chunks[k], c)
                s = _narrow_score(X, r, W_run, W_xk, p_x, True) * sign
                stats, t = _margin_update(i, sign, s, B_run, off, two_mu, tol, D, False, E_run, N_run, stats)
                t_x = np.float32(t)
                for j in range(p_x):
                    block[j] += X[r, j] * t_x
                g[p_x] += t
                if (i - lo + 1) % NARROW_BLOCK == 0:
                    for j in range(p_x):
                        g[j] += block[j]
                        block[j] = 0.0
                i += 1
            index[k], chunk[k], chunk_lo[k], chunk_hi[k] = i, c, lo, hi
            reals_now[k, 0], flags_now[k, 0], flags_now[k, 1], flags_now[k, 2], reals_now[k, 1], reals_now[k, 2] = stats
            counts[run] += count
    for k in range(m):
        run = active[first + k]
        stats = (reals_now[k, 0], flags_now[k, 0] != 0, flags_now[k, 1], flags_now[k, 2] != 0, reals_now[k, 1],
                 reals_now[k, 2])
        _close_chunk(blocks[k], local[k], stats, parts[run, chunk[k]], reals[run, chunk[k]], flags[run, chunk[k]])
    return n_chunks


@njit(inline="always")
def _close_chunk(block, g, stats, part, real, flag):
    """A run's chunk is done: its share of ``g`` (the float32 block added) and its statistics go to ``part``,
    ``real`` and ``flag`` (as :func:`linsep.solvers.ho_kashyap.loops._pass_chunks` leaves them); ``g`` and
    ``block`` are cleared for the next chunk."""
    p_x = block.shape[0]
    for j in range(p_x):
        g[j] += block[j]
        block[j] = 0.0
    for j in range(g.shape[0]):
        part[j] = g[j]
        g[j] = 0.0
    J, fixed_point, wrong, separated, max_e, max_b = stats
    real[0], real[1], real[2] = J, max_e, max_b
    flag[0], flag[1], flag[2], flag[3] = fixed_point, wrong, separated, 0
