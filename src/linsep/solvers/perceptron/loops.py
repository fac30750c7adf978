"""Compiled sequential loops: one epoch of the single-sample perceptron and of LMS (dense and CSR rows),
and the kernel perceptron's scan for its next mistake.

These updates are inherently sequential (each sample's correction changes the
weights the next sample sees), so they are compiled with numba rather than
vectorised; re-exported by ``linsep.solvers.ho_kashyap.loops``.
"""

from __future__ import annotations

from numba import njit

__all__ = ["perceptron_epoch", "perceptron_epoch_csr", "lms_epoch", "lms_epoch_csr", "next_mistake",
           "add_column_and_scan"]

# The same fast-math flags as linsep.solvers.ho_kashyap.loops (reassociation vectorises the dot products; no nnan/ninf).
_FAST = {"reassoc", "contract", "arcp", "nsz"}


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


@njit(cache=True, nogil=True, fastmath=_FAST)
def _csr_row_score(indptr, indices, data, i, w):
    """``[x_i, 1] · w`` for row ``i`` of a CSR matrix (bias last in ``w``)."""
    s = w[w.shape[0] - 1]
    for p in range(indptr[i], indptr[i + 1]):
        s += data[p] * w[indices[p]]
    return s


@njit(cache=True, nogil=True, fastmath=_FAST)
def _csr_row_add(indptr, indices, data, i, w, step):
    """``w += step · [x_i, 1]`` for row ``i`` of a CSR matrix, in place."""
    for p in range(indptr[i], indptr[i + 1]):
        w[indices[p]] += step * data[p]
    w[w.shape[0] - 1] += step


@njit(cache=True, nogil=True, fastmath=_FAST)
def perceptron_epoch_csr(indptr, indices, data, y, order, w, eta, margin):
    """:func:`perceptron_epoch` on a CSR matrix ``(indptr, indices, data)``."""
    mistakes = 0
    for t in range(order.shape[0]):
        i = order[t]
        if y[i] * _csr_row_score(indptr, indices, data, i, w) <= margin:
            _csr_row_add(indptr, indices, data, i, w, eta * y[i])
            mistakes += 1
    return mistakes


@njit(cache=True, nogil=True, fastmath=_FAST)
def lms_epoch_csr(indptr, indices, data, y, b, order, w, eta):
    """:func:`lms_epoch` on a CSR matrix ``(indptr, indices, data)``."""
    loss = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        r = y[i] * _csr_row_score(indptr, indices, data, i, w) - b[i]
        loss += r * r
        _csr_row_add(indptr, indices, data, i, w, -(eta * r * y[i]))
    return loss


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
