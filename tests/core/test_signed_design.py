"""The augmented, sign-normalised design and the shared exact column rescaling (:mod:`linsep._core.signed_design`).

The tests of the ``Design`` protocol (:mod:`linsep.designs`) are in ``test_designs.py``.
"""

import numpy as np
import pytest
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
