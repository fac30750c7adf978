"""Ho–Kashyap family: HK, modified HK, MHKS, MHKA, HKES, HKESA.

All six methods are one iteration on the augmented, sign-normalised matrix
``Y = diag(y)[X, 1]`` (``linsep._design``), differing in four switches.

Ho–Kashyap (HK) [1]_ [2]_ (Lauer & Bloch 2006, eqs. 6–9) minimises

.. math::

    J(W, B) = \\lVert Y W - B \\rVert^2 \\quad \\text{subject to } B > 0

by alternating a least-squares solve for the weights and a projected gradient
step on the margin vector:

.. math::

    W_k = Y^{+} B_k, \\qquad E_k = Y W_k - B_k, \\qquad
    B_{k+1} = B_k + \\mu (E_k + |E_k|), \\quad 0 < \\mu < 1,

from ``B_0 = b_0 1``.  Because ``Yᵀ E_k = 0``, a vector ``E_k <= 0`` with
``E_k != 0`` proves that no ``W`` has ``Y W > 0`` (Gordan's alternative):
linsep keeps ``u = -E_k`` as the certificate.

Modified HK (the encyclopedia variant [1]_) replaces the weight solve by the
increment ``W_{k+1} = W_k + \\mu Y^{+} |E_k|``; started from ``W_0 = Y⁺B_0`` it
produces the same iterates as HK (``Y⁺E_k = 0``), and differs when started
from an arbitrary ``W_0``.

MHKS / MHKA (Łęski 2003, Lauer & Bloch eqs. 10–11) add a margin of one and a
regularisation ``C`` on ``w`` but not on the bias (``Ĩ``):

.. math::

    J = (Y W - 1 - B)^t D (Y W - 1 - B) + C w^t w, \\qquad
    W_k = (Y^t D_k Y + C \\tilde I)^{-1} Y^t D_k (B_k + 1),

with ``D = I`` (squared errors, factored once) or ``D_k = diag(1/|e_i|)``
(absolute errors, iteratively reweighted least squares, refactored at each
iteration; a relative floor keeps the weights finite).

HKES / HKESA (Lauer & Bloch §2.3–2.4, eqs. 12–14) run HK (squared, or
absolute with ``D_k`` but no ``C``) and record the validation error ``GE_k`` at
every iteration up to the HK stopping point ``k*``; the returned weights are
``W_k̂`` with ``k̂ = argmin_k GE_k`` (the first minimiser over *all* ``k``,
not "stop at the first rise").

Stopping rules
--------------
``stopping="paper"``: ``|J_k - J_{k-1}| < tol``; ``tol=None`` gives the
paper's ``0.5 b_0²`` (eq. 9 and §3.1). The raw criterion ``J`` grows with
``N`` and with the scale of ``B``, so this absolute rule stops early on
large data sets and, on the four points of the lecture [3]_, at ``k = 2``
before the data are separated.

``stopping="relative"`` (default): ``|J_k - J_{k-1}| <= tol · J_{k-1}``, or
``|E_k| <= tol (B_k + offset)`` componentwise (with IRLS, on separated data,
that or ``W`` standing still, below). The first is invariant to
``b_0``, to the data scale and to ``N``; it fires only when ``J`` shrinks by
less than a fraction ``tol`` per step, so with ``tol = 1e-6`` separable data
practically always end separated (1 500 of 1 500 random thin-margin problems
in ``benchmarks/study_stopping_rule.py``), and it reproduces the paper's
benchmark errors. The second recognises the fixed point of separable data
(``B`` no longer moves, and ``Y W = B + E > 0``), where ``J`` may keep
shrinking geometrically and the first would not fire: without it, HK that
does not stop at separation (HKES, MHKS) would run to ``max_iter`` on
well-separated training data.  With IRLS (MHKA, HKESA) the absolute-error fit
keeps some residuals clearly negative for good, so its fixed point is the
weights standing still, ``max|W_k − W_{k−1}| <= tol · max|W_k|``, on
separated training data: ``E`` never becomes small there (residuals hover at
the floor of the IRLS weights and ``B`` creeps up by rounding-sized steps)
while ``J`` falls by a few ``tol`` per step for thousands of steps.

Whatever the rule, each iteration first checks the verdicts: all points
strictly separated (``Y W > 0``, when ``stop_at_separation``) and, for
``C = 0``, the non-separability proof ``E <= 0, E != 0``.

References
----------
.. [1] Y.-C. Ho and R. L. Kashyap, "An algorithm for linear inequalities and
   its applications", IEEE Trans. Electronic Computers 14(5), 1965.
.. [2] F. Lauer and G. Bloch, "Ho–Kashyap classifier with early stopping for
   regularization", Pattern Recognition Letters 27(9), 2006.
.. [3] R. O. Duda, P. E. Hart and D. G. Stork, Pattern Classification, 2nd
   ed., §5.9 (the lecture's worked example follows it).
.. [4] J. Łęski, "Ho–Kashyap classifier with generalization control",
   Pattern Recognition Letters 24(14), 2003.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._design import SignedDesign
from .._certificates import FIT_PROOF_RTOL, design_proof_residuals, proof_residuals
from .._linalg import _PIVOT_TOL, CG_PROOF_RTOL, IterativeLeastSquares, LeastSquaresFactor, least_squares_solver
from .._loops import (_PARALLEL_LOCK, HK_BUDGET_SPENT, HK_CONVERGED, HK_ILL_CONDITIONED, HK_NOT_SEPARABLE,
                      HK_SEPARABLE, ho_kashyap_segment, is_nonseparability_proof, pass_threads, serial_blas,
                      weights_stand_still)
from .._result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE, SolveResult

STOPPING_RULES = ("relative", "paper")

# E may hold rounding noise where the exact value is 0 (points on their
# margin); a non-separability proof allows positive components this small,
# relative to the margin vector.
_PROOF_RTOL = 1e-10
# With an iterative W-step, E holds the solve's error too: a candidate proof is
# looked at (the solve tightened, then checked) once max(E) <= this · max(B).
_ITERATIVE_CANDIDATE_RTOL = 1e-6
_ROUNDING_RTOL = np.sqrt(np.finfo(float).eps)

# Iterations per call of the compiled loop: its history buffers are allocated
# per segment, so an unbounded max_iter never allocates an unbounded array.
_SEGMENT_STEPS = 4096
# Up to this many entries in Y (1 MiB of doubles, about one core's L2 cache) the
# compiled loop sweeps Yᵀ by columns; above it, Y by rows in a single pass.
_BY_COLUMNS_MAX_ENTRIES = 131_072
# The compiled loop serves every case it covers; the tests switch it off to
# compare it with the NumPy reference loop.
_USE_COMPILED_LOOP = True

_COMPILED_CODES = {HK_SEPARABLE: SEPARABLE, HK_NOT_SEPARABLE: NOT_SEPARABLE, HK_CONVERGED: CONVERGED}


def nonseparability_proof(E, B, sample_weight=None):
    """Return ``u = -D E`` if ``E <= 0`` and ``E != 0`` (to rounding), else ``None``.

    With ``Yᵀ D E = 0`` (true at every Ho–Kashyap iterate without
    regularisation) such a ``u`` satisfies ``u >= 0, u != 0, Yᵀ u = 0``, which
    rules out any ``W`` with ``Y W > 0``.
    """
    if not is_nonseparability_proof(np.asarray(E, dtype=float), np.asarray(B, dtype=float), _PROOF_RTOL):
        return None
    u = np.maximum(-E, 0.0)
    return u if sample_weight is None else u * sample_weight


@dataclass
class _Run:
    """Where an iteration loop ended: the final iterate and what was recorded on the way."""

    W: np.ndarray
    B: np.ndarray
    k: int
    status: str
    factor: LeastSquaresFactor | IterativeLeastSquares
    certificate: np.ndarray | None = None
    history: dict = field(default_factory=dict)
    best_W: np.ndarray | None = None
    best_iter: int = 0


def ho_kashyap(
    Y,
    *,
    learning_rate=0.4,
    b0=1e-6,
    max_iter=10_000,
    tol=1e-6,
    stopping="relative",
    stop_at_separation=True,
    update="margin",
    C=None,
    loss="squared",
    irls_floor=1e-6,
    initial_weights=None,
    initial_margin=None,
    Y_val=None,
    record_history=False,
    trace=None,
    gram=None,
):
    """Run the Ho–Kashyap iteration on ``Y`` (see the module docstring).

    Parameters
    ----------
    Y : ndarray, sparse matrix or ``linsep._design.SignedDesign`` of shape (N, p)
        Sign-normalised augmented design matrix, bias column last.  A
        ``SignedDesign`` larger than the cache is never formed: the compiled
        loop reads its ``X`` (float32 or float64) and labels directly.
    learning_rate : float
        ``μ`` in ``B_{k+1} = B_k + μ(E_k + |E_k|)``; ``0 < μ < 1``.
    b0 : float
        Initial margin ``B_0 = b_0 1`` (ignored if ``initial_margin`` is given).
    max_iter : int
        Largest number of margin updates.
    tol : float or None
        Tolerance of the stopping rule; ``None`` with ``stopping="paper"``
        means the paper's ``0.5 b_0²``.
    stopping : {"relative", "paper"}
        ``|ΔJ| <= tol·J_{k-1}`` or the paper's ``|ΔJ| < tol``.
    stop_at_separation : bool
        Stop as soon as ``Y W > 0`` (the lecture's rule).
    update : {"margin", "weights"}
        ``W = Y⁺B`` (HK) or ``W += μ Y⁺|E|`` (modified HK).
    C : float or None
        ``None``: plain HK (target ``B``).  A number ``>= 0``: Łęski's
        modified HK, target ``1 + B`` and penalty ``C wᵀw`` (MHKS / MHKA).
    loss : {"squared", "absolute"}
        ``D = I`` or the IRLS weights ``D_k = diag(1/max(|e_i|, floor))``.
    irls_floor : float
        Floor of ``|e_i|`` relative to ``max |e|``.
    initial_weights, initial_margin : ndarray or None
        Start from a given ``W_0`` / ``B_0`` (the lecture's example starts at
        ``a = 1, b = 1``).
    Y_val : ndarray, sparse matrix, SignedDesign of shape (M, p) or None
        Sign-normalised validation matrix: enables early stopping (HKES).
    record_history : bool
        Keep per-iteration traces (always kept with ``Y_val``).
    trace : trace recorder or None
        Also record ``weights`` ``a(k)``, ``margin_vector`` ``b(k)`` and
        ``error_vector`` ``e(k)`` per iteration (rows ``k = 1 … n_iter``,
        the lecture's numbering); a traced run takes the NumPy loop.
    gram : ndarray of shape (p, p) or None
        ``YᵀY`` if known (one-vs-rest problems on the same features share it:
        the signs of the rows do not change it); saves its ``O(N p²)`` product.

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 ``Y``, else float64),
        ``margin`` ``B`` (the same type), ``status``, ``certificate``
        (``u >= 0`` with ``Yᵀu = 0`` for ``not_separable``), ``n_iter`` — the
        index ``k`` of the final iterate ``W_k``, counted from ``k = 1`` for
        the first weights as in the paper and the lecture (so ``n_iter - 1``
        margin updates were made) — ``history`` with ``criterion``,
        ``training_errors`` and ``validation_error`` (entry ``k - 1`` belongs
        to ``W_k``), and ``best_iter`` ``k̂`` for early stopping.

    See Also
    --------
    linsep.HoKashyapClassifier : The estimator over this solver (labels, one-vs-rest, validation split).
    linsep.solvers.mse.mse : One least-squares solve for a fixed margin vector.

    Notes
    -----
    Dense data with the margin update (HK, MHKS, MHKA, HKES, HKESA) run in a
    compiled loop (``linsep._loops.ho_kashyap_segment``; one pass over
    ``Y`` per iteration for data larger than the cache, two cache-resident
    passes below; IRLS adds the weighted Gram matrix and its Cholesky
    factor).  A pass by rows over at least ``linsep._loops.PARALLEL_MIN_ENTRIES``
    entries is split over threads (``linsep._loops.pass_threads``).
    float32 data are read as float32 (the vectors ``B``, ``E`` are kept in
    float32, every sum in float64; the factor and ``W`` are float64, and
    ``W`` is rounded to float32 on return).  Sparse ``Y`` or ``Y_val``, modified HK, the eigh factorisation,
    rank-deficient ``Y`` with ``initial_weights`` or with IRLS, and IRLS
    systems that fail the Cholesky pivot test run the NumPy loop below,
    which is also the reference the compiled loop is tested against.

    Wide ``Y`` (``p = d + 1`` above ``linsep._linalg._DIRECT_MAX_COLUMNS``
    = 2000, e.g. sparse text data) run the NumPy loop with the matrix-free
    W-step ``linsep._linalg.IterativeLeastSquares``: conjugate
    gradients on the normal equations, Jacobi-preconditioned, warm-started
    from the previous solution (IRLS only changes ``D``: nothing is
    refactored), each solve stopping at the relative residual
    ``τ = 1e-10`` (``linsep._linalg.CG_RTOL``).  ``extra`` then has
    ``cg_iterations``, ``cg_solves`` and ``cg_residual``.  How ``τ`` enters
    the verdicts:

    * ``separable`` is checked on the returned weights (``Y W > 0``); ``τ``
      plays no part.
    * ``not_separable`` needs ``Yᵀ D E = 0``, which a solve gives only to
      ``‖YᵀDE‖ <= τ ‖YᵀD(B + offset)‖``.  Once ``max E <= 1e-6 · max B`` (a
      *candidate*; the direct path's ``1e-10`` would miss proofs blurred by
      the solve's error), ``W`` is re-solved at ``τ = 1e-14``
      (``linsep._linalg.CG_PROOF_RTOL``) and ``E`` recomputed; ``u = −DE``
      is accepted only if ``E <= 0`` to rounding, as on the direct path,
      **and** ``u`` (or, failing that, ``u`` with its entries below
      ``sqrt(eps) · max u`` — rounding noise — set to 0) passes the
      per-column check of ``linsep._certificates``,
      ``|Σ_i u_i Y_ij| <= FIT_PROOF_RTOL · Σ_i u_i |Y_ij|`` (``1e-6``) for
      every column ``j``.  Otherwise the iteration goes on (and may end
      ``converged``): no proof is claimed that was not checked.
    * ``converged``: the stopping rules read ``J`` (which carries the solve's
      error to second order) and ``E``; if the last solve stopped short of
      ``τ`` (iteration limit, rounding floor), the status is ``max_iter``.
    * Weights: with ``C = 0`` the preconditioned solves give the minimum
      ``M``-norm solutions, whose ``Y W`` — hence ``E``, ``B``, ``J`` and every
      verdict — are those of the minimum-norm ``Y⁺B``; the returned weights
      are projected on the row space of ``Y`` by one unpreconditioned solve,
      so they are ``Y⁺B`` as on the direct path, to ``τ``.  If that solve
      stops short of ``τ``, the unprojected weights (the same ``Y W``) are
      returned and a ``converged`` status becomes ``max_iter``.

    An IRLS system that fails the Cholesky test and whose dense SVD would
    exceed the memory budget switches the fit to the iterative W-step in
    mid-run; from then on every rule above applies.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> Y = y[:, None] * np.c_[X, np.ones(len(X))]          # Y = diag(y)[X, 1], bias last
    >>> from linsep.solvers.ho_kashyap import ho_kashyap
    >>> result = ho_kashyap(Y)
    >>> result.status, bool((Y @ result.weights > 0).all())
    ('separable', True)
    >>> X_xor = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> Y_xor = np.array([-1, -1, 1, 1])[:, None] * np.c_[X_xor, np.ones(4)]
    >>> proof = ho_kashyap(Y_xor)
    >>> proof.status, np.allclose(Y_xor.T @ proof.certificate, 0)     # u >= 0 with Yᵀu = 0
    ('not_separable', True)
    """
    if stopping not in STOPPING_RULES:
        raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {stopping!r}")
    if update not in ("margin", "weights"):
        raise ValueError(f"update must be 'margin' or 'weights', got {update!r}")
    if loss not in ("squared", "absolute"):
        raise ValueError(f"loss must be 'squared' or 'absolute', got {loss!r}")
    if tol is None:
        tol = 0.5 * b0**2 if stopping == "paper" else 1e-6
    if max_iter < 0 or max_iter != int(max_iter):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    max_iter = int(max_iter)
    n_samples, n_cols = Y.shape
    for name, value, expected in (("initial_weights", initial_weights, n_cols),
                                  ("initial_margin", initial_margin, n_samples)):
        if value is not None and (np.shape(value) != (expected,) or not np.all(np.isfinite(value))):
            raise ValueError(f"{name} must be {expected} finite numbers, got shape {np.shape(value)}")
    if Y_val is not None and (Y_val.ndim != 2 or Y_val.shape[0] == 0 or Y_val.shape[1] != n_cols):
        raise ValueError(f"Y_val must have at least one row and {n_cols} columns, got shape {Y_val.shape}")

    # float32 data give float32 weights (and margin vector); everything else is solved in float64.
    out_dtype = np.float32 if Y.dtype == np.float32 else np.float64
    # Data that fit in cache are formed: the column sweep and the NumPy paths need Y itself.
    if isinstance(Y, SignedDesign) and Y.size <= _BY_COLUMNS_MAX_ENTRIES:
        Y = Y.toarray()
    if isinstance(Y_val, SignedDesign) and Y_val.size <= _BY_COLUMNS_MAX_ENTRIES:
        Y_val = Y_val.toarray()
    ridge = 0.0 if C is None else float(C)
    B = np.full(n_samples, float(b0)) if initial_margin is None else np.array(initial_margin, dtype=float)
    # Iterative W-steps (wide Y) are preconditioned even for C = 0: their fitted values Y W are
    # those of the minimum-norm solves, and the weights returned are mapped to the minimum norm below.
    factor = least_squares_solver(Y, None, ridge, gram=gram, minimum_norm=False)
    offset = 0.0 if C is None else 1.0
    W = factor.solve(B + offset) if initial_weights is None else np.array(initial_weights, dtype=float)
    options = dict(
        learning_rate=learning_rate, max_iter=max_iter, tol=tol, relative=stopping == "relative",
        stop_at_separation=stop_at_separation, ridge=ridge, offset=offset,
        # Without a penalty, Yᵀ D E = 0 at every iterate, so E <= 0 is a proof.
        can_prove=ridge == 0.0, Y_val=Y_val,
    )
    absolute = loss == "absolute"
    run = None
    dense = (np.ndarray, SignedDesign)
    if (trace is None and _USE_COMPILED_LOOP and update == "margin" and isinstance(Y, dense)
            and (Y_val is None or isinstance(Y_val, dense))):
        if factor.method == "cholesky":
            run = _iterate_compiled(Y, factor.cholesky_factor, W, B, factor=factor, absolute=absolute,
                                    irls_floor=irls_floor, **options)
        elif factor.method == "svd" and not absolute and initial_weights is None:
            # Rank-deficient Y = U S Vᵀ: iterate on Ỹ = U S, whose Gram matrix S² has the
            # Cholesky factor S.  Ỹ⁺ r = S⁻¹Uᵀr are the coordinates of Y⁺ r = V S⁻¹Uᵀr in
            # the basis V, so the iterates are HK's own, mapped back by W = V c.
            U, s, Vt = factor.svd_factors
            options["Y_val"] = None if Y_val is None else Y_val @ Vt.T
            run = _iterate_compiled(U * s, np.diag(s), Vt @ W, B, factor=factor, absolute=False,
                                    irls_floor=irls_floor, **options)
            run.W = Vt.T @ run.W
            run.best_W = None if run.best_W is None else Vt.T @ run.best_W
            options["Y_val"] = Y_val
    if run is None:  # not covered, or an IRLS system needed more than a Cholesky factor
        run = _iterate_numpy(Y, factor, W, B, update=update, absolute=absolute,
                             regularized=C is not None, irls_floor=irls_floor, trace=trace, **options)

    early_stopping = Y_val is not None
    weights = run.best_W if early_stopping else run.W
    projected = True  # the weights are the minimum-norm ones the status promises
    if isinstance(run.factor, IterativeLeastSquares) and ridge == 0.0:
        # The preconditioned solves left W in M⁻¹·(row space); W_k = Y⁺ r is its projection on the row
        # space.  Starting weights (k = 0, or the base of modified HK's increments) are kept as given.
        k_returned = run.best_iter if early_stopping else run.k
        base = None if initial_weights is None or (update == "margin" and k_returned > 0) else \
            np.asarray(initial_weights, dtype=float)
        minimum_norm = None
        if base is None:
            minimum_norm = run.factor.minimum_norm_part(weights)
        elif update == "weights" and k_returned > 0:
            minimum_norm = base + run.factor.minimum_norm_part(weights - base)
        if minimum_norm is not None:
            projected = run.factor.converged  # else keep W: a half-projected one has other fitted values
            weights = minimum_norm if projected else weights
    weights = weights.astype(out_dtype, copy=False)
    status = run.status
    scores = np.asarray(Y @ weights)
    if not np.all(np.isfinite(scores)):  # e.g. from starting weights near the float64 limit
        raise FloatingPointError("Ho–Kashyap's weights overflow the scores Y W; rescale the data or the starting weights")
    if bool(scores.min() > 0):
        status = SEPARABLE
    elif status == SEPARABLE:  # early stopping picked an iterate that does not separate
        status = CONVERGED
    if status == CONVERGED and not projected:
        status = MAX_ITER  # not the minimum-norm weights that convergence stands for
    keep_history = record_history or early_stopping or trace is not None
    history = run.history if trace is None else trace.merge_into(run.history)
    return SolveResult(
        weights=weights,
        n_iter=run.k + 1,
        status=status,
        margin=run.B.astype(out_dtype, copy=False),
        certificate=run.certificate,
        history=history if keep_history else None,
        best_iter=run.best_iter + 1 if early_stopping else None,
        extra=run.factor.stats,
    )


def _iterate_compiled(Y, L, W, B, *, factor, absolute, irls_floor, learning_rate, max_iter, tol, relative,
                      stop_at_separation, ridge, offset, can_prove, Y_val):
    """The iteration in compiled segments of ``_SEGMENT_STEPS``, from ``YᵀY + CĨ = L Lᵀ``.

    Returns ``None`` if an IRLS step (``absolute``) meets a system that
    ``linsep._linalg.LeastSquaresFactor`` would not factor by Cholesky:
    the NumPy loop then runs the whole solve.
    """
    n_samples, n_cols = Y.shape
    has_val = Y_val is not None
    # Data that fit in cache are swept by columns (better vectorised), larger data by rows (one pass).
    by_columns = max(Y.size, Y_val.size if has_val else 0) <= _BY_COLUMNS_MAX_ENTRIES
    if by_columns:
        dtype = np.float64
        X, y, rows = np.ascontiguousarray(_dense(Y).T, dtype=float), np.empty(0), np.empty(0, dtype=np.intp)
        X_val = np.ascontiguousarray(_dense(Y_val).T, dtype=float) if has_val else np.empty((n_cols, 0))
        y_val, rows_val = y, rows
        n_chunks = 1
    else:
        X, y, rows = _by_rows(Y, None)
        dtype = X.dtype
        X_val, y_val, rows_val = _by_rows(Y_val, dtype) if has_val else (
            np.empty((0, X.shape[1]), dtype=dtype), y[:0], rows[:0])
        n_chunks = pass_threads(X.shape[1] * n_samples)
    W = np.array(W, dtype=float)  # updated in place
    B = np.array(B, dtype=dtype)
    E = np.empty(n_samples, dtype=dtype)
    best_W = np.empty(n_cols)
    W_prev = np.full(n_cols, np.nan)  # the previous iterate (IRLS fixed point); none yet
    state = np.array([0.0, np.nan, np.nan, 0.0, np.inf])  # k, J_k, J_{k-1}, best k, best count
    L = np.array(L, dtype=float, order="C")  # refactored in place by IRLS
    D = np.ones(n_samples) if absolute else np.empty(0)  # IRLS weights D_0 = I
    traces = {"criterion": [], "training_errors": [], "validation_error": []}
    parallel = n_chunks > 1 and _PARALLEL_LOCK.acquire(blocking=False)
    try:
        with serial_blas(absolute and not by_columns):  # IRLS Gram products: rows split over chunks, not BLAS
            status = _run_segments(
                X, y, rows, X_val, y_val, rows_val, by_columns, n_chunks if parallel else 1, L, W, B, E, D, state,
                best_W, W_prev, traces, factor=factor, has_val=has_val, n_val=Y_val.shape[0] if has_val else 0,
                irls_floor=irls_floor, learning_rate=learning_rate, max_iter=max_iter, tol=tol, relative=relative,
                stop_at_separation=stop_at_separation, ridge=ridge, offset=offset, can_prove=can_prove)
    finally:
        if parallel:
            _PARALLEL_LOCK.release()
    if status is None:
        return None
    history = {name: np.concatenate(parts) for name, parts in traces.items()}
    if not has_val:
        del history["validation_error"]
    certificate = nonseparability_proof(E, B, D if absolute else None) if status == NOT_SEPARABLE else None
    return _Run(W=W, B=B, k=int(state[0]), status=status, factor=factor, certificate=certificate,
                history=history, best_W=best_W if has_val else None, best_iter=int(state[3]))


def _dense(Y):
    return Y.toarray() if isinstance(Y, SignedDesign) else Y


def _by_rows(Y, dtype):
    """``(X, y, rows)`` of the compiled loop's row layout: a design's own arrays, or ``Y`` itself with no labels."""
    if isinstance(Y, SignedDesign):
        X, y, rows = Y.by_rows()
    else:
        X, rows = Y, np.empty(0, dtype=np.intp)
        y = np.empty(0, dtype=Y.dtype)
    if dtype is None:
        dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    return np.ascontiguousarray(X, dtype=dtype), y.astype(dtype, copy=False), rows


def _run_segments(X, y, rows, X_val, y_val, rows_val, by_columns, n_chunks, L, W, B, E, D, state, best_W, W_prev,
                  traces, *, factor, has_val, n_val, irls_floor, learning_rate, max_iter, tol, relative,
                  stop_at_separation, ridge, offset, can_prove):
    """Call the compiled loop segment by segment; return the status, or ``None`` for an ill-conditioned IRLS system."""
    status = None
    while status is None:
        steps = min(_SEGMENT_STEPS, max_iter - int(state[0]))
        criterion = np.empty(steps + 1)
        training_errors = np.empty(steps + 1, dtype=np.int64)
        validation_counts = np.empty(steps + 1 if has_val else 0, dtype=np.int64)
        # Scalars cast to one type each, so that numba compiles the loop once, not per argument type.
        code, n_recorded = ho_kashyap_segment(
            X, y, rows, X_val, y_val, rows_val, bool(by_columns), int(n_chunks), L, W, B, E, D, float(offset),
            float(learning_rate), float(ridge), float(irls_floor), _PIVOT_TOL, best_W, state, criterion,
            training_errors, validation_counts, int(steps), float(tol), bool(relative),
            bool(stop_at_separation), bool(can_prove), _PROOF_RTOL, not traces["criterion"], W_prev)
        if code == HK_ILL_CONDITIONED:
            return None
        traces["criterion"].append(criterion[:n_recorded])
        traces["training_errors"].append(training_errors[:n_recorded])
        traces["validation_error"].append(validation_counts[:n_recorded] / max(n_val, 1))
        if state[0] > 0:  # a non-finite J_0 (from huge initial weights) is repaired by the first solve
            _check_finite(state[1], int(state[0]), factor)
        if code != HK_BUDGET_SPENT:
            status = _COMPILED_CODES[code]
        elif state[0] >= max_iter:
            status = MAX_ITER
    return status


def _iterate_numpy(Y, factor, W, B, *, learning_rate, max_iter, tol, relative, stop_at_separation,
                   ridge, offset, can_prove, Y_val, update, absolute, regularized, irls_floor, trace=None):
    """The iteration in NumPy: every variant, dense or sparse (the reference for the compiled loop).

    With a ``trace`` it records ``a(k), b(k), e(k)`` as row ``k + 1`` (the lecture's numbering).
    """
    D = None
    iterative = isinstance(factor, IterativeLeastSquares)

    def residual(W, B):
        Z = np.asarray(Y @ W)
        return Z, (Z - B if offset == 0.0 else Z - offset - B)

    def criterion(E, W):
        J = float(E @ E) if D is None else float(E @ (D * E))
        return J + ridge * float(W[:-1] @ W[:-1]) if regularized else J

    Z, E = residual(W, B)
    J = criterion(E, W)
    early_stopping = Y_val is not None
    history = {"criterion": [J], "training_errors": [int(np.count_nonzero(Z <= 0))]}
    best_W, best_iter = None, 0
    if early_stopping:
        n_val = Y_val.shape[0]
        history["validation_error"] = [np.count_nonzero(np.asarray(Y_val @ W) <= 0) / n_val]
        best_W = W

    certificate = None
    k = 0
    J_prev = None
    W_prev = np.full_like(W, np.nan)  # no previous iterate yet
    while True:
        if trace is not None and trace.wants(k + 1):
            trace.record(k + 1, weights=W, margin_vector=B, error_vector=E)
        if stop_at_separation and Z.min() > 0:
            status = SEPARABLE
            break
        # E.max() first: the full proof test runs only when E is (nearly) non-positive.
        if can_prove and E.max() <= (_ITERATIVE_CANDIDATE_RTOL if iterative else _PROOF_RTOL) * B.max():
            if iterative and update == "margin":
                # YᵀD E = 0 holds only to the solve's tolerance: re-solve tightly, then check u = −D E.
                W = factor.solve(B if offset == 0.0 else B + offset, tol=CG_PROOF_RTOL)
                Z, E = residual(W, B)
                J = criterion(E, W)
            certificate = nonseparability_proof(E, B, D)
            if certificate is not None and iterative:
                certificate = _checked_certificate(Y, certificate)  # None: no proof passed, keep iterating
            if certificate is not None:
                status = NOT_SEPARABLE
                break
        # A fixed point: |E| <= tol (B + offset) moves no B_i by more than 2μ·tol of itself,
        # and (for tol < 1) Y W = B + E > 0 then holds already.  IRLS never makes E small (an
        # absolute-error fit): on separated data, its fixed point is W standing still.
        target = B + offset
        fixed_point = np.all((target > 0) & (np.abs(E) <= tol * target))
        status = stopping_status(relative=relative, absolute=absolute, fixed_point=fixed_point,
                                 separated=absolute and Z.min() > 0, W=W, W_prev=W_prev, tol=tol, J=J,
                                 J_prev=J_prev, k=k, max_iter=max_iter)
        if status is not None:
            break

        # μ(E + |E|) = 2μ max(E, 0): the margin grows only where Y W exceeds it.
        step = np.maximum(E, 0.0)
        step *= 2.0 * learning_rate
        if absolute:
            D = irls_weights(E, irls_floor)
            factor = factor.reweighted(D)
            iterative = isinstance(factor, IterativeLeastSquares)  # a reweighted system may need CG
        W_prev = W
        if update == "weights":
            W = W + learning_rate * factor.solve(np.abs(E))
        B = B + step
        if update == "margin":
            W = factor.solve(B if offset == 0.0 else B + offset)
        Z, E = residual(W, B)
        J_prev, J = J, criterion(E, W)
        k += 1
        _check_finite(J, k, factor)

        history["criterion"].append(J)
        history["training_errors"].append(int(np.count_nonzero(Z <= 0)))
        if early_stopping:
            error = np.count_nonzero(np.asarray(Y_val @ W) <= 0) / n_val
            history["validation_error"].append(error)
            if error < history["validation_error"][best_iter]:
                best_W, best_iter = W, k

    if iterative and status == CONVERGED and not factor.converged:
        status = MAX_ITER  # the last W-step did not reach its tolerance: no claim of convergence
    if trace is not None:
        trace.record(k + 1, final=True, weights=W, margin_vector=B, error_vector=E)
    history = {name: np.asarray(values) for name, values in history.items()}
    return _Run(W=W, B=B, k=k, status=status, factor=factor, certificate=certificate,
                history=history, best_W=best_W, best_iter=best_iter)


def _checked_certificate(Y, u):
    """``u``, or ``u`` without its rounding-level entries, whichever passes :func:`_passes_check` first; else ``None``.

    Entries of ``−E`` at rounding level (``<= sqrt(eps) · max u``) are noise of the solve,
    not part of the proof; one of them alone in a column fails that column's check.
    """
    cleaned = np.where(u > _ROUNDING_RTOL * u.max(), u, 0.0)
    for candidate in (u, cleaned):
        if _passes_check(Y, candidate):
            return candidate
    return None


def _passes_check(Y, u):
    """Whether ``u`` passes the per-column proof check of ``linsep._certificates`` on ``Y`` (``FIT_PROOF_RTOL``)."""
    if isinstance(Y, SignedDesign):  # the design's own X and labels, u placed on its rows: no copy of Y
        if Y.rows is None:
            residuals = proof_residuals(Y.X, Y.y, u)
        else:
            u_all, y_all = np.zeros(Y.X.shape[0]), np.ones(Y.X.shape[0])
            u_all[Y.rows], y_all[Y.rows] = u, Y.y
            residuals = proof_residuals(Y.X, y_all, u_all)
    else:
        residuals = design_proof_residuals(Y, u)
    return residuals is not None and bool(np.all(residuals <= FIT_PROOF_RTOL))


def irls_weights(E, irls_floor, largest=None):
    """IRLS weights of the absolute-error criterion: ``D_i = 1 / max(|E_i|, floor · max|E| + tiny)``.

    Łęski's reweighting for ``Σ|e_i|``: ``|e_i| = e_i² / |e_i|``; the relative
    floor keeps the weights finite where the error vanishes.  ``largest`` is
    ``max |E|`` over all samples when ``E`` is one block of them (default:
    ``E``'s own maximum).
    """
    abs_e = np.abs(E)
    if largest is None:
        largest = abs_e.max(initial=0.0)
    return 1.0 / np.maximum(abs_e, irls_floor * largest + np.finfo(float).tiny)


def stopping_status(*, relative, absolute, fixed_point, separated, W, W_prev, tol, J, J_prev, k, max_iter):
    """The rules checked after the verdicts: ``"converged"``, ``"max_iter"`` or ``None`` (go on).

    The fixed point (``relative``; for IRLS, on separated data, or ``W``
    standing still), then the change of ``J``, then the budget (see the
    module docstring).  ``separated`` is read only for IRLS (``absolute``).
    """
    if relative and (fixed_point if not absolute else separated and (
            fixed_point or weights_stand_still(W, W_prev, tol))):
        return CONVERGED
    if J_prev is not None:
        change = abs(J_prev - J)
        if (change <= tol * J_prev) if relative else (change < tol):
            return CONVERGED
    if k >= max_iter:
        return MAX_ITER
    return None


def _check_finite(J, k, factor):
    if not np.isfinite(J):  # pragma: no cover - guarded by the factorisation's rank test
        raise FloatingPointError(
            f"Ho–Kashyap diverged at iteration {k} (least-squares factorisation: {factor.method}); "
            "the data are too ill-conditioned for this solver")
