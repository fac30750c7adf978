"""The Lagrangian SVM (Mangasarian & Musicant 2001), linear and kernel.

``solver`` (:func:`lagrangian_svm` by Sherman–Morrison–Woodbury, or
matrix-free on wide data; :func:`kernel_lagrangian_svm`), ``active_set``
(the kernel LSVM's fixed point by primal–dual active sets on large data) and
``loops`` (the compiled pass of the linear iteration).
"""

from linsep.solvers.lsvm.active_set import active_set_kernel_lagrangian_svm
from linsep.solvers.lsvm.solver import kernel_lagrangian_svm, lagrangian_svm

__all__ = ["active_set_kernel_lagrangian_svm", "kernel_lagrangian_svm", "lagrangian_svm"]
