"""Sample and class weights of HoKashyapClassifierCV: repetition, zero weight, scaling, weighted validation error."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import balanced_accuracy_score

from linsep import HoKashyapClassifierCV, KernelHoKashyapClassifierCV
from linsep.estimators.ho_kashyap_cv import stratified_folds

GRIDS = {"k": None, "C,k": [None, 0.1, 10.0]}


def _data(n=60, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if n_classes == 2:
        y = (X[:, 0] + 0.6 * rng.normal(size=n) > 0).astype(int)
    else:
        y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), [-0.5, 0.5])
    return X, y, rng.integers(0, 4, size=n)


def _fit(X, y, **params):
    fit_params = {"sample_weight": params.pop("sample_weight")} if "sample_weight" in params else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return HoKashyapClassifierCV(**params).fit(X, y, **fit_params)


def _same_model(a, b, atol=1e-9):
    scale = max(np.abs(b.coef_).max(), np.abs(b.intercept_).max())
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=atol * scale)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=atol * scale)
    assert a.C_ == b.C_
    np.testing.assert_array_equal(a.best_iter_, b.best_iter_)


def _weighted_and_repeated_folds(n_classes):
    """Rows with integer weights (the rows of weight 0 dropped), 4 stratified folds of them, and the same folds
    of the repeated rows (each row's repeats kept in its fold: a weighted row cannot be split between folds)."""
    X, y, counts = _data(n_classes=n_classes)
    kept = counts > 0
    X, y, counts = X[kept], y[kept], counts[kept]
    folds = stratified_folds(y, 4, 0)
    owner = np.repeat(np.arange(y.size), counts)
    fold_of = np.empty(y.size, dtype=int)
    for f, (_, validation) in enumerate(folds):
        fold_of[validation] = f
    repeated_folds = [(np.flatnonzero(fold_of[owner] != f), np.flatnonzero(fold_of[owner] == f)) for f in range(4)]
    return X, y, counts, folds, repeated_folds


def _zero_weight_folds():
    """0/1 weights, 3 stratified folds of all rows, the kept rows, and the folds renumbered over the kept rows."""
    X, y, counts = _data()
    weights = (counts > 0).astype(float)
    folds = stratified_folds(y, 3, 1)
    kept = np.flatnonzero(weights > 0)
    new_index = {old: new for new, old in enumerate(kept)}
    reduced = [tuple(np.array([new_index[i] for i in rows if weights[i] > 0]) for rows in fold) for fold in folds]
    return X, y, weights, folds, kept, reduced


def _sparse_or_dense(sparse):
    return sp.csr_matrix if sparse else np.asarray


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("grid", list(GRIDS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_integer_weights_equal_repeated_rows(sparse, grid, loss, n_classes):
    # Folds that keep a row's repeats together (a weighted row cannot be split between folds): every fold's
    # run, its weighted validation curve, the choice of (C, k̂) and the refit are those of the repeated rows.
    X, y, counts, folds, repeated_folds = _weighted_and_repeated_folds(n_classes)
    form = _sparse_or_dense(sparse)
    weighted = _fit(form(X), y, Cs=GRIDS[grid], loss=loss, cv=folds, sample_weight=counts)
    repeated = _fit(form(np.repeat(X, counts, axis=0)), np.repeat(y, counts), Cs=GRIDS[grid], loss=loss,
                    cv=repeated_folds)
    _same_model(weighted, repeated, 1e-5 if loss == "absolute" else 1e-9)
    curves = np.atleast_2d(weighted.cv_curve_) if n_classes == 2 else weighted.cv_curve_
    for mine, theirs in zip(curves, np.atleast_2d(repeated.cv_curve_) if n_classes == 2 else repeated.cv_curve_):
        length = min(len(mine), len(theirs))
        np.testing.assert_allclose(mine[:length], theirs[:length], atol=1e-12)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("grid", list(GRIDS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_zero_weight_equals_removed_row(sparse, grid, loss):
    # With an int cv the rows of weight 0 leave before the folds are drawn: the fit of the data without them.
    X, y, counts = _data()
    weights = (counts > 0) * (1.0 + counts)
    kept = weights > 0
    form = _sparse_or_dense(sparse)
    with_zeros = _fit(form(X), y, Cs=GRIDS[grid], loss=loss, random_state=0, sample_weight=weights)
    removed = _fit(form(X[kept]), y[kept], Cs=GRIDS[grid], loss=loss, random_state=0, sample_weight=weights[kept])
    _same_model(with_zeros, removed)


def test_zero_weight_with_given_folds_renumbers_them():
    # Index pairs describe the rows passed to fit: rows of weight 0 leave each fold.
    X, y, weights, folds, kept, reduced = _zero_weight_folds()
    _same_model(_fit(X, y, cv=folds, sample_weight=weights), _fit(X[kept], y[kept], cv=reduced))


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_common_factor_keeps_the_model(loss):
    # Without C the criterion is scale-free: the same k̂ and direction.  With C, weights times 7 weigh
    # C w'w against 7 times the sum: the model of the grid C * 7 is that of C on the unscaled weights.
    X, y, counts = _data()
    weights = counts + 0.5
    plain = _fit(X, y, loss=loss, random_state=0, sample_weight=weights)
    scaled = _fit(X, y, loss=loss, random_state=0, sample_weight=7.0 * weights)
    assert plain.best_iter_ == scaled.best_iter_
    direction = lambda m: np.append(m.coef_, m.intercept_) / np.linalg.norm(np.append(m.coef_, m.intercept_))
    np.testing.assert_allclose(direction(plain), direction(scaled), atol=1e-9)
    grid = _fit(X, y, Cs=[None, 0.1, 10.0], loss=loss, random_state=0, sample_weight=weights)
    grid7 = _fit(X, y, Cs=[None, 0.7, 70.0], loss=loss, random_state=0, sample_weight=7.0 * weights)
    assert (grid.C_ is None and grid7.C_ is None) or grid7.C_ == pytest.approx(7 * grid.C_)
    np.testing.assert_allclose(direction(grid), direction(grid7), atol=1e-9)


def test_unit_weights_change_nothing():
    X, y, _ = _data()
    for grid in GRIDS.values():
        _same_model(_fit(X, y, Cs=grid, random_state=0, sample_weight=np.ones(y.size)),
                    _fit(X, y, Cs=grid, random_state=0))


def test_class_weight_dict_equals_sample_weight():
    X, y, _ = _data()
    by_class = _fit(X, y, Cs=[None, 1.0], random_state=0, class_weight={0: 1.0, 1: 3.0})
    by_sample = _fit(X, y, Cs=[None, 1.0], random_state=0, sample_weight=np.where(y == 1, 3.0, 1.0))
    _same_model(by_class, by_sample, 1e-12)


def test_balanced_class_weight_raises_balanced_accuracy():
    def imbalanced(seed):
        rng = np.random.default_rng(seed)
        X = np.vstack([rng.normal(0.0, 1.0, size=(500, 2)), rng.normal(1.2, 1.0, size=(50, 2))])
        return X, np.r_[np.zeros(500, dtype=int), np.ones(50, dtype=int)]

    X, y = imbalanced(0)
    X_test, y_test = imbalanced(1)
    scores = {cw: balanced_accuracy_score(y_test, _fit(X, y, Cs=3, random_state=0, class_weight=cw).predict(X_test))
              for cw in (None, "balanced")}
    assert scores["balanced"] > scores[None]


# KernelHoKashyapClassifierCV: the same weighted folds, fold runs and refit in the empirical kernel map.
# Integer weights equal repeated rows for a fixed gamma ("scale" follows Var(X), which repetition changes)
# and the exact map map_tol=0 (a truncated map picks its pivots among the rows).
KERNEL = {"gamma": 0.5, "map_tol": 0.0}


def _kernel_fit(X, y, **params):
    fit_params = {"sample_weight": params.pop("sample_weight")} if "sample_weight" in params else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return KernelHoKashyapClassifierCV(**KERNEL, **params).fit(X, y, **fit_params)


def _same_kernel_model(a, b, X, atol=1e-9):
    scores_a, scores_b = a.decision_function(X), b.decision_function(X)
    np.testing.assert_allclose(scores_a, scores_b, rtol=0, atol=atol * np.abs(scores_b).max())
    assert a.C_ == b.C_
    np.testing.assert_array_equal(a.best_iter_, b.best_iter_)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("grid", list(GRIDS))
def test_kernel_integer_weights_equal_repeated_rows(grid, loss, n_classes):
    X, y, counts, folds, repeated_folds = _weighted_and_repeated_folds(n_classes)
    weighted = _kernel_fit(X, y, Cs=GRIDS[grid], loss=loss, cv=folds, sample_weight=counts)
    repeated = _kernel_fit(np.repeat(X, counts, axis=0), np.repeat(y, counts), Cs=GRIDS[grid], loss=loss,
                           cv=repeated_folds)
    _same_kernel_model(weighted, repeated, X, 1e-5 if loss == "absolute" else 1e-7)
    for mine, theirs in zip(np.atleast_2d(weighted.cv_curve_) if n_classes == 2 else weighted.cv_curve_,
                            np.atleast_2d(repeated.cv_curve_) if n_classes == 2 else repeated.cv_curve_):
        length = min(len(mine), len(theirs))
        np.testing.assert_allclose(mine[:length], theirs[:length], atol=1e-12)


@pytest.mark.parametrize("grid", list(GRIDS))
def test_kernel_zero_weight_equals_removed_row(grid):
    X, y, counts = _data()
    weights = (counts > 0) * (1.0 + counts)
    kept = weights > 0
    with_zeros = _kernel_fit(X, y, Cs=GRIDS[grid], random_state=0, sample_weight=weights)
    removed = _kernel_fit(X[kept], y[kept], Cs=GRIDS[grid], random_state=0, sample_weight=weights[kept])
    _same_kernel_model(with_zeros, removed, X)
    np.testing.assert_array_equal(with_zeros.X_fit_, X[kept])


def test_kernel_zero_weight_with_given_folds_renumbers_them():
    X, y, weights, folds, kept, reduced = _zero_weight_folds()
    _same_kernel_model(_kernel_fit(X, y, cv=folds, sample_weight=weights), _kernel_fit(X[kept], y[kept], cv=reduced), X)


@pytest.mark.parametrize("refit", [True, False])
def test_kernel_unit_weights_change_nothing(refit):
    X, y, _ = _data()
    for grid in GRIDS.values():
        _same_kernel_model(_kernel_fit(X, y, Cs=grid, refit=refit, random_state=0, sample_weight=np.ones(y.size)),
                           _kernel_fit(X, y, Cs=grid, refit=refit, random_state=0), X)


def test_kernel_class_weight_dict_equals_sample_weight():
    X, y, _ = _data()
    by_class = _kernel_fit(X, y, Cs=[None, 1.0], random_state=0, class_weight={0: 1.0, 1: 3.0})
    by_sample = _kernel_fit(X, y, Cs=[None, 1.0], random_state=0, sample_weight=np.where(y == 1, 3.0, 1.0))
    _same_kernel_model(by_class, by_sample, X, 1e-12)


@pytest.mark.parametrize("fit", [_fit, _kernel_fit], ids=["linear", "kernel"])
def test_validation_error_is_weighted(fit):
    # One fold's validation error is the weighted share of its misclassified rows: with weights that
    # favour one class, the folds' curves differ from the unweighted ones and stay in [0, 1].
    X, y, _ = _data()
    plain = fit(X, y, random_state=0)
    weighted = fit(X, y, random_state=0, sample_weight=np.where(y == 1, 5.0, 1.0))
    assert np.all((weighted.cv_curves_ >= 0) & (weighted.cv_curves_ <= 1))
    assert not np.array_equal(weighted.cv_curves_[:, :3], plain.cv_curves_[:, :3])


def test_kernel_precomputed_refuses_zero_weights():
    X, y, counts = _data()
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    with pytest.raises(ValueError, match="precomputed"):
        KernelHoKashyapClassifierCV(kernel="precomputed").fit(K, y, sample_weight=counts)
    weights = counts + 1.0  # positive weights: the precomputed Gram matrix is the named kernel's
    precomputed = _kernel_fit(K, y, kernel="precomputed", random_state=0, sample_weight=weights)
    named = _kernel_fit(X, y, random_state=0, sample_weight=weights)
    np.testing.assert_allclose(precomputed.decision_function(K), named.decision_function(X), atol=1e-9)
