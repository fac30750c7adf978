"""One home for each algorithm's parameters: the constraint tables and the parameter objects every path receives.

:data:`HK_CONSTRAINTS` is the scikit-learn constraint table of the
Ho–Kashyap iteration's parameters (``HoKashyapClassifier``, its
cross-validated twins and the kernel estimator take them from here);
:class:`HKParams` carries their values from an estimator to
:func:`linsep.solvers.ho_kashyap.ho_kashyap`, in memory and on dask alike
(:meth:`HKParams.solver_kwargs`).  A backend lists the parameters it
honours; :func:`refuse_unsupported` refuses any other one set away from its
neutral value, so a new parameter is never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._hk_rules import STOPPING_RULES

__all__ = ["DEFAULT_N_ITER_NO_CHANGE", "EARLY_STOPPING_CONSTRAINTS", "HKParams", "HK_CONSTRAINTS", "PATIENCE_CONSTRAINTS", "refuse_unsupported", "starting_weights"]

HK_CONSTRAINTS = {
    "learning_rate": [Interval(Real, 0, 1, closed="neither")],
    "b0": [Interval(Real, 0, None, closed="neither")],
    "C": [None, Interval(Real, 0, None, closed="left")],
    "loss": [StrOptions({"squared", "absolute"})],
    "update": [StrOptions({"margin", "weights"})],
    "max_iter": [Interval(Integral, 0, None, closed="left")],
    "tol": [None, Interval(Real, 0, None, closed="left")],
    "stopping": [StrOptions(set(STOPPING_RULES))],
    "stop_at_separation": ["boolean", StrOptions({"auto"})],
    "irls_floor": [Interval(Real, 0, 1, closed="left")],
}
"""Constraints of the parameters of the Ho–Kashyap iteration (:func:`linsep.solvers.ho_kashyap.ho_kashyap`)."""

PATIENCE_CONSTRAINTS = {
    "n_iter_no_change": [None, Interval(Integral, 1, None, closed="left")],
    "validation_tol": [Interval(Real, 0, 1, closed="left")],
}
"""Constraints of early stopping's patience (:func:`linsep._hk_rules.patience_spent`)."""

DEFAULT_N_ITER_NO_CHANGE = 100
"""Default patience of the early-stopped estimators (measured: ``benchmarks/bench_hkes_cv_c.py --patience``)."""

EARLY_STOPPING_CONSTRAINTS = {
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
    **PATIENCE_CONSTRAINTS,
}
"""Constraints of the hold-out early stopping of HKES / HKESA."""


def resolve_stop_at_separation(stop_at_separation, C, early_stopping):
    """``"auto"``: stop at separation only for plain HK (``C`` is ``None``) without early stopping."""
    if stop_at_separation == "auto":
        return C is None and not early_stopping
    return bool(stop_at_separation)


@dataclass(frozen=True)
class HKParams:
    """The values of the Ho–Kashyap iteration's parameters, as the solver receives them.

    ``stop_at_separation`` is resolved (``"auto"`` → a bool) and
    ``record_history`` is kept for the backends' checks.
    """

    learning_rate: float = 0.4
    b0: float = 1e-6
    max_iter: int = 10_000
    tol: float | None = 1e-6
    stopping: str = "relative"
    stop_at_separation: bool = True
    update: str = "margin"
    C: float | None = None
    loss: str = "squared"
    irls_floor: float = 1e-6
    n_iter_no_change: int | None = None
    validation_tol: float = 0.0
    record_history: object = False

    @classmethod
    def from_estimator(cls, estimator, **overrides):
        """The parameters of ``estimator`` (any that it lacks keep their defaults), with ``overrides``."""
        values = {f.name: getattr(estimator, f.name) for f in fields(cls) if hasattr(estimator, f.name)}
        values["stop_at_separation"] = resolve_stop_at_separation(
            getattr(estimator, "stop_at_separation", "auto"), getattr(estimator, "C", None),
            getattr(estimator, "early_stopping", False))
        values.update(overrides)
        return cls(**values)

    @classmethod
    def neutral(cls):
        """Each parameter's default: the value that asks nothing of a backend."""
        return {f.name: f.default for f in fields(cls)}

    def solver_kwargs(self):
        """Keyword arguments of :func:`linsep.solvers.ho_kashyap.ho_kashyap` (``record_history`` as a bool)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["record_history"] = bool(values["record_history"])
        return values


def refuse_unsupported(values, neutral, where, supported=()):
    """Refuse each parameter of ``neutral`` (name → neutral value) not in ``supported`` that is set away from neutral.

    ``values`` is a mapping, or an object with the parameters as attributes
    (e.g. :class:`HKParams`, whose :meth:`HKParams.neutral` values are the
    defaults); ``where`` names the backend in the message.  A backend lists
    what it honours in ``supported``: a parameter added later is refused
    there until the backend declares it, never silently ignored.
    """
    for name, default in neutral.items():
        if name in supported:
            continue
        value = values.get(name, default) if isinstance(values, dict) else getattr(values, name, default)
        if value is not None and value is not default and value != default:
            raise ValueError(f"{name}={value!r} is not available for {where}; fit in memory to use it")


def starting_weights(n_classes, n_features, coef_init, intercept_init):
    """``W_0 = (coef_init, intercept_init)`` (bias last; a missing part is 0), checked; ``None`` if neither is given.

    Starting weights serve two-class problems only (one ``W_0`` per problem).
    """
    if coef_init is None and intercept_init is None:
        return None
    if n_classes != 2:
        raise ValueError("coef_init / intercept_init are supported for two-class problems only")
    coef = np.zeros(n_features) if coef_init is None else np.asarray(coef_init, dtype=float).ravel()
    if coef.shape[0] != n_features:
        raise ValueError(f"coef_init has {coef.shape[0]} entries, X has {n_features} features")
    weights = np.append(coef, 0.0 if intercept_init is None else float(intercept_init))
    if not np.all(np.isfinite(weights)):
        raise ValueError("coef_init and intercept_init must be finite")
    return weights
