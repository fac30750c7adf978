"""Perceptron rules: single-sample, batch, and the kernel (dual) perceptron.

All three minimise the perceptron criterion of the lecture [1]_ (Duda, Hart &
Stork §5.5 [2]_) over the augmented, sign-normalised samples (bias last;
the label :math:`\\pm 1` times :math:`(x_i, 1)`, written :math:`y_i` as in
the lecture):

.. math::

    J_p(a) = \\sum_{y \\in \\mathcal{Y}_M} (b - a^t y), \\qquad
    \\mathcal{Y}_M = \\{ y_i : a^t y_i \\le b \\},

with margin :math:`b \\ge 0` (:math:`b = 0` is the plain perceptron).

* Single-sample rule (:func:`~linsep.solvers.perceptron.perceptron`): visit
  the samples one at a time and correct on every mistake,

  .. math::

      a \\leftarrow a + \\eta_k \\, y_i \\qquad \\text{if } a^t y_i \\le b .

* Batch rule (:func:`~linsep.solvers.perceptron.batch_perceptron`): gradient
  step over all mistakes of the current iterate,

  .. math::

      a \\leftarrow a + \\eta_k \\sum_{y \\in \\mathcal{Y}_M} y .

* Kernel perceptron (:func:`~linsep.solvers.perceptron.kernel_perceptron`,
  the seed article [3]_): the single-sample rule written in the dual.  With
  :math:`a = \\sum_j \\alpha_j y_j` (:math:`\\alpha_j` counts the corrections
  made at sample :math:`j`), the test :math:`a^t y_i \\le 0` becomes
  :math:`y_i f(x_i) \\le 0` with

  .. math::

      f(x) = \\sum_j \\alpha_j y_j \\bigl( k(x_j, x) + 1 \\bigr)

  (the :math:`+1` is the bias coordinate), so only kernel values are needed.

Learning rate: :math:`\\eta_k = \\eta_1` (fixed increment) or
:math:`\\eta_k = \\eta_1 / k` (variable increment, the lecture's choice to
force convergence on non-separable data).  :math:`k` counts passes over the
data (epochs); for the batch rule a pass is one iteration, so this is the
lecture's :math:`k`.  For the
single-sample rule the rate stays fixed within a pass — decreasing it after
every correction would freeze the weights after a few thousand samples.
Under :math:`1/k` the weights can grow only like :math:`\\log k` after the
first step (which, from :math:`a = 0`, is the sum of all samples), so on separable data the
rule still converges but may need exponentially many iterations; fixed
increment is the practical choice there (e.g. three separated blobs: about
50 batch iterations fixed, none within :math:`2 \\cdot 10^5` under :math:`1/k`).

Verdict: ``separable`` as soon as a pass makes no correction (then
:math:`a^t y_i > b \\ge 0` for every sample), else ``max_iter`` after ``max_iter``
passes (a final check of the last weights may still find them separating).
Non-separable data never end otherwise: the perceptron has no convergence
test besides a clean pass.

References
----------
.. [1] O. Veksler, CS434b/641a Pattern Recognition, Lecture 10 (linear
   discriminant functions), the seed lecture of linsep.
.. [2] R. O. Duda, P. E. Hart and D. G. Stork, Pattern Classification, 2nd
   ed., Wiley 2001, §5.5.
.. [3] Y. Freund and R. E. Schapire, "Large margin classification using the
   perceptron algorithm", Machine Learning 37(3), 1999 (the kernel
   perceptron; M. A. Aizerman et al. 1964 for the potential-function form).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.signed_design import signed_scores
from linsep._core.certificates import sample_errors, signed_errors
from linsep._core.plan import dtype_plan, working_dtype
from linsep.solvers.perceptron.loops import add_column_and_scan, next_mistake, perceptron_epoch, perceptron_epoch_csr
from linsep._core.result import MAX_ITER, SEPARABLE, SolveResult

SCHEDULES = ("constant", "inverse")


def step_size(learning_rate, schedule, k):
    # always a Python float: an int here would compile a second numba specialisation
    return float(learning_rate) / k if schedule == "inverse" else float(learning_rate)


def sequential_data(X):
    """``X`` as the compiled epochs read it: a C-contiguous array, or a CSR matrix, of float32 or float64.

    float32 data stay float32 (the epochs read them as they are and keep the
    weights and every sum in float64); other types become float64.  Sparse
    input stays sparse (CSC and COO become CSR: a change of format, never a
    dense copy); a C-ordered array or a CSR matrix of either type is used as
    it is.
    """
    dtype = working_dtype(X)
    if sp.issparse(X):
        return X.tocsr().astype(dtype, copy=False)
    return np.ascontiguousarray(X, dtype=dtype)


def row_entries(X, i):
    """Row ``i`` of dense or CSR ``X`` as ``(columns, values)``."""
    if sp.issparse(X):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        return X.indices[lo:hi], X.data[lo:hi]
    return slice(None), X[i]


def _perceptron_pass(X, y, order, w, eta, margin):
    if sp.issparse(X):
        return perceptron_epoch_csr(X.indptr, X.indices, X.data, y, order, w, eta, margin)
    return perceptron_epoch(X, y, order, w, eta, margin)


def visit_orders(n_samples, shuffle, rng):
    """Yield the visiting order of each pass (a fresh permutation per pass when shuffling)."""
    fixed = np.arange(n_samples, dtype=np.int64)
    while True:
        yield rng.permutation(n_samples).astype(np.int64) if shuffle else fixed


def perceptron(X, y, *, learning_rate=1.0, schedule="constant", margin=0.0, max_iter=1000,
               shuffle=True, rng=None, initial_weights=None, first_pass=1, trace=None):
    """Single-sample perceptron: :math:`a \\leftarrow a + \\eta_k y_i` whenever :math:`a^t y_i \\le b`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Samples, read row by row by the compiled loop (never copied into
        ``Y``); sparse input is read as CSR (``sequential_data``), never
        densified.
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    learning_rate : float
        :math:`\\eta_1 > 0`.  With ``margin = 0`` and :math:`a_0 = 0` its value only
        scales :math:`a`, so it does not change the classifier.
    schedule : {"constant", "inverse"}
        Fixed increment :math:`\\eta_k = \\eta_1` or variable increment
        :math:`\\eta_k = \\eta_1 / k` (:math:`k` = pass number).
    margin : float
        :math:`b \\ge 0`: a sample counts as a mistake while :math:`a^t y_i \\le b`.
    max_iter : int
        Largest number of passes.
    shuffle : bool
        Visit the samples in a new random order at each pass.
    rng : numpy.random.RandomState or None
        Source of the permutations (needed when ``shuffle``).
    initial_weights : ndarray of shape (d + 1,) or None
        :math:`a_0` (bias last); zeros by default.
    first_pass : int
        Schedule position of the first pass: pass :math:`k` of this call uses
        :math:`\\eta_{\\texttt{first_pass} + k - 1}` (1 for a fresh fit; a later value
        continues a schedule, as ``partial_fit`` does).
    trace : trace recorder or None
        Record :math:`a` after each pass and the last sample it corrected
        (rows :math:`k = 0, \\dots, \\texttt{n_iter}`); a traced run makes its passes in plain
        Python (``_traced_epoch``) to know the corrected samples.

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data),
        ``n_iter`` = passes made, ``status``
        (``separable`` / ``max_iter``) and ``history["mistakes"]``, the
        number of corrections per pass.

    See Also
    --------
    batch_perceptron : One step over all mistakes.
    kernel_perceptron : The dual rule.
    linsep.PerceptronClassifier : The estimator over this solver (with ``partial_fit``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> from linsep.solvers.perceptron.solver import perceptron
    >>> result = perceptron(X, y, rng=np.random.default_rng(0))
    >>> result.status, bool((y * (np.c_[X, np.ones(len(X))] @ result.weights) > 0).all())
    ('separable', True)
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    X = sequential_data(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_samples, n_features = X.shape
    w = np.zeros(n_features + 1) if initial_weights is None else np.array(initial_weights, dtype=np.float64)
    orders = visit_orders(n_samples, shuffle, rng)
    mistakes, errors = [], []  # errors: training errors after each pass, traced runs only
    status = MAX_ITER
    per_update = trace is not None and trace.per_update
    if trace is not None:
        trace.record(0, weights=w, sample=-1, **({"pass": 0} if per_update else {}))
    for k in range(1, max_iter + 1):
        eta = step_size(learning_rate, schedule, first_pass + k - 1)
        if trace is None:
            mistakes.append(_perceptron_pass(X, y, next(orders), w, eta, float(margin)))
        else:
            count, last = _traced_epoch(X, y, next(orders), w, eta, float(margin), trace if per_update else None, k)
            mistakes.append(count)
            errors.append(sample_errors(X, y, w))
            if not per_update:
                trace.record(k, final=count == 0 or k == max_iter, weights=w, sample=last)
        if mistakes[-1] == 0:
            status = SEPARABLE
            break
    if status == MAX_ITER and np.min(signed_scores(X, y, w)) > margin:
        status = SEPARABLE
    history = {"mistakes": np.asarray(mistakes, dtype=np.int64)}
    if trace is not None:
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    dtype = working_dtype(X)
    return SolveResult(weights=w.astype(dtype, copy=False), n_iter=len(mistakes), status=status,
                       history=history, extra={"plan": dtype_plan(dtype)})


def _traced_epoch(X, y, order, w, eta, margin, updates=None, k=0):
    """``linsep.solvers.ho_kashyap.loops.perceptron_epoch`` in plain Python; also returns the last corrected sample (or −1).

    ``updates`` (a per-update ``TraceRecorder``) receives
    a row after each correction, with the pass number ``k``.
    """
    mistakes, last = 0, -1
    coef = w[:-1]  # a view: updated in place
    for i in order:
        columns, values = row_entries(X, i)
        if y[i] * (w[-1] + float(values @ coef[columns])) <= margin:
            np.add.at(coef, columns, eta * y[i] * values)
            w[-1] += eta * y[i]
            mistakes, last = mistakes + 1, int(i)
            if updates is not None:
                updates.record_update(weights=w, sample=last, **{"pass": k})
    return mistakes, last


def batch_perceptron(Y, *, learning_rate=1.0, schedule="inverse", margin=0.0, max_iter=1000,
                     initial_weights=None, trace=None):
    """Batch perceptron: :math:`a \\leftarrow a + \\eta_k \\sum_{a^t y_i \\le b} y_i` with :math:`\\eta_k = \\eta_1 / k`.

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (N, p)
        Sign-normalised augmented samples, bias column last
        (``linsep._core.signed_design.sign_normalized``).
    learning_rate, schedule, margin, max_iter, initial_weights
        As in :func:`perceptron`; the default schedule is the lecture's
        :math:`\\eta_k = \\eta_1 / k`.
    trace : trace recorder or None
        Record :math:`a` after each iteration (rows
        :math:`k = 0, \\dots, \\texttt{n_iter}`; the last iteration, which finds
        no mistake, leaves :math:`a` as it was).

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data),
        ``n_iter`` = iterations (one product
        :math:`Y a` each), ``status`` and ``history["mistakes"]`` (the size of
        :math:`\\mathcal{Y}_M` at each iterate).

    See Also
    --------
    perceptron : The single-sample rule.
    linsep.BatchPerceptronClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> Y = y[:, None] * np.c_[X, np.ones(len(X))]          # Y = diag(y)[X, 1], bias last
    >>> from linsep.solvers.perceptron.solver import batch_perceptron
    >>> result = batch_perceptron(Y, schedule="constant")
    >>> result.status, bool((Y @ result.weights > 0).all())
    ('separable', True)
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    a = np.zeros(Y.shape[1]) if initial_weights is None else np.array(initial_weights, dtype=np.float64)
    mistakes, errors = [], []  # errors[k]: training errors of row k's weights, traced runs only
    status = MAX_ITER
    if trace is not None:
        trace.record(0, weights=a)
    for k in range(1, max_iter + 1):
        scores = np.asarray(Y @ a)
        wrong = scores <= margin
        mistakes.append(int(np.count_nonzero(wrong)))
        if trace is not None:
            errors.append(signed_errors(Y, a, scores))
        if mistakes[-1] == 0:
            status = SEPARABLE
            break
        # Σ over the mistakes = Yᵀ·1_M: one sparse-friendly product, no row gather.
        a = a + step_size(learning_rate, schedule, k) * np.asarray(Y.T @ wrong.astype(np.float64)).ravel()
        if trace is not None and trace.wants(k):
            trace.record(k, weights=a)
    if status == MAX_ITER and np.asarray(Y @ a).min() > margin:
        status = SEPARABLE
    history = {"mistakes": np.asarray(mistakes, dtype=np.int64)}
    if trace is not None:
        trace.record(len(mistakes), final=True, weights=a)
        errors.append(signed_errors(Y, a))
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    dtype = working_dtype(Y)  # a sparse Y is formed in float64 (sign_normalized): float64 weights
    return SolveResult(weights=a.astype(dtype, copy=False), n_iter=len(mistakes), status=status,
                       history=history, extra={"plan": dtype_plan(dtype)})


def kernel_perceptron(column, y, *, max_iter=100, fit_intercept=True, shuffle=True, rng=None,
                      initial_decision=None, trace=None):
    """Dual (kernel) perceptron with correction counts :math:`\\alpha`.

    For each pass and each sample :math:`i` (in the pass's order): if
    :math:`y_i f(x_i) \\le 0` then :math:`\\alpha_i \\leftarrow \\alpha_i + 1`
    and, for every training point :math:`j`,
    :math:`f(x_j) \\leftarrow f(x_j) + y_i \\bigl( k(x_j, x_i) + c \\bigr)` with
    :math:`c = 1` for the intercept (:math:`c = 0` without).  The decision
    values :math:`f` on the training set are kept current this way — one
    kernel column per correction, never a recomputation of
    :math:`\\sum_j \\alpha_j y_j k(x_j, x_i)` — so a pass costs :math:`O(N)`
    comparisons plus :math:`O(N)` per correction.

    With the linear kernel :math:`k(x, x') = x \\cdot x'` this is exactly the
    single-sample perceptron (:math:`\\eta = 1`, :math:`b = 0`) started from
    :math:`a = 0` with :math:`a = \\sum_j \\alpha_j y_j (x_j, 1)`.

    Parameters
    ----------
    column : callable ``i -> ndarray of shape (N,)``
        Returns :math:`k(x_j, x_i)` for all training points :math:`j` (the caller
        may cache columns).
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    max_iter : int
        Largest number of passes.
    fit_intercept : bool
        Include the bias coordinate (``+1`` in every kernel value).
    shuffle, rng
        As in :func:`perceptron`; the same ``rng`` state gives the same
        orders as :func:`perceptron`.
    initial_decision : ndarray of shape (N,) or None
        :math:`f(x_j)` of a model fitted before (on other samples), to continue
        from; zeros by default.  :math:`\\alpha` then counts only the corrections made
        here, and ``intercept`` only their share of the bias.
    trace : trace recorder or None
        Record ``dual_coef`` :math:`\\alpha y`, ``intercept`` and the last corrected
        sample after each pass (rows :math:`k = 0, \\dots, \\texttt{n_iter}`).

    Returns
    -------
    SolveResult
        ``weights`` = :math:`\\alpha_j y_j` (dual coefficients), ``intercept`` =
        :math:`\\sum_j \\alpha_j y_j` (0 without intercept), ``n_iter`` = passes,
        ``status``, ``history["mistakes"]`` and ``extra["alpha"]`` (the
        integer counts).

    See Also
    --------
    perceptron : The primal rule.
    linsep.KernelPerceptronClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import KernelColumnCache
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([-1, -1, 1, 1])                         # XOR
    >>> cache = KernelColumnCache(X, kernel="rbf", gamma=2.0)
    >>> from linsep.solvers.perceptron.solver import kernel_perceptron
    >>> result = kernel_perceptron(cache.column, y, rng=np.random.default_rng(0))
    >>> result.status, result.weights                        # α_i y_i: every sample corrected once
    ('separable', array([-1., -1.,  1.,  1.]))
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_samples = y.shape[0]
    f = np.zeros(n_samples) if initial_decision is None else np.array(initial_decision, dtype=np.float64)
    alpha = np.zeros(n_samples, dtype=np.int64)
    bias = 1.0 if fit_intercept else 0.0
    orders = visit_orders(n_samples, shuffle, rng)
    mistakes, errors = [], []  # errors: training errors after each pass, traced runs only
    status = MAX_ITER

    per_update = trace is not None and trace.per_update

    def record(k, last, final=False):
        if trace is not None and not per_update and (final or trace.wants(k)):
            dual = alpha * y
            trace.record(k, final=final, dual_coef=dual, intercept=dual.sum() * bias, sample=last)

    if per_update:
        trace.record(0, dual_coef=alpha * y, intercept=0.0, sample=-1, **{"pass": 0})
    record(0, -1)
    for k in range(1, max_iter + 1):
        order = next(orders)
        count, last = 0, -1
        t = next_mistake(f, y, order, 0)
        while t >= 0:
            i = last = order[t]
            alpha[i] += 1
            count += 1
            col = np.ascontiguousarray(column(i), dtype=np.float64).ravel()
            t = add_column_and_scan(f, y, order, t, col, y[i], bias)
            if per_update:
                dual = alpha * y
                trace.record_update(dual_coef=dual, intercept=dual.sum() * bias, sample=int(i), **{"pass": k})
        mistakes.append(count)
        if trace is not None:
            errors.append(int(np.count_nonzero(y * f <= 0)))
        record(k, last, final=count == 0 or k == max_iter)
        if count == 0:
            status = SEPARABLE
            break
    if status == MAX_ITER and np.min(y * f) > 0:
        status = SEPARABLE
    dual = alpha * y
    history = {"mistakes": np.asarray(mistakes, dtype=np.int64)}
    if trace is not None:
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    return SolveResult(weights=dual, n_iter=len(mistakes), status=status,
                       intercept=float(dual.sum()) if fit_intercept else 0.0,
                       history=history,
                       extra={"alpha": alpha})
