"""The linear Lagrangian SVM's fused pass, compiled (:func:`lsvm_pass`).

See :class:`linsep.solvers.lsvm._LinearStep` for the iteration it serves.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["lsvm_pass"]

_FAST = {"reassoc", "contract", "arcp", "nsz"}  # as in linsep._loops


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


@njit(cache=True, nogil=True, parallel=True, fastmath=_FAST)
def _lsvm_rows_parallel(X, y, W, r, alpha, C, mu, first, g, n_chunks):
    """:func:`_lsvm_rows` over ``n_chunks`` contiguous row ranges, one per thread, reduced in chunk order."""
    n, p = r.shape[0], g.shape[0]
    parts = np.zeros((n_chunks, p))
    sums = np.zeros((n_chunks, 3))
    for c in prange(n_chunks):
        local = np.empty(p)  # a thread's own allocation (no shared cache lines)
        step_sq, alpha_sq, objective = _lsvm_rows(X, y, W, r, alpha, C, mu, first, local, c * n // n_chunks,
                                                  (c + 1) * n // n_chunks)
        parts[c] = local
        sums[c, 0], sums[c, 1], sums[c, 2] = step_sq, alpha_sq, objective
    g[:] = 0.0
    for c in range(n_chunks):
        for j in range(p):
            g[j] += parts[c, j]
    return sums[:, 0].sum(), sums[:, 1].sum(), sums[:, 2].sum()


@njit(cache=True, nogil=True, fastmath=_FAST)
def lsvm_pass(X, y, W, r, alpha, C, mu, first, g, n_chunks):
    """One LSVM iteration over the rows of ``X`` (Sherman–Morrison–Woodbury form), fused into one pass.

    With ``W = z_k = S⁻¹Hᵀr_{k−1}`` (bias last) and ``H = diag(y)[X, 1]``, for
    every row ``i``: ``α_i = C(r_i − y_i(x_iᵀw + w_0))`` (``α_k = Q⁻¹r_{k−1}``),
    ``r_i ← max(r_i − μα_i, 1)`` (``r_k``) and ``g += y_i r_i (x_i, 1)``
    (``g = Hᵀr_k``), so that ``X`` (C order, float32 or float64) is read once
    while each row is in cache.  ``r`` and ``alpha`` are updated in place.
    Returns ``‖α_k − α_{k−1}‖²`` (0 when ``first``), ``‖α_k‖²`` and the dual
    objective ``½α_kᵀr_{k−1} − 1ᵀα_k``; sums in float64.  ``n_chunks > 1``
    splits the rows over threads (:func:`pass_threads`), each summing into
    its own partial ``g``, reduced once in chunk order.
    """
    if n_chunks > 1:
        return _lsvm_rows_parallel(X, y, W, r, alpha, C, mu, first, g, n_chunks)
    return _lsvm_rows(X, y, W, r, alpha, C, mu, first, g, 0, r.shape[0])
