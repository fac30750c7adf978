"""Minimum squared error: the pseudo-inverse solution, Widrow–Hoff and LMS.

The MSE procedure of the lecture [1]_ (Duda, Hart & Stork §5.8 [2]_) replaces
the inequalities :math:`Y a > 0` by the equations :math:`Y a = b` for a
chosen positive margin vector :math:`b` and solves them in the least-squares
sense:

.. math::

    \\begin{aligned}
    J_s(a)     &= \\lVert Y a - b \\rVert^2 = \\sum_i (a^t y_i - b_i)^2, \\\\
    \\nabla J_s &= 2 Y^t (Y a - b), \\qquad a = Y^{+} b ,
    \\end{aligned}

with :math:`Y = \\operatorname{diag}(y)\\,[X,\\ \\mathbf{1}]` (bias **last**
here; the lecture puts it first).  :math:`b = \\mathbf{1}` is the usual
choice; only the *relative* sizes of the :math:`b_i` matter (:math:`\\beta b`
gives :math:`\\beta a`).  :math:`a` separates the data when :math:`Y a > 0`,
which least squares does not guarantee: the lecture's second example fails
on one point, and raising that point's :math:`b_i` to 10 fixes it.

Three ways to the same minimiser:

* :func:`mse` — :math:`a = Y^{+} b` from one factorisation
  (``linsep._core.linalg.LeastSquaresFactor``: Cholesky of the equilibrated
  Gram matrix, SVD for rank-deficient :math:`Y`), never an explicit inverse;
  optional ridge :math:`C \\lVert w \\rVert^2` on :math:`w` only.  Wide
  :math:`Y` (sparse text data, :math:`d + 1` above 2000 columns) is solved matrix-free by conjugate gradients
  (``linsep._core.linalg.least_squares_solver``), to the same minimum-norm
  solution up to a relative normal-equations residual of :math:`10^{-10}`.
* :func:`widrow_hoff` — batch gradient descent

  .. math::

      a_{k+1} = a_k - \\eta_k \\, Y^t (Y a_k - b), \\qquad \\eta_k = \\eta_1 / k,

  which converges to :math:`Y^{+} b` from :math:`a_0 = 0` (the iterates stay
  in the row space of :math:`Y`, so the limit is the minimum-norm solution).
* :func:`lms` — the single-sample Widrow–Hoff (LMS) rule, sample after sample:

  .. math::

      a \\leftarrow a - \\eta_k \\, y_i \\, (y_i^t a - b_i) .

Several classes (:func:`mse_linear_machine`): the lecture's linear machine,
:math:`g_k(x) = a_k^t (x, 1)`, with :math:`A = [X,\\ \\mathbf{1}]^{+} B` for the
indicator matrix :math:`B` (:math:`B_{ik} = 1` if sample :math:`i` is in class
:math:`k`, else 0) — one factorisation and one solve with :math:`K` right-hand
sides.  For two classes the :math:`\\pm 1` formulation gives the same
classifier: :math:`A^{+} y = a_2 - a_1`.

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

from linsep._core.certificates import sample_errors, signed_errors
from linsep._core.signed_design import signed_scores
from linsep._core.plan import dtype_plan, working_dtype
from linsep._core.linalg import IterativeLeastSquares, least_squares_solver
from linsep.solvers.lms import lms_epoch, lms_epoch_csr
from linsep._core.result import CONVERGED, MAX_ITER, SEPARABLE, SolveResult
from linsep.designs.memory import as_design
from linsep.solvers.perceptron.solver import SCHEDULES, row_entries, sequential_data, step_size, visit_orders


def _separation_status(scores, fallback):
    return SEPARABLE if scores.size and scores.min() > 0 else fallback


def mse(Y, margin=None, *, C=0.0, trace=None):
    """Least-squares solution :math:`a = \\operatorname{argmin} \\lVert Y a - b \\rVert^2 + C \\lVert w \\rVert^2` (minimum norm if not unique).

    Parameters
    ----------
    Y : ndarray, sparse matrix or design of shape (N, p)
        Sign-normalised augmented samples, bias column last (any
        ``linsep.designs.base.Design``, e.g. dask row blocks).
    margin : ndarray of shape (N,) or None
        The positive margin vector :math:`b` (the design's own vector for a
        design that keeps its data elsewhere); ``None`` means :math:`b = \\mathbf{1}`.
    C : float
        Ridge penalty on :math:`w` (the bias is not penalised); 0 gives the
        lecture's :math:`Y^{+} b`.
    trace : trace recorder or None
        Record the one row :math:`k = 1`: :math:`a`, :math:`b` and :math:`e = Y a - b`.

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data), ``margin`` = :math:`b`,
        ``n_iter = 1`` and ``status`` ``separable`` if :math:`Y a > 0`, else
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
    wrong, smallest, _ = design.count_nonpositive(a)
    history = None if trace is None else _traced(design, Y, a, b, wrong, trace)
    return SolveResult(weights=design.host_weights(a, design.dtype), n_iter=1,
                       status=SEPARABLE if smallest > 0 else _solved(factor), margin=design.host(b),
                       history=history, extra={**factor.stats, "plan": dtype_plan(design.dtype)})


def _traced(design, Y, a, b, wrong, trace):
    """MSE's trace: its one row ``a``, ``b``, ``e = Y a − b``, with the criterion ``‖e‖²`` and the training errors.

    In memory the errors are counted within the rounding bound of
    :func:`~linsep._core.certificates.signed_errors`; a design whose vectors
    live on a device (no ``Y`` in memory, a namespace ``xp``: array-API
    input) keeps the row there (the recorder brings it to the host), counts
    ``y_i f(x_i) <= 0`` (``wrong``, the count the verdict read) and reads
    ``‖e‖²`` (float64) as one number.
    """
    if getattr(design, "Y", None) is None and hasattr(design, "xp"):
        xp = design.xp
        e = design.scores(a) - b
        trace.record(1, final=True, weights=a, margin_vector=b, error_vector=e)
        e = xp.astype(e, xp.float64)
        (criterion,) = design.read_scalars([xp.sum(e * e)])
        return trace.merge_into({"criterion": np.array([criterion]), "training_errors": np.array([int(wrong)])})
    scores = np.asarray(design @ a)
    trace.record(1, final=True, weights=a, margin_vector=b, error_vector=scores - b)
    return trace.merge_into({"criterion": np.array([float((scores - b) @ (scores - b))]),
                             "training_errors": np.array([signed_errors(getattr(design, "Y", Y), a, scores)])})


def mse_linear_machine(A, labels, margin=None, *, C=0.0, traces=None):
    """Linear machine by least squares: :math:`W = \\operatorname{argmin} \\lVert A W - B \\rVert^2` in one solve.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (N, p)
        Augmented samples :math:`[X,\\ \\mathbf{1}]` (bias last), **not** sign-normalised.
    labels : ndarray of shape (N,) of int
        Class index :math:`0, \\dots, K - 1` of every sample.
    margin : ndarray of shape (N,) or None
        :math:`B_{ik} = b_i` for the sample's own class (0 elsewhere); ``None``
        gives the lecture's indicator matrix (:math:`b = \\mathbf{1}`).
    C : float
        Ridge penalty on the non-bias rows of :math:`W`.
    traces : sequence of K trace recorders or None
        One recorder per class: class :math:`k`'s row is the solve's
        :math:`a_k`, :math:`b = B_{:, k}` and :math:`e_k = A a_k - B_{:, k}`, with the
        criterion :math:`\\lVert e_k \\rVert^2` (the machine's criterion
        :math:`\\lVert A W - B \\rVert^2` is
        their sum) and the machine's training errors (samples whose own
        discriminant is not strictly the largest; the same for every class).

    Returns
    -------
    SolveResult
        ``weights`` of shape (p, K) (column :math:`k` is :math:`a_k`, bias last),
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
    """:math:`g_{\\mathrm{own}}(x_i) - \\max_{k \\ne \\mathrm{own}} g_k(x_i)` per sample: positive where its own discriminant is strictly largest.

    ``scores`` (N, K) are the linear machine's discriminants (left unchanged),
    ``labels`` the class indices :math:`0, \\dots, K - 1`.
    """
    scores = np.array(scores, dtype=np.float64)
    rows = np.arange(scores.shape[0])
    own = scores[rows, labels]
    scores[rows, labels] = -np.inf
    return own - scores.max(axis=1)


def _solved(factor):
    """``converged``, or ``max_iter`` when an iterative solve stopped short of its tolerance."""
    return MAX_ITER if isinstance(factor, IterativeLeastSquares) and not factor.converged else CONVERGED


def largest_gram_eigenvalue(Y, n_iter=30, *, gram=None):
    """Estimate :math:`\\lambda_{\\max}(Y^t Y)` by power iteration (``n_iter`` products with :math:`Y` and :math:`Y^t`).

    A fixed seed keeps fits reproducible.  The estimate approaches
    :math:`\\lambda_{\\max}` from below; 30 steps from a random start put it within a few
    per cent, far inside the factor 2 that the step :math:`1/\\lambda` can afford.
    ``gram``: :math:`Y^t Y` itself (``p × p``, with ``Y`` ``None``), whose products are the same
    (the array-API fit runs the same steps on its Gram matrix on the device:
    ``linsep.designs.array_api_fit.ArrayAPIFit.largest_gram_eigenvalue``).
    """
    v = np.random.RandomState(0).standard_normal(Y.shape[1] if gram is None else gram.shape[0])
    estimate = 0.0
    for _ in range(n_iter):
        norm = np.linalg.norm(v)
        if norm == 0.0:
            break
        v = v / norm
        u = gram @ v if gram is not None else np.asarray(Y.T @ np.asarray(Y @ v)).ravel()
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
    """Batch Widrow–Hoff: :math:`a_{k+1} = a_k - \\eta_k Y^t (Y a_k - b)`, :math:`\\eta_k = \\eta_1 / k`.

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (N, p)
        Sign-normalised augmented samples, bias column last.
    margin : ndarray of shape (N,) or None
        :math:`b`; ``None`` means :math:`b = \\mathbf{1}`.
    learning_rate : float or None
        :math:`\\eta_1`.  ``None``: :math:`2 / \\lambda_{\\max}(Y^t Y)` for the
        :math:`1/k` schedule and :math:`1 / \\lambda_{\\max}` for constant steps
        (:math:`\\lambda_{\\max}` by power iteration).  The error then decays like
        :math:`k^{-2 \\lambda_{\\min} / \\lambda_{\\max}}` under :math:`1/k` but like
        :math:`(1 - \\lambda_{\\min} / \\lambda_{\\max})^k` with constant steps: on ill-conditioned
        data (e.g. features far from zero mean) the constant schedule is
        much faster.
    schedule : {"inverse", "constant"}
        :math:`\\eta_k = \\eta_1 / k` (the lecture) or :math:`\\eta_k = \\eta_1`.
    max_iter : int
        Largest number of gradient steps.
    tol : float
        Stop when :math:`\\lVert Y^t (Y a - b) \\rVert \\le \\mathit{tol} \\cdot \\lVert Y^t b \\rVert`
        (relative gradient norm: invariant to the scales of :math:`Y` and :math:`b`).
    initial_weights : ndarray of shape (p,) or None
        :math:`a_0`; zeros by default (then the limit is the minimum-norm
        solution).
    trace : trace recorder or None
        Record :math:`a_k`, :math:`b` and :math:`e_k = Y a_k - b` (rows
        :math:`k = 0, \\dots, \\texttt{n_iter}`).

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data),
        ``margin`` = :math:`b`, ``n_iter`` = gradient
        steps, ``status`` (``separable`` if :math:`Y a > 0`, else
        ``converged`` or ``max_iter``) and ``history["criterion"]`` =
        :math:`J_s(a_k)` for every iterate.

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
            errors.append(signed_errors(Y, a, r + b))
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
    """``linsep.solvers.lms.lms_epoch`` in plain Python, recording :math:`a` after each update (pass :math:`k`)."""
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
    """:math:`1 / \\max_i \\lVert (x_i, 1) \\rVert^2`: the largest :math:`\\eta` for which every single LMS update is a contraction."""
    squares = X.multiply(X).sum(axis=1) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    return 1.0 / (1.0 + float(np.max(squares)))


def lms(X, y, margin=None, *, learning_rate=None, schedule="inverse", max_iter=1000, tol=1e-5,
        shuffle=True, rng=None, initial_weights=None, first_pass=1, trace=None):
    """Single-sample Widrow–Hoff (LMS): :math:`a \\leftarrow a - \\eta_k \\, y_i (y_i^t a - b_i)`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Samples (the compiled loop reads each row :math:`y_i \\, (x_i, 1)` of
        :math:`Y` on the fly and never forms :math:`Y`; sparse input is read as CSR, never
        densified).
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    margin : ndarray of shape (N,) or None
        :math:`b`; ``None`` means :math:`b = \\mathbf{1}`.
    learning_rate : float or None
        :math:`\\eta_1`.  ``None``: :math:`1 / \\max_i \\lVert y_i \\rVert^2`, for which every single
        update is a contraction (it at most fits sample :math:`i` exactly), so
        the rule cannot diverge.
    schedule : {"inverse", "constant"}
        :math:`\\eta_k = \\eta_1 / k` with :math:`k` the pass number (the rate is constant
        within a pass), or :math:`\\eta_k = \\eta_1`.  With a constant rate the iterates
        end in a cycle of size :math:`O(\\eta)` around the MSE solution; the
        :math:`1/k` decay shrinks that cycle to the solution.
    max_iter : int
        Largest number of passes.
    tol : float
        Stop when a pass changes :math:`a` by at most :math:`\\mathit{tol} \\cdot \\lVert a \\rVert`.
    shuffle, rng
        Visit the samples in a new random order each pass.
    initial_weights : ndarray of shape (d + 1,) or None
        :math:`a_0`; zeros by default.
    first_pass : int
        Schedule position of the first pass (pass :math:`k` uses
        :math:`\\eta_{\\texttt{first_pass} + k - 1}`), as in
        :func:`linsep.solvers.perceptron.perceptron`.
    trace : trace recorder or None
        Record :math:`a`, :math:`b` and :math:`e = Y a - b` after each pass (rows
        :math:`k = 0, \\dots, \\texttt{n_iter}`, :math:`k = 0` the start).

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 data),
        ``margin`` = :math:`b`, ``n_iter`` = passes,
        ``status`` (``separable`` if :math:`Y a > 0`, else ``converged`` or
        ``max_iter``) and ``history["criterion"]``: the sum of squared
        residuals met during each pass (a running estimate of :math:`J_s`);
        ``extra["learning_rate"]``: the :math:`\\eta_1` used.

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
            errors.append(sample_errors(X, y, w))
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
