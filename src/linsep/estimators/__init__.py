"""Thin scikit-learn estimators over :mod:`linsep.solvers`."""

from .ho_kashyap import HoKashyapClassifier
from .ho_kashyap_cv import HoKashyapClassifierCV, KernelHoKashyapClassifierCV
from .mse import LMSClassifier, MSEClassifier, WidrowHoffClassifier
from .perceptron import BatchPerceptronClassifier, KernelPerceptronClassifier, PerceptronClassifier
from .kernel_hk import KernelHoKashyapClassifier
from .lsvm import KernelLagrangianSVMClassifier, LagrangianSVMClassifier
from .kozinec import KernelSchlesingerKozinecClassifier, KozinecClassifier, SchlesingerKozinecClassifier

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
