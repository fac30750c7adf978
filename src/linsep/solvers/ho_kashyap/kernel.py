"""Kernel Ho–Kashyap: the Ho–Kashyap family in a kernel feature space.

The Ho–Kashyap criterion with a feature map :math:`\\varphi` (the encyclopedia's
"kernel Ho–Kashyap" [1]_; Łęski's kernel form of the modified HK [2]_)

.. math::

    J(w, w_0, B) = \\sum_i \\bigl( y_i(w^t\\varphi(x_i) + w_0) - o - b_i \\bigr)^2
                   + C\\, w^t w, \\qquad B > 0,

(:math:`o = 0, C = 0` for plain HK; :math:`o = 1, C \\ge 0` for Łęski's MHKS)
depends on :math:`w` only through :math:`\\Phi w` and :math:`\\lVert w \\rVert`,
so by the representer argument an optimal :math:`w` lies in
:math:`\\operatorname{span}\\{\\varphi(x_i)\\}` and the whole iteration can be
run in an *empirical kernel map*: coordinates :math:`\\tilde\\varphi(x_i)` of
the training points in an orthonormal basis of a subspace :math:`S` of the
feature space, in which inner products, :math:`\\Phi w` and
:math:`\\lVert w \\rVert` are those of the feature space.
Running the linear Ho–Kashyap iteration (:func:`~linsep.solvers.ho_kashyap.ho_kashyap`,
unchanged: same margin update, stopping rules, IRLS, verdicts) on
:math:`\\operatorname{diag}(y)\\,[\\tilde\\Phi,\\ \\mathbf{1}]` therefore *is*
kernel Ho–Kashyap, and its result :math:`W = (\\tilde w, w_0)` maps back to
dual coefficients

.. math::

    f(x) = \\tilde\\varphi(x)^t \\tilde w + w_0 = \\sum_{p \\in P} a_p k(x_p, x) + b .

The map (:class:`EmpiricalKernelMap`) is a pivoted partial Cholesky
factorisation

.. math::

    K \\approx L L^t = K_{:, P} \\, K_{P, P}^{-1} \\, K_{P, :}

(:math:`S` spanned by the images of the pivots :math:`P`), centred and
rotated onto its principal axes.  With ``tol = 0`` it pivots to rounding level
and :math:`S = \\operatorname{span}\\{\\varphi(x_i)\\}`: the exact map.  With
``tol > 0`` it stops once every training point is within
:math:`\\sqrt{\\mathit{tol} \\cdot \\max_i k(x_i, x_i)}` of :math:`S`, which
costs :math:`O(N r^2)` for rank :math:`r` and computes only :math:`r` columns
of :math:`K`.

Truncation and the verdicts.  For :math:`w \\in S`,
:math:`\\langle w, \\Pi_S \\varphi(x) \\rangle = \\langle w, \\varphi(x) \\rangle`:
the decision function above is evaluated exactly, so ``separable``
(:math:`y_i f(x_i) > 0` for all :math:`i`) is a statement about the kernel
itself.  Without regularisation, ``not_separable`` comes with the certificate
(Gordan)

.. math::

    u \\ge 0, \\quad u \\ne 0, \\quad
    \\sum_i u_i y_i \\, \\Pi_S \\varphi(x_i) = 0, \\quad \\sum_i u_i y_i = 0 :

it proves that no :math:`f = \\sum_{p \\in P} a_p k(x_p, \\cdot) + b` separates
the training set — in the whole feature space when :math:`S` is (``tol = 0``,
e.g. XOR under the linear kernel), in :math:`S` otherwise.  A strictly positive definite kernel (RBF on distinct points) with the
exact map makes any labelling separable, and plain HK then interpolates;
:math:`C > 0` (Łęski's generalisation control) gives a regularised classifier.

Centring: :math:`[L,\\ \\mathbf{1}]` has :math:`N + 1` columns and is rank deficient as soon as
the constant lies in the span of the features (the exact map of a full-rank
Gram matrix), which sends every one-vs-rest solve to an SVD of an
:math:`N \\times (N + 1)` matrix.  Centred and rotated, the features are orthogonal to
each other and to the bias column: Ho–Kashyap's least-squares matrix is the
diagonal :math:`\\operatorname{diag}(s, N)` for every labelling, passed to the solver once
(``gram``) instead of being formed per class.  The centring is a change of
coordinates of the affine model (:math:`w_0` absorbs :math:`m^t w`): the
fitted values :math:`Y W`, hence :math:`B` and :math:`E`, are those of
:math:`[L,\\ \\mathbf{1}]`.

Cost: the map, :math:`O(N r^2)` (:math:`O(N^3)` for the exact map), once per
fit for all one-vs-rest problems, then per problem :math:`O(N r)` per
iteration.

References
----------
.. [1] Ho–Kashyap algorithm, encyclopedia article (seed ``000``): "Kernel
   Ho–Kashyap algorithm: applies kernel methods to the Ho–Kashyap framework".
.. [2] J. Łęski, "Kernel Ho–Kashyap classifier with generalization control",
   International Journal of Applied Mathematics and Computer Science 14(1),
   2004.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.linalg as sla

from linsep._core.signed_design import sign_normalized
from linsep._core.linalg import pivoted_cholesky
from linsep.designs.weights import WeightedValidation
from linsep.solvers.ho_kashyap.plan import HKPlan
from linsep.solvers.ho_kashyap.weighted import weighted_ho_kashyap
from linsep.solvers.ho_kashyap.solver import ho_kashyap


class EmpiricalKernelMap:
    """Centred coordinates of the training samples in a subspace of the kernel feature space.

    A pivoted partial Cholesky factorisation (``linsep._core.linalg.pivoted_cholesky``)
    :math:`K \\approx L L^t`, :math:`L = K_{:, P} R^{-t}`, stops once every
    training point lies within :math:`\\sqrt{\\mathit{tol} \\cdot \\max_i k(x_i, x_i)}`
    of :math:`S = \\operatorname{span}\\{\\varphi(x_p) : p \\in P\\}`; :math:`L`
    holds the projections :math:`\\Pi_S \\varphi(x_i)` in an orthonormal basis
    of :math:`S`.  Its columns are then centred and rotated onto the principal
    axes, :math:`\\mathit{features} = (L - \\mathbf{1} m^t) V` (:math:`m` the
    mean row, :math:`V` the eigenvectors of the centred :math:`r \\times r`
    Gram matrix, null directions dropped), so that

    .. math::

        [\\text{features}, 1]^t [\\text{features}, 1] = \\operatorname{diag}(s_1, \\dots, s_r, N),

    and the bias column is orthogonal to the features.  The centring is a
    change of coordinates of the affine model :math:`w^t \\varphi + w_0`
    (:math:`w_0` absorbs :math:`m^t w`), not a change of model; it keeps the least-squares matrix of
    Ho–Kashyap well conditioned, which ``[L, 1]`` is not when the constant
    lies (nearly) in the span of the features, as it does for a full-rank RBF
    Gram matrix.

    ``tol = 0`` pivots to rounding level: :math:`S` is then the span of all
    :math:`\\varphi(x_i)` (the exact empirical kernel map).  A kernel that is not
    positive semi-definite (the sigmoid) is replaced by the Nyström
    approximation on the pivots that are positive.

    Parameters
    ----------
    K : ndarray of shape (N, N) or None
        The Gram matrix of the training samples.
    columns : callable or None
        Instead of ``K``: ``columns(idx)`` returns ``K[:, idx]``; only the
        ``r`` pivot columns are then ever computed.
    diagonal : ndarray of shape (N,) or None
        :math:`K_{ii}`, with ``columns``.
    tol : float, default=0.0
        Relative bound on the residual :math:`\\lVert \\varphi(x_i) - \\Pi_S \\varphi(x_i) \\rVert^2`.
    block_size : int, default=64
        Kernel columns fetched at a time.

    Attributes
    ----------
    features : ndarray of shape (N, rank)
        The centred training samples in the empirical feature space.
    rank : int
        ``rank`` (:math:`r`, less the null directions of the centring).
    pivots : ndarray of int
        :math:`P`: only these training samples enter the decision function.
    residual : ndarray of shape (N,)
        :math:`\\lVert \\varphi(x_i) - \\Pi_S \\varphi(x_i) \\rVert^2`, each at most
        :math:`\\mathit{tol} \\cdot \\max_i k(x_i, x_i)`
        (or rounding level).
    gram : ndarray of shape (rank + 1, rank + 1)
        :math:`[\\mathit{features},\\ \\mathbf{1}]^t [\\mathit{features},\\ \\mathbf{1}]`, diagonal; Ho–Kashyap's least-squares
        matrix for every labelling (the signs of the rows do not change it),
        so one-vs-rest problems never recompute it.

    See Also
    --------
    kernel_ho_kashyap : Ho–Kashyap in this map.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import kernel_matrix
    >>> from linsep.solvers.ho_kashyap.kernel import EmpiricalKernelMap
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    >>> exact = EmpiricalKernelMap(K)                        # tol=0: the span of all φ(x_i)
    >>> truncated = EmpiricalKernelMap(K, tol=0.3)
    >>> truncated.rank < exact.rank, exact.features.shape[0]
    (True, 30)
    >>> np.allclose(exact.transform(K), exact.features)      # new samples from their kernel rows
    True
    """

    def __init__(self, K=None, *, columns=None, diagonal=None, tol=0.0, block_size=64):
        if K is not None:
            K = np.asarray(K, dtype=float)
            columns, diagonal = (lambda idx: K[:, idx]), K.diagonal()
        elif columns is None or diagonal is None:
            raise ValueError("EmpiricalKernelMap needs K, or columns and diagonal")
        L, pivots, residual = pivoted_cholesky(columns, diagonal, tol=tol, block_size=block_size)
        mean = L.mean(axis=0)
        L -= mean
        evals, evecs = sla.eigh(L.T @ L, check_finite=False)
        keep = evals > evals.max(initial=0.0) * max(L.shape) * np.finfo(float).eps
        V = evecs[:, keep][:, ::-1]  # principal axes, largest first
        self.features = L @ V
        self.rank = int(V.shape[1])
        # [features, 1]ᵀ[features, 1] = diag(s, N): the columns are orthogonal, and orthogonal to 1.
        self.gram = np.diag(np.append(evals[keep][::-1], float(L.shape[0])))
        self.pivots = pivots
        self.residual = residual
        # φ̃(x) = Vᵀ(R⁻¹ k(X_P, x) − m) = Tᵀ k(X_P, x) − Vᵀm with T = R⁻ᵀ V (R = L[P], lower triangular).
        R = np.tril((L + mean)[pivots])
        self._T = sla.solve_triangular(R, V, trans="T", lower=True, check_finite=False)
        self._shift = mean @ V

    def transform(self, K_new):
        """``φ̃`` of new samples from their kernel rows ``K_new = k(X_new, X)`` (M, N).

        Parameters
        ----------
        K_new : ndarray of shape (M, N)
            Kernel values ``k(x_new, x_i)`` against the training samples.

        Returns
        -------
        ndarray of shape (M, rank)
            The new samples' coordinates, comparable with ``features``.
        """
        K_new = np.asarray(K_new, dtype=float)
        return K_new[:, self.pivots] @ self._T - self._shift

    def dual_coef(self, w, w0=0.0):
        """:math:`(a, b)` with :math:`\\sum_i a_i k(x_i, x) + b = \\tilde\\varphi(x)^t w + w_0` (:math:`a` is zero off the pivots).

        Parameters
        ----------
        w : ndarray of shape (rank,)
            Weights in the map's coordinates.
        w0 : float, default=0.0
            Bias in the map's coordinates.

        Returns
        -------
        a : ndarray of shape (N,)
            Dual coefficients of the training samples (zero off the pivots).
        b : float
            The bias of the kernel expansion.
        """
        w = np.asarray(w, dtype=float)
        a = np.zeros(self.features.shape[0])
        a[self.pivots] = self._T @ w
        return a, float(w0 - self._shift @ w)


def kernel_ho_kashyap(K, y, *, K_val=None, y_val=None, kernel_map=None, map_tol=0.0, sample_weight=None,
                      val_weight=None, **hk_params):
    """Run the Ho–Kashyap iteration in the empirical kernel map of ``K`` (module docstring).

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Gram matrix of the training samples.
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    K_val : ndarray of shape (M, N) or None
        Kernel rows ``k(X_val, X)`` of validation samples (early stopping).
    y_val : ndarray of shape (M,) or None
        Their labels in {-1, +1}.
    kernel_map : EmpiricalKernelMap or None
        A map of the same ``K`` to reuse (one-vs-rest problems share it).
    map_tol : float
        ``tol`` of the :class:`EmpiricalKernelMap` built when none is given
        (0: the exact map).
    sample_weight : ndarray of shape (N,) or None
        Positive weights :math:`s_i`: the weighted criterion
        :math:`\\sum_i s_i (y_i^t W - b_i)^2` on the features
        (rows and margins scaled by :math:`\\sqrt{s_i}`, :ref:`weights`).
    val_weight : ndarray of shape (M,) or None
        Weights of the validation rows in the validation error.
    **hk_params
        Keyword arguments of :func:`~linsep.solvers.ho_kashyap.ho_kashyap`
        (``learning_rate``, ``b0``, ``C``, ``loss``, ``max_iter``, ``tol``,
        ``stopping``, ``stop_at_separation``, ``update``,
        ``record_history``, ``plan``...).  ``C`` is Łęski's penalty on :math:`w^t w`.

    Returns
    -------
    SolveResult
        That of :func:`~linsep.solvers.ho_kashyap.ho_kashyap` (status,
        margin vector, certificate, history, ``n_iter``) with ``weights``
        the dual coefficients :math:`a` (:math:`f(x) = \\sum_i a_i k(x_i, x) + w_0`) and
        ``intercept`` :math:`w_0`; ``extra["rank"]`` is :math:`r`.

    See Also
    --------
    EmpiricalKernelMap : The map this runs Ho–Kashyap in.
    linsep.KernelHoKashyapClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import kernel_matrix
    >>> from linsep.solvers.ho_kashyap.kernel import kernel_ho_kashyap
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([-1, -1, 1, 1])                         # XOR
    >>> kernel_ho_kashyap(kernel_matrix(X, X, kernel="rbf", gamma=2.0), y).status
    'separable'
    """
    if kernel_map is None:
        kernel_map = EmpiricalKernelMap(K, tol=map_tol)
    Y_val = None if K_val is None else sign_normalized(kernel_map.transform(K_val), y_val)
    if val_weight is not None and Y_val is not None:
        Y_val = WeightedValidation(Y_val, val_weight)
    # The map (an eigendecomposition of K) is most of a kernel fit, and the Python driver iterates on its
    # square-ish features about as fast as the compiled segment (benchmarks/bench_hk_drivers.py --kernel):
    # the segment is not worth compiling here.  A given ``plan`` may still ask for it.
    given = hk_params.get("plan")
    hk_params = {**hk_params, "plan": given if isinstance(given, HKPlan) else {"driver": "python", **(given or {})}}
    if sample_weight is None:
        result = ho_kashyap(sign_normalized(kernel_map.features, y), Y_val=Y_val, gram=kernel_map.gram, **hk_params)
    else:  # the weighted criterion on the features' scaled rows (their Gram matrix is not kernel_map.gram)
        result = weighted_ho_kashyap(kernel_map.features, y, None, sample_weight, hk_params, Y_val=Y_val)
    W = result.weights
    history = result.history
    if history is not None and "weights" in history:  # a trace: its weights as dual coefficients too
        history = dict(history)
        traced = [kernel_map.dual_coef(w[:-1], w[-1]) for w in history.pop("weights")]
        history["dual_coef"] = np.array([a for a, _ in traced])
        history["intercept"] = np.array([b for _, b in traced])
    dual, intercept = kernel_map.dual_coef(W[:-1], W[-1])
    return dataclasses.replace(
        result,
        history=history,
        weights=dual,
        intercept=intercept,
        extra={**result.extra, "rank": kernel_map.rank},
    )
