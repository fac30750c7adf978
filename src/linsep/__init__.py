"""linsep: classical linear-discriminant learners, scikit-learn native.

Ho–Kashyap family, MSE / Widrow–Hoff, perceptrons, Kozinec and
Schlesinger–Kozinec, Lagrangian SVM — each a pure solver in
:mod:`linsep.solvers` under a thin estimator — plus separability verdicts
with certificates and the experiment of Lauer & Bloch (2006).
"""

from linsep._core import numba_cache as _numba_cache

_numba_cache.install()  # before any compiled loop loads: numba's disk cache, locked and checked (issue 29)

from linsep.estimators.registry import available_classifiers, make_classifier  # noqa: E402
from linsep._core.result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE, SolveResult
from linsep.estimators import HoKashyapClassifier, HoKashyapClassifierCV
from linsep.estimators import BatchPerceptronClassifier, KernelPerceptronClassifier, PerceptronClassifier
from linsep.estimators import LMSClassifier, MSEClassifier, WidrowHoffClassifier
from linsep.estimators import KernelHoKashyapClassifier, KernelHoKashyapClassifierCV, KernelLagrangianSVMClassifier, LagrangianSVMClassifier
from linsep.estimators import KernelSchlesingerKozinecClassifier, KozinecClassifier, SchlesingerKozinecClassifier
from linsep.persistence import load, save
from linsep.separability import SeparabilityResult, check_separability
from linsep._version import version as _package_version


def __getattr__(name):
    # PEP 562: the version names the git commit in a checkout (linsep._version), computed on first use
    if name == "__version__":
        return _package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BatchPerceptronClassifier",
    "KernelPerceptronClassifier",
    "LMSClassifier",
    "MSEClassifier",
    "PerceptronClassifier",
    "WidrowHoffClassifier",
    "HoKashyapClassifier",
    "HoKashyapClassifierCV",
    "KernelHoKashyapClassifier",
    "KernelHoKashyapClassifierCV",
    "KernelLagrangianSVMClassifier",
    "LagrangianSVMClassifier",
    "KernelSchlesingerKozinecClassifier",
    "KozinecClassifier",
    "SchlesingerKozinecClassifier",
    "SeparabilityResult",
    "SolveResult",
    "available_classifiers",
    "check_separability",
    "load",
    "save",
    "make_classifier",
    "SEPARABLE",
    "NOT_SEPARABLE",
    "CONVERGED",
    "MAX_ITER",
    "__version__",
]
