"""``make_classifier`` and the table of named methods (:mod:`linsep.estimators.registry`)."""

import pytest

from linsep import available_classifiers, make_classifier


@pytest.mark.parametrize("name", list(available_classifiers()))
def test_registry_builds_named_method(name):
    estimator = make_classifier(name)
    assert estimator.get_params()  # keyword-only, stores parameters only


def test_registry_unknown_name():
    with pytest.raises(ValueError, match="unknown classifier"):
        make_classifier("no_such_method")


@pytest.mark.parametrize("name", list(available_classifiers()))
def test_registry_accepts_random_state_for_every_name(name):
    # the README's loop style: a seed for every method; one that draws no random numbers drops it
    estimator = make_classifier(name, random_state=0)
    params = estimator.get_params()
    assert params.get("random_state", 0) == 0
    assert ("random_state" in params) == ("random_state" in type(estimator)().get_params())


def test_registry_names_the_method_and_its_parameters():
    with pytest.raises(ValueError, match=r"lsvm \(LagrangianSVMClassifier\) has no parameter 'verbose'; "
                                         r"its parameters: C, mu, tol, max_iter") as error:
        make_classifier("lsvm", verbose=1)
    assert isinstance(error.value, TypeError)  # also what Python raises for an unexpected keyword argument
    with pytest.raises(TypeError, match=r"hkes \(HoKashyapClassifier\) has no parameters 'gamma', 'n_jobs'"):
        make_classifier("hkes", gamma=1.0, n_jobs=2)  # n_jobs: not ignored (only the CV estimators have it)
    assert make_classifier("hkes_cv", n_jobs=2).n_jobs == 2
    assert make_classifier("mhks", C=0.25).C == 0.25  # the preset is still overridden


def test_every_registered_method_has_a_title_in_words():
    from linsep.estimators.registry import classifier_titles

    titles = classifier_titles()
    assert list(titles) == list(available_classifiers())              # one title per name, same order
    assert titles["hk"] == "Ho–Kashyap" and titles["sk"] == "Schlesinger–Kozinec"
    assert all(title and title != name for name, title in titles.items())
