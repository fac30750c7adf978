"""partial_fit of the sequential rules, and their sparse (CSR/CSC) input.

The references are the rules' own fits: one pass of partial_fit per chunk, over
the chunks of a data set in order, must give exactly the iterates of fit with
shuffle=False; the sparse epochs must give the dense epochs' iterates.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from problems import three_overlapping_classes
from sklearn.exceptions import ConvergenceWarning

from linsep import KernelPerceptronClassifier, LMSClassifier, PerceptronClassifier

RULES = {
    "perceptron": (PerceptronClassifier, {"schedule": "inverse", "margin": 0.5}),
    "lms": (LMSClassifier, {"learning_rate": 0.01, "schedule": "inverse", "tol": 0.0}),
}


def integer_data(n=60, d=5, classes=2, seed=0):
    """Small integers with many zeros: exact perceptron arithmetic, a sparse pattern worth the name."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, d)).astype(float)
    X[rng.random((n, d)) < 0.4] = 0.0
    score = X[:, 0] + X[:, 1] - 0.5 * X[:, 2]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def stream(est, X, y, n_chunks=4, epochs=(1,), **kw):
    for epoch in epochs:
        for rows in np.array_split(np.arange(X.shape[0]), n_chunks):
            est.partial_fit(X[rows], y[rows], classes=np.unique(y), epoch=epoch, **kw)
    return est


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("rule", list(RULES))
def test_chunks_in_order_equal_fit_passes_exactly(rule, classes):
    Est, params = RULES[rule]
    X, y = integer_data(classes=classes)
    fitted = quiet_fit(Est(shuffle=False, max_iter=2, **params), X, y)
    assert np.all(np.asarray(fitted.n_iter_) == 2)  # both passes made: the comparison is not vacuous
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # partial_fit never warns
        streamed = stream(Est(shuffle=False, **params), X, y, epochs=(1, 2))
    np.testing.assert_array_equal(streamed.coef_, fitted.coef_)
    np.testing.assert_array_equal(streamed.intercept_, fitted.intercept_)
    assert streamed.epoch_ == 2
    assert np.all(np.asarray(streamed.n_iter_) == 8)  # one pass per call
    assert np.shape(streamed.coef_) == (1 if classes == 2 else classes, X.shape[1])


@pytest.mark.parametrize("rule", list(RULES))
def test_epoch_sets_the_rate(rule):
    # without epoch= every chunk keeps the first pass's rate: a different run from the 2-pass fit
    Est, params = RULES[rule]
    X, y = integer_data()
    two = stream(Est(shuffle=False, **params), X, y, epochs=(1, 2))
    same = stream(Est(shuffle=False, **params), X, y, epochs=(1, None))
    assert same.epoch_ == 1
    assert not np.array_equal(two.coef_, same.coef_)
    with pytest.raises(ValueError, match="epoch"):
        Est(**params).partial_fit(X, y, classes=[0, 1], epoch=0)


@pytest.mark.parametrize("rule", list(RULES))
def test_partial_fit_after_fit_continues_and_fit_starts_over(rule):
    Est, params = RULES[rule]
    X, y = integer_data(classes=3)
    two = quiet_fit(Est(shuffle=False, max_iter=2, **params), X, y)
    est = quiet_fit(Est(shuffle=False, max_iter=1, **params), X, y)
    assert est.epoch_ == 1
    est.partial_fit(X, y, epoch=2)  # classes known from fit
    np.testing.assert_array_equal(est.coef_, two.coef_)
    np.testing.assert_array_equal(est.n_iter_, two.n_iter_)
    # fit after partial_fit: the same model as a fresh fit
    streamed = stream(Est(shuffle=False, max_iter=2, **params), X, y)
    quiet_fit(streamed, X, y)
    np.testing.assert_array_equal(streamed.coef_, two.coef_)
    assert streamed.epoch_ == 2


@pytest.mark.parametrize("Est", [PerceptronClassifier, LMSClassifier, KernelPerceptronClassifier])
def test_stream_validation(Est):
    X, y = integer_data(classes=3)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        Est().partial_fit(X, y)
    est = Est().partial_fit(X[:10], y[:10], classes=[0, 1, 2])
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    with pytest.raises(ValueError, match=r"`classes=\[0, 1\]` is not the same"):
        est.partial_fit(X[10:20], y[10:20], classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[7\] are not among the classes \[0, 1, 2\]"):
        est.partial_fit(X[:3], [0, 7, 1])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:10, :-1], y[:10])
    with pytest.raises(ValueError, match="at least 2 classes"):
        Est().partial_fit(X[:3], [1, 1, 1], classes=[1])
    with pytest.raises(ValueError, match=r"labels \[2\] are not among"):
        Est().partial_fit(X[:3], [0, 1, 2], classes=[0, 1])
    # a single-sample chunk is a chunk
    est.partial_fit(X[:1], y[:1])
    assert est.predict(X).shape == (X.shape[0],)


@pytest.mark.parametrize("Est", [PerceptronClassifier, LMSClassifier, KernelPerceptronClassifier])
def test_out_of_range_chunk_refused(Est):
    X, y = integer_data()
    X = X + 1.0
    X[:, 1] *= 1e300
    with pytest.raises(ValueError, match="partial_fit needs the magnitudes"):
        Est().partial_fit(X, y, classes=[0, 1])


def test_status_speaks_of_the_last_chunk():
    X, y = integer_data()
    w = np.array([1.0, 1.0, -0.5, 0.0, 0.0])
    keep = np.abs(X @ w) > 0.2
    X, y = X[keep], (X[keep] @ w > 0).astype(int)  # separable with a gap
    est = PerceptronClassifier(shuffle=False)
    est.partial_fit(X[:10], y[:10], classes=[0, 1])
    for _ in range(200):  # repeat the first chunk until a pass over it makes no correction
        if est.status_ == "separable":
            break
        est.partial_fit(X[:10], y[:10])
    assert est.status_ == "separable"
    assert est.score(X[:10], y[:10]) == 1.0
    # a chunk the weights get wrong: one pass with corrections, no warning; "separable" only if the
    # weights left by that pass separate that chunk
    wrong = np.flatnonzero(est.predict(X) != y)
    assert wrong.size
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.partial_fit(X[wrong], y[wrong])
    assert est.history_["mistakes"][0] > 0
    clean = np.min(np.where(y[wrong] == 1, 1, -1) * est.decision_function(X[wrong])) > 0
    assert est.status_ == ("separable" if clean else "max_iter")


def test_record_history_after_partial_fit():
    X, y = integer_data()
    est = PerceptronClassifier(shuffle=False, record_history=True)
    stream(est, X, y, n_chunks=2)
    assert est.history_["iteration"].tolist() == [0, 1]  # the last call: before and after its pass
    assert est.history_["mistakes"].shape == (1,)
    np.testing.assert_array_equal(est.history_["weights"][-1], np.r_[est.coef_[0], est.intercept_])


def test_lms_stream_after_preconditioned_fit_sets_its_own_rate():
    # fit rescales a column beyond 2^8 (preconditioning) and its η_1 is for the rescaled columns;
    # partial_fit works in the original columns, where a column that small is accepted as it is
    X, y = integer_data()
    X = X + 1.0
    X[:, 0] *= 1000.0
    X[:, 1] *= 1e-3
    est = quiet_fit(LMSClassifier(max_iter=5, shuffle=False), X, y)
    fit_rate = est.learning_rate_
    est.partial_fit(X[:20], y[:20])
    assert est.learning_rate_ == pytest.approx(1.0 / (1.0 + np.max(np.sum(X[:20] ** 2, axis=1))))
    assert est.learning_rate_ < fit_rate
    assert np.all(np.isfinite(est.coef_))
    streamed = LMSClassifier(shuffle=False).partial_fit(X, y, classes=[0, 1])  # accepted: within 2^±53
    assert np.all(np.isfinite(streamed.coef_))


def test_lms_learning_rate_fixed_on_first_chunk():
    X, y = integer_data()
    est = LMSClassifier(shuffle=False)
    est.partial_fit(X[:20], y[:20], classes=[0, 1])
    expected = 1.0 / (1.0 + np.max(np.sum(X[:20] ** 2, axis=1)))
    assert est.learning_rate_ == pytest.approx(expected, rel=1e-15)
    est.partial_fit(X[20:], y[20:], margin=np.full(40, 2.0))
    assert est.learning_rate_ == pytest.approx(expected, rel=1e-15)
    np.testing.assert_array_equal(est.margin_vector_, np.full(40, 2.0))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("classes", [2, 3])
def test_kernel_stream_with_linear_kernel_is_the_perceptron_stream(classes, shuffle):
    X, y = integer_data(classes=classes)
    kernel = KernelPerceptronClassifier(kernel="linear", shuffle=shuffle, random_state=3)
    primal = PerceptronClassifier(shuffle=shuffle, random_state=3)
    for rows in np.array_split(np.arange(X.shape[0]), 4):
        kernel.partial_fit(X[rows], y[rows], classes=np.unique(y))
        primal.partial_fit(X[rows], y[rows], classes=np.unique(y))
        np.testing.assert_allclose(kernel.decision_function(X), primal.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(kernel.n_iter_, primal.n_iter_)
    np.testing.assert_array_equal(kernel.status_, primal.status_)
    # only corrected samples are kept, with their counts
    alpha = np.atleast_2d(kernel.alpha_)
    assert kernel.X_fit_.shape[0] == alpha.shape[1] == kernel.dual_coef_.shape[1] < X.shape[0]
    assert np.all(alpha.any(axis=0)) and np.all(alpha >= 0)


def test_kernel_partial_fit_after_fit_continues():
    X, y = integer_data(classes=3)
    two = quiet_fit(KernelPerceptronClassifier(shuffle=False, max_iter=2), X, y)
    est = quiet_fit(KernelPerceptronClassifier(shuffle=False, max_iter=1), X, y)
    est.partial_fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), two.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(est.n_iter_, two.n_iter_)
    # fit starts over
    quiet_fit(est, X, y)
    assert est.X_fit_.shape[0] == X.shape[0]
    with pytest.raises(ValueError, match="precomputed"):
        KernelPerceptronClassifier(kernel="precomputed").partial_fit(X @ X.T, y, classes=[0, 1, 2])


def test_kernel_stream_sparse_chunks_stay_sparse():
    X, y = integer_data()
    dense = KernelPerceptronClassifier(shuffle=False)
    sparse = KernelPerceptronClassifier(shuffle=False)
    for rows in np.array_split(np.arange(X.shape[0]), 3):
        dense.partial_fit(X[rows], y[rows], classes=[0, 1])
        sparse.partial_fit(sp.csr_matrix(X[rows]), y[rows], classes=[0, 1])
    assert sp.issparse(sparse.X_fit_)
    np.testing.assert_allclose(sparse.decision_function(X), dense.decision_function(X), atol=1e-9)


# --- sparse input of the compiled epochs -------------------------------------------------------

@pytest.fixture
def no_densify(monkeypatch):
    """Make every sparse → dense conversion fail while the test runs."""
    def refuse(*args, **kwargs):
        raise AssertionError("sparse input was densified")
    for cls in {type(sp.csr_matrix((1, 1))), type(sp.csc_matrix((1, 1))), type(sp.csr_array((1, 1))),
                sp.spmatrix}:
        for name in ("toarray", "todense"):
            if hasattr(cls, name):
                monkeypatch.setattr(cls, name, refuse)


@pytest.mark.parametrize("fmt", ["csr", "csc", "csr_array"])
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("rule", list(RULES))
def test_sparse_fit_gives_the_dense_iterates(rule, classes, fmt, no_densify):
    Est, params = RULES[rule]
    if rule == "perceptron":
        params = {**params, "schedule": "constant"}  # η = 1 on integers: exact arithmetic
    X, y = integer_data(classes=classes)
    Xs = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "csr_array": sp.csr_array}[fmt](X)
    data_before = Xs.data.copy()
    for kw in ({"shuffle": False, "max_iter": 3}, {"random_state": 0, "max_iter": 3},
               {"random_state": 0, "record_history": True, "max_iter": 3}):
        dense = quiet_fit(Est(**params, **kw), X, y)
        sparse = quiet_fit(Est(**params, **kw), Xs, y)
        if rule == "perceptron":
            np.testing.assert_array_equal(sparse.coef_, dense.coef_)
            np.testing.assert_array_equal(sparse.intercept_, dense.intercept_)
        else:  # the sparse dot product skips the zeros: a different order of the sum
            np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(sparse.n_iter_, dense.n_iter_)
        np.testing.assert_array_equal(sparse.status_, dense.status_)
    np.testing.assert_array_equal(Xs.data, data_before)  # the caller's matrix is untouched
    streamed = stream(Est(shuffle=False, **params), Xs.tocsr(), y, epochs=(1, 2))
    np.testing.assert_allclose(streamed.coef_, stream(Est(shuffle=False, **params), X, y, epochs=(1, 2)).coef_,
                               rtol=1e-12, atol=1e-15)


def test_partial_fit_keeps_float32_like_fit():
    from linsep import LMSClassifier

    X, y = three_overlapping_classes()
    X32 = X.astype(np.float32)
    for make in (lambda: PerceptronClassifier(random_state=0), lambda: LMSClassifier(random_state=0)):
        fitted = make().fit(X32, y)
        streamed = make().partial_fit(X32[:45], y[:45], classes=np.unique(y))
        streamed.partial_fit(X[45:], y[45:])  # a float64 chunk joins the float32 stream
        assert fitted.coef_.dtype == streamed.coef_.dtype == np.float32
