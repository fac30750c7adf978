"""The kernel layer shared by every kernel estimator: canonical sparse samples, checked values, own copy of X."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import available_classifiers, make_classifier
from linsep._base import BaseKernelSeparator
from linsep.kernels import KernelColumnCache, kernel_matrix

KERNEL_ESTIMATORS = [name for name in available_classifiers()
                     if isinstance(make_classifier(name), BaseKernelSeparator)]
# small budgets: every estimator separates the wide-margin set below well within them
FAST = {"max_iter": 200}


def _wide_margin(n=24, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 0.3, (n // 2, 2)) + 3, rng.normal(0, 0.3, (n // 2, 2)) - 3])
    return X, np.repeat([1, 0], n // 2)


def _with_unsummed_duplicates(X):
    """CSR holding each cell ``v`` as two stored entries ``v + 7`` and ``-7`` (scipy and scikit-learn keep both)."""
    n, d = X.shape
    indptr = np.arange(n + 1) * 2 * d
    indices = np.tile(np.repeat(np.arange(d), 2), n)
    data = np.column_stack([X.ravel() + 7.0, np.full(X.size, -7.0)]).ravel()
    D = sp.csr_matrix((data, indices, indptr), shape=X.shape)
    assert not D.has_canonical_format
    np.testing.assert_allclose(D.toarray(), X, atol=1e-12)
    return D


def _fit(name, X, y):
    params = dict(FAST)
    if "random_state" in make_classifier(name).get_params():
        params["random_state"] = 0  # the same shuffles and splits for both fits compared
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a budget reached is not what these tests are about
        return make_classifier(name, **params).fit(X, y)


@pytest.mark.parametrize("name", KERNEL_ESTIMATORS)
def test_duplicate_entries_give_the_model_of_the_canonical_matrix(name):
    X, y = _wide_margin()
    D = _with_unsummed_duplicates(X)
    stored = (D.data.copy(), D.indices.copy(), D.indptr.copy())
    canonical = _fit(name, sp.csr_matrix(X), y)
    duplicated = _fit(name, D, y)
    for probe in (X, sp.csr_matrix(X), D):
        np.testing.assert_allclose(duplicated.decision_function(probe), canonical.decision_function(X),
                                   rtol=1e-6, atol=1e-9)
    assert duplicated.score(X, y) == 1.0
    # the caller's matrix is read, never summed in place
    for before, after in zip(stored, (D.data, D.indices, D.indptr)):
        np.testing.assert_array_equal(before, after)
    assert not D.has_canonical_format


@pytest.mark.parametrize("name", KERNEL_ESTIMATORS)
@pytest.mark.parametrize("sparse", [False, True])
def test_overwriting_the_training_array_after_fit_changes_no_prediction(name, sparse):
    X, y = _wide_margin()
    X_train = sp.csr_matrix(X) if sparse else X.copy()
    model = _fit(name, X_train, y)
    before = model.decision_function(X)
    if sparse:
        X_train.data[:] = 0.0
    else:
        X_train[:] = 0.0
    np.testing.assert_array_equal(model.decision_function(X), before)


def test_kernel_matrix_and_column_cache_read_duplicates_as_their_sum():
    X, _ = _wide_margin(8)
    D = _with_unsummed_duplicates(X)
    for kernel in ("rbf", "poly", "linear", lambda A, B: np.asarray((A @ B.T).todense() if sp.issparse(A) else A @ B.T)):
        expected = kernel_matrix(X, X, kernel=kernel, gamma=0.5)
        np.testing.assert_allclose(kernel_matrix(D, D, kernel=kernel, gamma=0.5), expected, rtol=1e-9, atol=1e-12)
        cache = KernelColumnCache(D, kernel=kernel, gamma=0.5)
        np.testing.assert_allclose(cache.column(3), expected[:, 3], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(cache.block([0, 2], [1, 5]), expected[np.ix_([0, 2], [1, 5])],
                                   rtol=1e-9, atol=1e-12)
    assert not D.has_canonical_format
