"""Conjugate gradients for the matrix-free least-squares solves, and the steps they recycle.

:func:`conjugate_gradients` is the preconditioned CG of
:class:`linsep._core.linalg.IterativeLeastSquares`; :class:`RecycledSteps` keeps
the last steps of an iteration's inexact solves (one matrix, right-hand sides
that change a little each iteration) and starts the next solve from their
Galerkin correction: Krylov information reused across the iterations of
Ho–Kashyap and of the Lagrangian SVM.  :class:`FrequentColumnsMetric` and
:func:`minimum_norm_solve` map a least-squares solution of wide sparse data to
the minimum-norm one with a preconditioner that keeps every iterate in the row
space.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from linsep._core.signed_design import SignedDesign, summed_duplicates
from linsep._core.null_space import PEELING_MAX_FREE, peeled_row_space_part
from linsep._core.threads import RowSplitCSR, serial_blas

__all__ = ["RECYCLED_STEPS", "RecycledSteps", "FrequentColumnsMetric", "column_squares", "conjugate_gradients",
           "conjugate_gradients_columns", "minimum_norm_map", "minimum_norm_solve"]

RECYCLED_STEPS = 12
"""Steps of the previous inexact solves kept to start the next one (:class:`RecycledSteps`)."""
RECYCLED_RCOND = 1e-8
"""Smallest eigenvalue of ``VᵀMV``, relative to its largest, that the recycled correction keeps.

The correction's coefficients ``c`` grow as the inverse of the eigenvalues kept, and with them the rounding of
``x + V c``, ``r − (M V) c`` and the fitted values' ``A x + (A V) c``: a tracked ``A x`` drifted from the
product ``A x`` to 5e-5 of it within 40 Ho–Kashyap steps on text with ``1e-12`` here, and stays within 1e-9
of it with ``1e-8`` (``tests/solvers/ho_kashyap/test_inexact_descent.py``; 5e-8 with NumPy 1.24 and SciPy
1.10, whose rounding keeps an eigenvalue just above the cut for nine steps)."""


def conjugate_gradients(matvec, b, x, inv_diag, rtol, max_iter, stall=100, forcing=0.0, start=None, on_step=None):
    """Preconditioned conjugate gradients for ``M x = b`` (``M`` symmetric positive semi-definite) from ``x``.

    Stops when ``‖b − M x‖ <= max(rtol ‖b‖, forcing ‖b − M x_0‖)`` (the
    recursively updated residual; ``x_0`` the starting point), after
    ``max_iter`` iterations, or when the residual has not reached a
    new minimum for ``stall`` iterations (rounding floor).  ``start``
    (optional) is ``(r, reference)``: the residual ``b − M x`` already known
    and the norm that ``forcing`` multiplies (instead of ``‖b − M x_0‖``).
    ``on_step(alpha)`` (optional) is called after each step ``x += alpha d``,
    right after ``matvec(d)``.
    Returns ``(x, iterations, relative residual, converged)``; ``x`` is
    updated in place.
    """
    b_norm = np.linalg.norm(b)
    if b_norm == 0.0:
        x[:] = 0.0
        return x, 0, 0.0, True
    r, reference = (b - matvec(x), None) if start is None else start
    r_norm = best = np.linalg.norm(r)
    target = max(rtol * b_norm, forcing * (r_norm if reference is None else reference))
    if r_norm <= target:
        return x, 0, r_norm / b_norm, True
    z = r if inv_diag is None else r * inv_diag
    direction = z.copy()
    rz = float(r @ z)
    since_best = 0
    for it in range(1, max_iter + 1):
        q = matvec(direction)
        curvature = float(direction @ q)
        if not curvature > 0:  # a direction of zero curvature: nothing left to gain (rounding)
            return x, it, r_norm / b_norm, r_norm <= target
        alpha = rz / curvature
        x += alpha * direction
        if on_step is not None:
            on_step(alpha)
        r -= alpha * q
        r_norm = np.linalg.norm(r)
        if r_norm <= target:
            return x, it, r_norm / b_norm, True
        if r_norm < best:
            best, since_best = r_norm, 0
        else:
            since_best += 1
            if since_best >= stall:
                break
        z = r if inv_diag is None else r * inv_diag
        rz_next = float(r @ z)
        direction *= rz_next / rz
        direction += z
        rz = rz_next
    return x, it, r_norm / b_norm, False


def conjugate_gradients_columns(matmat, b, x, inv_diag, rtol, max_iter, stall=100):
    """:func:`conjugate_gradients` for every column of ``b`` at once, from the columns of ``x``.

    Each column runs its own CG (its own step lengths, stopping rule and
    stall count, as :func:`conjugate_gradients` without forcing), but the
    product with ``M`` is one ``matmat`` of the search directions of the
    columns still running: a sparse ``Y`` is read once per iteration for all
    of them, where a product per column reads it once each.  In exact
    arithmetic each column's iterates are those of its own solve; the
    products sum in another order, so the answers agree to the tolerance,
    not bit for bit.

    Returns ``(x, iterations, relative residuals, converged)``, the last
    three per column; ``x`` is updated in place.
    """
    n_columns = b.shape[1]
    iterations = np.zeros(n_columns, dtype=np.int64)
    b_norm = np.sqrt(np.einsum("ij,ij->j", b, b))
    r = b - matmat(x)
    r_norm = np.sqrt(np.einsum("ij,ij->j", r, r))
    target = rtol * b_norm
    converged = (r_norm <= target) | (b_norm == 0.0)
    x[:, b_norm == 0.0] = 0.0
    running = ~converged
    z = r if inv_diag is None else r * inv_diag[:, None]
    direction = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    best, since_best = r_norm.copy(), np.zeros(n_columns, dtype=np.int64)
    inv_diag_column = None if inv_diag is None else inv_diag[:, None]
    for _ in range(max_iter):
        cols = np.flatnonzero(running)
        if cols.size == 0:
            break
        # all columns running (the common case): views, updated in place; else copies of the running ones
        every = cols.size == n_columns
        d = direction if every else direction[:, cols]
        q = matmat(d)
        curvature = np.einsum("ij,ij->j", d, q)
        iterations[cols] += 1
        if not np.all(curvature > 0):  # zero curvature: nothing left to gain for that column (rounding)
            flat = ~(curvature > 0)
            running[cols[flat]] = False
            cols, d, q, curvature, every = cols[~flat], d[:, ~flat], q[:, ~flat], curvature[~flat], False
        alpha = rz[cols] / curvature
        if every:
            d *= alpha  # the step; direction is rebuilt from z below
            x += d
            q *= alpha
            r -= q
            r_cols = r
        else:
            x[:, cols] += alpha * d
            r[:, cols] -= alpha * q
            r_cols = r[:, cols]
        r_norm[cols] = np.sqrt(np.einsum("ij,ij->j", r_cols, r_cols))
        met = r_norm[cols] <= target[cols]
        converged[cols[met]] = True
        improved = r_norm[cols] < best[cols]
        best[cols] = np.where(improved, r_norm[cols], best[cols])
        since_best[cols] = np.where(improved, 0, since_best[cols] + 1)
        running[cols[met | (since_best[cols] >= stall)]] = False
        still = running[cols]
        if not still.any():
            continue
        cols = cols[still]
        r_cols = r_cols if (every and still.all()) else r[:, cols]
        z_cols = r_cols if inv_diag is None else r_cols * inv_diag_column
        rz_next = np.einsum("ij,ij->j", r_cols, z_cols)
        beta = rz_next / rz[cols]
        if every and still.all():
            direction *= beta / alpha  # direction holds alpha·d after the step above
            direction += z_cols
        else:
            previous = direction[:, cols]
            if every:  # direction holds alpha·d for every column: undo the scale of the ones kept
                previous = previous / alpha[still]
            direction[:, cols] = z_cols + beta * previous
        rz[cols] = rz_next
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.where(b_norm > 0, r_norm / np.where(b_norm > 0, b_norm, 1.0), 0.0)
    return x, iterations, relative, converged


class RecycledSteps:
    """The last :data:`RECYCLED_STEPS` steps ``s_j`` of a solver's solves and their images ``M s_j``.

    In an iteration that converges linearly (Ho–Kashyap's margins, the
    Lagrangian SVM's ``r_k``) the right-hand side of the W-step changes along
    nearly the same directions from one iteration to the next (its slowest
    modes), so the new solution :math:`W_k` lies close to
    :math:`W_{k-1} + \\operatorname{span}\\{s_j\\}`.  :meth:`corrected` moves a warm start by the
    Galerkin (``M``-orthogonal) correction in that span,

    .. math::

        x \\leftarrow x + V c, \\qquad (V^t M V)\\, c = V^t r, \\qquad r \\leftarrow r - (M V) c,

    which minimises the ``M``-norm of the error over the span (Saad, *Iterative
    Methods for Sparse Linear Systems*, 2nd ed., §5.2; Parks et al., "Recycling
    Krylov subspaces for sequences of linear systems", SIAM J. Sci. Comput. 28,
    2006): CG then starts from a residual that is a fraction of the plain warm
    start's.  ``M V`` comes from the solves' own residuals (``M s = r_0 −
    r_end``): no extra product.
    """

    def __init__(self, capacity=RECYCLED_STEPS):
        self.capacity = capacity
        self._V = self._MV = None  # rows: the kept steps and their images (a ring of ``capacity``)
        self._AV = None  # rows: the steps' fitted values A s_j, where the solver tracks them
        self._small = np.zeros((capacity, capacity))  # VᵀMV, updated one row and column per kept step
        self._count = self._next = 0

    def corrected(self, x, r, fitted=None):
        """Move ``x`` (in place) by the correction in the span of the kept steps; return the new residual.

        ``fitted`` (optional, ``A x``) moves with ``x`` (in place), from the kept steps' ``A s_j``.

        ``c`` is found through the eigenvalues of the small matrix ``VᵀMV``,
        those at or below :data:`RECYCLED_RCOND` of the largest dropped (nearly
        collinear steps, or steps in the null space of a singular ``M``).
        """
        m = self._count
        if m == 0:
            return r.copy()
        V, MV = self._V[:m], self._MV[:m]
        small = self._small[:m, :m]
        values, vectors = np.linalg.eigh(0.5 * (small + small.T))
        keep = values > RECYCLED_RCOND * max(values[-1], 0.0)
        if not keep.any():
            return r.copy()
        vectors = vectors[:, keep]
        c = vectors @ ((vectors.T @ (V @ r)) / values[keep])
        x += c @ V
        if fitted is not None:
            fitted += c @ self._AV[:m]
        return r - c @ MV

    def keep(self, step, image, fitted_step=None):
        """Keep ``(s, M s)`` (a step of positive curvature) in place of the oldest once :attr:`capacity` are kept.

        ``fitted_step`` is ``A s``, kept alongside where the solver tracks its fitted values (always or never).
        """
        if not (np.all(np.isfinite(image)) and float(step @ image) > 0.0):
            return
        if self._V is None:
            self._V, self._MV = np.empty((self.capacity, step.shape[0])), np.empty((self.capacity, step.shape[0]))
        if fitted_step is not None and self._AV is None:
            self._AV = np.empty((self.capacity, fitted_step.shape[0]))
        j = self._next
        self._V[j], self._MV[j] = step, image
        if fitted_step is not None:
            self._AV[j] = fitted_step
        self._count = min(self._count + 1, self.capacity)
        self._next = (j + 1) % self.capacity
        m = self._count
        row = self._V[:m] @ image  # sᵢᵀ M s_j (M symmetric)
        self._small[j, :m] = row
        self._small[:m, j] = row


def column_squares(A, weights):
    """``diag(AᵀDA) = Σ_i D_i A_ij²`` in float64 without forming ``AᵀDA`` (``D = I`` for ``weights=None``)."""
    n_samples, n_cols = A.shape
    w = np.ones(n_samples) if weights is None else weights
    if sp.issparse(A):
        A = summed_duplicates(A)  # squares of the cells, not of their stored parts
        rows = np.repeat(np.arange(n_samples), np.diff(A.indptr))
        return np.bincount(A.indices, weights=np.square(A.data, dtype=np.float64) * w[rows], minlength=n_cols)
    if isinstance(A, SignedDesign):
        out = np.zeros(n_cols)
        for part, Xb in A._blocks():
            out[:-1] += w[part] @ np.square(Xb, dtype=np.float64)
        out[-1] = w.sum()
        return out
    return np.einsum("ij,ij,i->j", A, A, w, dtype=np.float64)


FREQUENT_COLUMNS = 1000
"""Columns of largest norm that :class:`FrequentColumnsMetric` keeps exactly (a dense ``k × k`` factor, 8 MB)."""


class FrequentColumnsMetric:
    r"""The ``N × N`` metric ``M = μI + Y_H Y_Hᵀ`` of the ``k`` columns ``H`` of ``Y`` of largest norm.

    ``μ`` is the largest squared norm of the other columns, so ``M`` is
    ``YYᵀ + μI`` with the many small columns' part ``Y_L Y_Lᵀ`` (at most ``μ``
    per column) replaced by ``μI``.  On text-like data a few frequent terms
    carry the large singular values of ``Y``; :func:`minimum_norm_solve`
    weights the residuals by ``M⁻¹``, which evens them out.  ``M⁻¹`` is applied
    with the Woodbury identity and one Cholesky factor of the ``k × k``
    capacitance matrix,

    .. math::

        M^{-1} u = \frac{1}{μ}\left(u − Y_H (μI + Y_HᵀY_H)^{-1} Y_Hᵀ u\right).

    Parameters
    ----------
    matrix : scipy.sparse CSR matrix of shape (N, p)
        ``Y``, float64.
    threads : int
        Threads of the products with ``Y_H`` and ``Y_Hᵀ`` (:class:`~linsep._core.threads.RowSplitCSR`).
    n_columns : int
        ``k``.

    Attributes
    ----------
    usable : bool
        ``False`` where the metric would not help: ``N <= 2k`` or ``p <= 2k`` (then plain CG), every
        other column is zero (``μ = 0``), or the capacitance matrix is singular at rounding (frequent
        columns collinear and far larger than ``√μ``).
    """

    def __init__(self, matrix, threads=1, n_columns=FREQUENT_COLUMNS):
        n_rows, n_cols = matrix.shape
        self.usable = min(n_rows, n_cols) > 2 * n_columns
        if not self.usable:
            return
        squares = column_squares(matrix, None)
        order = np.argsort(-squares, kind="stable")
        self.mu = float(squares[order[n_columns]])
        self.usable = self.mu > 0.0
        if not self.usable:
            return
        Y_H = sp.csr_matrix(matrix[:, np.sort(order[:n_columns])])  # CSR column selection: no CSC copy of Y
        gram = (Y_H.T @ Y_H).tocoo()  # k × k, dense by design (the data stay sparse)
        capacitance = self.mu * np.eye(n_columns)
        capacitance[gram.row, gram.col] += gram.data
        try:
            self._factor = sla.cho_factor(capacitance)
        except np.linalg.LinAlgError:  # collinear frequent columns far above μ: singular at rounding, plain CG
            self.usable = False
            return
        Y_Ht = sp.csr_matrix(Y_H.T)
        # Y_Hᵀu row-wise (k long rows, split over threads); Y_H c as a column scatter through the CSC view of
        # the same arrays: about half the time of a row-wise product over N short rows, the same sums in the
        # same order (ascending columns), and no second copy of Y_H in the products' working set.
        self._Y_Ht, self._Y_H = RowSplitCSR(Y_Ht, threads), Y_Ht.T

    def solve(self, u):
        """``M⁻¹ u``."""
        correction = self._Y_H @ sla.cho_solve(self._factor, self._Y_Ht @ u, check_finite=False)
        correction -= u
        correction /= -self.mu
        return correction


def minimum_norm_solve(A, At, fitted, metric, rtol, max_iter):
    r"""The minimum-norm ``W`` with ``A W = fitted``, for ``fitted`` in the range of ``A``.

    CG from ``W = 0`` on the ``M⁻¹``-weighted normal equations

    .. math::

        Aᵀ M^{-1} A\, W = Aᵀ M^{-1} \mathrm{fitted}

    (``M`` a :class:`FrequentColumnsMetric`).  Every iterate is ``Aᵀ(…)``, in
    the row space of ``A``, and the system is consistent, so CG converges to
    the one solution there, the minimum-norm one, whatever ``M``.  (A
    preconditioner on the ``W`` side, such as Jacobi, would leave the row
    space: its iterates converge to another solution.)  ``M`` only changes
    how fast: about 4 times fewer iterations on the text-like
    ``zipf-frequent`` problem of ``benchmarks/bench_sparse_text.py``, each
    about twice the cost of a plain one.

    The stopping rule is the plain one of
    :class:`~linsep._core.linalg.IterativeLeastSquares`,
    ``‖Aᵀ(fitted − A W)‖ <= rtol ‖Aᵀ fitted‖``: checked once the weighted
    residual meets ``rtol``, and plain CG (also in the row space) finishes
    the solve from ``W`` if needed.

    Returns ``(W, iterations, relative residual, converged)``.
    """
    g = At @ fitted
    g_norm = float(np.linalg.norm(g))
    if g_norm == 0.0:
        return np.zeros(A.shape[1]), 0, 0.0, True
    # Every product ends with Aᵀ: the iterates stay in the row space however M⁻¹ is rounded (a shortcut for
    # the frequent columns' part, h = C⁻¹Y_Hᵀu, leaked the solve's rounding out of it on collinear columns).
    x, iterations, _, _ = conjugate_gradients(lambda v: np.asarray(At @ metric.solve(A @ v), dtype=float),
                                              np.asarray(At @ metric.solve(fitted), dtype=float), np.zeros(A.shape[1]),
                                              None, rtol, max_iter)
    x, more, residual, converged = conjugate_gradients(lambda v: np.asarray(At @ (A @ v), dtype=float), g, x, None,
                                                       rtol, max_iter)
    return x, iterations + more, residual, converged


def minimum_norm_map(A, At, W, tol, max_iter, *, threads=1, frequent_columns=FREQUENT_COLUMNS,
                     peeling_max_free=PEELING_MAX_FREE):
    """``Y⁺ Y W``: the minimum-norm ``W'`` with ``Y W' = Y W``, the projection of ``W`` on the row space of ``Y``.

    ``A`` and ``At`` give the products with ``Y`` and ``Yᵀ`` (``A.matrix``, where present, is ``Y``).
    Directly where sparse ``Y`` peels (:func:`linsep._core.null_space.peeled_row_space_part`: tall text-like data,
    no solve); else CG from ``W' = 0`` on ``YᵀY W' = Yᵀ(Y W)`` to ``tol``, its iterates in the row space: for
    sparse ``Y`` under the metric of its ``frequent_columns`` (:func:`minimum_norm_solve`), else plain.
    Returns ``(W', iterations, relative residual, converged, how)``, ``how`` one of ``"peeled"``,
    ``"metric cg"``, ``"cg"``.
    """
    fitted = np.asarray(A @ W, dtype=float)
    matrix = getattr(A, "matrix", A)
    peeled = sp.issparse(matrix) and peeled_row_space_part(matrix, A, At, W, fitted, tol, peeling_max_free)
    if peeled:
        out, residual = peeled
        return out, 0, residual, True, "peeled"
    metric = sp.issparse(matrix) and FrequentColumnsMetric(matrix, threads, frequent_columns)
    with serial_blas(threads > 1):
        if metric and metric.usable:
            return (*minimum_norm_solve(A, At, fitted, metric, tol, max_iter), "metric cg")
        x, iterations, residual, converged = conjugate_gradients(
            lambda v: np.asarray(At @ np.asarray(A @ v, dtype=float), dtype=float),
            np.asarray(At @ fitted, dtype=float), np.zeros(A.shape[1]), None, tol, max_iter)
    return x, iterations, residual, converged, "cg"
