"""Compiled sequential loops: one epoch of the single-sample perceptron (dense and CSR rows),
and the kernel perceptron's scan for its next mistake.

These updates are inherently sequential (each sample's correction changes the
weights the next sample sees), so they are compiled with numba rather than
vectorised.  The LMS epochs live with LMS (:mod:`linsep.solvers.lms`).
"""

from __future__ import annotations

from numba import njit

from linsep._core.csr_rows import FAST as _FAST
from linsep._core.csr_rows import csr_row_add, csr_row_score

__all__ = ["perceptron_epoch", "perceptron_epoch_csr", "next_mistake", "add_column_and_scan"]


@njit(cache=True, nogil=True, fastmath=_FAST)
def perceptron_epoch(X, y, order, w, eta, margin):
    """One pass of the single-sample perceptron; return the number of corrections.

    For ``i`` in ``order``: if ``y_i (w·x_i + w_0) <= margin`` then
    ``(w, w_0) += eta · y_i (x_i, 1)``.
    """
    d = X.shape[1]
    mistakes = 0
    for t in range(order.shape[0]):
        i = order[t]
        s = w[d]
        for j in range(d):
            s += X[i, j] * w[j]
        if y[i] * s <= margin:
            step = eta * y[i]
            for j in range(d):
                w[j] += step * X[i, j]
            w[d] += step
            mistakes += 1
    return mistakes


@njit(cache=True, nogil=True, fastmath=_FAST)
def perceptron_epoch_csr(indptr, indices, data, y, order, w, eta, margin):
    """:func:`perceptron_epoch` on a CSR matrix ``(indptr, indices, data)``."""
    mistakes = 0
    for t in range(order.shape[0]):
        i = order[t]
        if y[i] * csr_row_score(indptr, indices, data, i, w) <= margin:
            csr_row_add(indptr, indices, data, i, w, eta * y[i])
            mistakes += 1
    return mistakes


@njit(cache=True, nogil=True)
def next_mistake(f, y, order, start):
    """Return the first position ``t >= start`` with ``y_i f_i <= 0`` (``i = order[t]``), or -1."""
    for t in range(start, order.shape[0]):
        i = order[t]
        if y[i] * f[i] <= 0.0:
            return t
    return -1


@njit(cache=True, nogil=True)
def add_column_and_scan(f, y, order, t, column, coef, bias):
    """Kernel perceptron step: ``f += coef · (column + bias)``, then scan on from ``t + 1``.

    ``column`` holds ``k(x_j, x_i)`` for all ``j``, the one kernel column the
    update at ``i = order[t]`` needs (``bias`` is 1 when the model has an
    intercept, else 0); the decision values ``f`` of all training points are
    thus kept current without recomputing any sum.  Returns the next mistake
    position (see :func:`next_mistake`).
    """
    for j in range(f.shape[0]):
        f[j] += coef * (column[j] + bias)
    return next_mistake(f, y, order, t + 1)


# --- Ho–Kashyap --------------------------------------------------------------------------------
