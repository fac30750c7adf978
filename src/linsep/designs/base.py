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

from typing import Any, Protocol

import numpy as np

from linsep._core.linalg import IterativeLeastSquares

__all__ = ["Design", "HKPassState"]


class HKPassState(Protocol):
    """One Ho–Kashyap pass over the data for the iterate ``(W_k, B_k, D_k)`` (eqs. 6–9).

    Attributes are the pass statistics: ``J = E_kᵀ D_k E_k`` (no penalty),
    ``wrong`` (count of ``Y W_k <= 0``), ``separated`` (all ``Y W_k > 0``),
    ``max_e``, ``min_e`` (of ``E_k = Y W_k − offset − B_k``), ``max_b``
    (``max |B_k|``), ``fixed_point`` (``|E_k| <= tol (B_k + offset)``
    componentwise), ``val_errors`` (count of ``Y_val W_k <= 0``, or
    ``None``) and ``B_next`` (:math:`B_{k+1} = B_k + 2\\mu \\max(E_k, 0)`, a ``Vec``).
    """

    J: float
    wrong: int
    separated: bool
    max_e: float
    min_e: float
    max_b: float
    fixed_point: bool
    val_errors: int | None
    B_next: Any
    E: Any

    def reweighted(self, factor, irls_floor):
        """IRLS: (factor of :math:`Y^t D_k Y + C \\tilde I`, :math:`D_k`) with :math:`D_k` from this pass's ``E`` (:func:`linsep._core.irls.irls_weights`)."""

    def solve_margin(self, factor):
        """:math:`W_{k+1} = (Y^t D Y + C \\tilde I)^{-1} Y^t D (B_{k+1} + \\mathit{offset})` (HK, MHKS, MHKA)."""

    def solve_increment(self, factor):
        """``(YᵀDY + CĨ)⁻¹ YᵀD |E_k|`` (modified HK's increment of ``W``)."""

    def certificate(self):
        """``u = D_k max(−E_k, 0)``: the non-separability certificate (a ``Vec`` the caller keeps)."""


class Design(Protocol):
    """``Y = diag(y)[X_R, 1]`` where the data live (see the module docstring).

    ``shape`` is ``(N, p)``; ``dtype`` the type of the fitted weights
    (float32 for float32 data in memory).  ``offers_compiled`` tells whether
    the compiled Ho–Kashyap segment can read the data (dense, in memory).
    The designs subclass this protocol explicitly to inherit the default
    :meth:`hk_iterates`.
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

    def hk_pass(self, W, B, D, *, offset, two_mu, tol, update, irls, validation=None, fitted=None) -> HKPassState:
        """One fused pass for :math:`W_k`: statistics, :math:`B_{k+1}` and what the next W-step needs.

        ``fitted``: :math:`Y W_k` where the W-step's solver kept it up to date from its own products
        (:meth:`linsep._core.linalg.IterativeLeastSquares.fitted_values`), which spares the pass its product
        with ``Y``; ``None``: the pass computes it.  A backend may ignore it.
        """

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

    def hk_iterates(self, state, W, B, D, factor, *, update, learning_rate, irls_floor, pass_options, limit=None):
        """The iterates after ``state`` (the pass of ``(W_k, B_k, D_k)``): yields ``(W, B, D, factor, state)``.

        One step from iterate ``k`` is the Ho–Kashyap step of the Python driver
        (``linsep.solvers.ho_kashyap.solver._iterate``): for IRLS,
        ``(factor, D_next) = state.reweighted(factor, irls_floor)``; then
        :math:`W_{k+1} = W_k + \\mu (Y^t D Y + C \\tilde I)^{-1} Y^t D |E_k|` (``update="weights"``) or
        :math:`W_{k+1} = (Y^t D Y + C \\tilde I)^{-1} Y^t D (B_{k+1} + \\mathit{offset})`,
        :math:`B_{k+1}` = ``state.B_next``, and the pass of
        :math:`(W_{k+1}, B_{k+1}, D_{k+1})`
        (:meth:`hk_pass` with ``pass_options``).  The driver takes iterates
        one at a time and stops taking them when a rule ends the fit; at most
        ``limit`` are taken (``None``: no bound).

        This default computes each iterate when it is asked for.  A backend
        whose round trips cost more than a pass (dask) may compute several
        iterates per round trip and hand them out one at a time: the iterates
        must be those of this default, bit for bit, and an error raised by a
        step the driver does not reach must not surface.
        """
        while True:
            if pass_options["irls"]:
                factor, D = state.reweighted(factor, irls_floor)
            if update == "weights":
                W = W + learning_rate * state.solve_increment(factor)
            B = state.B_next
            fitted = None
            if update == "margin":
                W = state.solve_margin(factor)
                if isinstance(factor, IterativeLeastSquares):  # Y W from CG's own products Y d, if it kept them
                    fitted = factor.fitted_values(W)
            state = self.hk_pass(W, B, D, fitted=fitted, **pass_options)
            yield W, B, D, factor, state
