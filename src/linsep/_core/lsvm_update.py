"""The row-wise update of the linear Lagrangian SVM, as whole-vector operations.

Iteration (22) of Mangasarian & Musicant (2001) on
:math:`H = \\operatorname{diag}(y)\\,[X,\\ \\mathbf{1}]`:
:math:`\\alpha_k = C (r_{k-1} - H W_k)` (:math:`= Q^{-1} r_{k-1}` by
Sherman–Morrison–Woodbury), :math:`r_k = \\max(r_{k-1} - \\mu \\alpha_k, 1)`
and :math:`g_k = H^t r_k`, then :math:`W_{k+1} = S^{-1} g_k`.  The row-wise part is the same on all rows in memory
(sparse ``X``, weighted rows) and on one row block of a dask design, so it is
written once here; the in-memory solver (:mod:`linsep.solvers.lsvm`) and the
blockwise design (:mod:`linsep.designs.dask`) both call it, and both steps
advance by :class:`LinearStepping`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LinearStepping", "dual_update", "linear_pass"]


def dual_update(scores, y, r, alpha, C, mu, linear_term=None):
    """The row-wise part of an LSVM iteration, from the scores ``s = [X, 1] W_k`` (whole-vector operations).

    :math:`\\alpha_k = C (r_{k-1} - y \\circ s)` (:math:`\\alpha_k = Q^{-1} r_{k-1}`) and
    :math:`r_k = \\max(r_{k-1} - \\mu \\alpha_k, c)` (see ``_LinearStep``).  ``scores`` is
    overwritten (it becomes :math:`\\alpha_k`); ``r`` and ``alpha`` (:math:`\\alpha_{k-1}`,
    ``None`` on the first pass) are not modified.  Elementwise, so NumPy's own loops
    rather than a compiled one (linsep compiles only sequential updates): slower per pass than a
    compiled loop, a small share of a sparse fit, and a sparse fit then loads no compiled code at all
    (the numbers: ``docs/design.md``, performance notes).

    Returns
    -------
    alpha, r : ndarray
        :math:`\\alpha_k` and :math:`r_k`.
    step_sq, alpha_sq, objective : float
        :math:`\\lVert \\alpha_k - \\alpha_{k-1} \\rVert^2` (0 on the first pass),
        :math:`\\lVert \\alpha_k \\rVert^2` and the dual objective
        :math:`f(\\alpha_k) = \\tfrac12 \\alpha_k^t r_{k-1} - c^t \\alpha_k`
        (:math:`Q \\alpha_k = r_{k-1}`).

    ``linear_term`` ``c`` (``None``: ``1``) replaces ``1`` in ``r_k = max(·, c)``
    and ``f = ½αᵗQα − cᵗα``: the weighted dual on scaled rows (``c = √s``).
    """
    t = scores
    t *= y
    np.subtract(r, t, out=t)
    t *= C  # α_k
    if alpha is None:
        r_next, step_sq = np.empty_like(t), 0.0
    else:
        r_next = np.subtract(t, alpha)  # α_k − α_{k−1}, then the buffer of r_k (one new vector in all)
        step_sq = float(r_next @ r_next)
    alpha_sq = float(t @ t)
    objective = 0.5 * float(t @ r) - float(t.sum() if linear_term is None else t @ linear_term)
    np.multiply(t, mu, out=r_next)
    np.subtract(r, r_next, out=r_next)
    np.maximum(r_next, 1.0 if linear_term is None else linear_term, out=r_next)
    return t, r_next, step_sq, alpha_sq, objective


def linear_pass(X, y, weights, r, alpha, C, mu, linear_term=None):
    """The steps of ``linsep.solvers.lsvm.loops.lsvm_pass`` as whole-vector operations (sparse ``X``, dask row blocks).

    From :math:`W_k` = ``weights`` and :math:`r_{k-1}` = ``r``: the scores
    :math:`[X,\\ \\mathbf{1}] W_k`, then :func:`dual_update` (:math:`\\alpha_k`, :math:`r_k`)
    and :math:`g_k = H^t r_k = [X,\\ \\mathbf{1}]^t (y \\circ r_k)`.  No argument is modified.

    Returns
    -------
    alpha, r, g : ndarray
        ``α_k``, ``r_k`` and ``g_k``.
    step_sq, alpha_sq, objective : float
        As :func:`dual_update` returns them.
    """
    t = np.asarray(X @ weights[:-1]).ravel()
    t += weights[-1]
    alpha_next, r_next, step_sq, alpha_sq, objective = dual_update(t, y, r, alpha, C, mu, linear_term)
    u = y * r_next
    g = np.append(np.asarray(X.T @ u).ravel(), u.sum())
    return alpha_next, r_next, g, step_sq, alpha_sq, objective


class LinearStepping:
    """One step of iteration (22) for a step object with ``_pass()``, ``weights`` and the next solve ``_next``.

    :math:`W_{k+1} = S^{-1} g_k` was solved by the previous pass (``_next``, with its
    right-hand side ``_next_rhs`` where the step keeps one); the step makes it
    current, runs the pass (:math:`\\alpha_{k+1}`, :math:`r_{k+1}`, :math:`g_{k+1}` and
    the next solve) and returns
    :math:`(\\lVert \\alpha_{k+1} - \\alpha_k \\rVert^2, \\lVert \\alpha_{k+1} \\rVert^2,
    \\lVert W_{k+1} - W_k \\rVert^2, \\lVert W_{k+1} \\rVert^2, f(\\alpha_{k+1}))`
    for the stopping rule.
    """

    _next_rhs = None

    def __call__(self):
        previous, self.weights, self._rhs = self.weights, self._next, self._next_rhs
        step_sq, alpha_sq, _, _, self.objective = self._pass()
        diff = self.weights - previous
        return step_sq, alpha_sq, float(diff @ diff), float(self.weights @ self.weights), self.objective

    def polish(self):
        """Re-solve the final weights to full accuracy where the step's solves were inexact (none here: exact)."""
