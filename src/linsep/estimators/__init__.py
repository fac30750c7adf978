"""Thin scikit-learn estimators over :mod:`linsep.solvers`."""

from linsep.estimators.ho_kashyap import HoKashyapClassifier
from linsep.estimators.ho_kashyap_cv import HoKashyapClassifierCV, KernelHoKashyapClassifierCV
from linsep.estimators.mse import LMSClassifier, MSEClassifier, WidrowHoffClassifier
from linsep.estimators.perceptron import BatchPerceptronClassifier, KernelPerceptronClassifier, PerceptronClassifier
from linsep.estimators.kernel_hk import KernelHoKashyapClassifier
from linsep.estimators.lsvm import KernelLagrangianSVMClassifier, LagrangianSVMClassifier
from linsep.estimators.kozinec import KernelSchlesingerKozinecClassifier, KozinecClassifier, SchlesingerKozinecClassifier

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
]
