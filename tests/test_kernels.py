"""The kernel layer shared by every kernel estimator: canonical sparse samples, checked values, own copy of X."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import available_classifiers, make_classifier
from linsep.estimators.base import BaseKernelSeparator
from linsep.kernels import KernelColumnCache, kernel_matrix, low_rank_gram_factor
from linsep.solvers.lsvm.solver import kernel_lagrangian_svm

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


def test_low_rank_gram_factor_reproduces_the_gram_matrix_to_rounding():
    X = np.random.default_rng(0).normal(size=(2000, 2))
    F = low_rank_gram_factor(X, kernel="rbf", gamma=0.5)
    assert F is not None and F.shape[1] < 2000 // 4
    K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    assert np.abs(K - F @ F.T).max() <= 1e-10
    F_poly = low_rank_gram_factor(X, kernel="poly", gamma=1.0, degree=2, coef0=1.0)
    assert F_poly.shape[1] == 6  # the monomials of degree <= 2 in the plane
    np.testing.assert_allclose(F_poly @ F_poly.T, kernel_matrix(X, X, kernel="poly", gamma=1.0, degree=2, coef0=1.0),
                               atol=1e-9)
    # no factor where it would not pay or not represent K
    assert low_rank_gram_factor(X, kernel="sigmoid", gamma=0.5) is None  # not positive semi-definite
    assert low_rank_gram_factor(X[:200], kernel="rbf", gamma=0.5) is None  # fewer than 4 blocks of columns
    wide = np.random.default_rng(1).normal(size=(2000, 50))
    assert low_rank_gram_factor(wide, kernel="rbf", gamma=1.0) is None  # full numerical rank


def test_kernel_lsvm_with_one_positive_among_many_converges_to_the_dense_solution():
    # Few active constraints: hundreds of steps of (22).  On the low-rank factor of K each is O(N r).
    X = np.random.default_rng(0).normal(size=(2000, 2))
    y = np.zeros(2000, dtype=int)
    y[0] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged well within the default budget: no ConvergenceWarning
        model = make_classifier("kernel_lsvm", C=1.0).fit(X, y)
    assert model.status_ == "converged" and model.n_iter_ < 1000
    assert low_rank_gram_factor(X, kernel="rbf", gamma=model._gamma) is not None  # the O(N r) path was taken
    K = kernel_matrix(X, X, kernel="rbf", gamma=model._gamma)
    dense = kernel_lagrangian_svm(K, np.where(y == 1, 1.0, -1.0), C=1.0)
    assert dense.n_iter == model.n_iter_
    np.testing.assert_allclose(model.dual_coef_[0], dense.weights, atol=1e-9)
    np.testing.assert_allclose(model.intercept_[0], dense.intercept, atol=1e-9)


@pytest.mark.numerics  # a path of discrete choices that BLAS kernels round differently
@pytest.mark.parametrize("name", KERNEL_ESTIMATORS)
def test_a_sparse_precomputed_gram_matrix_gives_the_model_of_the_dense_one(name):
    X, y = _wide_margin()
    K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    extra = {}
    if make_classifier(name).get_params().get("early_stopping"):  # precomputed: validation rows given
        extra = {"X_val": K[::3], "y_val": y[::3]}
    models = []
    for gram in (K, sp.csr_matrix(K), _with_unsummed_duplicates(K)):
        params = {**FAST, "kernel": "precomputed"}
        if "random_state" in make_classifier(name).get_params():
            params["random_state"] = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models.append(make_classifier(name, **params).fit(gram, y, **extra))
    reference = models[0].decision_function(K)
    np.testing.assert_allclose(models[1].decision_function(K), reference, rtol=1e-9, atol=1e-12)  # the same values
    # The unsummed duplicates hold each value as (v + 7) − 7: K to within 2u·7 per entry, not bit for bit.  The
    # rules that pick points by their scores (Schlesinger–Kozinec's worst point) may then take another path on
    # some BLAS kernels (Sandybridge: 5e-4 apart) and promise only their stopping rule: a margin within tol of
    # the optimum, so their scores agree to tol and their predictions exactly.  The others move continuously.
    perturbed = models[2].decision_function(K)
    if name == "kernel_sk":
        np.testing.assert_allclose(perturbed, reference, rtol=models[2].tol)
        np.testing.assert_array_equal(np.sign(perturbed), np.sign(reference))
    else:
        np.testing.assert_allclose(perturbed, reference, rtol=1e-9, atol=1e-12)


def test_kernel_lsvm_one_vs_rest_on_the_low_rank_factor_matches_the_dense_solves():
    rng = np.random.default_rng(1)
    y = np.arange(1800) % 3
    X = rng.normal(size=(1800, 2)) + 2.0 * np.eye(3, 2)[y]
    model = make_classifier("kernel_lsvm", C=4.0).fit(X, y)
    K = kernel_matrix(X, X, kernel="rbf", gamma=model._gamma)
    assert low_rank_gram_factor(X, kernel="rbf", gamma=model._gamma) is not None
    for k in range(3):
        dense = kernel_lagrangian_svm(K, np.where(y == k, 1.0, -1.0), C=4.0)
        assert dense.status == model.status_[k] and dense.n_iter == model.n_iter_[k]
        np.testing.assert_allclose(model.dual_coef_[k], dense.weights, atol=1e-8)
        np.testing.assert_allclose(model.intercept_[k], dense.intercept, atol=1e-8)


@pytest.mark.parametrize("kernel, params", [("linear", {}), ("rbf", {"gamma": 0.7}),
                                            ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
                                            ("sigmoid", {"gamma": 0.1, "coef0": -0.5})])
def test_namespace_kernels_equal_the_pairwise_kernels(kernel, params):
    # the formulas written once for array-API namespaces (kernel HK on a device) against scikit-learn's, on
    # array-api-strict arrays of its non-CPU device; the diagonal from the rows' norms alone (RBF's exactly 1)
    strict = pytest.importorskip("array_api_strict")
    from linsep.kernels import namespace_kernel_diagonal, namespace_kernel_matrix

    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    device = strict.Device("device1")
    Ad, Bd = strict.asarray(A, device=device), strict.asarray(B, device=device)
    K = namespace_kernel_matrix(Ad, Bd, strict, kernel=kernel, **params)
    diagonal = namespace_kernel_diagonal(Ad, strict, kernel=kernel, **params)
    assert K.device == device and diagonal.device == device
    host = lambda a: np.from_dlpack(a, device="cpu")
    np.testing.assert_allclose(host(K), kernel_matrix(A, B, kernel=kernel, **params), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(host(diagonal), np.diagonal(kernel_matrix(A, A, kernel=kernel, **params)),
                               rtol=1e-12, atol=1e-14)
    if kernel == "rbf":
        assert np.all(host(diagonal) == 1.0)
    with pytest.raises(ValueError, match="for array-API input"):
        namespace_kernel_matrix(Ad, Bd, strict, kernel="precomputed")


def test_kernel_values_do_not_depend_on_an_ambient_joblib_context():
    """Inside ``parallel_backend("threading", n_jobs=4)`` (a threaded grid search) the matrix is computed as outside.

    scikit-learn's ``pairwise_kernels`` takes the context's ``n_jobs`` unless told otherwise: it then splits
    the columns across threads, rounds the products differently and loses the exact zero of a row's
    distance to itself, so an RBF diagonal came out ``1 - 2⁻⁵²`` here and ``1`` there, and the kernel maps'
    pivots (chosen from the tracked diagonal) with it.
    """
    from joblib import parallel_backend

    X = np.random.default_rng(0).normal(size=(300, 4)) * 3.0
    outside = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    with parallel_backend("threading", n_jobs=4):
        inside = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    np.testing.assert_array_equal(inside, outside)
    assert np.all(np.diagonal(inside) == 1.0)
