"""HKES by rows reads its held-out rows inside the training pass (one read of X per iteration), and the
matrix-free W-steps of wide data start from their recycled steps: both give the fits they replace."""

import numpy as np
import pytest
import scipy.sparse as sp

from linsep._design import SignedDesign
from linsep._krylov import RecycledSteps
from linsep._linalg import IterativeLeastSquares
from linsep.solvers.ho_kashyap import ho_kashyap


def _split(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = np.where(X @ rng.standard_normal(d) + 2.0 * rng.standard_normal(n) > 0, 1.0, -1.0)
    held_out = np.zeros(n, dtype=bool)
    held_out[rng.permutation(n)[: n // 3]] = True
    return X, y, np.flatnonzero(~held_out), np.flatnonzero(held_out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n", "threads"), [(3_000, 1), (40_000, 1), (40_000, 2)])
@pytest.mark.parametrize("absolute", [False, True])
def test_merged_validation_pass_gives_the_separate_passes_fit(dtype, n, threads, absolute):
    # Validation rows of the same X (HKES's own split) are counted inside the training pass; a copy of X
    # for the validation rows takes the separate count.  Same iterates, same validation curve, bit for bit.
    X, y, fit_rows, val_rows = _split(n, 8, dtype)
    plan = {"by_columns_max_entries": 0, "threads": threads}
    kwargs = {"C": 0.5, "max_iter": 25, "tol": 0.0, "loss": "absolute" if absolute else "squared",
              "stop_at_separation": False, "_plan": plan}
    merged = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                        Y_val=SignedDesign(X, y[val_rows], val_rows), **kwargs)
    separate = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                          Y_val=SignedDesign(X.copy(), y[val_rows], val_rows), **kwargs)
    assert merged.extra["plan"]["driver"] == separate.extra["plan"]["driver"] == "compiled"
    np.testing.assert_array_equal(merged.weights, separate.weights)
    np.testing.assert_array_equal(merged.history["validation_error"], separate.history["validation_error"])
    np.testing.assert_array_equal(merged.history["criterion"], separate.history["criterion"])
    assert merged.n_iter == separate.n_iter
    assert merged.best_iter == separate.best_iter


def test_merged_pass_counts_validation_rows_outside_the_training_range():
    # Held-out rows before the first and after the last training row belong to the first and last chunks.
    X, y, _, _ = _split(40_000, 8, np.float64, seed=3)
    fit_rows, val_rows = np.arange(5_000, 35_000), np.r_[np.arange(5_000), np.arange(35_000, 40_000)]
    plan = {"by_columns_max_entries": 0, "threads": 2}
    kwargs = {"C": 0.5, "max_iter": 10, "tol": 0.0, "stop_at_separation": False, "_plan": plan}
    merged = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows), Y_val=SignedDesign(X, y[val_rows], val_rows),
                        **kwargs)
    separate = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                          Y_val=SignedDesign(X.copy(), y[val_rows], val_rows), **kwargs)
    np.testing.assert_array_equal(merged.history["validation_error"], separate.history["validation_error"])
    np.testing.assert_array_equal(merged.weights, separate.weights)


def test_recycled_steps_give_the_solution_in_their_span():
    # The Galerkin correction is exact when the solution's change lies in the span of the kept steps.
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 10))
    M = A.T @ A + np.eye(10)
    steps = RecycledSteps(capacity=3)
    basis = rng.standard_normal((10, 4))
    for j in range(4):  # the oldest of four is forgotten
        steps.keep(basis[:, j], M @ basis[:, j])
    x_true = basis[:, 1:] @ np.array([1.0, -2.0, 0.5])
    x = np.zeros(10)
    r = steps.corrected(x, M @ x_true)
    np.testing.assert_allclose(x, x_true, atol=1e-10)
    np.testing.assert_allclose(r, 0.0, atol=1e-9)


def test_inexact_solves_with_recycled_steps_track_the_exact_solutions():
    # A sequence of right-hand sides converging linearly (as an iteration's do): each inexact solve meets its
    # forcing target, measured by the true residual, and an exact re-solve agrees with a direct solve.
    rng = np.random.default_rng(1)
    Y = sp.random(3_000, 400, density=0.02, random_state=2, format="csr") + sp.csr_matrix(
        (np.ones(3_000), (np.arange(3_000), np.full(3_000, 399))), shape=(3_000, 400))
    solver = IterativeLeastSquares(Y, None, 1.0, forcing=1e-2)
    M = (Y.T @ Y).toarray() + np.diag(np.r_[np.ones(399), 0.0])
    target, direction = rng.standard_normal(400), rng.standard_normal(400)
    previous = np.zeros(400)
    for k in range(40):
        g = target + 0.8**k * direction + 0.6**k * rng.standard_normal(400)
        x = solver.solve_normal(g)
        change = np.linalg.norm(g - M @ previous)
        assert np.linalg.norm(g - M @ x) <= 1e-2 * change * (1 + 1e-6) + 1e-9 * np.linalg.norm(g)
        previous = x
    exact = solver.solve_normal(g, tol=1e-12, x0=x)
    np.testing.assert_allclose(exact, np.linalg.solve(M, g), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("C", [0.5, 4.0])
def test_sparse_lsvm_with_inexact_recycled_solves_matches_the_direct_solution(C):
    # Wide sparse X takes CG with inexact, recycled W-steps and the sparse pass through [X, 1]'s CSR copies;
    # the same numbers dense and narrow enough for the Cholesky factor give the same weights.
    from linsep._linalg import solver_limits
    from linsep.solvers.lsvm import lagrangian_svm

    rng = np.random.default_rng(4)
    X = sp.random(600, 120, density=0.05, random_state=5, format="csr")
    y = np.where(X @ rng.standard_normal(120) + 0.1 * rng.standard_normal(600) > 0, 1.0, -1.0)
    direct = lagrangian_svm(X.toarray(), y, C=C, tol=1e-9)
    with solver_limits(direct_max_columns=2):
        sparse = lagrangian_svm(X, y, C=C, tol=1e-9, _plan={"cg_forcing": 1e-2})
    assert sparse.extra["factorization"] == "cg" and sparse.status == "converged"
    np.testing.assert_allclose(sparse.weights, direct.weights, atol=1e-7 * np.abs(direct.weights).max())
    np.testing.assert_allclose(sparse.extra["alpha"], direct.extra["alpha"], atol=1e-6 * direct.extra["alpha"].max())
