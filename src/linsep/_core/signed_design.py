"""The augmented, sign-normalised design matrix shared by all primal solvers.

Every linear learner in linsep works on the matrix of the Ho–Kashyap papers
(Lauer & Bloch 2006, eq. 3):

.. math::

    Y = \\operatorname{diag}(y)\\,[X,\\ 1_{N}],
    \\qquad Y_i = \\begin{cases} (x_i^t, +1) & y_i = +1 \\\\
                                 (-x_i^t, -1) & y_i = -1 \\end{cases}

so that a weight vector ``W = (w, w_0)`` (bias **last**) separates the data
exactly when ``Y W > 0``.  Solvers touch the data only through ``Y @ v``,
``Y.T @ u`` and the least-squares factorisation of :mod:`linsep._core.linalg`, so
dense and scipy.sparse inputs share the same solver code.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.plan import working_dtype


def summed_duplicates(X):
    """``X`` itself, unless it is a sparse matrix not in canonical form: then a canonical copy.

    scipy (and scikit-learn's validation) keep duplicate stored entries of one
    cell, whose value is their sum; code that reads ``.data`` and ``.indices``
    entry by entry (maxima, squares, scatters) needs each cell stored once.
    The caller's matrix is never changed.
    """
    if sp.issparse(X) and not getattr(X, "has_canonical_format", True):
        X = X.copy()
        X.sum_duplicates()
    return X


def augment(X):
    """Return ``[X, 1]``: the samples with a constant last column for the bias."""
    if sp.issparse(X):
        ones = sp.csr_matrix(np.ones((X.shape[0], 1), dtype=X.dtype))
        return sp.hstack([X, ones], format="csr")
    X = np.asarray(X)
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])


def augmented_gram(X):
    """``[X, 1]ᵀ[X, 1]`` in float64 from ``X`` itself (float64 dense, or sparse of any type): no augmented copy.

    Dense: BLAS syrk on blocks of rows of ``X``; the bias row and column are
    the column sums (taken from the same blocks while they are in cache) and ``N``.  (Dense float32 goes through :meth:`SignedDesign.gram`,
    which sums in float64 block by block.)
    """
    n_samples, n_features = X.shape
    gram = np.empty((n_features + 1, n_features + 1))
    if sp.issparse(X):  # a float32 matrix's entries are converted for the float64 sums
        X = X.astype(np.float64, copy=False)
        gram[:-1, :-1] = (X.T @ X).toarray()
        gram[:-1, -1] = gram[-1, :-1] = np.asarray(X.sum(axis=0)).ravel()
    else:
        # Row blocks of about 4 MiB: each block's column sums are read while it is still in cache.
        # One syrk on X and a separate X.sum(axis=0) would read X twice (at N = 10⁶, d = 100 the
        # second pass is a quarter of the Gram's time).  Data of one block: exactly the single syrk.
        rows = max(256, (4 << 20) // (8 * max(n_features, 1)))
        gram[:-1, :-1] = 0.0
        sums = np.zeros(n_features)
        for start in range(0, n_samples, rows):
            block = X[start:start + rows]
            gram[:-1, :-1] += block.T @ block
            sums += block.sum(axis=0)
        gram[:-1, -1] = gram[-1, :-1] = sums
    gram[-1, -1] = n_samples
    return gram


def signed_scores(X, y, W):
    """``Y W = y ∘ (X w + w_0)`` without forming ``Y`` (``X`` dense or sparse, ``W`` bias last), in the type of ``X``.

    For float32 ``X`` the product is a float32 one (``W`` rounded to float32):
    a mixed product would first convert all of ``X`` to float64.
    """
    W = np.asarray(W).astype(working_dtype(X), copy=False)
    return y * (np.asarray(X @ W[:-1]).ravel() + W[-1])


def sign_normalized(X, y):
    """Return ``Y = diag(y) [X, 1]`` for labels ``y`` in {-1, +1}.

    A new array is always returned; ``X`` is never modified.
    """
    y = np.asarray(y, dtype=float)
    if sp.issparse(X):
        Y = sp.diags(y) @ augment(X)  # the product sums duplicate entries of X
        Y.sum_duplicates()  # sorts its (new) indices: canonical, so entry-wise readers need no copy
        return Y
    X = np.asarray(X)
    # One allocation, filled in place (augment-then-scale would copy the data twice).
    Y = np.empty((X.shape[0], X.shape[1] + 1), dtype=np.result_type(X.dtype, y.dtype))
    np.multiply(X, y[:, None], out=Y[:, :-1])
    Y[:, -1] = y
    return Y


class SignedDesign:
    """``Y = diag(y) [X_R, 1]`` for the rows ``R`` of ``X``, never formed.

    Forming ``Y`` copies the data (twice their size for float32 ``X``, since
    ``Y`` is float64); a held-out validation split would copy them again.
    This view keeps ``X`` as given (C order, float32 or float64), the labels
    ``y`` (``±1``, in the type of ``X``) and the row indices ``R`` (``None``:
    all rows), and offers what the Ho–Kashyap solver asks of ``Y``:
    ``Y @ W``, ``Y.T @ u``, the Gram matrix ``YᵀDY`` and :meth:`toarray`,
    each computed over blocks of a few MiB of rows.  The compiled loop reads
    ``X``, ``y`` and ``R`` directly (:meth:`by_rows`).

    ``YᵀDY = [X_R, 1]ᵀ D [X_R, 1]`` does not depend on the labels (``y_i² =
    1``), and is accumulated in float64 whatever the type of ``X``; so is
    ``Yᵀu``.  ``Y @ W`` is computed in the common type of ``X`` and ``W``.
    """

    ndim = 2

    def __init__(self, X, y, rows=None, block_bytes=1 << 20):
        self.X = np.ascontiguousarray(X)
        self.dtype = self.X.dtype
        self.y = np.asarray(y, dtype=self.dtype)
        self.rows = None if rows is None else np.asarray(rows, dtype=np.intp)
        n_rows = self.X.shape[0] if rows is None else self.rows.shape[0]
        if self.y.shape != (n_rows,):
            raise ValueError(f"y must have one label per row of Y ({n_rows}), got shape {self.y.shape}")
        self.shape = (n_rows, self.X.shape[1] + 1)
        self.size = self.shape[0] * self.shape[1]
        self._block = max(256, block_bytes // (8 * self.shape[1]))

    def _blocks(self):
        """``(slice of Y's rows, the matching rows of X)``: views, or small copies for a row subset."""
        for start in range(0, self.shape[0], self._block):
            part = slice(start, min(start + self._block, self.shape[0]))
            yield part, (self.X[part] if self.rows is None else self.X[self.rows[part]])

    def by_rows(self):
        """``(X, y, rows)`` for the compiled loop (``rows`` empty for all rows)."""
        return self.X, self.y, (np.empty(0, dtype=np.intp) if self.rows is None else self.rows)

    @property
    def T(self):
        return _TransposedDesign(self)

    def __matmul__(self, W):
        """``Y W`` for ``W`` of shape (p,) or (p, k)."""
        W = np.asarray(W)
        out = np.empty((self.shape[0],) + W.shape[1:], dtype=np.result_type(self.dtype, W.dtype))
        labels = self.y if W.ndim == 1 else self.y[:, None]
        for part, Xb in self._blocks():
            block = out[part]
            np.matmul(Xb, W[:-1], out=block)
            block += W[-1]
            block *= labels[part]
        return out

    def gram(self, sample_weight=None):
        """``YᵀDY`` (``D = diag(sample_weight)``, default ``I``) in float64."""
        p = self.shape[1]
        if sample_weight is None and self.rows is None and self.dtype == np.float64:
            return augmented_gram(self.X)  # all rows, float64: one BLAS syrk on X itself, no copy
        gram = np.zeros((p, p))
        A = np.empty((min(self._block, self.shape[0]), p))
        for part, Xb in self._blocks():
            block = A[:part.stop - part.start]
            block[:, :-1] = Xb
            block[:, -1] = 1.0
            if sample_weight is not None:
                block *= np.sqrt(sample_weight[part])[:, None]
            gram += block.T @ block
        return gram

    def toarray(self):
        """The dense ``Y`` in float64 (a copy of the data: for the paths that need ``Y`` itself)."""
        return sign_normalized(self.X if self.rows is None else self.X[self.rows], self.y.astype(float))


class _TransposedDesign:
    """``Yᵀ`` of a :class:`SignedDesign`: ``Yᵀ u = [X_R, 1]ᵀ (y ∘ u)``, summed in float64."""

    def __init__(self, design):
        self.design = design
        self.shape = design.shape[::-1]

    def __matmul__(self, u):
        """``Yᵀ u`` for ``u`` of shape (N,) or (N, k), in float64."""
        design = self.design
        u = np.asarray(u, dtype=float)
        if u.ndim not in (1, 2):
            raise ValueError(f"Yᵀ @ u needs u of shape (N,) or (N, k), got shape {u.shape}")
        out = np.zeros((design.shape[1],) + u.shape[1:])
        labels = design.y if u.ndim == 1 else design.y[:, None]
        for part, Xb in design._blocks():
            t = u[part] * labels[part]
            out[:-1] += Xb.T @ t
            out[-1] += t.sum(axis=0)
        return out


class SparseSignedRows:
    """``Y = diag(y) [X_R, 1]`` for sparse ``X``, never formed: :class:`SignedDesign`'s products on a CSR matrix.

    Keeps ``X_R`` (CSR, float64, in canonical form) and the labels ``y``;
    ``Y @ W = y ∘ (X_R W_{:d} + W_d)``, ``Y.T @ u = [X_R, 1]ᵀ (y ∘ u)`` and
    ``YᵀDY = [X_R, 1]ᵀ D [X_R, 1]`` (labels square away), as the dask
    design's tasks ask of a block of sparse rows.  ``rows`` is applied at
    construction (a copy of those rows): :attr:`rows` is then ``None``.
    """

    ndim = 2
    dtype = np.dtype(np.float64)
    rows = None

    def __init__(self, X, y, rows=None):
        X = sp.csr_matrix(X if rows is None else X[rows], dtype=np.float64)
        self.X = summed_duplicates(X)
        self.y = np.asarray(y, dtype=np.float64)
        if self.y.shape != (self.X.shape[0],):
            raise ValueError(f"y must have one label per row of Y ({self.X.shape[0]}), got shape {self.y.shape}")
        self.shape = (self.X.shape[0], self.X.shape[1] + 1)
        self.size = self.shape[0] * self.shape[1]

    def _blocks(self):
        """One run: all rows (a sparse product reads each stored entry once whatever the run)."""
        yield slice(0, self.shape[0]), self.X

    @property
    def T(self):
        return _TransposedDesign(self)

    def __matmul__(self, W):
        """``Y W`` for ``W`` of shape (p,) or (p, k)."""
        W = np.asarray(W, dtype=np.float64)
        out = np.asarray(self.X @ W[:-1]) + W[-1]
        out *= self.y if W.ndim == 1 else self.y[:, None]
        return out

    def gram(self, sample_weight=None):
        """``YᵀDY`` (``D = diag(sample_weight)``, default ``I``) in float64, dense (``p × p``)."""
        if sample_weight is None:
            return augmented_gram(self.X)
        H = sp.diags(np.sqrt(np.asarray(sample_weight, dtype=np.float64))) @ augment(self.X)
        return (H.T @ H).toarray()


def signed_design(X, y, rows=None):
    """``Y = diag(y) [X_R, 1]``: a :class:`SignedDesign` view for dense ``X``, a sparse matrix for sparse ``X``."""
    if sp.issparse(X):
        return sign_normalized(X if rows is None else X[rows], y)
    return SignedDesign(X, y, rows)


def augmented_weights(coef, intercept):
    """Stack ``coef`` (d,) and ``intercept`` into the augmented ``W`` (d+1,)."""
    return np.concatenate([np.ravel(coef), [float(intercept)]])


# --- Data of any representable scale ------------------------------------------------------------
# Every primal rule works on Y = diag(y)[X, 1], where the bias column is 1.  A feature column whose
# magnitude is more than 2^p away from 1 (p = the mantissa bits of the dtype, 53 for float64) can
# no longer be combined with the bias column at comparable weights, and far beyond that its
# squares and sums over- or underflow.  Such columns are rescaled by powers of two before solving
# (exact in binary floating point) and the weights are mapped back; columns inside the range are
# left alone, so ordinary data are neither copied nor changed.


def _safe_exponent(dtype):
    return np.finfo(dtype).nmant + 1


def _column_maxabs(X):
    """Per-column ``max |x|`` (dense or sparse) from column maxima and minima: no copy of canonical ``X``."""
    if X.shape[0] == 0:  # an empty row block (e.g. a dask chunk after filtering): no magnitude yet
        return np.zeros(X.shape[1], dtype=np.float64)
    X = summed_duplicates(X)  # a cell stored as 1e9 and 3 - 1e9 has maximum 3
    if sp.issparse(X) and X.format == "csr":
        # one pass over the stored entries; the column reductions below convert CSR to CSC twice
        largest = np.zeros(X.shape[1], dtype=np.float64)
        np.maximum.at(largest, X.indices, np.abs(X.data))
        return largest
    if sp.issparse(X):
        return np.maximum(X.max(axis=0).toarray().ravel(), -X.min(axis=0).toarray().ravel())
    return np.maximum(X.max(axis=0), -X.min(axis=0))


def _surely_in_range(X, p):
    """Cheap sufficient test that every column's ``max |x|`` lies in ``[2^-p, 2^p]``.

    One pass of column sums of squares ``s_j`` (about the cost of one ``X @ v``,
    and far cheaper than column maxima and minima of a C-ordered array):
    ``max_j² <= s_j <= N max_j²``, so ``s_j <= 2^2p`` and ``s_j >= N 2^-2p``
    are enough.  Anything else (an all-zero column, an overflow) goes to the
    exact test.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        squares = np.einsum("ij,ij->j", X, X, dtype=np.float64)
    low, high = X.shape[0] * 2.0 ** (-2 * p), 2.0 ** (2 * p)
    return bool(np.all((squares >= low) & (squares <= high)))


def _smallest_nonzero(X, columns):
    """Smallest non-zero ``|x|`` of each of ``columns`` (only on the rare rescaling path)."""
    sub = X[:, columns]
    if sp.issparse(sub):
        sub = summed_duplicates(sp.csc_matrix(sub))
        return np.array([np.abs(sub.data[a:b][sub.data[a:b] != 0]).min(initial=np.inf)
                         for a, b in zip(sub.indptr[:-1], sub.indptr[1:])])
    sub = np.abs(sub)
    return np.where(sub > 0, sub, np.inf).min(axis=0)


def safe_exponent(dtype, exponent=None):
    """``p`` of the safe range ``[2^-p, 2^p]`` of column magnitudes: the dtype's mantissa bits + 1, or less."""
    return _safe_exponent(dtype) if exponent is None else min(exponent, _safe_exponent(dtype))


def columns_out_of_range(largest, p):
    """Which columns, by their largest magnitude ``largest``, lie outside ``[2^-p, 2^p]`` (all-zero ones do not)."""
    largest = np.asarray(largest, dtype=np.float64)
    return (largest > 0) & ((largest > 2.0**p) | (largest < 2.0**-p))


def column_maxabs(X):
    """Per-column ``max |x|`` of ``X`` (dense or sparse), in float64."""
    return np.asarray(_column_maxabs(X), dtype=np.float64)


def column_shifts(X, exponent=None):
    """Power-of-two exponents ``k_j`` that bring every column of ``X`` into a safe range, or ``None``.

    A column whose largest magnitude ``m_j`` lies in ``[2^-p, 2^p]`` (``p`` =
    ``exponent``, by default the mantissa bits + 1 of ``X``'s dtype: 53 for
    float64, 24 for float32), or is all zero, gets :math:`k_j = 0`; the others get :math:`k_j` with
    :math:`m_j 2^{k_j}` in :math:`[1/2, 1)`.  ``None`` (the usual answer, after one pass of column
    maxima) means nothing needs rescaling.  A column scaled down is moved
    less far when its smallest non-zero entry would otherwise fall below the
    normal range (where ``x 2^k`` would lose bits); if even the least shift
    that brings ``m_j`` to ``2^p`` would do so, the column spans more than
    the dtype can scale exactly and a ``ValueError`` says so.

    :math:`X 2^k` (``scale_columns``) is exact, and so is :math:`w_j = w'_j 2^{k_j}`
    (``unscale_coef``) unless it over- or underflows.
    """
    dtype = X.dtype
    p = safe_exponent(dtype, exponent)
    if not sp.issparse(X) and _surely_in_range(X, p):
        return None
    largest = np.asarray(_column_maxabs(X), dtype=np.float64)
    with np.errstate(divide="ignore"):
        exponent = np.frexp(largest)[1]  # m = f 2^e, f in [1/2, 1)
    outside = columns_out_of_range(largest, p)
    if not outside.any():
        return None
    shifts = np.where(outside, -exponent, 0).astype(np.int64)
    down = np.flatnonzero(shifts < 0)
    if down.size:
        smallest = np.full(X.shape[1], np.inf)
        smallest[down] = _smallest_nonzero(X, down)
        tiny_exponent = np.finfo(dtype).minexp  # smallest normal = 2^(minexp)
        smallest_exponent = np.frexp(np.asarray(smallest[down], dtype=np.float64))[1] - 1
        least = tiny_exponent - smallest_exponent  # keeps the smallest entry normal
        needed = p - exponent[down]  # the least shift that brings m to at most 2^p
        if np.any(least > needed):
            j = down[np.argmax(least > needed)]
            raise ValueError(
                f"column {j} of X spans too many orders of magnitude to be rescaled exactly "
                f"(from {smallest[j]:.3g} to {largest[j]:.3g} in {np.dtype(dtype).name}); "
                f"rescale or clip it before fitting")
        shifts[down] = np.maximum(shifts[down], least)
    return shifts


def scale_columns(X, shifts):
    """Return ``X diag(2^shifts)`` as a new array of ``X``'s dtype (dense or sparse); exact."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data = np.ldexp(X.data, shifts[X.indices]).astype(X.dtype, copy=False)
        return X
    return np.ldexp(X, shifts.astype(np.int32)).astype(X.dtype, copy=False)


def unscale_coef(coef, shifts):
    """Weights for the original columns from weights ``coef`` (..., d) fitted on ``X diag(2^shifts)``.

    :math:`w_j x_j = (w_j 2^{-k_j}) (x_j 2^{k_j})`, so :math:`w_j = w'_j 2^{k_j}`.
    A ``ValueError`` is raised when a weight is not representable at the
    data's scale (it would overflow).
    """
    with np.errstate(over="ignore"):
        out = np.ldexp(coef, shifts.astype(np.int32)).astype(np.result_type(coef), copy=False)
    if not np.all(np.isfinite(out)):
        raise ValueError("the fitted weights overflow at the scale of X (features near the float range "
                         "limits); rescale X before fitting")
    return out
