"""Kozinec, Schlesinger–Kozinec (linear, both formulations) and kernel SK."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from linsep import (
    KernelSchlesingerKozinecClassifier,
    KozinecClassifier,
    SchlesingerKozinecClassifier,
    make_classifier,
)
from linsep.kernels import KernelColumnCache, kernel_matrix
from linsep.solvers.kozinec.solver import kernel_schlesinger_kozinec, schlesinger_kozinec

XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([0, 0, 1, 1])


def separable(seed, n=60, d=3, gap=0.3):
    """Linearly separable data with a margin of at least ``gap / 2`` around a random hyperplane."""
    rng = np.random.RandomState(seed)
    w, b = rng.randn(d), rng.randn() * 0.5
    w /= np.linalg.norm(w)
    X = rng.uniform(-2, 2, size=(4 * n, d))
    s = X @ w + b
    keep = np.abs(s) > gap / 2
    X, s = X[keep][:n], s[keep][:n]
    y = (s > 0).astype(int)
    if y.min() == y.max():  # both classes needed
        y[0] = 1 - y[0]
        X[0] -= 2 * s[0] * w
    return X, y


def svm_margin(X, y):
    """Achieved margin ``min y f / ‖w‖`` of libsvm's (near) hard-margin linear SVM."""
    svc = SVC(kernel="linear", C=1e8, tol=1e-6).fit(X, y)
    return np.min((2 * y - 1) * svc.decision_function(X)) / np.linalg.norm(svc.coef_)


# --- textbook oracles: the update rules written out plainly, vectors kept explicitly ---

def oracle_augmented_sk(X, y_pm, eps, max_iter):
    """Seed note, §2: ω = ξ_1; stop if ‖ω‖ - min⟨ω,ξ⟩/‖ω‖ <= ε; else ω ← nearest point of [ω, ξ_k]."""
    xi = np.c_[X, np.ones(len(X))] * y_pm[:, None]
    omega = xi[0].copy()
    for it in range(max_iter + 1):
        scores = xi @ omega
        k = np.argmin(scores)
        if np.linalg.norm(omega) - scores[k] / np.linalg.norm(omega) <= eps:
            return omega, it
        diff = omega - xi[k]
        t = min(1.0, omega @ diff / (diff @ diff))
        omega = (1 - t) * omega + t * xi[k]
    return omega, max_iter


def oracle_two_hull_sk(X, y_pm, eps, max_iter):
    """Franc & Hlaváč 2003, SK on two hulls: w1, w2 start at the first sample of each class."""
    w1, w2 = X[y_pm > 0][0].copy(), X[y_pm < 0][0].copy()
    for it in range(max_iter + 1):
        w = w1 - w2
        nw = np.linalg.norm(w)
        m = np.array([(x - w2) @ w / nw if yi > 0 else (w1 - x) @ w / nw for x, yi in zip(X, y_pm)])
        t = np.argmin(m)
        if nw - m[t] <= eps:
            break
        if y_pm[t] > 0:
            k = min(1.0, (w1 - w2) @ (w1 - X[t]) / ((w1 - X[t]) @ (w1 - X[t])))
            w1 = (1 - k) * w1 + k * X[t]
        else:
            k = min(1.0, (w2 - w1) @ (w2 - X[t]) / ((w2 - X[t]) @ (w2 - X[t])))
            w2 = (1 - k) * w2 + k * X[t]
    w = w1 - w2
    return np.append(w, (w2 @ w2 - w1 @ w1) / 2), it


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_augmented_update_matches_textbook_oracle(seed):
    X, y = separable(seed, n=30)
    y_pm = 2.0 * y - 1
    expected, n_expected = oracle_augmented_sk(X, y_pm, eps=1e-2, max_iter=5000)
    result = schlesinger_kozinec(X, y_pm, formulation="augmented", epsilon=1e-2, max_iter=5000)
    assert result.n_iter == n_expected
    np.testing.assert_allclose(result.weights, expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_hull_update_matches_textbook_oracle(seed):
    X, y = separable(seed, n=30)
    y_pm = 2.0 * y - 1
    expected, n_expected = oracle_two_hull_sk(X, y_pm, eps=1e-2, max_iter=5000)
    result = schlesinger_kozinec(X, y_pm, epsilon=1e-2, max_iter=5000)
    assert result.n_iter == n_expected
    np.testing.assert_allclose(result.weights, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda: KozinecClassifier(),
    lambda: KozinecClassifier(formulation="augmented"),
    lambda: SchlesingerKozinecClassifier(),
    lambda: SchlesingerKozinecClassifier(formulation="augmented"),
    lambda: KernelSchlesingerKozinecClassifier(C=None),
    lambda: KernelSchlesingerKozinecClassifier(kernel="linear", C=None),
    lambda: KernelSchlesingerKozinecClassifier(C=None, update="sk"),
    lambda: KernelSchlesingerKozinecClassifier(C=None, shrinking=False),
])
@pytest.mark.parametrize("seed", [0, 3])
def test_zero_training_error_on_separable_data(make, seed):
    X, y = separable(seed)
    clf = make().fit(X, y)
    assert clf.status_ in ("separable", "converged")
    assert np.all(clf.predict(X) == y)
    assert clf.margin_ > 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(6, 40), d=st.integers(1, 4))
def test_sk_margin_is_epsilon_optimal_against_svm(seed, n, d):
    X, y = separable(seed, n=n, d=d, gap=0.4)
    eps = 1e-3
    clf = SchlesingerKozinecClassifier(epsilon=eps).fit(X, y)
    assert clf.status_ == "converged"
    assert clf.margin_upper_bound_ - clf.margin_ <= eps
    # the reported margin is the achieved one
    w = clf.coef_.ravel()
    achieved = np.min((2 * y - 1) * (X @ w + clf.intercept_[0])) / np.linalg.norm(w)
    assert clf.margin_ == pytest.approx(achieved, rel=1e-7, abs=1e-9)
    assert clf.margin_ >= svm_margin(X, y) - eps
    assert clf.margin_upper_bound_ >= svm_margin(X, y) - 1e-7  # an upper bound of the optimum


def test_relative_tol_is_scale_free():
    X, y = separable(5)
    small = SchlesingerKozinecClassifier().fit(X, y)
    large = SchlesingerKozinecClassifier().fit(X * 1e6 + 3e6, y)
    assert small.margin_upper_bound_ - small.margin_ <= 1e-2 * small.margin_upper_bound_
    assert large.n_iter_ == small.n_iter_
    assert large.margin_ == pytest.approx(1e6 * small.margin_, rel=1e-6)
    assert np.all(large.predict(X * 1e6 + 3e6) == y)


def test_augmented_margin_is_in_augmented_space():
    X, y = separable(2)
    clf = SchlesingerKozinecClassifier(formulation="augmented").fit(X, y)
    omega = np.append(clf.coef_.ravel(), clf.intercept_)
    xi = np.c_[X, np.ones(len(X))] * (2 * y - 1)[:, None]
    assert clf.margin_ == pytest.approx(np.min(xi @ omega) / np.linalg.norm(omega), rel=1e-7)
    assert clf.margin_upper_bound_ == pytest.approx(np.linalg.norm(omega), rel=1e-7)


def test_kozinec_stops_at_first_separating_hyperplane():
    X, y = separable(4)
    koz = KozinecClassifier(record_history=True).fit(X, y)
    errors = koz.history_["training_errors"]
    assert errors[-1] == 0 and np.all(errors[:-1] > 0)
    sk = SchlesingerKozinecClassifier().fit(X, y)
    assert koz.n_iter_ <= sk.n_iter_ and koz.margin_ <= sk.margin_ + 1e-12


def test_linear_kernel_sk_equals_linear_two_hull_sk():
    X, y = separable(6)
    X = X - X.mean(axis=0)  # the linear solver centres; the kernel one does not
    lin = SchlesingerKozinecClassifier().fit(X, y)
    ker = KernelSchlesingerKozinecClassifier(kernel="linear", C=None, update="sk").fit(X, y)
    assert ker.n_iter_ == lin.n_iter_
    np.testing.assert_allclose(ker.dual_coef_ @ X, lin.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ker.decision_function(X), lin.decision_function(X), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("update", ["sk", "mdm"])
@pytest.mark.parametrize("C", [None, 1.0, 100.0])
def test_kernel_sk_rbf_separates_xor(C, update):
    clf = KernelSchlesingerKozinecClassifier(kernel="rbf", gamma=2.0, C=C, update=update).fit(XOR_X, XOR_Y)
    assert clf.status_ == "converged"
    assert np.all(clf.predict(XOR_X) == XOR_Y)


@pytest.mark.parametrize("update", ["sk", "mdm"])
def test_kernel_sk_matches_svm_margin_rbf(update):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(150, 2))
    r = np.hypot(X[:, 0], X[:, 1])
    keep = np.abs(r - 0.6) > 0.08
    X, y = X[keep], (r[keep] > 0.6).astype(int)
    clf = KernelSchlesingerKozinecClassifier(gamma=2.0, C=None, tol=1e-3, update=update).fit(X, y)
    svc = SVC(kernel="rbf", gamma=2.0, C=1e6, tol=1e-6).fit(X, y)
    K = kernel_matrix(X[svc.support_], X[svc.support_], kernel="rbf", gamma=2.0)
    svm = 1.0 / np.sqrt(svc.dual_coef_ @ K @ svc.dual_coef_.T).item()
    assert clf.margin_ >= (1 - 1e-3) * svm - 1e-9
    assert np.all(clf.predict(X) == y)


def test_kernel_sk_precomputed_equals_rbf():
    X, y = separable(7, n=40)
    rbf = KernelSchlesingerKozinecClassifier(gamma=0.5).fit(X, y)
    K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    pre = KernelSchlesingerKozinecClassifier(kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(pre.dual_coef_, rbf.dual_coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(pre.decision_function(K), rbf.decision_function(X), rtol=1e-8, atol=1e-10)


def test_kernel_sk_callable_and_sparse():
    X, y = separable(8, n=40)
    base = KernelSchlesingerKozinecClassifier(kernel="poly", gamma=0.5, degree=2, coef0=1.0).fit(X, y)
    call = KernelSchlesingerKozinecClassifier(
        kernel=lambda A, B: (0.5 * np.asarray(A @ B.T) + 1.0) ** 2).fit(X, y)
    spar = KernelSchlesingerKozinecClassifier(kernel="poly", gamma=0.5, degree=2, coef0=1.0).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(call.dual_coef_, base.dual_coef_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(spar.dual_coef_, base.dual_coef_, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid"])
@pytest.mark.parametrize("sparse", [False, True])
def test_column_cache_matches_kernel_matrix(kernel, sparse):
    rng = np.random.RandomState(1)
    X = rng.randn(30, 4)
    params = {"gamma": 0.3, "degree": 3, "coef0": 0.5}
    full = kernel_matrix(X, X, kernel=kernel, **params)
    cache = KernelColumnCache(sp.csr_matrix(X) if sparse else X, kernel=kernel, **params,
                              cache_size=8 * 30 * 5 / 2**20)  # room for 5 columns
    assert cache.n_columns == 5
    order = [0, 1, 2, 0, 3, 4, 5, 0, 6, 29, 1]
    for j in order:
        np.testing.assert_allclose(cache.column(j), full[:, j], rtol=1e-10, atol=1e-12)
    assert cache.n_requests == len(order)
    # 0 stays cached (recently used); 1 was evicted by 5, 6, 29 and recomputed
    assert cache.n_computed == len(order) - 2
    assert cache._store.shape == (5, 30)


def test_kernel_sk_memory_is_bounded():
    X, y = separable(9, n=200)
    clf = KernelSchlesingerKozinecClassifier(C=None, cache_size=8 * 200 * 3 / 2**20).fit(X, y)
    assert np.all(clf.predict(X) == y)
    assert clf.n_kernel_columns_ >= 1  # columns recomputed after eviction, never the Gram


def test_multiclass_one_vs_rest():
    X, y = make_blobs(n_samples=90, centers=[[-5, 0], [5, 0], [0, 6]], cluster_std=0.6, random_state=0)
    for name in ("kozinec", "sk", "kernel_sk"):
        clf = make_classifier(name).fit(X, y)
        assert clf.classes_.tolist() == [0, 1, 2]
        assert np.mean(clf.predict(X) == y) == 1.0
        assert clf.margin_.shape == (3,) and clf.margin_upper_bound_.shape == (3,)
        assert clf.decision_function(X).shape == (90, 3)


def test_string_labels():
    X, y = separable(10)
    labels = np.array(["no", "yes"])[y]
    clf = SchlesingerKozinecClassifier().fit(X, labels)
    assert np.all(clf.predict(X) == labels)


def test_hard_margin_non_separable_ends_at_max_iter_with_warning():
    rng = np.random.RandomState(0)
    X, y = rng.randn(40, 5), rng.randint(0, 2, 40)  # random labels: overlapping hulls
    clf = KernelSchlesingerKozinecClassifier(kernel="linear", C=None, max_iter=20)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf.fit(X, y)
    assert clf.status_ == "max_iter" and clf.n_iter_ == 20
    # run longer, the hulls are seen to touch (or the budget ends): never a hang
    long = KernelSchlesingerKozinecClassifier(kernel="linear", C=None, max_iter=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        long.fit(X, y)
    assert long.status_ in ("not_separable", "max_iter") and long.n_iter_ <= 5000
    soft = KernelSchlesingerKozinecClassifier(kernel="linear", C=1.0).fit(X, y)
    assert soft.status_ == "converged" and soft.margin_ > 0


def test_touching_hulls_give_a_certificate():
    # the same point in both classes: the hulls intersect
    X = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [2.0, 0.0], [3.0, 3.0]])
    y_pm = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    for formulation in ("two_hull", "augmented"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = schlesinger_kozinec(X, y_pm, formulation=formulation, max_iter=10_000)
        assert r.status in ("not_separable", "max_iter")
        if r.status == "not_separable":
            u = r.certificate
            Y = np.c_[X, np.ones(len(X))] * y_pm[:, None]
            assert u.min() >= 0 and u.sum() > 0
            assert np.abs(Y.T @ u).max() <= 1e-6 * u.sum()


def test_non_separable_keeps_the_pocket_iterate():
    X, y = make_blobs(n_samples=200, centers=[[0, 0], [2.5, 0]], random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = SchlesingerKozinecClassifier(max_iter=2000).fit(X, y)
    assert clf.status_ in ("not_separable", "max_iter")
    assert np.mean(clf.predict(X) == y) > 0.85


def test_soft_margin_sk_converges_on_overlapping_classes():
    X, y = make_blobs(n_samples=200, centers=[[0, 0], [2.5, 0]], random_state=1)
    clf = SchlesingerKozinecClassifier(C=1.0).fit(X, y)
    assert clf.status_ == "converged"
    assert np.mean(clf.predict(X) == y) > 0.85


def test_history_and_solver_result():
    X, y = separable(11)
    clf = SchlesingerKozinecClassifier(record_history=True).fit(X, y)
    h = clf.history_
    assert len(h["margin"]) == clf.n_iter_ + 1
    assert np.all(h["margin_upper_bound"] >= h["margin"])
    # the upper bound ‖w‖/2 never increases (nearest point of a segment)
    assert np.all(np.diff(h["margin_upper_bound"]) <= 1e-12)
    r = kernel_schlesinger_kozinec(KernelColumnCache(X, kernel="linear").column, 2.0 * y - 1)
    assert r.weights.shape == (len(y),) and r.intercept is not None


def test_invalid_arguments():
    with pytest.raises(ValueError, match="formulation"):
        schlesinger_kozinec(np.eye(2), np.array([1.0, -1.0]), formulation="bogus")
    with pytest.raises(ValueError, match="both classes"):
        schlesinger_kozinec(np.eye(2), np.array([1.0, 1.0]))
    with pytest.raises(ValueError):
        SchlesingerKozinecClassifier(tol=-1).fit(XOR_X, XOR_Y)
    with pytest.raises(ValueError, match="kernel"):
        KernelColumnCache(XOR_X, kernel="bogus")


def test_mdm_update_needs_fewer_steps_and_fewer_support_vectors():
    X, y = separable(12, n=150)
    sk = KernelSchlesingerKozinecClassifier(C=None, gamma=0.5, update="sk").fit(X, y)
    mdm = KernelSchlesingerKozinecClassifier(C=None, gamma=0.5, update="mdm").fit(X, y)
    assert mdm.status_ == sk.status_ == "converged"
    assert mdm.n_iter_ < sk.n_iter_
    assert np.count_nonzero(mdm.dual_coef_) <= np.count_nonzero(sk.dual_coef_)
    alpha = np.abs(mdm.dual_coef_[0])
    assert alpha.min() >= 0 and alpha[y == 1].sum() == pytest.approx(1) and alpha[y == 0].sum() == pytest.approx(1)


# --- shrinking: steps on a working set, the rule and the margins checked on all points ---

def checkerboard(n, seed=0, band=0.3):
    """Separable in an RBF space (``sign(sin 2x · sin 2y)`` with a band removed), as the benchmark."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-3, 3, size=(4 * n, 2))
    s = np.sin(2 * X[:, 0]) * np.sin(2 * X[:, 1])
    X = X[np.abs(s) > band][:n]
    return X, (np.sin(2 * X[:, 0]) * np.sin(2 * X[:, 1]) > 0).astype(int)


def exact_margin(clf, X, y):
    """``min_i y_i f(x_i) / ‖w‖ - `` over ALL points, ``‖w‖/2`` from the dual coefficients."""
    K = kernel_matrix(X, X, kernel="rbf", gamma=clf.gamma)
    if clf.C is not None:
        K = K + np.eye(len(y)) / clf.C
    beta = clf.dual_coef_[0]
    norm = np.sqrt(beta @ K @ beta)
    f = K @ beta + clf.intercept_[0]
    return np.min((2 * y - 1) * f) / norm, norm / 2


@pytest.mark.parametrize("update", ["mdm", "sk"])
def test_shrinking_keeps_the_guarantee_on_all_points(update):
    X, y = checkerboard(700)  # N > the first working set: W is a proper subset
    kw = dict(gamma=1.0, C=None, tol=2e-3, update=update)
    shrunk = KernelSchlesingerKozinecClassifier(**kw).fit(X, y)
    full = KernelSchlesingerKozinecClassifier(shrinking=False, **kw).fit(X, y)
    assert shrunk.status_ == full.status_ == "converged"
    margin, upper = exact_margin(shrunk, X, y)
    assert shrunk.margin_ == pytest.approx(margin, rel=1e-7)  # exact over all N points
    assert shrunk.margin_upper_bound_ == pytest.approx(upper, rel=1e-7)
    assert shrunk.margin_upper_bound_ - shrunk.margin_ <= 2e-3 * shrunk.margin_upper_bound_
    assert np.all(shrunk.predict(X) == y)
    # both ε-optimal for the same problem: each margin within ε of the other's upper bound
    assert shrunk.margin_ >= (1 - 2e-3) * full.margin_upper_bound_ - 1e-12
    assert full.margin_ >= (1 - 2e-3) * shrunk.margin_upper_bound_ - 1e-12


def test_shrinking_history_is_per_full_check():
    X, y = checkerboard(700, seed=1)
    clf = KernelSchlesingerKozinecClassifier(gamma=1.0, C=None, record_history=True).fit(X, y)
    h = clf.history_
    assert 1 <= len(h["margin"]) <= clf.n_iter_ + 1
    assert h["margin"][-1] == clf.margin_ and h["margin_upper_bound"][-1] == clf.margin_upper_bound_
    assert np.all(h["margin_upper_bound"] >= h["margin"])
    assert np.all(np.diff(h["margin_upper_bound"]) <= 1e-12)  # ‖w‖ never increases across rounds


def test_shrinking_falls_back_when_the_support_outgrows_the_block():
    X, y = checkerboard(300, seed=2)
    # two cached columns: the block budget (√(2N) ≈ 24 points) is smaller than the support
    clf = KernelSchlesingerKozinecClassifier(gamma=1.0, C=None, cache_size=8 * 300 * 2 / 2**20).fit(X, y)
    assert clf.status_ == "converged" and np.all(clf.predict(X) == y)
    assert clf.margin_ == pytest.approx(exact_margin(clf, X, y)[0], rel=1e-7)


def test_shrinking_soft_margin_and_non_separable():
    X, y = make_blobs(n_samples=600, centers=[[0, 0], [1.5, 0]], random_state=3)
    soft = KernelSchlesingerKozinecClassifier(gamma=1.0, C=1.0).fit(X, y)
    assert soft.status_ == "converged"
    assert soft.margin_ == pytest.approx(exact_margin(soft, X, y)[0], rel=1e-7)
    hard = KernelSchlesingerKozinecClassifier(gamma=0.1, C=None, max_iter=300)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        hard.fit(X, y)
    assert hard.status_ in ("max_iter", "not_separable") and hard.n_iter_ <= 300


@pytest.mark.parametrize("name", ["kozinec", "sk"])
@pytest.mark.parametrize("formulation", ["two_hull", "augmented"])
def test_not_separable_status_keeps_a_checkable_certificate(name, formulation):
    from linsep._core.certificates import FIT_PROOF_RTOL, is_proof

    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]] * 3, dtype=float)  # XOR: the hulls cross
    y = np.array([0, 0, 1, 1] * 3)
    clf = make_classifier(name, formulation=formulation, max_iter=2000).fit(X, y)
    assert clf.status_ == "not_separable"
    assert is_proof(X, np.where(y == 1, 1.0, -1.0), clf.certificate_, FIT_PROOF_RTOL)
    separable = make_classifier(name, formulation=formulation).fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    assert separable.certificate_ is None
    three = make_classifier(name, formulation=formulation, max_iter=2000).fit(
        np.vstack([X, [[5, 5], [6, 5]]]), np.r_[y, 2, 2])
    assert isinstance(three.certificate_, list) and len(three.certificate_) == 3


def test_kernel_sk_keeps_its_feature_space_certificate():
    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]] * 3, dtype=float)  # XOR: not separable under the linear kernel
    y = np.where(np.array([0, 0, 1, 1] * 3) == 1, 1.0, -1.0)
    clf = make_classifier("kernel_sk", kernel="linear", C=None, max_iter=5000).fit(X, y)
    assert clf.status_ == "not_separable"
    u = clf.certificate_
    assert u.min() >= 0 and u.max() > 0 and abs(u @ y) <= 1e-9 * u.sum()
    signed = u * y  # Σ u_i y_i φ(x_i) = 0: its squared norm (u∘y)ᵀK(u∘y) vanishes
    assert signed @ (X @ X.T) @ signed <= 1e-12 * u.sum() ** 2 * np.max(np.sum(X * X, axis=1))
