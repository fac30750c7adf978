"""Kozinec and Schlesinger–Kozinec: the nearest points of two convex hulls, linear and kernel.

``solver`` (:func:`kozinec`, :func:`schlesinger_kozinec` and
:func:`kernel_schlesinger_kozinec`, the epsilon-optimal maximal-margin
hyperplane), ``loops`` (kernel SK's compiled O(N) passes) and ``on_design``
(the linear solvers' steps on a design's namespace and device, for array-API input).
"""

from linsep.solvers.kozinec.solver import kernel_schlesinger_kozinec, kozinec, schlesinger_kozinec

__all__ = ["kernel_schlesinger_kozinec", "kozinec", "schlesinger_kozinec"]
