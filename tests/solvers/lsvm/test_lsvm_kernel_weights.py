"""Weighted kernel LSVM: every solution path (K, K = F Fᵀ, active sets) reaches the weighted solution on K."""

import numpy as np
import pytest
from sklearn.datasets import make_moons

from linsep import KernelLagrangianSVMClassifier


def _fitted(path, X, y, sample_weight):
    clf = KernelLagrangianSVMClassifier(kernel="poly", degree=2, gamma=1.0, C=10.0, tol=1e-12, max_iter=100_000)
    clf._solver_plan = {"path": path}  # private: the path to run
    return clf.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("path", ["low_rank", "active_set"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_weighted_paths_agree_with_the_iteration_on_k(path, n_classes):
    X, y = make_moons(120, noise=0.2, random_state=0)
    if n_classes == 3:
        y = np.where(X[:, 0] > 1.2, 2, y)
    weights = np.random.default_rng(0).uniform(0.0, 2.0, y.shape[0])
    weights[:5] = 0.0
    reference = _fitted("gram", X, y, weights)
    clf = _fitted(path, X, y, weights)
    assert np.all(np.atleast_1d(clf.status_) == "converged")
    np.testing.assert_allclose(clf.decision_function(X), reference.decision_function(X), rtol=0, atol=1e-8)
    unweighted = _fitted(path, X, y, None)
    assert not np.allclose(unweighted.decision_function(X), clf.decision_function(X))  # the weights were used
