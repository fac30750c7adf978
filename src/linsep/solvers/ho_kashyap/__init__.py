"""The Ho–Kashyap family: every variant through one driver, its rules, parameters and compiled loop beside it.

``solver`` (:func:`ho_kashyap`, the Python driver over any design),
``rules`` (the stopping, proof and IRLS rules both drivers apply),
``params`` (each parameter once: default, constraints, docstring entry),
``compiled`` and ``loops`` (the compiled segment of the dense design and its
driver), ``rows`` (the float32 row pass), ``weighted`` (sample weights as
scaled rows) and ``kernel`` (kernel HK on an empirical kernel map).
"""

from linsep.solvers.ho_kashyap.kernel import EmpiricalKernelMap, kernel_ho_kashyap
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.ho_kashyap.weighted import scaled_ho_kashyap, weighted_ho_kashyap

__all__ = ["EmpiricalKernelMap", "ho_kashyap", "kernel_ho_kashyap", "scaled_ho_kashyap", "weighted_ho_kashyap"]
