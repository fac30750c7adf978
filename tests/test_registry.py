"""``make_classifier`` and the table of named methods (:mod:`linsep._registry`)."""

import pytest

from linsep import available_classifiers, make_classifier


@pytest.mark.parametrize("name", list(available_classifiers()))
def test_registry_builds_named_method(name):
    estimator = make_classifier(name)
    assert estimator.get_params()  # keyword-only, stores parameters only


def test_registry_unknown_name():
    with pytest.raises(ValueError, match="unknown classifier"):
        make_classifier("no_such_method")
