"""The float32 Ho–Kashyap pass (:mod:`linsep.solvers.ho_kashyap.rows`): float32 products, float64 margins and sums of blocks.

The merged validation count of either pass against the separate one is in ``test_hk_loops.py``.
"""

import numpy as np
import pytest

from linsep.solvers.ho_kashyap.rows import NARROW_BLOCK, _count_rows_narrow, _pass_merged_narrow
from linsep.solvers.ho_kashyap.loops import _count_rows, _pass_by_rows_parallel, _pass_merged

EMPTY_ROWS, EMPTY_LABELS = np.empty(0, dtype=np.int64), np.empty(0)


def _problem(n=5_003, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    W = rng.standard_normal(d + 1)
    B = rng.uniform(0.5, 2.0, n).astype(np.float32)
    return X, y, W, B


def _run(X, y, W, B, lo=0, hi=None):
    n = X.shape[0]
    hi = n if hi is None else hi
    E, B_next, g = np.zeros(n, np.float32), np.zeros(n, np.float32), np.empty(W.shape[0])
    stats, _ = _pass_merged(X, y, EMPTY_ROWS, EMPTY_LABELS, EMPTY_ROWS, W, B, 1.0, 0.5, 1e-3, np.empty(0), E, B_next,
                            g, lo, hi, 0, 0)
    return stats, E, B_next, g


def test_float32_pass_agrees_with_the_float64_pass_to_float32_rounding():
    X, y, W, B = _problem()
    narrow, wide = _run(X, y, W, B), _run(X.astype(np.float64), y, W, B)
    scale = np.abs(X).sum(axis=1).max() * np.abs(W).max()
    np.testing.assert_allclose(narrow[1], wide[1], rtol=0, atol=1e-5 * scale)  # E
    np.testing.assert_allclose(narrow[2], wide[2], rtol=0, atol=1e-5 * scale)  # B_{k+1}
    np.testing.assert_allclose(narrow[3], wide[3], rtol=1e-5, atol=1e-5 * np.abs(wide[3]).max())  # Yᵀ(B + 1)
    np.testing.assert_allclose(narrow[0][0], wide[0][0], rtol=1e-4)  # J


def test_float32_pass_is_the_one_float32_data_take():
    # _pass_merged hands float32 X to the float32 pass: the same bits as calling it directly
    X, y, W, B = _problem(n=1_000)
    n = X.shape[0]
    E, B_next, g = np.zeros(n, np.float32), np.zeros(n, np.float32), np.empty(W.shape[0])
    direct, _ = _pass_merged_narrow(X, y, EMPTY_ROWS, EMPTY_LABELS, EMPTY_ROWS, W, B, 1.0, 0.5, 1e-3, np.empty(0),
                                    E, B_next, g, 0, n, 0, 0)
    stats, E_via, B_via, g_via = _run(X, y, W, B)
    np.testing.assert_array_equal(g_via, g)
    np.testing.assert_array_equal(E_via, E)
    assert stats == direct


@pytest.mark.parametrize("hi", [NARROW_BLOCK - 1, NARROW_BLOCK, 3 * NARROW_BLOCK + 5])
def test_every_row_of_a_partial_block_reaches_g(hi):
    X, y, W, B = _problem(n=100)
    _, _, B_next, g = _run(X, y, W, B, 0, hi)
    t = y[:hi] * (B_next[:hi].astype(np.float64) + 1.0)
    expected = np.r_[X[:hi].astype(np.float64).T @ t, t.sum()]
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


@pytest.mark.numerics
def test_float32_pass_gives_the_same_bits_on_any_number_of_threads():
    X, y, W, B = _problem(n=120_000, d=8, seed=1)
    n = X.shape[0]
    results = []
    for threads in (1, 2):
        E, B_next, g = np.zeros(n, np.float32), np.zeros(n, np.float32), np.empty(W.shape[0])
        stats, _ = _pass_by_rows_parallel(X, y, EMPTY_ROWS, W, B, 1.0, 0.5, 1e-3, np.empty(0), E, B_next, g, threads,
                                          EMPTY_LABELS, EMPTY_ROWS)
        results.append((stats, E, g))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][2], results[1][2])


def test_held_out_count_of_float32_rows_uses_the_float32_scores():
    X, y, W, _ = _problem(n=2_000, seed=2)
    rows = np.arange(0, 2_000, 3)
    assert _count_rows(X, y[rows], rows, W, 0, rows.size) == _count_rows_narrow(X, y[rows], rows, W, 0, rows.size)
    scores = y[rows] * (X[rows].astype(np.float64) @ W[:-1] + W[-1])
    assert abs(_count_rows(X, y[rows], rows, W, 0, rows.size) - np.count_nonzero(scores <= 0)) <= 2
