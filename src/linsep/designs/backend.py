"""Which backend holds some data: the one question, asked here (a leaf module: it imports nothing of linsep).

``backend_of(X, y)`` is ``"dask"`` for a dask collection (by its type's module
name: dask itself is not imported, so ``import linsep`` never imports it),
``"array_api"`` for an array of another array-API namespace while
scikit-learn's array-API dispatch is on, else ``"memory"``.  The estimators
dispatch on it once (``BaseSeparator._fit_on_backend``); the fit data of each
backend (:mod:`linsep.designs.dask_fit`, :mod:`linsep.designs.array_api_fit`)
offer the steps of the same fit flow there.
"""

from __future__ import annotations

__all__ = ["ARRAY_API_ESTIMATORS", "BACKENDS", "DEVICE", "ROW_BLOCKS", "backend_of", "is_array_api_input", "is_dask_collection",
           "refuse_array_api"]

BACKENDS = ("memory", "dask", "array_api")

ROW_BLOCKS = "dask"
"""The backend of data in row blocks on a cluster (a ``dask.array``): fitted block by block where they live."""

DEVICE = "array_api"
"""The backend of an array-API namespace's arrays (PyTorch, CuPy, array-api-strict): fitted on their device."""


def is_dask_collection(obj):
    """Whether ``obj`` is a dask collection, by its type's module name (dask itself is not imported)."""
    module = type(obj).__module__ or ""
    return module == "dask" or module.startswith("dask.")


def is_array_api_input(X):
    """Whether ``X`` is an array of a non-NumPy array-API namespace and scikit-learn's array-API dispatch is on."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn import get_config

    if isinstance(X, np.ndarray) or sp.issparse(X) or is_dask_collection(X) or isinstance(X, (list, tuple)):
        return False
    if not get_config().get("array_api_dispatch", False):
        return False
    from sklearn.utils._array_api import _is_numpy_namespace, get_namespace

    try:
        xp, is_array_api = get_namespace(X)
    except (TypeError, ValueError):
        return False
    return bool(is_array_api) and not _is_numpy_namespace(xp)


def backend_of(X, y=None):
    """``"dask"``, ``"array_api"`` or ``"memory"``: where ``X`` (and ``y``) of a fit or a prediction live."""
    if is_dask_collection(X) or (y is not None and is_dask_collection(y)):
        return "dask"
    return "array_api" if is_array_api_input(X) else "memory"


ARRAY_API_ESTIMATORS = ("HoKashyapClassifier", "MSEClassifier", "LagrangianSVMClassifier",
                        "BatchPerceptronClassifier", "WidrowHoffClassifier", "KernelHoKashyapClassifier",
                        "KozinecClassifier", "SchlesingerKozinecClassifier", "HoKashyapClassifierCV",
                        "KernelLagrangianSVMClassifier", "KernelHoKashyapClassifierCV")
"""The estimators that fit array-API input where it lives (:mod:`linsep.designs.array_api_fit`;
``HoKashyapClassifierCV`` through :mod:`linsep.designs.array_api_cv`, ``KernelLagrangianSVMClassifier`` through
:mod:`linsep.designs.array_api_kernel_lsvm`, ``KernelHoKashyapClassifierCV`` through
:mod:`linsep.designs.array_api_kernel_cv`)."""


def refuse_array_api(X, y, owner, alternative=None):
    """Refuse array-API ``X`` (or ``y``) in one line where ``owner`` has no fit on the device.

    Such arrays would otherwise be converted to NumPy implicitly (which a
    CUDA tensor or a CuPy array refuses, with a message that names no
    alternative) or fail on a NumPy dtype; nothing is copied to the host
    behind the caller's back.  ``alternative``: the estimator with a device
    fit that does what ``owner`` does (the batch form of a sequential rule).
    """
    if is_array_api_input(X) or (y is not None and is_array_api_input(y)):
        instead = "" if alternative is None else f"; {alternative} fits them on the device"
        raise TypeError(f"{owner} does not fit array-API arrays where they live (only "
                        f"{', '.join(ARRAY_API_ESTIMATORS)} do){instead}; copy X and y to NumPy yourself "
                        "(tensor.cpu().numpy(), cupy.asnumpy(a)) to fit them on the host")
