"""scikit-learn estimators for the minimum-squared-error rules.

=====================  ==========================  ==========================
Lecture name           Estimator                   ``make_classifier`` name
=====================  ==========================  ==========================
MSE (pseudo-inverse)   :class:`MSEClassifier`      ``"mse"``
Widrow–Hoff (batch)    :class:`WidrowHoffClassifier`  ``"widrow_hoff"``
Widrow–Hoff (single)   :class:`LMSClassifier`      ``"lms"``
=====================  ==========================  ==========================

All three take the margin vector ``b`` as a ``fit`` argument
(``fit(X, y, margin=b)``), since it has one entry per training sample.  The
equations are in :mod:`linsep.solvers.mse`.
"""

from __future__ import annotations

from numbers import Integral, Real

from dataclasses import replace

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from linsep.designs.backend import DEVICE, ROW_BLOCKS
from linsep.estimators.base import (name_backends, CLASS_WEIGHT_CONSTRAINT, POS_LABEL_CONSTRAINT, BaseLinearSeparator, FitContext,
                                   rows_with_weight)
from linsep.estimators.perceptron import fill_shared_docs, initial_weights
from linsep._core.plan import READS_FLOAT32
from linsep._core.certificates import decision_scores
from linsep._core.result import CONVERGED, SEPARABLE, SolveResult
from linsep.estimators.stream import StreamMixin
from linsep.solvers.batch_rules import widrow_hoff_on_design
from linsep.solvers.mse import (lms, lms_learning_rate, mse, mse_linear_machine, own_class_gap,
                               widrow_hoff)
from linsep.solvers.perceptron.solver import SCHEDULES
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.designs.weights import (class_weight_table, scaled_labels, scaled_margin, unscaled_margin, weighted_signed_design)


def _check_margin(margin, n_samples):
    """``None``, a positive number or a positive vector of length ``N`` → ``b`` (or ``None``)."""
    if margin is None:
        return None
    b = np.asarray(margin, dtype=np.float64)
    if b.ndim == 0:
        b = np.full(n_samples, float(b))
    if b.shape != (n_samples,):
        raise ValueError(f"margin must be a number or have one entry per sample ({n_samples}), "
                         f"got shape {b.shape}")
    if not np.all(np.isfinite(b)) or b.min() <= 0:
        raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
    return b


def _with_margin(result, margin):
    """``result`` with the margin vector the estimator stores (where the fit data give one: the unscaled ``b``)."""
    return result if margin is None else replace(result, margin=margin)


class _MarginFitMixin:
    """``fit(X, y, margin=None)`` shared by the three MSE estimators."""

    # The MSE solution does not depend on the scale of a column (without C), but the
    # speed of the gradient rules (Widrow–Hoff, LMS) does: a column far from the unit bias column makes
    # YᵀY ill-conditioned (λ_min/λ_max ~ its scale squared).  Columns beyond 2^±8 are
    # brought to [1/2, 1) by powers of two, which preconditions the rules and leaves
    # their limit unchanged; ordinary (e.g. standardised) data are left as they are.
    _rescale_exponent = 8
    # Dense float32 X is kept (no float64 copy): products with it are summed in float64 per block of
    # rows (SignedDesign) or row (the LMS loop), the factorisation is float64, and coef_ is float32.
    # Sparse float32 data form a float64 sparse Y (its Gram matrix and products need float64 sums)
    # and give float64 coef_, except in the LMS loop, which reads them as they are.
    _dtypes = READS_FLOAT32

    def _fit_with_margin(self, X, y, margin, sample_weight=None, fit=None, coef_init=None, intercept_init=None):
        X, y = self._validate_fit(X, y)
        b = _check_margin(margin, X.shape[0])
        fit = FitContext() if fit is None else fit
        fit.initial_weights = initial_weights(self, X, coef_init, intercept_init)
        return self._fit_weighted(X, y, sample_weight, per_row={"margin": b}, fit=fit)

    def _weighted_problem(self, X, y, margin, sample_weight):
        """:math:`(\\tilde Y, \\tilde b)`: the rows :math:`\\sqrt{s_i}\\, y_i` and margins :math:`\\sqrt{s_i}\\, b_i` of :math:`\\sum_i s_i (y_i^t a - b_i)^2` (``linsep.designs.weights``)."""
        return weighted_signed_design(X, y, sample_weight, 0.5), scaled_margin(margin, sample_weight)

    def _store_outputs(self, results, fit):
        margins = [r.margin for r in results]
        self.margin_vector_ = margins[0] if len(results) == 1 else fit.stack(margins, axis=1)


class MSEClassifier(_MarginFitMixin, BaseLinearSeparator):
    """Minimum-squared-error linear classifier :math:`a = Y^{+} b` (the lecture's pseudo-inverse rule).

    Two classes: :math:`a = \\operatorname{argmin} \\lVert Y a - b \\rVert^2` on
    :math:`Y = \\operatorname{diag}(y)\\,[X,\\ \\mathbf{1}]`.  More classes: the
    lecture's linear machine, :math:`A = [X,\\ \\mathbf{1}]^{+} B` with the
    indicator matrix :math:`B` as right-hand side — one factorisation and one
    solve for all classes, not one-vs-rest.  Never an explicit inverse.

    Parameters
    ----------
    C : float, default=0.0
        Ridge penalty :math:`C \\lVert w \\rVert^2` (the bias is not penalised).  0 gives the
        lecture's solution (minimum-norm when :math:`Y` is rank-deficient).
    record_history : bool or int, default=False
        Record a teaching trace in ``history_``: the one row :math:`a`, :math:`b`,
        :math:`e = Y a - b` of the solve.  Above two classes ``history_`` is a
        list with one dict per class: the linear machine's :math:`a_k`,
        :math:`B_{:, k}` and :math:`e_k = A a_k - B_{:, k}` (its criterion
        :math:`\\lVert e_k \\rVert^2` sums to the machine's
        :math:`\\lVert A W - B \\rVert^2`; ``training_errors`` counts the
        machine's errors).  Format and memory bound in :ref:`trace-format`.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (one-vs-rest problems weigh the original classes).
    {pos_label}

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray
    status_ : str or ndarray of str
        ``"separable"`` when the solution classifies every training sample
        strictly correctly (:math:`Y a > 0`; for the linear machine: each
        sample's own discriminant strictly largest), else ``"converged"``.
    n_iter_ : int or ndarray
        Always 1 (one solve).
    margin_vector_ : ndarray of shape (N,) or (N, K)
        The :math:`b` (or :math:`B`) that was used.

    See Also
    --------
    WidrowHoffClassifier : Gradient descent to the same solution.
    LMSClassifier : Single-sample gradient descent to the same solution.
    HoKashyapClassifier : Adapts the margin vector :math:`b` as well, to separate when possible.
    linsep.solvers.mse.mse : The solver, with the equations.

    Examples
    --------
    The lecture's example (bias first there, last here):

    >>> from linsep import MSEClassifier
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, 2, 2]
    >>> clf = MSEClassifier().fit(X, y, margin=[1, 1, 1, 10])
    >>> clf.status_
    'separable'
    """

    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="left")],
                              "record_history": RECORD_HISTORY_CONSTRAINT,
                              "class_weight": CLASS_WEIGHT_CONSTRAINT,
                              "pos_label": POS_LABEL_CONSTRAINT}
    _backends = (ROW_BLOCKS, DEVICE)
    _device_traces = True
    _rescale_exponent = None  # one factorisation, no iterations to precondition; C is in the data's units

    def __init__(self, *, C=0.0, record_history=False, class_weight=None, pos_label=None):
        self.pos_label = pos_label
        self.C = C
        self.record_history = record_history
        self.class_weight = class_weight

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, margin=None, sample_weight=None):
        """Fit on ``X, y`` with margin vector :math:`b` (default all ones).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (N, d)
        y : array-like of shape (N,)
        margin : float or array-like of shape (N,), optional
            Positive :math:`b` (only relative sizes matter).  For more than two
            classes, :math:`B_{ik} = b_i` for the sample's own class.
        sample_weight : array-like of shape (N,), optional
            Non-negative :math:`s_i`:
            :math:`a = \\operatorname{argmin} \\sum_i s_i (y_i^t a - b_i)^2`
            (:math:`+\\, C \\lVert w \\rVert^2`, weighed against the weighted sum, so only without
            ``C`` does multiplying all weights by a constant change nothing).
            Rows of weight 0 are left out (no entry in ``margin_vector_``);
            integer weights give the fit of repeated rows.  Multiplied by the
            weights of ``class_weight``.

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.

        Notes
        -----
        A ``{blocks}.array`` ``X`` chunked by rows is fitted blockwise
        (:ref:`{blocks}`), with its weights ({blocks} or NumPy); ``margin_vector_``
        is then a {blocks} array.
        """
        elsewhere = self._fit_on_backend(X, y, margin=margin, sample_weight=sample_weight)
        if elsewhere is not None:
            return elsewhere
        X, y = self._validate_fit(X, y)
        b = _check_margin(margin, X.shape[0])
        classes, labels = np.unique(y, return_inverse=True)
        if classes.size == 2 or self.pos_label is not None:  # (above two, _fit_problems refuses pos_label)
            return self._fit_weighted(X, y, sample_weight, per_row={"margin": b})
        self.classes_ = classes
        weights = self._sample_weight(X, y, sample_weight)
        rows = rows_with_weight(weights)
        if rows is not None:  # rows of weight 0 leave
            X, labels, weights = X[rows], labels[rows], weights[rows]
            b = None if b is None else b[rows]
        fit = FitContext()
        X_solve = self._solver_input(X, fit)  # the same power-of-two column scaling as one-vs-rest
        # A = [X, 1]: a design with all labels +1, never formed
        A, b_solve = self._weighted_problem(X_solve, np.ones(X.shape[0], dtype=X.dtype), b, weights)
        traces = [make_recorder(self.record_history) for _ in classes] if self.record_history else None
        solved = mse_linear_machine(A, labels, b_solve, C=self.C, traces=traces)
        results = [SolveResult(weights=solved.weights[:, k], n_iter=1, status=solved.status,
                               margin=unscaled_margin(solved.margin[:, k], weights),
                               history=None if traces is None else solved.history[k], extra=solved.extra)
                   for k in range(classes.size)]
        self._unpack_common(results)
        self._store(results, fit)
        self._check_machine_separation(X, labels)
        return self

    def _check_machine_separation(self, X, labels):
        """Demote a ``separable`` linear machine that the stored model contradicts.

        As :meth:`_check_separation` does for two classes: the verdict is the
        solver's, on float64 weights; ``coef_`` may be rounded (float32 data),
        so each sample's own discriminant must be finite and strictly largest
        under ``decision_function`` too.
        """
        if self.status_[0] != SEPARABLE:  # one verdict for the whole machine
            return
        with np.errstate(over="ignore", invalid="ignore"):
            scores = decision_scores(X, self.coef_, self.intercept_)
        if not (np.all(np.isfinite(scores)) and own_class_gap(scores, labels).min() > 0):
            self.status_ = np.full(self.status_.shape, CONVERGED, dtype=object)

    def _solve_binary(self, X, y, fit, margin=None, sample_weight=None):
        Y, margin = self._weighted_problem(X, y, margin, sample_weight)
        result = mse(Y, margin, C=self.C, trace=make_recorder(self.record_history))
        return unscaled_margin(result, sample_weight)

    def _cannot_solve_wide(self):
        return "MSEClassifier"

    def _solve_on_designs(self, data, fit, margin=None, **ignored):
        # Two classes: Y⁺b (weighted: on the rows √s_i y_i and targets √s_i b_i); more: the linear machine.
        # record_history reaches here only where the fit data record traces (data.recorder): their rows stay there
        if data.classes.size > 2:
            if not self.record_history:
                return data.linear_machine(self.C, margin), None
            traces = [data.recorder(self.record_history) for _ in data.classes]
            return data.linear_machine(self.C, margin, traces=traces), None
        problems = data.mse_problems(margin)
        return [_with_margin(mse(problem.design, problem.target, C=self.C,
                                 trace=data.recorder(self.record_history) if self.record_history else None),
                             problem.margin) for problem in problems], problems


class WidrowHoffClassifier(_MarginFitMixin, BaseLinearSeparator):
    """Batch Widrow–Hoff: gradient descent :math:`a \\leftarrow a - \\eta_k Y^t (Y a - b)` to the MSE solution.

    Parameters
    ----------
    learning_rate : float or None, default=None
        :math:`\\eta_1`; ``None`` sets :math:`2 / \\lambda_{\\max}(Y^t Y)` for ``schedule="inverse"``
        and :math:`1 / \\lambda_{\\max}` for ``"constant"`` (power iteration).
    schedule : {"inverse", "constant"}, default="inverse"
        :math:`\\eta_k = \\eta_1 / k` (the lecture) or :math:`\\eta_k = \\eta_1`.  The error decays like
        :math:`k^{-2 \\lambda_{\\min} / \\lambda_{\\max}}` under :math:`1/k` and like
        :math:`(1 - \\lambda_{\\min} / \\lambda_{\\max})^k` with constant steps: prefer ``"constant"``
        (or standardise the features) on ill-conditioned data.
    max_iter : int, default=1000
        Largest number of gradient steps per binary problem.
    tol : float, default=1e-5
        Stop when :math:`\\lVert Y^t (Y a - b) \\rVert \\le \\mathit{tol} \\, \\lVert Y^t b \\rVert`.
    record_history : bool or int, default=False
        Record a teaching trace in ``history_`` (``a(k)``, ``b``,
        :math:`e(k) = Y a(k) - b`, :math:`k = 0` to ``n_iter_``; ``True``: every
        iteration, an int ``n``: every ``n``-th; format and memory bound in
        :ref:`trace-format`).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (one-vs-rest problems weigh the original classes).
    {pos_label}

    Attributes
    ----------
    coef_, intercept_, classes_
    status_ : str or ndarray of str
        ``"separable"`` if the final weights separate the training data,
        else ``"converged"`` or ``"max_iter"`` (with a ConvergenceWarning).
    n_iter_ : int or ndarray
        Gradient steps made.
    history_ : dict or list of dict
        ``criterion``: :math:`J_s(a_k)` for every iterate.
    margin_vector_ : ndarray

    See Also
    --------
    MSEClassifier : The solution the descent converges to, in one solve.
    LMSClassifier : The single-sample rule.
    linsep.solvers.mse.widrow_hoff : The solver, with the equations.

    Notes
    -----
    More than two classes are fitted one-vs-rest with :math:`\\pm 1` targets; with
    :math:`b = \\mathbf{1}` the resulting argmax classifier is the MSE linear machine's
    (:math:`A^{+} (2 t_k - \\mathbf{1}) = 2 a_k - e_{\\mathrm{bias}}`).

    Examples
    --------
    >>> import numpy as np
    >>> from linsep import MSEClassifier, WidrowHoffClassifier
    >>> X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
    >>> y = np.array([1, 1, 2, 2])
    >>> gd = WidrowHoffClassifier(schedule="constant", max_iter=100_000, tol=1e-10).fit(X, y)
    >>> np.allclose(gd.coef_, MSEClassifier().fit(X, y).coef_, atol=1e-4)
    True
    """

    _parameter_constraints = {
        "learning_rate": [None, Interval(Real, 0, None, closed="neither")],
        "schedule": [StrOptions(set(SCHEDULES))],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "pos_label": POS_LABEL_CONSTRAINT,
    }

    _backends = (DEVICE,)  # on the device (row blocks: refused)
    _device_traces = True

    def __init__(self, *, learning_rate=None, schedule="inverse", max_iter=1000, tol=1e-5, record_history=False,
                 class_weight=None, pos_label=None):
        self.pos_label = pos_label
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.max_iter = max_iter
        self.tol = tol
        self.record_history = record_history
        self.class_weight = class_weight

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, margin=None, sample_weight=None, coef_init=None, intercept_init=None):
        """Fit on ``X, y`` with margin vector :math:`b` (default all ones).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        margin : float or array-like of shape (N,), optional
            Positive margin vector :math:`b` (default all ones).
        sample_weight : array-like of shape (N,), default=None
            Non-negative :math:`s_i` (all ones when None), multiplied by
            ``class_weight``'s: the weighted gradient :math:`Y^t S (Y a - b)` of
            :math:`\\sum_i s_i (y_i^t a - b_i)^2`.  Rows of weight 0 are left out, integer
            weights equal repeated rows and a common factor of all weights
            changes nothing (the default :math:`\\eta_1` is taken on the weighted
            :math:`Y^t S Y`); see :ref:`weights`.
        {start}

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        elsewhere = self._fit_on_backend(X, y, margin=margin, sample_weight=sample_weight, coef_init=coef_init,
                                         intercept_init=intercept_init)
        if elsewhere is not None:
            return elsewhere
        return self._fit_with_margin(X, y, margin, sample_weight, coef_init=coef_init, intercept_init=intercept_init)

    def _solve_on_designs(self, data, fit, margin=None, **ignored):
        # Columns beyond 2^±8, which the in-memory fit rescales to precondition the rule, are refused there.
        problems = data.problems()
        b = data.margin_vector(margin)
        learning_rate = self.learning_rate
        if learning_rate is None:  # as widrow_hoff chooses it, from the Gram matrix's largest eigenvalue
            lam = data.largest_gram_eigenvalue()  # on the device; signs do not change YᵀY
            learning_rate = (2.0 if self.schedule == "inverse" else 1.0) / lam if lam > 0 else 1.0
        target = data.weighted_target(b)  # weighted: √s ∘ b on the rows √s_i y_i; b is the margin stored
        return [_with_margin(widrow_hoff_on_design(
            problem.design, target, learning_rate=learning_rate, schedule=self.schedule, max_iter=self.max_iter,
            tol=self.tol, initial_weights=fit.initial_weights, trace=data.recorder(self.record_history)),
            None if problem.weights is None else b) for problem in problems], problems

    def _solve_binary(self, X, y, fit, margin=None, sample_weight=None):
        Y, margin = self._weighted_problem(X, y, margin, sample_weight)
        result = widrow_hoff(Y, margin, learning_rate=self.learning_rate,
                             schedule=self.schedule, max_iter=self.max_iter, tol=self.tol,
                             initial_weights=fit.initial_weights, trace=make_recorder(self.record_history))
        return unscaled_margin(result, sample_weight)


class LMSClassifier(StreamMixin, _MarginFitMixin, BaseLinearSeparator):
    """Single-sample Widrow–Hoff (LMS): :math:`a \\leftarrow a - \\eta_k \\, y_i (y_i^t a - b_i)`, sample by sample.

    A compiled sequential loop over the rows of ``X``, dense or CSR/CSC
    (sparse rows are read as they are, never densified).  ``partial_fit``
    makes one pass over each chunk of a stream (:ref:`streaming`).

    Parameters
    ----------
    learning_rate : float or None, default=None
        :math:`\\eta_1`; ``None`` sets :math:`1 / \\max_i \\lVert (x_i, 1) \\rVert^2` (every update a
        contraction, so the rule cannot diverge) on the training data, or on
        the first chunk given to ``partial_fit`` (then kept for the stream).
    schedule : {"inverse", "constant"}, default="inverse"
        :math:`\\eta_k = \\eta_1 / k` with :math:`k` the pass over the data, or constant.
    max_iter : int, default=1000
        Largest number of passes per binary problem.
    tol : float, default=1e-5
        Stop when a pass moves the weights by at most :math:`\\mathit{tol} \\, \\lVert a \\rVert`.
    shuffle : bool, default=True
        New random order of the samples at each pass.
    random_state : int, RandomState or None, default=0 (the same order on every run)
    record_history : bool, int or "updates", default=False
        Record a teaching trace in ``history_`` (``a``, ``b``,
        :math:`e = Y a - b` after each pass, :math:`k = 0` to ``n_iter_``; ``True``: every
        iteration, an int ``n``: every ``n``-th; format and memory bound in
        :ref:`trace-format`).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (one-vs-rest problems weigh the original classes).
    {pos_label}

    Attributes
    ----------
    coef_, intercept_, classes_, status_, margin_vector_
    n_iter_ : int or ndarray
        Passes made.
    history_ : dict or list of dict
        ``criterion``: sum of squared residuals met during each pass.
    learning_rate_ : float
        The :math:`\\eta_1` used (for data ``fit`` rescaled, in the rescaled columns).
    epoch_ : int
        Schedule position :math:`k` of the last pass, as in
        :class:`~linsep.PerceptronClassifier`.

    See Also
    --------
    WidrowHoffClassifier : The batch rule.
    MSEClassifier : The solution both rules approach, in one solve.
    PerceptronClassifier : The other single-sample rule with ``partial_fit``.
    linsep.solvers.mse.lms : The solver, with the equations.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from linsep import LMSClassifier
    >>> X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    >>> clf = LMSClassifier(random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    >>> clf = clf.partial_fit(X[:50], y[:50])           # one more pass, over a chunk
    """

    _device_alternative = "WidrowHoffClassifier"  # the batch form of the rule, fitted on the device
    _parameter_constraints = {
        "learning_rate": [None, Interval(Real, 0, None, closed="neither")],
        "schedule": [StrOptions(set(SCHEDULES))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "pos_label": POS_LABEL_CONSTRAINT,
    }

    def __init__(self, *, learning_rate=None, schedule="inverse", max_iter=1000, tol=1e-5, shuffle=True,
                 random_state=0, record_history=False, class_weight=None, pos_label=None):
        self.pos_label = pos_label
        self.class_weight = class_weight
        self.record_history = record_history
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, margin=None, sample_weight=None, coef_init=None, intercept_init=None):
        """Fit on ``X, y`` (dense or sparse) with margin vector :math:`b` (default all ones); starts over.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        margin : float or array-like of shape (N,), optional
            Positive margin vector :math:`b` (default all ones).
        sample_weight : array-like of shape (N,), default=None
            Non-negative :math:`s_i` (all ones when None), multiplied by
            ``class_weight``'s; weighs each update:
            :math:`a \\leftarrow a - \\eta_k \\, s_i y_i (y_i^t a - b_i)`.  The default :math:`\\eta_1` is
            divided by :math:`\\max_i s_i` (every update stays a contraction), so a
            common factor of all weights changes nothing.  Rows of weight 0
            are left out.  Integer weights are not repeated rows: a repeated
            row is visited several times per pass (:ref:`weights`).
        {start}

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        self._fit_with_margin(X, y, margin, sample_weight, FitContext(rng=check_random_state(self.random_state)),
                              coef_init=coef_init, intercept_init=intercept_init)
        self.epoch_ = int(np.max(self.n_iter_))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, margin=None, epoch=None):
        """One LMS pass over the chunk ``X, y`` (margin :math:`b` per chunk sample), from the current weights.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d)
            The chunk's samples.
        y : array-like of shape (n,)
            Their labels.
        classes : array-like, optional
            All the labels of the stream; required on the first call.
        margin : float or array-like of shape (n,), optional
            Positive margin ``b`` of the chunk's samples (default all ones).
        epoch : int, optional
            Pass over the stream this chunk belongs to: it uses :math:`\\eta_{\\mathit{epoch}}`.
            Default: ``epoch_``.

        Returns
        -------
        self : object
            The updated estimator; ``status_`` speaks of this chunk only.

        Notes
        -----
        ``max_iter`` is not used; ``status_`` and ``margin_vector_`` speak of
        this chunk only.  Semantics and the schedule rule: :ref:`streaming`.
        """
        return self._partial_fit_primal(X, y, classes, epoch, rng=check_random_state(self.random_state),
                                        margin=margin)

    def _start_stream(self, X):
        # η_1 is fixed on the first chunk and kept for the whole stream; with class weights divided by the
        # largest, as fit divides by the largest weight: every step η s_i ‖y_i‖² <= 1 stays a contraction
        self.learning_rate_ = lms_learning_rate(X) if self.learning_rate is None else float(self.learning_rate)
        if self.learning_rate is None and self.class_weight is not None:
            table = class_weight_table(self.class_weight, self.classes_, type(self).__name__, stream=True)
            self.learning_rate_ /= max(float(table.max()), np.finfo(float).tiny)

    def _store_outputs(self, results, fit):
        super()._store_outputs(results, fit)
        self.learning_rate_ = results[0].extra["learning_rate"]
        # fit's η_1 is in the units of the columns it solved in; partial_fit needs the original ones
        self._learning_rate_in_input_units = fit.shifts is None

    def _stream_ready(self):
        return self.learning_rate is not None or getattr(self, "_learning_rate_in_input_units", True)

    def _solve_binary(self, X, y, fit, margin=None, sample_weight=None):
        learning_rate = self.learning_rate
        if sample_weight is not None and learning_rate is None:
            learning_rate = lms_learning_rate(X) / sample_weight.max()  # steps η s_i ‖y_i‖² <= 1: contractions
        y, margin = scaled_labels(y, sample_weight, 0.5), scaled_margin(margin, sample_weight)
        result = lms(X, y, margin, learning_rate=learning_rate, schedule=self.schedule,
                     max_iter=self.max_iter, tol=self.tol, shuffle=self.shuffle, rng=fit.rng,
                     initial_weights=fit.initial_weights, trace=make_recorder(self.record_history))
        return unscaled_margin(result, sample_weight)

    def _solve_chunk(self, X, y, weights, epoch, rng, margin=None, sample_weight=None):
        margin = _check_margin(margin, X.shape[0])
        y, margin = scaled_labels(y, sample_weight, 0.5), scaled_margin(margin, sample_weight)
        result = lms(X, y, margin, learning_rate=self.learning_rate_,
                     schedule=self.schedule, max_iter=1, tol=self.tol, shuffle=self.shuffle, rng=rng,
                     initial_weights=weights, first_pass=epoch, trace=make_recorder(self.record_history))
        return unscaled_margin(result, sample_weight)


fill_shared_docs(MSEClassifier, WidrowHoffClassifier, LMSClassifier)

name_backends(MSEClassifier.fit)
