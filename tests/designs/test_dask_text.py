"""Dask for text: sparse row blocks, and wide blocks solved by distributed conjugate gradients (issue 32).

Sparse chunks (``scipy.sparse`` blocks, as ``da.from_array(X_csr, asarray=False)`` or dask-ml's vectorizers
give them) go through the same blockwise passes as dense ones.  Wide ``X`` (``d + 1`` beyond the direct
factorisation's limit, forced small here with ``solver_limits(direct_max_columns=...)``) is solved without the
``(d+1)²`` Gram matrix: every CG product ``YᵀY v`` is one pass over the blocks, summed on the client, so the
fit follows the in-memory iterative fit (same iterations, same verdicts) to the rounding of the sums.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from linsep import HoKashyapClassifier, LagrangianSVMClassifier, MSEClassifier, make_classifier  # noqa: E402
from linsep._core.linalg import solver_limits  # noqa: E402
from linsep.designs import dask as dask_design  # noqa: E402

CHUNKS = (40, 23, 57)  # uneven row blocks, N = 120


def _problem(kind, n_classes, seed=0, d=30):
    rng = np.random.default_rng(seed)
    n = sum(CHUNKS)
    if kind == "sparse":
        X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    else:
        X = rng.standard_normal((n, d))
    scores = np.asarray(X @ rng.standard_normal(d)).ravel()
    y = np.digitize(scores, np.quantile(scores, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _on_dask(X):
    return da.from_array(X, chunks=(CHUNKS, X.shape[1]), asarray=False)


def _assert_same_model(memory, on_dask, rtol):
    W_mem = np.column_stack([memory.coef_, memory.intercept_])
    W_dask = np.column_stack([on_dask.coef_, on_dask.intercept_])
    scale = np.abs(W_mem).max(axis=1, keepdims=True)
    assert np.all(np.abs(W_dask - W_mem) <= rtol * scale), (np.abs(W_dask - W_mem) / scale).max()
    np.testing.assert_array_equal(np.atleast_1d(on_dask.status_), np.atleast_1d(memory.status_))
    np.testing.assert_array_equal(np.atleast_1d(on_dask.n_iter_), np.atleast_1d(memory.n_iter_))


@pytest.mark.parametrize("name, n_classes", [("hk", 2), ("hk", 3), ("mhks", 2), ("mhks", 3), ("mse", 2), ("mse", 3),
                                             ("lsvm", 2)])
def test_sparse_row_blocks_give_the_in_memory_sparse_fit(client, name, n_classes):
    X, y = _problem("sparse", n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        memory = make_classifier(name).fit(X, y)
        on_dask = make_classifier(name).fit(_on_dask(X), y)
    _assert_same_model(memory, on_dask, 1e-8)
    np.testing.assert_array_equal(on_dask.predict(_on_dask(X)).compute(), memory.predict(X))


def test_sparse_row_blocks_with_weights_give_the_weighted_fit(client):
    X, y = _problem("sparse", 2)
    weights = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    memory = HoKashyapClassifier(C=1.0).fit(X, y, sample_weight=weights)
    on_dask = HoKashyapClassifier(C=1.0).fit(_on_dask(X), y, sample_weight=weights)
    _assert_same_model(memory, on_dask, 1e-8)


# Few iterations each (every CG product is a round trip): the iterates must match, not converge.
_WIDE = [("mhks", lambda: HoKashyapClassifier(C=10.0, max_iter=8)),
         ("hk", lambda: HoKashyapClassifier(max_iter=15)),
         ("lsvm", lambda: LagrangianSVMClassifier(C=0.1, tol=1e-3, max_iter=10))]


@pytest.mark.parametrize("make, n_classes, kind", [
    pytest.param(make, n_classes, kind, id=f"{name}-{n_classes}-{kind}")
    for name, make in _WIDE for n_classes, kind in ((2, "sparse"), (2, "dense"), (3, "sparse"))
    if not (name == "hk" and n_classes == 3)])  # (HK's minimum-norm map: a round trip per CG step, 3 times)
def test_wide_blocks_are_solved_without_the_gram_matrix_and_match_the_in_memory_fit(client, make, kind, n_classes):
    X, y = _problem(kind, n_classes, d=30)
    p = X.shape[1] + 1
    with solver_limits(direct_max_columns=20), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        memory = make().fit(X, y)
        with dask_design.round_trips() as trips:
            on_dask = make().fit(_on_dask(X), y)
    assert trips.largest < p * p  # p-vectors and per-block scalars came back: never a (d+1)² matrix
    _assert_same_model(memory, on_dask, 1e-6)


@pytest.mark.parametrize("make", [lambda: HoKashyapClassifier(C=10.0, max_iter=8),
                                  lambda: LagrangianSVMClassifier(C=0.1, tol=1e-3, max_iter=10)], ids=["mhks", "lsvm"])
def test_wide_blocks_with_inexact_solves_follow_the_in_memory_iterates(client, make):
    # Inexact W-steps (forcing > 0, as on large data: forced here on a small one) and the polish of the
    # returned weights, on dask as in memory.
    X, y = _problem("sparse", 2, d=30)
    with solver_limits(direct_max_columns=20, inexact_min_entries=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        memory = make().fit(X, y)
        on_dask = make().fit(_on_dask(X), y)
    _assert_same_model(memory, on_dask, 1e-6)


def test_wide_mse_and_irls_are_refused_naming_what_works(client):
    X, y = _problem("sparse", 2)
    with solver_limits(direct_max_columns=20):
        for make in (MSEClassifier, lambda: HoKashyapClassifier(loss="absolute")):
            with pytest.raises(ValueError, match="too many for .* on the dask backend.*HoKashyapClassifier"):
                make().fit(_on_dask(X), y)


def test_wide_weighted_fit_with_an_empty_block(client):
    X, y = _problem("sparse", 2)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    blocks = da.from_array(X, chunks=((40, 0, 80), X.shape[1]), asarray=False)  # an empty block adds nothing
    with solver_limits(direct_max_columns=20):
        memory = HoKashyapClassifier(C=10.0, max_iter=8).fit(X, y, sample_weight=weights)
        on_dask = HoKashyapClassifier(C=10.0, max_iter=8).fit(blocks, y, sample_weight=weights)
    _assert_same_model(memory, on_dask, 1e-6)


def test_non_finite_wide_blocks_are_refused(client):
    X, y = _problem("sparse", 2)
    X = X.copy()
    X.data[3] = np.nan
    with solver_limits(direct_max_columns=20), pytest.raises(ValueError, match="NaN or infinity"):
        HoKashyapClassifier(C=1.0).fit(_on_dask(X), y)


def test_wide_hk_proves_non_separability_with_a_dask_certificate(client):
    # XOR labels: the iterative W-step's candidate proof, re-solved tightly, checked blockwise on dask.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((sum(CHUNKS), 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with solver_limits(direct_max_columns=2):
        memory = HoKashyapClassifier(max_iter=300).fit(X, y)
        on_dask = HoKashyapClassifier(max_iter=300).fit(_on_dask(X), y)
    assert memory.status_ == on_dask.status_ == "not_separable"
    _assert_same_model(memory, on_dask, 1e-6)
    np.testing.assert_allclose(on_dask.certificate_.compute(), memory.certificate_, rtol=1e-6, atol=1e-12)
