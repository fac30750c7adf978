"""The estimator layer (linsep._base): the convergence warning's text and inputs it refuses."""

import warnings

import numpy as np
import pytest
from conftest import random_problem, three_overlapping_classes
from sklearn.exceptions import ConvergenceWarning

from linsep import HoKashyapClassifier, KozinecClassifier, PerceptronClassifier
from linsep.solvers.ho_kashyap import ho_kashyap


def _warning_text(estimator, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        estimator.fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 1
    return messages[0]


def test_convergence_warning_names_plain_labels_and_the_estimators_own_parameters():
    X, y = three_overlapping_classes()
    text = _warning_text(HoKashyapClassifier(C=1.0, max_iter=2, tol=0.0, stopping="paper"), X, y)
    assert "for class(es) 2, 5, 7 (one-vs-rest)" in text and "np.int64" not in text
    assert "Increase max_iter or loosen tol." in text
    text = _warning_text(PerceptronClassifier(max_iter=1), X, y)  # no tol
    assert "max_iter=1" in text and "tol" not in text and "np." not in text


def test_string_labels_are_quoted_plainly():
    X, _ = three_overlapping_classes()
    y = np.repeat(np.array(["a", "b", "c"]), 30)
    text = _warning_text(KozinecClassifier(max_iter=1), X, y)
    assert "for class(es) 'a', 'b', 'c'" in text and "np.str_" not in text


def test_estimators_without_a_dask_backend_refuse_dask_arrays():
    da = pytest.importorskip("dask.array")
    X, y = three_overlapping_classes()
    with pytest.raises(TypeError, match="does not fit dask arrays.*compute"):
        PerceptronClassifier().fit(da.from_array(X, chunks=30), y)
    with pytest.raises(TypeError, match="does not fit dask arrays"):
        KozinecClassifier().fit(X, da.from_array(y, chunks=30))


def test_partial_fit_keeps_float32_like_fit():
    from linsep import LMSClassifier

    X, y = three_overlapping_classes()
    X32 = X.astype(np.float32)
    for make in (lambda: PerceptronClassifier(random_state=0), lambda: LMSClassifier(random_state=0)):
        fitted = make().fit(X32, y)
        streamed = make().partial_fit(X32[:45], y[:45], classes=np.unique(y))
        streamed.partial_fit(X[45:], y[45:])  # a float64 chunk joins the float32 stream
        assert fitted.coef_.dtype == streamed.coef_.dtype == np.float32


def test_the_plan_that_ran_is_recorded(hk_plan):
    """Every driver records its path; the compiled and the Python driver give the same fit."""
    from linsep._design import sign_normalized

    X, y = random_problem(3, n=200)
    Y = sign_normalized(X, y)
    result = ho_kashyap(Y, C=0.5, loss="absolute", _plan=hk_plan)
    reference = ho_kashyap(Y, C=0.5, loss="absolute", _plan={"driver": "python"})
    plan = result.extra["plan"]
    assert plan["driver"] == ("python" if hk_plan == {"driver": "python"} else "compiled")
    assert plan["factorization"] == "cholesky" and plan["dtype"] == "float64" and plan["threads"] == 1
    assert result.n_iter == reference.n_iter
    np.testing.assert_allclose(result.weights, reference.weights, rtol=1e-8)
