"""The kernel LSVM's active-set path: the fixed point of iteration (22) in a few solves, checked.

Few active constraints (one positive among many samples) make iteration (22)
take about ``C·λ_max(Q)`` steps; the active-set solves reach the same fixed
point in a handful of rounds from kernel columns only
(``linsep.solvers.lsvm.active_set_kernel_lagrangian_svm``, from :mod:`linsep.solvers.lsvm.active_set`).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

from linsep import make_classifier
from linsep.estimators.lsvm import ACTIVE_SET_MIN_SAMPLES
from linsep.solvers.lsvm.active_set import ACTIVE_SET_KKT_ATOL, active_set_kernel_lagrangian_svm
from linsep.solvers.lsvm.solver import kernel_lagrangian_svm


def one_positive(n, d, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    y = np.zeros(n, dtype=int)
    y[0] = 1
    return X, y


def kkt_violation(K, y, alpha, C):
    """Largest violation of the dual's optimality conditions (α >= 0, Qα >= 1, equality where α > 0)."""
    Q = (K + 1.0) * np.outer(y, y) + np.eye(len(y)) / C
    gradient = Q @ alpha - 1.0
    return max(-alpha.min(), -gradient.min(), np.abs(gradient[alpha > 0]).max())


def fitted(X, y, path, **params):
    clf = make_classifier("kernel_lsvm", **params)
    clf._solver_plan = {"path": path}  # private: the path to run
    return clf.fit(X, y)


@pytest.mark.parametrize("d, n", [(5, 600), (2, 400), (5, 1500)])
def test_active_set_solution_meets_the_optimality_conditions(d, n):
    X, labels = one_positive(n, d)
    y = np.where(labels == 1, 1.0, -1.0)
    K = rbf_kernel(X, gamma=1.0 / d)

    def block(rows, cols):
        return K[:, cols] if rows is None else K[np.ix_(rows, cols)]

    result = active_set_kernel_lagrangian_svm(block, y, C=1.0)
    assert result.status == "converged" and result.n_iter <= 20
    alpha = result.extra["alpha"]
    assert kkt_violation(K, y, alpha, 1.0) <= 1e3 * ACTIVE_SET_KKT_ATOL
    assert result.extra["active"] == np.count_nonzero(alpha > 0) < n
    np.testing.assert_array_equal(result.weights, y * alpha)
    assert result.intercept == pytest.approx((y * alpha).sum())


def test_active_set_path_gives_the_iterations_fixed_point():
    X, y = one_positive(600, 5)
    iterated = fitted(X, y, "iteration", tol=1e-10, max_iter=100_000)
    active = fitted(X, y, "active_set")
    assert iterated.status_ == active.status_ == "converged"
    assert active.n_iter_ <= 20 < iterated.n_iter_
    scale = np.abs(iterated.alpha_).max()
    np.testing.assert_allclose(active.alpha_, iterated.alpha_, atol=1e-6 * scale)
    np.testing.assert_allclose(active.intercept_, iterated.intercept_, atol=1e-6 * scale)
    np.testing.assert_array_equal(active.predict(X), iterated.predict(X))


def test_active_set_path_one_vs_rest_and_precomputed():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(450, 4))
    y = np.repeat([0, 1, 2], 150)
    X[y == 1] += 1.5
    iterated = fitted(X, y, "iteration", tol=1e-10, max_iter=100_000)
    active = fitted(X, y, "active_set")
    assert np.all(active.n_iter_ <= 30)
    np.testing.assert_allclose(active.dual_coef_, iterated.dual_coef_, atol=1e-6 * np.abs(iterated.alpha_).max())
    K = rbf_kernel(X, gamma=active._gamma)
    precomputed = fitted(K, y, "active_set", kernel="precomputed")
    np.testing.assert_allclose(precomputed.dual_coef_, active.dual_coef_, rtol=1e-9, atol=1e-12)


def test_many_samples_take_the_active_set_path_by_default():
    """One positive among ACTIVE_SET_MIN_SAMPLES in 5 dimensions: a handful of solves, not hundreds of steps."""
    X, y = one_positive(ACTIVE_SET_MIN_SAMPLES, 5)
    clf = make_classifier("kernel_lsvm", C=1.0).fit(X, y)
    assert clf.status_ == "converged" and clf.n_iter_ <= 20
    assert clf.alpha_.min() >= 0.0 and clf.alpha_[0] > 0


def test_a_failed_active_set_solve_falls_back_to_the_iteration():
    """No round allowed (max_iter=0): the iteration runs, with its own status and warning."""
    X, y = one_positive(300, 3)
    with pytest.warns(ConvergenceWarning):
        clf = fitted(X, y, "active_set", max_iter=0)
    assert clf.status_ == "max_iter" and clf.n_iter_ == 0
    reference = kernel_lagrangian_svm(rbf_kernel(X, gamma=clf._gamma), np.where(y == 1, 1.0, -1.0), max_iter=0)
    np.testing.assert_allclose(clf.alpha_, reference.extra["alpha"])
