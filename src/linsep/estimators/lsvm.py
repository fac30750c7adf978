"""scikit-learn estimators for the Lagrangian SVM (Lauer & Bloch 2006, §2.6).

Two classes, because the two forms store different models:

* :class:`LagrangianSVMClassifier` (``make_classifier("lsvm")``) — the
  linear LSVM of the paper: ``coef_`` / ``intercept_``, Sherman–Morrison–
  Woodbury, one ``(d+1)×(d+1)`` Cholesky factor shared by all one-vs-rest
  problems; suited to ``N ≫ d`` (millions of samples).
* :class:`KernelLagrangianSVMClassifier` (``make_classifier("kernel_lsvm")``)
  — the same iteration with ``X̃X̃ᵗ`` replaced by a kernel matrix:
  ``dual_coef_`` / ``intercept_``, an ``N×N`` factor; for small ``N``.
  With ``kernel="linear"`` it fits the same model as the linear class.

Equations, sign convention and stopping rule: :mod:`linsep.solvers.lsvm`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval

from .._base import CLASS_WEIGHT_CONSTRAINT, KERNEL_CONSTRAINTS, BaseKernelSeparator, BaseLinearSeparator
from .._backend import is_dask_collection
from .._dask import fit_lsvm
from .._trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from ..solvers.lsvm import LSVMFactor, kernel_lagrangian_svm, lagrangian_svm

_COMMON_CONSTRAINTS = {
    "C": [Interval(Real, 0, None, closed="neither")],
    "mu": [None, Interval(Real, 0, None, closed="neither")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 0, None, closed="left")],
    "record_history": RECORD_HISTORY_CONSTRAINT,
}


def _store_alpha(estimator, results):
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else np.vstack(alphas)


class LagrangianSVMClassifier(BaseLinearSeparator):
    """Linear Lagrangian SVM (Mangasarian & Musicant 2001; Lauer & Bloch 2006, eqs. 18–22).

    Minimises ``½(wᵗw + w_0²) + (C/2)‖ξ‖²`` subject to
    ``y_i(x_iᵗw + w_0) >= 1 − ξ_i`` by the iteration (22) on the dual.

    Parameters
    ----------
    C : float, default=1.0
        The paper's ``C``: weight of the squared slacks (larger ``C`` fits the
        training data harder).  ``LinearSVC(loss="squared_hinge")`` with
        ``C_svc = C/2`` has the same loss term (its bias is handled
        differently).
    mu : float or None, default=None
        Step of (22), ``0 < μ < 2/C``; ``None`` means ``1.9/C``.
    tol : float, default=1e-6
        Stop when ``‖α_{k+1} − α_k‖ <= tol·‖α_{k+1}‖`` and the weights
        ``W = (w, w_0)`` change by at most ``tol·‖W‖`` (relative, so the
        accuracy is the same for every ``C``; see :mod:`linsep.solvers.lsvm`).
    max_iter : int, default=10000
        Largest number of updates per binary problem.
    record_history : bool or int, default=False
        Also record the teaching trace of :mod:`linsep._trace` (an int
        ``n``: every ``n``-th iterate).
        Keep the dual objective and the steps of ``α`` and ``W`` per
        iteration in ``history_``.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (row ``i`` penalised with ``C s_i``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
        ``w = X̃ᵗYα`` (eq. 20).
    intercept_ : ndarray of shape (1,) or (K,)
        ``w_0 = +1ᵗYα``: linsep's ``+1`` bias column; the paper's ``ŵ_0`` in
        eq. 20 is the same number with the opposite sign (its ``H`` has a
        ``−1`` column).
    alpha_ : ndarray of shape (N,) or (K, N)
        Dual solution ``α >= 0`` of (19) (per one-vs-rest problem).
    classes_, n_iter_, status_ (``"converged"`` or ``"max_iter"``), history_

    Examples
    --------
    >>> from linsep import LagrangianSVMClassifier
    >>> clf = LagrangianSVMClassifier(C=10.0).fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> clf.predict([[0, 0.5], [2, 0.5]]).tolist()
    [0, 1]
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "class_weight": CLASS_WEIGHT_CONSTRAINT}
    _dtypes = (np.float64, np.float32)  # float32 X read as float32 by the compiled pass; sums, S and α in float64

    def __init__(self, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, record_history=False, class_weight=None):
        self.class_weight = class_weight
        self.C = C
        self.mu = mu
        self.tol = tol
        self.max_iter = max_iter
        self.record_history = record_history

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (N, d), dense, sparse or a ``dask.array`` chunked by rows, and labels ``y`` (two or more classes).

        Dask input is fitted blockwise (:mod:`linsep._dask`); ``alpha_`` is then a dask array.

        ``sample_weight`` (``s_i >= 0``, times ``class_weight``'s): the slack
        penalty ``(C/2) Σ s_i ξ_i²`` (row ``i`` penalised with ``C s_i``, as
        scikit-learn's SVMs do), :func:`linsep.solvers.lsvm.lagrangian_svm`.
        Rows of weight 0 are left out (no entry in ``alpha_``); integer
        weights give the fit of repeated rows.  Weights times ``c`` are ``C``
        times ``c``: not scale-free.  Weighted fits run the whole-vector
        pass, not the compiled one.
        """
        if is_dask_collection(X):
            if sample_weight is not None or self.class_weight is not None:
                raise NotImplementedError("LagrangianSVMClassifier does not take sample_weight or class_weight "
                                          "with dask arrays; fit X.compute() to weigh the rows")
            return fit_lsvm(self, X, y)
        self._lsvm_factor = None
        try:
            return super().fit(X, y, sample_weight)
        finally:
            del self._lsvm_factor

    def _solve_binary(self, X, y, sample_weight=None):
        if self._lsvm_factor is None:  # Q's small factor ignores labels: share it across classes
            self._lsvm_factor = LSVMFactor(X, self.C, sample_weight)
        return lagrangian_svm(X, y, C=self.C, mu=self.mu, tol=self.tol, max_iter=self.max_iter,
                              factor=self._lsvm_factor, record_history=bool(self.record_history),
                              trace=make_recorder(self.record_history), sample_weight=sample_weight)

    def _store(self, results):
        super()._store(results)
        _store_alpha(self, results)


class KernelLagrangianSVMClassifier(BaseKernelSeparator):
    """Kernel Lagrangian SVM: iteration (22) with ``Q = I/C + (yyᵗ)∘(K + 11ᵗ)``.

    ``f(x) = Σ_i y_i α_i (k(x_i, x) + 1)``: the penalised bias of (18) acts
    as a constant ``+1`` added to the kernel, so ``intercept_ = Σ_i y_i α_i``.
    ``Q`` is ``N×N`` and factored once: meant for small ``N``.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient, as in SVC (``"scale"``: ``1/(d·Var(X))``; ``"auto"``: ``1/d``).
    degree : int, default=3
    coef0 : float, default=0.0
    C, mu, tol, max_iter, record_history
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``.
        As in :class:`LagrangianSVMClassifier`.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
        ``y∘α``.
    intercept_ : ndarray of shape (1,) or (K,)
    alpha_ : ndarray of shape (N,) or (K, N)
    X_fit_, classes_, n_iter_, status_, history_
    """

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **_COMMON_CONSTRAINTS, "class_weight": CLASS_WEIGHT_CONSTRAINT}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, mu=None, tol=1e-6,
                 max_iter=10_000, record_history=False, class_weight=None):
        self.class_weight = class_weight
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.mu = mu
        self.tol = tol
        self.max_iter = max_iter
        self.record_history = record_history

    def _prepare_fit(self, X):
        # one Gram matrix for every one-vs-rest problem
        return X if self.kernel == "precomputed" else self._kernel_matrix(X, X)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (N, d) — or a Gram matrix (N, N) for ``kernel="precomputed"``.

        ``sample_weight`` (``s_i >= 0``, times ``class_weight``'s): the slack
        penalty ``(C/2) Σ s_i ξ_i²`` (:func:`linsep.solvers.lsvm.kernel_lagrangian_svm`);
        rows of weight 0 are left out (refused for ``"precomputed"``: remove
        them from the Gram matrix); integer weights give the fit of
        repeated rows.
        """
        X, y = self._validate_fit(X, y)
        return self._fit_kernel_weighted(X, y, sample_weight)

    def _solve_binary(self, X, y, sample_weight=None):
        return kernel_lagrangian_svm(self._fit_state, y, C=self.C, mu=self.mu, tol=self.tol,
                                     max_iter=self.max_iter, record_history=bool(self.record_history),
                                     trace=make_recorder(self.record_history), sample_weight=sample_weight)

    def _store(self, results):
        super()._store(results)
        _store_alpha(self, results)
