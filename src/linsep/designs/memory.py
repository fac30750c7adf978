"""The in-memory design: a NumPy array, a :class:`~linsep._core.signed_design.SignedDesign` view or a SciPy sparse ``Y``.

The design computes the products the Python Ho–Kashyap driver asks for (``Y W``, the W-step's solves;
its pass is :class:`linsep.solvers.ho_kashyap.step.NamespacePass`: sparse ``Y``,
modified HK, the eigh and SVD factorisations, traced runs, conjugate
gradients for wide ``Y``); dense data also offer the compiled segment
(:mod:`linsep.solvers.ho_kashyap.segments`) through :meth:`InMemoryDesign.by_rows`
and :meth:`InMemoryDesign.by_columns`.
"""

from __future__ import annotations

import numpy as np

from linsep._core.certificates import FIT_PROOF_RTOL, design_proof_residuals, proof_residuals
from linsep._core.signed_design import SignedDesign
from linsep._core.linalg import least_squares_solver
from linsep._core.plan import working_dtype
from linsep.designs.base import Design

__all__ = ["InMemoryDesign", "as_design"]

# Up to this many entries in Y (1 MiB of doubles, about one core's L2 cache) a SignedDesign is
# formed (the column sweep of the compiled loop and the NumPy paths read Y itself); above it, Y is
# read by rows in place.
BY_COLUMNS_MAX_ENTRIES = 131_072


def as_design(Y, by_columns_max_entries=BY_COLUMNS_MAX_ENTRIES):
    """``Y`` itself if it is a design (it has ``count_nonpositive``), else :class:`InMemoryDesign` of ``Y``."""
    if Y is None or hasattr(Y, "count_nonpositive"):
        return Y
    return InMemoryDesign(Y, by_columns_max_entries)


class InMemoryDesign(Design):
    """``Y`` in memory: dense (an ndarray or a :class:`~linsep._core.signed_design.SignedDesign` view) or sparse.

    ``by_columns_max_entries``: a view with at most this many entries is
    formed (:data:`BY_COLUMNS_MAX_ENTRIES`), so the compiled loop sweeps it by
    columns; a larger one stays a view, read by rows.
    """

    xp = np

    def __init__(self, Y, by_columns_max_entries=BY_COLUMNS_MAX_ENTRIES):
        self.dtype = working_dtype(Y)
        if isinstance(Y, SignedDesign) and Y.size <= by_columns_max_entries:
            Y = Y.toarray()
        self.Y = Y
        self.shape = Y.shape
        self.ndim = 2
        self.size = Y.shape[0] * Y.shape[1]
        self.by_columns_max_entries = by_columns_max_entries
        self.offers_compiled = isinstance(Y, (np.ndarray, SignedDesign))

    # --- what the drivers ask -------------------------------------------------------------------
    def __matmul__(self, W):
        return self.Y @ W

    def least_squares_solver(self, ridge, gram=None, minimum_norm=True, singular="svd"):
        # minimum_norm=False (Ho–Kashyap without validation rows): iterative W-steps (wide Y) are
        # preconditioned even for C = 0; their fitted values Y W are those of the minimum-norm solves, and
        # the driver maps the returned weights to the minimum norm.  singular: LeastSquaresFactor's.
        return least_squares_solver(self.Y, None, ridge, gram=gram, minimum_norm=minimum_norm, singular=singular)

    def constant_vector(self, value):
        return np.full(self.shape[0], float(value))

    def vector(self, values):
        return np.array(values, dtype=float)

    def solve_target(self, factor, B, offset, **solve):
        return factor.solve(B if offset == 0.0 else B + offset, **solve)

    def scores(self, W):
        return np.asarray(self.Y @ W)

    @staticmethod
    def read_scalars(values):
        return list(map(float, values))

    def reweighted_factor(self, factor, D):
        return factor.reweighted(D)

    def solve_weighted(self, factor, r, D):
        return factor.solve(r)  # a reweighted factor applies its own D

    def count_nonpositive(self, W):
        scores = np.asarray(self.Y @ W)
        return int(np.count_nonzero(scores <= 0)), float(scores.min(initial=np.inf)), bool(np.isfinite(scores).all())

    def host(self, vector, dtype=None):
        return vector if dtype is None else vector.astype(dtype, copy=False)

    def checked_certificate(self, u):
        """``u``, or ``u`` without its rounding-level entries, whichever passes the per-column proof check; else ``None``.

        Entries of ``−E`` at rounding level (``<= sqrt(eps) · max u``) are noise of an iterative
        solve, not part of the proof; one of them alone in a column fails that column's check.
        """
        cleaned = np.where(u > _ROUNDING_RTOL * u.max(), u, 0.0)
        for candidate in (u, cleaned):
            if self._passes_check(candidate):
                return candidate
        return None

    def _passes_check(self, u):
        Y = self.Y
        if isinstance(Y, SignedDesign):  # the design's own X and labels, u placed on its rows: no copy of Y
            if Y.rows is None:
                residuals = proof_residuals(Y.X, Y.y, u)
            else:
                u_all, y_all = np.zeros(Y.X.shape[0]), np.ones(Y.X.shape[0])
                u_all[Y.rows], y_all[Y.rows] = u, Y.y
                residuals = proof_residuals(Y.X, y_all, u_all)
        else:
            residuals = design_proof_residuals(Y, u)
        return residuals is not None and bool(np.all(residuals <= FIT_PROOF_RTOL))

    # --- the compiled segment's layouts (dense only) ---------------------------------------------
    def by_columns(self):
        """``Yᵀ`` in C order, float64: the layout of the compiled sweep by columns."""
        Y = self.Y.toarray() if isinstance(self.Y, SignedDesign) else self.Y
        return np.ascontiguousarray(Y.T, dtype=float)

    def by_rows(self, dtype=None):
        """``(X, y, rows)`` of the compiled loop's row layout: a view's own arrays, or ``Y`` itself with no labels."""
        if isinstance(self.Y, SignedDesign):
            X, y, rows = self.Y.by_rows()
        else:
            X, rows = self.Y, np.empty(0, dtype=np.intp)
            y = np.empty(0, dtype=self.Y.dtype)
        if dtype is None:
            dtype = working_dtype(X)
        return np.ascontiguousarray(X, dtype=dtype), y.astype(dtype, copy=False), rows

    def rotated(self, basis):
        """The design ``Y V`` for an orthonormal basis ``V`` (columns): small, formed."""
        return InMemoryDesign(self.Y @ basis, self.by_columns_max_entries)


_ROUNDING_RTOL = np.sqrt(np.finfo(float).eps)
