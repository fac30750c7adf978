"""Inexact W-steps of wide sparse data (:mod:`linsep._linalg`): the forcing rule and the verdicts it leaves alone.

Wide ``Y`` (``d + 1`` above the direct solver's 2000 columns) goes to
:class:`linsep._linalg.IterativeLeastSquares`; inside an iteration its solves
may stop at a fraction ``η`` of the residual they start from
(``forcing``, forced here with the private ``_plan={"cg_forcing": η}``), and
the returned weights are solved again in full.  These problems are small in
``N`` so that the direct factorisation (the reference) stays cheap.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import linsep._linalg as linalg
from linsep._certificates import FIT_PROOF_RTOL, design_proof_residuals
from linsep._design import sign_normalized
from linsep._linalg import (CG_FORCING, IterativeLeastSquares, LeastSquaresFactor, iteration_forcing,
                            least_squares_solver)
from linsep.solvers.ho_kashyap import ho_kashyap
from linsep.solvers.lsvm import lagrangian_svm

WIDE = 2100  # features: d + 1 above the direct solver's widest system


def wide_problem(n, d=WIDE, density=0.01, seed=0):
    """Sparse non-negative rows (text-like), labels from a linear rule; ``(X, y ±1, Y)`` with ``Y`` sign-normalised."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X = (X + sp.eye(n, d, format="csr")).tocsr()  # every row has an entry
    score = X @ rng.standard_normal(d)
    y = np.where(score > np.median(score), 1.0, -1.0)
    return X, y, sign_normalized(X, y)


@pytest.mark.parametrize("ridge", [0.0, 0.5])
@pytest.mark.parametrize("weighted", [False, True])
def test_full_solve_after_inexact_ones_equals_direct(ridge, weighted):
    _, _, Y = wide_problem(300)
    D = np.random.default_rng(1).uniform(0.2, 3.0, Y.shape[0]) if weighted else None
    solver = IterativeLeastSquares(Y, D, ridge, forcing=0.3)
    rng = np.random.default_rng(2)
    for _ in range(3):  # inexact solves move the warm start around
        solver.solve(1.0 + rng.random(Y.shape[0]))
    rhs = 1.0 + rng.random(Y.shape[0])
    W = solver.solve(rhs, tol=solver.tol)
    assert solver.exact and solver.converged
    direct = LeastSquaresFactor(Y, D, ridge).solve(rhs)  # C = 0, d + 1 > N: the minimum-norm Y⁺ r
    np.testing.assert_allclose(W, direct, rtol=0, atol=1e-6 * np.abs(direct).max())


def test_reweighted_solver_keeps_forcing_and_solves_the_weighted_system():
    _, _, Y = wide_problem(300)
    solver = IterativeLeastSquares(Y, None, 0.5, forcing=0.1)
    solver.solve(np.ones(Y.shape[0]))
    D = np.random.default_rng(3).uniform(0.1, 10.0, Y.shape[0])
    other = solver.reweighted(D)
    assert other.forcing == 0.1
    W = other.solve(np.ones(Y.shape[0]), tol=other.tol)
    direct = LeastSquaresFactor(Y, D, 0.5).solve(np.ones(Y.shape[0]))
    np.testing.assert_allclose(W, direct, rtol=0, atol=1e-6 * np.abs(direct).max())


def test_inexact_solve_stops_at_its_forcing_target():
    _, _, Y = wide_problem(2500, seed=4)
    rhs = np.ones(Y.shape[0])
    exact = IterativeLeastSquares(Y, None, 0.5)
    inexact = IterativeLeastSquares(Y, None, 0.5, forcing=1e-2)
    for solver in (exact, inexact):
        solver.solve(rhs, tol=solver.tol)
    changed = rhs + 0.1 * np.random.default_rng(5).random(Y.shape[0])
    g = np.asarray(Y.T @ changed).ravel()
    start_residual = np.linalg.norm(g - inexact._matvec(inexact._x))
    before = (exact.iterations, inexact.iterations)
    exact.solve(changed)
    W = inexact.solve(changed)
    assert inexact.converged and not inexact.exact
    assert inexact.iterations - before[1] < exact.iterations - before[0]
    assert np.linalg.norm(g - inexact._matvec(W)) <= 1.01e-2 * start_residual


def test_forcing_by_size_and_by_request():
    small = sp.random(10, 3000, density=0.01, format="csr")
    assert iteration_forcing(small) == 0.0  # a cheap solve: every W-step to tol
    assert iteration_forcing(small, 0.25) == 0.25
    cells = np.arange(linalg._INEXACT_MIN_ENTRIES)
    large = sp.csr_matrix((np.ones(cells.size), (cells // 256, cells % 256)), shape=(cells.size // 256, 3000))
    assert iteration_forcing(large) == CG_FORCING
    solver = least_squares_solver(small)
    assert isinstance(solver, IterativeLeastSquares) and solver.forcing == 0.0  # opt-in by the iterations


# --- verdicts: the same with inexact W-steps as with full ones -----------------------------------------


def hk_pair(Y, **params):
    exact = ho_kashyap(Y, _plan={"cg_forcing": 0.0}, **params)
    inexact = ho_kashyap(Y, _plan={"cg_forcing": 0.1}, **params)
    assert exact.extra["factorization"] == inexact.extra["factorization"] == "cg"
    return exact, inexact


def test_separable_verdict_and_minimum_norm_weights():
    # d + 1 > N, C = 0: separable at once; the returned weights are the minimum-norm Y⁺B.
    _, _, Y = wide_problem(200)
    for result in hk_pair(Y, stop_at_separation=False, max_iter=5):
        scores = Y @ result.weights
        assert result.status == "separable" and scores.min() > 0
        # minimum norm: W lies in the row space of Y, W = Yᵀz
        z = np.linalg.lstsq(Y.T.toarray(), result.weights, rcond=None)[0]
        np.testing.assert_allclose(Y.T @ z, result.weights, atol=1e-7 * np.abs(result.weights).max())


def test_not_separable_and_converged_verdicts_agree():
    # a point with both labels among 40 in 5 active columns of a wide (2100-column) design: certainly not
    # separable; HK proves it (checked certificate) or stops converged, the same with inexact W-steps
    statuses = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        dense = rng.random((40, 5))
        y = rng.choice([-1.0, 1.0], 40)
        dense, y = np.vstack([dense, dense[:1]]), np.append(y, -y[0])
        X = sp.hstack([sp.csr_matrix(dense), sp.csr_matrix((41, WIDE - 5))], format="csr")
        Y = sign_normalized(X, y)
        exact, inexact = hk_pair(Y, max_iter=2000)
        assert exact.status == inexact.status
        if inexact.status == "not_separable":
            residuals = design_proof_residuals(Y, inexact.certificate)
            assert residuals is not None and np.all(residuals <= FIT_PROOF_RTOL)
        statuses.append(inexact.status)
    assert statuses.count("not_separable") >= 3


@pytest.mark.parametrize("C", [None, 1.0])
def test_budget_verdict(C):
    X, y, _ = wide_problem(4000, seed=7)
    y = np.where(np.random.default_rng(8).random(y.shape[0]) < 0.3, -y, y)  # heavy label noise
    Y = sign_normalized(X, y)
    exact, inexact = hk_pair(Y, C=C, max_iter=3)
    assert exact.status == inexact.status == "max_iter"
    assert exact.n_iter == inexact.n_iter == 4


def test_mhks_and_lsvm_converge_alike():
    X, y, _ = wide_problem(2500, seed=9)
    y = np.where(np.random.default_rng(10).random(y.shape[0]) < 0.1, -y, y)
    Y = sign_normalized(X, y)
    exact, inexact = hk_pair(Y, C=1.0, max_iter=500)
    assert exact.status == inexact.status == "converged"
    assert inexact.extra["cg_iterations"] < exact.extra["cg_iterations"]
    np.testing.assert_allclose(np.sign(Y @ inexact.weights), np.sign(Y @ exact.weights))
    full = lagrangian_svm(X, y, C=1.0, tol=1e-8, _plan={"cg_forcing": 0.0})
    fast = lagrangian_svm(X, y, C=1.0, tol=1e-8, _plan={"cg_forcing": 0.1})
    assert full.status == fast.status == "converged"
    assert fast.extra["cg_iterations"] < full.extra["cg_iterations"]
    np.testing.assert_allclose(fast.weights, full.weights, rtol=0, atol=1e-5 * np.abs(full.weights).max())
