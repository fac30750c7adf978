"""scikit-learn estimators for the Lagrangian SVM (Lauer & Bloch 2006, §2.6).

Two classes, because the two forms store different models:

* :class:`LagrangianSVMClassifier` (``make_classifier("lsvm")``) — the
  linear LSVM of the paper: ``coef_`` / ``intercept_``, Sherman–Morrison–
  Woodbury, one :math:`(d+1) \\times (d+1)` Cholesky factor shared by all one-vs-rest
  problems; suited to :math:`N \\gg d` (millions of samples).
* :class:`KernelLagrangianSVMClassifier` (``make_classifier("kernel_lsvm")``)
  — the same iteration with :math:`\\tilde X \\tilde X^t` replaced by a kernel matrix:
  ``dual_coef_`` / ``intercept_``, an :math:`N \\times N` factor for small :math:`N`; from
  2 000 samples a low-rank factor of :math:`K` or active sets instead.
  With ``kernel="linear"`` it fits the same model as the linear class.

Equations, sign convention and stopping rule: :mod:`linsep.solvers.lsvm`.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval

from linsep.designs.backend import DEVICE, ROW_BLOCKS
from linsep.estimators.base import (name_backends, CLASS_WEIGHT_CONSTRAINT, KERNEL_CONSTRAINTS, POS_LABEL_CONSTRAINT, POS_LABEL_DOC,
                                   BaseKernelSeparator, BaseLinearSeparator)
from linsep._core.plan import READS_FLOAT32
from linsep._core.result import CONVERGED
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.kernels import low_rank_gram_factor
from linsep.solvers.lsvm.active_set import (ACTIVE_SET_KKT_ATOL, ACTIVE_SET_MAX_ACTIVE, ACTIVE_SET_SUBSAMPLE,
                                            active_set_kernel_lagrangian_svm)
from linsep.solvers.lsvm.solver import LSVM_CG_FORCING, LSVMFactor, kernel_lagrangian_svm, lagrangian_svm

ACTIVE_SET_MIN_SAMPLES = 2000
"""From this many samples the kernel LSVM solves by active sets (``linsep.solvers.lsvm.active_set_kernel_lagrangian_svm``)
unless :math:`K` has a small factor: an :math:`N \\times N` factor costs :math:`N^3/3` and the iteration
:math:`2N^2` per step for about :math:`C N` steps when few constraints are active (:math:`N = 10\\,000` in
5 dimensions, one positive: over 90 s)."""

PROBE_SAMPLES = 1000
"""From ``ACTIVE_SET_MIN_SAMPLES`` samples, the low-rank factor of :math:`K` is tried only where the Gram matrix of
this many of them has a factor of at most half as many columns."""

_COMMON_CONSTRAINTS = {
    "C": [Interval(Real, 0, None, closed="neither")],
    "mu": [None, Interval(Real, 0, None, closed="neither")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 0, None, closed="left")],
    "record_history": RECORD_HISTORY_CONSTRAINT,
    "pos_label": POS_LABEL_CONSTRAINT,
}


def _store_alpha(estimator, results, fit):
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else fit.stack(alphas)


class LagrangianSVMClassifier(BaseLinearSeparator):
    """Linear Lagrangian SVM (Mangasarian & Musicant 2001; Lauer & Bloch 2006, eqs. 18–22).

    Minimises :math:`\\tfrac12 (w^t w + w_0^2) + \\tfrac{C}{2} \\lVert \\xi \\rVert^2` subject to
    :math:`y_i (x_i^t w + w_0) \\ge 1 - \\xi_i` by the iteration (22) on the dual.

    Parameters
    ----------
    C : float, default=1.0
        The paper's :math:`C`: weight of the squared slacks (larger :math:`C` fits the
        training data harder).  ``LinearSVC(loss="squared_hinge")`` with
        :math:`C_{\\mathrm{svc}} = C/2` has the same loss term (its bias is handled
        differently).
    mu : float or None, default=None
        Step :math:`\\mu` of (22), :math:`0 < \\mu < 2/C`; ``None`` means :math:`1.9/C`.
    tol : float, default=1e-6
        Stop when
        :math:`\\lVert \\alpha_{k+1} - \\alpha_k \\rVert \\le \\mathit{tol} \\cdot \\lVert \\alpha_{k+1} \\rVert`
        and the weights :math:`W = (w, w_0)` change by at most
        :math:`\\mathit{tol} \\cdot \\lVert W \\rVert` (relative, so the
        accuracy is the same for every :math:`C`; see :mod:`linsep.solvers.lsvm`).
    max_iter : int, default=10000
        Largest number of updates per binary problem.
    record_history : bool or int, default=False
        Also record the teaching trace of :ref:`trace-format` (an int
        ``n``: every ``n``-th iterate).
        Keep the dual objective and the steps of :math:`\\alpha` and :math:`W` per
        iteration in ``history_``.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (row :math:`i` penalised with :math:`C s_i`).
    {pos_label}
        Not available for {blocks} input.

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
        :math:`w = \\tilde X^t Y \\alpha` (eq. 20).
    intercept_ : ndarray of shape (1,) or (K,)
        :math:`w_0 = +\\mathbf{1}^t Y \\alpha`: linsep's :math:`+1` bias column; the paper's
        :math:`\\hat w_0` in eq. 20 is the same number with the opposite sign (its
        :math:`H` has a :math:`-1` column).
    alpha_ : ndarray of shape (N,) or (K, N)
        Dual solution :math:`\\alpha \\ge 0` of (19) (per one-vs-rest problem).
    classes_, n_iter_, status_ (``"converged"`` or ``"max_iter"``), history_

    See Also
    --------
    KernelLagrangianSVMClassifier : The same iteration with a kernel.
    SchlesingerKozinecClassifier : The hard-margin SVM hyperplane, ε-optimal.
    HoKashyapClassifier : :math:`C` gives Łęski's MHKS/MHKA, the other regularised rule of the paper.
    linsep.solvers.lsvm.lagrangian_svm : The solver, with the equations.

    Examples
    --------
    >>> from linsep import LagrangianSVMClassifier
    >>> clf = LagrangianSVMClassifier(C=10.0).fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> clf.predict([[0, 0.5], [2, 0.5]]).tolist()
    [0, 1]
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "class_weight": CLASS_WEIGHT_CONSTRAINT}
    _backends = (ROW_BLOCKS, DEVICE)
    _device_traces = True
    _dtypes = READS_FLOAT32  # float32 X read as float32 by the compiled pass; sums, S and α in float64

    def __init__(self, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, record_history=False, class_weight=None,
                 pos_label=None):
        self.pos_label = pos_label
        self.class_weight = class_weight
        self.C = C
        self.mu = mu
        self.tol = tol
        self.max_iter = max_iter
        self.record_history = record_history

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (N, d), dense, sparse or a ``{blocks}.array`` chunked by rows, and labels ``y`` (two or more classes).

        Parameters
        ----------
        X : {array-like, sparse matrix, {blocks} array} of shape (N, d)
            Training samples.  {Blocks} input is fitted blockwise
            (:ref:`{blocks}`); ``alpha_`` is then a {blocks} array.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), default=None
            Non-negative weight :math:`s_i` per row (all ones when None),
            multiplied by ``class_weight``'s: the slack penalty
            :math:`\\tfrac{C}{2} \\sum_i s_i \\xi_i^2` (row :math:`i` penalised with :math:`C s_i`, as
            scikit-learn's SVMs do; :func:`linsep.solvers.lsvm.lagrangian_svm`).
            Rows of weight 0 are left out (no entry in ``alpha_``); integer
            weights give the fit of repeated rows.  Weights times :math:`c` are
            :math:`C` times :math:`c`: not scale-free.  Weighted fits run the
            whole-vector pass, not the compiled one; a {blocks} ``X`` takes
            NumPy or {blocks} weights (chunked like its rows or split to them;
            :ref:`weights`).

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        elsewhere = self._fit_on_backend(X, y, sample_weight=sample_weight)
        if elsewhere is not None:
            return elsewhere
        return super().fit(X, y, sample_weight)

    def _solve_binary(self, X, y, fit, sample_weight=None):
        if fit.state is None:  # Q's small factor ignores labels: share it across classes
            fit.state = LSVMFactor(X, self.C, sample_weight)
        return lagrangian_svm(X, y, C=self.C, mu=self.mu, tol=self.tol, max_iter=self.max_iter,
                              factor=fit.state, record_history=bool(self.record_history),
                              trace=make_recorder(self.record_history), sample_weight=sample_weight)

    def _solve_on_designs(self, data, fit, **ignored):
        # weighted (penalty C s_i): the dual in β_i = α_i / √s_i on the rows √s_i h_i; one factor for every problem
        problems = data.problems()
        factor = data.lsvm_factor(self.C, LSVM_CG_FORCING)
        # record_history reaches here only where the fit data record traces (data.recorder): their rows stay there
        return [lagrangian_svm(problem.design, None, C=self.C, mu=self.mu, tol=self.tol, max_iter=self.max_iter,
                               factor=factor, record_history=bool(self.record_history),
                               trace=data.recorder(self.record_history) if self.record_history else None)
                for problem in problems], problems

    def _store_outputs(self, results, fit):
        _store_alpha(self, results, fit)


class KernelLagrangianSVMClassifier(BaseKernelSeparator):
    """Kernel Lagrangian SVM: iteration (22) with :math:`Q = I/C + (y y^t) \\circ (K + \\mathbf{1} \\mathbf{1}^t)`.

    :math:`f(x) = \\sum_i y_i \\alpha_i \\bigl(k(x_i, x) + 1\\bigr)`: the penalised bias of (18) acts
    as a constant :math:`+1` added to the kernel, so ``intercept_`` is :math:`\\sum_i y_i \\alpha_i`.
    :math:`Q` is :math:`N \\times N` and factored once below ``ACTIVE_SET_MIN_SAMPLES``
    samples (or with ``record_history``).  From there, unless :math:`K = F F^t`
    with few columns (the linear LSVM on :math:`F`), the same fixed point is
    found by active sets from kernel columns
    (``linsep.solvers.lsvm.active_set_kernel_lagrangian_svm``, checked
    by the dual's optimality conditions; ``n_iter_`` then counts its solves,
    and ``mu``, ``tol`` play no part); the iteration runs if it fails.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient, as in SVC (``"scale"``: :math:`1 / (d \\operatorname{Var}(X))`; ``"auto"``: :math:`1/d`).
    degree : int, default=3
    coef0 : float, default=0.0
    C, mu, tol, max_iter, record_history
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``.
        As in :class:`LagrangianSVMClassifier`.
    {pos_label}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
        :math:`y \\circ \\alpha`.
    intercept_ : ndarray of shape (1,) or (K,)
    alpha_ : ndarray of shape (N,) or (K, N)
    X_fit_, classes_, n_iter_, status_, history_

    See Also
    --------
    LagrangianSVMClassifier : The linear form, factored in :math:`(d+1) \\times (d+1)`.
    KernelSchlesingerKozinecClassifier : Kernel SVM without an :math:`N \\times N` factor.
    linsep.solvers.lsvm.kernel_lagrangian_svm : The solver, with the equations.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from linsep import KernelLagrangianSVMClassifier
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = KernelLagrangianSVMClassifier(kernel="rbf", gamma=2.0).fit(X, y)
    >>> clf.score(X, y), clf.dual_coef_.shape
    (0.995, (1, 200))
    """

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **_COMMON_CONSTRAINTS, "class_weight": CLASS_WEIGHT_CONSTRAINT}
    _backends = (DEVICE,)  # K (or its low-rank factor) and the iteration on the input's device (row blocks: refused)
    _device_solves_dual = True

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, mu=None, tol=1e-6,
                 max_iter=10_000, record_history=False, class_weight=None, pos_label=None):
        self.pos_label = pos_label
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

    def _prepare_fit(self, X, fit):
        # One factor for every one-vs-rest problem.  K = F Fᵀ to rounding with few columns (many samples
        # in few dimensions): the kernel LSVM is then the linear LSVM on the rows of F — the same Q, the
        # same iterates — at O(N r) per iteration instead of two N×N triangular solves.  Otherwise, from
        # ACTIVE_SET_MIN_SAMPLES samples, the fixed point by active sets from kernel columns (no N×N
        # factor; the iteration on K only if that fails); below, K.
        path = (getattr(self, "_solver_plan", None) or {}).get("path")  # private: a path forced by tests
        n_samples = X.shape[0]
        many = path is None and not self.record_history and n_samples >= ACTIVE_SET_MIN_SAMPLES
        if path in (None, "low_rank") and not self.record_history and self.kernel != "precomputed" and (
                not many or self._low_rank_on_a_subsample(X)):
            factor = low_rank_gram_factor(X, kernel=self.kernel, **self._kernel_params())
            if factor is not None:
                return factor, LSVMFactor(factor, self.C)
        if path == "active_set" or many:
            return _KernelColumns(self, X)
        return X if self.kernel == "precomputed" else self._kernel_matrix(X, X)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (N, d) — or a Gram matrix (N, N) for ``kernel="precomputed"``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d) or (N, N)
            Training samples, or their Gram matrix for ``kernel="precomputed"``.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), default=None
            Non-negative weight :math:`s_i` per row (all ones when None),
            multiplied by ``class_weight``'s: the slack penalty
            :math:`\\tfrac{C}{2} \\sum_i s_i \\xi_i^2` (:func:`linsep.solvers.lsvm.kernel_lagrangian_svm`).
            Rows of weight 0 are left out (refused for ``"precomputed"``:
            remove them from the Gram matrix); integer weights give the fit
            of repeated rows.  Weighted fits of many samples run the
            iteration on ``K``, not the active sets (:ref:`weights`).

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        elsewhere = self._fit_on_backend(X, y, sample_weight=sample_weight)
        if elsewhere is not None:
            return elsewhere
        X, y = self._validate_fit(X, y)
        return self._fit_kernel_weighted(X, y, sample_weight)

    def _solve_on_designs(self, data, fit, **ignored):
        # the paths of _prepare_fit and _solve_binary, chosen by the same rules where the data live
        path = (getattr(self, "_solver_plan", None) or {}).get("path")  # private: a path forced by tests
        results = []
        for problem in data.kernel_problems(self.kernel, self._kernel_params(), C=self.C, path=path,
                                            active_set_min_samples=ACTIVE_SET_MIN_SAMPLES, probe_samples=PROBE_SAMPLES):
            if problem.design is not None:  # K = F Fᵀ: the linear LSVM on the rows of F
                result = lagrangian_svm(problem.design, None, C=self.C, mu=self.mu, tol=self.tol,
                                        max_iter=self.max_iter, factor=problem.factor)
            else:  # many samples: the active sets first, as _solve_binary; the iteration on K if they fail
                result = problem.active_set(C=self.C, max_rounds=min(50, self.max_iter), max_active=ACTIVE_SET_MAX_ACTIVE,
                                            subsample=ACTIVE_SET_SUBSAMPLE, random_state=0, atol=ACTIVE_SET_KKT_ATOL)
                if result is None or result.status != CONVERGED:
                    result = kernel_lagrangian_svm(None, None, C=self.C, mu=self.mu, tol=self.tol,
                                                   max_iter=self.max_iter, factor=problem.factor)
            results.append(data.dual(result, problem))
        return data.with_intercepts(results), None

    def _low_rank_on_a_subsample(self, X):
        """Whether :math:`K` of ``PROBE_SAMPLES`` rows drawn from ``X`` has a factor of at most half as many columns.

        The numerical rank of a smooth kernel's Gram matrix levels off with
        :math:`N` in few dimensions (RBF in the plane: about 300 at any :math:`N`
        from a few thousand) and stays near :math:`N` in more: the probe costs
        :math:`O(P^3)` at most (:math:`P` = ``PROBE_SAMPLES``), where a failed
        factor of all :math:`N` rows would cost :math:`O(N^3/16)`.
        """
        rows = np.random.default_rng(0).choice(X.shape[0], size=min(PROBE_SAMPLES, X.shape[0]), replace=False)
        return low_rank_gram_factor(X[np.sort(rows)], kernel=self.kernel, max_rank_fraction=0.5,
                                    **self._kernel_params()) is not None

    def _solve_binary(self, X, y, fit, sample_weight=None):
        if isinstance(fit.state, _KernelColumns) and sample_weight is not None:
            gram = fit.state.whole()  # the active sets solve the unweighted dual only
        elif isinstance(fit.state, _KernelColumns):
            result = active_set_kernel_lagrangian_svm(fit.state.block, y, C=self.C,
                                                      max_rounds=min(50, self.max_iter))
            if result.status == CONVERGED:
                return result
            gram = fit.state.whole()  # the iteration on K, as below the size limit
        elif isinstance(fit.state, tuple):
            F, lsvm_factor = fit.state
            if sample_weight is not None and lsvm_factor.sample_weight is not sample_weight:
                # S holds the weights: one weighted factor, shared by every problem
                lsvm_factor = LSVMFactor(F, self.C, sample_weight)
                fit.state = F, lsvm_factor
            result = lagrangian_svm(F, y, C=self.C, mu=self.mu, tol=self.tol, max_iter=self.max_iter,
                                    factor=lsvm_factor, sample_weight=sample_weight)
            signed = y * result.extra["alpha"]  # f(x) = Σ y_i α_i (k(x_i, x) + 1), as kernel_lagrangian_svm
            return replace(result, weights=signed, intercept=float(signed.sum()))
        else:
            gram = fit.state
        return kernel_lagrangian_svm(gram, y, C=self.C, mu=self.mu, tol=self.tol,
                                     max_iter=self.max_iter, record_history=bool(self.record_history),
                                     trace=make_recorder(self.record_history), sample_weight=sample_weight)

    def _store_outputs(self, results, fit):
        _store_alpha(self, results, fit)


class _KernelColumns:
    """Kernel values of the training samples on demand, for the active-set solves; ``K`` whole only if asked."""

    def __init__(self, estimator, X):
        self.estimator, self.X, self._whole = estimator, X, None

    def block(self, rows, cols):
        """``K[rows][:, cols]`` (``rows`` ``None``: every row)."""
        if self._whole is not None or self.estimator.kernel == "precomputed":
            K = self.whole()
            return K[:, cols] if rows is None else K[np.ix_(rows, cols)]
        X = self.X
        return self.estimator._kernel_matrix(X if rows is None else X[rows], X[cols])

    def whole(self):
        """``K`` itself (computed once; the given matrix for ``kernel="precomputed"``)."""
        if self._whole is None:
            self._whole = self.X if self.estimator.kernel == "precomputed" else self.estimator._kernel_matrix(
                self.X, self.X)
        return self._whole


for _estimator in (LagrangianSVMClassifier, KernelLagrangianSVMClassifier):
    if _estimator.__doc__ is not None:  # no docstring under python -OO
        _estimator.__doc__ = _estimator.__doc__.replace("    {pos_label}", "    " + POS_LABEL_DOC)

name_backends(LagrangianSVMClassifier, LagrangianSVMClassifier.fit)
