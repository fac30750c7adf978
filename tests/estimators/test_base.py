"""The estimator layer (linsep.estimators.base): the convergence warning's text, inputs it refuses, verdicts it checks."""

import warnings

import numpy as np
import pytest
from problems import three_overlapping_classes, wide_margin_data
from sklearn.exceptions import ConvergenceWarning

from linsep import HoKashyapClassifier, KozinecClassifier, PerceptronClassifier
from linsep._core.result import CONVERGED, NOT_SEPARABLE, SEPARABLE, SolveResult


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


# --- verdicts are checked on the returned model ---------------------------------------------------

class _ClaimsSeparation(HoKashyapClassifier):
    """A solver that claims separation with zero weights (the stored model contradicts it)."""

    def _solve_binary(self, X, y, fit, **kw):
        return SolveResult(np.zeros(X.shape[1] + 1), 1, SEPARABLE)


class _ClaimsAProof(HoKashyapClassifier):
    """A solver that claims non-separability with a certificate that proves nothing."""

    def _solve_binary(self, X, y, fit, **kw):
        return SolveResult(np.zeros(X.shape[1] + 1), 1, NOT_SEPARABLE, certificate=np.ones(X.shape[0]))


def test_a_separable_claim_the_weights_contradict_is_demoted():
    X, y = wide_margin_data()
    assert _ClaimsSeparation().fit(X, y).status_ == CONVERGED


def test_an_unchecked_proof_is_demoted():
    X, y = wide_margin_data()
    clf = _ClaimsAProof().fit(X, y)
    assert clf.status_ == CONVERGED and clf.certificate_ is None
