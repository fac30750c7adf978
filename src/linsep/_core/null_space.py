r"""The null space of a tall sparse design by peeling: the minimum-norm map without an iterative solve.

Ho–Kashyap without ``C`` returns the minimum-norm weights ``W = Y⁺ r``.  Its
iterative W-steps (:class:`linsep._core.linalg.IterativeLeastSquares`) are
Jacobi-preconditioned and end at another least-squares solution, with the
same fitted values ``Y W`` and another null-space component; the map to the
minimum-norm one is the projection of ``W`` on the row space of ``Y``,
``W − P_null W``.  A Krylov solve for it (:func:`linsep._core.krylov.minimum_norm_solve`)
converges as slowly as ``Y``'s smallest singular values let it: on text-like
data most of a fit.  Yet on tall text-like data the null space is small and
has a simple shape: terms seen in no training document (zero columns), terms
whose columns are proportional (several terms seen only in the same
documents, with proportional values), and a handful of other dependencies.
:class:`PeeledNullSpace` finds it exactly and cheaply:

1. **Proportional columns.**  Columns with the same pattern whose values are
   proportional to a representative's, ``y_j = s_j y_r`` (to ``1e-12``),
   form a group.  Within a group only ``Σ_j s_j W_j`` reaches ``Y W``: the
   row-space part of a group is ``W_j = s_j t`` with
   ``t = Σ_k s_k W_k / Σ_k s_k²``, and zero columns have none.
2. **Peeling.**  On the representatives, a row whose stored entries all lie,
   but one (column ``j``), in columns already determined fixes ``n_j`` in
   every null vector ``n`` (its entry is nonzero).  Each such step may ready
   another row; when none is left, the column with the most stored entries
   becomes a free parameter (the bias column, first) and peeling goes on:
   the decoding of sparse erasure codes with inactivations (Shokrollahi,
   "Raptor codes", IEEE Trans. Inf. Theory 52, 2006), the row-singleton
   eliminations of sparse LU (Duff, Erisman & Reid, *Direct Methods for
   Sparse Matrices*).  It ends with every null vector a linear function
   ``n = T n_F`` of the ``f`` free ones, found by forward substitution in
   the peeling order.  Peeling runs in rounds and gives each column the
   ready row where its entry is largest relative to the row's: a
   depth-first order with the first row found let ``T`` grow to ``1e47``
   on ``zipf-frequent`` (``benchmarks/bench_sparse_text.py``), this one to
   ``2e2``; past ``1e6`` the substitution has lost too many digits and
   there is no verdict.
3. **The small dense rest.**  ``null(Y_r) = T null(Y_r T)``: the right
   singular vectors of ``Y_r T`` (its columns scaled by the rounding scale
   ``‖|Y_r||T_c|‖``; only the rows that were no pivot, the others vanish by
   construction) with singular value ``<= 1e-9``.  A singular value
   between ``1e-9`` and ``1e-7`` is no clear verdict.

The row-space part of ``W`` is then ``P_R W`` less its projection on the
null vectors of step 3 (projected by ``P_R``): a few passes over ``W`` and
the ``p × r`` basis, no product with ``Y``.  Peeling fails where ``Y`` is
wide (``p > N``: at least ``p − N`` free columns) or where no row ever has
one undetermined column (long documents of many rare terms), both found
after about a pass over the stored entries; where it fails, or gives no
clear verdict, :attr:`PeeledNullSpace.usable` is ``False`` and the map is
left to the Krylov solve.  What peeling saves on the text-like problems of
``benchmarks/bench_sparse_text.py`` is in ``docs/performance_notes.md``
(sparse, high-dimensional data).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numba import njit

from linsep._core.signed_design import summed_duplicates

__all__ = ["PEELING_MAX_FREE", "PeeledNullSpace", "peeled_row_space_part"]

PEELING_MAX_FREE = 256
"""Most free columns a peeling may take (step 2 of :mod:`linsep._core.null_space`) before it gives up; fewer where
the dense ``(N + p) × f`` arrays of step 3 would pass :data:`_DENSE_BYTES`."""
_DENSE_BYTES = 1 << 28
"""Bytes of each dense array of step 3 (``T``, ``Y_r T``): 256 MB."""

_PROPORTIONAL_RTOL = 1e-12
"""Entrywise relative tolerance of "proportional columns": rounding of truly proportional ones, nothing more."""
_RUN_REPRESENTATIVES = 8
"""Representatives a column is compared with among the columns of its pattern (bounds the work on many
same-pattern columns, e.g. dense ones, which then stay apart and leave the verdict to peeling)."""
_NULL_SINGULAR = 1e-9
_CLEAR_SINGULAR = 1e-7
_MAX_GROWTH = 1e6
"""Largest entry of the substitution ``T`` (free columns 1) whose roundings still leave step 3 a clear verdict."""
_MIN_GRAM_EIGENVALUE = 1e-14
"""Smallest eigenvalue, relative to the largest, of the unit null vectors' Gram matrix that its Cholesky factor
projects with (a condition number of the basis below 10⁷)."""


@njit(cache=True)
def _pattern_hashes(indptr, indices):
    """A 64-bit FNV-1a hash of each column's row pattern (columns of a CSC ``indptr``, ``indices``)."""
    n_cols = indptr.size - 1
    out = np.empty(n_cols, np.uint64)
    for j in range(n_cols):
        h = np.uint64(14695981039346656037)
        for p in range(indptr[j], indptr[j + 1]):
            h = (h ^ np.uint64(indices[p])) * np.uint64(1099511628211)
        out[j] = h
    return out


@njit(cache=True)
def _scale_if_proportional(indptr, indices, data, r, j, rtol):
    """``s`` with ``y_j = s y_r`` entrywise to ``rtol`` (same pattern), else 0."""
    a, b = indptr[r], indptr[j]
    length = indptr[r + 1] - a
    if indptr[j + 1] - b != length:
        return 0.0
    s = data[b] / data[a]
    for t in range(length):
        if indices[a + t] != indices[b + t] or abs(data[b + t] - s * data[a + t]) > rtol * abs(data[b + t]):
            return 0.0
    return s


@njit(cache=True)
def _proportional_groups(indptr, indices, data, order, counts, hashes, rtol, max_compared):
    """Each column's representative (``-1``: a zero column) and ``s_j`` (``y_j = s_j y_representative``).

    ``order`` sorts the columns by (stored entries, pattern hash): a group's columns are adjacent in it.
    """
    n_cols = order.size
    representative = np.arange(n_cols)
    scale = np.ones(n_cols)
    start = 0
    while start < n_cols:
        first = order[start]
        end = start + 1
        while end < n_cols and counts[order[end]] == counts[first] and hashes[order[end]] == hashes[first]:
            end += 1
        if counts[first] == 0:
            for t in range(start, end):
                representative[order[t]] = -1
                scale[order[t]] = 0.0
        else:
            for t in range(start + 1, end):
                j = order[t]
                compared = 0
                for u in range(start, t):
                    r = order[u]
                    if representative[r] != r:
                        continue
                    s = _scale_if_proportional(indptr, indices, data, r, j, rtol)
                    if s != 0.0:
                        representative[j] = r
                        scale[j] = s
                        break
                    compared += 1
                    if compared >= max_compared:
                        break
        start = end
    return representative, scale


@njit(cache=True)
def _determine(j, cindptr, cindices, determined, undetermined, ready, n_ready):
    """Mark column ``j`` determined; append the rows left with one undetermined column to ``ready``; new length."""
    determined[j] = True
    for p in range(cindptr[j], cindptr[j + 1]):
        r = cindices[p]
        undetermined[r] -= 1
        if undetermined[r] == 1:
            ready[n_ready] = r
            n_ready += 1
    return n_ready


@njit(cache=True)
def _peel(indptr, indices, data, cindptr, cindices, active, order, max_free):
    """Peel the ``active`` columns of a matrix given as CSR (with values) and CSC pattern, in rounds.

    In each round every row with one undetermined active column is ready;
    each such column is determined by the ready row where its entry is
    largest relative to the row's largest entry (the forward substitution's
    growth is the product of those ratios' inverses along its chains, and
    rounds keep the chains short).  When no row is ready, the undetermined
    column that comes first in ``order`` (most stored entries) becomes free.

    Returns ``(pivot_rows, pivot_cols, free_cols, complete)``: the pivots in
    peeling order, the free columns in the order they were freed, and
    whether every active column was determined within ``max_free`` free ones.
    """
    n_rows, n_cols = indptr.size - 1, active.size
    undetermined = np.zeros(n_rows, np.int64)  # per row: its active columns not yet determined
    largest = np.zeros(n_rows)
    for i in range(n_rows):
        for p in range(indptr[i], indptr[i + 1]):
            if active[indices[p]]:
                undetermined[i] += 1
            largest[i] = max(largest[i], abs(data[p]))
    determined = ~active
    left = 0
    for j in range(n_cols):
        if active[j]:
            left += 1
    pivot_rows, pivot_cols = np.empty(left, np.int64), np.empty(left, np.int64)
    free_cols = np.empty(max_free, np.int64)
    n_pivots = n_free = 0
    ready, n_ready = np.empty(n_rows, np.int64), 0
    for i in range(n_rows):
        if undetermined[i] == 1:
            ready[n_ready] = i
            n_ready += 1
    chosen_row, chosen_ratio = np.full(n_cols, -1, np.int64), np.zeros(n_cols)
    round_cols, next_ready = np.empty(n_cols, np.int64), np.empty(n_rows, np.int64)
    next_free = 0
    while True:
        while n_ready > 0:
            n_round = 0
            for t in range(n_ready):
                i = ready[t]
                if undetermined[i] != 1:
                    continue
                j, ratio = -1, 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    if not determined[indices[p]]:
                        j, ratio = indices[p], abs(data[p]) / largest[i]
                        break
                if chosen_row[j] == -1:
                    round_cols[n_round] = j
                    n_round += 1
                    chosen_row[j], chosen_ratio[j] = i, ratio
                elif ratio > chosen_ratio[j]:
                    chosen_row[j], chosen_ratio[j] = i, ratio
            n_next = 0
            for t in range(n_round):
                j = round_cols[t]
                pivot_rows[n_pivots], pivot_cols[n_pivots] = chosen_row[j], j
                chosen_row[j] = -1
                n_pivots += 1
                left -= 1
                n_next = _determine(j, cindptr, cindices, determined, undetermined, next_ready, n_next)
            ready[:n_next] = next_ready[:n_next]
            n_ready = n_next
        if left == 0 or n_free == max_free:
            break
        while determined[order[next_free]]:
            next_free += 1
        j = order[next_free]
        free_cols[n_free] = j
        n_free += 1
        left -= 1
        n_ready = _determine(j, cindptr, cindices, determined, undetermined, ready, n_ready)
    return pivot_rows[:n_pivots], pivot_cols[:n_pivots], free_cols[:n_free], left == 0


@njit(cache=True)
def _substituted(indptr, indices, data, n_cols, pivot_rows, pivot_cols, free_cols):
    """``T`` (``n_cols × f``) with ``n = T n_F`` for every null vector: forward substitution in peeling order.

    Row ``i = pivot_rows[t]`` of :math:`Y n = 0` gives :math:`n_j = -\\sum_{k \\ne j} Y_{ik} n_k / Y_{ij}` for ``j = pivot_cols[t]``;
    the other columns of the row are free or determined earlier, and columns that took no part (zero
    columns, group members other than the representative) have ``T`` rows of zero.
    """
    n_free = free_cols.size
    T = np.zeros((n_cols, n_free))
    for c in range(n_free):
        T[free_cols[c], c] = 1.0
    total = np.empty(n_free)
    for t in range(pivot_rows.size):
        i, j = pivot_rows[t], pivot_cols[t]
        total[:] = 0.0
        pivot = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            k = indices[p]
            if k == j:
                pivot = data[p]
            else:
                for c in range(n_free):
                    total[c] += data[p] * T[k, c]
        for c in range(n_free):
            T[j, c] = -total[c] / pivot
    return T


class PeeledNullSpace:
    r"""The null space of a sparse ``Y`` (``N × p``) from proportional columns, peeling and a small dense rest.

    See :mod:`linsep._core.null_space` for the three steps.  Where they give a
    clear verdict, :meth:`row_space_part` is the exact projection on the row
    space of ``Y``, ``W ↦ Y⁺ Y W``.

    Parameters
    ----------
    matrix : scipy.sparse matrix of shape (N, p)
        ``Y``; not changed.
    max_free : int
        Most free columns of the peeling (:data:`PEELING_MAX_FREE`); ``0``: no peeling at all.

    Attributes
    ----------
    usable : bool
        Whether the null space was found (else the map needs a Krylov solve).
    dimension : int
        ``dim null(Y)`` (zero columns and group members included), where usable.
    free_columns : int
        Free columns the peeling took.
    """

    def __init__(self, matrix, max_free=PEELING_MAX_FREE):
        self.usable, self.dimension, self.free_columns = False, 0, 0
        if max_free <= 0 or not sp.issparse(matrix):
            return
        A = sp.csr_matrix(summed_duplicates(matrix), dtype=np.float64)
        if not np.all(np.isfinite(A.data)):
            return
        # a copy scaled to a largest entry of 1 (the same null space; no squares underflow in step 3), without
        # its stored zeros (no pivots)
        A = A / np.abs(A.data).max() if A.nnz else A.copy()
        A.eliminate_zeros()
        C = A.tocsc()
        C.sort_indices()
        counts = np.diff(C.indptr)
        hashes = _pattern_hashes(C.indptr, C.indices)
        order = np.lexsort((hashes, counts))
        self._representative, self._scale = _proportional_groups(
            C.indptr, C.indices, C.data, order, counts, hashes, _PROPORTIONAL_RTOL, _RUN_REPRESENTATIVES)
        active = self._representative == np.arange(A.shape[1])
        by_entries = np.argsort(-counts, kind="stable")
        max_free = min(int(max_free), _DENSE_BYTES // (8 * (A.shape[0] + A.shape[1])))
        pivot_rows, pivot_cols, free_cols, complete = _peel(A.indptr, A.indices, A.data, C.indptr, C.indices,
                                                            active, by_entries, max_free)
        self.free_columns = free_cols.size
        if not complete:
            return
        T = _substituted(A.indptr, A.indices, A.data, A.shape[1], pivot_rows, pivot_cols, free_cols)
        if not np.abs(T).max(initial=0.0) <= _MAX_GROWTH:  # NaN or a substitution that lost its digits
            return
        kept = self._representative >= 0
        self._kept, self._group = np.flatnonzero(kept), self._representative[kept]
        self._group_squares = np.bincount(self._group, weights=self._scale[kept] ** 2, minlength=kept.size)
        self._basis = None
        n_null = 0
        if free_cols.size:
            # Y_r T vanishes on the pivot rows by construction: its null space is that of the other rows
            rest = np.ones(A.shape[0], dtype=bool)
            rest[pivot_rows] = False
            A_rest = A[rest]
            scales = np.linalg.norm(np.asarray(abs(A_rest) @ np.abs(T)), axis=0)
            scales[scales == 0.0] = 1.0  # a column whose image is exactly zero: null whatever its scale
            images = np.asarray(A_rest @ T)
            images /= scales
            if images.shape[0] < free_cols.size:  # fewer rows than free columns: the missing rows are zero
                images = np.vstack([images, np.zeros((free_cols.size - images.shape[0], free_cols.size))])
            # the singular values and right singular vectors of the tall images are those of their R factor
            _, singular, Vt = np.linalg.svd(np.linalg.qr(images, mode="r"))
            del images
            if np.any((singular > _NULL_SINGULAR) & (singular < _CLEAR_SINGULAR)):
                return  # no clear verdict on some direction
            null = Vt[singular <= _NULL_SINGULAR].T / scales[:, None]
            n_null = null.shape[1]
            if n_null:
                # The null vectors T z, less their groups' part: independent (T has the identity on the free
                # columns, which are representatives).  The projection on their span goes through the
                # Cholesky factor of their Gram matrix (BLAS-3, a tenth of a Householder QR's time on 5·10⁴
                # rows), applied twice (:meth:`row_space_part`), which is exact to rounding while the
                # basis's condition number is far below 1/√eps.
                basis = self._group_part(T @ null)
                basis /= np.linalg.norm(basis, axis=0)
                gram = basis.T @ basis
                values = np.linalg.eigvalsh(gram)
                if not values[0] > _MIN_GRAM_EIGENVALUE * values[-1]:
                    return
                self._basis, self._gram_factor = basis, sla.cho_factor(gram)
        self.dimension = int(A.shape[1] - active.sum() + n_null)
        self.usable = True

    def _group_part(self, W):
        """``P_R W`` (``W`` of shape (p,) or (p, m)): ``W_j = s_j Σ_k s_k W_k / Σ_k s_k²`` over ``j``'s group of
        proportional columns, ``0`` for a zero column; O(p) per column of ``W``, whatever the groups' sizes."""
        kept, group, scale = self._kept, self._group, self._scale[self._kept]
        columns = W.reshape(W.shape[0], -1)
        out = np.zeros(columns.shape)
        for c in range(columns.shape[1]):
            sums = np.bincount(group, weights=scale * columns[kept, c], minlength=W.shape[0])
            out[kept, c] = scale * (sums[group] / self._group_squares[group])
        return out.reshape(W.shape)

    def row_space_part(self, W):
        """``Y⁺ Y W``: the projection of ``W`` (shape (p,)) on the row space of ``Y``."""
        projected = self._group_part(np.asarray(W, dtype=float))
        if self._basis is not None:
            for _ in range(2):  # the second pass removes what the first left of the null part by rounding
                projected -= self._basis @ sla.cho_solve(self._gram_factor, self._basis.T @ projected)
        return projected


def peeled_row_space_part(matrix, A, At, W, fitted, tol, max_free=PEELING_MAX_FREE):
    """``(Y⁺ Y W, residual)`` through :class:`PeeledNullSpace` where ``Y`` peels and the projection keeps ``Y W``.

    ``matrix`` is ``Y`` (sparse), ``A`` and ``At`` its products (``Y v``, ``Yᵀ u``), ``fitted = Y W``.  The
    projection is kept if ``‖Yᵀ Y (W − W')‖ <= tol ‖Yᵀ fitted‖`` (``residual`` the left side over
    ``‖Yᵀ fitted‖``: the stopping rule of the Krylov map, three products); else, or where ``Y`` does not
    peel, ``None``.
    """
    null_space = PeeledNullSpace(matrix, max_free)
    if not null_space.usable:
        return None
    scale = np.linalg.norm(np.asarray(At @ fitted, dtype=float))
    if not scale > 0:  # Yᵀ(Y W) zero or underflowed: nothing to measure the projection against
        return None
    out = null_space.row_space_part(W)
    change = np.linalg.norm(np.asarray(At @ np.asarray(A @ (W - out), dtype=float), dtype=float))
    residual = float(change / scale)
    return (out, residual) if residual <= tol else None
