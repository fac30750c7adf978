"""Ho–Kashyap family: HK, modified HK, MHKS, MHKA, HKES, HKESA.

All six methods are one iteration on the augmented, sign-normalised matrix
:math:`Y = \\operatorname{diag}(y)\\,[X,\\ \\mathbf{1}]` (``linsep._core.signed_design``), differing in four switches.

Ho–Kashyap (HK) [1]_ [2]_ (Lauer & Bloch 2006, eqs. 6–9) minimises

.. math::

    J(W, B) = \\lVert Y W - B \\rVert^2 \\qquad \\text{subject to } B > 0

by alternating a least-squares solve for the weights and a projected gradient
step on the margin vector:

.. math::

    \\begin{aligned}
    W_k     &= Y^{+} B_k, \\qquad E_k = Y W_k - B_k, \\\\
    B_{k+1} &= B_k + \\mu \\, (E_k + |E_k|), \\qquad 0 < \\mu < 1,
    \\end{aligned}

from :math:`B_0 = b_0 \\mathbf{1}`.  Because :math:`Y^t E_k = 0`, a vector
:math:`E_k \\le 0` with :math:`E_k \\ne 0` proves that no :math:`W` has
:math:`Y W > 0` (Gordan's alternative): linsep keeps :math:`u = -E_k` as the
certificate.

Modified HK (the encyclopedia variant [1]_) replaces the weight solve by the
increment :math:`W_{k+1} = W_k + \\mu \\, Y^{+} |E_k|`; started from
:math:`W_0 = Y^{+} B_0` it produces the same iterates as HK
(:math:`Y^{+} E_k = 0`), and differs when started from an arbitrary
:math:`W_0`.

MHKS / MHKA (Łęski 2003, Lauer & Bloch eqs. 10–11) add a margin of one and a
regularisation :math:`C` on :math:`w` but not on the bias (:math:`\\tilde I`,
the identity with its last diagonal entry set to 0):

.. math::

    \\begin{aligned}
    J   &= (Y W - \\mathbf{1} - B)^t D \\, (Y W - \\mathbf{1} - B) + C \\, w^t w, \\\\
    W_k &= (Y^t D_k Y + C \\tilde I)^{-1} \\, Y^t D_k (B_k + \\mathbf{1}),
    \\end{aligned}

with :math:`D = I` (squared errors, factored once) or
:math:`D_k = \\operatorname{diag}(1 / |e_i|)`
(absolute errors, iteratively reweighted least squares, refactored at each
iteration; a relative floor keeps the weights finite).

HKES / HKESA (Lauer & Bloch §2.3–2.4, eqs. 12–14) run HK (squared, or
absolute with :math:`D_k` but no :math:`C`) and record the validation error
:math:`GE_k` at every iteration up to the HK stopping point :math:`k^*`; the
returned weights are :math:`W_{\\hat k}` with
:math:`\\hat k = \\operatorname{argmin}_k GE_k` (the first minimiser over *all*
:math:`k`, not "stop at the first rise").

Stopping rules
--------------
``stopping="paper"``: :math:`|J_k - J_{k-1}| < \\mathit{tol}`; ``tol=None`` gives
the paper's :math:`0.5 \\, b_0^2` (eq. 9 and §3.1). The raw criterion :math:`J`
grows with :math:`N` and with the scale of :math:`B`, so this absolute rule
stops early on large data sets and, on the four points of the lecture [3]_,
at :math:`k = 2` before the data are separated.

``stopping="relative"`` (default):

.. math::

    \\begin{aligned}
    &|J_k - J_{k-1}| \\le \\mathit{tol} \\cdot J_{k-1}, \\\\
    \\text{or } \\;
    &|E_k| \\le \\mathit{tol} \\cdot (B_k + o) \\ \\text{componentwise}
    \\end{aligned}

(:math:`o` the offset: 1 under a penalty :math:`C`, else 0; with IRLS, on
separated data, that or :math:`W` standing still, below). The first is
invariant to :math:`b_0`, to the data scale and to :math:`N`; it fires only
when :math:`J` shrinks by less than a fraction :math:`\\mathit{tol}` per step, so with ``tol = 1e-6`` separable data
practically always end separated (1 500 of 1 500 random thin-margin problems
in ``benchmarks/study_stopping_rule.py``), and it reproduces the paper's
benchmark errors. The second recognises the fixed point of separable data
(:math:`B` no longer moves, and :math:`Y W = B + E > 0`), where :math:`J` may keep
shrinking geometrically and the first would not fire: without it, HK that
does not stop at separation (HKES, MHKS) would run to ``max_iter`` on
well-separated training data.  With IRLS (MHKA, HKESA) the absolute-error fit
keeps some residuals clearly negative for good, so its fixed point is the
weights standing still,
:math:`\\max |W_k - W_{k-1}| \\le \\mathit{tol} \\cdot \\max |W_k|`, on separated
training data: :math:`E` never becomes small there (residuals hover at the
floor of the IRLS weights and :math:`B` creeps up by rounding-sized steps)
while :math:`J` falls by a few :math:`\\mathit{tol}` per step for thousands of
steps.

Whatever the rule, each iteration first checks the verdicts: all points
strictly separated (:math:`Y W > 0`, when ``stop_at_separation``) and, for
:math:`C = 0`, the non-separability proof :math:`E \\le 0,\\ E \\ne 0`.

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

import numpy as np

from linsep.solvers.ho_kashyap.rules import STOPPING_RULES, check_finite, default_tol, iterate_in_python
from linsep._core.linalg import IterativeLeastSquares, iteration_forcing, least_squares_solver
from linsep._core.result import CONVERGED, MAX_ITER, SEPARABLE, SolveResult
from linsep._core.signed_design import signed_design
from linsep._core.threads import serial_blas_for
from linsep.designs.memory import as_design
from linsep.solvers.ho_kashyap.segments import SEGMENT_STEPS, iterate_compiled
from linsep.solvers.ho_kashyap.params import HKParams
from linsep.solvers.ho_kashyap.plan import HKPlan

__all__ = ["ho_kashyap", "STOPPING_RULES"]

COMPILED_MIN_ENTRIES = 256
"""The smallest problem (entries of ``Y`` and ``Y_val`` together) that ``driver="auto"`` hands to the compiled segment.

Below it a whole fit runs the Python driver: a Python iteration costs tens of
microseconds on such data, so even a thousand of them cost less than loading
the compiled segment from numba's disk cache, and far less than compiling it
on a machine that has never run it (a newcomer's first fit, the lecture's
four points).  The paper's smallest fits (titanic's, 100 × 4 = 400 entries
while ``C`` is tuned on two thirds of its 150 training rows) are above it,
so the benchmark protocol runs the compiled loop as before.
"""

COMPILED_IRLS_MAX_COLUMNS = 100
"""The widest ``Y`` (columns, bias included) whose IRLS fits (``loss="absolute"``) ``driver="auto"`` compiles.

Each IRLS iteration refactors ``YᵀDY``: the compiled segment does it with a
scalar Cholesky loop, the Python driver with LAPACK, which is as fast at
100 columns and faster beyond (``benchmarks/bench_hk_drivers.py``).
"""


_DEFAULTS = HKParams()  # each default once, in the parameter table (params.HK_PARAMETERS)


def ho_kashyap(
    Y,
    *,
    learning_rate=_DEFAULTS.learning_rate,
    b0=_DEFAULTS.b0,
    max_iter=_DEFAULTS.max_iter,
    tol=_DEFAULTS.tol,
    stopping=_DEFAULTS.stopping,
    stop_at_separation=_DEFAULTS.stop_at_separation,
    update=_DEFAULTS.update,
    C=_DEFAULTS.C,
    loss=_DEFAULTS.loss,
    irls_floor=_DEFAULTS.irls_floor,
    initial_weights=None,
    initial_margin=None,
    Y_val=None,
    n_iter_no_change=_DEFAULTS.n_iter_no_change,
    validation_tol=_DEFAULTS.validation_tol,
    record_history=False,
    trace=None,
    gram=None,
    plan=None,
):
    """Run the Ho–Kashyap iteration on ``Y`` (see the module docstring).

    Parameters
    ----------
    Y : ndarray, sparse matrix or ``linsep._core.signed_design.SignedDesign`` of shape (N, p)
        Sign-normalised augmented design matrix, bias column last.  A
        ``SignedDesign`` larger than the cache is never formed: the compiled
        loop reads its ``X`` (float32 or float64) and labels directly.
    learning_rate : float
        :math:`\\mu` in :math:`B_{k+1} = B_k + \\mu \\, (E_k + |E_k|)`; :math:`0 < \\mu < 1`.
    b0 : float
        Initial margin :math:`B_0 = b_0 \\mathbf{1}` (ignored if ``initial_margin`` is given).
    max_iter : int
        Largest number of margin updates.
    tol : float or None
        Tolerance of the stopping rule; ``None`` with ``stopping="paper"``
        means the paper's :math:`0.5 \\, b_0^2`.
    stopping : {"relative", "paper"}
        :math:`|J_k - J_{k-1}| \\le \\mathit{tol} \\cdot J_{k-1}` or the paper's
        :math:`|J_k - J_{k-1}| < \\mathit{tol}`.
    stop_at_separation : bool
        Stop as soon as :math:`Y W > 0` (the lecture's rule).
    update : {"margin", "weights"}
        :math:`W = Y^{+} B` (HK) or :math:`W \\leftarrow W + \\mu \\, Y^{+} |E|` (modified HK).
    C : float or None
        ``None``: plain HK (target ``B``).  A number ``>= 0``: Łęski's
        modified HK, target :math:`\\mathbf{1} + B` and penalty :math:`C \\, w^t w` (MHKS / MHKA).
    loss : {"squared", "absolute"}
        :math:`D = I` or the IRLS weights
        :math:`D_k = \\operatorname{diag}\\bigl(1 / \\max(|e_i|, \\mathit{floor})\\bigr)`.
    irls_floor : float
        Floor of :math:`|e_i|` relative to :math:`\\max |e|`.
    initial_weights, initial_margin : ndarray or None
        Start from a given :math:`W_0` / :math:`B_0` (the lecture's example starts at
        :math:`\\mathbf{a} = \\mathbf{1}`, :math:`\\mathbf{b} = \\mathbf{1}`).
    Y_val : ndarray, sparse matrix, SignedDesign of shape (M, p) or None
        Sign-normalised validation matrix: enables early stopping (HKES).
    n_iter_no_change : int or None
        With ``Y_val``: stop once the validation error has not improved (by
        more than ``validation_tol``) for this many iterates
        (``linsep.solvers.ho_kashyap.rules.patience_spent``, status ``converged``);
        ``None``: the paper's rule, :math:`\\hat k` over every iterate up to the HK
        stopping point.
    validation_tol : float
        Least fall of the validation error (a fraction) that counts as an
        improvement for ``n_iter_no_change``.
    record_history : bool
        Keep per-iteration traces (always kept with ``Y_val``).
    trace : trace recorder or None
        Also record ``weights`` ``a(k)``, ``margin_vector`` ``b(k)`` and
        ``error_vector`` ``e(k)`` per iteration (rows ``k = 1 … n_iter``,
        the lecture's numbering); a traced run takes the NumPy loop.
    gram : ndarray of shape (p, p) or None
        :math:`Y^t Y` if known (one-vs-rest problems on the same features share it:
        the signs of the rows do not change it); saves its :math:`O(N p^2)` product.
    plan : HKPlan, dict or None, default=None
        The execution plan: which path the solve takes and what work already done it is handed, one
        ``linsep.solvers.ho_kashyap.plan.HKPlan`` (or a mapping of its fields): the driver, the compiled
        segment's layout and threads (and wrappers observing it), the inexact W-steps, and the estimators' shared
        work (the first weights of one-vs-rest problems, a cross-validation's reference error and lockstep).
        It never changes what is solved.  ``None``: every choice made from the data.  The path that ran is
        recorded in ``extra["plan"]``.

    Returns
    -------
    SolveResult
        ``weights`` (bias last; float32 for float32 ``Y``, else float64),
        ``margin`` ``B`` (the same type), ``status``, ``certificate``
        (:math:`u \\ge 0` with :math:`Y^t u = 0` for ``not_separable``), ``n_iter`` — the
        index :math:`k` of the final iterate :math:`W_k`, counted from :math:`k = 1` for
        the first weights as in the paper and the lecture (so ``n_iter - 1``
        margin updates were made) — ``history`` with ``criterion``,
        ``training_errors`` and ``validation_error`` (entry :math:`k - 1` belongs
        to :math:`W_k`), ``best_iter`` :math:`\\hat k` for early stopping, and ``extra``
        with the factorisation and ``plan`` (driver, factorisation, dtype,
        threads).

    See Also
    --------
    linsep.HoKashyapClassifier : The estimator over this solver (labels, one-vs-rest, validation split).
    linsep.solvers.mse.mse : One least-squares solve for a fixed margin vector.

    Notes
    -----
    Dense data with the margin update (HK, MHKS, MHKA, HKES, HKESA) run in a
    compiled loop (``linsep.solvers.ho_kashyap.loops.ho_kashyap_segment``; one pass over
    ``Y`` per iteration for data larger than the cache, two cache-resident
    passes below; IRLS adds the weighted Gram matrix and its Cholesky
    factor).  A pass by rows over at least ``linsep._core.threads.PARALLEL_MIN_ENTRIES``
    entries is split over threads (``linsep._core.threads.pass_threads``).
    float32 data are read as float32 (the vectors ``B``, ``E`` are kept in
    float32; the pass by rows forms each row's products and 16-row blocks of
    :math:`Y^t (B + \\mathit{offset})` in float32 and every other sum in float64,
    ``linsep.solvers.ho_kashyap.rows``; the factor and ``W`` are float64, and ``W`` is
    rounded to float32 on return).  Sparse ``Y`` or ``Y_val``, modified HK, the eigh factorisation
    (unless ``plan.singular`` is ``"eigh"``: then its compiled W-step applies :math:`M M^t`, :math:`M` the
    ``LeastSquaresFactor.spectral_factor``),
    rank-deficient ``Y`` with ``initial_weights`` or with IRLS, and IRLS
    systems that fail the Cholesky pivot test run the NumPy loop below,
    which is also the reference the compiled loop is tested against.

    Wide ``Y`` (``p = d + 1`` above ``linsep._core.linalg._DIRECT_MAX_COLUMNS``
    = 2000, e.g. sparse text data) run the NumPy loop with the matrix-free
    W-step ``linsep._core.linalg.IterativeLeastSquares``: conjugate
    gradients on the normal equations, Jacobi-preconditioned, warm-started
    from the previous solution (IRLS only changes ``D``: nothing is
    refactored), each solve stopping at the relative residual
    :math:`\\tau = 10^{-10}` (``linsep._core.linalg.CG_RTOL``).  On large ``Y``
    (``linsep._core.linalg.iteration_forcing``: from :math:`2^{16}` stored entries) the
    margin update with squared errors solves inexactly inside the
    iteration: a W-step stops once its residual is :math:`\\eta = 10^{-2}`
    (``linsep._core.linalg.CG_FORCING``) times the change :math:`Y^t (B_k - B_{k-1})`
    of its right-hand side, so the error of :math:`W_k` is a fraction :math:`\\eta` of
    the step and vanishes as the iteration settles; the returned weights
    (and an early-stopping choice) are then re-solved to :math:`\\tau` for their
    margins, except separating weights, which are the verdict's witness.
    With validation rows (early stopping) the first W-step, from zero, is
    solved to :math:`\\tau`: its validation error is recorded, and an inexact
    solve would leave a fraction :math:`\\eta` of all of :math:`W_1` wrong.
    Exact W-steps never raise :math:`J`; where an inexact one does (by more
    than a thousandth: on ill-conditioned :math:`Y` the solves' error can feed
    back into :math:`B` and grow), every later W-step of the run is solved to
    :math:`\\tau`.  ``extra`` then has ``cg_iterations``, ``cg_solves`` and
    ``cg_residual``.  How :math:`\\tau` enters the verdicts:

    * ``separable`` is checked on the returned weights (:math:`Y W > 0`);
      :math:`\\tau` plays no part.
    * ``not_separable`` needs :math:`Y^t D E = 0`, which a solve gives only to
      :math:`\\lVert Y^t D E \\rVert \\le \\tau \\lVert Y^t D (B + \\mathit{offset}) \\rVert`.
      Once :math:`\\max E \\le 10^{-6} \\max B` (a *candidate*; the direct
      path's :math:`10^{-10}` would miss proofs blurred by the solve's error;
      none while :math:`Y W > 0`, where no proof exists),
      :math:`W` is re-solved at :math:`\\tau = 10^{-14}`
      (``linsep._core.linalg.CG_PROOF_RTOL``) and :math:`E` recomputed;
      :math:`u = -D E` is accepted only if :math:`E \\le 0` to rounding, as on
      the direct path, **and** :math:`u` (or, failing that, :math:`u` with its
      entries below :math:`\\sqrt{\\varepsilon} \\max u` — rounding noise — set
      to 0) passes the per-column check of ``linsep._core.certificates``,
      :math:`|\\sum_i u_i Y_{ij}| \\le \\mathit{rtol} \\sum_i u_i |Y_{ij}|`
      (``FIT_PROOF_RTOL`` = ``1e-6``) for every column :math:`j`.  Otherwise the iteration goes on (and may end
      ``converged``): no proof is claimed that was not checked.
    * ``converged``: the stopping rules read :math:`J` (which carries the solve's
      error to second order) and :math:`E`; if the last solve (the re-solve of
      the returned weights after inexact W-steps) stopped short of :math:`\\tau`
      (iteration limit, rounding floor), the status is ``max_iter``.
    * Weights: with :math:`C = 0` the preconditioned solves give the minimum
      :math:`M`-norm solutions, whose :math:`Y W` — hence :math:`E`, :math:`B`,
      :math:`J` and every verdict — are those of the minimum-norm
      :math:`Y^{+} B`; the returned weights are projected on the row space of
      :math:`Y` by one unpreconditioned solve, so they are :math:`Y^{+} B` as
      on the direct path, to :math:`\\tau`.  If that solve stops short of
      :math:`\\tau`, the unprojected weights (the same :math:`Y W`) are
      returned and a ``converged`` status becomes ``max_iter``.
    * With validation rows and :math:`C = 0` every W-step is unpreconditioned
      CG instead, whose iterates stay in the row space of :math:`Y`: each
      :math:`W_k` is :math:`Y^{+} B_k` itself, as the validation errors that
      early stopping reads must be (a null-space component changes
      :math:`Y_{val} W` though not :math:`Y W`), and no projection follows.

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
    >>> from linsep.solvers.ho_kashyap.solver import ho_kashyap
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
    tol = default_tol(tol, stopping, b0)
    if max_iter < 0 or max_iter != int(max_iter):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    max_iter = int(max_iter)
    plan = HKPlan.of(plan)
    design = as_design(Y, plan.by_columns_max_entries)
    n_samples, n_cols = design.shape
    for name, value, expected in (("initial_weights", initial_weights, n_cols),
                                  ("initial_margin", initial_margin, n_samples)):
        if value is not None and (np.shape(value) != (expected,) or not _all_finite(value, design)):
            raise ValueError(f"{name} must be {expected} finite numbers, got shape {np.shape(value)}")
    if n_iter_no_change is not None and (n_iter_no_change < 1 or n_iter_no_change != int(n_iter_no_change)):
        raise ValueError(f"n_iter_no_change must be None or a positive integer, got {n_iter_no_change!r}")
    if Y_val is not None and (Y_val.ndim != 2 or Y_val.shape[0] == 0 or Y_val.shape[1] != n_cols):
        raise ValueError(f"Y_val must have at least one row and {n_cols} columns, got shape {Y_val.shape}")
    Y_val = as_design(Y_val, plan.by_columns_max_entries)

    ridge, offset = _ridge_and_offset(C)
    B = design.constant_vector(b0) if initial_margin is None else design.vector(initial_margin)
    # With early stopping the validation error of every iterate is recorded, and HKES reads it as that of
    # W_k = Y⁺(B_k + offset).  On the iterative path (wide Y) with C = 0 the W-steps then run in the row space
    # of Y (unpreconditioned CG): a preconditioned solve has the same Y W but another null-space component,
    # hence other validation scores.  Without validation rows only Y W matters until the end, and the faster
    # preconditioned solves are mapped to the minimum norm once (_finish).
    records_validation = Y_val is not None
    # plan.singular = "eigh" (an in-memory design): a singular system without C is factored from its Gram
    # matrix, never from a dense copy of Y (HoKashyapClassifierCV's runs on views of large X)
    singular = {"singular": "eigh"} if plan.singular == "eigh" else {}
    factor = design.least_squares_solver(ridge, gram=gram, minimum_norm=records_validation, **singular)
    if isinstance(factor, IterativeLeastSquares) and update == "margin" and loss == "squared":
        # W_k = (YᵀY + CĨ)⁻¹Yᵀ(B_k + offset) for a fixed system: inexact solves inside the iteration,
        # the returned weights re-solved in full (rules.polished)
        factor.forcing = iteration_forcing(factor.Y, plan.cg_forcing)
        # Y W of each inexact W-step from CG's own products Y d: the pass after it makes no product of its own
        factor.track_fitted = factor.forcing > 0
    with serial_blas_for(factor):  # the whole iteration, when the sparse products run on threads
        # W_1 (often k̂ on wide data) in full where its validation error is recorded: an inexact first solve,
        # from zero, would stop at the forcing share of all of W_1, not of a small step
        first_solve = {"tol": factor.tol} if records_validation and isinstance(factor, IterativeLeastSquares) else {}
        shared_first = (plan.first_weights is not None and initial_weights is None
                        and isinstance(factor, IterativeLeastSquares))
        from_image = (plan.first_image is not None and initial_weights is None and initial_margin is None
                      and getattr(factor, "method", None) in ("cholesky", "eigh")
                      and getattr(factor, "sample_weight", None) is None)
        if initial_weights is not None:  # (a device design's own W_0, weighted IRLS's, stays where it is)
            W = design.solver_weights(initial_weights if _on_device(initial_weights, design) else
                                      np.array(initial_weights, dtype=float))
        elif shared_first:
            W = factor.adopt(plan.first_weights)
        elif from_image:  # B_0 = b0·1: Yᵀ(B_0 + offset) = (b0 + offset) Yᵀ1, given
            W = factor.solve_normal((b0 + offset) * np.asarray(plan.first_image, dtype=float))
        else:
            W = design.solve_target(factor, B, offset, **first_solve)
        first = {"first_solve": "shared"} if shared_first else {"first_solve": "image"} if from_image else {}
        options = dict(
            learning_rate=learning_rate, max_iter=max_iter, tol=tol, relative=stopping == "relative",
            stop_at_separation=stop_at_separation, ridge=ridge, offset=offset,
            # Without a penalty, Yᵀ D E = 0 at every iterate, so E <= 0 is a proof.
            can_prove=ridge == 0.0, Y_val=Y_val, n_iter_no_change=n_iter_no_change, validation_tol=float(validation_tol),
            validation_reference=np.inf if plan.validation_reference is None else float(plan.validation_reference),
        )
        absolute = loss == "absolute"
        if plan.lockstep is not None:
            ticket = _left_to_lockstep(*plan.lockstep, design, factor, W, B, plan, options, absolute=absolute,
                                       update=update, traced=trace is not None,
                                       finish=lambda run, driver, threads: _finish(
                                           design, run, options, update=update, initial_weights=initial_weights,
                                           keep_history=record_history or trace is not None, trace=trace,
                                           plan={"driver": driver, "factorization": factor.method,
                                                 "dtype": design.dtype.name, "threads": threads, "lockstep": True,
                                                 **first}))
            if ticket is not None:
                return ticket
        run, driver, threads = _compiled_run(design, factor, W, B, plan, options, absolute=absolute, update=update,
                                             irls_floor=irls_floor, traced=trace is not None,
                                             initial_weights=initial_weights)
        if run is None:  # not covered, or an IRLS system needed more than a Cholesky factor
            driver = "python" if driver is None else driver + ", then python"
            run = iterate_in_python(design, factor, W, B, update=update, absolute=absolute, regularized=C is not None,
                           irls_floor=irls_floor, trace=trace, polish=plan.polish, **options)
        return _finish(design, run, options, update=update, initial_weights=initial_weights,
                       keep_history=record_history or trace is not None, trace=trace,
                       plan={"driver": driver, "factorization": factor.method, "dtype": design.dtype.name,
                             "threads": threads, **first})


def _on_device(value, design):
    """Whether ``value`` is an array of a device design's namespace (array API), not host numbers."""
    return getattr(design, "xp", np) is not np and hasattr(value, "shape") and \
        not isinstance(value, (np.ndarray, np.generic))


def _all_finite(value, design):
    """Whether every entry of ``value`` is finite, read where it lives (a device vector: one scalar copied)."""
    if not _on_device(value, design):
        return bool(np.all(np.isfinite(value)))
    xp = design.xp
    return bool(design.read_scalars([xp.all(xp.isfinite(value))])[0])


def _ridge_and_offset(C):
    """``(C, 1)`` for Łęski's penalised HK (target ``1 + B``), ``(0, 0)`` for plain HK (``C=None``, target ``B``)."""
    return (0.0, 0.0) if C is None else (float(C), 1.0)


def shared_first_weights(X, targets, rows=None, *, C=None, b0=_DEFAULTS.b0):
    """The first W-steps :math:`W_1` of the one-vs-rest problems of a fit, in one lockstep CG solve.

    Problem :math:`k` has :math:`Y_k = \\operatorname{diag}(y_k) [X_R, \\mathbf{1}]` and starts with
    :math:`W_1 = (Y_k^t Y_k + C \\tilde I)^{-1} Y_k^t (b_0 + \\mathit{offset}) \\mathbf{1}`.  Its labels square to 1, so
    :math:`Y_k^t Y_k = [X_R, \\mathbf{1}]^t [X_R, \\mathbf{1}]` is the same for every problem and
    :math:`Y_k^t \\mathbf{1} = [X_R, \\mathbf{1}]^t y_k`: one solve with the problems' labels as its columns
    (:meth:`linsep._core.linalg.IterativeLeastSquares.solve`, one pass over ``X`` per CG step for all of them)
    gives every :math:`W_1`, to the tolerance each problem's own solve would meet, and with ``C = None`` in the
    row space, as :func:`ho_kashyap`'s solves with validation rows are.  For ``HKPlan.first_weights``.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (N, d)
    targets : ndarray of shape (len(rows), K)
        The problems' labels ``±1``, one column each, on the fitted rows.
    rows : ndarray or None
        The fitted rows of ``X`` (``None``: all).
    C, b0 : as in :func:`ho_kashyap`.

    Returns
    -------
    list of ndarray or None
        :math:`W_1` per problem; ``None`` on the direct path (small ``p``: each problem factors its own
        system, cheap) or if the solve stopped short of its tolerance (each problem then solves its own).
    """
    ridge, offset = _ridge_and_offset(C)
    A = signed_design(X, np.ones(np.shape(targets)[0]), rows)  # [X_R, 1]
    solver = least_squares_solver(A, None, ridge, minimum_norm=True)
    if not isinstance(solver, IterativeLeastSquares):
        return None
    W = solver.solve((b0 + offset) * np.asarray(targets, dtype=float), tol=solver.tol)
    return list(W.T) if solver.exact else None


def _compiled_covers(design, plan, options, *, absolute, update, traced):
    """Whether the compiled segment covers the fit: the margin update on dense in-memory data, untraced, and
    (driver ``"auto"``) a problem large enough to pay for it."""
    Y_val = options["Y_val"]
    if (plan.driver == "python" or traced or update != "margin" or not design.offers_compiled
            or (Y_val is not None and not Y_val.offers_compiled)):
        return False
    entries = design.size + (0 if Y_val is None else Y_val.size)
    # A toy problem (the Python driver is done before compiled code would load), or wide IRLS (LAPACK
    # refactors YᵀDY faster than the compiled loop's Cholesky).
    return not (plan.driver == "auto" and (entries < COMPILED_MIN_ENTRIES
                                              or (absolute and design.shape[1] > COMPILED_IRLS_MAX_COLUMNS)))


def _compiled_factor(factor, plan, *, absolute):
    """``(matrix, spectral, driver)``: the factor the compiled segment applies to ``design`` itself, else ``None``.

    A Cholesky factor ``L`` (``spectral`` False), or an eigh factor's ``M`` (``spectral`` True, squared
    errors; under driver ``"auto"`` only with ``plan.singular = "eigh"``).  (The SVD of a rank-deficient
    ``Y`` iterates on another design, its rotated basis: :func:`_compiled_run`.)
    """
    if factor.method == "cholesky":
        return factor.cholesky_factor, False, "compiled"
    if factor.method == "eigh" and not absolute and (plan.driver == "compiled" or plan.singular == "eigh"):
        # (YᵀY + CĨ)⁺ = M Mᵀ with M = S V Λ^{-1/2}: the compiled W-step applies M (Mᵀ g), the Python
        # driver's S V Λ⁻¹ Vᵀ S g regrouped (the same iterates to rounding), in the original coordinates (so
        # starting weights need no basis).  Under driver "auto" only where the caller factors singular
        # systems from their Gram matrices (HoKashyapClassifierCV's runs on views of large X): an eigh
        # factor of a formed Y (a penalised system on collinear columns, the IDA "image" set) keeps the Python
        # driver its published results were computed with.
        return factor.spectral_factor, True, "compiled (eigh)"
    return None


def _left_to_lockstep(lockstep, fold, design, factor, W, B, plan, options, *, absolute, update, traced, finish):
    """A ticket of ``lockstep`` for this run, if the compiled segment would iterate it by rows on the lockstep's ``X``.

    Squared errors only (IRLS refactors per run), the fold's own rows, and the custom ``segment`` or
    ``threads`` of a ``plan`` keep the run alone.
    """
    if absolute or plan.segment is not None or plan.threads is not None or options["Y_val"] is None:
        return None
    if not _compiled_covers(design, plan, options, absolute=absolute, update=update, traced=traced):
        return None
    compiled = _compiled_factor(factor, plan, absolute=absolute)
    if compiled is None or not lockstep.accepts(design, options["Y_val"], fold):
        return None
    matrix, spectral, driver = compiled
    return lockstep.add(fold, matrix, spectral, W, B, factor=factor, options=options,
                        n_val=options["Y_val"].shape[0], check_finite=check_finite,
                        finish=lambda run: finish(run, driver, lockstep.threads))


def _compiled_run(design, factor, W, B, plan, options, *, absolute, update, irls_floor, traced, initial_weights):
    """The compiled segment where it covers the fit: ``(run or None, driver name or None, threads)``.

    It covers the margin update on dense in-memory data (and validation data), untraced, with a
    Cholesky factor, or (squared errors, no starting weights) the SVD of a rank-deficient ``Y``, or (squared
    errors; under driver ``"auto"`` with ``plan.singular = "eigh"``) an eigh factor.
    """
    if not _compiled_covers(design, plan, options, absolute=absolute, update=update, traced=traced):
        return None, None, 1
    Y_val = options["Y_val"]
    compiled = dict(options, segment_steps=SEGMENT_STEPS if plan.segment_steps is None else plan.segment_steps,
                    threads=plan.threads,
                    pivot_tol=plan.pivot_tol, check_finite=check_finite, irls_floor=irls_floor,
                    segment=plan.segment, blas_limit=plan.blas_limit)
    direct = _compiled_factor(factor, plan, absolute=absolute)
    if direct is not None:
        matrix, spectral, driver = direct
        run, threads = iterate_compiled(design, matrix, W, B, factor=factor, absolute=absolute, spectral=spectral,
                                        **compiled)
        return run, driver, threads
    if factor.method == "svd" and not absolute and initial_weights is None:
        # Rank-deficient Y = U S Vᵀ: iterate on Ỹ = U S, whose Gram matrix S² has the
        # Cholesky factor S.  Ỹ⁺ r = S⁻¹Uᵀr are the coordinates of Y⁺ r = V S⁻¹Uᵀr in
        # the basis V, so the iterates are HK's own, mapped back by W = V c.
        U, s, Vt = factor.svd_factors
        compiled["Y_val"] = None if Y_val is None else Y_val.rotated(Vt.T)
        rotated = as_design(U * s, design.by_columns_max_entries)
        run, threads = iterate_compiled(rotated, np.diag(s), Vt @ W, B, factor=factor, absolute=False, **compiled)
        run.W = Vt.T @ run.W
        run.best_W = None if run.best_W is None else Vt.T @ run.best_W
        return run, "compiled (svd basis)", threads
    return None, None, 1


def _finish(design, run, options, *, update, initial_weights, keep_history, trace, plan):
    """The returned weights (minimum norm for iterative solves), the checked status, the :class:`SolveResult`."""
    Y_val = options["Y_val"]
    early_stopping = Y_val is not None
    weights = run.best_W if early_stopping else run.W
    projected = True  # the weights are the minimum-norm ones the status promises
    if isinstance(run.factor, IterativeLeastSquares) and options["ridge"] == 0.0 and not run.factor.minimum_norm:
        # The preconditioned solves left W in M⁻¹·(row space); W_k = Y⁺ r is its projection on the row
        # space.  Starting weights (k = 0, or the base of modified HK's increments) are kept as given.
        # (Row-space solves, with early stopping, need no map: their iterates are Y⁺ r already.)
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
    weights = design.host_weights(weights, design.dtype)
    status = run.status
    _, smallest, finite = design.count_nonpositive(weights)
    if not finite:  # e.g. from starting weights near the float64 limit
        raise FloatingPointError("Ho–Kashyap's weights overflow the scores Y W; rescale the data or the starting weights")
    if smallest > 0:
        status = SEPARABLE
    elif status == SEPARABLE:  # early stopping picked an iterate that does not separate
        status = CONVERGED
    if status == CONVERGED and not projected:
        status = MAX_ITER  # not the minimum-norm weights that convergence stands for
    keep_history = keep_history or early_stopping
    extra = {**run.factor.stats, "plan": plan}
    if trace is not None and early_stopping:
        # The trace counts the errors on every row given to fit (held-out ones included), as the model's
        # predictions do; the warning of unregularised fits reads those on the fitted rows alone.
        extra["fitted_errors"] = run.fitted_errors
        if run.best_iter != run.k:  # the trace ends with the returned iterate k̂ (the lecture's number k̂ + 1)
            trace.record_returned(run.best_iter + 1, weights=weights, margin_vector=design.host(run.best_B),
                                  error_vector=run.best_E)
    history = run.history if trace is None else trace.merge_into(run.history)
    return SolveResult(
        weights=weights,
        n_iter=run.k + 1,
        status=status,
        margin=design.host(run.B, design.dtype),
        certificate=run.certificate,
        history=history if keep_history else None,
        best_iter=run.best_iter + 1 if early_stopping else None,
        extra=extra,
    )
