"""One home for each algorithm's parameters: the constraint tables and the parameter objects every path receives.

:data:`HK_CONSTRAINTS` is the scikit-learn constraint table of the
Ho–Kashyap iteration's parameters (``HoKashyapClassifier``, its
cross-validated twins and the kernel estimator take them from here);
:class:`HKParams` carries their values from an estimator to
:func:`linsep.solvers.ho_kashyap.ho_kashyap`, in memory and on dask alike
(:meth:`HKParams.solver_kwargs`).  A backend that cannot honour a parameter
says so once, in its ``unsupported`` table; :func:`refuse_unsupported`
refuses any such parameter set away from its neutral value, so a new
parameter is never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from ._hk_rules import STOPPING_RULES

__all__ = ["DEFAULT_N_ITER_NO_CHANGE", "HK_CONSTRAINTS", "HKParams", "PATIENCE_CONSTRAINTS",
           "refuse_unsupported"]

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

    def solver_kwargs(self):
        """Keyword arguments of :func:`linsep.solvers.ho_kashyap.ho_kashyap` (``record_history`` as a bool)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["record_history"] = bool(values["record_history"])
        return values


def refuse_unsupported(values, unsupported, where):
    """Refuse each parameter of ``unsupported`` (name → neutral value) whose value in ``values`` is not neutral.

    ``values`` is a mapping or an object with the parameters as attributes;
    ``where`` names the backend in the message.
    """
    for name, neutral in unsupported.items():
        value = values.get(name, neutral) if isinstance(values, dict) else getattr(values, name, neutral)
        if value is not None and value is not neutral and value != neutral:
            raise ValueError(f"{name}={value!r} is not available for {where}; fit in memory to use it")
