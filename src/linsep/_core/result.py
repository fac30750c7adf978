"""The one result type every solver returns, and the status vocabulary.

Solvers are pure functions over arrays; they never warn and never import
scikit-learn.  They report what happened through :class:`SolveResult`, and the
estimator layer (:mod:`linsep.estimators.base`) turns a ``"max_iter"`` status into a
:class:`~sklearn.exceptions.ConvergenceWarning` in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

SEPARABLE = "separable"
"""Every training point lies strictly on its side: ``y_i (w·x_i + w_0) > 0``."""
NOT_SEPARABLE = "not_separable"
"""A proof of non-separability was found (kept in ``certificate``)."""
CONVERGED = "converged"
"""The stopping rule was met; no verdict on separability."""
MAX_ITER = "max_iter"
"""The iteration budget ran out before any other outcome."""

STATUSES = (SEPARABLE, NOT_SEPARABLE, CONVERGED, MAX_ITER)

UNDECIDED = "undecided"
"""Verdict of :func:`linsep.check_separability` when no certificate passed its check (never a fit status)."""
VERDICTS = (SEPARABLE, NOT_SEPARABLE, UNDECIDED)
"""The answers of :func:`linsep.check_separability`."""


@dataclass(frozen=True)
class SolveResult:
    """Outcome of one binary solve.

    Attributes
    ----------
    weights : ndarray
        Primal solvers: augmented weight vector ``W = (w, w_0)`` with the bias
        **last**.  Dual (kernel) solvers: one coefficient per training sample;
        the bias is then in ``intercept``.
    n_iter : int
        Iterations performed (the meaning of one iteration is the solver's,
        stated in its docstring).
    status : str
        One of ``"separable"``, ``"not_separable"``, ``"converged"``, ``"max_iter"``
        (:data:`~linsep.SEPARABLE`, :data:`~linsep.NOT_SEPARABLE`, :data:`~linsep.CONVERGED`,
        :data:`~linsep.MAX_ITER`).
    margin : ndarray or None
        The margin vector ``B`` for methods that have one (Ho–Kashyap, MSE).
    certificate : ndarray or None
        The proof behind a ``not_separable`` verdict: a vector ``u >= 0``,
        ``u != 0`` with ``Yᵀu = 0`` (Gordan's alternative), where ``Y`` is the
        sign-normalised augmented matrix.
    intercept : float or None
        Bias of dual solvers (primal solvers keep it inside ``weights``).
    history : dict of str to ndarray, or None
        Per-iteration traces (criterion, validation error, bounds...), when
        asked for or needed (early stopping).
    best_iter : int or None
        Early stopping: index into the history of the iterate returned.
    extra : mapping
        Solver-specific scalars (e.g. ``margin`` and ``margin_upper_bound``
        for Schlesinger–Kozinec).

    See Also
    --------
    linsep.solvers.ho_kashyap.ho_kashyap : A solver that returns one.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.solvers.ho_kashyap.solver import ho_kashyap
    >>> Y = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [-2.0, 0.0, -1.0], [-2.0, -1.0, -1.0]])   # diag(y)[X, 1]
    >>> result = ho_kashyap(Y)
    >>> result.status, bool((Y @ result.weights > 0).all())
    ('separable', True)
    """

    weights: np.ndarray
    n_iter: int
    status: str
    margin: np.ndarray | None = None
    certificate: np.ndarray | None = None
    intercept: float | None = None
    history: Mapping[str, np.ndarray] | None = None
    best_iter: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; expected one of {STATUSES}")


def demote_unproven(result, is_proof):
    """``result``, its ``not_separable`` verdict demoted to ``converged`` unless ``is_proof(certificate)`` holds.

    The one rule of every backend: a proof of non-separability is reported
    only when an independent check accepts its certificate
    (:mod:`linsep._core.certificates`); a verdict without one says nothing.
    """
    if result.status == NOT_SEPARABLE and not (result.certificate is not None and is_proof(result.certificate)):
        return replace(result, status=CONVERGED, certificate=None)
    return result


def demote_unseparated(statuses, separates):
    """``statuses`` (one per problem), each ``separable`` one demoted to ``converged`` unless ``separates(k)`` holds.

    The other half of the rule: a ``separable`` verdict must hold for the
    stored model on every row (``y_i f(x_i) > 0``, finite), whatever solved
    it.  Returns a status, or an array of them above one problem.
    """
    statuses = np.array(np.atleast_1d(statuses), dtype=object)
    for k in np.flatnonzero(statuses == SEPARABLE):
        if not separates(k):
            statuses[k] = CONVERGED
    return statuses[0] if statuses.size == 1 else statuses
