"""The steps the matrix-free least-squares solves recycle, and the minimum-norm map (:mod:`linsep._core.krylov`).

The preconditioned CG itself (``conjugate_gradients``) is tested through :class:`linsep._core.linalg.IterativeLeastSquares`
in ``test_linalg.py``.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from linsep._core.krylov import FrequentColumnsMetric, RecycledSteps, minimum_norm_solve
from linsep._core.linalg import IterativeLeastSquares, solver_limits
from linsep._core.threads import RowSplitCSR


def wide_text_like(n=40, p=120, seed=0):
    """Sparse rows with a few frequent columns and many rare ones (terms seen once or twice): rank < p."""
    rng = np.random.default_rng(seed)
    frequency = 1.0 / (np.arange(p) + 1.0)
    dense = np.where(rng.random((n, p)) < np.minimum(1.0, 6 * frequency), rng.uniform(0.1, 1.0, (n, p)), 0.0)
    dense[:, -1] = 1.0  # the bias column, the most frequent of all
    return sp.csr_matrix(dense)


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


def test_minimum_norm_solve_under_the_frequent_columns_metric_is_the_pseudoinverse_solution():
    Y = wide_text_like()
    fitted = Y @ np.random.default_rng(1).standard_normal(Y.shape[1])
    metric = FrequentColumnsMetric(Y, n_columns=5)
    assert metric.usable and metric.mu > 0
    W, iterations, residual, converged = minimum_norm_solve(Y, sp.csr_matrix(Y.T), fitted, metric, 1e-12, 5000)
    assert converged and residual <= 1e-12 and iterations > 0
    expected = np.linalg.pinv(Y.toarray()) @ fitted
    np.testing.assert_allclose(W, expected, atol=1e-8 * np.abs(expected).max())
    # the data tell the row space apart: a preconditioner on the W side (Jacobi) gives another solution
    jacobi = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False, tol=1e-12)
    W_jacobi = jacobi.solve(fitted)
    np.testing.assert_allclose(Y @ W_jacobi, fitted, atol=1e-8)
    assert np.abs(W_jacobi - expected).max() > 1e-3 * np.abs(expected).max()


def test_metric_is_the_woodbury_inverse_of_its_matrix():
    Y = wide_text_like(seed=2)
    metric = FrequentColumnsMetric(Y, n_columns=4)
    squares = np.asarray(Y.multiply(Y).sum(axis=0)).ravel()
    frequent = np.sort(np.argsort(-squares, kind="stable")[:4])
    Y_H = Y[:, frequent].toarray()
    M = metric.mu * np.eye(Y.shape[0]) + Y_H @ Y_H.T
    u = np.random.default_rng(3).standard_normal(Y.shape[0])
    np.testing.assert_allclose(M @ metric.solve(u), u, atol=1e-10)
    assert metric.mu == np.sort(squares)[::-1][4]


def test_metric_is_not_used_where_it_cannot_help():
    Y = wide_text_like()
    assert not FrequentColumnsMetric(Y, n_columns=60).usable  # p <= 2k: plain CG
    frequent_only = sp.csr_matrix(np.c_[np.ones((10, 3)) * [1.0, 2.0, 3.0], np.zeros((10, 20))])
    assert not FrequentColumnsMetric(frequent_only, n_columns=3).usable  # μ = 0: M would be singular


@pytest.mark.parametrize("threads", [1, 2])
def test_minimum_norm_part_uses_the_metric_and_maps_to_the_pseudoinverse_solution(threads):
    Y = wide_text_like(n=200, p=400, seed=4)
    fitted_from = np.random.default_rng(5).standard_normal(Y.shape[1])
    expected = np.linalg.pinv(Y.toarray()) @ (Y @ fitted_from)
    # peeling_max_free=0: the Krylov map (this small wide Y would peel with its 200 free columns)
    with solver_limits(frequent_columns=20, product_threads=threads, peeling_max_free=0):
        solver = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False)
        mapped = solver.minimum_norm_part(fitted_from)
    assert solver.converged and solver.exact and solver.iterations > 0
    assert solver.stats["cg_metric_columns"] == 20  # the metric's path ran
    assert solver.stats["minimum_norm_map"] == "metric cg"
    np.testing.assert_allclose(mapped, expected, atol=1e-7 * np.abs(expected).max())
    with solver_limits(frequent_columns=20, product_threads=1, peeling_max_free=0):
        single = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False).minimum_norm_part(fitted_from)
    np.testing.assert_array_equal(mapped, single)  # the products' threads change no bit
    with solver_limits(frequent_columns=Y.shape[1], peeling_max_free=0):  # metric unusable: plain CG
        plain_solver = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False)
        plain = plain_solver.minimum_norm_part(fitted_from)
    assert plain_solver.stats["cg_metric_columns"] == 0 and plain_solver.stats["minimum_norm_map"] == "cg"
    np.testing.assert_allclose(plain, mapped, atol=1e-7 * np.abs(expected).max())


def test_row_split_metric_products_are_those_of_scipy():
    Y = wide_text_like(n=300, p=500, seed=6)
    u = np.random.default_rng(7).standard_normal(300)
    one, two = FrequentColumnsMetric(Y, 1, n_columns=30), FrequentColumnsMetric(Y, 2, n_columns=30)
    assert isinstance(two._Y_Ht, RowSplitCSR)
    np.testing.assert_array_equal(one.solve(u), two.solve(u))
    # Y_H c by the column scatter of the CSC view: the row-wise product's sums, in the same order
    Y_H = sp.csr_matrix(two._Y_H)
    c = np.random.default_rng(8).standard_normal(Y_H.shape[1])
    np.testing.assert_array_equal(two._Y_H @ c, Y_H @ c)
    dense_H = Y_H.toarray()
    metric = two.mu * np.eye(300) + dense_H @ dense_H.T
    np.testing.assert_allclose(two.solve(u), np.linalg.solve(metric, u), rtol=1e-9, atol=1e-12)


def collinear_frequent_columns(scale, duplicated, seed=0):
    """A large numeric column (twice if ``duplicated``), a one-hot group summing to the bias column, rare terms."""
    rng = np.random.default_rng(seed)
    n = 1500
    one_hot = sp.csr_matrix((np.ones(n), (np.arange(n), rng.integers(0, 4, n))), shape=(n, 4))
    numeric = sp.csr_matrix(rng.uniform(0.1, 1.0, (n, 1)) * scale)
    rare = sp.random(n, 2500, density=0.002, random_state=1, data_rvs=np.ones)
    labels = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    parts = [numeric] * (2 if duplicated else 1) + [one_hot, rare, sp.csr_matrix(np.ones((n, 1)))]
    return sp.csr_matrix(sp.diags(labels) @ sp.hstack(parts))


@pytest.mark.parametrize(("scale", "duplicated"), [(1e5, False), (1e6, False), (100.0, True), (1e3, True)])
def test_map_stays_in_the_row_space_with_collinear_frequent_columns(scale, duplicated):
    # The frequent columns' capacitance matrix is ill-conditioned; the map must still return Y⁺(Y W) (a
    # shortcut that took the frequent columns' part from the capacitance solve left the row space here).
    Y = collinear_frequent_columns(scale, duplicated)
    W = np.random.default_rng(2).standard_normal(Y.shape[1])
    expected = np.linalg.pinv(Y.toarray(), rcond=1e-13) @ (Y @ W)
    with solver_limits(frequent_columns=40, product_threads=1, peeling_max_free=0):
        solver = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False)
        mapped = solver.minimum_norm_part(W)
    assert solver.converged
    np.testing.assert_allclose(mapped, expected, atol=1e-6 * np.abs(expected).max())


def test_singular_capacitance_falls_back_to_plain_cg():
    # two identical columns of size 1e8: μI + Y_HᵀY_H is singular at rounding
    rng = np.random.default_rng(3)
    dense = sp.random(80, 400, density=0.03, random_state=1).toarray()
    dense[:, 0] = dense[:, 1] = rng.uniform(1.0, 2.0, 80) * 1e8
    dense[:, -1] = 1.0
    Y = sp.csr_matrix(dense)
    assert not FrequentColumnsMetric(Y, n_columns=3).usable
    with solver_limits(frequent_columns=3, peeling_max_free=0):
        solver = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False)
        mapped = solver.minimum_norm_part(rng.standard_normal(400))
    assert solver.stats["cg_metric_columns"] == 0 and np.isfinite(mapped).all()


@pytest.mark.parametrize("jacobi", [False, True])
def test_lockstep_columns_give_each_columns_own_solve(jacobi):
    # conjugate_gradients_columns: one product per step for all columns, each column its own CG (step lengths,
    # stopping); a zero column, one that starts converged and ill-conditioned ones that need different counts
    from linsep._core.krylov import conjugate_gradients, conjugate_gradients_columns

    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, 40)) * np.logspace(0, 1, 40)
    M = A.T @ A
    b = rng.standard_normal((40, 4))
    b[:, 1] = 0.0
    x0 = np.zeros((40, 4))
    x0[:, 2] = np.linalg.solve(M, b[:, 2])  # already solved
    inv_diag = 1.0 / np.diag(M) if jacobi else None
    x, iterations, residual, converged = conjugate_gradients_columns(lambda V: M @ V, b, x0.copy(), inv_diag, 1e-10,
                                                                    500)
    for k in range(4):
        alone, n_iter, alone_residual, alone_converged = conjugate_gradients(lambda v: M @ v, b[:, k], x0[:, k].copy(),
                                                                             inv_diag, 1e-10, 500)
        np.testing.assert_allclose(x[:, k], alone, rtol=0, atol=1e-8 * max(np.abs(alone).max(), 1e-300))
        # the products round differently (one matrix product, not one per column): the counts may differ
        # by a step where the residual crosses the tolerance, by two with NumPy 1.24's OpenBLAS (0.3.21: 66
        # and 64 steps without the preconditioner, cond(M) ≈ 900 in 40 dimensions, where CG's step count in
        # floating point follows the rounding; the solutions still agree to 1e-8, as asserted above)
        assert abs(int(iterations[k]) - n_iter) <= 2 and converged[k] == alone_converged
        assert residual[k] <= 1e-10
    assert iterations[1] == iterations[2] == 0 and iterations[0] > 10


def test_a_solver_budget_stops_every_column_short():
    from linsep._core.krylov import conjugate_gradients_columns

    M = np.diag(np.arange(1.0, 31.0))
    x, iterations, residual, converged = conjugate_gradients_columns(lambda V: M @ V, np.ones((30, 2)),
                                                                    np.zeros((30, 2)), None, 1e-12, 3)
    assert list(iterations) == [3, 3] and not converged.any() and np.all(residual > 1e-12)


@pytest.mark.parametrize("jacobi", [False, True])
def test_lockstep_columns_that_all_start_running_and_stop_apart(jacobi):
    # every column running (updated in place), then one stopping before the others (copies of the rest)
    from linsep._core.krylov import conjugate_gradients, conjugate_gradients_columns

    rng = np.random.default_rng(1)
    A = rng.standard_normal((80, 30)) * np.logspace(0, 1, 30)
    M = A.T @ A
    inv_diag = 1.0 / np.diag(M) if jacobi else None
    # the first column an eigenvector of M D⁻¹ (D⁻¹ the preconditioner): its CG ends after one step
    preconditioned = M if inv_diag is None else M * inv_diag[None, :]
    values, vectors = np.linalg.eig(preconditioned)
    b = np.column_stack([np.real(vectors[:, np.argmax(np.real(values))]), rng.standard_normal(30),
                         rng.standard_normal(30)])
    x, iterations, residual, converged = conjugate_gradients_columns(lambda V: M @ V, b, np.zeros((30, 3)), inv_diag,
                                                                    1e-10, 500)
    assert converged.all() and iterations[0] <= 2 < iterations[1]
    for k in range(3):
        alone, n_iter, _, _ = conjugate_gradients(lambda v: M @ v, b[:, k], np.zeros(30), inv_diag, 1e-10, 500)
        np.testing.assert_allclose(x[:, k], alone, rtol=0, atol=1e-8 * np.abs(alone).max())
        assert abs(int(iterations[k]) - n_iter) <= 1
