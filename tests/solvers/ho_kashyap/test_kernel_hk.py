"""Kernel Ho–Kashyap: verdicts in feature space, equivalence with linear HK, estimator contract."""

import numpy as np
import pytest

from linsep import HoKashyapClassifier, KernelHoKashyapClassifier, make_classifier
from linsep.kernels import kernel_matrix
from linsep.solvers.ho_kashyap.kernel import EmpiricalKernelMap, kernel_ho_kashyap
from problems import calls_of

XOR_X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]], dtype=float)
XOR_Y = np.array([0, 0, 1, 1])


def _noisy_xor(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, np.where(X[:, 0] * X[:, 1] > 0, "same", "diff")


def _blobs(n=60, d=3, gap=3.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, -1.0, 1.0)
    return rng.standard_normal((n, d)) + gap * y[:, None] / np.sqrt(d), y


def test_rbf_separates_xor():
    clf = make_classifier("kernel_hk", gamma=1.0, C=None).fit(XOR_X, XOR_Y)
    assert clf.status_ == "separable"
    np.testing.assert_array_equal(clf.predict(XOR_X), XOR_Y)
    X, y = _noisy_xor()
    X_test, y_test = _noisy_xor(400, seed=9)
    # map_tol=0.1: rank 19-20.  With the default 0.3 (rank 14) whether plain HK separates this sample depends on
    # the map's pivots, i.e. on which of the RBF kernel's equal diagonal entries NumPy's partition returns first
    # (linsep._core.linalg.pivoted_cholesky): NumPy 2 separated it, NumPy 1.24 stopped at 'converged'.
    plain = KernelHoKashyapClassifier(kernel="rbf", gamma=2.0, C=None, map_tol=0.1).fit(X, y)
    assert plain.status_ == "separable" and plain.score(X, y) == 1.0
    regularised = KernelHoKashyapClassifier(kernel="rbf", gamma=2.0, C=0.1, map_tol=0.0, tol=1e-6).fit(X, y)
    assert regularised.status_ == "converged"
    assert regularised.score(X, y) > 0.97 and regularised.score(X_test, y_test) > 0.9


def test_linear_kernel_on_xor_is_proved_not_separable():
    # the exact map (map_tol=0): the proof is then about the whole feature space
    clf = KernelHoKashyapClassifier(kernel="linear", C=None, map_tol=0.0).fit(XOR_X, XOR_Y)
    assert clf.status_ == "not_separable" and clf.rank_ == 2
    u = clf.certificate_
    y = np.where(XOR_Y == clf.classes_[1], 1.0, -1.0)
    assert u.min() >= 0 and u.max() > 0
    # Gordan: Σ u_i y_i φ(x_i) = 0 and Σ u_i y_i = 0, here with φ(x) = x
    np.testing.assert_allclose(XOR_X.T @ (u * y), 0, atol=1e-9 * u.max())
    np.testing.assert_allclose(np.sum(u * y), 0, atol=1e-9 * u.max())


def test_verdict_on_separable_data():
    X, y = _blobs()
    for kernel in ("linear", "rbf", "poly"):
        clf = KernelHoKashyapClassifier(kernel=kernel, C=None).fit(X, y)
        assert clf.status_ == "separable", kernel
        assert clf.score(X, y) == 1.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("C", [None, 0.5])
def test_linear_kernel_reproduces_linear_ho_kashyap(C):
    # With the linear kernel the empirical map is an orthogonal change of the
    # coordinates of X, which HK's criterion (and ‖w‖) does not see.
    # Overlapping data: both run the same 60 iterations (same trajectory, same end).
    # The exact map (map_tol=0) and the linear estimator's tol.
    X, y = _blobs(gap=1.0, seed=1)
    lin = HoKashyapClassifier(C=C, max_iter=60).fit(X, y)
    ker = KernelHoKashyapClassifier(kernel="linear", C=C, max_iter=60, map_tol=0.0, tol=lin.tol).fit(X, y)
    assert ker.status_ == lin.status_ and ker.n_iter_ == lin.n_iter_
    scale = np.abs(lin.decision_function(X)).max()
    np.testing.assert_allclose(ker.decision_function(X), lin.decision_function(X), atol=1e-7 * scale)
    np.testing.assert_allclose(ker.margin_vector_, lin.margin_vector_, rtol=1e-6, atol=1e-12)


def test_precomputed_equals_named_kernel_and_solver_returns_dual_form():
    X, y = _noisy_xor(60, seed=2)
    named = KernelHoKashyapClassifier(kernel="rbf", gamma=1.5, C=1.0).fit(X, y)
    K = kernel_matrix(X, X, kernel="rbf", gamma=1.5)
    pre = KernelHoKashyapClassifier(kernel="precomputed", C=1.0).fit(K, y)
    np.testing.assert_allclose(pre.decision_function(K), named.decision_function(X), atol=1e-8)
    y_pm = np.where(y == named.classes_[1], 1.0, -1.0)
    res = kernel_ho_kashyap(K, y_pm, C=1.0, map_tol=named.map_tol, tol=named.tol)
    np.testing.assert_allclose(K @ res.weights + res.intercept, named.decision_function(X), atol=1e-8)
    kmap = EmpiricalKernelMap(K)  # exact: the features reproduce the centred Gram matrix H K H
    H = np.eye(len(K)) - 1.0 / len(K)
    np.testing.assert_allclose(kmap.features @ kmap.features.T, H @ K @ H, atol=1e-10)
    np.testing.assert_allclose(kmap.transform(K), kmap.features, atol=1e-8)


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(3)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    y = np.repeat([10, 20, 30], 25)
    X = centers[np.repeat(np.arange(3), 25)] + 0.7 * rng.standard_normal((75, 2))
    clf = KernelHoKashyapClassifier(C=1.0, gamma=0.5).fit(X, y)
    assert clf.dual_coef_.shape == (3, 75) and clf.status_.shape == (3,)
    assert clf.score(X, y) > 0.9


def test_bad_input_errors_and_caller_arrays_untouched():
    X, y = _blobs(n=12)
    est = KernelHoKashyapClassifier()
    bad = X.copy()
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(bad, y)
    with pytest.raises(ValueError, match="only one class"):
        est.fit(X, np.zeros(12))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, y[:5])
    with pytest.raises(ValueError, match="square Gram matrix"):
        KernelHoKashyapClassifier(kernel="precomputed").fit(X, y)
    X32 = X.astype(np.float32)
    X_copy, y_copy = X32.copy(), y.copy()
    est.fit(X32, y)
    np.testing.assert_array_equal(X32, X_copy)
    np.testing.assert_array_equal(y, y_copy)


def _noisy_rings(seed, n=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(np.hypot(*X.T) + 0.3 * rng.normal(size=n) > 1.1, 1, -1)
    return X, y


def test_early_stopping_keeps_first_argmin_of_its_curve():
    X, y = _noisy_rings(0)
    X_val, y_val = _noisy_rings(1, 60)
    clf = KernelHoKashyapClassifier(early_stopping=True, gamma=1.0).fit(X, y, X_val=X_val, y_val=y_val)
    curve = clf.history_["validation_error"]
    assert clf.best_iter_ == int(np.argmin(curve)) + 1
    assert np.mean(clf.predict(X_val) != y_val) == pytest.approx(curve.min())


def test_early_stopping_precomputed_equals_named_kernel():
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = _noisy_rings(2)
    X_val, y_val = _noisy_rings(3, 40)
    named = KernelHoKashyapClassifier(early_stopping=True, gamma=0.7).fit(X, y, X_val=X_val, y_val=y_val)
    pre = KernelHoKashyapClassifier(early_stopping=True, kernel="precomputed").fit(
        rbf_kernel(X, gamma=0.7), y, X_val=rbf_kernel(X_val, X, gamma=0.7), y_val=y_val)
    assert pre.best_iter_ == named.best_iter_
    np.testing.assert_allclose(pre.decision_function(rbf_kernel(X_val, X, gamma=0.7)),
                               named.decision_function(X_val), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="precomputed"):
        KernelHoKashyapClassifier(early_stopping=True, kernel="precomputed").fit(rbf_kernel(X), y)


def test_early_stopping_holdout_is_seeded_and_multiclass():
    rng = np.random.default_rng(4)
    X = np.vstack([c + rng.normal(size=(30, 2)) for c in ([0, 0], [4, 0], [0, 4])])
    y = np.repeat([0, 1, 2], 30)
    a = KernelHoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)
    b = KernelHoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.best_iter_.shape == (3,) and a.X_fit_.shape[0] == 60
    assert a.score(X, y) > 0.9


# --- the truncated map and its cost -------------------------------------------------------------


def _dual_mhks_oracle(K, K_test, y, C, n_iter, mu=0.4):
    """Łęski's kernel MHKS in dual form on the centred Gram matrix, ``n_iter`` margin updates."""
    n = len(y)
    mean_row = K.mean(axis=0)
    H = np.eye(n) - 1.0 / n
    Kc = H @ K @ H
    Kc_test = (K_test - mean_row) @ H  # centred rows k(x, X) of new samples
    B = np.full(n, 1e-6)
    for _ in range(n_iter + 1):
        s = y * (B + 1.0)  # unsigned targets
        beta = np.linalg.solve(Kc + C * np.eye(n), s - s.mean())
        E = y * (Kc @ beta + s.mean()) - 1.0 - B
        B = B + 2 * mu * np.maximum(E, 0.0)
    return Kc_test @ beta + s.mean()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # tol=0: runs max_iter
@pytest.mark.parametrize("map_tol", [0.0, 0.2])
def test_multiclass_matches_dual_mhks_reference(map_tol):
    rng = np.random.default_rng(6)
    X = np.vstack([c + 0.9 * rng.normal(size=(20, 2)) for c in ([0, 0], [2, 0], [0, 2])])
    y = np.repeat([0, 1, 2], 20)
    X_test = rng.uniform(-1, 3, size=(30, 2))
    clf = KernelHoKashyapClassifier(gamma=0.8, C=0.3, map_tol=map_tol, tol=0.0, max_iter=25).fit(X, y)
    K, K_test = kernel_matrix(X, X, gamma=0.8), kernel_matrix(X_test, X, gamma=0.8)
    if map_tol:  # the truncated map is exact HK for the Nyström kernel on the pivots
        P = clf.support_
        assert len(P) < len(X)
        K_test = K_test[:, P] @ np.linalg.solve(K[np.ix_(P, P)], K[P])
        K = K[:, P] @ np.linalg.solve(K[np.ix_(P, P)], K[P])
    expected = np.column_stack([_dual_mhks_oracle(K, K_test, np.where(y == k, 1.0, -1.0), 0.3, 25)
                                for k in range(3)])
    np.testing.assert_allclose(clf.decision_function(X_test), expected, atol=1e-7)


def test_map_and_gram_built_once_for_all_classes():
    from linsep._core.linalg import _gram

    rng = np.random.default_rng(7)
    X = rng.normal(size=(90, 4))
    y = np.repeat([0, 1, 2, 3, 4], 18)
    with calls_of(EmpiricalKernelMap.__init__, _gram) as (built, grams):
        clf = KernelHoKashyapClassifier().fit(X, y)
    assert clf.dual_coef_.shape == (5, 90)
    assert len(built) == 1 and not grams  # one map, no YᵀY product per class


def test_named_kernel_computes_only_pivot_columns():
    clf = KernelHoKashyapClassifier(gamma=0.5)
    X, y = _noisy_rings(8, n=400)
    with calls_of(type(clf)._kernel_matrix) as (calls,):
        clf.fit(X, y)
    assert calls and all(call["self"] is clf for call in calls)
    columns = sum(call["B"].shape[0] for call in calls) - X.shape[0]  # less the diagonal blocks
    assert clf.rank_ < 100 and columns <= clf.rank_ + 2 * 64


def test_defaults_generalise_on_noisy_data_and_truncate():
    X, y = _noisy_rings(10, n=600)
    X_test, y_test = _noisy_rings(11, n=600)
    clf = KernelHoKashyapClassifier().fit(X, y)
    assert clf.C == 0.3 and clf.status_ in ("converged", "separable")
    assert clf.rank_ < 60 and clf.rank_ <= len(clf.support_) <= clf.rank_ + 1
    np.testing.assert_array_equal(clf.dual_coef_[:, np.setdiff1d(np.arange(600), clf.support_)], 0.0)
    # plain HK in the exact map interpolates the noise
    plain = KernelHoKashyapClassifier(C=None, map_tol=0.0, gamma=10.0).fit(X, y)
    assert plain.score(X, y) == 1.0
    assert clf.score(X_test, y_test) > 0.85 > plain.score(X_test, y_test)
    assert make_classifier("kernel_hkes").C is None  # Lauer & Bloch's HKES: early stopping, no C


def test_truncated_map_proof_is_about_its_subspace():
    # XOR in (x1, x2) with a small third coordinate that separates the classes: the exact
    # linear map (rank 3) separates; at map_tol=0.3 the map keeps 2 directions, in which
    # the points are an XOR, and the proof is about that subspace only.
    X = np.array([[1, 1, 0.1], [-1, -1, 0.1], [1, -1, -0.1], [-1, 1, -0.1]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    K = X @ X.T
    assert kernel_ho_kashyap(K, y, C=None).status == "separable"
    kmap = EmpiricalKernelMap(K, tol=0.3)
    res = kernel_ho_kashyap(K, y, kernel_map=kmap, C=None)
    assert res.status == "not_separable" and kmap.rank == 2
    u = res.certificate
    # Gordan in the truncated feature space: Σ u_i y_i φ̃(x_i) = 0, Σ u_i y_i = 0 ...
    np.testing.assert_allclose(kmap.features.T @ (u * y), 0, atol=1e-12 * u.max())
    np.testing.assert_allclose(np.sum(u * y), 0, atol=1e-12 * u.max())
    # ... but not in the whole feature space (x3 separates)
    assert abs((X.T @ (u * y))[2]) > 0.1 * u.max()
