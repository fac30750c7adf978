"""scikit-learn's estimator checks for every registered algorithm."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from linsep import available_classifiers, make_classifier

ESTIMATORS = [make_classifier(name) for name in available_classifiers()]


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
