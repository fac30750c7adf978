"""Kozinec and Schlesinger–Kozinec: the nearest points of two convex hulls, linear and kernel.

``solver`` (:func:`kozinec`, :func:`schlesinger_kozinec` and
:func:`kernel_schlesinger_kozinec`, the epsilon-optimal maximal-margin
hyperplane) and ``loops`` (kernel SK's compiled O(N) passes).
"""

from linsep.solvers.kozinec.solver import kernel_schlesinger_kozinec, kozinec, schlesinger_kozinec

__all__ = ["kernel_schlesinger_kozinec", "kozinec", "schlesinger_kozinec"]
