"""The array-API design: ``Y = diag(y)[X, 1]`` on any array-API namespace (PyTorch, CuPy, array-api-strict).

Everything N-sized and the iteration itself stay in ``X``'s namespace and on
its device: the pass (``Z = Y W``, ``E``, :math:`B_{k+1}`, the rules'
statistics; :class:`linsep.solvers.ho_kashyap.step.NamespacePass` with this design's products), the ``p × p`` Gram matrix :math:`[X, 1]^T D [X, 1]`, the
solve matrix of the W-step and the weights ``W``.  What crosses to the host,
each an explicit copy (:func:`host_copy`, never an implicit conversion):

* once per fit, the ``p × p`` Gram matrix, for the rank-revealing
  factorisation of :func:`linsep._core.linalg.least_squares_solver` (the
  array API has no pivoted Cholesky); its inverse ``(YᵀY + CĨ)⁻¹`` (or the
  pseudo-inverse on its range) goes back once and each W-step is one
  product on the device;
* per iteration, the pass's seven statistics (``J``, the error count, ``min
  Z``, ``max E``, ``min E``, ``max |B|``, the fixed-point test) as one
  vector: the stopping rules read them;
* at the end, the returned ``W`` (``p`` numbers).

IRLS (absolute errors) solves its reweighted system on the device
(``xp.linalg.solve``); only a rank-deficient ``Y`` without a penalty, whose
minimum-norm solve needs the host factorisation, copies each reweighted Gram
matrix to the host.  ``X`` keeps its type (float32 stays float32); the
weights and the ``p``-sized solves are float64.  Used with
``sklearn.set_config(array_api_dispatch=True)``
(:mod:`linsep.designs.array_api_fit`).
"""

from __future__ import annotations

import numpy as np

from linsep._core.linalg import GramOnly, PositiveDefiniteFactor, least_squares_solver
from linsep._core.plan import FLOAT64_ONLY, working_dtype
from linsep._core.lsvm_update import LinearStepping
from linsep.designs.base import Design

__all__ = ["ArrayAPIDesign", "DeviceLSVMFactor", "DeviceLeastSquares", "host_copy", "read_scalars", "to_host"]


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

    # --- products in the namespace ------------------------------------------------------------------------
    def _in_x_type(self, W):
        """``W`` (the solver's float64 weights on the device, or host numbers) in ``X``'s type and place."""
        if isinstance(W, np.ndarray) or not hasattr(W, "shape"):
            return self.xp.asarray(np.asarray(W), dtype=self.X.dtype, device=self.device)  # host weights: upload
        return self.xp.astype(W, self.X.dtype)

    def scores(self, W):
        """``Y W`` in the namespace."""
        W = self._in_x_type(W)
        return self.y * (self.X @ W[:-1] + W[-1])

    def rmatvec(self, u):
        """``Yᵀ u`` on the device, float64 (``p`` numbers)."""
        xp = self.xp
        t = self.y * u
        return xp.astype(xp.concat([self.X.T @ t, xp.reshape(xp.sum(t), (1,))]), xp.float64)

    def gram(self, D=None):
        """``[X, 1]ᵀ D [X, 1]`` on the device, float64 (``p × p``; the products in ``X``'s type)."""
        xp = self.xp
        XD = self.X if D is None else self.X * D[:, None]
        column = xp.sum(XD, axis=0)
        corner = xp.reshape(xp.asarray(float(self.shape[0]), dtype=self.X.dtype, device=self.device)
                            if D is None else xp.sum(D), (1, 1))
        top = xp.concat([self.X.T @ XD, column[:, None]], axis=1)
        return xp.astype(xp.concat([top, xp.concat([column[None, :], corner], axis=1)], axis=0), xp.float64)

    # --- the Design protocol --------------------------------------------------------------------------
    def least_squares_solver(self, ridge, gram=None, minimum_norm=True):
        return DeviceLeastSquares(self, self.gram() if gram is None else gram, ridge)

    def constant_vector(self, value):
        return self.xp.full(self.X.shape[0], float(value), dtype=self.X.dtype, device=self.device)

    def vector(self, values):
        if isinstance(values, np.ndarray) or isinstance(values, (list, tuple)):
            return self.xp.asarray(np.asarray(values), dtype=self.X.dtype, device=self.device)
        return self.xp.astype(values, self.X.dtype)

    def solve_target(self, factor, B, offset, **solve):
        return factor.solve_normal(self.rmatvec(B + offset))

    # --- what the Ho–Kashyap pass asks (linsep.solvers.ho_kashyap.step.NamespacePass) ----------------
    def read_scalars(self, values):
        return read_scalars(self.xp, values)

    def reweighted_factor(self, factor, D):
        return factor.reweighted(self.gram(D))

    def solve_weighted(self, factor, r, D):
        """``(YᵀDY + CĨ)⁻¹ YᵀD r`` on the device."""
        return factor.solve_normal(self.rmatvec(r if D is None else r * D))

    def count_nonpositive(self, W):
        xp = self.xp
        Z = self.scores(W)
        count, smallest, finite = read_scalars(xp, [xp.sum(xp.astype(Z <= 0, xp.int64)), xp.min(Z),
                                             xp.all(xp.isfinite(Z))])
        return int(count), float(smallest), bool(finite)

    def host(self, vector, dtype=None):
        return vector  # N-vectors stay in the namespace

    def solver_weights(self, W):
        """Starting weights on the device (float64): ``p`` numbers, copied once."""
        return self.xp.asarray(W, dtype=self.xp.float64, device=self.device)

    def host_weights(self, W, dtype):
        """The returned weights on the host: one copy of ``p`` numbers."""
        if isinstance(W, np.ndarray):
            return W.astype(dtype, copy=False)
        return to_host(W, self.xp).astype(dtype, copy=False)

    def weights_stand_still(self, W, W_prev, tol, rule):
        xp = self.xp
        step, size = read_scalars(xp, [xp.max(xp.abs(W - W_prev)), xp.max(xp.abs(W))])
        return bool(step <= tol * size)

    def checked_certificate(self, u):  # pragma: no cover - the direct factor never asks
        return u


def read_scalars(xp, scalars):
    """The 0-d arrays ``scalars`` on the host as float64 numbers: one copy for all of them (one device sync)."""
    return to_host(xp.stack([xp.astype(value, xp.float64) for value in scalars]), xp).tolist()


class DeviceLeastSquares:
    """The W-step ``(YᵀDY + CĨ)⁻¹ g`` of an :class:`ArrayAPIDesign`, on its device.

    The Gram matrix comes to the host once for
    :func:`~linsep._core.linalg.least_squares_solver`'s factorisation
    (Cholesky, or the eigendecomposition that gives the minimum-norm solve of
    a rank-deficient ``Y``); the matrix it applies, ``(YᵀY + CĨ)⁻¹`` (its
    pseudo-inverse on the range), goes back once, and a solve is one product
    on the device.  A reweighted system (IRLS, :meth:`reweighted`) is solved
    on the device where it is definite (a penalty, or ``Y`` of full rank).
    """

    def __init__(self, design, gram, ridge, *, matrix=None, host_factor=None):
        self.design, self.ridge = design, ridge
        xp = design.xp
        if host_factor is None:
            host_factor = least_squares_solver(GramOnly(design.shape), None, ridge, gram=to_host(gram, xp))
        self._host = host_factor
        self.method, self.stats = host_factor.method, host_factor.stats
        if matrix is None:
            inverse = host_factor.solve_normal(np.eye(design.shape[1]))
            matrix = xp.asarray(inverse, dtype=xp.float64, device=design.device)
        self._matrix = matrix  # None: solve the (reweighted) system itself on the device
        self._gram = None

    def solve_normal(self, g):
        if self._matrix is not None:
            return self._matrix @ g
        return self.design.xp.linalg.solve(self._gram, g)

    def reweighted(self, gram):
        """The solver of the reweighted system whose Gram matrix (``YᵀDY``, on the device) is ``gram``."""
        xp, p = self.design.xp, self.design.shape[1]
        if self._host.method == "cholesky" or self.ridge > 0:  # definite: solved on the device
            penalty = xp.asarray(np.diag(np.r_[np.full(p - 1, self.ridge), 0.0]), dtype=xp.float64,
                                 device=self.design.device)
            solver = DeviceLeastSquares(self.design, None, self.ridge, matrix=None, host_factor=self._host)
            solver._matrix, solver._gram = None, gram + penalty
            return solver
        # rank-deficient without a penalty: the minimum-norm solve needs the host factorisation (p × p a step)
        return DeviceLeastSquares(self.design, gram, self.ridge)


class DeviceLSVMFactor:
    """The linear LSVM's factor for :class:`ArrayAPIDesign`: :class:`linsep.solvers.lsvm.LSVMFactor`'s interface.

    ``S = I/C + [X, 1]ᵗ[X, 1]`` (``p × p``) is formed on the device, copied to
    the host once for its Cholesky factor, and its inverse goes back once:
    each ``W_{k+1} = S⁻¹ g_k`` is a product on the device.  ``S`` does not depend
    on the labels: one factor serves every one-vs-rest problem.
    """

    sample_weight = None  # weighted rows are refused on array-API input

    def __init__(self, design, C):
        self.C, self.xp, self.device = float(C), design.xp, design.device
        gram = to_host(design.gram(), design.xp)
        gram[np.diag_indices_from(gram)] += 1.0 / self.C
        factor = PositiveDefiniteFactor(gram, 1.0 / self.C)
        self.method = factor.method
        self.stats = {"factorization": self.method}
        self._inverse = self.xp.asarray(factor.solve(np.eye(gram.shape[0])), dtype=self.xp.float64,
                                        device=self.device)

    def solve(self, g):
        return self._inverse @ g

    def stepper(self, design, mu):
        """The update (22) on the signed ``design``, started at ``α_0 = Q⁻¹1``."""
        return _DeviceLSVMStep(design, self, mu)


class _DeviceLSVMStep(LinearStepping):
    """The LSVM update (22) on the device (:func:`linsep._core.lsvm_update.dual_update`'s steps in the namespace).

    ``α``, ``r`` and ``W`` stay on the device; each step reads its five
    numbers for the stopping rule in one copy; :meth:`polish` brings the
    returned weights to the host (``p`` numbers, once).
    """

    solves_converged = True  # the direct factor always meets its tolerance

    def __init__(self, design, factor, mu):
        self.design, self.f, self.C, self.mu = design, factor, factor.C, mu
        xp = design.xp
        self._r = design.constant_vector(1.0)
        self.alpha = None
        self._next_rhs = design.rmatvec(self._r)  # Hᵗ1
        self.weights = factor.solve(self._next_rhs)
        self._next = None
        self.objective = read_scalars(xp, [self._pass()[2]])[0]

    def _pass(self):
        """α_k, r_k and g_k from W_k (``self.weights``); the next solve; the statistics as 0-d arrays."""
        xp, design = self.design.xp, self.design
        alpha = self.C * (self._r - design.scores(self.weights))  # α_k = C (r_{k−1} − H W_k)
        step_sq = xp.sum(alpha * alpha) if self.alpha is None else xp.sum((alpha - self.alpha) ** 2)
        alpha_sq = xp.sum(alpha * alpha)
        objective = 0.5 * xp.sum(alpha * self._r) - xp.sum(alpha)
        first = self.alpha is None
        self._r = xp.clip(self._r - self.mu * alpha, min=1.0)  # r_k = max(r_{k−1} − μ α_k, 1)
        self.alpha = alpha
        self._next_rhs = design.rmatvec(self._r)  # g_k = Hᵗ r_k
        self._next = self.f.solve(self._next_rhs)
        return (xp.zeros_like(alpha_sq) if first else step_sq), alpha_sq, objective

    def __call__(self):
        xp = self.design.xp
        previous, self.weights = self.weights, self._next
        step_sq, alpha_sq, objective = self._pass()
        diff = self.weights - previous
        values = read_scalars(xp, [step_sq, alpha_sq, xp.sum(diff * diff), xp.sum(self.weights * self.weights),
                                   objective])
        self.objective = values[4]
        return tuple(values)

    def polish(self):
        """The returned weights on the host (an explicit copy of ``p`` numbers)."""
        self.weights = to_host(self.weights, self.design.xp)
