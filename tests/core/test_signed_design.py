"""The augmented, sign-normalised design and the shared exact column rescaling (:mod:`linsep._core.signed_design`).

The tests of the ``Design`` protocol (:mod:`linsep.designs`) are in ``test_designs.py``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from problems import wide_margin_data

from linsep import make_classifier
from linsep._core.signed_design import column_shifts, scale_columns, unscale_coef


def test_in_range_data_are_neither_copied_nor_rescaled():
    X, _ = wide_margin_data()
    assert column_shifts(X) is None
    assert column_shifts(X.astype(np.float32)) is None
    assert column_shifts(np.zeros((3, 2))) is None


@pytest.mark.parametrize("dtype,p", [(np.float64, 53), (np.float32, 24)])
def test_rescaling_is_exact_and_keeps_the_dtype(dtype, p):
    X, _ = wide_margin_data()
    X = X.astype(dtype)
    for k in (p + 1, -(p + 3)):
        Xk = np.ldexp(X, k).astype(dtype)
        shifts = column_shifts(Xk)
        assert shifts is not None
        scaled = scale_columns(Xk, shifts)
        assert scaled.dtype == dtype
        assert np.array_equal(np.ldexp(scaled, -shifts.astype(np.int32)), Xk)  # no bit lost
        largest = np.abs(scaled).max(axis=0)
        assert np.all((largest >= 0.5) & (largest < 1))


def test_a_column_too_wide_to_rescale_exactly_is_refused():
    X = np.array([[1e300, 1.0], [1e-40, 2.0], [-1e300, 3.0]])  # 2^-997 would make 1e-40 subnormal
    with pytest.raises(ValueError, match="orders of magnitude"):
        column_shifts(X)
    with pytest.raises(ValueError, match="orders of magnitude"):
        make_classifier("hk").fit(X, [0, 1, 0])


def test_a_column_scaled_down_keeps_its_small_entries_normal():
    X = np.array([[1e300, 1.0], [1e-20, 2.0], [-1e300, 3.0]])  # a shift of -955, not -997
    shifts = column_shifts(X)
    scaled = scale_columns(X, shifts)
    assert abs(scaled[1, 0]) >= np.finfo(float).tiny
    assert np.array_equal(np.ldexp(scaled, -shifts.astype(np.int32)), X)


def test_unrepresentable_weights_are_refused():
    with pytest.raises(ValueError, match="overflow"), np.errstate(over="ignore"):
        unscale_coef(np.array([[1e300, 1.0]]), np.array([1000, 0]))


@pytest.mark.parametrize("rows", [None, np.array([0, 3, 4, 9])])
def test_sparse_signed_rows_are_the_formed_signed_matrix(rows):
    from linsep._core.signed_design import SparseSignedRows, sign_normalized

    rng = np.random.default_rng(0)
    X = sp.random(10, 6, density=0.4, random_state=0, format="csr", dtype=np.float32)
    n = 10 if rows is None else rows.size
    y = rng.choice([-1.0, 1.0], size=n)
    Y = sign_normalized(X if rows is None else X[rows], y).toarray()
    view = SparseSignedRows(X, y, rows)
    W, u, D = rng.standard_normal(7), rng.standard_normal(n), rng.uniform(0.5, 2.0, n)
    assert view.shape == Y.shape and view.rows is None
    np.testing.assert_allclose(view @ W, Y @ W, rtol=1e-12)
    np.testing.assert_allclose(view @ np.column_stack([W, -W]), Y @ np.column_stack([W, -W]), rtol=1e-12)
    np.testing.assert_allclose(view.T @ u, Y.T @ u, rtol=1e-12)
    np.testing.assert_allclose(view.gram(), Y.T @ Y, rtol=1e-12)
    np.testing.assert_allclose(view.gram(D), Y.T @ (D[:, None] * Y), rtol=1e-12)
