"""Lagrangian SVM (Lauer & Bloch 2006 §2.6, eqs. 18–22): dual, weights, kernel form, estimator contract."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, nnls
from sklearn.exceptions import ConvergenceWarning

from linsep import KernelLagrangianSVMClassifier, LagrangianSVMClassifier, make_classifier
from linsep.datasets import benchmark_splits
from linsep.solvers.lsvm.solver import dual_update, kernel_lagrangian_svm, lagrangian_svm


def _overlapping(n=80, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.standard_normal((n, d)) + 0.8 * y[:, None]
    return X, y


def _dual_reference(X, y, C):
    """α of (19) by NNLS: ½αᵗQα − 1ᵗα = ½‖Aα − b‖² + const, A = [I/√C; Hᵗ], b = [√C 1; 0]."""
    H = y[:, None] * np.hstack([X, np.ones((X.shape[0], 1))])
    n = X.shape[0]
    A = np.vstack([np.eye(n) / np.sqrt(C), H.T])
    b = np.concatenate([np.sqrt(C) * np.ones(n), np.zeros(H.shape[1])])
    alpha, _ = nnls(A, b, maxiter=50 * n)
    return alpha, H


def _primal_reference(X, y, C):
    """(w, w_0) of (18) with w_0 added (linsep's +1 bias column), by L-BFGS on the smooth primal."""
    H = y[:, None] * np.hstack([X, np.ones((X.shape[0], 1))])

    def fun(W):
        slack = np.maximum(1.0 - H @ W, 0.0)
        return 0.5 * W @ W + 0.5 * C * slack @ slack, W - C * H.T @ slack

    res = minimize(fun, np.zeros(H.shape[1]), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    return res.x


@pytest.mark.parametrize("C", [2.0**-6, 1.0, 2.0**6])
def test_alpha_matches_independent_dual_solution(C):
    X, y = _overlapping()
    ref, H = _dual_reference(X, y, C)
    res = lagrangian_svm(X, y, C=C, tol=1e-10)
    assert res.status == "converged"
    alpha = res.extra["alpha"]
    np.testing.assert_allclose(alpha, ref, rtol=0, atol=1e-6 * max(1.0, ref.max()))
    # w = X̃ᵗYα, w_0 = +1ᵗYα (eq. 20 with linsep's +1 bias column)
    np.testing.assert_allclose(res.weights, H.T @ ref, rtol=0, atol=1e-6 * max(1.0, np.abs(H.T @ ref).max()))
    # and W is exactly (20) applied to the returned α
    np.testing.assert_allclose(res.weights, H.T @ alpha, rtol=0, atol=1e-10 * max(1.0, alpha.max()))


def test_alpha_matches_dual_on_benchmark_data():
    X, y, _, _ = next(benchmark_splits("thyroid", 1))  # the slowest-converging IDA set
    y = y.astype(float)
    for C in (1.0, 2.0**8):
        ref, _ = _dual_reference(X, y, C)
        alpha = LagrangianSVMClassifier(C=C, tol=1e-11).fit(X, y).alpha_
        np.testing.assert_allclose(alpha, ref, rtol=0, atol=1e-6 * ref.max())


def test_weights_solve_the_primal_and_sign_convention():
    X, y = _overlapping(seed=3)
    C = 4.0
    W = _primal_reference(X, y, C)
    clf = LagrangianSVMClassifier(C=C, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(clf.coef_.ravel(), W[:-1], atol=1e-5)
    np.testing.assert_allclose(clf.intercept_[0], W[-1], atol=1e-5)
    # The paper's ŵ_0 = −1ᵗYα (H = Y[X̃, −1]) is our intercept with the opposite sign.
    paper_w0 = -np.sum(y * clf.alpha_)
    np.testing.assert_allclose(clf.intercept_[0], -paper_w0)
    # Optimality of the dual: α >= 0, Qα − 1 >= 0, complementarity (KKT of (21)).
    H = y[:, None] * np.hstack([X, np.ones((X.shape[0], 1))])
    grad = clf.alpha_ / C + H @ (H.T @ clf.alpha_) - 1.0
    assert clf.alpha_.min() >= -1e-8 * clf.alpha_.max() and grad.min() > -1e-6
    assert np.abs(clf.alpha_ * grad).max() < 1e-6


def test_mu_is_validated_and_any_admissible_mu_gives_the_same_alpha():
    X, y = _overlapping(seed=1)
    C = 2.0
    default = lagrangian_svm(X, y, C=C, tol=1e-11).extra["alpha"]
    other = lagrangian_svm(X, y, C=C, mu=0.5 / C, tol=1e-11, max_iter=100_000).extra["alpha"]
    np.testing.assert_allclose(other, default, atol=1e-7 * default.max())
    with pytest.raises(ValueError, match="mu must satisfy"):
        lagrangian_svm(X, y, C=C, mu=2.0 / C)
    with pytest.raises(ValueError, match="mu must satisfy"):
        LagrangianSVMClassifier(C=C, mu=3.0).fit(X, y)


def test_kernel_form_with_linear_kernel_equals_linear_form():
    X, y = _overlapping(seed=2)
    lin = LagrangianSVMClassifier(C=3.0, tol=1e-10).fit(X, y)
    ker = KernelLagrangianSVMClassifier(kernel="linear", C=3.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ker.alpha_, lin.alpha_, atol=1e-8)
    np.testing.assert_allclose(ker.dual_coef_.ravel(), y * lin.alpha_, atol=1e-8)
    np.testing.assert_allclose(ker.intercept_, lin.intercept_, atol=1e-8)
    np.testing.assert_allclose(ker.decision_function(X), lin.decision_function(X), atol=1e-7)
    res = kernel_lagrangian_svm(X @ X.T, y, C=3.0, tol=1e-10)
    np.testing.assert_allclose(res.extra["alpha"], lin.alpha_, atol=1e-8)


def test_kernel_rbf_separates_xor():
    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]], dtype=float)
    y = np.array([0, 0, 1, 1])
    clf = make_classifier("kernel_lsvm", gamma=2.0, C=100.0).fit(X, y)
    assert clf.status_ == "converged"
    np.testing.assert_array_equal(clf.predict(X), y)
    assert LagrangianSVMClassifier(C=100.0).fit(X, y).score(X, y) < 1.0  # not linearly separable


def test_converges_without_warning_over_the_paper_c_grid():
    X, y, _, _ = next(benchmark_splits("heart", 1))
    Xt, yt, _, _ = next(benchmark_splits("thyroid", 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for C in 2.0 ** np.arange(-10, 11, 2):
            for data, labels in ((X, y), (Xt, yt)):
                clf = make_classifier("lsvm", C=C).fit(data, labels)
                assert clf.status_ == "converged"


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(5)
    centers = np.array([[0, 0], [4, 0], [0, 4]])
    y = np.repeat(["a", "b", "c"], 30)
    X = centers[np.repeat(np.arange(3), 30)] + rng.standard_normal((90, 2))
    clf = LagrangianSVMClassifier(C=1.0).fit(X, y)
    assert clf.coef_.shape == (3, 2) and clf.alpha_.shape == (3, 90)
    assert clf.score(X, y) > 0.9
    for k, label in enumerate(clf.classes_):
        binary = lagrangian_svm(X, np.where(y == label, 1.0, -1.0), C=1.0)
        np.testing.assert_allclose(clf.alpha_[k], binary.extra["alpha"], rtol=1e-9, atol=1e-12)
    ker = KernelLagrangianSVMClassifier(C=1.0, gamma=0.5).fit(X, y)
    assert ker.dual_coef_.shape == (3, 90) and ker.score(X, y) > 0.9


def test_sparse_input_matches_dense():
    X, y = _overlapping(seed=4)
    X[np.abs(X) < 0.7] = 0.0
    dense = LagrangianSVMClassifier(C=2.0).fit(X, y)
    sparse = LagrangianSVMClassifier(C=2.0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-10)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, atol=1e-10)


@pytest.mark.parametrize("estimator", [LagrangianSVMClassifier(), KernelLagrangianSVMClassifier()])
def test_bad_input_errors(estimator):
    X, y = _overlapping(n=10)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        estimator.fit(bad, y)
    with pytest.raises(ValueError, match="only one class"):
        estimator.fit(X, np.ones(10))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        estimator.fit(X, y[:-1])
    with pytest.raises(ValueError):
        estimator.fit(np.empty((0, 4)), np.empty(0))


def test_caller_arrays_not_modified_and_history():
    X, y = _overlapping(seed=6)
    X32 = X.astype(np.float32)
    X_copy, y_copy = X32.copy(), y.copy()
    clf = LagrangianSVMClassifier(C=1.0, record_history=True).fit(X32, y)
    KernelLagrangianSVMClassifier(C=1.0).fit(X32, y)
    np.testing.assert_array_equal(X32, X_copy)
    np.testing.assert_array_equal(y, y_copy)
    assert clf.history_["objective"].shape == clf.history_["step"].shape == (clf.n_iter_ + 1,)
    assert clf.history_["step"][-1] <= 1e-6 * np.linalg.norm(clf.alpha_) * (1 + 1e-9)
    ref, _ = _dual_reference(X, y, 1.0)
    H = y[:, None] * np.hstack([X, np.ones((X.shape[0], 1))])
    f_ref = 0.5 * (ref @ ref + np.sum((H.T @ ref) ** 2)) - ref.sum()
    np.testing.assert_allclose(clf.history_["objective"][-1], f_ref, rtol=1e-6)


def test_max_iter_gives_status_and_one_warning():
    X, y = _overlapping(seed=7)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        clf = LagrangianSVMClassifier(C=10.0, max_iter=2).fit(X, y)
    assert clf.status_ == "max_iter" and clf.n_iter_ == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_threaded_pass_reproduces_the_serial_pass(dtype):
    """Rows split over 3 threads give the serial pass's iterates, up to the order of the sums."""
    X, y = _overlapping(n=500, d=5, seed=7)
    X = X.astype(dtype)
    serial = lagrangian_svm(X, y, C=4.0, record_history=True, plan={"threads": 1})
    threaded = lagrangian_svm(X, y, C=4.0, record_history=True, plan={"threads": 3})
    assert threaded.n_iter == serial.n_iter and threaded.status == serial.status
    assert threaded.weights.dtype == serial.weights.dtype == dtype
    rtol = 1e-9 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(threaded.weights, serial.weights, rtol=rtol)
    np.testing.assert_allclose(threaded.extra["alpha"], serial.extra["alpha"], rtol=rtol,
                               atol=rtol * np.abs(serial.extra["alpha"]).max())
    np.testing.assert_allclose(threaded.history["objective"], serial.history["objective"], rtol=rtol)


def test_float32_data_give_the_float64_fit():
    """float32 X is read as float32 (sums in float64): the fit agrees with float64 to float32 rounding."""
    X, y = _overlapping(n=400, d=6, seed=8)
    ref = LagrangianSVMClassifier(C=2.0).fit(X, y)
    clf = LagrangianSVMClassifier(C=2.0).fit(X.astype(np.float32), y)
    assert clf.coef_.dtype == clf.intercept_.dtype == np.float32 and ref.coef_.dtype == np.float64
    W, W_ref = np.r_[clf.coef_.ravel(), clf.intercept_], np.r_[ref.coef_.ravel(), ref.intercept_]
    assert np.abs(W - W_ref).max() <= 1e-5 * np.abs(W_ref).max()
    sparse = LagrangianSVMClassifier(C=2.0).fit(sp.csr_matrix(X.astype(np.float32)), y)
    np.testing.assert_allclose(sparse.coef_, clf.coef_, rtol=1e-5, atol=1e-6)


def test_sparse_inner_forcing_matches_tight_solve():
    """Wide sparse X: the LSVM's own looser inner CG forcing (``LSVM_CG_FORCING``) reaches the tight solve's fit.

    Above 2¹⁶ stored entries the default solves inside iteration (22) stop at ``LSVM_CG_FORCING`` (3·10⁻¹) times the
    change of their right-hand side; ``cg_forcing=0`` solves every step to ``CG_RTOL``.  The stopping rule is the
    same, so both converge, and the weights agree to ``1e-6`` of their largest entry (the iterates differ by a
    fraction of steps that the rule drives to ``tol``), the training predictions exactly.
    """
    from linsep._core.linalg import CG_FORCING, iteration_forcing
    from linsep.solvers.lsvm.solver import LSVM_CG_FORCING, LSVMFactor

    rng = np.random.default_rng(20)
    n, d = 6000, 2500
    X = sp.random(n, d, density=0.012, random_state=20, format="csr")
    X = (X + sp.eye(n, d, format="csr")).tocsr()
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1  # label noise: a soft margin with many active constraints
    assert X.nnz >= 1 << 16 and LSVM_CG_FORCING > CG_FORCING
    assert LSVMFactor(X, 1.0)._factor.solver.forcing == LSVM_CG_FORCING
    assert iteration_forcing(X) == CG_FORCING  # the shared default (Ho–Kashyap's) is unchanged
    tight = lagrangian_svm(X, y, C=1.0, tol=1e-6, plan={"cg_forcing": 0.0})
    loose = lagrangian_svm(X, y, C=1.0, tol=1e-6)
    assert tight.status == loose.status == "converged"
    assert loose.extra["cg_iterations"] < tight.extra["cg_iterations"]
    np.testing.assert_allclose(loose.weights, tight.weights, rtol=0, atol=1e-6 * np.abs(tight.weights).max())
    scores = lambda w: X @ w[:-1] + w[-1]  # noqa: E731
    np.testing.assert_array_equal(np.sign(scores(loose.weights)), np.sign(scores(tight.weights)))


@pytest.mark.parametrize("C", [0.5, 4.0])
def test_sparse_lsvm_with_inexact_recycled_solves_matches_the_direct_solution(C):
    # Wide sparse X takes CG with inexact, recycled W-steps and the sparse pass through [X, 1]'s CSR copies;
    # the same numbers dense and narrow enough for the Cholesky factor give the same weights.
    from linsep._core.linalg import solver_limits
    from linsep.solvers.lsvm.solver import lagrangian_svm

    rng = np.random.default_rng(4)
    X = sp.random(600, 120, density=0.05, random_state=5, format="csr")
    y = np.where(X @ rng.standard_normal(120) + 0.1 * rng.standard_normal(600) > 0, 1.0, -1.0)
    direct = lagrangian_svm(X.toarray(), y, C=C, tol=1e-9)
    with solver_limits(direct_max_columns=2):
        sparse = lagrangian_svm(X, y, C=C, tol=1e-9, plan={"cg_forcing": 1e-2})
    assert sparse.extra["factorization"] == "cg" and sparse.status == "converged"
    np.testing.assert_allclose(sparse.weights, direct.weights, atol=1e-7 * np.abs(direct.weights).max())
    np.testing.assert_allclose(sparse.extra["alpha"], direct.extra["alpha"], atol=1e-6 * direct.extra["alpha"].max())


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("first", [False, True])
def test_dual_update_is_the_row_by_row_iteration(weighted, first):
    # The row-wise LSVM step written one row at a time from its equations: α_i = C(r_i − y_i s_i),
    # r_i ← max(r_i − μα_i, c_i), and the sums the stopping rule and the trace read.
    rng = np.random.default_rng(3)
    n, C, mu = 50, 2.0, 0.95
    scores, y = rng.standard_normal(n), np.where(rng.random(n) < 0.5, -1.0, 1.0)
    c = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    r, previous = c + rng.random(n), rng.random(n)
    r_in, previous_in, scores_in = r.copy(), previous.copy(), scores.copy()
    alpha, r_next, step_sq, alpha_sq, objective = dual_update(
        scores, y, r, None if first else previous, C, mu, c if weighted else None)
    np.testing.assert_array_equal(r, r_in)  # r and α_{k−1} are read, not changed
    np.testing.assert_array_equal(previous, previous_in)
    expected = {"alpha": [], "r": [], "step_sq": 0.0, "alpha_sq": 0.0, "objective": 0.0}
    for i in range(n):
        a = C * (r_in[i] - y[i] * scores_in[i])
        expected["alpha"].append(a)
        expected["r"].append(max(r_in[i] - mu * a, c[i]))
        expected["step_sq"] += 0.0 if first else (a - previous_in[i]) ** 2
        expected["alpha_sq"] += a * a
        expected["objective"] += 0.5 * a * r_in[i] - c[i] * a
    np.testing.assert_allclose(alpha, expected["alpha"], rtol=1e-14)
    np.testing.assert_allclose(r_next, expected["r"], rtol=1e-14)
    np.testing.assert_allclose([step_sq, alpha_sq, objective],
                               [expected["step_sq"], expected["alpha_sq"], expected["objective"]], rtol=1e-12)
