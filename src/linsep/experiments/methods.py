"""The methods compared in Lauer & Bloch (2006), §3, and how each one is tuned.

Every method is a factory ``build(**params) -> estimator`` plus a tuning kind:

``"none"``
    fitted once with its defaults (HK, and any registered estimator without
    a ``C``);
``"early_stopping"``
    one fit that receives the tuning set as ``fit(X, y, X_val=..., y_val=...)``
    and keeps the iterate of lowest validation error (HKES, HKESA, §2.3);
``"cv"``
    linsep's extension beyond the paper (``hkes_cv``, ``hkesa_cv``,
    ``hkes_cv_c``): one fit on the whole training split (fitting and tuning
    parts together), which chooses ``k̂`` (and, for ``hkes_cv_c``, ``C`` from
    its default grid, with patience) by its own cross-validation and refits;
    it never sees the test split, in either protocol;
``"C"``
    the two-step grid of §3.1 over the parameter ``C`` (MHKS, MHKA, LSVM,
    SVM).  For MHKS/MHKA ``C`` weighs the penalty ``C wᵀw`` — the inverse role
    of an SVM's ``C`` — but the paper scans the same grid for all of them.

``svm`` is scikit-learn's ``SVC(kernel="linear")``: libsvm, the solver behind
the paper's OSU-SVM toolbox (ℓ1 slacks, unpenalised bias, eq. 15).  It is the
slow column (libsvm's SMO needs many iterations at large ``C`` on overlapping
classes).  ``linear_svc`` is the fast stand-in ``LinearSVC(loss="hinge")``
(liblinear, dual coordinate descent): the same ℓ1-slack hinge loss, but
liblinear appends a constant feature, so it **also penalises the bias**
``w_0²/2`` — a slightly different problem from eq. (15).

Any other name of :func:`linsep.available_classifiers` is accepted: it is
tuned over ``C`` when its default ``C`` is a number, by early stopping when
its default has ``early_stopping=True``, by its own cross-validation when it
has a ``cv`` parameter, and not tuned otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from linsep.estimators.registry import available_classifiers, make_classifier

PAPER_METHODS = ("hk", "hkes", "hkesa", "mhks", "mhka", "lsvm", "svm")
"""The seven columns of Tables 1 and 3, in the paper's order."""

EXTENSION_METHODS = ("hkes_cv", "hkesa_cv", "hkes_cv_c")
"""linsep's extensions beyond the paper, reported beside its columns (no paper value)."""

LABELS = {
    "hk": "HK", "hkes": "HKES", "hkesa": "HKESA", "mhks": "MHKS", "mhka": "MHKA",
    "lsvm": "LSVM (ℓ2)", "svm": "SVM (ℓ1)", "linear_svc": "SVM ℓ1 LinearSVC*",
    "hkes_cv": "HKES-CV†", "hkesa_cv": "HKESA-CV†", "hkes_cv_c": "HKES-CV(C,k)†",
}

PAPER_RULE_METHODS = ("hkes", "hkesa", "hkes_cv", "hkesa_cv")
"""Columns that keep the paper's stopping rule (``n_iter_no_change=None``: ``k̂`` over every iterate)."""

PAPER_COLUMN = {"linear_svc": "svm"}
"""Method whose paper column a stand-in is compared with."""

SVC_CACHE_MB = 500


@dataclass(frozen=True)
class Method:
    name: str
    build: Callable
    tuning: str  # "none", "early_stopping", "cv" or "C"

    @property
    def label(self):
        return LABELS.get(self.name, self.name)

    @property
    def paper_name(self):
        return PAPER_COLUMN.get(self.name, self.name)


def _svc(**params):
    from sklearn.svm import SVC

    return SVC(kernel="linear", cache_size=SVC_CACHE_MB, **params)


def _linear_svc(**params):
    from sklearn.svm import LinearSVC

    # liblinear stops at max_iter without converging at the grid's largest C
    # on overlapping classes; 10 000 passes make that rare, and the run records
    # how many fits warned.
    return LinearSVC(loss="hinge", dual=True, max_iter=10_000, random_state=0, **params)


def _registered(name):
    def build(**params):
        if name in PAPER_RULE_METHODS:
            params = {"n_iter_no_change": None, **params}
        est = make_classifier(name, **params)
        if "random_state" in est.get_params() and "random_state" not in params:
            est.set_params(random_state=0)  # deterministic for a given seed
        return est
    return build


def get_method(name):
    """Return the ``Method`` record called ``name`` (a paper column, ``linear_svc`` or a registered name).

    Parameters
    ----------
    name : str
        ``"svm"`` (libsvm's ``SVC``, linear kernel), ``"linear_svc"`` (the
        ``LinearSVC(loss="hinge")`` stand-in) or any name of
        :func:`linsep.available_classifiers`.

    Returns
    -------
    Method
        A record with ``name``, ``build`` (keyword parameters -> a new
        estimator) and ``tuning``: ``"none"``, ``"early_stopping"``, ``"cv"``
        or ``"C"`` (the paper's grid over ``C``).

    See Also
    --------
    default_methods : The methods of a default run.

    Examples
    --------
    >>> from linsep.experiments import get_method
    >>> get_method("mhks").tuning, get_method("hkes").tuning, get_method("hkes_cv").tuning
    ('C', 'early_stopping', 'cv')
    """
    if name == "svm":
        return Method(name, _svc, "C")
    if name == "linear_svc":
        return Method(name, _linear_svc, "C")
    if name not in available_classifiers():
        raise ValueError(
            f"unknown method {name!r}; choose from svm, linear_svc or a registered classifier: "
            f"{', '.join(available_classifiers())}")
    defaults = make_classifier(name).get_params()
    if defaults.get("early_stopping") is True:
        tuning = "early_stopping"
    elif "cv" in defaults:
        tuning = "cv"
    elif isinstance(defaults.get("C"), (int, float)) and not isinstance(defaults.get("C"), bool):
        tuning = "C"
    else:
        tuning = "none"
    return Method(name, _registered(name), tuning)


def default_methods(quick=False):
    """The paper's seven methods that can run here, then linsep's extensions; ``quick`` swaps SVC for LinearSVC.

    Parameters
    ----------
    quick : bool, default=False
        Replace the slow libsvm ``svm`` by ``linear_svc`` (``linsep bench --quick``).

    Returns
    -------
    list of str
        Method names, in the order of the tables' columns.

    See Also
    --------
    get_method : What a name stands for.

    Examples
    --------
    >>> from linsep.experiments import default_methods
    >>> default_methods(quick=True)
    ['hk', 'hkes', 'hkesa', 'mhks', 'mhka', 'lsvm', 'linear_svc', 'hkes_cv', 'hkesa_cv', 'hkes_cv_c']
    """
    have = available_classifiers()
    names = [m for m in PAPER_METHODS + EXTENSION_METHODS if m == "svm" or m in have]
    if quick:
        names = [("linear_svc" if m == "svm" else m) for m in names]
    return names
