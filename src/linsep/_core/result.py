"""The one result type every solver returns, and the status vocabulary.

Solvers are pure functions over arrays; they never warn and never import
scikit-learn.  They report what happened through :class:`SolveResult`, and the
estimator layer (:mod:`linsep.estimators.base`) turns a ``"max_iter"`` status into a
:class:`~sklearn.exceptions.ConvergenceWarning` in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
