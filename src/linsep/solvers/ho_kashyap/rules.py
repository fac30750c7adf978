"""The Ho–Kashyap rules, written once, and the Python driver that applies them at each iterate.

Every Ho–Kashyap driver calls these rules: the compiled segment
(:func:`linsep.solvers.ho_kashyap.loops.ho_kashyap_segment`, through
:func:`linsep.solvers.ho_kashyap.segments.iterate_compiled`) and the Python driver
:func:`iterate_in_python`, below, whatever design (in memory, array API or dask) it runs on.  They are
compiled with numba so that the compiled segment can inline them; the Python driver runs the same source as
plain Python (:data:`python`).  The driver lives beside them so that an iteration reads in one place: take
the next iterate from the design's step (:func:`linsep.solvers.ho_kashyap.step.hk_iterates`), apply the
rules, record; both drivers return an :class:`HKRun`.

The rules (Lauer & Bloch 2006, eq. 9 and §3.1, and the module docstring of
:mod:`linsep.solvers.ho_kashyap`), checked in this order at each iterate
``W_k``: all points strictly separated; the proof ``E_k <= 0, E_k != 0``
(:func:`proof_test`); the fixed point and the change of ``J``
(:func:`stop_code`); with validation rows, early stopping's patience
(:func:`validation_improved`, :func:`patience_spent`); the iteration budget
(each driver counts its own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
from numba import njit

from linsep._core.certificates import signed_errors
from linsep._core.linalg import CG_PROOF_RTOL, IterativeLeastSquares
from linsep._core.result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE
from linsep.designs.weights import WeightedValidation
from linsep.solvers.ho_kashyap.step import hk_iterates, hk_pass

__all__ = [
    "HK_BUDGET_SPENT",
    "HK_CONVERGED",
    "HK_ILL_CONDITIONED",
    "HK_NOT_SEPARABLE",
    "HK_SEPARABLE",
    "HKRun",
    "NO_PATIENCE",
    "PROOF_RTOL",
    "STOPPING_RULES",
    "check_finite",
    "default_tol",
    "is_nonseparability_proof",
    "iterate_in_python",
    "patience_code",
    "patience_spent",
    "polished",
    "proof_test",
    "stop_code",
    "validation_improved",
    "weights_stand_still",
]

# Codes of the rules and of the compiled segment (the solver maps them to the status strings).
HK_BUDGET_SPENT, HK_SEPARABLE, HK_NOT_SEPARABLE, HK_CONVERGED, HK_ILL_CONDITIONED = 0, 1, 2, 3, 4

STOPPING_RULES = ("relative", "paper")

# E may hold rounding noise where the exact value is 0 (points on their
# margin); a non-separability proof allows positive components this small,
# relative to the margin vector.
PROOF_RTOL = 1e-10


def default_tol(tol, stopping, b0):
    """``tol``, or for ``None`` the paper's ``0.5 b_0²`` (``stopping="paper"``, eq. 9) and ``1e-6`` otherwise."""
    if tol is None:
        return 0.5 * b0**2 if stopping == "paper" else 1e-6
    return tol


@njit(cache=True, nogil=True)
def proof_test(max_e, min_e, max_b, rtol):
    """``E <= 0`` and ``E != 0`` up to rounding, from ``max E``, ``min E`` and ``max |B|``.

    ``E`` may hold rounding noise where the exact value is 0 (points on their
    margin): positive entries up to ``rtol · max|B|`` are allowed, and some
    entry must be clearly negative (below ``-1e3 · rtol · max|B|``).
    With ``Yᵀ D E = 0`` such an ``E`` gives the certificate ``u = −D E``
    (Gordan's alternative).
    """
    if max_b == 0.0:
        return False
    return max_e <= rtol * max_b and min_e < -1e3 * rtol * max_b


@njit(cache=True, nogil=True)
def is_nonseparability_proof(E, B, rtol):
    """:func:`proof_test` on the vectors ``E`` and ``B``."""
    scale = 0.0
    for i in range(B.shape[0]):
        scale = max(scale, abs(B[i]))
    largest, smallest = -np.inf, np.inf
    for i in range(E.shape[0]):
        largest = max(largest, E[i])
        smallest = min(smallest, E[i])
    return proof_test(largest, smallest, scale, rtol)


def _weights_stand_still(W, W_prev, tol):
    """``max|W − W_prev| <= tol · max|W|`` (false while ``W_prev`` holds NaN: no previous iterate).

    The IRLS fixed point on separated data: its absolute-error fit keeps some
    residuals clearly negative and others hovering at the floor of its
    weights, so ``E`` never becomes small and ``B`` creeps upwards by
    rounding-sized steps, while ``J`` falls by a few ``tol`` per step for
    thousands of steps; the iterate itself no longer moves.
    """
    step, size = 0.0, 0.0
    for j in range(W.shape[0]):
        change = abs(W[j] - W_prev[j])
        if not change <= step:  # NaN propagates (max() would drop it)
            step = change
        size = max(size, abs(W[j]))
    return step <= tol * size


def _stop_code(relative, reweighted, fixed_point, separated, weights_still, tol, J, J_prev):
    """The rules checked after the verdicts: :data:`HK_CONVERGED`, or :data:`HK_BUDGET_SPENT` (go on).

    ``relative``: the fixed point ``|E| <= tol (B + offset)`` (squared errors)
    or, for IRLS (``reweighted``), on separated data, that or ``W`` standing
    still (``weights_still``, :func:`weights_stand_still`); then
    :math:`|J_k - J_{k-1}| \\le \\mathit{tol} \\cdot J_{k-1}`.  ``stopping="paper"``:
    :math:`|J_k - J_{k-1}| < \\mathit{tol}`.  ``J_prev`` is NaN at :math:`k = 0` (no change of
    :math:`J` yet).
    """
    if relative and (fixed_point if not reweighted else separated and (fixed_point or weights_still)):
        return HK_CONVERGED
    if not np.isnan(J_prev):
        change = abs(J_prev - J)
        if (change <= tol * J_prev) if relative else (change < tol):
            return HK_CONVERGED
    return HK_BUDGET_SPENT


NO_PATIENCE = -1
"""``n_iter_no_change`` as the compiled segment receives ``None``: the paper's rule, ``k̂`` over all ``k``."""


def patience_code(n_iter_no_change):
    """``n_iter_no_change`` as an int for the compiled segment (:data:`NO_PATIENCE` for ``None``)."""
    return NO_PATIENCE if n_iter_no_change is None else int(n_iter_no_change)


@njit(cache=True, nogil=True)
def validation_improved(error, best_error, reference, validation_tol):
    """Whether the validation error :math:`GE_k` improves, :math:`GE_k < \\min(\\min_{j < k} GE_j, r) - \\mathit{validation\\_tol}`.

    Errors are fractions of the validation rows.  An improvement resets the
    patience (:func:`patience_spent`); the kept iterate ``k̂`` is still the
    first minimiser, whatever ``validation_tol``.  The reference :math:`r`
    (``inf``: none) is an error another run reached on the same rows: a run that
    does not come below it within its patience stops then, however its own
    curve falls (``HoKashyapClassifierCV``'s ``early_exit``).
    """
    return error < min(best_error, reference) - validation_tol


@njit(cache=True, nogil=True)
def patience_spent(k, last_improvement, n_iter_no_change):
    """Early stopping's patience: ``k − k_improved >= n_iter_no_change`` (never for :data:`NO_PATIENCE`).

    ``k_improved`` is the last iterate that improved the validation error
    (:func:`validation_improved`).  The paper's HKES (Lauer & Bloch 2006,
    §2.3) takes ``k̂ = argmin_k GE_k`` over every iterate up to the HK
    stopping point; with a patience the run ends once ``GE`` has not
    improved for ``n_iter_no_change`` iterates (as scikit-learn's
    ``n_iter_no_change``), and ``k̂`` is the argmin over the iterates run.
    """
    return n_iter_no_change >= 0 and k - last_improvement >= n_iter_no_change


# Each rule is written once, above, and compiled for the compiled segment; the Python driver runs
# the same source as plain Python (``python``): calling a compiled function would first load
# numba's code generator into the process, a fixed cost larger than a whole small fit.
weights_stand_still = njit(cache=True, nogil=True)(_weights_stand_still)
stop_code = njit(cache=True, nogil=True)(_stop_code)
python = SimpleNamespace(proof_test=proof_test.py_func, stop_code=_stop_code,
                         weights_stand_still=_weights_stand_still,
                         validation_improved=validation_improved.py_func,
                         patience_spent=patience_spent.py_func)
"""The rules as plain Python functions (the same source), for the Python driver."""


# --- The Python driver, and what both drivers return ------------------------------------------------------------

@dataclass
class HKRun:
    """Where an iteration loop ended: the final iterate and what was recorded on the way."""

    W: np.ndarray
    B: object
    k: int
    status: str
    factor: object
    certificate: object = None
    history: dict = field(default_factory=dict)
    best_W: np.ndarray | None = None
    best_iter: int = 0
    stats: object = None  # the last pass's statistics (Python driver)
    best_B: object = None  # traced runs with early stopping: b(k̂) and e(k̂) of the returned iterate
    best_E: object = None
    fitted_errors: object = None  # traced runs with early stopping: the errors on the fitted rows alone


# With an iterative W-step, E holds the solve's error too: a candidate proof is
# looked at (the solve tightened, then checked) once max(E) <= this · max(B).
_ITERATIVE_CANDIDATE_RTOL = 1e-6

# Exact W-steps never raise Ho–Kashyap's criterion (J(k+1) <= J(k) for 0 < ρ < 1).  Inexact ones can: on
# ill-conditioned Y (d + 1 above the fitted rows, nearly repeated rows) the error that a solve leaves in
# E = Y W − B is fed back into B, and grew there by a factor of about 4 per iteration until it overflowed
# (HKES's C = None fold of a 3 000-document text problem).  A rise of J by more than this fraction makes
# every later solve of the run exact.
_INEXACT_RISE_RTOL = 1e-3


def iterate_in_python(design, factor, W, B, *, learning_rate, max_iter, tol, relative, stop_at_separation,
                      ridge, offset, can_prove, Y_val, update, absolute, regularized, irls_floor,
                      n_iter_no_change=None, validation_tol=0.0, validation_reference=np.inf, trace=None,
                      polish=True):
    """The Python driver: every variant, on any design (the reference for the compiled segment).

    Each iteration is one pass over the design (:func:`linsep.solvers.ho_kashyap.step.hk_pass`),
    the rules above, and the W-step on the host; the step module hands out the
    iterates (:func:`linsep.solvers.ho_kashyap.step.hk_iterates`), the driver applies the rules to each in turn.  With a ``trace`` it records
    ``a(k), b(k), e(k)`` as row ``k + 1`` (the lecture's numbering).
    """
    D = None
    iterative = isinstance(factor, IterativeLeastSquares)
    inexact = iterative and factor.forcing > 0  # some iterates come from inexact solves: polish what is returned
    two_mu = 2.0 * learning_rate
    pass_options = dict(offset=offset, two_mu=two_mu, tol=tol, update=update, irls=absolute, validation=Y_val)

    def criterion(state):  # a device pass reads ‖w‖² with its other statistics (no sync of its own)
        return state.J + ridge * state.weight_norm_sq if regularized else state.J

    state = hk_pass(design, W, B, D, **pass_options)
    J = criterion(state)
    early_stopping = Y_val is not None
    history = {"criterion": [J]}
    best_W, best_iter = None, 0
    last_improvement = 0  # the last iterate that improved the validation error (patience)
    patience = patience_code(n_iter_no_change)
    # A traced run counts the errors on every row given to fit, the held-out ones too (unweighted), as the
    # returned model's predictions are counted; the fitted rows' own counts are kept for the estimator.  On data
    # in memory it counts them as the verdict does, y_i f(x_i) <= τ_i (signed_errors: one more product a
    # pass, traced runs only; the pass's own count, of <= 0, is the untraced runs').
    count_all = trace is not None and early_stopping
    strict = trace is not None and hasattr(design, "Y")
    held_out = Y_val.design if isinstance(Y_val, WeightedValidation) else Y_val
    strict = strict and (held_out is None or hasattr(held_out, "Y"))

    def count_errors(state, W):
        """Append the iterate's training errors (and, counting all rows, those on the fitted rows alone)."""
        fitted = signed_errors(design.Y, W) if strict else state.wrong
        if not count_all:
            history["training_errors"].append(fitted)
            return
        if strict:
            held = signed_errors(held_out.Y, W)
        else:
            held = held_out.count_nonpositive(W)[0] if held_out is not Y_val else int(state.val_errors)
        fitted_errors.append(fitted)
        history["training_errors"].append(fitted + held)

    history["training_errors"], fitted_errors = [], [] if count_all else None
    count_errors(state, W)
    if early_stopping:
        n_val = Y_val.shape[0]
        history["validation_error"] = [state.val_errors / n_val]
        best_W = W
    best_B = B
    best_E = design.host(state.E) if count_all else None

    certificate = None
    steps = None  # the iterator over the next iterates (step.hk_iterates)
    k = 0
    J_prev = np.nan  # no change of J yet
    W_prev = None  # no previous iterate yet (W may live on a device: no NumPy placeholder)
    while True:
        if trace is not None and trace.wants(k + 1):
            trace.record(k + 1, weights=W, margin_vector=design.host(B), error_vector=design.host(state.E))
        if stop_at_separation and state.separated:
            status = SEPARABLE
            break
        # max E first: the full proof test runs only when E is (nearly) non-positive.  An iterative W-step's
        # candidate costs a tight re-solve; none is looked at while Y W > 0 (no proof can exist then: Yᵀu = 0
        # with u >= 0 gives (Y W)ᵀu = 0), as on wide data that early stopping keeps interpolated, where
        # E ≈ 0 made every iteration a candidate and the re-solves took three quarters of HKES's CG work.
        if (can_prove and state.max_e <= (_ITERATIVE_CANDIDATE_RTOL if iterative else PROOF_RTOL) * state.max_b
                and not (iterative and state.separated)):
            if iterative and update == "margin":
                # YᵀD E = 0 holds only to the solve's tolerance: re-solve tightly, then check u = −D E.
                W = design.solve_target(factor, B, offset, tol=CG_PROOF_RTOL)
                state = hk_pass(design, W, B, D, **pass_options)
                J = criterion(state)
                steps = None  # the next iterates start from this re-solved one
            if python.proof_test(state.max_e, state.min_e, state.max_b, PROOF_RTOL):
                certificate = state.certificate()
                if iterative:
                    certificate = design.checked_certificate(certificate)  # None: no proof passed, keep iterating
                if certificate is not None:
                    status = NOT_SEPARABLE
                    break
        separated = absolute and state.separated
        still = separated and W_prev is not None and design.weights_stand_still(W, W_prev, tol,
                                                                                 python.weights_stand_still)
        code = python.stop_code(relative, absolute, state.fixed_point, separated, still, tol, J, J_prev)
        if code != HK_BUDGET_SPENT or (early_stopping and python.patience_spent(k, last_improvement, patience)):
            status = CONVERGED
            break
        if k >= max_iter:
            status = MAX_ITER
            break

        if steps is None:  # the design's iterates from here (dask computes several per round trip)
            steps = hk_iterates(design, state, W, B, D, factor, update=update, learning_rate=learning_rate,
                                       irls_floor=irls_floor, pass_options=pass_options, limit=max_iter - k)
        W_prev = W
        W, B, D, factor, state = next(steps)
        iterative = isinstance(factor, IterativeLeastSquares)  # a reweighted system may need CG
        J_prev, J = J, criterion(state)
        k += 1
        check_finite(J, k, factor)
        if iterative and factor.forcing > 0 and J > J_prev * (1.0 + _INEXACT_RISE_RTOL):
            factor.forcing = 0.0  # the descent broke: the inexact solves' error grows (_INEXACT_RISE_RTOL)

        history["criterion"].append(J)
        count_errors(state, W)
        if early_stopping:
            error = state.val_errors / n_val
            history["validation_error"].append(error)
            if python.validation_improved(error, history["validation_error"][best_iter], validation_reference,
                                         validation_tol):
                last_improvement = k
            if error < history["validation_error"][best_iter]:
                best_W, best_B, best_iter = W, B, k
                if count_all:
                    best_E = design.host(state.E)

    if inexact and polish and status != NOT_SEPARABLE:
        W, best_W, exact = polished(design, factor, W, B, best_W, best_B if early_stopping else None,
                                     best_iter == k, offset, keep_separating=status == SEPARABLE)
        if not exact and status == CONVERGED:
            status = MAX_ITER  # the returned weights are not the full solve that convergence stands for
    if iterative and status == CONVERGED and not factor.converged:
        status = MAX_ITER  # the last W-step did not reach its tolerance: no claim of convergence
    if trace is not None:
        trace.record(k + 1, final=True, weights=W, margin_vector=design.host(B), error_vector=design.host(state.E))
    history = {name: np.asarray(values) for name, values in history.items()}
    return HKRun(W=W, B=B, k=k, status=status, factor=factor, certificate=certificate,
                 history=history, best_W=best_W, best_iter=best_iter, stats=state, best_B=best_B, best_E=best_E,
                 fitted_errors=None if fitted_errors is None else np.asarray(fitted_errors))


def polished(design, factor, W, B, best_W, best_B, best_is_last, offset, *, keep_separating):
    """``W`` (and the early-stopping choice ``best_W``) re-solved to the solver's ``tol`` after inexact solves.

    The iterations solved ``W_k = (YᵀY + CĨ)⁻¹Yᵀ(B_k + offset)`` to the forcing target only
    (``linsep._core.linalg.IterativeLeastSquares.forcing``); the returned weights are the full solves
    for the same margins, warm-started from the iterates.  A separating ``W`` (``keep_separating``)
    is the verdict's witness and is kept as it is.  With early stopping (``best_B`` given) only the
    returned choice is re-solved: the last iterate ``W`` is kept as it is unless it is the choice (a full
    solve costs hundreds of CG iterations on wide data).  Returns ``(W, best_W, exact)``, ``exact``
    whether every solve of returned weights met the tolerance.
    """
    exact = True
    if not keep_separating and (best_B is None or best_is_last):
        W = design.solve_target(factor, B, offset, tol=factor.tol, x0=W)
        exact = factor.converged
    if best_B is not None:
        if best_is_last:
            best_W = W
        else:
            best_W = design.solve_target(factor, best_B, offset, tol=factor.tol, x0=best_W)
            exact = factor.converged
    return W, best_W, exact


def check_finite(J, k, factor):
    if not np.isfinite(J):  # pragma: no cover - guarded by the factorisation's rank test
        raise FloatingPointError(
            f"Ho–Kashyap diverged at iteration {k} (least-squares factorisation: {factor.method}); "
            "the data are too ill-conditioned for this solver")
