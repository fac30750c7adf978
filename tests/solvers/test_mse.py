"""MSE, Widrow–Hoff and LMS: the lecture's worked examples and convergence to Y⁺b."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from linsep import LMSClassifier, MSEClassifier, WidrowHoffClassifier, make_classifier
from linsep._core.signed_design import augment, sign_normalized
from linsep.solvers.mse import largest_gram_eigenvalue, lms, mse, mse_linear_machine, widrow_hoff

# The lecture's four points; class 1 is the positive class (label 1 = classes_[1]).
LECTURE_X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 4.0]])
LECTURE_X_OUTLIER = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
LECTURE_Y = np.array([1, 1, 0, 0])


def lecture_vector(clf):
    """The lecture writes a = (a_0, a_1, a_2) with the bias first."""
    return np.r_[clf.intercept_, clf.coef_.ravel()]


def scores(clf, X, y):
    """Y a: the lecture's column of a^t y_i."""
    return np.where(y == 1, 1.0, -1.0) * clf.decision_function(X)


def test_lecture_example_b_ones_separates():
    clf = MSEClassifier().fit(LECTURE_X, LECTURE_Y)
    np.testing.assert_allclose(lecture_vector(clf), [2.7, 1.0, -0.9], atol=0.06)
    np.testing.assert_allclose(scores(clf, LECTURE_X, LECTURE_Y), [0.4, 1.3, 0.6, 1.1], atol=0.05)
    assert clf.status_ == "separable"
    np.testing.assert_array_equal(clf.margin_vector_, np.ones(4))


def test_lecture_example_outlier_fails_on_one_point():
    clf = MSEClassifier().fit(LECTURE_X_OUTLIER, LECTURE_Y)
    np.testing.assert_allclose(lecture_vector(clf), [3.2, 0.2, -0.4], atol=0.05)
    z = scores(clf, LECTURE_X_OUTLIER, LECTURE_Y)
    np.testing.assert_allclose(z, [0.2, 0.9, -0.04, 1.16], atol=0.02)
    assert clf.status_ == "converged"
    assert np.flatnonzero(z <= 0).tolist() == [2]  # y_3 of the lecture
    assert clf.score(LECTURE_X_OUTLIER, LECTURE_Y) == 0.75


def test_lecture_example_margin_vector_separates():
    clf = MSEClassifier().fit(LECTURE_X_OUTLIER, LECTURE_Y, margin=[1, 1, 1, 10])
    np.testing.assert_allclose(lecture_vector(clf), [-1.1, 1.7, -0.9], atol=0.06)
    np.testing.assert_allclose(scores(clf, LECTURE_X_OUTLIER, LECTURE_Y), [0.9, 1.0, 0.8, 10.0], atol=0.05)
    assert clf.status_ == "separable"


def test_only_relative_margins_matter():
    a = MSEClassifier().fit(LECTURE_X_OUTLIER, LECTURE_Y, margin=[1, 1, 1, 10])
    b = MSEClassifier().fit(LECTURE_X_OUTLIER, LECTURE_Y, margin=[3, 3, 3, 30])
    np.testing.assert_allclose(b.coef_, 3 * a.coef_)
    c = MSEClassifier().fit(LECTURE_X, LECTURE_Y, margin=2.0)
    np.testing.assert_allclose(c.coef_, 2 * MSEClassifier().fit(LECTURE_X, LECTURE_Y).coef_)


def test_mse_solver_matches_lstsq():
    rng = np.random.RandomState(0)
    X, y = rng.randn(60, 4), rng.choice([-1.0, 1.0], 60)
    Y = sign_normalized(X, y)
    b = rng.uniform(0.5, 2.0, 60)
    np.testing.assert_allclose(mse(Y, b).weights, np.linalg.lstsq(Y, b, rcond=None)[0], atol=1e-10)
    # d + 1 > N: an exact fit Y a = b, hence separable (LeastSquaresFactor's
    # minimum norm is taken in its column-equilibrated coordinates)
    Xw, yw = rng.randn(5, 12), np.array([1.0, -1, 1, -1, 1])
    wide = mse(sign_normalized(Xw, yw))
    np.testing.assert_allclose(sign_normalized(Xw, yw) @ wide.weights, np.ones(5), atol=1e-10)
    assert wide.status == "separable"
    # sparse input gives the same answer
    np.testing.assert_allclose(MSEClassifier().fit(sp.csr_matrix(X), y).coef_,
                               MSEClassifier().fit(X, y).coef_, atol=1e-10)


def test_linear_machine_is_one_solve_with_indicator_rhs():
    X, y = make_blobs(90, centers=3, cluster_std=2.5, random_state=1)
    clf = MSEClassifier().fit(X, y)
    A = augment(X)
    B = np.eye(3)[y]
    W = np.linalg.lstsq(A, B, rcond=None)[0]
    np.testing.assert_allclose(clf.coef_, W[:-1].T, atol=1e-9)
    np.testing.assert_allclose(clf.intercept_, W[-1], atol=1e-9)
    np.testing.assert_array_equal(clf.margin_vector_, B)
    own = (A @ W)[np.arange(90), y]
    separated = np.all(own > np.max(np.where(B > 0, -np.inf, A @ W), axis=1))
    assert set(clf.status_) == {"separable" if separated else "converged"}
    # the ±1 one-vs-rest least squares (Widrow–Hoff's target) gives the same argmax
    ovr = np.linalg.lstsq(A, 2 * B - 1, rcond=None)[0]
    np.testing.assert_array_equal(np.argmax(A @ ovr, axis=1), clf.predict(X))


def test_linear_machine_status_separable_on_separated_blobs():
    X, y = make_blobs(60, centers=[[0, 0], [10, 0], [0, 10]], cluster_std=0.5, random_state=0)
    clf = MSEClassifier().fit(X, y)
    assert list(clf.status_) == ["separable"] * 3
    assert clf.score(X, y) == 1.0
    result = mse_linear_machine(augment(X), y)
    assert result.weights.shape == (3, 3)


def _well_conditioned(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    y = np.where(X @ [1.0, -2.0, 0.5] + 0.3 * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


def test_widrow_hoff_converges_to_mse_solution():
    X, y = _well_conditioned()
    Y = sign_normalized(X, y)
    exact = mse(Y).weights
    lam = largest_gram_eigenvalue(Y)
    assert lam == pytest.approx(np.linalg.eigvalsh(Y.T @ Y).max(), rel=1e-3)
    # the lecture's eta_k = eta_1/k
    r = widrow_hoff(Y, schedule="inverse", tol=1e-7, max_iter=20_000)
    assert r.status in ("converged", "separable")
    np.testing.assert_allclose(r.weights, exact, rtol=1e-6, atol=1e-8)
    assert np.all(np.diff(r.history["criterion"][1:]) <= 1e-12)  # J_s decreases
    # constant step 1/lambda_max, on the (ill-conditioned) lecture data too, with a margin vector
    Yl = sign_normalized(LECTURE_X_OUTLIER, np.array([1.0, 1, -1, -1]))
    b = np.array([1.0, 1, 1, 10])
    r = widrow_hoff(Yl, b, schedule="constant", tol=1e-10, max_iter=500_000)
    assert r.status == "separable"
    np.testing.assert_allclose(r.weights, mse(Yl, b).weights, atol=1e-6)


def test_widrow_hoff_estimator_default_and_multiclass():
    X, y = _well_conditioned()
    clf = WidrowHoffClassifier(tol=1e-7, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(clf.coef_, MSEClassifier().fit(X, y).coef_, rtol=1e-5, atol=1e-7)
    Xb, yb = make_blobs(90, centers=3, random_state=1)
    Xb = (Xb - Xb.mean(0)) / Xb.std(0)
    wh = WidrowHoffClassifier(schedule="constant", tol=1e-10, max_iter=100_000).fit(Xb, yb)
    np.testing.assert_array_equal(wh.predict(Xb), MSEClassifier().fit(Xb, yb).predict(Xb))


def test_lms_converges_to_mse_solution():
    X, y = _well_conditioned()
    exact = mse(sign_normalized(X, y)).weights
    errors = []
    for max_iter in (10, 100, 1000):
        r = lms(X, y, max_iter=max_iter, tol=0.0, shuffle=False, learning_rate=0.05)
        errors.append(np.linalg.norm(r.weights - exact) / np.linalg.norm(exact))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 2e-3
    clf = LMSClassifier(tol=1e-6, max_iter=3000, random_state=0).fit(X, y)
    np.testing.assert_allclose(np.r_[clf.coef_.ravel(), clf.intercept_], exact, rtol=5e-3, atol=5e-3)
    assert clf.status_ in ("converged", "separable")
    assert clf.history_["criterion"].shape == (clf.n_iter_,)


def test_lms_with_margin_vector_and_multiclass():
    X, y = _well_conditioned()
    b = np.random.RandomState(3).uniform(0.5, 2, X.shape[0])
    exact = mse(sign_normalized(X, y), b).weights
    r = lms(X, y, b, max_iter=3000, tol=0.0, shuffle=True, rng=np.random.RandomState(0), learning_rate=0.05)
    np.testing.assert_allclose(r.weights, exact, rtol=5e-3, atol=5e-3)
    Xb, yb = make_blobs(120, centers=3, random_state=2)
    clf = LMSClassifier(random_state=0).fit(Xb, yb)
    assert clf.coef_.shape == (3, 2) and clf.score(Xb, yb) > 0.9


def test_statuses_and_warning():
    X, y = _well_conditioned()
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf = WidrowHoffClassifier(max_iter=3).fit(X, y)
    assert clf.status_ == "max_iter" and clf.n_iter_ == 3
    assert WidrowHoffClassifier(schedule="constant", max_iter=100_000).fit(
        LECTURE_X, LECTURE_Y).status_ == "separable"
    assert LMSClassifier(random_state=0).fit(X, y).status_ == "converged"  # noisy labels: not separated


def test_divergence_is_reported():
    X, y = _well_conditioned()
    with pytest.raises(FloatingPointError, match="diverged"):
        LMSClassifier(learning_rate=100.0, schedule="constant").fit(X * 100, y)
    with pytest.raises(FloatingPointError, match="diverged"):
        WidrowHoffClassifier(learning_rate=10.0, schedule="constant").fit(X, y)


@pytest.mark.parametrize("margin, message", [
    ([1, 1, 1], "one entry per sample"),
    ([1, 1, 0, 1], "strictly positive"),
    ([1, 1, np.nan, 1], "finite"),
    (-1.0, "strictly positive"),
])
@pytest.mark.parametrize("name", ["mse", "widrow_hoff", "lms"])
def test_bad_margin(name, margin, message):
    with pytest.raises(ValueError, match=message):
        make_classifier(name).fit(LECTURE_X, LECTURE_Y, margin=margin)


@pytest.mark.parametrize("name", ["mse", "widrow_hoff", "lms"])
def test_caller_arrays_untouched_and_bad_input(name):
    X = np.asfortranarray(LECTURE_X_OUTLIER.astype(np.float32))
    y = LECTURE_Y.copy()
    b = np.array([1.0, 1, 1, 10])
    copies = X.copy(), y.copy(), b.copy()
    make_classifier(name).fit(X, y, margin=b)
    for before, after in zip(copies, (X, y, b)):
        np.testing.assert_array_equal(before, after)
    with pytest.raises(ValueError, match="NaN"):
        make_classifier(name).fit([[0.0, np.nan], [1.0, 2.0]], [0, 1])
    with pytest.raises(ValueError, match="only one class"):
        make_classifier(name).fit(LECTURE_X, [1, 1, 1, 1])


def test_lms_fits_sparse_like_dense():
    # the sequential rule reads CSR rows as they are (tests/estimators/test_stream.py checks the iterates)
    kw = dict(max_iter=50, shuffle=False, learning_rate=0.01)
    dense = LMSClassifier(**kw).fit(LECTURE_X, LECTURE_Y)
    sparse = LMSClassifier(**kw).fit(sp.csr_matrix(LECTURE_X), LECTURE_Y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12)
    assert sparse.learning_rate_ == dense.learning_rate_ == 0.01
