"""``make_classifier(name, **params)``: every algorithm of linsep by its short name.

The CLI (``linsep fit ALGO``) and the paper's experiment build estimators only
through this table.  Each entry names the estimator class (imported lazily, so
the registry stays import-cycle free), the parameters that turn the class into
the named method, and a one-line summary for ``linsep list``; ``_TITLES``
names each method in words (:func:`classifier_titles`, what the playground's
menu shows).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from importlib import import_module

from linsep.estimators.ho_kashyap import HK_VARIANTS


@dataclass(frozen=True)
class _Entry:
    target: str  # "module:Class" relative to the linsep package
    summary: str
    preset: dict = field(default_factory=dict)


_REGISTRY: dict[str, _Entry] = {
    # the HoKashyapClassifier presets: HK_VARIANTS (declared with the estimator)
    **{name: _Entry("estimators.ho_kashyap:HoKashyapClassifier", summary, preset)
       for name, (preset, summary) in HK_VARIANTS.items()},
    "hkes_cv": _Entry("estimators.ho_kashyap_cv:HoKashyapClassifierCV",
                      "HKES with k̂ from 5-fold cross-validation, then refitted on all data (linsep's extension)"),
    "hkesa_cv": _Entry("estimators.ho_kashyap_cv:HoKashyapClassifierCV",
                       "HKESA (absolute errors) with cross-validated k̂ and refit (linsep's extension)",
                       {"loss": "absolute"}),
    "hkes_cv_c": _Entry("estimators.ho_kashyap_cv:HoKashyapClassifierCV",
                        "HKES-CV over (C, k): C and k̂ from the same 5 folds, then refitted (linsep's extension)",
                        {"Cs": 7}),
    "kozinec": _Entry("estimators.kozinec:KozinecClassifier",
                      "Kozinec: nearest points of the class hulls, stops at the first separating hyperplane"),
    "sk": _Entry("estimators.kozinec:SchlesingerKozinecClassifier",
                 "Schlesinger–Kozinec: ε-optimal maximal-margin hyperplane (margin_, margin_upper_bound_)"),
    "kernel_sk": _Entry("estimators.kozinec:KernelSchlesingerKozinecClassifier",
                        "kernel Schlesinger–Kozinec (Franc & Hlaváč): two hulls, cached kernel columns, C for K + I/C"),
    "lsvm": _Entry("estimators.lsvm:LagrangianSVMClassifier",
                   "Lagrangian SVM (Mangasarian & Musicant; Lauer & Bloch §2.6), linear, SMW factor"),
    "kernel_lsvm": _Entry("estimators.lsvm:KernelLagrangianSVMClassifier",
                          "Lagrangian SVM with a kernel (N×N factor, small N)"),
    "kernel_hk": _Entry("estimators.kernel_hk:KernelHoKashyapClassifier",
                        "kernel Ho–Kashyap (truncated empirical kernel map; Łęski's C=0.3; C=None for HK verdicts)"),
    "kernel_hkes": _Entry("estimators.kernel_hk:KernelHoKashyapClassifier",
                          "kernel Ho–Kashyap with early stopping on a validation set (kernel HKES)",
                          {"early_stopping": True, "C": None}),
    "kernel_hkes_cv": _Entry("estimators.ho_kashyap_cv:KernelHoKashyapClassifierCV",
                             "kernel HKES with k̂ from 5-fold cross-validation, then refitted (linsep's extension)"),
    "mse": _Entry("estimators.mse:MSEClassifier",
                  "minimum squared error a = Y⁺b (margin vector b; linear machine for K > 2 classes)"),
    "widrow_hoff": _Entry("estimators.mse:WidrowHoffClassifier",
                          "batch Widrow–Hoff: a ← a − η_k Yᵀ(Ya − b), η_k = η₁/k"),
    "lms": _Entry("estimators.mse:LMSClassifier",
                  "single-sample Widrow–Hoff (LMS): a ← a − η_k y_i(y_iᵀa − b_i)"),
    "perceptron": _Entry("estimators.perceptron:PerceptronClassifier",
                         "single-sample perceptron, fixed or variable increment, optional margin"),
    "batch_perceptron": _Entry("estimators.perceptron:BatchPerceptronClassifier",
                               "batch perceptron over all mistakes, η_k = η₁/k"),
    "kernel_perceptron": _Entry("estimators.perceptron:KernelPerceptronClassifier",
                                "kernel (dual) perceptron with correction counts α"),
}

# Each registered method's name in words, as a page or a table shows it beside the code ("Ho–Kashyap (hk)").
_TITLES = {
    "hk": "Ho–Kashyap",
    "modified_hk": "modified Ho–Kashyap",
    "mhks": "Łęski's modified Ho–Kashyap, squared errors",
    "mhka": "Łęski's modified Ho–Kashyap, absolute errors",
    "hkes": "Ho–Kashyap with early stopping",
    "hkesa": "Ho–Kashyap with early stopping, absolute errors",
    "hkes_cv": "Ho–Kashyap with early stopping by cross-validation",
    "hkesa_cv": "Ho–Kashyap with early stopping by cross-validation, absolute errors",
    "hkes_cv_c": "Ho–Kashyap with C and early stopping by cross-validation",
    "kozinec": "Kozinec",
    "sk": "Schlesinger–Kozinec",
    "kernel_sk": "kernel Schlesinger–Kozinec",
    "lsvm": "Lagrangian SVM",
    "kernel_lsvm": "kernel Lagrangian SVM",
    "kernel_hk": "kernel Ho–Kashyap",
    "kernel_hkes": "kernel Ho–Kashyap with early stopping",
    "kernel_hkes_cv": "kernel Ho–Kashyap with early stopping by cross-validation",
    "mse": "minimum squared error",
    "widrow_hoff": "batch Widrow–Hoff",
    "lms": "Widrow–Hoff LMS, one sample at a time",
    "perceptron": "perceptron, one sample at a time",
    "batch_perceptron": "batch perceptron",
    "kernel_perceptron": "kernel perceptron",
}


IGNORED_IF_ABSENT = frozenset({"random_state"})
"""Parameters that :func:`make_classifier` accepts and drops for a method that does not have them.

``random_state`` only: a method without it draws no random numbers (its fits
are deterministic), so any seed is already honoured, and a loop such as
``make_classifier(name, random_state=0) for name in names`` works over every
name.  Any other parameter a method does not have is an error.
"""


class UnknownParameterError(ValueError, TypeError):
    """A parameter the named method does not have (a ``ValueError``, as in scikit-learn, and a ``TypeError``)."""


@functools.cache
def _parameters(cls):
    """The constructor's keyword parameters of ``cls``, or None if it takes ``**kwargs`` (read once per class)."""
    signature = inspect.signature(cls.__init__)
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return [name for name, p in signature.parameters.items() if name != "self" and p.kind is not p.VAR_POSITIONAL]


def _resolve(entry):
    module, cls = entry.target.split(":")
    return getattr(import_module(f"linsep.{module}"), cls)


def registered_name(cls):
    """The first registered name whose class is ``cls`` (its preset parameters aside), or ``None``."""
    for name, entry in _REGISTRY.items():
        if _resolve(entry) is cls:
            return name
    return None


def make_classifier(name, **params):
    """Return a new estimator for the algorithm ``name`` with ``params`` set.

    Parameters
    ----------
    name : str
        A registered name; :func:`available_classifiers` lists them.
    **params
        Estimator parameters; they override the preset that defines ``name``
        (e.g. ``make_classifier("mhks", C=0.25)``).  ``random_state`` is
        accepted by every name: a method without that parameter draws no
        random numbers, and the value is dropped.  Any other parameter the
        method does not have raises an error that names the method and lists
        its parameters, as scikit-learn's ``set_params`` does.

    Returns
    -------
    estimator : object
        An unfitted scikit-learn estimator (:class:`HoKashyapClassifier`,
        :class:`PerceptronClassifier`, ...), its parameters the preset of
        ``name`` updated with ``params``.

    Raises
    ------
    ValueError
        ``name`` is not registered, or ``params`` holds a parameter the
        method does not have (other than ``random_state``); the latter is
        also a ``TypeError``, the error Python raises for an unexpected
        keyword argument.

    See Also
    --------
    available_classifiers : The registered names with a one-line summary.

    Examples
    --------
    >>> from linsep import make_classifier
    >>> make_classifier("mhks", C=0.25)
    HoKashyapClassifier(C=0.25)
    >>> make_classifier("sk").fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1]).status_
    'converged'
    >>> make_classifier("lsvm", random_state=0)       # deterministic: the seed is dropped
    LagrangianSVMClassifier()
    >>> make_classifier("lsvm", verbose=1)            # doctest: +ELLIPSIS
    Traceback (most recent call last):
    linsep.estimators.registry.UnknownParameterError: lsvm (LagrangianSVMClassifier) has no parameter 'verbose'; its parameters: C, ...
    """
    try:
        entry = _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown classifier {name!r}; available: {', '.join(sorted(_REGISTRY))}"
        ) from None
    cls = _resolve(entry)
    accepted = _parameters(cls)
    if accepted is not None:
        unknown = [p for p in params if p not in accepted and p not in IGNORED_IF_ABSENT]
        if unknown:
            raise UnknownParameterError(
                f"{name} ({cls.__name__}) has no parameter{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))}; its parameters: {', '.join(accepted)}")
        params = {p: v for p, v in params.items() if p in accepted}
    return cls(**{**entry.preset, **params})


def available_classifiers():
    """Return ``{name: one-line summary}`` for every registered algorithm, sorted by name.

    Returns
    -------
    summaries : dict of str to str
        Every registered name, sorted, with its one-line summary (what
        ``linsep list`` prints).

    See Also
    --------
    make_classifier : Build the estimator of a name.

    Examples
    --------
    >>> from linsep import available_classifiers
    >>> names = available_classifiers()
    >>> names["hkes"]
    'Ho–Kashyap with early stopping on a validation set (Lauer & Bloch §2.3)'
    >>> "perceptron" in names and "kernel_sk" in names
    True
    """
    return {name: _REGISTRY[name].summary for name in sorted(_REGISTRY)}


def classifier_titles():
    """Return ``{name: the method's name in words}`` for every registered algorithm, sorted by name.

    The words a page or a table shows beside the registry code, e.g.
    ``f"{titles['hk']} (hk)"`` is "Ho–Kashyap (hk)" (the playground's menu).

    Returns
    -------
    titles : dict of str to str
        Every name of :func:`available_classifiers`, in the same order.

    Examples
    --------
    >>> from linsep.estimators.registry import classifier_titles
    >>> classifier_titles()["hkes"]
    'Ho–Kashyap with early stopping'
    """
    return {name: _TITLES[name] for name in sorted(_REGISTRY)}
