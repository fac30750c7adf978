"""Non-finite numbers made during a fit (kernel values, overflowing steps) end in one clear ValueError."""

import numpy as np
import pytest

from linsep import available_classifiers, make_classifier
from linsep.estimators.base import BaseKernelSeparator
from linsep._core.finite import require_finite, require_finite_model

KERNEL_ESTIMATORS = [name for name in available_classifiers()
                     if isinstance(make_classifier(name), BaseKernelSeparator)]


def _blobs(n=20, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 0.3, (n // 2, 2)) + 2, rng.normal(0, 0.3, (n // 2, 2)) - 2])
    return X, np.repeat([1, 0], n // 2)


def _nan_kernel(A, B):
    return np.full((A.shape[0], B.shape[0]), np.nan)


def _inf_kernel(A, B):
    K = A @ B.T
    K[0, 0] = np.inf
    return K


def _one_column_too_many(A, B):
    return np.ones((A.shape[0], B.shape[0] + 1))


def _complex_kernel(A, B):
    return (A @ B.T).astype(complex)


@pytest.mark.parametrize("name", KERNEL_ESTIMATORS)
@pytest.mark.parametrize("kernel, message", [
    (_nan_kernel, "kernel values of kernel _nan_kernel must be finite, found NaN"),
    (_inf_kernel, "kernel values of kernel _inf_kernel must be finite, found infinity"),
    (_one_column_too_many, r"kernel _one_column_too_many must return an array of shape \(len\(A\), len\(B\)\)"),
    (_complex_kernel, "must return real numbers"),
])
def test_a_callable_kernel_must_return_one_finite_value_per_pair(name, kernel, message):
    X, y = _blobs()
    with pytest.raises(ValueError, match=message):
        make_classifier(name, kernel=kernel, max_iter=20).fit(X, y)


@pytest.mark.parametrize("name", KERNEL_ESTIMATORS)
def test_an_overflowing_named_kernel_is_refused(name):
    X, y = _blobs()
    with np.errstate(over="ignore"), pytest.raises(ValueError, match="kernel values of kernel poly must be finite"):
        make_classifier(name, kernel="poly", degree=400, gamma=10.0, max_iter=20).fit(X * 10, y)


@pytest.mark.parametrize("name", ["perceptron", "batch_perceptron"])
def test_a_step_that_overflows_the_weights_is_refused(name):
    X, y = _blobs()
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match="coef_ of .* must be finite"):
        make_classifier(name, learning_rate=1e308, max_iter=50).fit(X * 1e3, y)


def test_a_finite_step_size_still_fits():
    X, y = _blobs()
    for name in ("perceptron", "batch_perceptron"):
        model = make_classifier(name, learning_rate=1e300, max_iter=50).fit(X, y)
        assert np.all(np.isfinite(model.decision_function(X))) and model.score(X, y) == 1.0


def test_require_finite_names_what_is_wrong():
    require_finite(np.ones(3), "values")
    require_finite(np.array(["a"]), "labels")  # not numbers: nothing to check
    with pytest.raises(ValueError, match="the scores must be finite, found NaN and infinity; look"):
        require_finite(np.array([np.nan, np.inf, 1.0]), "the scores", "look")

    class Model:
        coef_ = np.array([[1.0, np.nan]])
        intercept_ = np.zeros(1)

    with pytest.raises(ValueError, match="the fitted coef_ of Model must be finite"):
        require_finite_model(Model())


def test_a_stream_chunk_that_overflows_the_weights_is_refused():
    X, y = _blobs()
    model = make_classifier("perceptron", learning_rate=1e308)
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match="coef_ of .* must be finite"):
        model.partial_fit(X * 1e3, y, classes=[0, 1])
