"""Conjugate gradients for the matrix-free least-squares solves, and the steps they recycle.

:func:`_pcg` is the preconditioned CG of
:class:`linsep._linalg.IterativeLeastSquares`; :class:`RecycledSteps` keeps
the last steps of an iteration's inexact solves (one matrix, right-hand sides
that change a little each iteration) and starts the next solve from their
Galerkin correction: Krylov information reused across the iterations of
Ho–Kashyap and of the Lagrangian SVM.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RECYCLED_STEPS", "RecycledSteps"]

RECYCLED_STEPS = 12
"""Steps of the previous inexact solves kept to start the next one (:class:`RecycledSteps`)."""


def _pcg(matvec, b, x, inv_diag, rtol, max_iter, stall=100, forcing=0.0, start=None):
    """Preconditioned conjugate gradients for ``M x = b`` (``M`` symmetric positive semi-definite) from ``x``.

    Stops when ``‖b − M x‖ <= max(rtol ‖b‖, forcing ‖b − M x_0‖)`` (the
    recursively updated residual; ``x_0`` the starting point), after
    ``max_iter`` iterations, or when the residual has not reached a
    new minimum for ``stall`` iterations (rounding floor).  ``start``
    (optional) is ``(r, reference)``: the residual ``b − M x`` already known
    and the norm that ``forcing`` multiplies (instead of ``‖b − M x_0‖``).
    Returns ``(x, iterations, relative residual, converged)``; ``x`` is
    updated in place.
    """
    b_norm = np.linalg.norm(b)
    if b_norm == 0.0:
        x[:] = 0.0
        return x, 0, 0.0, True
    r, reference = (b - matvec(x), None) if start is None else start
    r_norm = best = np.linalg.norm(r)
    target = max(rtol * b_norm, forcing * (r_norm if reference is None else reference))
    if r_norm <= target:
        return x, 0, r_norm / b_norm, True
    z = r if inv_diag is None else r * inv_diag
    direction = z.copy()
    rz = float(r @ z)
    since_best = 0
    for it in range(1, max_iter + 1):
        q = matvec(direction)
        curvature = float(direction @ q)
        if not curvature > 0:  # a direction of zero curvature: nothing left to gain (rounding)
            return x, it, r_norm / b_norm, r_norm <= target
        alpha = rz / curvature
        x += alpha * direction
        r -= alpha * q
        r_norm = np.linalg.norm(r)
        if r_norm <= target:
            return x, it, r_norm / b_norm, True
        if r_norm < best:
            best, since_best = r_norm, 0
        else:
            since_best += 1
            if since_best >= stall:
                break
        z = r if inv_diag is None else r * inv_diag
        rz_next = float(r @ z)
        direction *= rz_next / rz
        direction += z
        rz = rz_next
    return x, it, r_norm / b_norm, False


class RecycledSteps:
    """The last :data:`RECYCLED_STEPS` steps ``s_j`` of a solver's solves and their images ``M s_j``.

    In an iteration that converges linearly (Ho–Kashyap's margins, the
    Lagrangian SVM's ``r_k``) the right-hand side of the W-step changes along
    nearly the same directions from one iteration to the next (its slowest
    modes), so the new solution ``W_k`` lies close to
    ``W_{k−1} + span{s_j}``.  :meth:`corrected` moves a warm start by the
    Galerkin (``M``-orthogonal) correction in that span,

    .. math::

        x \\leftarrow x + V c, \\qquad (V^t M V)\\, c = V^t r, \\qquad r \\leftarrow r - (M V) c,

    which minimises the ``M``-norm of the error over the span (Saad, *Iterative
    Methods for Sparse Linear Systems*, 2nd ed., §5.2; Parks et al., "Recycling
    Krylov subspaces for sequences of linear systems", SIAM J. Sci. Comput. 28,
    2006): CG then starts from a residual that is a fraction of the plain warm
    start's.  ``M V`` comes from the solves' own residuals (``M s = r_0 −
    r_end``): no extra product.
    """

    def __init__(self, capacity=RECYCLED_STEPS):
        self.capacity = capacity
        self._V = self._MV = None  # rows: the kept steps and their images (a ring of ``capacity``)
        self._small = np.zeros((capacity, capacity))  # VᵀMV, updated one row and column per kept step
        self._count = self._next = 0

    def corrected(self, x, r):
        """Move ``x`` (in place) by the correction in the span of the kept steps; return the new residual.

        ``c`` is found through the eigenvalues of the small matrix ``VᵀMV``,
        those at or below ``1e-12`` of the largest dropped (nearly collinear
        steps, or steps in the null space of a singular ``M``).
        """
        m = self._count
        if m == 0:
            return r.copy()
        V, MV = self._V[:m], self._MV[:m]
        small = self._small[:m, :m]
        values, vectors = np.linalg.eigh(0.5 * (small + small.T))
        keep = values > 1e-12 * max(values[-1], 0.0)
        if not keep.any():
            return r.copy()
        vectors = vectors[:, keep]
        c = vectors @ ((vectors.T @ (V @ r)) / values[keep])
        x += c @ V
        return r - c @ MV

    def keep(self, step, image):
        """Keep ``(s, M s)`` (a step of positive curvature) in place of the oldest once :attr:`capacity` are kept."""
        if not (np.all(np.isfinite(image)) and float(step @ image) > 0.0):
            return
        if self._V is None:
            self._V, self._MV = np.empty((self.capacity, step.shape[0])), np.empty((self.capacity, step.shape[0]))
        j = self._next
        self._V[j], self._MV[j] = step, image
        self._count = min(self._count + 1, self.capacity)
        self._next = (j + 1) % self.capacity
        m = self._count
        row = self._V[:m] @ image  # sᵢᵀ M s_j (M symmetric)
        self._small[j, :m] = row
        self._small[:m, j] = row
