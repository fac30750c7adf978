"""Dask test problems shared by ``designs/test_dask.py``, ``designs/test_dask_chains.py``, ``designs/test_designs.py``
and ``solvers/ho_kashyap/test_hk_params.py``: in-memory data, its dask twin in uneven row chunks, fits on both.

Import it after ``pytest.importorskip("dask.array")``.
"""

import warnings

import dask.array as da
import numpy as np
from sklearn.exceptions import ConvergenceWarning

RTOL = 1e-8
CHUNKS = (70, 33, 97)  # uneven row chunks, N = 200


def pair_data(kind, n=sum(CHUNKS), d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if kind == "separable":
        y = (X @ np.arange(1.0, d + 1) + 0.5 > 0).astype(int)
        X[:, 0] += np.where(y == 1, 0.5, -0.5)  # a margin: HK separates in a few steps
    elif kind == "xor":
        y = (X[:, 0] * X[:, 1] > 0).astype(int)
    elif kind == "noisy":
        y = (X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    else:  # three classes along the first feature, with strings as labels
        y = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + 0.3 * rng.standard_normal(n), [-0.4, 0.4])]
    return X, y


def dask_pair(X, y, dask_y=True):
    Xd = da.from_array(X, chunks=(CHUNKS, X.shape[1]))
    return Xd, (da.from_array(y, chunks=(CHUNKS,)) if dask_y else y)


def fit_both(make, X, y, **fit_kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        memory = make().fit(X, y, **fit_kwargs)
        Xd, yd = dask_pair(X, y)
        on_dask = make().fit(Xd, yd, **fit_kwargs)
    return memory, on_dask


def assert_same_fit(memory, on_dask):
    assert isinstance(on_dask.coef_, np.ndarray) and isinstance(on_dask.intercept_, np.ndarray)
    W_mem = np.column_stack([memory.coef_, memory.intercept_])
    W_dask = np.column_stack([on_dask.coef_, on_dask.intercept_])
    scale = np.abs(W_mem).max(axis=1, keepdims=True)
    assert np.all(np.abs(W_dask - W_mem) <= RTOL * scale), np.abs(W_dask - W_mem).max() / scale.min()
    np.testing.assert_array_equal(on_dask.classes_, memory.classes_)
    np.testing.assert_array_equal(np.atleast_1d(on_dask.status_), np.atleast_1d(memory.status_))
    np.testing.assert_array_equal(np.atleast_1d(on_dask.n_iter_), np.atleast_1d(memory.n_iter_))
    assert on_dask.n_features_in_ == memory.n_features_in_


def design_problem(seed=0, n=100, d=3):
    """A noisy two-class problem (labels 0/1) for the Design protocol's tests (chunked there as 40, 25, 35 rows)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1, 0)
    return X, y
