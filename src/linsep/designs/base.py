"""The :class:`Design` protocol: what the drivers of :mod:`linsep.solvers` ask of the data.

``Y = diag(y)[X_R, 1]`` (Lauer & Bloch 2006, eq. 3) is never formed by a
driver.  A design offers the operations below; ``Vec`` is the design's own
``N``-vector (an ndarray in memory, per-block parts on dask workers), which
a driver only passes back to the design that made it.

Per-row weights (a sample weight ``s``) enter every operation the same way
— ``D`` in the least-squares systems becomes ``s D``, counts become
weighted sums — so they belong inside a design, not in the drivers; an
array-API design (GPU arrays) implements the same methods with the
namespace's functions, its weights ``W`` and the ``p × p`` solve on the
device too (:meth:`Design.host_weights`, :meth:`Design.weights_stand_still`).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["Design"]


class Design(Protocol):
    """``Y = diag(y)[X_R, 1]`` where the data live (see the module docstring).

    ``shape`` is ``(N, p)``; ``dtype`` the type of the fitted weights
    (float32 for float32 data in memory).  ``offers_compiled`` tells whether
    the compiled Ho–Kashyap segment can read the data (dense, in memory).
    A design moves data and computes products; what an algorithm does with
    them is its solver's (the Ho–Kashyap pass and step:
    :mod:`linsep.solvers.ho_kashyap.step`).  The designs subclass this
    protocol explicitly to inherit its defaults.

    A design whose ``Vec`` is an array of a namespace (memory, array API) offers ``xp``,
    :meth:`scores` and :meth:`read_scalars`; one
    whose round trips cost more than a pass (dask) offers instead a fused pass
    ``fused_margin_pass(W, B, D, *, blockwise, ...)`` (each block runs the solver's
    ``blockwise.block_pass`` where it lives) and ``chained_iterates(blockwise, ...)``
    (several iterates of the solver's ``blockwise.chain`` per round trip), ``blockwise`` being
    :data:`linsep.solvers.ho_kashyap.step.BLOCKWISE`.
    """

    shape: tuple[int, int]
    dtype: np.dtype
    offers_compiled: bool

    def least_squares_solver(self, ridge, gram=None, minimum_norm=True):
        """The W-step's solver for ``YᵀY + CĨ`` (:func:`linsep._core.linalg.least_squares_solver`)."""

    def constant_vector(self, value):
        """The ``Vec`` ``value · 1`` (``B_0 = b_0 1``)."""

    def vector(self, values):
        """A ``Vec`` holding ``values`` (N numbers from the caller), or a refusal."""

    def solve_target(self, factor, B, offset, **solve):
        """``(YᵀY + CĨ)⁻¹ Yᵀ (B + offset)``: the starting weights ``W_0``, and the iterative solver's re-solves.

        ``solve``: ``tol`` and ``x0`` of an iterative factor's solve
        (:meth:`linsep._core.linalg.IterativeLeastSquares.solve_normal`): a
        tightened re-solve of a candidate proof, or the polish of returned weights.
        """

    def scores(self, W):
        """``Y W``: a ``Vec``."""

    def read_scalars(self, values):
        """0-d arrays (or numbers) of the design's namespace as host numbers (float): one copy where that costs a sync."""

    def reweighted_factor(self, factor, D):
        """The W-step's solver for ``YᵀDY + CĨ`` (IRLS weights ``D``, a ``Vec``), from the unweighted ``factor``."""

    def solve_weighted(self, factor, r, D):
        """``(YᵀDY + CĨ)⁻¹ YᵀD r`` (``D``: ``None``, or the weights ``factor`` was reweighted with)."""

    def count_nonpositive(self, W):
        """``(count of Y W <= 0, min Y W, all finite)``."""

    def host(self, vector, dtype=None):
        """``vector`` as the caller receives it (an ndarray in memory, a dask array on dask)."""

    def solver_weights(self, W):
        """Starting weights ``W`` (``p`` numbers, NumPy) where the solver keeps its weights: as they are here.

        The array-API design copies them to its device (float64), where its
        W-steps leave theirs.
        """
        return W

    def host_weights(self, W, dtype):
        """The solver's weights ``W`` (``p`` numbers) as a NumPy array of ``dtype``, returned to the estimator.

        The weights are NumPy arrays wherever the W-step runs on the host; the
        array-API design keeps them on the device during the iteration and
        copies the returned ones here, once.
        """
        return W.astype(dtype, copy=False)

    def weights_stand_still(self, W, W_prev, tol, rule):
        """``max|W − W_prev| <= tol · max|W|``: ``rule(W, W_prev, tol)`` on host weights.

        ``rule`` is the driver's (:func:`linsep.solvers.ho_kashyap.rules.weights_stand_still`);
        a design whose weights live on a device computes the same test there.
        """
        return rule(W, W_prev, tol)
