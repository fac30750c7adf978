"""Traces count what predictions count: the last row of every method's trace is the fitted model (issue 43).

For every registered method on the playground's presets, the last row of
:func:`linsep.inspection.trace_table` holds the returned model's weights and
its ``training_errors`` equal the model's errors on every row given to
``fit`` (held-out rows included), counted as the verdict counts them:
``y_i f(x_i) <= τ_i`` with ``τ_i`` of :func:`linsep._core.certificates.side_tolerance`.
Early stopping (its ``best_iter_``) and the Kozinec/SK pocket return an
earlier iterate; their traces end with a row marked ``returned``.
"""

import warnings

import numpy as np
import pytest

from linsep import available_classifiers, make_classifier
from linsep._core.certificates import side_tolerance, strict_errors
from linsep.inspection import get_trace, trace_table
from linsep.kernels import kernel_matrix, resolve_gamma
from linsep.playground.session import PRESETS, preset_points

METHODS = sorted(available_classifiers())
CV_FOLDS = 5  # HoKashyapClassifierCV's default cv: a preset needs at least this many points


def model_errors(estimator, X, y):
    """The fitted model's training errors as its verdict counts them (labels ±1, class 1 positive)."""
    targets = np.where(y == estimator.classes_[1], 1.0, -1.0)
    scores = estimator.decision_function(X)
    if hasattr(estimator, "coef_"):
        tolerance = side_tolerance(X, np.ravel(estimator.coef_), float(np.ravel(estimator.intercept_)[0]))
    else:  # f(x) = Σ_j β_j k(x_j, x) + b: the kernel row of x plays the role of x
        K = kernel_matrix(X, estimator.X_fit_, kernel=estimator.kernel,
                          gamma=resolve_gamma(estimator.gamma, estimator.X_fit_), degree=estimator.degree,
                          coef0=estimator.coef0)
        tolerance = side_tolerance(K, np.ravel(estimator.dual_coef_), float(np.ravel(estimator.intercept_)[0]))
    return strict_errors(scores, targets, tolerance)


def traced_fit(method, preset):
    X, y = preset_points(preset)
    estimator = make_classifier(method, random_state=0)
    if "record_history" not in estimator.get_params():
        pytest.skip(f"{method} records no trace")
    if "cv" in estimator.get_params() and X.shape[0] < CV_FOLDS:
        pytest.skip(f"{method}: {CV_FOLDS} folds need at least {CV_FOLDS} points, preset {preset} has {X.shape[0]}")
    estimator.set_params(record_history=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter's ConvergenceWarning, HKES's unregularised fit
        estimator.fit(X, y)
    return estimator, X, y


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("method", METHODS)
def test_the_last_row_counts_the_models_training_errors(method, preset):
    estimator, X, y = traced_fit(method, preset)
    last = trace_table(estimator).to_records()[-1]
    assert last["training_errors"] == model_errors(estimator, X, y)
    trace = get_trace(estimator)
    # the last row is the model itself (its weights as fitted: rounding aside, tolerance of a copy)
    row = trace["weights"][-1] if "weights" in trace else np.r_[trace["dual_coef"][-1], trace["intercept"][-1]]
    model = (np.r_[np.ravel(estimator.coef_), estimator.intercept_] if "weights" in trace
             else np.r_[np.ravel(estimator.dual_coef_), estimator.intercept_])
    np.testing.assert_allclose(row, model, rtol=1e-12, atol=1e-12 * np.abs(model).max())


@pytest.mark.parametrize("method, preset", [("hkes", "thyroid"), ("kernel_hkes", "heart"), ("kozinec", "thyroid"),
                                            ("sk", "heart")])
def test_a_returned_earlier_iterate_ends_the_trace(method, preset):
    # early stopping's k̂ (best_iter_) and the pocket are earlier iterates: one more row, marked, numbered k̂
    estimator, X, y = traced_fit(method, preset)
    trace = get_trace(estimator)
    k, returned = trace["iteration"], trace["returned"]
    assert returned.tolist() == [False] * (len(k) - 1) + [True]
    assert k[-2] == estimator.n_iter_  # n_iter_ unchanged: the row before is the final iterate
    best = getattr(estimator, "best_iter_", None)
    if best is not None:
        assert k[-1] == best < estimator.n_iter_
    else:  # the pocket: an iterate the trace recorded, the fewest training errors of all
        assert estimator.status_ == "not_separable" and k[-1] < estimator.n_iter_
        np.testing.assert_allclose(trace["weights"][-1], trace["weights"][np.flatnonzero(k[:-1] == k[-1])[0]])
        assert trace["training_errors"][k[-1]] == min(trace["training_errors"])
    records = trace_table(estimator).to_records()
    assert records[-1]["note"].startswith("returned") and all(r["note"] is None for r in records[:-1])
    assert records[-1]["training_errors"] == model_errors(estimator, X, y)
    # held-out rows count: the trace's errors of every iterate are those on all of X
    if best is not None:
        assert records[-1]["training_errors"] == np.count_nonzero(estimator.predict(X) != y)


def test_kernel_sk_on_thyroid_can_be_stepped():
    estimator, _, _ = traced_fit("kernel_sk", "thyroid")
    k = get_trace(estimator)["iteration"]
    assert len(k) > 1
    np.testing.assert_array_equal(k, np.arange(estimator.n_iter_ + 1))  # a row per step
