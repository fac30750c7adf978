"""Compiled inner loops for the inherently sequential rules.

The single-sample perceptron, the single-sample Widrow–Hoff (LMS) rule and the
kernel perceptron update the model after every sample, so sample ``i + 1``
sees the weights left by sample ``i``: there is no matrix product to hand to
BLAS.  These loops are compiled with numba; everything else in linsep stays in
NumPy.

The loops never form the sign-normalised matrix ``Y = diag(y)[X, 1]`` (that
would copy the data once per fit): they read row ``x_i`` of ``X`` and apply
the label and the bias coordinate on the fly, which is the same arithmetic as
working on ``y_i = y_i (x_i, 1)``.  ``X`` must be a C-contiguous float64 array
(rows contiguous in memory); the weight vector ``w`` has the bias **last** and
is updated in place.

``cache=True`` keeps the compiled code on disk, so only the first import on a
machine pays the compilation (about a second for all three).
"""

from __future__ import annotations

from numba import njit

__all__ = ["perceptron_epoch", "lms_epoch", "next_mistake", "add_column_and_scan"]

# Reassociation lets LLVM vectorise the dot products (the result may differ
# from a left-to-right sum in the last bits, which no rule here depends on);
# no 'nnan'/'ninf' flags: inputs are validated finite, and we do not want
# comparisons with NaN to be optimised away if that ever changes.
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
