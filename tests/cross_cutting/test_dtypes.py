"""float32 data outside the Ho–Kashyap family: fitted without a float64 copy, coef_ in float32.

The Ho–Kashyap family's own float32 tests are in test_ho_kashyap.py.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import make_classifier

FLOAT32_NAMES = ["mse", "widrow_hoff", "lms", "perceptron", "batch_perceptron", "lsvm"]
FLOAT64_NAMES = ["kozinec", "sk"]  # float64 by design (see linsep.estimators.kozinec)
SEEDED = {"lms", "perceptron"}


def _problem(seed, n=600, d=5, classes=2, gap=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ rng.normal(size=d)
    if classes == 2:
        y = np.where(score > 0, 1, -1)
        X += gap * y[:, None] * np.sign(rng.normal(size=d))  # gap > 0: separable with a margin
    else:
        y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return X.astype(np.float32), y


def _fit(name, X, y, **kw):
    kw = dict(kw, random_state=0) if name in SEEDED else kw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter on the non-separable problems
        return make_classifier(name, **kw).fit(X, y)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("name", FLOAT32_NAMES + FLOAT64_NAMES)
def test_float32_fit_agrees_with_float64_fit(name, classes):
    """The same numbers as float32 and as float64: the same model, to float32 rounding; coef_ follows the type."""
    # The perceptrons separate the data: on overlapping data their path is chaotic, and any
    # rounding of the scores sends it elsewhere.
    X32, y = _problem(1, classes=classes, gap=0.5 if "perceptron" in name else 0.0)
    # sk runs to its budget on these overlapping classes (100 000 steps by default): a smaller one is the
    # same comparison of two float64 fits
    kw = {"max_iter": 5000} if name == "sk" else {}
    ref = _fit(name, X32.astype(np.float64), y, **kw)
    clf = _fit(name, X32, y, **kw)
    expected = np.float64 if name in FLOAT64_NAMES else np.float32
    assert clf.coef_.dtype == clf.intercept_.dtype == expected
    assert ref.coef_.dtype == np.float64
    assert clf.decision_function(X32).dtype == expected
    np.testing.assert_array_equal(clf.n_iter_, ref.n_iter_)
    np.testing.assert_array_equal(clf.status_, ref.status_)
    W, W_ref = np.c_[clf.coef_, clf.intercept_], np.c_[ref.coef_, ref.intercept_]
    assert np.abs(W - W_ref).max() <= 1e-5 * np.abs(W_ref).max()
    assert np.mean(clf.predict(X32) == ref.predict(X32)) >= 0.99


@pytest.mark.parametrize("name", ["lms", "perceptron", "batch_perceptron", "widrow_hoff", "lsvm"])
def test_float32_sparse_data(name):
    """Rules that read the rows of X keep sparse float32 data; those on a formed sparse Y solve in float64."""
    X32, y = _problem(2, gap=0.5)
    dense = _fit(name, X32, y)
    sparse = _fit(name, sp.csr_matrix(X32), y)
    assert sparse.coef_.dtype == (np.float32 if name in ("lms", "perceptron", "lsvm") else np.float64)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-4, atol=1e-5 * np.abs(dense.coef_).max())


@pytest.mark.parametrize("name", FLOAT32_NAMES)
def test_float32_fit_makes_no_copy_of_the_data(name):
    """A fit on float32 X allocates far less than X itself beyond O(N) vectors (no float64 or float32 copy)."""
    rng = np.random.default_rng(3)
    n, d = 20_000, 100
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(X[:, :5].sum(axis=1) + rng.normal(size=n) > 0, 1, -1)
    kw = {} if name == "mse" else {"max_iter": 3}
    _fit(name, X[:500], y[:500], **kw)  # compiled code loaded outside the measurement
    tracemalloc.start()
    try:
        clf = _fit(name, X, y, **kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert clf.coef_.dtype == np.float32
    vectors = 12 * 8 * n  # a generous count of float64 N-vectors (margins, orders, scores, α)
    assert peak <= 0.25 * X.nbytes + vectors, (peak, X.nbytes)


def test_float32_linear_machine_checks_separation_on_the_stored_model():
    """``separable`` is claimed for the float32 coef_ that is kept, not for the float64 solution it was rounded from.

    A square system makes the scores exactly ``B``; margins of 1e-9 on three
    samples leave them separated by float64 weights and well inside float32's
    rounding of ``coef_``, where their discriminants no longer rank strictly.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 5)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2])
    margin = np.r_[np.full(3, 1e-9), np.ones(3)]
    exact = make_classifier("mse").fit(X.astype(np.float64), y, margin=margin)
    assert list(exact.status_) == ["separable"] * 3  # the float64 model separates them
    clf = make_classifier("mse").fit(X, y, margin=margin)
    assert clf.coef_.dtype == np.float32
    scores = clf.decision_function(X)
    own = scores[np.arange(6), y]
    scores[np.arange(6), y] = -np.inf
    assert not np.all(own > scores.max(axis=1))  # the stored model does not
    assert list(clf.status_) == ["converged"] * 3
