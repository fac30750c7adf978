"""The kernel Lagrangian SVM by active sets, for large data with few support vectors.

The fixed point of Mangasarian & Musicant's iteration (22) solves the
bound-constrained dual ``min ½αᵀ(Q + I/C)α − eᵀα, α ≥ 0``; when few
constraints are active at the optimum the iteration needs about ``C·λmax(Q)``
steps, while a primal–dual active-set method reaches the same point in a few
direct solves of ``Q_AA α_A = 1`` on the current active set.  Re-exported by
:mod:`linsep.solvers.lsvm`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from linsep._core.result import CONVERGED, MAX_ITER, SolveResult

__all__ = ["ACTIVE_SET_KKT_ATOL", "ACTIVE_SET_MAX_ACTIVE", "ACTIVE_SET_SUBSAMPLE", "active_set_kernel_lagrangian_svm"]

ACTIVE_SET_SUBSAMPLE = 1000
"""Samples of the first, small problem that gives :func:`active_set_kernel_lagrangian_svm` its starting set."""

ACTIVE_SET_MAX_ACTIVE = 4096
"""Largest active set :func:`active_set_kernel_lagrangian_svm` solves directly (``|A|³/3`` a factor)."""

ACTIVE_SET_KKT_ATOL = 1e-9
"""Largest violation ``1 − (Qα)_i`` of a constraint left at ``α_i = 0`` that counts as rounding (margins are in units of 1)."""


def active_set_kernel_lagrangian_svm(kernel_block, y, *, C=1.0, max_rounds=50, max_active=ACTIVE_SET_MAX_ACTIVE,
                                     subsample=ACTIVE_SET_SUBSAMPLE, random_state=0):
    """The fixed point of the kernel LSVM (22), found by primal–dual active sets from kernel columns only.

    Every fixed point of (22) solves the dual (19, 21), the bound-constrained
    quadratic programme
    :math:`\\min_{\\alpha \\ge 0} \\tfrac12 \\alpha^t Q \\alpha - \\mathbf{1}^t \\alpha` with
    :math:`Q = I/C + (y y^t) \\circ (K + \\mathbf{1}\\mathbf{1}^t)`, and that programme
    has one solution (:math:`Q \\succeq I/C`).  It is characterised by a set
    :math:`A` of free multipliers:

    .. math::

        Q_{AA}\\,\\alpha_A = 1,\\quad \\alpha_A > 0,\\qquad
        \\alpha_I = 0,\\quad (Q\\alpha)_I \\ge 1 \\quad (I = \\text{the rest}).

    The iteration (22) reaches it in about ``C·λ_max(Q)`` steps when few
    constraints are active (``λ_max`` grows with ``N``), each a pair of
    triangular solves with an ``N×N`` factor.  Here instead (Hintermüller,
    Ito & Kunisch's primal–dual active set method): solve ``Q_AA α_A = 1``,
    then keep in ``A`` the ``α_i > 0`` and add the ``i ∉ A`` with
    ``(Qα)_i < 1`` (the most violated ones, at most ``max(|A|, 256)`` per
    round), until the conditions above are met.
    The starting set comes from the same method on a subsample of
    ``subsample`` rows (every sample of the smaller class up to half of it,
    the rest drawn with ``random_state``), started from all of them, and
    extended by the samples whose constraint its solution violates.  A round
    reads ``N·|A|`` kernel values and factors ``Q_AA`` (``|A|³/3``); the
    ``N×N`` matrix is never formed.  The answer is checked, not assumed:
    ``status`` is ``"converged"`` only when the conditions above hold (up
    to :data:`ACTIVE_SET_KKT_ATOL`), which makes ``α`` the fixed point of
    (22) to rounding.

    Parameters
    ----------
    kernel_block : callable
        ``kernel_block(rows, cols)`` returns ``K[rows][:, cols]`` (``rows`` an
        index array, or ``None`` for all ``N`` rows).
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    C : float, default=1.0
        As in :func:`kernel_lagrangian_svm`.
    max_rounds : int, default=50
        Most active-set solves in all (subsample and full problem).
    max_active : int, default=ACTIVE_SET_MAX_ACTIVE
        Largest active set solved directly; a larger one stops the method.
    subsample, random_state
        Size and seed of the starting subsample.

    Returns
    -------
    SolveResult
        As :func:`kernel_lagrangian_svm` (``weights = y∘α``, ``intercept``,
        ``extra["alpha"]``), ``n_iter`` the number of active-set solves,
        ``status`` ``"converged"`` (the conditions hold) or ``"max_iter"``
        (they do not: the rounds, the size limit or a ``Q_AA`` that is not
        numerically positive definite stopped the method; the caller then
        runs the iteration), ``extra["active"]`` the size of ``A``.
    """
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    C = float(C)
    rng = np.random.default_rng(random_state)
    if n > subsample:  # a small problem first, for a starting set close to the answer
        smaller = 1.0 if np.count_nonzero(y > 0) <= n / 2 else -1.0
        minority, majority = np.flatnonzero(y == smaller), np.flatnonzero(y != smaller)
        minority = minority if minority.size <= subsample // 2 else rng.choice(minority, subsample // 2, replace=False)
        rows = np.sort(np.concatenate([minority, rng.choice(majority, subsample - minority.size, replace=False)]))
        alpha, _, rounds, done = _active_set_rounds(lambda idx: kernel_block(rows, rows[idx]), y[rows], C,
                                                    np.ones(rows.size, dtype=bool), max_rounds, max_active)
        if not done:
            return _active_set_result(np.zeros(n), y, rounds, False, 0)
        free = rows[alpha > 0]
        signed = y[free] * alpha[alpha > 0]
        margins = y * (kernel_block(None, free) @ signed + signed.sum())  # (Qα)_i for i outside the free set
        start = margins < 1.0
        start[free] = True
    else:
        start, rounds = np.ones(n, dtype=bool), 0
    alpha, active, more, done = _active_set_rounds(lambda idx: kernel_block(None, idx), y, C, start,
                                                   max_rounds - rounds, max_active)
    return _active_set_result(alpha, y, rounds + more, done, int(np.count_nonzero(active)))


def _active_set_rounds(columns, y, C, active, max_rounds, max_active):
    """Primal–dual active-set rounds from the set ``active``; ``(α, A, rounds, conditions met)``."""
    n = y.shape[0]
    alpha = np.zeros(n)
    for rounds in range(1, max_rounds + 1):
        idx = np.flatnonzero(active)
        if idx.size == 0 or idx.size > max_active:
            return alpha, active, rounds - 1, False
        K_A = columns(idx)
        Q_AA = K_A[idx] + 1.0
        Q_AA *= y[idx, None]
        Q_AA *= y[None, idx]
        Q_AA[np.diag_indices_from(Q_AA)] += 1.0 / C
        try:
            alpha_A = sla.cho_solve(sla.cho_factor(Q_AA, lower=True, check_finite=False), np.ones(idx.size),
                                    check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return alpha, active, rounds, False
        if not np.all(np.isfinite(alpha_A)):
            return alpha, active, rounds, False
        signed = y[idx] * alpha_A
        gradient = y * (K_A @ signed + signed.sum()) - 1.0  # Qα − 1 outside A (α_I = 0)
        alpha = np.zeros(n)
        alpha[idx] = alpha_A
        inactive = ~active
        if alpha_A.min() > 0 and not np.any(gradient[inactive] < -ACTIVE_SET_KKT_ATOL):
            return alpha, active, rounds, True
        following = np.zeros(n, dtype=bool)
        following[idx] = alpha_A > 0
        violated = np.flatnonzero(inactive & (gradient < -ACTIVE_SET_KKT_ATOL))
        if violated.size > max(idx.size, 256):
            # The most violated only, at most doubling A: far from the answer (a starting set from a
            # subsample in 10 dimensions) all violated constraints at once overshoot the free set fivefold.
            violated = violated[np.argsort(gradient[violated], kind="stable")[:max(idx.size, 256)]]
        following[violated] = True
        if np.array_equal(following, active):  # no progress without the conditions: give up
            return alpha, active, rounds, False
        active = following
    return alpha, active, max_rounds, False


def _active_set_result(alpha, y, n_iter, done, n_active):
    signed = y * alpha
    return SolveResult(weights=signed, n_iter=int(n_iter), status=CONVERGED if done else MAX_ITER,
                       intercept=float(signed.sum()), extra={"alpha": alpha, "active": n_active})
