"""The independent checks of separability certificates (:mod:`linsep._core.certificates`)."""

import tracemalloc

import numpy as np
from problems import duplicated_csr, exact_proof_residual, wide_margin_data

from linsep._core.certificates import CERTIFICATE_RTOL, is_proof, rounding_bound, side_tolerance


def test_duplicate_entries_make_no_false_proof():
    from linsep._core.certificates import is_proof, proof_residuals

    X, dense = duplicated_csr()
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    y = np.array([1.0, -1.0])
    u = np.array([1.0, 1.0])  # Yᵀu = (3, 0, 0): not a proof (x_0 = 3 > 0 = x_1 separates)
    assert not is_proof(dense, y, u)
    assert not is_proof(X, y, u)
    np.testing.assert_allclose(proof_residuals(X, y, u), proof_residuals(dense, y, u))
    for got, want in zip((X.data, X.indices, X.indptr), before):  # the caller's matrix is untouched
        np.testing.assert_array_equal(got, want)


def test_the_old_false_proof_is_not_a_proof():
    # What Ho–Kashyap returned for X·1e-200 before the rescaling: u = -E on every point, which
    # the old residual (against the largest column, the bias) accepted.
    X, y = wide_margin_data()
    signs = np.where(y == 1, 1.0, -1.0)
    u = np.ones(len(y))
    assert not is_proof(X * 1e-200, signs, u)
    assert exact_proof_residual(X * 1e-200, signs.astype(int), u) > CERTIFICATE_RTOL


def test_side_tolerance_is_the_rounding_bound_of_the_precision_the_score_is_computed_in():
    # float32 data and weights: a float32 decision_function rounds at u = 2^-24, and a point whose float32
    # score is rounding noise must not count as strictly on its side; the float64 bound would let it.
    X = np.array([[0.1, 0.2], [1.0, 1.0]])
    w, b = np.array([1.0, 1.0]), -0.3
    magnitude = np.abs(X) @ np.abs(w) + abs(b)
    np.testing.assert_allclose(side_tolerance(X, w, b), rounding_bound(3) * magnitude, rtol=1e-12)
    X32, w32 = X.astype(np.float32), w.astype(np.float32)
    np.testing.assert_allclose(side_tolerance(X32, w32, np.float32(b)),
                               rounding_bound(3, np.float32) * magnitude, rtol=1e-6)
    assert rounding_bound(3, np.float32) > 1e8 * rounding_bound(3)
    # float32 data with float64 weights are scored in float64
    np.testing.assert_allclose(side_tolerance(X32, w, b), rounding_bound(3) * magnitude, rtol=1e-6)


def test_side_tolerance_copies_no_float64_x():
    # |X| w by blocks of rows: a large float32 X is never converted whole (the verdict of a large fit ran
    # out of memory budget that way: 2 X.nbytes more)
    X = np.random.default_rng(0).normal(size=(200_000, 50)).astype(np.float32)
    w = np.ones(50, dtype=np.float32)
    tracemalloc.start()
    try:
        tau = side_tolerance(X, w, 0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(tau, rounding_bound(51, np.float32) * (np.abs(X.astype(np.float64)).sum(axis=1) + 0.5),
                               rtol=1e-6)
    assert peak < 0.5 * X.nbytes, peak / X.nbytes
