"""The linear Lagrangian SVM's fused pass, compiled (:func:`lsvm_pass`).

See :class:`linsep.solvers.lsvm.solver._LinearStep` for the iteration it serves.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from linsep._core.threads import chunk_range, row_chunks

__all__ = ["lsvm_pass"]

_FAST = {"reassoc", "contract", "arcp", "nsz"}  # as in linsep.solvers.ho_kashyap.loops


@njit(cache=True, nogil=True, fastmath=_FAST)
def _lsvm_rows(X, y, W, r, alpha, C, mu, first, g, lo, hi):
    """The fused LSVM update over the rows ``lo:hi`` (see :func:`lsvm_pass`); ``g`` receives their share."""
    p_x = X.shape[1]
    g[:] = 0.0
    step_sq, alpha_sq, objective = 0.0, 0.0, 0.0
    for i in range(lo, hi):
        s = W[p_x]
        for j in range(p_x):
            s += X[i, j] * W[j]
        r_i = float(r[i])
        a = C * (r_i - y[i] * s)  # α_k = C(r_{k−1} − Hz_k)
        if not first:
            step_sq += (a - alpha[i]) * (a - alpha[i])
        alpha[i] = a
        alpha_sq += a * a
        objective += 0.5 * a * r_i - a  # Qα_k = r_{k−1}
        r_next = max(r_i - mu * a, 1.0)
        r[i] = r_next
        u = y[i] * r_next
        for j in range(p_x):
            g[j] += X[i, j] * u
        g[p_x] += u
    return step_sq, alpha_sq, objective


@njit(cache=True, nogil=True, fastmath=_FAST)
def _lsvm_chunks(X, y, W, r, alpha, C, mu, first, n_chunks, chunk_lo, chunk_hi, parts, sums):
    """:func:`_lsvm_rows` over the chunks ``chunk_lo:chunk_hi`` of :func:`linsep._core.threads.row_chunks`.

    Chunk ``c`` leaves its share of ``g`` in ``parts[c]`` and its three sums in ``sums[c]``.
    """
    n, p = r.shape[0], parts.shape[1]
    for c in range(chunk_lo, chunk_hi):
        lo, hi = chunk_range(n, n_chunks, c)
        local = np.empty(p)  # a chunk's own allocation (no cache line shared with another thread's sums)
        step_sq, alpha_sq, objective = _lsvm_rows(X, y, W, r, alpha, C, mu, first, local, lo, hi)
        for j in range(p):  # not parts[c] = local: numba would compile a broadcasting check for it
            parts[c, j] = local[j]
        sums[c, 0], sums[c, 1], sums[c, 2] = step_sq, alpha_sq, objective


@njit(cache=True, nogil=True)
def _reduce_chunks(parts, sums, g):
    """``g`` and the three sums from the chunks, added in chunk order (compiled without reassociation)."""
    g[:] = 0.0
    step_sq, alpha_sq, objective = 0.0, 0.0, 0.0
    for c in range(parts.shape[0]):
        for j in range(g.shape[0]):
            g[j] += parts[c, j]
        step_sq += sums[c, 0]
        alpha_sq += sums[c, 1]
        objective += sums[c, 2]
    return step_sq, alpha_sq, objective


@njit(cache=True, nogil=True, parallel=True, fastmath=_FAST)
def _lsvm_rows_parallel(X, y, W, r, alpha, C, mu, first, g, n_chunks, n_threads):
    """The chunks of :func:`lsvm_pass` shared by ``n_threads`` threads (contiguous runs), reduced in chunk order."""
    p = g.shape[0]
    parts, sums = np.empty((n_chunks, p)), np.empty((n_chunks, 3))
    workers = max(1, min(n_threads, n_chunks))
    for t in prange(workers):
        _lsvm_chunks(X, y, W, r, alpha, C, mu, first, n_chunks, t * n_chunks // workers,
                     (t + 1) * n_chunks // workers, parts, sums)
    return _reduce_chunks(parts, sums, g)


@njit(cache=True, nogil=True, fastmath=_FAST)
def lsvm_pass(X, y, W, r, alpha, C, mu, first, g, threads):
    """One LSVM iteration over the rows of ``X`` (Sherman–Morrison–Woodbury form), fused into one pass.

    With :math:`W = z_k = S^{-1} H^t r_{k-1}` (bias last) and
    :math:`H = \\operatorname{diag}(y)\\,[X,\\ \\mathbf{1}]`, for every row :math:`i`:
    :math:`\\alpha_i = C \\bigl(r_i - y_i (x_i^t w + w_0)\\bigr)` (:math:`\\alpha_k = Q^{-1} r_{k-1}`),
    :math:`r_i \\leftarrow \\max(r_i - \\mu \\alpha_i, 1)` (:math:`r_k`) and
    :math:`g \\leftarrow g + y_i r_i (x_i, 1)` (:math:`g = H^t r_k`), so that ``X`` (C order, float32 or float64) is read once
    while each row is in cache.  ``r`` and ``alpha`` are updated in place.
    Returns :math:`\\lVert \\alpha_k - \\alpha_{k-1} \\rVert^2` (0 when ``first``),
    :math:`\\lVert \\alpha_k \\rVert^2` and the dual objective
    :math:`\\tfrac12 \\alpha_k^t r_{k-1} - \\mathbf{1}^t \\alpha_k`; sums in float64.  Large ``X`` is
    summed in the row chunks of :func:`linsep._core.threads.row_chunks`, each into
    its own partial ``g``, added in chunk order; ``threads`` threads
    (:func:`linsep._core.threads.pass_threads`; None: this thread) share the
    chunks, with the same result bit for bit.  A serial pass passes None so
    that numba compiles no parallel code for it (a branch on an argument
    typed None is removed before compilation).
    """
    n_chunks = row_chunks(r.shape[0], X.shape[1])
    if n_chunks == 1:
        return _lsvm_rows(X, y, W, r, alpha, C, mu, first, g, 0, r.shape[0])
    if threads is not None:
        return _lsvm_rows_parallel(X, y, W, r, alpha, C, mu, first, g, n_chunks, threads)
    parts, sums = np.empty((n_chunks, g.shape[0])), np.empty((n_chunks, 3))
    _lsvm_chunks(X, y, W, r, alpha, C, mu, first, n_chunks, 0, n_chunks, parts, sums)
    return _reduce_chunks(parts, sums, g)
