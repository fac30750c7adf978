"""One finiteness check for the numbers a fit produces: kernel values and fitted models.

Input validation refuses NaN and infinity in ``X`` (scikit-learn's
``validate_data``), but finite input can still give non-finite numbers
later: a callable kernel that returns NaN, a polynomial kernel of high
degree that overflows, a step size so large that the weights overflow
(``learning_rate=1e308``).  A model built on such numbers predicts
garbage without saying so (every comparison with NaN is false), so the
places where those numbers enter or leave a fit call the functions here and
get one clear ``ValueError`` instead.

Each check is one pass over an array the fit has just computed, linear in
its size: negligible beside the work that produced it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["require_finite", "require_finite_model", "require_kernel_block"]

MODEL_ATTRIBUTES = ("coef_", "dual_coef_", "intercept_")
"""Fitted attributes that prediction reads; each must be finite."""


def require_finite(values, what, hint=""):
    """Raise ``ValueError`` naming ``what`` unless every entry of ``values`` is finite.

    Parameters
    ----------
    values : array-like or sparse matrix
        Numbers to check (a sparse matrix: its stored entries).
    what : str
        What the numbers are, for the message (``"kernel values"``).
    hint : str, optional
        What the caller can do about it, appended to the message.
    """
    data = values.data if hasattr(values, "tocsr") else values  # a sparse matrix: its stored entries
    data = np.asarray(data)
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        kinds = [name for name, present in (("NaN", np.isnan(data).any()), ("infinity", np.isinf(data).any()))
                 if present]
        raise ValueError(f"{what} must be finite, found {' and '.join(kinds)}{'; ' + hint if hint else ''}")


def require_kernel_block(K, shape, kernel):
    """Return ``K`` as an array after checking its shape and finiteness.

    A kernel ``k(A, B)`` must give one finite value per pair of rows:
    ``shape = (len(A), len(B))``.  A callable kernel that returns anything
    else would otherwise fail far from its cause (a broadcasting error in a
    solver) or, with NaN or infinity, give a model whose decision function
    is not a number.

    Parameters
    ----------
    K : array-like or sparse matrix
        The kernel block as returned by the kernel.
    shape : tuple of int
        ``(len(A), len(B))``.
    kernel : str or callable
        The kernel, named in the message.
    """
    name = getattr(kernel, "__name__", None) or str(kernel)
    if not hasattr(K, "tocsr"):
        K = np.asarray(K)
    if K.shape != tuple(shape):
        raise ValueError(f"kernel {name} must return an array of shape (len(A), len(B)) = {tuple(shape)} "
                         f"for k(A, B), got shape {K.shape}")
    if not hasattr(K, "tocsr") and K.dtype.kind not in "biuf":
        raise ValueError(f"kernel {name} must return real numbers, got an array of dtype {K.dtype}")
    require_finite(K, f"kernel values of kernel {name}",
                   "a kernel must return finite numbers (check the kernel, its parameters and the scale of X)")
    return K


def require_finite_model(estimator):
    """Raise ``ValueError`` if a fitted model attribute (``coef_``, ``dual_coef_``, ``intercept_``) is not finite.

    Called at the end of a fit: a weight vector that overflowed (a step size
    near the largest float, or data whose products overflow) cannot be
    evaluated, so the fit fails with a message that names the cause instead
    of returning a model that predicts one class by accident.
    """
    for name in MODEL_ATTRIBUTES:
        values = getattr(estimator, name, None)
        if type(values).__module__.startswith("dask") or getattr(values, "dtype", np.dtype(object)).kind not in "fc":
            continue  # absent, or a dask array (not computed here)
        require_finite(values, f"the fitted {name} of {type(estimator).__name__}",
                       "the iteration overflowed; use a smaller step size (learning_rate) or rescale the data")
