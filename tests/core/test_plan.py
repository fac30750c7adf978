"""The fit's plan: one rule for the working type (``linsep._core.plan.working_dtype``), recorded on the result.

A table over every registered estimator × input (dense, sparse, a
``partial_fit`` stream) × type: the type of ``coef_`` (``dual_coef_`` for
kernel models) and the plan's ``dtype`` that each fit records
(``SolveResult.extra["plan"]``, kept per problem in the estimator's private
``_fit_plans``) are the ones the rule gives.  float32 stays float32 on every
path that reads it as it is, ``partial_fit`` included.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import available_classifiers, make_classifier
from linsep._core.plan import (FLOAT32, FLOAT64, FLOAT64_ONLY, FORCEABLE, READS_FLOAT32, forced, forced_plan,
                               validation_dtypes, working_dtype)

# Estimators whose paths read dense float32 data as they are (coef_ in float32).
DENSE_FLOAT32 = {"batch_perceptron", "hk", "hkes", "hkesa", "lms", "lsvm", "mhka", "mhks", "modified_hk", "mse",
                 "perceptron", "widrow_hoff"}
# The cross-validated HK estimators return dense float32 data's model in float32, but on small data (a formed
# float64 Y, below the views path's size) their runs work in float64: the plans record float64.
CV_RETURN_FLOAT32 = {"hkes_cv", "hkes_cv_c", "hkesa_cv"}
# Of those, the rules that read sparse rows as they are; the others form a float64 sparse Y.
SPARSE_FLOAT32 = {"lms", "lsvm", "perceptron"}
CASES = [(name, kind) for name in sorted(available_classifiers()) for kind in ("dense", "sparse", "partial_fit")
         if kind != "partial_fit" or hasattr(make_classifier(name), "partial_fit")]


def _expected(name, kind, dtype):
    if dtype == FLOAT64:
        return FLOAT64
    keeps = SPARSE_FLOAT32 if kind == "sparse" else DENSE_FLOAT32
    return FLOAT32 if name in keeps else FLOAT64


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=40), [-0.4, 0.4])  # three classes: one-vs-rest too
    return X, y


@pytest.mark.parametrize("dtype", [FLOAT32, FLOAT64], ids=["float32", "float64"])
@pytest.mark.parametrize(("name", "kind"), CASES)
def test_coef_dtype_and_recorded_plan(name, kind, dtype, data):
    X, y = data
    clf = make_classifier(name)
    if "max_iter" in clf.get_params():
        clf.set_params(max_iter=5)  # the type, not the solution, is under test
    Xt = X.astype(dtype)
    Xt = sp.csr_matrix(Xt) if kind == "sparse" else Xt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter
        if kind == "partial_fit":
            clf.partial_fit(Xt[:20], y[:20], classes=np.unique(y))
            clf.partial_fit(Xt[20:].astype(np.float64), y[20:])  # later chunks take the stream's type
        else:
            clf.fit(Xt, y)
    expected = _expected(name, kind, np.dtype(dtype))
    returned = FLOAT32 if (name in CV_RETURN_FLOAT32 and kind == "dense" and dtype == FLOAT32) else expected
    weights = clf.coef_ if hasattr(clf, "coef_") else clf.dual_coef_
    assert weights.dtype == clf.intercept_.dtype == returned
    assert len(clf._fit_plans) == 3  # one per one-vs-rest problem
    assert {plan["dtype"] for plan in clf._fit_plans} == {expected.name}


def test_working_dtype_rule():
    """float32 kept where accepted, anything else converted to the first accepted type; a stream keeps its type."""
    x32, x64, xi = np.zeros(2, np.float32), np.zeros(2), np.zeros(2, np.int64)
    assert working_dtype(x32) == FLOAT32 and working_dtype(x64) == FLOAT64 and working_dtype(xi) == FLOAT64
    assert working_dtype(np.zeros(2, np.float16)) == FLOAT64
    assert working_dtype(sp.csr_matrix(np.eye(2, dtype=np.float32))) == FLOAT32
    assert working_dtype(x32, FLOAT64_ONLY) == FLOAT64
    assert working_dtype([[1.0]]) == FLOAT64  # no dtype: the first accepted type
    assert working_dtype(x64, stream=np.float32) == FLOAT32
    assert working_dtype(x32, FLOAT64_ONLY, stream=np.float32) == FLOAT64
    assert validation_dtypes(READS_FLOAT32) == [FLOAT64, FLOAT32]
    assert validation_dtypes(READS_FLOAT32, stream=np.float32) == FLOAT32
    assert validation_dtypes(FLOAT64_ONLY, stream=np.float32) == [FLOAT64]


def test_working_dtype_of_array_api_input():
    xp = pytest.importorskip("array_api_strict")
    assert working_dtype(xp.zeros(2, dtype=xp.float32), xp=xp) == FLOAT32
    assert working_dtype(xp.zeros(2, dtype=xp.float64), xp=xp) == FLOAT64
    assert working_dtype(xp.zeros(2, dtype=xp.float32), FLOAT64_ONLY, xp=xp) == FLOAT64


def test_a_forced_plan_holds_inside_its_block_only():
    """``forced_plan`` (the block tests force deep paths in, instead of private parameters): entries nest, end with
    their block, and an unknown name is refused rather than silently ignored."""
    draw = object()
    assert forced("plot_trace", "default") == "default"
    with forced_plan(separability={"linprog": len}):
        with forced_plan(plot_trace=draw):
            assert forced("separability") == {"linprog": len} and forced("plot_trace") is draw
        assert forced("plot_trace") is None and forced("separability") == {"linprog": len}
    assert forced("separability") is None
    with pytest.raises(ValueError, match="unknown entries"):
        with forced_plan(separabilty={}):
            pass
    with pytest.raises(ValueError, match="unknown entry"):
        forced("nothing")
    assert set(FORCEABLE) == {"separability", "plot_trace"}
