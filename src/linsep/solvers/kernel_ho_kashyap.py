"""Kernel Ho–Kashyap: the Ho–Kashyap family in a kernel feature space.

The Ho–Kashyap criterion with a feature map ``φ`` (the encyclopedia's
"kernel Ho–Kashyap" [1]_; Łęski's kernel form of the modified HK [2]_)

.. math::

    J(w, w_0, B) = \\sum_i \\bigl( y_i(w^t\\varphi(x_i) + w_0) - o - b_i \\bigr)^2
                   + C\\, w^t w, \\qquad B > 0,

(``o = 0, C = 0`` for plain HK; ``o = 1, C >= 0`` for Łęski's MHKS) depends
on ``w`` only through ``Φw`` and ``‖w‖``, so by the representer argument an
optimal ``w`` lies in ``span{φ(x_i)}`` and the whole iteration can be run in
the *empirical kernel map*.  With the eigendecomposition of the Gram matrix
``K = U Λ Uᵗ`` (``r`` eigenvalues kept above rounding level),

.. math::

    L = U \\Lambda^{1/2} \\;(N \\times r), \\qquad K = L L^t, \\qquad
    \\tilde\\varphi(x) = \\Lambda^{-1/2} U^t k(X, x),

``L`` holds the training points in coordinates of an orthonormal basis of
``span{φ(x_i)}``: inner products, ``Φw`` and ``‖w‖`` are preserved exactly.
Running the linear Ho–Kashyap iteration (:func:`~linsep.solvers.ho_kashyap.ho_kashyap`,
unchanged: same margin update, stopping rules, IRLS, verdicts) on
``diag(y)[L, 1]`` therefore *is* kernel Ho–Kashyap, and its result
``W = (w̃, w_0)`` maps back to dual coefficients

.. math::

    f(x) = \\tilde\\varphi(x)^t \\tilde w + w_0 = \\sum_i a_i k(x_i, x) + w_0,
    \\qquad a = U \\Lambda^{-1/2} \\tilde w .

For ``C > 0`` the penalty ``C‖w̃‖²`` is Łęski's ``C wᵗw`` (bias free); the
iteration factors its least-squares matrix once, as the linear one does.

Verdicts are those of linear HK, now about separability *in feature space*:
``separable`` (``y_i f(x_i) > 0`` for all ``i``) and, without
regularisation, ``not_separable`` with the certificate ``u >= 0, u != 0``,
``Σ_i u_i y_i φ(x_i) = 0, Σ_i u_i y_i = 0`` (Gordan) — e.g. XOR under the
linear kernel.  A strictly positive definite kernel (RBF on distinct points)
makes any labelling separable, and plain HK then interpolates at once; use
``C > 0`` for a regularised classifier.

Cost: one symmetric eigendecomposition (``O(N³)``) and the linear
iteration on an ``N×(r+1)`` matrix; meant for ``N`` up to a few thousand.

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

from .._design import sign_normalized
from .ho_kashyap import ho_kashyap


class EmpiricalKernelMap:
    """``K = L Lᵗ`` with ``L = U Λ^{1/2}`` and the map of new samples into the same coordinates.

    Eigenvalues below ``N · eps · λ_max`` (and negative ones, which an
    indefinite kernel such as the sigmoid may produce) are dropped: the map
    then represents the nearest positive semi-definite kernel.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Symmetric Gram matrix of the training samples.

    Attributes
    ----------
    features : ndarray of shape (N, r)
        ``L``, the training samples in the empirical feature space.
    rank : int
        ``r``.
    """

    def __init__(self, K):
        K = np.asarray(K, dtype=float)
        evals, evecs = sla.eigh(0.5 * (K + K.T), check_finite=False)
        top = evals.max(initial=0.0)
        keep = evals > max(top, 0.0) * K.shape[0] * np.finfo(float).eps
        self._basis = evecs[:, keep]
        self._root = np.sqrt(evals[keep])
        self.rank = int(keep.sum())
        self.features = self._basis * self._root

    def transform(self, K_new):
        """``φ̃`` of new samples from their kernel rows ``K_new = k(X_new, X)`` (M, N)."""
        return (np.asarray(K_new, dtype=float) @ self._basis) / self._root

    def dual_coef(self, w):
        """``a = U Λ^{-1/2} w̃`` so that ``Σ_i a_i k(x_i, x) = φ̃(x)ᵗ w̃``."""
        return self._basis @ (np.asarray(w, dtype=float) / self._root)


def kernel_ho_kashyap(K, y, *, K_val=None, y_val=None, kernel_map=None, **hk_params):
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
    **hk_params
        Keyword arguments of :func:`~linsep.solvers.ho_kashyap.ho_kashyap`
        (``learning_rate``, ``b0``, ``C``, ``loss``, ``max_iter``, ``tol``,
        ``stopping``, ``stop_at_separation``, ``update``,
        ``record_history``...).  ``C`` is Łęski's penalty on ``wᵗw``.

    Returns
    -------
    SolveResult
        That of :func:`~linsep.solvers.ho_kashyap.ho_kashyap` (status,
        margin vector, certificate, history, ``n_iter``) with ``weights``
        the dual coefficients ``a`` (``f(x) = Σ_i a_i k(x_i, x) + w_0``) and
        ``intercept`` ``w_0``; ``extra["rank"]`` is ``r``.
    """
    if kernel_map is None:
        kernel_map = EmpiricalKernelMap(K)
    Y = sign_normalized(kernel_map.features, y)
    Y_val = None if K_val is None else sign_normalized(kernel_map.transform(K_val), y_val)
    result = ho_kashyap(Y, Y_val=Y_val, **hk_params)
    W = result.weights
    history = result.history
    if history is not None and "weights" in history:  # a trace: its weights as dual coefficients too
        history = dict(history)
        traced = history.pop("weights")
        history["dual_coef"] = np.array([kernel_map.dual_coef(w) for w in traced[:, :-1]])
        history["intercept"] = traced[:, -1].copy()
    return dataclasses.replace(
        result,
        history=history,
        weights=kernel_map.dual_coef(W[:-1]),
        intercept=float(W[-1]),
        extra={**result.extra, "rank": kernel_map.rank},
    )
