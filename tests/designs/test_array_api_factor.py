"""The device factors of the array-API design (:class:`linsep.designs.array_api.DeviceFactor`), on array-api-strict.

Before issue 41's second part the W-step sent an explicit inverse
``(YᵀY + CĨ)⁻¹`` (float64) to the device and a rank-deficient ``Y`` without
``C`` was refused; these tests fail there (no :class:`DeviceFactor`).  The
factors run on array-api-strict's non-CPU ``device1`` (which refuses
``np.asarray``): they need no dispatch, only the namespace.
"""

import numpy as np
import pytest

from linsep._core.linalg import GramOnly, least_squares_solver

strict = pytest.importorskip("array_api_strict")
from linsep.designs.array_api import DeviceFactor  # noqa: E402

DEVICE = strict.Device("device1")


def on_device(values, dtype=strict.float64):
    return strict.asarray(np.asarray(values), dtype=dtype, device=DEVICE)


def host(array):
    return np.from_dlpack(array, device="cpu")


def design(n=60, d=4, seed=0, collinear=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if collinear:
        X[:, -1] = 2.0 * X[:, 0] - X[:, 1]  # rank d, p = d + 1 columns of [X, 1]: one null direction
    Y = np.c_[X, np.ones(n)] * np.where(rng.random(n) < 0.5, -1.0, 1.0)[:, None]
    return Y


@pytest.mark.parametrize("ridge", [0.0, 0.3])
def test_the_cholesky_factor_solves_as_the_host_factor(ridge):
    Y = design()
    gram = Y.T @ Y
    factor = DeviceFactor.least_squares(strict, on_device(gram), ridge, Y.shape[0])
    reference = least_squares_solver(GramOnly(Y.shape), None, ridge, gram=gram)
    assert factor.method == reference.method == "cholesky" and factor.dtype == strict.float64
    rng = np.random.default_rng(1)
    g, G = rng.normal(size=Y.shape[1]), rng.normal(size=(Y.shape[1], 3))
    # κ(YᵀY) is about 3 on these data: both solves agree to a few ε
    for rhs in (g, G):
        solved = factor.solve(on_device(rhs))
        assert solved.device == DEVICE and solved.dtype == strict.float64 and solved.shape == rhs.shape
        np.testing.assert_allclose(host(solved), reference.solve_normal(rhs), rtol=1e-12, atol=1e-12)


def test_a_rank_deficient_system_without_C_is_solved_on_its_range():
    Y = design(collinear=True)
    gram = Y.T @ Y
    factor = DeviceFactor.least_squares(strict, on_device(gram), 0.0, Y.shape[0])
    assert factor.method == "eigh"
    r = np.random.default_rng(2).normal(size=Y.shape[0])
    # the minimum-norm least-squares solution Y⁺r; the gram's κ on its range is ~10, the cut null direction
    # is rounding (ε λ_max): 1e-10
    W = host(factor.solve(on_device(Y.T @ r)))
    np.testing.assert_allclose(W, np.linalg.pinv(Y) @ r, rtol=1e-10, atol=1e-10)


def test_a_penalised_system_that_rounding_makes_singular_gets_its_pseudo_inverse():
    # C = 1e-14 on a singular gram: the Cholesky pivots fall below PIVOT_TOL, the eigenvectors of the scaled
    # system are kept above p ε λ_max, as the host factor does
    Y = design(collinear=True)
    gram = Y.T @ Y
    factor = DeviceFactor.least_squares(strict, on_device(gram), 1e-14, Y.shape[0])
    reference = least_squares_solver(GramOnly(Y.shape), None, 1e-14, gram=gram)
    assert factor.method == reference.method == "eigh"
    g = gram @ np.random.default_rng(3).normal(size=Y.shape[1])  # in the range
    # along the null direction either solve holds rounding over C (whether rounding keeps its eigenvalue above
    # the cut or not): what is determined is Y W, the same to 1e-8 of its size (κ on the range ~10)
    W, W_host = host(factor.solve(on_device(g))), reference.solve_normal(g)
    np.testing.assert_allclose(Y @ W, Y @ W_host, rtol=0, atol=1e-8 * np.abs(Y @ W_host).max())


def test_the_factor_is_float64_and_solves_an_ill_conditioned_system_to_float64_accuracy():
    """Whatever the data's type, the p × p factor is float64: float32 would hold the solve to κ·ε32, and the
    pivots' range only bounds κ from below, so no cheap test could say where that is enough."""
    Y = design()
    bad = Y.copy()
    bad[:, 1] = bad[:, 0] + 1e-3 * bad[:, 1]  # two columns 1e-3 apart: κ(YᵀY) ≈ 1e7, past float32's reach
    gram = bad.T @ bad
    assert np.linalg.cond(gram) > 1e6
    factor = DeviceFactor.least_squares(strict, on_device(gram), 0.0, Y.shape[0])
    assert factor.method == "cholesky" and factor.dtype == strict.float64
    g = gram @ np.random.default_rng(4).normal(size=Y.shape[1])
    solved = factor.solve(on_device(g))
    assert solved.dtype == strict.float64  # the solver's weights stay float64 (p numbers)
    # backward stable Cholesky: the residual is at the float64 rounding of gram's size (κ·ε64 ≈ 2e-9 forward)
    scale = np.abs(gram).max() * np.abs(host(solved)).max()
    np.testing.assert_allclose(gram @ host(solved), g, rtol=0, atol=1e-11 * scale)


def test_the_lsvm_factor_is_a_positive_definite_factor_on_the_device():
    Y = design()
    S = Y.T @ Y + np.eye(Y.shape[1]) / 2.0
    factor = DeviceFactor.positive_definite(strict, on_device(S), 0.5)
    assert factor.method == "cholesky"
    g = np.random.default_rng(5).normal(size=Y.shape[1])
    np.testing.assert_allclose(host(factor.solve(on_device(g))), np.linalg.solve(S, g), rtol=1e-12)
    # indefinite by rounding (here: outright), the spectrum is floored at 1/C as PositiveDefiniteFactor does
    M = np.diag([2.0, 1.0, -1e-3])
    floored = DeviceFactor.positive_definite(strict, on_device(M), 0.5)
    assert floored.method == "eigh"
    np.testing.assert_allclose(host(floored.solve(on_device(np.ones(3)))), [0.5, 1.0, 2.0], rtol=1e-12)
