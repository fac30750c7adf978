"""scikit-learn estimators for the perceptron rules.

=========================  ===================================  ========================
Rule                       Estimator                            ``make_classifier`` name
=========================  ===================================  ========================
single-sample perceptron   :class:`PerceptronClassifier`        ``"perceptron"``
batch perceptron           :class:`BatchPerceptronClassifier`   ``"batch_perceptron"``
kernel (dual) perceptron   :class:`KernelPerceptronClassifier`  ``"kernel_perceptron"``
=========================  ===================================  ========================

More than two classes are fitted one-vs-rest.  The equations are in
:mod:`linsep.solvers.perceptron`.  The single-sample and kernel perceptrons
also learn from a stream of chunks with ``partial_fit`` (:ref:`streaming`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from linsep.designs.backend import DEVICE
from linsep.estimators.base import (CLASS_WEIGHT_CONSTRAINT, KERNEL_CONSTRAINTS, POS_LABEL_CONSTRAINT, POS_LABEL_DOC,
                                   BaseKernelSeparator, BaseLinearSeparator, FitContext,
                                   starting_weights)
from linsep._core.plan import READS_FLOAT32
from linsep.estimators.stream import StreamMixin
from linsep.kernels import KernelColumnCache, resolve_gamma
from linsep.solvers.batch_rules import batch_perceptron_on_design
from linsep.solvers.perceptron.solver import SCHEDULES, batch_perceptron, kernel_perceptron, perceptron
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.designs.weights import scaled_labels, weighted_signed_design

_RULE_PARAMS = {
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "schedule": [StrOptions(set(SCHEDULES))],
    "margin": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "record_history": RECORD_HISTORY_CONSTRAINT,
    "class_weight": CLASS_WEIGHT_CONSTRAINT,
    "pos_label": POS_LABEL_CONSTRAINT,
}

_START_DOC = """coef_init : array-like of shape (d,), default=None
            Starting weights ``w`` of a two-class problem (the lecture's
            exercises start from given ``a(1)``), in the solver's sign
            convention (``pos_label``'s side positive); default 0.
        intercept_init : float, default=None
            Starting bias ``w_0`` (default 0)."""


def initial_weights(estimator, X, coef_init, intercept_init):
    """``a(1) = (coef_init, intercept_init)`` (bias last) for a two-class fit, checked; ``None`` if neither is given."""
    return starting_weights(np.asarray(estimator.classes_).size, X.shape[1], coef_init, intercept_init)


def weighted_rule_labels(estimator, y, sample_weight):
    """Labels :math:`s_i y_i` of the weighted perceptron rules, whose corrections are :math:`\\eta \\, s_i y_i`.

    The test :math:`a^t (s_i y_i) \\le 0` is the unweighted one (:math:`s_i > 0`); with
    a positive ``margin`` :math:`b` it would become :math:`a^t y_i \\le b / s_i`, not the
    rule's, so weights are refused there.
    """
    if sample_weight is not None and estimator.margin > 0:
        raise ValueError(f"{type(estimator).__name__} takes sample_weight/class_weight only with margin=0 "
                         f"(got margin={estimator.margin}): a weight would rescale the margin test of its row")
    return scaled_labels(y, sample_weight, 1)


class PerceptronClassifier(StreamMixin, BaseLinearSeparator):
    """Single-sample perceptron, fixed or variable increment, with optional margin.

    :math:`a \\leftarrow a + \\eta_k \\, y_i` whenever :math:`a^t y_i \\le b`
    (:math:`b` the ``margin``), for the sign-normalised samples :math:`y_i`
    (the label :math:`\\pm 1` times :math:`(x_i, 1)`) visited one at a time (a compiled sequential loop; dense or CSR/CSC
    input, sparse data read row by row and never densified).  ``partial_fit``
    makes one pass over each chunk of a stream (:ref:`streaming`).

    Parameters
    ----------
    learning_rate : float, default=1.0
        :math:`\\eta_1`.  Irrelevant to the classifier when ``margin = 0``.
    schedule : {"constant", "inverse"}, default="constant"
        Fixed increment :math:`\\eta_k = \\eta_1` or variable increment
        :math:`\\eta_k = \\eta_1 / k` (:math:`k` the pass number).
    margin : float, default=0.0
        :math:`b \\ge 0`: correct while :math:`a^t y_i \\le b`.
    max_iter : int, default=1000
        Largest number of passes per binary problem.
    shuffle : bool, default=True
        New random order of the samples at each pass.
    random_state : int, RandomState or None, default=0
        Seed of the shuffling: the same order on every run by default, as
        scikit-learn's ``Perceptron``; ``None`` for a fresh order each fit.
    record_history : bool, int or "updates", default=False
        Record a teaching trace in ``history_`` (``a(k)`` after each pass and
        the last sample it corrected, :math:`k = 0` to ``n_iter_``; a traced fit makes
        its passes in plain Python; ``True``: every iteration, an int ``n``:
        every ``n``-th; ``"updates"``: a row after every correction, the
        lecture's update-by-update table; format and memory bound in
        :ref:`trace-format`).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (one-vs-rest problems weigh the original classes); ``margin=0`` only.
    {pos_label}

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
        Weights :math:`w` (float32 for float32 ``X``).
    intercept_ : ndarray of shape (1,) or (K,)
        Bias :math:`w_0`.
    classes_ : ndarray of shape (K,)
        The class labels.
    status_ : str or ndarray of str
        ``"separable"`` when a pass made no correction (every training
        sample then has :math:`y_i (w^t x_i + w_0) > b`), else ``"max_iter"``
        with a ConvergenceWarning; after ``partial_fit``, of the last chunk.
    n_iter_ : int or ndarray
        Passes over the data (per class for more than two classes).
    history_ : dict or list of dict
        ``mistakes``: corrections made in each pass.
    epoch_ : int
        Schedule position :math:`k` of the last pass (:math:`\\eta_k`): the one the next
        ``partial_fit`` uses unless given ``epoch``.

    See Also
    --------
    BatchPerceptronClassifier : The batch rule, one step over all mistakes.
    KernelPerceptronClassifier : The same rule in a kernel space.
    KozinecClassifier : Stops at a separating hyperplane too, from the hulls' nearest points.
    linsep.solvers.perceptron.perceptron : The solver, with the equations.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from linsep import PerceptronClassifier
    >>> X, y = make_blobs(n_samples=60, centers=[[-3, 0], [3, 0]], random_state=0)
    >>> clf = PerceptronClassifier(random_state=0).fit(X, y)
    >>> clf.status_, clf.score(X, y)
    ('separable', 1.0)
    """

    _device_alternative = "BatchPerceptronClassifier"  # the batch form of the rule, fitted on the device
    _parameter_constraints = {**_RULE_PARAMS, "shuffle": ["boolean"], "random_state": ["random_state"]}
    _dtypes = READS_FLOAT32  # float32 rows read as they are; weights and sums in float64

    def __init__(self, *, learning_rate=1.0, schedule="constant", margin=0.0, max_iter=1000, shuffle=True,
                 random_state=0, record_history=False, class_weight=None, pos_label=None):
        self.pos_label = pos_label
        self.class_weight = class_weight
        self.record_history = record_history
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.margin = margin
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, coef_init=None, intercept_init=None):
        """Fit on ``X`` (N, d), dense or sparse, and labels ``y``; starts over after ``partial_fit``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), default=None
            Non-negative :math:`s_i` (all ones when None), multiplied by
            ``class_weight``'s; weighs each correction:
            :math:`a \\leftarrow a + \\eta_k \\, s_i y_i`.  Rows of weight 0 are left out; a common
            factor of all weights scales ``coef_`` and keeps every
            prediction.  Integer weights are not repeated rows: a repeated
            row is visited several times per pass (:ref:`weights`).
        {start}

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        X, y = self._validate_fit(X, y)
        fit = FitContext(rng=check_random_state(self.random_state),
                         initial_weights=initial_weights(self, X, coef_init, intercept_init))
        self._fit_weighted(X, y, sample_weight, fit=fit)
        self.epoch_ = int(np.max(self.n_iter_))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, epoch=None):
        """One pass of the rule over the chunk ``X, y``, from the current weights.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d)
            The chunk's samples.
        y : array-like of shape (n,)
            Their labels.
        classes : array-like, optional
            All the labels of the stream; required on the first call.
        epoch : int, optional
            Pass over the stream this chunk belongs to: it uses :math:`\\eta_{\\mathit{epoch}}`
            (matters for ``schedule="inverse"`` only).  Default: ``epoch_``.

        Returns
        -------
        self : object
            The updated estimator; ``status_`` speaks of this chunk only.

        Notes
        -----
        ``max_iter`` is not used; ``status_`` speaks of this chunk only.
        Semantics and the schedule rule: :ref:`streaming`.
        """
        return self._partial_fit_primal(X, y, classes, epoch, rng=check_random_state(self.random_state))

    def _solve_binary(self, X, y, fit, sample_weight=None):
        y = weighted_rule_labels(self, y, sample_weight)
        return perceptron(X, y, learning_rate=self.learning_rate, schedule=self.schedule, margin=self.margin,
                          max_iter=self.max_iter, shuffle=self.shuffle, rng=fit.rng,
                          initial_weights=fit.initial_weights, trace=make_recorder(self.record_history))

    def _solve_chunk(self, X, y, weights, epoch, rng, sample_weight=None):
        y = weighted_rule_labels(self, y, sample_weight)
        return perceptron(X, y, learning_rate=self.learning_rate, schedule=self.schedule, margin=self.margin,
                          max_iter=1, shuffle=self.shuffle, rng=rng, initial_weights=weights,
                          first_pass=epoch, trace=make_recorder(self.record_history))


class BatchPerceptronClassifier(BaseLinearSeparator):
    """Batch perceptron: :math:`a \\leftarrow a + \\eta_k \\sum_{a^t y_i \\le b} y_i`, :math:`\\eta_k = \\eta_1 / k`.

    Parameters
    ----------
    learning_rate : float, default=1.0
        :math:`\\eta_1`.
    schedule : {"inverse", "constant"}, default="inverse"
        :math:`\\eta_k = \\eta_1 / k` (the lecture) or constant.  From :math:`a_0 = 0` the first
        step is the sum of all samples and the later ones shrink like
        :math:`1/k`, so under :math:`1/k` the bias and the direction may need very
        many iterations to catch up (e.g. :math:`> 10^5` on three well-separated
        blobs where ``"constant"`` separates in about 50): prefer
        ``"constant"`` on separable data, ``"inverse"`` to damp the
        oscillation on non-separable data.
    margin : float, default=0.0
        :math:`b \\ge 0`.
    max_iter : int, default=1000
        Largest number of iterations (one product :math:`Y a` each).
    record_history : bool or int, default=False
        Record a teaching trace in ``history_`` (``a(k)`` after each iteration,
        :math:`k = 0` to ``n_iter_``; ``True``: every iteration, an int
        ``n``: every ``n``-th; format and memory bound in :ref:`trace-format`).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``
        (one-vs-rest problems weigh the original classes); ``margin=0`` only.
    {pos_label}

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
        Weights :math:`w` (float32 for float32 ``X``).
    intercept_ : ndarray of shape (1,) or (K,)
        Bias :math:`w_0`.
    classes_ : ndarray of shape (K,)
        The class labels.
    status_ : str or ndarray of str
        ``"separable"`` when an iteration found no mistake (every training
        sample then has :math:`y_i (w^t x_i + w_0) > b`), else ``"max_iter"``
        with a ConvergenceWarning.
    n_iter_ : int or ndarray
        Iterations (per class for more than two classes).
    history_ : dict or list of dict
        ``mistakes``: misclassified samples at each iteration.

    See Also
    --------
    PerceptronClassifier : The single-sample rule.
    WidrowHoffClassifier : Batch gradient descent on the squared error instead.
    linsep.solvers.perceptron.batch_perceptron : The solver, with the equations.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from linsep import BatchPerceptronClassifier
    >>> X, y = make_blobs(n_samples=60, centers=[[-3, 0], [3, 0]], random_state=0)
    >>> clf = BatchPerceptronClassifier(schedule="constant").fit(X, y)
    >>> clf.status_, clf.score(X, y)
    ('separable', 1.0)
    """

    _parameter_constraints = dict(_RULE_PARAMS)
    _dtypes = READS_FLOAT32  # float32 X never copied; Y a and Yᵀ1_M summed in float64

    _backends = (DEVICE,)  # on the device (row blocks: refused)
    _device_traces = True

    def __init__(self, *, learning_rate=1.0, schedule="inverse", margin=0.0, max_iter=1000, record_history=False,
                 class_weight=None, pos_label=None):
        self.pos_label = pos_label
        self.class_weight = class_weight
        self.record_history = record_history
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.margin = margin
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, coef_init=None, intercept_init=None):
        """Fit on ``X`` (N, d), dense or sparse, and labels ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), default=None
            Non-negative :math:`s_i` (all ones when None), multiplied by
            ``class_weight``'s; weighs the batch correction:
            :math:`a \\leftarrow a + \\eta_k \\sum_{a^t y_i \\le 0} s_i y_i` (``margin=0`` only).
            Integer weights give exactly the weights of repeated rows,
            weight 0 those of a removed row; a common factor of all weights
            scales ``coef_`` and keeps every prediction (:ref:`weights`).
        {start}

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        elsewhere = self._fit_on_backend(X, y, sample_weight=sample_weight, coef_init=coef_init,
                                         intercept_init=intercept_init)
        if elsewhere is not None:
            return elsewhere
        X, y = self._validate_fit(X, y)
        fit = FitContext(initial_weights=initial_weights(self, X, coef_init, intercept_init))
        return self._fit_weighted(X, y, sample_weight, fit=fit)

    def _solve_on_designs(self, data, fit, **ignored):
        problems = data.problems(powers=(1,))  # weighted: the rows s_i y_i (x_i, 1)
        if problems[0].weights is not None:
            weighted_rule_labels(self, 1.0, problems[0].weights)  # refuses a margin with weights
        return [batch_perceptron_on_design(problem.design, learning_rate=self.learning_rate, schedule=self.schedule,
                                           margin=self.margin, max_iter=self.max_iter,
                                           initial_weights=fit.initial_weights,
                                           trace=data.recorder(self.record_history))
                for problem in problems], problems

    def _solve_binary(self, X, y, fit, sample_weight=None):
        weighted_rule_labels(self, y, sample_weight)  # refuses a margin
        return batch_perceptron(weighted_signed_design(X, y, sample_weight, 1), learning_rate=self.learning_rate,
                                schedule=self.schedule, margin=self.margin, max_iter=self.max_iter,
                                initial_weights=fit.initial_weights, trace=make_recorder(self.record_history))


class KernelPerceptronClassifier(StreamMixin, BaseKernelSeparator):
    """Kernel (dual) perceptron: :math:`f(x) = \\sum_j \\alpha_j y_j k(x_j, x) + b`, :math:`\\alpha` the correction counts.

    The training decision values are updated with one kernel column per
    correction (columns come from a least-recently-used cache of
    ``cache_size`` MB, :class:`linsep.kernels.KernelColumnCache`, shared by
    the one-vs-rest problems); the :math:`N \\times N` Gram matrix is never formed
    (except that ``kernel="precomputed"`` receives it).  With
    ``kernel="linear"`` the model equals :class:`PerceptronClassifier`'s on
    the same sample order.

    ``partial_fit`` makes one pass over each chunk of a stream
    (:ref:`streaming`), starting from the decision values of the model
    so far.  The dual model grows with the stream: the samples of a chunk
    that were corrected at least once (:math:`\\alpha > 0` for some class) are
    appended to ``X_fit_`` with their counts, the others are dropped (their
    coefficient is 0).  Memory therefore grows with the number of corrected
    samples (at most every sample seen; a sample seen again and corrected
    again is stored again), and each chunk costs one kernel block
    of (chunk size) × (support size) to start from.  ``gamma`` is resolved on the first
    chunk and kept.  ``kernel="precomputed"`` has no ``partial_fit``.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        scikit-learn pairwise kernels with SVC's parameter names; a callable
        ``k(A, B) -> (len(A), len(B))`` array is used as it is.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient of rbf/poly/sigmoid, as in SVC (``"scale"``:
        :math:`1 / (d \\operatorname{Var}(X))`, ``"auto"``: :math:`1/d`).
    degree : int, default=3
    coef0 : float, default=0.0
    max_iter : int, default=100
        Largest number of passes per binary problem.
    fit_intercept : bool, default=True
        Add the bias :math:`b = \\sum_j \\alpha_j y_j` (the perceptron's augmented 1).
    shuffle : bool, default=True
    random_state : int, RandomState or None, default=0
        Seed of the shuffling (the same order on every run by default).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``.
    cache_size : float, default=200
        Memory for cached kernel columns, in MB.
    record_history : bool, int or "updates", default=False
        Record a teaching trace in ``history_`` (``dual_coef``, ``intercept``
        and the last corrected sample after each pass, :math:`k = 0` to ``n_iter_``;
        ``True``: every iteration, an int ``n``: every ``n``-th;
        ``"updates"``: a row after every correction; format and memory bound
        in :ref:`trace-format`).
    {pos_label}
        ``partial_fit`` too: each chunk's pass runs with it as :math:`+1`.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
        :math:`\\alpha_j y_j`.
    intercept_ : ndarray of shape (1,) or (K,)
    alpha_ : ndarray of shape (N,) or (K, N)
        Correction counts :math:`\\alpha_j`.
    X_fit_ : ndarray or sparse matrix
        The training samples (the Gram matrix for ``"precomputed"``); after
        ``partial_fit``, the corrected samples of the stream.
    n_kernel_columns_ : int
        Kernel columns computed during the fit (cache misses).
    classes_, status_, n_iter_, history_
        As in :class:`PerceptronClassifier`.

    See Also
    --------
    PerceptronClassifier : The primal rule (equal with ``kernel="linear"``).
    KernelSchlesingerKozinecClassifier : A maximal-margin hyperplane in the kernel space.
    linsep.solvers.perceptron.kernel_perceptron : The solver, with the equations.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep import KernelPerceptronClassifier
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([0, 0, 1, 1])                      # XOR: no line separates it
    >>> clf = KernelPerceptronClassifier(kernel="rbf", gamma=2.0, random_state=0).fit(X, y)
    >>> clf.status_, clf.predict(X)
    ('separable', array([0, 0, 1, 1]))
    """

    _device_alternative = "KernelHoKashyapClassifier"  # the kernel perceptron's per-point corrections are sequential; kernel HK fits on the device
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "cache_size": [Interval(Real, 0, None, closed="left")],
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "pos_label": POS_LABEL_CONSTRAINT,
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, max_iter=100, fit_intercept=True,
                 shuffle=True, random_state=0, cache_size=200, record_history=False, class_weight=None,
                 pos_label=None):
        self.pos_label = pos_label
        self.class_weight = class_weight
        self.record_history = record_history
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state
        self.cache_size = cache_size

    def _prepare_fit(self, X, fit):
        # one column cache for all one-vs-rest problems: they correct on the same samples
        cache = KernelColumnCache(X, kernel=self.kernel, cache_size=self.cache_size, **self._kernel_params())
        return cache, check_random_state(self.random_state)

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
            Non-negative :math:`s_i` (all ones when None), multiplied by
            ``class_weight``'s; weighs each correction:
            :math:`f \\leftarrow f + s_i y_i \\bigl(k(x_i, \\cdot) + 1\\bigr)`, so ``dual_coef_`` is
            :math:`\\alpha_i s_i y_i` (``alpha_`` still counts corrections).  Rows of
            weight 0 are left out (refused for ``"precomputed"``: remove them
            from the Gram matrix); a common factor of all weights scales
            ``dual_coef_`` and keeps every prediction; integer weights are
            not repeated rows (sequential rule).  See :ref:`weights`.

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        X, y = self._validate_fit(X, y)
        return self._fit_kernel_weighted(X, y, sample_weight)

    def _solve_binary(self, X, y, fit, sample_weight=None):
        cache, rng = fit.state
        y = scaled_labels(y, sample_weight, 1)
        return kernel_perceptron(cache.column, y, max_iter=self.max_iter,
                                 fit_intercept=self.fit_intercept, shuffle=self.shuffle, rng=rng,
                                 trace=make_recorder(self.record_history))

    def _store_outputs(self, results, fit):
        alphas = [r.extra["alpha"] for r in results]
        self.alpha_ = alphas[0] if len(results) == 1 else np.vstack(alphas)
        self.n_kernel_columns_ = fit.state[0].n_computed

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """One pass of the dual rule over the chunk ``X, y``; the model keeps the corrected samples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d)
            The chunk's samples.
        y : array-like of shape (n,)
            Their labels.
        classes : array-like, optional
            All the labels of the stream; required on the first call.

        Returns
        -------
        self : object
            The updated estimator; ``status_`` speaks of this chunk only.

        Notes
        -----
        ``max_iter`` is not used; ``status_`` speaks of this chunk only
        (:ref:`streaming`).
        """
        if self.kernel == "precomputed":
            raise ValueError("partial_fit needs the samples: kernel='precomputed' cannot grow a Gram matrix "
                             "chunk by chunk; use fit")
        with self._chunk_or_nothing():  # a refused chunk leaves the model as it was
            return self._partial_fit_chunk(X, y, classes)

    def _partial_fit_chunk(self, X, y, classes):
        X, targets, first, _, weights, _ = self._validate_chunk(X, y, classes, 1)  # no schedule: no epoch
        if weights is not None:  # corrections s_i y_i (k(x_i, ·) + 1), as fit's: dual_coef_ is α_i s_i y_i
            targets = scaled_labels(targets, weights[:, None], 1)
        n_problems = targets.shape[1]
        if first:
            self._gamma = resolve_gamma(self.gamma, X)
            self.X_fit_ = X[:0]
            alpha = np.zeros((n_problems, 0), dtype=np.int64)
            dual, intercept, n_columns = np.zeros((n_problems, 0)), np.zeros(n_problems), 0
        else:
            alpha, dual = np.atleast_2d(self.alpha_), self.dual_coef_
            intercept, n_columns = self.intercept_, self.n_kernel_columns_
        # decision values of the model so far on the chunk: one kernel block chunk × support
        f0 = np.zeros((X.shape[0], n_problems)) + intercept
        if dual.shape[1]:
            f0 += np.asarray(self._kernel_matrix(X, self.X_fit_) @ dual.T)
        cache = KernelColumnCache(X, kernel=self.kernel, cache_size=self.cache_size, **self._kernel_params())
        rng = check_random_state(self.random_state)
        sign = self._positive_sign()  # pos_label = classes_[0]: the pass runs (and traces) with it as +1
        results = [kernel_perceptron(cache.column, sign * targets[:, c], max_iter=1, fit_intercept=self.fit_intercept,
                                     shuffle=self.shuffle, rng=rng, initial_decision=sign * f0[:, c],
                                     trace=make_recorder(self.record_history))
                   for c in range(n_problems)]
        passes = self._passes_so_far(first, n_problems)
        self._finish_chunk(results, passes)
        new_alpha = np.vstack([r.extra["alpha"] for r in results])
        new_dual = sign * np.vstack([r.weights for r in results])  # stored in scikit-learn's sign
        kept = np.flatnonzero(new_alpha.any(axis=0))
        self.X_fit_ = _append_rows(self.X_fit_, X[kept])
        self.alpha_ = np.hstack([alpha, new_alpha[:, kept]])
        if n_problems == 1:
            self.alpha_ = self.alpha_[0]
        self.dual_coef_ = np.hstack([dual, new_dual[:, kept]])
        self.intercept_ = intercept + sign * np.array([r.intercept for r in results])
        self.n_kernel_columns_ = n_columns + cache.n_computed
        return self


def _append_rows(A, rows):
    """``A`` with ``rows`` appended, in ``A``'s kind (sparse stays sparse; the kept rows follow ``A``)."""
    if sp.issparse(A):
        return sp.vstack([A, sp.csr_matrix(rows)], format="csr")
    return np.vstack([A, rows.toarray() if sp.issparse(rows) else rows])


def fill_shared_docs(*classes):
    """Put the shared entries (``pos_label``, ``coef_init`` / ``intercept_init``) into the docstrings (none under ``-OO``)."""
    for cls in classes:
        if cls.__doc__ is not None:
            cls.__doc__ = cls.__doc__.replace("    {pos_label}", "    " + POS_LABEL_DOC)
        if cls.fit.__doc__ is not None:
            cls.fit.__doc__ = cls.fit.__doc__.replace("        {start}", "        " + _START_DOC)


fill_shared_docs(PerceptronClassifier, BatchPerceptronClassifier, KernelPerceptronClassifier)
