"""The steps the matrix-free least-squares solves recycle (:mod:`linsep._krylov`).

The preconditioned CG itself (``_pcg``) is tested through :class:`linsep._linalg.IterativeLeastSquares`
in ``test_linalg.py``.
"""

import numpy as np
import scipy.sparse as sp

from linsep._krylov import RecycledSteps
from linsep._linalg import IterativeLeastSquares


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
