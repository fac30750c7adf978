"""Minimum squared error: the pseudo-inverse solution, Widrow–Hoff and LMS.

The MSE procedure of the lecture [1]_ (Duda, Hart & Stork §5.8 [2]_) replaces
the inequalities ``Y a > 0`` by the equations ``Y a = b`` for a chosen
positive margin vector ``b`` and solves them in the least-squares sense:

.. math::

    J_s(a) = \\lVert Y a - b \\rVert^2 = \\sum_i (a^t y_i - b_i)^2, \\qquad
    \\nabla J_s = 2 Y^t (Y a - b), \\qquad
    a = Y^{+} b ,

with ``Y = diag(y)[X, 1]`` (bias **last** here; the lecture puts it first).
``b = 1`` is the usual choice; only the *relative* sizes of the ``b_i``
matter (``β b`` gives ``β a``).  ``a`` separates the data when ``Y a > 0``,
which least squares does not guarantee: the lecture's second example fails
on one point, and raising that point's ``b_i`` to 10 fixes it.

Three ways to the same minimiser:

* :func:`mse` — ``a = Y⁺ b`` from one factorisation
  (``linsep._core.linalg.LeastSquaresFactor``: Cholesky of the equilibrated
  Gram matrix, SVD for rank-deficient ``Y``), never an explicit inverse;
  optional ridge ``C‖w‖²`` on ``w`` only.  Wide ``Y`` (sparse text data,
  ``d + 1`` above 2000 columns) is solved matrix-free by conjugate gradients
  (``linsep._core.linalg.least_squares_solver``), to the same minimum-norm
  solution up to a relative normal-equations residual of ``1e-10``.
* :func:`widrow_hoff` — batch gradient descent
  ``a_{k+1} = a_k − η_k Yᵗ(Y a_k − b)`` with ``η_k = η_1/k``, which converges
  to ``Y⁺ b`` from ``a_0 = 0`` (the iterates stay in the row space of ``Y``,
  so the limit is the minimum-norm solution).
* :func:`lms` — the single-sample Widrow–Hoff (LMS) rule
  ``a ← a − η_k y_i (y_iᵗ a − b_i)``, sample after sample.

Several classes (:func:`mse_linear_machine`): the lecture's linear machine,
``g_k(x) = a_kᵗ (x, 1)``, with ``A = [X, 1]⁺ B`` for the indicator matrix
``B`` (``B_ik = 1`` if sample ``i`` is in class ``k``, else 0) — one
factorisation and one solve with ``K`` right-hand sides.  For two classes the
``±1`` formulation gives the same classifier: ``A⁺ y = a_2 − a_1``.

References
----------
.. [1] O. Veksler, CS434b/641a Pattern Recognition, Lecture 10 (MSE,
   pseudo-inverse, Widrow–Hoff, linear machine), the seed lecture of linsep.
.. [2] R. O. Duda, P. E. Hart and D. G. Stork, Pattern Classification, 2nd
   ed., Wiley 2001, §5.8.
.. [3] B. Widrow and M. E. Hoff, "Adaptive switching circuits", IRE WESCON
   Convention Record 4, 1960.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.signed_design import signed_scores
from linsep._core.plan import dtype_plan, working_dtype
from linsep._core.linalg import IterativeLeastSquares, least_squares_solver
from linsep.solvers.perceptron.loops import lms_epoch, lms_epoch_csr
from linsep._core.result import CONVERGED, MAX_ITER, SEPARABLE, SolveResult
from linsep.designs.memory import as_design
from linsep.solvers.perceptron.solver import SCHEDULES, row_entries, sequential_data, step_size, visit_orders


def _separation_status(scores, fallback):
    return SEPARABLE if scores.size and scores.min() > 0 else fallback


def mse(Y, margin=None, *, C=0.0, trace=None):
    """Least-squares solution ``a = argmin ‖Y a − b‖² + C‖w‖²`` (minimum norm if not unique).

    Parameters
    ----------
    Y : ndarray, sparse matrix or design of shape (N, p)
        Sign-normalised augmented samples, bias column last (any
        ``linsep.designs.base.Design``, e.g. dask row blocks).
    margin : ndarray of shape (N,) or None
        The positive margin vector ``b`` (the design's own vector for a
        design that keeps its data elsewhere); ``None`` means ``b = 1``.
    C : float
        Ridge penalty on ``w`` (the bias is not penalised); 0 gives the
        lecture's ``Y⁺ b``.
    trace : trace recorder or None
        Record the one row ``k = 1``: ``a``, ``b`` and ``e = Y a − b``.

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data), ``margin`` = ``b``,
        ``n_iter = 1`` and ``status`` ``separable`` if ``Y a > 0``, else
        ``converged`` (``max_iter`` if an iterative solve stopped short of its
        tolerance; its CG iterations are ``extra["cg_iterations"]``).

    See Also
    --------
    widrow_hoff : Gradient descent to the same solution.
    linsep.solvers.ho_kashyap.ho_kashyap : Adapts the margin vector too.
    linsep.MSEClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> Y = y[:, None] * np.c_[X, np.ones(len(X))]          # Y = diag(y)[X, 1], bias last
    >>> from linsep.solvers.mse import mse
    >>> result = mse(Y)                                      # b = 1
    >>> np.allclose(result.weights, np.linalg.lstsq(Y, np.ones(len(Y)), rcond=None)[0])
    True
    """
    design = as_design(Y)
    b = design.constant_vector(1.0) if margin is None else design.vector(margin)
    factor = design.least_squares_solver(C)
    a = design.solve_target(factor, b, 0.0)
    _, smallest, _ = design.count_nonpositive(a)
    history = None
    if trace is not None:
        scores = np.asarray(design @ a)
        trace.record(1, final=True, weights=a, margin_vector=b, error_vector=scores - b)
        history = trace.merge_into({"criterion": np.array([float((scores - b) @ (scores - b))]),
                                    "training_errors": np.array([np.count_nonzero(scores <= 0)])})
    return SolveResult(weights=a.astype(design.dtype, copy=False), n_iter=1,
                       status=SEPARABLE if smallest > 0 else _solved(factor), margin=design.host(b),
                       history=history, extra={**factor.stats, "plan": dtype_plan(design.dtype)})


def mse_linear_machine(A, labels, margin=None, *, C=0.0, traces=None):
    """Linear machine by least squares: ``W = argmin ‖A W − B‖²`` in one solve.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (N, p)
        Augmented samples ``[X, 1]`` (bias last), **not** sign-normalised.
    labels : ndarray of shape (N,) of int
        Class index ``0 … K−1`` of every sample.
    margin : ndarray of shape (N,) or None
        ``B_ik = b_i`` for the sample's own class (0 elsewhere); ``None``
        gives the lecture's indicator matrix (``b = 1``).
    C : float
        Ridge penalty on the non-bias rows of ``W``.
    traces : sequence of K trace recorders or None
        One recorder per class: class ``k``'s row is the solve's
        ``a_k``, ``b = B[:, k]`` and ``e_k = A a_k − B[:, k]``, with the
        criterion ``‖e_k‖²`` (the machine's criterion ``‖A W − B‖²`` is
        their sum) and the machine's training errors (samples whose own
        discriminant is not strictly the largest; the same for every class).

    Returns
    -------
    SolveResult
        ``weights`` of shape (p, K) (column ``k`` is ``a_k``, bias last),
        ``margin`` = ``B``, ``n_iter = 1`` and ``status`` ``separable`` if
        every training sample's own discriminant is strictly the largest,
        else ``converged``; with ``traces``, ``history`` is the list of the
        K classes' trace dicts.

    See Also
    --------
    mse : The two-class solve.
    linsep.MSEClassifier : Uses it above two classes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from linsep.solvers.mse import mse_linear_machine
    >>> X, labels = make_blobs(n_samples=60, centers=3, random_state=0)
    >>> result = mse_linear_machine(np.c_[X, np.ones(len(X))], labels)
    >>> result.weights.shape                                 # one column of weights per class
    (3, 3)
    """
    labels = np.asarray(labels)
    n_samples = labels.shape[0]
    n_classes = int(labels.max()) + 1
    b = np.ones(n_samples) if margin is None else np.asarray(margin, dtype=np.float64)
    B = np.zeros((n_samples, n_classes))
    B[np.arange(n_samples), labels] = b
    factor = least_squares_solver(A, None, C)
    W = factor.solve(B)
    scores = np.asarray(A @ W)
    gap = own_class_gap(scores, labels)
    history = None
    if traces is not None:
        errors = scores - B
        machine_errors = np.array([np.count_nonzero(gap <= 0)])
        history = []
        for k, trace in enumerate(traces):
            trace.record(1, final=True, weights=W[:, k], margin_vector=B[:, k], error_vector=errors[:, k])
            history.append(trace.merge_into({"criterion": np.array([float(errors[:, k] @ errors[:, k])]),
                                             "training_errors": machine_errors}))
    dtype = working_dtype(A)  # a sparse A is formed in float64 (sign_normalized): float64 weights
    return SolveResult(weights=W.astype(dtype, copy=False), n_iter=1,
                       status=_separation_status(gap, _solved(factor)), margin=B, history=history,
                       extra={**factor.stats, "plan": dtype_plan(dtype)})


def own_class_gap(scores, labels):
    """``g_own(x_i) − max_{k ≠ own} g_k(x_i)`` per sample: positive where its own discriminant is strictly largest.

    ``scores`` (N, K) are the linear machine's discriminants (left unchanged),
    ``labels`` the class indices ``0 … K−1``.
    """
    scores = np.array(scores, dtype=np.float64)
    rows = np.arange(scores.shape[0])
    own = scores[rows, labels]
    scores[rows, labels] = -np.inf
    return own - scores.max(axis=1)


def _solved(factor):
    """``converged``, or ``max_iter`` when an iterative solve stopped short of its tolerance."""
    return MAX_ITER if isinstance(factor, IterativeLeastSquares) and not factor.converged else CONVERGED


def largest_gram_eigenvalue(Y, n_iter=30):
    """Estimate ``λ_max(YᵗY)`` by power iteration (``n_iter`` products with ``Y`` and ``Yᵗ``).

    A fixed seed keeps fits reproducible.  The estimate approaches
    ``λ_max`` from below; 30 steps from a random start put it within a few
    per cent, far inside the factor 2 that the step ``1/λ`` can afford.
    """
    v = np.random.RandomState(0).standard_normal(Y.shape[1])
    estimate = 0.0
    for _ in range(n_iter):
        norm = np.linalg.norm(v)
        if norm == 0.0:
            break
        v = v / norm
        u = np.asarray(Y.T @ np.asarray(Y @ v)).ravel()
        estimate = float(v @ u)
        v = u
    return estimate


def _check_finite(a, rule, k):
    if not np.all(np.isfinite(a)):
        raise FloatingPointError(
            f"{rule} diverged at iteration {k}: the learning rate is too large for this data; "
            "use learning_rate=None (automatic) or a smaller value, or scale the features"
        )


def widrow_hoff(Y, margin=None, *, learning_rate=None, schedule="inverse", max_iter=1000, tol=1e-5,
                initial_weights=None, trace=None):
    """Batch Widrow–Hoff: ``a_{k+1} = a_k − η_k Yᵗ(Y a_k − b)``, ``η_k = η_1/k``.

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (N, p)
        Sign-normalised augmented samples, bias column last.
    margin : ndarray of shape (N,) or None
        ``b``; ``None`` means ``b = 1``.
    learning_rate : float or None
        ``η_1``.  ``None``: ``2/λ_max(YᵗY)`` for the ``1/k`` schedule and
        ``1/λ_max`` for constant steps (``λ_max`` by power iteration).  The
        error then decays like ``k^(−2λ_min/λ_max)`` under ``1/k`` but like
        ``(1 − λ_min/λ_max)^k`` with constant steps: on ill-conditioned
        data (e.g. features far from zero mean) the constant schedule is
        much faster.
    schedule : {"inverse", "constant"}
        ``η_k = η_1/k`` (the lecture) or ``η_k = η_1``.
    max_iter : int
        Largest number of gradient steps.
    tol : float
        Stop when ``‖Yᵗ(Y a − b)‖ <= tol · ‖Yᵗ b‖`` (relative gradient norm:
        invariant to the scales of ``Y`` and ``b``).
    initial_weights : ndarray of shape (p,) or None
        ``a_0``; zeros by default (then the limit is the minimum-norm
        solution).
    trace : trace recorder or None
        Record ``a_k``, ``b`` and ``e_k = Y a_k − b`` (rows ``k = 0 … n_iter``).

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data),
        ``margin`` = ``b``, ``n_iter`` = gradient
        steps, ``status`` (``separable`` if ``Y a > 0``, else
        ``converged`` or ``max_iter``) and ``history["criterion"]`` =
        ``J_s(a_k)`` for every iterate.

    See Also
    --------
    mse : The limit, in one solve.
    lms : The single-sample rule.
    linsep.WidrowHoffClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> Y = y[:, None] * np.c_[X, np.ones(len(X))]          # Y = diag(y)[X, 1], bias last
    >>> from linsep.solvers.mse import mse, widrow_hoff
    >>> result = widrow_hoff(Y, schedule="constant", max_iter=10_000, tol=1e-10)
    >>> np.allclose(result.weights, mse(Y).weights, atol=1e-6)
    True
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    b = np.ones(Y.shape[0]) if margin is None else np.asarray(margin, dtype=np.float64)
    if learning_rate is None:
        # Along an eigenvector of YᵗY with eigenvalue λ the error shrinks by
        # |1 − η_k λ| per step.  Constant steps must keep η λ_max < 2 (1/λ_max
        # leaves room for the estimate's error); under η_1/k the product
        # behaves like k^(−η_1 λ), so the largest safe η_1 = 2/λ_max is also
        # the fastest (its first step may overshoot, the second cancels that).
        lam = largest_gram_eigenvalue(Y)
        learning_rate = (2.0 if schedule == "inverse" else 1.0) / lam if lam > 0 else 1.0
    # Sparse: CSR copies of Y and Yᵗ make both products of every step row-wise
    # (a CSC or COO matrix would be re-converted at each product).
    YT = Y.T.tocsr() if sp.issparse(Y) else Y.T
    Y = Y.tocsr() if sp.issparse(Y) else Y
    a = np.zeros(Y.shape[1]) if initial_weights is None else np.array(initial_weights, dtype=np.float64)
    target = tol * np.linalg.norm(np.asarray(YT @ b))
    criterion, errors = [], []  # training errors: traced runs only
    status = MAX_ITER
    k = 0
    while True:
        r = np.asarray(Y @ a) - b
        criterion.append(float(r @ r))
        if trace is not None:
            errors.append(int(np.count_nonzero(r + b <= 0)))
            if trace.wants(k):
                trace.record(k, weights=a, margin_vector=b, error_vector=r)
        g = np.asarray(YT @ r).ravel()
        if np.linalg.norm(g) <= target:
            status = CONVERGED
            break
        if k >= max_iter:
            break
        k += 1
        a = a - step_size(learning_rate, schedule, k) * g
        _check_finite(a, "Widrow–Hoff", k)
    scores = r + b
    history = {"criterion": np.asarray(criterion)}
    if trace is not None:
        trace.record(k, final=True, weights=a, margin_vector=b, error_vector=r)
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    dtype = working_dtype(Y)  # a sparse Y is formed in float64 (sign_normalized): float64 weights
    return SolveResult(weights=a.astype(dtype, copy=False), n_iter=k,
                       status=_separation_status(scores, status), margin=b, history=history,
                       extra={"plan": dtype_plan(dtype)})


def _traced_lms_epoch(X, y, b, order, w, eta, trace, k):
    """``linsep.solvers.ho_kashyap.loops.lms_epoch`` in plain Python, recording ``a`` after each update (pass ``k``)."""
    loss = 0.0
    coef = w[:-1]  # a view: updated in place
    for i in order:
        columns, values = row_entries(X, i)
        r = y[i] * (w[-1] + float(values @ coef[columns])) - b[i]
        loss += r * r
        np.add.at(coef, columns, -eta * r * y[i] * values)
        w[-1] -= eta * r * y[i]
        trace.record_update(weights=w, sample=int(i), **{"pass": k})
    return loss


def lms_learning_rate(X):
    """``1/max_i ‖(x_i, 1)‖²``: the largest ``η`` for which every single LMS update is a contraction."""
    squares = X.multiply(X).sum(axis=1) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    return 1.0 / (1.0 + float(np.max(squares)))


def lms(X, y, margin=None, *, learning_rate=None, schedule="inverse", max_iter=1000, tol=1e-5,
        shuffle=True, rng=None, initial_weights=None, first_pass=1, trace=None):
    """Single-sample Widrow–Hoff (LMS): ``a ← a − η_k y_i (y_iᵗ a − b_i)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Samples (the compiled loop reads ``y_i = y_i (x_i, 1)`` on the fly
        and never forms ``Y``; sparse input is read as CSR, never
        densified).
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    margin : ndarray of shape (N,) or None
        ``b``; ``None`` means ``b = 1``.
    learning_rate : float or None
        ``η_1``.  ``None``: ``1/max_i ‖y_i‖²``, for which every single
        update is a contraction (it at most fits sample ``i`` exactly), so
        the rule cannot diverge.
    schedule : {"inverse", "constant"}
        ``η_k = η_1/k`` with ``k`` the pass number (the rate is constant
        within a pass), or ``η_k = η_1``.  With a constant rate the iterates
        end in a cycle of size ``O(η)`` around the MSE solution; the
        ``1/k`` decay shrinks that cycle to the solution.
    max_iter : int
        Largest number of passes.
    tol : float
        Stop when a pass changes ``a`` by at most ``tol · ‖a‖``.
    shuffle, rng
        Visit the samples in a new random order each pass.
    initial_weights : ndarray of shape (d + 1,) or None
        ``a_0``; zeros by default.
    first_pass : int
        Schedule position of the first pass (pass ``k`` uses
        ``η_{first_pass + k − 1}``), as in
        :func:`linsep.solvers.perceptron.perceptron`.
    trace : trace recorder or None
        Record ``a``, ``b`` and ``e = Y a − b`` after each pass (rows
        ``k = 0 … n_iter``, ``k = 0`` the start).

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data),
        ``margin`` = ``b``, ``n_iter`` = passes,
        ``status`` (``separable`` if ``Y a > 0``, else ``converged`` or
        ``max_iter``) and ``history["criterion"]``: the sum of squared
        residuals met during each pass (a running estimate of ``J_s``);
        ``extra["learning_rate"]``: the ``η_1`` used.

    See Also
    --------
    widrow_hoff : The batch rule.
    linsep.LMSClassifier : The estimator over this solver (with ``partial_fit``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> from linsep.solvers.mse import lms
    >>> result = lms(X, y, rng=np.random.default_rng(0))
    >>> result.status, result.weights.shape
    ('converged', (3,))
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    X = sequential_data(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_samples, n_features = X.shape
    b = np.ones(n_samples) if margin is None else np.ascontiguousarray(margin, dtype=np.float64)
    if learning_rate is None:
        learning_rate = lms_learning_rate(X)
    w = np.zeros(n_features + 1) if initial_weights is None else np.array(initial_weights, dtype=np.float64)
    orders = visit_orders(n_samples, shuffle, rng)
    criterion = []
    status = MAX_ITER

    per_update = trace is not None and trace.per_update  # record_history="updates": a row per visited sample

    def record(k, final=False):
        if trace is not None and not per_update and (final or trace.wants(k)):
            trace.record(k, final=final, weights=w, margin_vector=b, error_vector=signed_scores(X, y, w) - b)

    record(0)
    if per_update:
        trace.record(0, weights=w, sample=-1, **{"pass": 0})
    errors = []  # training errors after each pass: traced runs only
    for k in range(1, max_iter + 1):
        previous = w.copy()
        eta = step_size(learning_rate, schedule, first_pass + k - 1)
        if per_update:
            criterion.append(_traced_lms_epoch(X, y, b, next(orders), w, eta, trace, k))
        elif sp.issparse(X):
            criterion.append(lms_epoch_csr(X.indptr, X.indices, X.data, y, b, next(orders), w, eta))
        else:
            criterion.append(lms_epoch(X, y, b, next(orders), w, eta))
        _check_finite(w, "LMS", k)
        if trace is not None:
            errors.append(int(np.count_nonzero(signed_scores(X, y, w) <= 0)))
        if np.linalg.norm(w - previous) <= tol * np.linalg.norm(w):
            status = CONVERGED
            break
        record(k)
    record(len(criterion), final=True)
    scores = signed_scores(X, y, w)
    history = {"criterion": np.asarray(criterion)}
    if trace is not None:
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    dtype = working_dtype(X)
    return SolveResult(weights=w.astype(dtype, copy=False), n_iter=len(criterion),
                       status=_separation_status(scores, status), margin=b, history=history,
                       extra={"learning_rate": float(learning_rate), "plan": dtype_plan(dtype)})
