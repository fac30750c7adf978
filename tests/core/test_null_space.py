"""The null space of a tall sparse design by peeling, and the minimum-norm map through it (:mod:`linsep._core.null_space`).

The oracle is the pseudoinverse: ``row_space_part(W)`` must be ``Y⁺ Y W``.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from linsep._core.linalg import IterativeLeastSquares, solver_limits
from linsep._core.null_space import PeeledNullSpace


def tall_text_like(n=600, p=150, seed=0, duplicates=True, zero_columns=True):
    """Short documents (1 to 4 terms, Zipf-like), a bias column; proportional and empty columns if asked.

    Rows of unit norm with signs, as Ho–Kashyap's ``Y`` has them.
    """
    rng = np.random.default_rng(seed)
    frequency = 1.0 / (np.arange(p) + 5.0)
    frequency /= frequency.sum()
    rows, cols = [], []
    for i in range(n):
        terms = rng.choice(p, size=rng.integers(1, 5), p=frequency)
        rows += [i] * terms.size
        cols += list(terms)
    X = sp.csr_matrix((rng.uniform(0.5, 2.0, len(rows)), (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    blocks = [X]
    if duplicates:
        # terms seen in one document only, twice in the same one; and a column proportional to a rare term's
        rare = sp.csr_matrix((np.array([1.0, 3.0, 0.5, 0.25]), ([7, 7, 40, 40], [0, 1, 2, 3])), shape=(n, 4))
        scaled = X[:, [p - 3]] * -2.5
        blocks += [rare, scaled]
    if zero_columns:
        blocks.append(sp.csr_matrix((n, 3)))
    Z = sp.hstack(blocks + [np.ones((n, 1))], format="csr")
    norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1)).ravel())
    signs = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return sp.csr_matrix(sp.diags(signs / norms) @ Z)


def pinv_projection(Y, W):
    return np.linalg.pinv(Y.toarray(), rcond=1e-12) @ (Y @ W)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_row_space_part_is_the_pseudoinverse_projection(seed):
    Y = tall_text_like(seed=seed)
    null_space = PeeledNullSpace(Y)
    assert null_space.usable
    dense = Y.toarray()
    assert null_space.dimension == Y.shape[1] - np.linalg.matrix_rank(dense)
    W = np.random.default_rng(seed + 10).standard_normal(Y.shape[1])
    expected = pinv_projection(Y, W)
    projected = null_space.row_space_part(W)
    np.testing.assert_allclose(projected, expected, atol=1e-10 * np.abs(expected).max())
    np.testing.assert_allclose(Y @ projected, Y @ W, atol=1e-10)


def test_a_dependency_that_is_no_proportional_pair_is_found_by_the_dense_rest():
    # a one-hot group of four columns sums to the bias column: a null vector over five columns, none proportional
    rng = np.random.default_rng(3)
    n = 400
    one_hot = sp.csr_matrix((np.ones(n), (np.arange(n), rng.integers(0, 4, n))), shape=(n, 4))
    Y = sp.hstack([tall_text_like(n=n, duplicates=False, zero_columns=False)[:, :-1], one_hot,
                   np.ones((n, 1))], format="csr")
    null_space = PeeledNullSpace(Y)
    assert null_space.usable and null_space.free_columns >= 1
    assert null_space.dimension == Y.shape[1] - np.linalg.matrix_rank(Y.toarray())
    W = rng.standard_normal(Y.shape[1])
    expected = pinv_projection(Y, W)
    np.testing.assert_allclose(null_space.row_space_part(W), expected, atol=1e-10 * np.abs(expected).max())


def test_full_column_rank_is_the_identity():
    Y = tall_text_like(n=2000, p=40, duplicates=False, zero_columns=False)  # every term seen
    assert np.linalg.matrix_rank(Y.toarray()) == Y.shape[1]
    null_space = PeeledNullSpace(Y)
    assert null_space.usable and null_space.dimension == 0
    W = np.random.default_rng(4).standard_normal(Y.shape[1])
    np.testing.assert_allclose(null_space.row_space_part(W), W, rtol=1e-12)


def test_wide_data_and_long_rows_need_more_free_columns_than_allowed():
    rng = np.random.default_rng(5)
    wide = sp.random(50, 200, density=0.1, random_state=rng, format="csr")
    assert not PeeledNullSpace(wide, max_free=32).usable  # at least p − N = 150 free columns
    long_rows = sp.random(400, 100, density=0.3, random_state=rng, format="csr")
    assert not PeeledNullSpace(long_rows, max_free=32).usable
    assert not PeeledNullSpace(tall_text_like(), max_free=0).usable
    assert not PeeledNullSpace(tall_text_like().toarray()).usable  # dense: not this path
    # allowed enough free columns, the dense rest is all of Y: still the pseudoinverse's projection
    null_space = PeeledNullSpace(wide, max_free=200)
    assert null_space.usable and null_space.dimension == 200 - np.linalg.matrix_rank(wide.toarray())
    W = rng.standard_normal(200)
    expected = pinv_projection(wide, W)
    np.testing.assert_allclose(null_space.row_space_part(W), expected, atol=1e-10 * np.abs(expected).max())


def test_nearly_dependent_columns_give_no_verdict():
    # a column equal to the sum of two others: a null vector the dense rest finds; the same column off by
    # 1e-8 is neither clearly null nor clearly not, and the map is left to the Krylov solve
    Y = tall_text_like(duplicates=False, zero_columns=False)
    total = Y[:, 0].toarray().ravel() + Y[:, 1].toarray().ravel()
    exact = PeeledNullSpace(sp.hstack([Y, total[:, None]], format="csr"))
    assert exact.usable and exact.free_columns > 0 and exact.dimension == 1 + PeeledNullSpace(Y).dimension
    near = total.copy()
    near[near != 0] *= 1 + 1e-8 * np.random.default_rng(6).standard_normal(np.count_nonzero(near))
    assert not PeeledNullSpace(sp.hstack([Y, near[:, None]], format="csr")).usable


def test_stored_zeros_and_duplicate_entries_are_cells_and_the_matrix_is_not_changed():
    Y = tall_text_like(seed=7)
    coo = Y.tocoo()
    # each cell stored as two halves, and stored zeros in the pattern
    rows = np.r_[coo.row, coo.row, [0, 1]]
    cols = np.r_[coo.col, coo.col, [Y.shape[1] - 2, Y.shape[1] - 3]]
    data = np.r_[coo.data / 2, coo.data / 2, [0.0, 0.0]]
    messy = sp.csr_matrix((data, (rows, cols)), shape=Y.shape)
    messy.has_canonical_format = False
    before = (messy.data.copy(), messy.indices.copy(), messy.indptr.copy())
    W = np.random.default_rng(8).standard_normal(Y.shape[1])
    np.testing.assert_allclose(PeeledNullSpace(messy).row_space_part(W), PeeledNullSpace(Y).row_space_part(W),
                               atol=1e-12)
    for kept, now in zip(before, (messy.data, messy.indices, messy.indptr)):
        np.testing.assert_array_equal(kept, now)


def test_minimum_norm_part_peels_and_agrees_with_the_krylov_map():
    Y = tall_text_like(n=3000, p=600, seed=9)
    W = np.random.default_rng(10).standard_normal(Y.shape[1])
    solver = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False)
    peeled = solver.minimum_norm_part(W)
    assert solver.stats["minimum_norm_map"] == "peeled" and solver.converged and solver.exact
    assert solver.iterations == 0
    with solver_limits(peeling_max_free=0):  # the Krylov map, to a tighter tolerance
        krylov = IterativeLeastSquares(Y, None, 0.0, minimum_norm=False)
        mapped = krylov.minimum_norm_part(W, tol=1e-13)
    assert krylov.stats["minimum_norm_map"] in ("metric cg", "cg") and krylov.iterations > 0
    np.testing.assert_allclose(peeled, mapped, atol=1e-8 * np.abs(mapped).max())
    np.testing.assert_allclose(peeled, pinv_projection(Y, W), atol=1e-10 * np.abs(peeled).max())


def test_edge_shapes():
    zero = sp.csr_matrix((5, 4))
    null_space = PeeledNullSpace(zero)
    assert null_space.usable and null_space.dimension == 4
    np.testing.assert_array_equal(null_space.row_space_part(np.ones(4)), np.zeros(4))
    one = sp.csr_matrix(np.array([[0.0, 2.0, 0.0], [0.0, 1.0, 0.0]]))
    null_space = PeeledNullSpace(one)
    assert null_space.usable and null_space.dimension == 2
    np.testing.assert_allclose(null_space.row_space_part(np.array([1.0, 3.0, -1.0])), [0.0, 3.0, 0.0])


def test_tiny_entries_and_a_large_group():
    # entries near 1e-170 (squares underflow): scaled first, the verdict is right or absent, never wrong
    Y = tall_text_like(n=400, p=60, seed=11) * 1e-170
    null_space = PeeledNullSpace(Y)
    W = np.random.default_rng(12).standard_normal(Y.shape[1])
    if null_space.usable:
        expected = pinv_projection(Y * 1e170, W)
        np.testing.assert_allclose(null_space.row_space_part(W), expected, atol=1e-10 * np.abs(expected).max())
    # 3000 terms seen once, all in one document: one group of proportional columns, projected in O(p)
    n = 500
    Z = sp.hstack([tall_text_like(n=n, p=40, duplicates=False, zero_columns=False),
                   sp.csr_matrix((np.ones(3000), (np.zeros(3000, int), np.arange(3000))), shape=(n, 3000))],
                  format="csr")
    null_space = PeeledNullSpace(Z)
    assert null_space.usable and null_space.dimension == Z.shape[1] - np.linalg.matrix_rank(Z.toarray())
    W = np.random.default_rng(13).standard_normal(Z.shape[1])
    expected = pinv_projection(Z, W)
    np.testing.assert_allclose(null_space.row_space_part(W), expected, atol=1e-10 * np.abs(expected).max())
