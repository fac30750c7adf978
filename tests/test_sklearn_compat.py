"""scikit-learn's estimator checks for every registered algorithm.

The checks run with small budgets (:data:`FAST_PARAMS`): their data are
small, often not separable, and the default budgets (``max_iter`` up to
100 000, 5 folds) would only repeat the same iterations; what the checks
test (the estimator API, input handling, pickling, invariances) does not
depend on them.  The defaults themselves are fitted throughout the other
test files.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from linsep import available_classifiers, make_classifier

FAST_PARAMS = {"max_iter": 300, "cv": 3}
"""Upper bounds applied to the parameters an estimator has (an estimator's smaller default is kept)."""


def fast_estimator(name):
    estimator = make_classifier(name)
    params = estimator.get_params()
    return estimator.set_params(**{key: min(params[key], bound) for key, bound in FAST_PARAMS.items()
                                   if key in params and params[key] is not None})


ESTIMATORS = [fast_estimator(name) for name in available_classifiers()]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", list(available_classifiers()))
def test_registry_builds_named_method(name):
    estimator = make_classifier(name)
    assert estimator.get_params()  # keyword-only, stores parameters only


def test_registry_unknown_name():
    with pytest.raises(ValueError, match="unknown classifier"):
        make_classifier("no_such_method")
