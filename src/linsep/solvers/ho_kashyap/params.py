"""The Ho–Kashyap iteration's parameters, each declared once: default, constraints, docs, and their values' record.

:data:`HK_PARAMETERS` declares each parameter of
:func:`linsep.solvers.ho_kashyap.ho_kashyap`; :data:`HK_CONSTRAINTS` is its
scikit-learn constraint table (``HoKashyapClassifier``, its cross-validated
twins and the kernel estimator take their HK parameters, signatures and
docstring entries from the table); :class:`HKParams` carries the values
from an estimator to the solver, in memory and on every backend
(:meth:`HKParams.solver_kwargs`).  The estimator-side uses of the table
(presets, the backends' refusal of a parameter they do not honour) live
with the estimators (:mod:`linsep.estimators`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from linsep.solvers.ho_kashyap.rules import STOPPING_RULES

__all__ = ["DEFAULT_N_ITER_NO_CHANGE", "EARLY_STOPPING_CONSTRAINTS", "HKParameter", "HKParams", "HK_CONSTRAINTS",
           "HK_PARAMETERS", "PATIENCE_CONSTRAINTS", "hk_defaults", "parameter_docs", "resolve_stop_at_separation"]

@dataclass(frozen=True)
class HKParameter:
    """One parameter of the Ho–Kashyap iteration as the estimators offer it.

    ``default`` is the estimators' default, ``constraints`` scikit-learn's
    constraint list, ``doc`` its numpydoc entry (type line first, then the
    description).
    """

    default: object
    constraints: list
    doc: str


HK_PARAMETERS = {
    "learning_rate": HKParameter(0.4, [Interval(Real, 0, 1, closed="neither")], """float, default=0.4
    :math:`\\mu` of the margin update :math:`B \\leftarrow B + \\mu \\, (E + |E|)`, :math:`0 < \\mu < 1`
    (the paper's 0.4)."""),
    "b0": HKParameter(1e-6, [Interval(Real, 0, None, closed="neither")], """float, default=1e-6
    Initial margin :math:`B_0 = b_0 \\mathbf{1}` (the paper's value)."""),
    "C": HKParameter(None, [None, Interval(Real, 0, None, closed="left")], """float or None, default=None
    ``None`` for HK / HKES; a number for Łęski's modified HK (MHKS,
    MHKA): target :math:`\\mathbf{1} + B` and penalty :math:`C \\, w^t w` (bias unpenalised)."""),
    "loss": HKParameter("squared", [StrOptions({"squared", "absolute"})], """{"squared", "absolute"}, default="squared"
    :math:`D = I` or IRLS weights :math:`D_k = \\operatorname{diag}(1 / |e_i|)` (MHKA, HKESA)."""),
    "update": HKParameter("margin", [StrOptions({"margin", "weights"})], """{"margin", "weights"}, default="margin"
    :math:`W = Y^{+} B` (HK) or :math:`W \\leftarrow W + \\mu \\, Y^{+} |E|` (modified HK)."""),
    "max_iter": HKParameter(10_000, [Interval(Integral, 0, None, closed="left")], """int, default=10000
    Largest number of margin updates per binary problem (so ``n_iter_``
    is at most ``max_iter + 1``)."""),
    "tol": HKParameter(1e-6, [None, Interval(Real, 0, None, closed="left")], """float or None, default=1e-6
    Tolerance of ``stopping``; ``None`` with ``stopping="paper"`` gives
    the paper's :math:`0.5 \\, b_0^2`."""),
    "stopping": HKParameter("relative", [StrOptions(set(STOPPING_RULES))], """{"relative", "paper"}, default="relative"
    ``"relative"``: stop when :math:`|J_k - J_{k-1}| \\le \\mathit{tol} \\cdot J_{k-1}`
    or at the fixed point :math:`|E_k| \\le \\mathit{tol} \\cdot (B_k + \\mathit{offset})`
    (scale-free; keeps HK's promise that separable data end separated).
    ``"paper"``: :math:`|J_k - J_{k-1}| < \\mathit{tol}` (``tol=None`` for the
    paper's :math:`0.5 \\, b_0^2`)."""),
    "stop_at_separation": HKParameter("auto", ["boolean", StrOptions({"auto"})], """bool or "auto", default="auto"
    Stop as soon as every training point is strictly on its side.
    ``"auto"``: only for plain HK / modified HK (no ``C``, no early
    stopping), whose goal is a separating hyperplane."""),
    "irls_floor": HKParameter(1e-6, [Interval(Real, 0, 1, closed="left")], """float, default=1e-6
    Floor of :math:`|e_i|` relative to :math:`\\max |e|` in the IRLS weights."""),
}
"""The Ho–Kashyap iteration's parameters (:func:`linsep.solvers.ho_kashyap.ho_kashyap`), declared once.

:class:`~linsep.HoKashyapClassifier` takes its signature (:func:`linsep.estimators.base.estimator_init`),
its constraints and the docstring entries of these parameters from here; a
parameter added here (and to :class:`HKParams`) reaches every in-memory fit,
and the backends that do not list it (dask, array API) refuse it.
"""

HK_CONSTRAINTS = {name: parameter.constraints for name, parameter in HK_PARAMETERS.items()}
"""Constraints of the parameters of the Ho–Kashyap iteration (:func:`linsep.solvers.ho_kashyap.ho_kashyap`)."""

def hk_defaults(names=None, **overrides):
    """``{name: default}`` of the HK parameters ``names`` (all of :data:`HK_PARAMETERS` for ``None``), with ``overrides``.

    The estimators that offer a subset (the kernel and cross-validated
    estimators) take their signature, constraints and docs from the same
    names; an estimator whose own default differs says so in ``overrides``.
    """
    names = tuple(HK_PARAMETERS) if names is None else names
    unknown = set(overrides) - set(names)
    if unknown:
        raise ValueError(f"overrides of parameters not offered: {sorted(unknown)}")
    return {name: overrides.get(name, HK_PARAMETERS[name].default) for name in names}


def parameter_docs(names, indent=4):
    """The numpydoc entries of the HK parameters ``names`` (:data:`HK_PARAMETERS`), indented for a class docstring."""
    pad = " " * indent
    lines = []
    for name in names:
        type_line, *text = HK_PARAMETERS[name].doc.split("\n")
        lines.append(f"{pad}{name} : {type_line}")
        lines.extend(f"{pad}{line}" if line.strip() else "" for line in text)
    return "\n".join(lines)


PATIENCE_CONSTRAINTS = {
    "n_iter_no_change": [None, Interval(Integral, 1, None, closed="left")],
    "validation_tol": [Interval(Real, 0, 1, closed="left")],
}
"""Constraints of early stopping's patience (:func:`linsep.solvers.ho_kashyap.rules.patience_spent`)."""

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

    learning_rate: float = HK_PARAMETERS["learning_rate"].default
    b0: float = HK_PARAMETERS["b0"].default
    max_iter: int = HK_PARAMETERS["max_iter"].default
    tol: float | None = HK_PARAMETERS["tol"].default
    stopping: str = HK_PARAMETERS["stopping"].default
    stop_at_separation: bool = True  # "auto" resolved for plain HK
    update: str = HK_PARAMETERS["update"].default
    C: float | None = HK_PARAMETERS["C"].default
    loss: str = HK_PARAMETERS["loss"].default
    irls_floor: float = HK_PARAMETERS["irls_floor"].default
    n_iter_no_change: int | None = None  # the paper's rule: k̂ over all k
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
