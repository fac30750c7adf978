"""The array-API design: ``Y = diag(y)[X, 1]`` on any array-API namespace (PyTorch, CuPy, array-api-strict).

``X`` stays in its namespace and on its device; the pass (``Z = Y W``,
``E``, :math:`B_{k+1}`, the rules' scalars) is written with the namespace's
functions, unfused; the ``p × p`` Gram matrix and its factor live on the
host (NumPy, float64), and ``W`` (``p`` numbers) goes back and forth.  Used
with ``sklearn.set_config(array_api_dispatch=True)`` (:mod:`linsep.estimators.array_api_input`).
"""

from __future__ import annotations

import numpy as np

from linsep._core.certificates import nonseparability_certificate
from linsep._core.linalg import GramOnly, least_squares_solver
from linsep._core.plan import FLOAT64_ONLY, working_dtype
from linsep.designs.base import Design

__all__ = ["ArrayAPIDesign"]


def host_copy(array, xp):
    """``array`` (of namespace ``xp``, on any device) copied to a NumPy array of its own type: one explicit copy.

    Never ``np.asarray(array)``: a CUDA tensor or a CuPy array refuses the
    implicit conversion.  scikit-learn's ``move_to`` copies through DLPack
    and falls back on each library's own method (``.cpu().numpy()``,
    ``.get()``).
    """
    try:
        from sklearn.utils._array_api import move_to
    except ImportError:  # scikit-learn < 1.8: the library-specific copy only
        from sklearn.utils._array_api import _convert_to_numpy

        return np.asarray(_convert_to_numpy(array, xp))
    return np.asarray(move_to(array, xp=np, device="cpu"))


def to_host(array, xp):
    """``array`` (of namespace ``xp``) as a float64 NumPy array (one explicit copy, :func:`host_copy`)."""
    return np.asarray(host_copy(array, xp), dtype=np.float64)


class ArrayAPIDesign(Design):
    """``Y = diag(y)[X, 1]`` for ``X`` (N, d) and labels ``y`` (±1) of the namespace ``xp``, never formed."""

    offers_compiled = False
    ndim = 2

    def __init__(self, X, y, xp, device=None):
        self.X, self.y, self.xp, self.device = X, y, xp, device
        self.shape = (X.shape[0], X.shape[1] + 1)
        self.dtype = working_dtype(X, FLOAT64_ONLY, xp=xp)  # the solver's weights; the estimator returns them in X's type

    # --- products in the namespace, sums to the host -----------------------------------------------
    def _to_xp(self, values):
        return self.xp.asarray(values, dtype=self.X.dtype, device=self.device)

    def scores(self, W):
        """``Y W`` in the namespace."""
        W = self._to_xp(W)
        return self.y * (self.X @ W[:-1] + W[-1])

    def rmatvec(self, u):
        """``Yᵀ u`` on the host (float64)."""
        t = self.y * u
        return np.append(to_host(self.X.T @ t, self.xp), float(self.xp.sum(t)))

    def gram(self, D=None):
        """``[X, 1]ᵀ D [X, 1]`` on the host (float64)."""
        xp = self.xp
        XD = self.X if D is None else self.X * D[:, None]
        weights = xp.ones(self.X.shape[0], dtype=self.X.dtype, device=self.device) if D is None else D
        p = self.shape[1]
        gram = np.empty((p, p))
        gram[:-1, :-1] = to_host(self.X.T @ XD, xp)
        gram[:-1, -1] = gram[-1, :-1] = to_host(xp.sum(XD, axis=0), xp)
        gram[-1, -1] = float(xp.sum(weights))
        return gram

    # --- the Design protocol --------------------------------------------------------------------------
    def least_squares_solver(self, ridge, gram=None, minimum_norm=True):
        return least_squares_solver(GramOnly(self.shape), None, ridge, gram=self.gram() if gram is None else gram)

    def constant_vector(self, value):
        return self.xp.full(self.X.shape[0], float(value), dtype=self.X.dtype, device=self.device)

    def vector(self, values):
        return self._to_xp(values)

    def solve_target(self, factor, B, offset, **solve):
        return factor.solve_normal(self.rmatvec(B + offset), **solve)

    def hk_pass(self, W, B, D, *, offset, two_mu, tol, update, irls, validation=None, fitted=None):
        return _ArrayAPIPass(self, W, B, D, offset, two_mu, tol, update, validation)

    def count_nonpositive(self, W):
        xp = self.xp
        Z = self.scores(W)
        return (int(xp.sum(xp.astype(Z <= 0, xp.int64))), float(xp.min(Z)), bool(xp.all(xp.isfinite(Z))))

    def host(self, vector, dtype=None):
        return vector  # N-vectors stay in the namespace

    def checked_certificate(self, u):  # pragma: no cover - the direct factor never asks
        return u


class _ArrayAPIPass:
    """One Ho–Kashyap pass with the namespace's functions (see :class:`~linsep.designs.base.HKPassState`)."""

    def __init__(self, design, W, B, D, offset, two_mu, tol, update, validation):
        xp = design.xp
        self.design, self.B, self.D, self.offset, self.update = design, B, D, offset, update
        Z = design.scores(W)
        self.E = E = Z - B if offset == 0.0 else Z - offset - B
        self.J = float(xp.sum(E * E)) if D is None else float(xp.sum(E * D * E))
        self.wrong = int(xp.sum(xp.astype(Z <= 0, xp.int64)))
        self.separated = bool(xp.min(Z) > 0)
        self.max_e, self.min_e = float(xp.max(E)), float(xp.min(E))
        self.max_b = float(xp.max(xp.abs(B)))
        target = B + offset
        self.fixed_point = bool(xp.all((target > 0) & (xp.abs(E) <= tol * target)))
        self.B_next = B + two_mu * xp.clip(E, min=0.0)
        self.val_errors = None if validation is None else validation.count_nonpositive(W)[0]
        self._step_weights = D  # the D of the next W-step: D_k, or D_{k+1} once reweighted

    def reweighted(self, factor, irls_floor):
        xp = self.design.xp
        abs_e = xp.abs(self.E)
        floor = float(irls_floor * float(xp.max(abs_e)) + np.finfo(np.float64).tiny)
        D = 1.0 / xp.clip(abs_e, min=floor)
        factor = least_squares_solver(GramOnly(self.design.shape), None, factor.ridge, gram=self.design.gram(D))
        self._step_weights = D
        return factor, D

    def _weighted(self, r):
        return r if self._step_weights is None else r * self._step_weights

    def solve_margin(self, factor):
        return factor.solve_normal(self.design.rmatvec(self._weighted(self.B_next + self.offset)))

    def solve_increment(self, factor):
        return factor.solve_normal(self.design.rmatvec(self._weighted(self.design.xp.abs(self.E))))

    def certificate(self):
        return nonseparability_certificate(self.E, self.D, xp=self.design.xp)
