"""The row-wise update of the linear Lagrangian SVM, as whole-vector operations.

Iteration (22) of Mangasarian & Musicant (2001) on ``H = diag(y)[X, 1]``:
``α_k = C(r_{k−1} − H W_k)`` (``= Q⁻¹r_{k−1}`` by Sherman–Morrison–Woodbury),
``r_k = max(r_{k−1} − μα_k, 1)`` and ``g_k = Hᵗr_k``, then
``W_{k+1} = S⁻¹g_k``.  The row-wise part is the same on all rows in memory
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

    ``α_k = C(r_{k−1} − y∘s)`` (``α_k = Q⁻¹r_{k−1}``) and ``r_k = max(r_{k−1} − μα_k, c)``
    (see ``_LinearStep``).  ``scores`` is overwritten (it becomes ``α_k``); ``r`` and ``alpha``
    (``α_{k−1}``, ``None`` on the first pass) are not modified.  Elementwise, so NumPy's own loops
    rather than a compiled one (linsep compiles only sequential updates): slower per pass than a
    compiled loop, a small share of a sparse fit, and a sparse fit then loads no compiled code at all
    (the numbers: ``docs/design.md``, performance notes).

    Returns
    -------
    alpha, r : ndarray
        ``α_k`` and ``r_k``.
    step_sq, alpha_sq, objective : float
        ``‖α_k − α_{k−1}‖²`` (``0`` on the first pass), ``‖α_k‖²`` and the
        dual objective ``f(α_k) = ½α_kᵗr_{k−1} − cᵗα_k`` (``Qα_k = r_{k−1}``).

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

    From ``W_k = weights`` and ``r_{k−1} = r``: the scores ``[X, 1] W_k``, then :func:`dual_update`
    (``α_k``, ``r_k``) and ``g_k = Hᵗr_k = [X, 1]ᵗ(y∘r_k)``.  No argument is modified.

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

    ``W_{k+1} = S⁻¹g_k`` was solved by the previous pass (``_next``, with its
    right-hand side ``_next_rhs`` where the step keeps one); the step makes it
    current, runs the pass (``α_{k+1}``, ``r_{k+1}``, ``g_{k+1}`` and the next
    solve) and returns ``(‖α_{k+1} − α_k‖², ‖α_{k+1}‖², ‖W_{k+1} − W_k‖²,
    ‖W_{k+1}‖², f(α_{k+1}))`` for the stopping rule.
    """

    _next_rhs = None

    def __call__(self):
        previous, self.weights, self._rhs = self.weights, self._next, self._next_rhs
        step_sq, alpha_sq, _, _, self.objective = self._pass()
        diff = self.weights - previous
        return step_sq, alpha_sq, float(diff @ diff), float(self.weights @ self.weights), self.objective

    def polish(self):
        """Re-solve the final weights to full accuracy where the step's solves were inexact (none here: exact)."""
