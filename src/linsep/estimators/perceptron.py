"""scikit-learn estimators for the perceptron rules.

=========================  ===================================  ========================
Rule                       Estimator                            ``make_classifier`` name
=========================  ===================================  ========================
single-sample perceptron   :class:`PerceptronClassifier`        ``"perceptron"``
batch perceptron           :class:`BatchPerceptronClassifier`   ``"batch_perceptron"``
kernel (dual) perceptron   :class:`KernelPerceptronClassifier`  ``"kernel_perceptron"``
=========================  ===================================  ========================

More than two classes are fitted one-vs-rest.  The equations are in
:mod:`linsep.solvers.perceptron`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import KERNEL_CONSTRAINTS, BaseKernelSeparator, BaseLinearSeparator
from .._design import sign_normalized
from ..kernels import KernelColumnCache
from ..solvers.perceptron import SCHEDULES, batch_perceptron, kernel_perceptron, perceptron
from .._trace import RECORD_HISTORY_CONSTRAINT, make_recorder

_RULE_PARAMS = {
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "schedule": [StrOptions(set(SCHEDULES))],
    "margin": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "record_history": RECORD_HISTORY_CONSTRAINT,
}

_ATTRIBUTES = """
    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray
    status_ : str or ndarray of str
        ``"separable"`` when a pass made no correction (every training
        sample then has ``y_i (w·x_i + w_0) > margin``), else ``"max_iter"``
        with a ConvergenceWarning.
    n_iter_ : int or ndarray
        Passes over the data (per class for more than two classes).
    history_ : dict or list of dict
        ``mistakes``: corrections made in each pass.
"""


class PerceptronClassifier(BaseLinearSeparator):
    """Single-sample perceptron, fixed or variable increment, with optional margin.

    ``a ← a + η_k y_i`` whenever ``aᵗ y_i <= margin``, for ``y_i = y_i (x_i, 1)``
    visited one at a time.  Dense input only (a compiled sequential loop).

    Parameters
    ----------
    learning_rate : float, default=1.0
        ``η_1``.  Irrelevant to the classifier when ``margin = 0``.
    schedule : {"constant", "inverse"}, default="constant"
        Fixed increment ``η_k = η_1`` or variable increment ``η_k = η_1/k``
        (``k`` = pass number).
    margin : float, default=0.0
        ``b >= 0``: correct while ``aᵗ y_i <= b``.
    max_iter : int, default=1000
        Largest number of passes per binary problem.
    shuffle : bool, default=True
        New random order of the samples at each pass.
    random_state : int, RandomState or None, default=None
    record_history : bool or int, default=False
        Record a teaching trace in ``history_`` (``a(k)`` after each pass and the last sample it corrected, ``k = 0 … n_iter_``; a traced fit makes its passes in plain Python; ``True``: every
        iteration, an int ``n``: every ``n``-th; format and memory bound in
        :mod:`linsep._trace`).
    """ + _ATTRIBUTES

    _accept_sparse = False
    _parameter_constraints = {**_RULE_PARAMS, "shuffle": ["boolean"], "random_state": ["random_state"]}

    def __init__(self, *, learning_rate=1.0, schedule="constant", margin=0.0, max_iter=1000, shuffle=True,
                 random_state=None, record_history=False):
        self.record_history = record_history
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.margin = margin
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on dense ``X`` (N, d) and labels ``y``."""
        self._rng = check_random_state(self.random_state)
        try:
            return super().fit(X, y)
        finally:
            del self._rng

    def _solve_binary(self, X, y):
        return perceptron(X, y, learning_rate=self.learning_rate, schedule=self.schedule, margin=self.margin,
                          max_iter=self.max_iter, shuffle=self.shuffle, rng=self._rng,
                          trace=make_recorder(self.record_history))


class BatchPerceptronClassifier(BaseLinearSeparator):
    """Batch perceptron: ``a ← a + η_k Σ_{aᵗy_i <= margin} y_i``, ``η_k = η_1/k``.

    Parameters
    ----------
    learning_rate : float, default=1.0
        ``η_1``.
    schedule : {"inverse", "constant"}, default="inverse"
        ``η_k = η_1/k`` (the lecture) or constant.  From ``a_0 = 0`` the first
        step is the sum of all samples and the later ones shrink like
        ``1/k``, so under ``1/k`` the bias and the direction may need very
        many iterations to catch up (e.g. > 10⁵ on three well-separated
        blobs where ``"constant"`` separates in about 50): prefer
        ``"constant"`` on separable data, ``"inverse"`` to damp the
        oscillation on non-separable data.
    margin : float, default=0.0
        ``b >= 0``.
    max_iter : int, default=1000
        Largest number of iterations (one product ``Y a`` each).
    record_history : bool or int, default=False
        Record a teaching trace in ``history_`` (``a(k)`` after each iteration, ``k = 0 … n_iter_``; ``True``: every
        iteration, an int ``n``: every ``n``-th; format and memory bound in
        :mod:`linsep._trace`).
    """ + _ATTRIBUTES

    _parameter_constraints = dict(_RULE_PARAMS)

    def __init__(self, *, learning_rate=1.0, schedule="inverse", margin=0.0, max_iter=1000, record_history=False):
        self.record_history = record_history
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.margin = margin
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on ``X`` (N, d), dense or sparse, and labels ``y``."""
        return super().fit(X, y)

    def _solve_binary(self, X, y):
        return batch_perceptron(sign_normalized(X, y), learning_rate=self.learning_rate,
                                schedule=self.schedule, margin=self.margin, max_iter=self.max_iter,
                                trace=make_recorder(self.record_history))


class KernelPerceptronClassifier(BaseKernelSeparator):
    """Kernel (dual) perceptron: ``f(x) = Σ_j α_j y_j k(x_j, x) + b``, ``α`` = correction counts.

    The training decision values are updated with one kernel column per
    correction (columns come from a least-recently-used cache of
    ``cache_size`` MB, :class:`linsep.kernels.KernelColumnCache`, shared by
    the one-vs-rest problems); the ``N × N`` Gram matrix is never formed
    (except that ``kernel="precomputed"`` receives it).  With
    ``kernel="linear"`` the model equals :class:`PerceptronClassifier`'s on
    the same sample order.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        scikit-learn pairwise kernels with SVC's parameter names; a callable
        ``k(A, B) -> (len(A), len(B))`` array is used as it is.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient of rbf/poly/sigmoid, as in SVC (``"scale"``:
        ``1/(d·Var(X))``, ``"auto"``: ``1/d``).
    degree : int, default=3
    coef0 : float, default=0.0
    max_iter : int, default=100
        Largest number of passes per binary problem.
    fit_intercept : bool, default=True
        Add the bias ``b = Σ_j α_j y_j`` (the perceptron's augmented 1).
    shuffle : bool, default=True
    random_state : int, RandomState or None, default=None
    cache_size : float, default=200
        Memory for cached kernel columns, in MB.
    record_history : bool or int, default=False
        Record a teaching trace in ``history_`` (``dual_coef``, ``intercept`` and the last corrected sample after each pass, ``k = 0 … n_iter_``; ``True``: every
        iteration, an int ``n``: every ``n``-th; format and memory bound in
        :mod:`linsep._trace`).

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
        ``α_j y_j``.
    intercept_ : ndarray of shape (1,) or (K,)
    alpha_ : ndarray of shape (N,) or (K, N)
        Correction counts ``α_j``.
    X_fit_ : ndarray or sparse matrix
        The training samples (the Gram matrix for ``"precomputed"``).
    n_kernel_columns_ : int
        Kernel columns computed during the fit (cache misses).
    classes_, status_, n_iter_, history_
        As in :class:`PerceptronClassifier`.
    """

    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "cache_size": [Interval(Real, 0, None, closed="left")],
        "record_history": RECORD_HISTORY_CONSTRAINT,
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, max_iter=100, fit_intercept=True,
                 shuffle=True, random_state=None, cache_size=200, record_history=False):
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

    def _prepare_fit(self, X):
        # one column cache for all one-vs-rest problems: they correct on the same samples
        cache = KernelColumnCache(X, kernel=self.kernel, cache_size=self.cache_size, **self._kernel_params())
        return cache, check_random_state(self.random_state)

    def _solve_binary(self, X, y):
        cache, rng = self._fit_state
        return kernel_perceptron(cache.column, y, max_iter=self.max_iter,
                                 fit_intercept=self.fit_intercept, shuffle=self.shuffle, rng=rng,
                                 trace=make_recorder(self.record_history))

    def _store(self, results):
        super()._store(results)
        alphas = [r.extra["alpha"] for r in results]
        self.alpha_ = alphas[0] if len(results) == 1 else np.vstack(alphas)
        self.n_kernel_columns_ = self._fit_state[0].n_computed
