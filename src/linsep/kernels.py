"""Kernel choice shared by the kernel estimators.

Kernels are scikit-learn's pairwise kernels with SVC's parameter names
(``gamma``, ``degree``, ``coef0``); ``"precomputed"`` means the caller passes
Gram matrices; a callable ``k(A, B) -> ndarray`` is used as it is.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")


def kernel_params(kernel, gamma=None, degree=3, coef0=1.0):
    """Keyword arguments of :func:`~sklearn.metrics.pairwise.pairwise_kernels` for ``kernel``."""
    if callable(kernel) or kernel in ("linear", "precomputed"):
        return {}
    if kernel == "rbf":
        return {"gamma": gamma}
    if kernel in ("poly", "sigmoid"):
        params = {"gamma": gamma, "coef0": coef0}
        if kernel == "poly":
            params["degree"] = degree
        return params
    raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}")


def kernel_matrix(A, B, *, kernel="rbf", gamma=None, degree=3, coef0=1.0):
    """Return ``K[i, j] = k(A_i, B_j)``."""
    if kernel == "precomputed":
        return np.asarray(A)
    if callable(kernel):
        return np.asarray(kernel(A, B))
    return pairwise_kernels(A, B, metric=kernel, **kernel_params(kernel, gamma, degree, coef0))
