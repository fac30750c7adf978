"""The Ho–Kashyap rules, written once: stopping, patience, the non-separability test.

Every Ho–Kashyap driver calls these: the compiled segment
(:func:`linsep.solvers.ho_kashyap.loops.ho_kashyap_segment`) and the Python driver of
:mod:`linsep.solvers.ho_kashyap`, whatever design (in memory or dask) it
runs on.  They are compiled with numba so that the compiled segment can
inline them; Python calls them like any function.

The rules (Lauer & Bloch 2006, eq. 9 and §3.1, and the module docstring of
:mod:`linsep.solvers.ho_kashyap`), checked in this order at each iterate
``W_k``: all points strictly separated; the proof ``E_k <= 0, E_k != 0``
(:func:`proof_test`); the fixed point and the change of ``J``
(:func:`stop_code`); with validation rows, early stopping's patience
(:func:`validation_improved`, :func:`patience_spent`); the iteration budget
(each driver counts its own).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import njit

__all__ = [
    "HK_BUDGET_SPENT",
    "HK_CONVERGED",
    "HK_ILL_CONDITIONED",
    "HK_NOT_SEPARABLE",
    "HK_SEPARABLE",
    "NO_PATIENCE",
    "PROOF_RTOL",
    "STOPPING_RULES",
    "default_tol",
    "is_nonseparability_proof",
    "patience_code",
    "patience_spent",
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
