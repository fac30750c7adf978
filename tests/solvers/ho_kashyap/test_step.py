"""The Ho–Kashyap step in one home (:mod:`linsep.solvers.ho_kashyap.step`) and its two compiled homes.

The margin update :math:`B_{k+1} = B_k + 2\\mu \\max(E_k, 0)` is written three times: for NumPy-like namespaces
(:func:`~linsep.solvers.ho_kashyap.step.next_margin`), in the compiled pass by columns (``loops._pass_by_columns``)
and in the compiled row update (``rows._margin_update``, which the float64 and the float32 passes by rows share).
These tests pin the three equal on the same inputs.
"""

import numpy as np
import pytest

from linsep.designs import as_design
from linsep.solvers.ho_kashyap.loops import _pass_by_columns, _pass_merged
from linsep.solvers.ho_kashyap.rows import _pass_merged_narrow
from linsep.solvers.ho_kashyap.step import (NamespacePass, block_pass, hk_iterates, hk_pass, hk_step, next_margin,
                                           pass_summary)

EMPTY_ROWS, EMPTY_LABELS = np.empty(0, dtype=np.int64), np.empty(0)
U64, U32 = np.finfo(np.float64).eps / 2, np.finfo(np.float32).eps / 2  # unit roundoffs


def _problem(n=3_001, d=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    Y = y[:, None] * np.c_[X, np.ones(n)]
    W = rng.standard_normal(d + 1)
    B = rng.uniform(0.5, 2.0, n)
    return X, y, Y, W, B


def _by_rows(X, y, W, B, offset, two_mu, tol):
    n = X.shape[0]
    E, B_next, g = np.zeros(n, B.dtype), np.zeros(n, B.dtype), np.empty(W.shape[0])
    pass_of = _pass_merged_narrow if X.dtype == np.float32 else _pass_merged
    pass_of(X, y, EMPTY_ROWS, EMPTY_LABELS, EMPTY_ROWS, W, B, offset, two_mu, tol, np.empty(0), E, B_next, g, 0, n,
            0, 0)
    return E, B_next


@pytest.mark.parametrize("offset", [0.0, 1.0])
def test_the_three_margin_updates_agree(offset):
    X, y, Y, W, B = _problem()
    two_mu, tol = 0.8, 1e-6
    # The namespace step
    state = NamespacePass(as_design(Y), W, B, None, offset=offset, two_mu=two_mu, tol=tol)
    assert np.any(state.E > 0) and np.any(state.E < 0)  # both branches of max(E, 0) are exercised
    # The compiled pass by columns (loops.py) and by rows (rows.py's update, float64 products)
    n, p = Y.shape
    E_col, B_col, Z = np.empty(n), np.empty(n), np.empty(n)
    _pass_by_columns(np.ascontiguousarray(Y.T), W, B, offset, two_mu, tol, np.empty(0), Z, E_col, B_col, np.empty(p))
    E_row, B_row = _by_rows(X, y, W, B, offset, two_mu, tol)
    # Each computes Y W in its own order: |ΔZ_i| <= γ_p (|Y| |W|)_i with γ_p = p u / (1 − p u), and the compiled
    # update may contract 2μ max(e, 0) + b into one rounding (fused multiply-add) where NumPy rounds twice:
    # |ΔB_i| <= 2μ |ΔZ_i| + 2u (|B_i| + 2μ max(E_i, 0)).
    gamma = p * U64 / (1 - p * U64)
    score_bound = gamma * (np.abs(Y) @ np.abs(W))
    update_bound = 2 * two_mu * score_bound + 2 * U64 * (B + two_mu * np.maximum(state.E, 0))
    for E, B_next in ((E_col, B_col), (E_row, B_row)):
        assert np.all(np.abs(E - state.E) <= 2 * score_bound)
        assert np.all(np.abs(B_next - state.B_next) <= update_bound)
    # On the errors each pass stored, each pass's margin is the namespace rule's to its own roundings.
    for E, B_next in ((E_col, B_col), (E_row, B_row)):
        reference = next_margin(B, E, two_mu)
        assert np.all(np.abs(B_next - reference) <= 2 * U64 * (B + two_mu * np.maximum(E, 0)))


def test_the_float32_row_pass_applies_the_same_update():
    X, y, _, W, B = _problem(seed=1)
    X, B = X.astype(np.float32), B.astype(np.float32)
    two_mu, offset = 0.8, 1.0
    E, B_next = _by_rows(X, y, W, B, offset, two_mu, 1e-6)
    assert np.any(E > 0) and np.any(E < 0)
    # The pass forms e in float64, stores E = fl32(e) and B_next = fl32(b + 2μ max(e, 0)); the reference, from
    # the stored E in float64: |fl32(e) − e| <= u32 |e| and one float32 rounding of B_next, so
    # |ΔB_i| <= u32 (|B_next,i| + 2μ |E_i|) + 4 u64 (|B_i| + 2μ |E_i|).
    reference = next_margin(B.astype(np.float64), E.astype(np.float64), two_mu)
    bound = U32 * (np.abs(reference) + two_mu * np.abs(E)) + 4 * U64 * (B + two_mu * np.abs(E))
    assert np.all(np.abs(B_next - reference) <= bound)


def test_next_margin_is_the_rule_written_out():
    B, E = np.array([1.0, 2.0, 0.5, 1.5]), np.array([-1.0, 0.25, 0.0, 3.0])
    # μ (E + |E|) with μ = 0.4: exact in binary for these numbers
    np.testing.assert_array_equal(next_margin(B, E, 0.8), B + 0.4 * (E + np.abs(E)))
    assert not np.shares_memory(next_margin(B, E, 0.8), B)  # the caller's margin is never updated in place


def test_hk_iterates_are_hk_step_repeated():
    _, _, Y, W, B = _problem(n=200, d=3, seed=2)
    design = as_design(Y)
    factor = design.least_squares_solver(0.5)
    options = dict(offset=1.0, two_mu=0.8, tol=1e-6, update="margin", irls=False, validation=None)
    state = hk_pass(design, W, B, None, **options)
    iterates = hk_iterates(design, state, W, B, None, factor, update="margin", learning_rate=0.4, irls_floor=1e-6,
                           pass_options=options)
    by_hand = (W, B, None, factor, state)
    for _ in range(3):
        W_it, B_it, _, _, s_it = next(iterates)
        by_hand = hk_step(by_hand[4], by_hand[0], None, factor, update="margin", learning_rate=0.4, irls_floor=1e-6,
                          irls=False, next_pass=lambda W, B, D, fitted: hk_pass(design, W, B, D, **options))
        np.testing.assert_array_equal(W_it, by_hand[0])
        np.testing.assert_array_equal(B_it, by_hand[1])
        assert s_it.J == by_hand[4].J
    # the step written out: W_{k+1} = (YᵀY + CĨ)⁻¹ Yᵀ (B_{k+1} + 1)
    G = Y.T @ Y + np.diag([0.5] * (Y.shape[1] - 1) + [0.0])
    expected = np.linalg.solve(G, Y.T @ (B_it + 1.0))
    # two backward-stable solves of one system differ by about κ(G) u relatively (p u for the products)
    rtol = 10 * Y.shape[1] * np.linalg.cond(G) * U64
    np.testing.assert_allclose(W_it, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("update", ["margin", "weights"])
@pytest.mark.parametrize("offset", [0.0, 1.0])
def test_the_block_pass_is_the_namespace_pass_by_row_blocks(offset, update):
    # The pass a dask worker runs (block_pass over each block's runs of rows, pass_summary over the blocks) gives
    # the namespace pass's E, B_{k+1} (next_margin, the same NumPy operations on each row), statistics and
    # right-hand side Yᵀr, r = B_{k+1} + offset (margin) or |E| (weights).
    X, y, Y, W, B = _problem()
    two_mu, tol = 0.8, 1e-6
    state = NamespacePass(as_design(Y), W, B, None, offset=offset, two_mu=two_mu, tol=tol)
    cuts = [0, 1_000, 1_700, X.shape[0]]  # three blocks; the second in two runs of rows
    parts = []
    for a, b in zip(cuts, cuts[1:]):
        runs = [(slice(0, b - a), X[a:b])] if a != 1_000 else [(slice(0, 300), X[a:a + 300]),
                                                                 (slice(300, b - a), X[a + 300:b])]
        parts.append(block_pass(runs, y[a:b], B[a:b], None, W, offset=offset, two_mu=two_mu, tol=tol,
                                update=update, irls=False))
    B_next = np.concatenate([part[0] for part in parts])
    stats = pass_summary([part[2] for part in parts], irls=False)
    # Y W per row in another order than the namespace's Y @ W: |ΔZ_i| <= γ_p (|Y| |W|)_i (as above)
    n, p = Y.shape
    gamma = p * U64 / (1 - p * U64)
    score_bound = gamma * (np.abs(Y) @ np.abs(W))
    assert np.all(np.abs(B_next - state.B_next) <= 2 * two_mu * score_bound + 2 * U64 * np.abs(state.B_next))
    assert stats["wrong"] == state.wrong and stats["separated"] == state.separated
    assert stats["fixed_point"] == state.fixed_point
    np.testing.assert_allclose([stats["J"], stats["max_e"], stats["min_e"], stats["max_b"]],
                               [state.J, state.max_e, state.min_e, state.max_b], rtol=1e-10)
    r = state.B_next + offset if update == "margin" else np.abs(state.E)
    # sums of n terms in another order: within γ_n Σ|Y_ij r_i| per column
    bound = n * U64 / (1 - n * U64) * (np.abs(Y).T @ np.abs(r)) + 2 * two_mu * (np.abs(Y).T @ score_bound)
    assert np.all(np.abs(stats["rhs"] - Y.T @ r) <= 2 * bound)
