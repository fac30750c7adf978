"""The LMS epochs, compiled: one pass of the single-sample Widrow–Hoff rule over dense or CSR rows.

The update is sequential (each sample's correction changes the weights the next one sees), so it is compiled with
numba; :func:`linsep.solvers.mse.lms` drives the epochs (Duda, Hart & Stork, *Pattern Classification*, §5.8.4).
"""

from __future__ import annotations

from numba import njit

from linsep._core.csr_rows import FAST, csr_row_add, csr_row_score

__all__ = ["lms_epoch", "lms_epoch_csr"]


@njit(cache=True, nogil=True, fastmath=FAST)
def lms_epoch(X, y, b, order, w, eta):
    """One pass of the single-sample Widrow–Hoff rule; return ``Σ_i r_i²``.

    For ``i`` in ``order``: ``r_i = y_i (w·x_i + w_0) − b_i`` and
    ``(w, w_0) −= eta · r_i · y_i (x_i, 1)``.  The returned sum of the
    residuals seen during the pass is a free running estimate of ``J_s``.
    """
    d = X.shape[1]
    loss = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        s = w[d]
        for j in range(d):
            s += X[i, j] * w[j]
        r = y[i] * s - b[i]
        loss += r * r
        step = eta * r * y[i]
        for j in range(d):
            w[j] -= step * X[i, j]
        w[d] -= step
    return loss



@njit(cache=True, nogil=True, fastmath=FAST)
def lms_epoch_csr(indptr, indices, data, y, b, order, w, eta):
    """:func:`lms_epoch` on a CSR matrix ``(indptr, indices, data)``."""
    loss = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        r = y[i] * csr_row_score(indptr, indices, data, i, w) - b[i]
        loss += r * r
        csr_row_add(indptr, indices, data, i, w, -(eta * r * y[i]))
    return loss
