"""Perceptron rules: a textbook oracle, zero training error on separable data, kernel = primal."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

from linsep import BatchPerceptronClassifier, KernelPerceptronClassifier, PerceptronClassifier, make_classifier
from linsep._core.signed_design import sign_normalized
from linsep.solvers.perceptron.solver import batch_perceptron, kernel_perceptron, perceptron


def textbook_perceptron(X, y, eta1, variable, margin, max_epochs, orders):
    """Duda–Hart–Stork single-sample perceptron, written plainly (the oracle)."""
    a = [0.0] * (len(X[0]) + 1)
    for k in range(1, max_epochs + 1):
        eta = eta1 / k if variable else eta1
        mistakes = 0
        for i in orders[k - 1]:
            yi = [y[i] * v for v in list(X[i]) + [1.0]]  # y_i (x_i, 1)
            if sum(ai * v for ai, v in zip(a, yi)) <= margin:
                a = [ai + eta * v for ai, v in zip(a, yi)]
                mistakes += 1
        if mistakes == 0:
            return a, k
    return a, max_epochs


def textbook_batch_perceptron(Y, eta1, margin, max_iter):
    a = np.zeros(Y.shape[1])
    for k in range(1, max_iter + 1):
        wrong = [row for row in Y if row @ a <= margin]
        if not wrong:
            return a, k
        a = a + eta1 / k * np.sum(wrong, axis=0)
    return a, max_iter


def separable_data(seed, n=60, d=3, gap=0.2):
    rng = np.random.RandomState(seed)
    w, b = rng.randn(d), rng.randn()
    X = rng.uniform(-3, 3, (4 * n, d))
    s = (X @ w + b) / np.linalg.norm(w)
    keep = np.abs(s) > gap
    X, s = X[keep][:n], s[keep][:n]
    y = np.where(s > 0, 1.0, -1.0)
    if np.unique(y).size < 2:
        y[0] = -y[0]
        X[0] = X[0] - 2 * s[0] * w / np.linalg.norm(w)  # mirror the point across the plane
    return X, y


@pytest.mark.parametrize("variable, margin, eta1", [(False, 0.0, 1.0), (True, 0.0, 1.0), (True, 0.5, 0.3)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_single_sample_matches_textbook(variable, margin, eta1, shuffle):
    X, y = separable_data(0)
    rng = np.random.RandomState(7)
    orders = [rng.permutation(len(y)) if shuffle else range(len(y)) for _ in range(500)]
    expected, epochs = textbook_perceptron(X, y, eta1, variable, margin, 500, orders)
    r = perceptron(X, y, learning_rate=eta1, schedule="inverse" if variable else "constant", margin=margin,
                   max_iter=500, shuffle=shuffle, rng=np.random.RandomState(7))
    np.testing.assert_allclose(r.weights, expected, rtol=1e-9, atol=1e-9)
    assert r.n_iter == epochs and r.status == "separable"
    assert r.history["mistakes"][-1] == 0
    assert np.min(y * (X @ r.weights[:-1] + r.weights[-1])) > margin


@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_batch_matches_textbook(margin):
    X, y = separable_data(1)
    Y = sign_normalized(X, y)
    expected, iters = textbook_batch_perceptron(Y, 1.0, margin, 2000)
    r = batch_perceptron(Y, margin=margin, max_iter=2000)
    np.testing.assert_allclose(r.weights, expected, rtol=1e-9, atol=1e-9)
    assert r.n_iter == iters and r.status == "separable"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(4, 80), d=st.integers(1, 6))
def test_zero_training_error_on_separable_data(seed, n, d):
    X, y = separable_data(seed, n=n, d=d, gap=0.05)
    for clf in (PerceptronClassifier(random_state=seed, max_iter=10_000),
                # fixed increment: under the default eta_1/k the batch rule converges
                # only after exponentially many steps on some draws (see its docstring)
                BatchPerceptronClassifier(schedule="constant", max_iter=100_000),
                KernelPerceptronClassifier(kernel="linear", random_state=seed, max_iter=10_000),
                KernelPerceptronClassifier(kernel="rbf", gamma=1.0, random_state=seed, max_iter=10_000)):
        clf.fit(X, y)
        assert clf.status_ == "separable", type(clf).__name__
        assert clf.score(X, y) == 1.0, type(clf).__name__


@pytest.mark.parametrize("shuffle", [False, True])
def test_linear_kernel_perceptron_equals_primal(shuffle):
    X, y = separable_data(3, n=80, d=4, gap=0.02)
    X = X + 1.5  # off-centre: the bias matters
    primal = PerceptronClassifier(shuffle=shuffle, random_state=11, max_iter=10_000).fit(X, y)
    dual = KernelPerceptronClassifier(kernel="linear", shuffle=shuffle, random_state=11, max_iter=10_000).fit(X, y)
    assert primal.n_iter_ == dual.n_iter_
    np.testing.assert_array_equal(primal.history_["mistakes"], dual.history_["mistakes"])
    np.testing.assert_allclose(dual.dual_coef_ @ X, primal.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dual.intercept_, primal.intercept_)
    np.testing.assert_allclose(dual.decision_function(X), primal.decision_function(X), rtol=1e-9, atol=1e-9)
    assert np.all(dual.alpha_ >= 0) and dual.alpha_.sum() == primal.history_["mistakes"].sum()


def test_one_kernel_column_per_correction():
    X, y = separable_data(4, n=50)
    K = rbf_kernel(X, X, gamma=0.7)
    calls = []

    def column(i):
        calls.append(i)
        return K[:, i]

    r = kernel_perceptron(column, y, max_iter=1000, shuffle=False)
    assert r.status == "separable"
    assert len(calls) == r.extra["alpha"].sum() == r.history["mistakes"].sum()
    f = K @ r.weights + r.intercept  # the incrementally kept values, recomputed once here
    assert np.min(y * f) > 0
    # the estimator's cache computes each support vector's column once
    clf = KernelPerceptronClassifier(gamma=0.7, shuffle=False).fit(X, y)
    assert clf.n_kernel_columns_ == np.count_nonzero(clf.alpha_)
    np.testing.assert_allclose(clf.dual_coef_.ravel(), r.weights)


def test_kernel_perceptron_rbf_separates_xor():
    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]], dtype=float)
    y = np.array([0, 0, 1, 1])
    clf = KernelPerceptronClassifier(kernel="rbf", gamma=2.0, random_state=0).fit(X, y)
    assert clf.status_ == "separable"
    np.testing.assert_array_equal(clf.predict(X), y)
    with pytest.warns(ConvergenceWarning):  # no line separates XOR
        lin = PerceptronClassifier(max_iter=50, random_state=0).fit(X, y)
    assert lin.status_ == "max_iter" and lin.n_iter_ == 50


def test_kernels_precomputed_and_callable():
    X, y = separable_data(5, n=40)
    ref = KernelPerceptronClassifier(kernel="rbf", gamma=0.5, shuffle=False).fit(X, y)
    pre = KernelPerceptronClassifier(kernel="precomputed", shuffle=False).fit(rbf_kernel(X, X, gamma=0.5), y)
    np.testing.assert_allclose(pre.dual_coef_, ref.dual_coef_)
    np.testing.assert_allclose(pre.decision_function(rbf_kernel(X, X, gamma=0.5)), ref.decision_function(X),
                               atol=1e-9)
    call = KernelPerceptronClassifier(kernel=lambda A, B: rbf_kernel(A, B, gamma=0.5), shuffle=False).fit(X, y)
    np.testing.assert_allclose(call.dual_coef_, ref.dual_coef_)
    poly = KernelPerceptronClassifier(kernel="poly", degree=2, coef0=1.0, random_state=0).fit(X, y)
    assert poly.status_ == "separable" and poly.score(X, y) == 1.0
    with warnings.catch_warnings():  # tanh is not positive semi-definite: no promise
        warnings.simplefilter("ignore", ConvergenceWarning)
        sig = KernelPerceptronClassifier(kernel="sigmoid", max_iter=20, random_state=0).fit(X, y)
    assert sig.predict(X).shape == y.shape


@pytest.mark.parametrize("name", ["perceptron", "batch_perceptron", "kernel_perceptron"])
def test_multiclass_and_nonseparable(name):
    X, y = make_blobs(150, centers=[[0, 0], [6, 0], [0, 6]], cluster_std=0.8, random_state=0)
    # the batch rule's default eta_1/k stalls here (its first step, the sum of
    # all samples, dwarfs the later ones); fixed increment converges in < 60 steps
    params = {"schedule": "constant"} if name == "batch_perceptron" else {"random_state": 0}
    clf = make_classifier(name, **params).fit(X, y)
    assert list(clf.status_) == ["separable"] * 3
    assert clf.score(X, y) == 1.0 and len(clf.n_iter_) == 3
    Xo, yo = make_blobs(100, centers=[[0, 0], [1, 0]], cluster_std=1.0, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=7"):
        bad = make_classifier(name, max_iter=7).fit(Xo, yo)
    assert bad.status_ == "max_iter" and bad.n_iter_ == 7


@pytest.mark.parametrize("name", ["perceptron", "batch_perceptron", "kernel_perceptron"])
def test_caller_arrays_untouched_and_bad_input(name):
    X, y = separable_data(6, n=30)
    X = np.asfortranarray(X.astype(np.float32))
    labels = np.where(y > 0, "yes", "no")
    copies = X.copy(), labels.copy()
    clf = make_classifier(name).fit(X, labels)
    assert set(clf.predict(X)) <= {"yes", "no"}
    np.testing.assert_array_equal(X, copies[0])
    np.testing.assert_array_equal(labels, copies[1])
    with pytest.raises(ValueError, match="NaN"):
        make_classifier(name).fit([[0.0, np.nan], [1.0, 2.0]], [0, 1])
    with pytest.raises(ValueError, match="only one class"):
        make_classifier(name).fit(X, np.ones(len(X)))


def test_bad_parameters():
    X, y = separable_data(0, n=20)
    with pytest.raises(ValueError, match="schedule"):
        PerceptronClassifier(schedule="decay").fit(X, y)
    with pytest.raises(ValueError, match="margin"):
        PerceptronClassifier(margin=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="square Gram"):
        KernelPerceptronClassifier(kernel="precomputed").fit(X, y)
