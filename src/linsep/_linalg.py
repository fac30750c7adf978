"""Factor-once least-squares solves ``W = (YᵀDY + CĨ)⁺ YᵀD r`` without an inverse.

Ho–Kashyap iterations (Lauer & Bloch 2006, eqs. 7, 11, 14) solve one
least-squares problem per iteration with the same matrix ``Y`` and a new
right-hand side.  :class:`LeastSquaresFactor` factors once and then costs one
pass ``Yᵀ r`` plus two triangular solves per right-hand side.

Choice of factorisation (all on the column-equilibrated matrix ``Y S``, with
``S = diag(1/‖Y_j‖)``, so features of wildly different scales do not ruin the
conditioning of the Gram matrix):

* full column rank, or ``C > 0``: Cholesky of ``S(YᵀDY + CĨ)S`` (the cheapest
  path; about the cost of forming ``YᵀY``);
* rank-deficient or ``d + 1 > N`` with ``C = 0``: a thin SVD of ``D^{1/2} Y S``
  truncated as in :func:`numpy.linalg.pinv`, which yields the minimum-norm
  least-squares solution.  The SVD factors are applied, never multiplied into
  an explicit pseudo-inverse.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

# A Cholesky pivot below this (relative to the unit diagonal of the
# equilibrated Gram matrix) signals numerical rank deficiency: the normal
# equations would then lose all accuracy, so the SVD path takes over.
_PIVOT_TOL = 1e-7


def _to_dense(Y):
    return Y.toarray() if sp.issparse(Y) else Y


class LeastSquaresFactor:
    """Solver for ``min_W ‖D^{1/2}(Y W − r)‖² + C ‖Ĩ W‖²`` with ``Y`` fixed.

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (N, p)
        Sign-normalised augmented design matrix (bias column last).
    sample_weight : ndarray of shape (N,) or None
        The diagonal of ``D`` (``None`` means ``D = I``).
    ridge : float
        ``C >= 0``; the penalty leaves the last (bias) coordinate free, as the
        matrix ``Ĩ`` of Lauer & Bloch (2006), eq. 11.

    Attributes
    ----------
    method : {"cholesky", "eigh", "svd"}
        Which factorisation was used.
    rank : int
        Numerical rank found (``p`` on the Cholesky path).
    """

    def __init__(self, Y, sample_weight=None, ridge=0.0):
        self.Y = Y
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.ridge = float(ridge)
        n_samples, n_cols = Y.shape
        self._p = n_cols
        if self.sample_weight is None:
            gram = Y.T @ Y
        else:
            gram = Y.T @ (Y.multiply(self.sample_weight[:, None]) if sp.issparse(Y)
                          else Y * self.sample_weight[:, None])
        gram = np.asarray(_to_dense(gram), dtype=float)
        norms = np.sqrt(np.maximum(np.diag(gram), 0.0))
        norms[norms == 0.0] = 1.0
        self._scale = 1.0 / norms
        gram_scaled = gram * np.outer(self._scale, self._scale)
        if self.ridge > 0:
            penalty = self.ridge * self._scale[:-1] ** 2
            gram_scaled[np.arange(n_cols - 1), np.arange(n_cols - 1)] += penalty
        use_cholesky = self.ridge > 0 or n_cols <= n_samples
        if use_cholesky:
            try:
                self._cho = sla.cho_factor(gram_scaled, lower=True, check_finite=False)
                pivots = np.abs(np.diag(self._cho[0]))
                ok = np.all(np.isfinite(pivots)) and pivots.min() > _PIVOT_TOL * pivots.max()
            except (np.linalg.LinAlgError, ValueError):
                ok = False
            if ok:
                self.method, self.rank = "cholesky", n_cols
                return
            if self.ridge > 0:
                self._factor_eigh(gram_scaled)
                return
        self._factor_svd()

    def _factor_eigh(self, gram_scaled):
        # C > 0 makes the matrix positive definite in exact arithmetic; an
        # eigen-decomposition absorbs what rounding takes away.
        evals, evecs = sla.eigh(gram_scaled, check_finite=False)
        keep = evals > evals.max() * self._p * np.finfo(float).eps
        self._evecs, self._evals = evecs[:, keep], evals[keep]
        self.rank = int(keep.sum())
        self.method = "eigh"

    def _factor_svd(self):
        A = _to_dense(self.Y) * self._scale
        if self.sample_weight is not None:
            A = A * np.sqrt(self.sample_weight)[:, None]
        U, s, Vt = sla.svd(A, full_matrices=False, check_finite=False, lapack_driver="gesdd")
        cutoff = s.max(initial=0.0) * max(A.shape) * np.finfo(float).eps
        keep = s > cutoff
        self._U, self._s, self._Vt = U[:, keep], s[keep], Vt[keep]
        self.rank = int(keep.sum())
        self.method = "svd"

    def solve(self, rhs):
        """Return ``W`` minimising ``‖D^{1/2}(Y W − rhs)‖² + C‖ĨW‖²`` (minimum norm if not unique)."""
        rhs = np.asarray(rhs, dtype=float)
        if self.method == "svd":
            if self.sample_weight is not None:
                rhs = rhs * np.sqrt(self.sample_weight) if rhs.ndim == 1 else rhs * np.sqrt(self.sample_weight)[:, None]
            coef = self._Vt.T @ ((self._U.T @ rhs) / (self._s if rhs.ndim == 1 else self._s[:, None]))
        else:
            weighted = rhs if self.sample_weight is None else (
                rhs * self.sample_weight if rhs.ndim == 1 else rhs * self.sample_weight[:, None])
            g = np.asarray(self.Y.T @ weighted)
            return self.solve_normal(g)
        return coef * (self._scale if coef.ndim == 1 else self._scale[:, None])

    def solve_normal(self, g):
        """Return ``(YᵀDY + CĨ)⁻¹ g`` on the Cholesky/eigh paths (``g`` in original coordinates)."""
        s = self._scale if np.ndim(g) == 1 else self._scale[:, None]
        g_scaled = g * s
        if self.method == "cholesky":
            z = sla.cho_solve(self._cho, g_scaled, check_finite=False)
        elif self.method == "eigh":
            coeffs = self._evecs.T @ g_scaled
            z = self._evecs @ (coeffs / (self._evals if coeffs.ndim == 1 else self._evals[:, None]))
        else:  # pragma: no cover - solve() handles the SVD path itself
            raise RuntimeError("solve_normal is not available on the SVD path")
        return z * s
