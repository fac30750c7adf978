"""Sample and class weights on dask input (HK family, MSE, LSVM): the in-memory weighted fits, blockwise."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from linsep import HoKashyapClassifier, LagrangianSVMClassifier, MSEClassifier  # noqa: E402
from linsep._core.certificates import FIT_PROOF_RTOL, is_proof  # noqa: E402
from linsep.designs import dask_data  # noqa: E402

RTOL = 1e-8
CHUNKS = (70, 33, 97)  # uneven row chunks, N = 200


def _data(kind="noisy", n=sum(CHUNKS), seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    if kind == "noisy":
        y = (X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    elif kind == "xor":
        y = (X[:, 0] * X[:, 1] > 0).astype(int)
    else:  # three classes with strings as labels
        y = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + 0.3 * rng.standard_normal(n), [-0.4, 0.4])]
    return X, y, rng.integers(0, 4, size=n).astype(float)  # integer weights, about a quarter zero


def _dask(values, chunks=CHUNKS):
    return da.from_array(values, chunks=(chunks,) + values.shape[1:])


ESTIMATORS = {
    "hk": lambda **k: HoKashyapClassifier(max_iter=30, **k),
    "modified_hk": lambda **k: HoKashyapClassifier(update="weights", max_iter=12, **k),
    "mhks": lambda **k: HoKashyapClassifier(C=1.0, max_iter=15, **k),
    "mhka": lambda **k: HoKashyapClassifier(C=1.0, loss="absolute", max_iter=8, **k),
    "hkes": lambda **k: HoKashyapClassifier(early_stopping=True, max_iter=12, **k),
    "hkesa": lambda **k: HoKashyapClassifier(early_stopping=True, loss="absolute", max_iter=8, **k),
    "mse": lambda **k: MSEClassifier(C=0.5, **k),
    "lsvm": lambda **k: LagrangianSVMClassifier(C=2.0, tol=1e-3, max_iter=20, **k),
}


def _fit(name, X, y, class_weight=None, **fit_params):
    if name in ("hkes", "hkesa"):  # given validation data: the blockwise held-out split is tested apart
        X_val, y_val, _ = _data(n=60, seed=5)
        fit_params.update(X_val=X_val if isinstance(X, np.ndarray) else _dask(X_val, (30, 30)), y_val=y_val)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ESTIMATORS[name](class_weight=class_weight).fit(X, y, **fit_params)


def _assert_same_fit(memory, on_dask, rtol=RTOL):
    W_mem = np.column_stack([memory.coef_, memory.intercept_])
    W_dask = np.column_stack([on_dask.coef_, on_dask.intercept_])
    scale = np.abs(W_mem).max(axis=1, keepdims=True)
    assert np.all(np.abs(W_dask - W_mem) <= rtol * scale), np.abs(W_dask - W_mem).max() / scale.min()
    np.testing.assert_array_equal(np.atleast_1d(on_dask.status_), np.atleast_1d(memory.status_))
    np.testing.assert_array_equal(np.atleast_1d(on_dask.n_iter_), np.atleast_1d(memory.n_iter_))


@pytest.mark.parametrize("weights", ["integer", "positive", "balanced"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_weighted_dask_fit_equals_the_in_memory_fit(client, name, weights):
    # integer weights with zeros (rows left out), positive real weights (scaled rows), class weights
    X, y, counts = _data()
    sample_weight = {"integer": counts, "positive": counts + 0.25, "balanced": None}[weights]
    class_weight = "balanced" if weights == "balanced" else None
    memory = _fit(name, X, y, class_weight, sample_weight=sample_weight)
    on_dask = _fit(name, _dask(X), _dask(y), class_weight,
                   sample_weight=None if sample_weight is None else _dask(sample_weight))
    _assert_same_fit(memory, on_dask)
    if name in ("hkes", "hkesa"):
        assert on_dask.best_iter_ == memory.best_iter_
        np.testing.assert_allclose(on_dask.history_["validation_error"], memory.history_["validation_error"])
    if name in ("hk", "mhks", "mse"):
        np.testing.assert_allclose(on_dask.margin_vector_.compute(), memory.margin_vector_, rtol=RTOL)
    if name == "lsvm":
        np.testing.assert_allclose(on_dask.alpha_.compute(), memory.alpha_, rtol=0,
                                   atol=RTOL * np.abs(memory.alpha_).max())


@pytest.mark.parametrize("name", ["hk", "mhka", "mse", "lsvm"])
def test_weighted_one_vs_rest_on_dask(client, name):
    # three classes (MSE: the weighted linear machine), NumPy weights split to the row chunks
    X, y, counts = _data("three")
    for sample_weight, class_weight in ((counts, None), (None, {"a": 2.0, "b": 0.5, "c": 1.0})):
        memory = _fit(name, X, y, class_weight, sample_weight=sample_weight)
        on_dask = _fit(name, _dask(X), y, class_weight, sample_weight=sample_weight)
        _assert_same_fit(memory, on_dask)


@pytest.mark.parametrize("name", ["hk", "mhks", "mhka", "mse", "lsvm"])
def test_dask_integer_weights_equal_repeated_rows(client, name):
    X, y, counts = _data()
    repeats = counts.astype(int)
    weighted = _fit(name, _dask(X), _dask(y), sample_weight=_dask(counts))
    X_rep, y_rep = np.repeat(X, repeats, 0), np.repeat(y, repeats)
    chunks = tuple(int(repeats[a:b].sum()) for a, b in zip(np.cumsum((0,) + CHUNKS)[:-1], np.cumsum(CHUNKS)))
    repeated = _fit(name, _dask(X_rep, chunks), _dask(y_rep, chunks))
    # IRLS floors |e_i| relative to max s_i|e_i| rather than max|e_i| (tests/designs/test_weights.py)
    _assert_same_fit(repeated, weighted, 1e-5 if name == "mhka" else 1e-7)


@pytest.mark.parametrize("name", ["hk", "hkes", "mhka", "mse", "lsvm"])
def test_dask_zero_weight_equals_removed_row(client, name):
    X, y, counts = _data()
    kept = counts > 0
    weights = np.where(kept, 1.5, 0.0)
    weighted = _fit(name, _dask(X), _dask(y), sample_weight=_dask(weights))
    chunks = tuple(int(kept[a:b].sum()) for a, b in zip(np.cumsum((0,) + CHUNKS)[:-1], np.cumsum(CHUNKS)))
    removed = _fit(name, _dask(X[kept], chunks), _dask(y[kept], chunks),
                   sample_weight=_dask(weights[kept], chunks))
    _assert_same_fit(removed, weighted)


@pytest.mark.parametrize("name", ["hk", "mse", "mhks", "lsvm"])
def test_dask_common_factor_of_the_weights(client, name):
    # HK and MSE without C: the same predictions; MHKS weighs C against the weighted sum (C / 7),
    # LSVM penalises row i with C s_i (C · 7) — as in memory (tests/designs/test_weights.py).
    X, y, counts = _data()
    Xd, yd = _dask(X), _dask(y)
    weights = counts + 0.5
    if name in ("hk", "mse"):
        make = (lambda: HoKashyapClassifier(max_iter=30)) if name == "hk" else MSEClassifier
        once, scaled = (make().fit(Xd, yd, sample_weight=_dask(factor * weights)) for factor in (1.0, 7.0))
        np.testing.assert_array_equal(once.predict(Xd).compute(), scaled.predict(Xd).compute())
        direction = [np.append(m.coef_, m.intercept_) / np.linalg.norm(np.append(m.coef_, m.intercept_))
                     for m in (once, scaled)]
        np.testing.assert_allclose(direction[0], direction[1], atol=1e-9)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if name == "mhks":
            scaled = HoKashyapClassifier(C=1.0, max_iter=15).fit(Xd, yd, sample_weight=_dask(7.0 * weights))
            reference = HoKashyapClassifier(C=1 / 7, max_iter=15).fit(Xd, yd, sample_weight=_dask(weights))
        else:
            scaled = LagrangianSVMClassifier(C=1.0, tol=1e-3, max_iter=20).fit(Xd, yd, sample_weight=_dask(7 * weights))
            reference = LagrangianSVMClassifier(C=7.0, tol=1e-3, max_iter=20).fit(Xd, yd, sample_weight=_dask(weights))
    _assert_same_fit(reference, scaled, 1e-7)


@pytest.mark.parametrize("zeros", [False, True], ids=["positive", "with-zeros"])
def test_weighted_proof_on_dask_speaks_of_the_original_rows(client, zeros):
    # the certificate has one entry per row of X (0 for rows of weight 0) and proves the unscaled rows
    X, y, counts = _data("xor")
    weights = counts if zeros else counts + 0.5
    memory = _fit("hk", X, y, sample_weight=weights)
    on_dask = _fit("hk", _dask(X), _dask(y), sample_weight=_dask(weights))
    assert memory.status_ == on_dask.status_ == "not_separable"
    _assert_same_fit(memory, on_dask)
    u = on_dask.certificate_.compute()
    assert u.shape == (len(y),)
    np.testing.assert_allclose(u, memory.certificate_, rtol=1e-6, atol=1e-12 * u.max())
    assert is_proof(X, np.where(y == 1, 1.0, -1.0), u, FIT_PROOF_RTOL)


def test_weighted_blockwise_held_out_split(client):
    # Without X_val each block holds out a stratified share; held-out rows keep their weights
    # (here: the class weights), fitted rows of weight 0 leave.  The in-memory fit on the same
    # split, with the held-out rows as X_val weighed by the same class weights, is the same model.
    X, y, counts = _data(seed=3)
    class_weight = {0: 1.0, 1: 3.0}
    starts = np.cumsum((0,) + CHUNKS)
    held = np.concatenate([start + dask_data._held_out_block(y[a:b], np.unique(y), 1 / 3, 7, i)[1]
                           for i, (start, a, b) in enumerate(zip(starts, starts[:-1], starts[1:]))])
    fit = np.setdiff1d(np.arange(len(y)), held)
    weights = np.ones(len(y))
    weights[fit] = counts[fit]  # zero weights among the fitted rows only
    make = lambda: HoKashyapClassifier(early_stopping=True, max_iter=10, random_state=7,  # noqa: E731
                                       class_weight=class_weight)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        on_dask = make().fit(_dask(X), _dask(y), sample_weight=_dask(weights))
        memory = make().fit(X[fit], y[fit], X_val=X[held], y_val=y[held], sample_weight=weights[fit])
    _assert_same_fit(memory, on_dask)
    assert on_dask.best_iter_ == memory.best_iter_
    np.testing.assert_allclose(on_dask.history_["validation_error"], memory.history_["validation_error"])


@pytest.mark.parametrize("weights, message", [
    (-np.ones(200), "Negative values"),
    (np.r_[np.inf, np.ones(199)], "finite"),
    (np.zeros(200), "every sample weight is zero"),
    (np.ones(150), "1-d array of 200 weights"),
])
def test_invalid_dask_weights_are_refused(client, weights, message):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=message):
        HoKashyapClassifier().fit(_dask(X), _dask(y), sample_weight=da.from_array(weights, chunks=50))


def test_one_class_with_positive_weight_is_refused(client):
    X, y, _ = _data()
    with pytest.raises(ValueError, match="2 classes with a positive weight"):
        MSEClassifier().fit(_dask(X), _dask(y), sample_weight=_dask((y == 1).astype(float)))
