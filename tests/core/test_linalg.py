"""Least-squares solves (:mod:`linsep._core.linalg`): inexact W-steps, CG against the direct factorisation, pivoted Cholesky.

Wide ``Y`` (``d + 1`` above the direct solver's 2000 columns) goes to
:class:`linsep._core.linalg.IterativeLeastSquares`; inside an iteration its solves
may stop at a fraction ``η`` of the residual they start from
(``forcing``, forced here with the solvers' ``plan={"cg_forcing": η}``), and
the returned weights are solved again in full.  These problems are small in
``N`` so that the direct factorisation (the reference) stays cheap.

Further down, small problems take the iterative path by a lowered threshold
(the ``iterative`` fixture of ``conftest.py``, or ``solver_limits``) and its
answers are compared with the direct factorisation on the same data.  A CG
solve stops at the relative normal-equations residual ``1e-10``; on these
well-conditioned small problems (condition numbers below ``1e3``) that bounds
the weights' relative error by about ``1e-7``, so ``1e-6`` is asserted.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg
from problems import random_problem, sparse_problem
from sklearn.exceptions import ConvergenceWarning

import linsep._core.linalg as linalg
from linsep import make_classifier
from linsep._core.certificates import FIT_PROOF_RTOL, design_proof_residuals
from linsep._core.signed_design import sign_normalized
from linsep._core.linalg import (CG_FORCING, IterativeLeastSquares, LeastSquaresFactor, iteration_forcing,
                            least_squares_solver, solver_limits)
from linsep.kernels import kernel_matrix
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.lsvm.solver import lagrangian_svm
from linsep.solvers.mse import mse, mse_linear_machine

WIDE = 2100  # features: d + 1 above the direct solver's widest system


def wide_problem(n, d=WIDE, density=0.01, seed=0):
    """Sparse non-negative rows (text-like), labels from a linear rule; ``(X, y ±1, Y)`` with ``Y`` sign-normalised."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X = (X + sp.eye(n, d, format="csr")).tocsr()  # every row has an entry
    score = X @ rng.standard_normal(d)
    y = np.where(score > np.median(score), 1.0, -1.0)
    return X, y, sign_normalized(X, y)


# --- inexact W-steps: the forcing rule -------------------------------------------------------------------


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


def _tracked_bound(Y, W, tracked):
    """The bound on tracked fitted values: ``FITTED_RTOL ‖tracked‖₂`` (the solver's check), plus the rounding of the
    reference ``Y @ W``, ``k eps ‖Y‖_F ‖W‖₂`` (``k`` stored entries in a row at most; ``‖|Y| |W|‖₂ <= ‖Y‖_F ‖W‖₂``)."""
    k = Y.getnnz(axis=1).max()
    return linalg.FITTED_RTOL * np.linalg.norm(tracked) + k * linalg._EPS * sp.linalg.norm(Y) * np.linalg.norm(W)


@pytest.mark.numerics
@pytest.mark.parametrize("weighted", [False, True])
def test_tracked_fitted_values_are_the_products_of_the_returned_solutions(weighted):
    # Y W carried through the recycled corrections and CG's own products Y d, over more solves than the
    # recursive residual's refresh (16); a solve from a given start, or any other W, gives None.  Within the
    # solver's bound (_tracked_bound; this was 1e-12 of max |Y W| before the check, a figure of one machine's
    # rounding: measured here 1.2e-15 of ‖Y W‖₂ at most on the Haswell, Zen, SkylakeX, Sandybridge and Prescott
    # kernels).
    _, _, Y = wide_problem(300)
    D = np.random.default_rng(6).uniform(0.2, 3.0, Y.shape[0]) if weighted else None
    solver = IterativeLeastSquares(Y, D, 0.5, forcing=0.3, track_fitted=True)
    rng = np.random.default_rng(7)
    target, direction = 1.0 + rng.random(Y.shape[0]), rng.standard_normal(Y.shape[0])
    for k in range(40):
        W = solver.solve(target + 0.8**k * direction)
        tracked = solver.fitted_values(W)
        assert np.linalg.norm(tracked - Y @ W) <= _tracked_bound(Y, W, tracked)
        assert solver.fitted_values(W.copy()) is None  # only the returned array itself
    W = solver.solve(target, tol=solver.tol)  # a full solve from the last solution: tracked as well
    tracked = solver.fitted_values(W)
    assert np.linalg.norm(tracked - Y @ W) <= _tracked_bound(Y, W, tracked)
    W = solver.solve_normal(np.asarray(Y.T @ target).ravel(), x0=np.zeros(Y.shape[1]))  # another start: not
    assert solver.fitted_values(W) is None
    untracked = IterativeLeastSquares(Y, D, 0.5, forcing=0.3)
    assert untracked.fitted_values(untracked.solve(target)) is None


@pytest.mark.numerics
def test_tracked_fitted_values_that_drifted_are_replaced_by_the_product():
    # The kept steps' images Y s_j carry the tracked values' rounding, which the recycled correction's
    # coefficients multiply: here 1e-7 of ‖Y s_j‖ is added to each, as if they had drifted.  The check after
    # the next solve refuses the tracked values and forms Y W, whose steps are then kept clean.
    _, _, Y = wide_problem(300)
    solver = IterativeLeastSquares(Y, None, 0.5, forcing=0.3, track_fitted=True)
    rng = np.random.default_rng(8)
    target, direction = 1.0 + rng.random(Y.shape[0]), rng.standard_normal(Y.shape[0])
    for k in range(6):
        W = solver.solve(target + 0.8**k * direction)
    assert solver.fitted_products == 0  # no drift to speak of
    kept = solver._recycled._AV[:solver._recycled._count]
    kept += 1e-7 * np.abs(kept).max() * rng.standard_normal(kept.shape)
    W = solver.solve(target + 0.8**6 * direction)
    assert solver.fitted_products == 1
    tracked = solver.fitted_values(W)
    np.testing.assert_array_equal(tracked, Y @ W)  # the product itself
    for k in range(7, 20):  # the corrupted steps leave the ring; the check refuses what they still spoil
        W = solver.solve(target + 0.8**k * direction)
        tracked = solver.fitted_values(W)
        assert np.linalg.norm(tracked - Y @ W) <= _tracked_bound(Y, W, tracked)


@pytest.mark.numerics
def test_fitted_check_takes_the_product_and_refuses_an_error_of_its_bound():
    # Freivalds' check (linsep._core.linalg._FittedCheck): exact values pass; an error of FITTED_RTOL ‖f‖₂,
    # spread over every entry or in one entry alone, does not (it would pass with probability 1.6e-6; the
    # vectors come from a fixed seed); an error at the rounding level passes.
    _, _, Y = wide_problem(300)
    Y = sp.csr_matrix(Y)
    x = np.random.default_rng(9).standard_normal(Y.shape[1])
    f = Y @ x
    check = linalg._FittedCheck(Y.T.tocsr(), Y.shape[0], sp.linalg.norm(Y))
    assert check.accepts(f, x)
    rng = np.random.default_rng(10)
    spread = rng.standard_normal(f.shape[0])
    single = np.zeros(f.shape[0])
    single[17] = 1.0
    for error in (spread, single):
        error *= np.linalg.norm(f) / np.linalg.norm(error)
        assert not check.accepts(f + linalg.FITTED_RTOL * error, x)
        assert check.accepts(f + 1e-14 * error, x)
    assert not check.accepts(np.full_like(f, np.nan), x)


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
    exact = ho_kashyap(Y, plan={"cg_forcing": 0.0}, **params)
    inexact = ho_kashyap(Y, plan={"cg_forcing": 0.1}, **params)
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
    full = lagrangian_svm(X, y, C=1.0, tol=1e-8, plan={"cg_forcing": 0.0})
    fast = lagrangian_svm(X, y, C=1.0, tol=1e-8, plan={"cg_forcing": 0.1})
    assert full.status == fast.status == "converged"
    assert fast.extra["cg_iterations"] < full.extra["cg_iterations"]
    np.testing.assert_allclose(fast.weights, full.weights, rtol=0, atol=1e-5 * np.abs(full.weights).max())


# --- the matrix-free solver: CG against the direct factorisation, and unconverged solves reported ------


@pytest.mark.parametrize("n, d", [(150, 40), (30, 80)])  # full column rank / d + 1 > N
@pytest.mark.parametrize("ridge", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_iterative_matches_direct(n, d, ridge, weighted):
    X, y = sparse_problem(n, d)
    X = sp.hstack([X, 2.0 * X[:, [4]]], format="csr")  # collinear columns: rank-deficient for C = 0
    Y = sign_normalized(sp.csr_matrix(X), np.where(y == 1, 1.0, -1.0))
    rng = np.random.default_rng(1)
    D = rng.uniform(0.1, 2.0, n) if weighted else None
    r = rng.uniform(0.5, 2.0, n)
    direct = LeastSquaresFactor(Y, D, ridge)
    solver = IterativeLeastSquares(Y, D, ridge)
    W = solver.solve(r)
    assert solver.converged and solver.residual <= linalg.CG_RTOL
    np.testing.assert_allclose(W, direct.solve(r), rtol=0, atol=1e-6 * np.abs(W).max())
    # preconditioned (minimum M-norm) solves have the same fitted values; minimum_norm_part maps them back
    fast = IterativeLeastSquares(Y, D, ridge, minimum_norm=False)
    W_fast = fast.solve(r)
    np.testing.assert_allclose(Y @ W_fast, Y @ W, atol=1e-6 * np.abs(Y @ W).max())
    if ridge == 0:
        np.testing.assert_allclose(fast.minimum_norm_part(W_fast), W, atol=1e-6 * np.abs(W).max())


def test_minimum_norm_on_rank_deficient_data():
    # d + 1 > N: the answer is Y⁺r, orthogonal to the null space of Y
    X, y = sparse_problem(20, 60, seed=3)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    W = IterativeLeastSquares(Y).solve(np.ones(20))
    np.testing.assert_allclose(W, np.linalg.pinv(Y.toarray()) @ np.ones(20), atol=1e-8)


def test_warm_start_and_reweighting_reuse_the_previous_solution():
    X, y = sparse_problem(200, 50)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    solver = IterativeLeastSquares(Y)  # C = 0: D = 2I below has the same solution
    b = np.ones(200)
    solver.solve(b)
    first = solver.iterations
    solver.solve(b)  # the same right-hand side: the warm start is the answer already
    assert solver.iterations == first
    solver.solve(b * (1 + 1e-6 * np.arange(200) / 200))
    assert solver.iterations - first < first  # from 1e-6 to 1e-10, not from 1
    solver.solve(b)
    reweighted = solver.reweighted(np.full(200, 2.0))  # D = 2I: the same solution, warm-started from it
    reweighted.solve(b)
    assert reweighted.iterations == solver.iterations


def test_factory_threshold():
    X, y = sparse_problem(50, 30)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    assert isinstance(least_squares_solver(Y), LeastSquaresFactor)
    with solver_limits(direct_max_columns=30):
        assert isinstance(least_squares_solver(Y), IterativeLeastSquares)
        assert isinstance(least_squares_solver(Y, gram=(Y.T @ Y).toarray()), LeastSquaresFactor)


def test_width_alone_decides_the_iterative_path():
    # The widest direct system's Gram matrix fits the dense budget; the budget governs only the SVD copy.
    assert 8 * linalg._DIRECT_MAX_COLUMNS**2 <= linalg._DENSE_BUDGET_BYTES
    with solver_limits(dense_budget_bytes=8):
        assert not linalg.too_wide_for_direct(linalg._DIRECT_MAX_COLUMNS)
        assert linalg.too_wide_for_direct(linalg._DIRECT_MAX_COLUMNS + 1)


def test_no_dense_svd_copy_of_large_sparse_data():
    # C = 0, collinear columns, few of them: the direct path's SVD would densify Y (8·N·p bytes); beyond
    # the budget (but with a Gram matrix inside it), CG gives the same minimum-norm answer
    X, y = sparse_problem(200, 30, seed=3)
    X = sp.hstack([X, 2.0 * X[:, [4]]], format="csr")
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    direct = least_squares_solver(Y)
    assert direct.method == "svd"
    with solver_limits(dense_budget_bytes=8 * 32**2):
        solver = least_squares_solver(Y)
    assert solver.method == "cg"
    np.testing.assert_allclose(solver.solve(np.ones(200)), direct.solve(np.ones(200)), atol=1e-8)


def test_unconverged_solve_is_reported(iterative):
    X, y = sparse_problem(100, 40)
    with solver_limits(cg_max_iter=1):
        result = mse(sign_normalized(X, np.where(y == 1, 1.0, -1.0)))
        assert result.extra["factorization"] == "cg" and result.status == "max_iter"
        with pytest.warns(ConvergenceWarning):
            make_classifier("mse").fit(X, y)


def test_unconverged_column_of_a_multi_right_hand_side_is_reported(iterative):
    X, y = sparse_problem(100, 40)
    A = sign_normalized(X, np.ones(100))
    with solver_limits(cg_max_iter=1):
        solver = least_squares_solver(A)
    solver.solve(np.column_stack([np.ones(100), np.zeros(100)]))  # the last column solves at once
    assert not solver.converged

    # The multi-class linear machine: its first solve, all classes' columns at once, stops short (one CG iteration).
    labels = np.arange(100) % 3
    with solver_limits(first_solve_max_iter=1):
        with pytest.warns(ConvergenceWarning):
            model = make_classifier("mse").fit(X, labels)
        machine = mse_linear_machine(sp.hstack([X, np.ones((100, 1))]).tocsr(), labels)
    assert list(model.status_) == ["max_iter"] * 3
    assert machine.status == "max_iter" and machine.extra["factorization"] == "cg"
    assert machine.extra["cg_solves"] == 3  # one CG solve per class


def test_unconverged_minimum_norm_projection_is_reported(iterative):
    X, y = sparse_problem(100, 20, noise=0.15)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    reference = ho_kashyap(Y, tol=1e-3)
    assert reference.status == "converged"
    # the map's CG (linsep._core.krylov.minimum_norm_map) stops after one iteration; the W-steps' are untouched;
    # peeling_max_free=0: the Krylov map (this tall Y would peel: no solve to cut short)
    with solver_limits(peeling_max_free=0, map_max_iter=1):
        result = ho_kashyap(Y, tol=1e-3)
    assert result.extra["minimum_norm_map"] == "cg"
    assert result.status == "max_iter"
    # the weights are kept unprojected: their fitted values are the iteration's own
    np.testing.assert_allclose(Y @ result.weights, Y @ reference.weights, atol=1e-8)


def test_irls_system_that_turns_iterative_is_checked():
    # A reweighted system that Cholesky refuses and whose dense SVD would be too large goes to CG
    # in mid-fit; that factor's unconverged solves must still be reported.  direct_weighted=False sends
    # every weighted (reweighted) system to CG, as such a refusal does; the first, unweighted one stays direct.
    X, y = sparse_problem(100, 20, noise=0.15)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    with solver_limits(direct_weighted=False):
        assert ho_kashyap(Y, C=0.1, loss="absolute").status == "converged"
        with solver_limits(cg_max_iter=1):
            result = ho_kashyap(Y, C=0.1, loss="absolute")
    assert result.extra["factorization"] == "cg" and result.status == "max_iter"


def test_lsvm_reports_unconverged_cg_solves(iterative):
    X, y = sparse_problem(100, 20, noise=0.15)
    signs = np.where(y == 1, 1.0, -1.0)
    assert lagrangian_svm(X, signs).status == "converged"
    with solver_limits(cg_max_iter=1):
        result = lagrangian_svm(X, signs)
        assert result.extra["factorization"] == "cg" and result.status == "max_iter"
        with pytest.warns(ConvergenceWarning):
            make_classifier("lsvm").fit(X, y)


# --- the direct factorisation ----------------------------------------------------------------------


def test_overflowing_irls_system_raises_instead_of_hanging():
    """irls_floor=0 lets the IRLS weights reach 1/tiny: the factorisation refuses the overflowed system."""
    from linsep._core.linalg import LeastSquaresFactor

    X, y = random_problem(21, n=40, d=3)
    Y = sign_normalized(X, y)
    with pytest.raises(FloatingPointError, match="overflowed"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        LeastSquaresFactor(Y, np.full(40, 1e307), 1e-6)


# --- the pivoted Cholesky factor of a kernel matrix (the kernel estimators' truncated map) -----------


@pytest.mark.parametrize("tol", [0.0, 0.01, 0.3])
def test_pivoted_cholesky_bound_and_nystrom_identity(tol):
    from linsep._core.linalg import pivoted_cholesky

    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 3))
    K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    F, P, d = pivoted_cholesky(lambda idx: K[:, idx], K.diagonal(), tol=tol, block_size=16)
    bound = max(tol, 150 * np.finfo(float).eps) * K.diagonal().max()
    assert d.max() <= bound and len(set(P.tolist())) == len(P)
    # K − FFᵀ is the PSD Schur complement: |entries| <= sqrt(d_i d_j), diagonal = d
    np.testing.assert_allclose(np.diag(K - F @ F.T), d, atol=1e-10)
    assert np.all(np.abs(K - F @ F.T) <= np.sqrt(np.outer(d, d)) + 1e-10)
    # F Fᵀ is the Nyström approximation on the pivots (oracle: a direct solve)
    np.testing.assert_allclose(F @ F.T, K[:, P] @ np.linalg.solve(K[np.ix_(P, P)], K[P]), atol=1e-8)
    if tol == 0.3:
        assert len(P) < 60  # truncated


@pytest.mark.parametrize("tol", [0.0, 0.3])
def test_pivots_follow_the_tracked_residual_not_the_last_bits_of_recomputed_columns(tol):
    """An RBF kernel's residuals all tie at one at the start: the columns' rounding must not break the tie.

    Columns computed by other arithmetic (a device, another BLAS) differ in their last bits, the entries
    ``k(x_i, x_i)`` included; here every such entry is one unit in the last place below one except for
    sample 140's (a candidate of the first block, not its first).  Choosing by the recomputed diagonal
    took it first, and a different pivot set after it (the device kernel map fitted another model than
    the NumPy fit, issue 41); from the tracked residual (exactly one) the first candidate is taken, as
    with exact columns.
    """
    from linsep._core.linalg import pivoted_cholesky

    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 3))
    K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    assert np.all(K.diagonal() == 1.0)
    rounded = K.copy()
    rounded[np.diag_indices_from(rounded)] = np.nextafter(1.0, 0.0)
    rounded[140, 140] = 1.0
    exact = pivoted_cholesky(lambda idx: K[:, idx], K.diagonal(), tol=tol, block_size=16)
    perturbed = pivoted_cholesky(lambda idx: rounded[:, idx], K.diagonal(), tol=tol, block_size=16)
    np.testing.assert_array_equal(perturbed[1], exact[1])  # the same pivots in the same order
    np.testing.assert_allclose(perturbed[0], exact[0], atol=1e-12)  # F: rounding apart (entries <= 1)


def test_singular_eigh_gives_the_minimum_norm_solution_from_the_gram_matrix_alone():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    Y = np.c_[X, X[:, 0] - 2 * X[:, 2], np.ones(200)]  # rank 5 of 6 columns
    r = rng.normal(size=200)
    expected = np.linalg.lstsq(Y, r, rcond=None)[0]  # the minimum-norm least-squares solution
    factor = LeastSquaresFactor(Y, gram=Y.T @ Y, singular="eigh")
    assert (factor.method, factor.rank) == ("eigh", 5)
    # from YᵀY the error is eps cond(Y)² (cond(Y) about 5 on these columns), relative to the solution
    np.testing.assert_allclose(factor.solve(r), expected, atol=1e-11 * np.abs(expected).max())
    assert LeastSquaresFactor(Y).method == "svd"  # the default: the QR and SVD of Y itself
    with pytest.raises(ValueError, match="singular must be"):
        LeastSquaresFactor(Y, singular="qr")


@pytest.mark.parametrize("ridge", [0.0, 1e-12])
def test_spectral_factor_applies_the_eigh_solve_as_one_factor(ridge):
    # M Mᵀ g = S V Λ⁻¹ Vᵀ S g (solve_normal), the form the compiled Ho–Kashyap loop applies; ridge 1e-12 on a
    # duplicated column fails the Cholesky pivot test (ratio about 1e-7), so the penalised system takes eigh too
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    Y = np.c_[X, X[:, :1], np.ones(200)]
    factor = LeastSquaresFactor(Y, ridge=ridge, singular="eigh")
    assert factor.method == "eigh"
    M = factor.spectral_factor
    assert M.shape == (5, factor.rank)
    g = Y.T @ rng.normal(size=200)
    expected = factor.solve_normal(g)
    # both regroup the same products: they differ by rounding, eps times the condition of the kept eigenvalues
    # (λ_max / λ_min = cond(M)², about 2 without the ridge, 1e14 with it, on the direction x_0 − x_3)
    s = np.linalg.svd(M, compute_uv=False)
    bound = 10 * np.finfo(float).eps * (s.max() / s.min()) ** 2
    np.testing.assert_allclose(M @ (M.T @ g), expected, rtol=0, atol=bound * np.abs(expected).max())
    # the fitted values do not see that direction: they agree to rounding either way
    np.testing.assert_allclose(Y @ (M @ (M.T @ g)), Y @ expected, rtol=0, atol=1e-12 * np.abs(Y @ expected).max())
    with pytest.raises(AttributeError, match="no spectral factor"):
        LeastSquaresFactor(np.c_[X, np.ones(200)]).spectral_factor


@pytest.mark.parametrize("ridge, rows", [(1.0, 40), (0.0, 40), (0.0, 3)], ids=["cholesky", "cholesky-no-ridge", "eigh"])
def test_the_bound_normal_solver_is_solve_normal(ridge, rows):
    # A dask worker's chain solves every iterate with normal_solver(): on the Cholesky path LAPACK's potrs with the
    # factor bound, the call solve_normal makes, so the same bits; elsewhere solve_normal itself (info 0).
    rng = np.random.default_rng(5)
    Y = np.hstack([rng.standard_normal((rows, 4)), np.ones((rows, 1))])
    factor = LeastSquaresFactor(Y, ridge=ridge, singular="eigh")
    g = rng.standard_normal(5)
    assert factor.method == ("eigh" if rows < 5 else "cholesky")
    solution, info = factor.normal_solver()(g)
    assert info == 0 and np.array_equal(solution, factor.solve_normal(g))
