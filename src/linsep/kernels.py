"""Kernel choice shared by the kernel estimators.

Kernels are scikit-learn's pairwise kernels with SVC's parameter names
(``gamma``, ``degree``, ``coef0``); ``"precomputed"`` means the caller passes
Gram matrices; a callable ``k(A, B) -> ndarray`` is used as it is.

Every kernel value reaches a solver or a decision function through
:func:`kernel_matrix` or :class:`KernelColumnCache`, and both hold two
guarantees for all kernel estimators at once:

* sparse samples are read in canonical form (duplicate stored entries of a
  cell summed, on a copy: the caller's matrix is never changed).
  scikit-learn's row norms square each stored entry, so a cell stored as
  ``v + 7`` and ``-7`` would enter an RBF distance as ``(v + 7)² + 49``
  instead of ``v²``;
* the values are checked (``linsep._core.finite.require_kernel_block``): one
  finite value per pair of rows, else a ``ValueError`` that names the kernel.

``training_samples`` gives a kernel model its own canonical copy of the
training samples, so that changing the caller's array after ``fit`` changes
nothing (as scikit-learn's SVC keeps its own support vectors).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from linsep._core.signed_design import summed_duplicates
from linsep._core.finite import require_finite, require_kernel_block
from linsep._core.linalg import pivoted_cholesky, too_wide_for_direct

__all__ = ["kernel_params", "kernel_matrix", "namespace_kernel_diagonal", "namespace_kernel_matrix", "resolve_gamma",
           "KernelColumnCache"]

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")

_OVERFLOW_HINT = "they overflowed; lower degree, gamma or coef0, or rescale X (e.g. with StandardScaler)"


def kernel_params(kernel, gamma=None, degree=3, coef0=0.0):
    """Keyword arguments of :func:`~sklearn.metrics.pairwise.pairwise_kernels` for ``kernel``.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable
        The kernel, with SVC's names.
    gamma : float or None, default=None
        Coefficient of rbf/poly/sigmoid (numeric; :func:`resolve_gamma` turns
        ``"scale"``/``"auto"`` into a number).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Constant term of the polynomial and sigmoid kernels.

    Returns
    -------
    dict
        The parameters that ``kernel`` uses, by scikit-learn's names.

    See Also
    --------
    kernel_matrix : Computes the kernel with them.

    Examples
    --------
    >>> from linsep.kernels import kernel_params
    >>> kernel_params("poly", gamma=0.5, degree=2)
    {'gamma': 0.5, 'coef0': 0.0, 'degree': 2}
    >>> kernel_params("linear")
    {}
    """
    if callable(kernel) or kernel in ("linear", "precomputed"):
        return {}
    if kernel == "rbf":
        return {"gamma": gamma}
    if kernel in ("poly", "sigmoid"):
        params = {"gamma": gamma, "coef0": coef0}
        if kernel == "poly":
            params["degree"] = degree
        return params
    raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}")


def training_samples(X, kernel):
    """The training samples a kernel model keeps: its own copy, sparse ones in canonical form.

    Prediction evaluates ``k(x, x_i)`` on these rows, so the model must not
    share them with the caller (who may overwrite the array after ``fit``).
    For ``kernel="precomputed"`` ``X`` is the training Gram matrix, which
    prediction never reads (it receives ``k(X_new, X_fit)``): a dense one is
    kept without a copy; a sparse one becomes dense, because every entry of
    a Gram matrix is a kernel value (a stored zero is ``k(x_i, x_j) = 0``)
    and the solvers that factor it need it whole.
    """
    if kernel == "precomputed":
        return X.toarray() if sp.issparse(X) else X
    if sp.issparse(X):
        X = X.copy()  # a copy even when canonical: sum_duplicates works in place
        X.sum_duplicates()
        return X
    return np.array(X, copy=True)


def kernel_matrix(A, B, *, kernel="rbf", gamma=None, degree=3, coef0=0.0):
    """Return ``K[i, j] = k(A_i, B_j)``, checked: shape ``(len(A), len(B))``, finite values.

    Sparse ``A`` and ``B`` are read with duplicate entries summed (module
    docstring); a kernel that returns another shape or a value that is not
    finite raises ``ValueError``.  ``kernel="precomputed"`` returns ``A``
    (already validated) as a dense array.

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n, d)
        Rows of the kernel matrix (for ``"precomputed"``: the matrix itself).
    B : array-like or sparse matrix of shape (m, d)
        Its columns.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable
        The kernel, with SVC's names.
    gamma : float or None, default=None
        Coefficient of rbf/poly/sigmoid (numeric; :func:`resolve_gamma` turns
        ``"scale"``/``"auto"`` into a number).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Constant term of the polynomial and sigmoid kernels.

    Returns
    -------
    ndarray of shape (n, m)
        The kernel values.

    See Also
    --------
    KernelColumnCache : Columns of the training Gram matrix on demand, in bounded memory.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import kernel_matrix
    >>> kernel_matrix(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 1.0]]), kernel="rbf", gamma=0.5)
    array([[0.36787944],
           [1.        ]])
    """
    if kernel == "precomputed":
        return A.toarray() if sp.issparse(A) else np.asarray(A)
    A, B = summed_duplicates(A), summed_duplicates(B)
    if callable(kernel):
        return require_kernel_block(kernel(A, B), (A.shape[0], B.shape[0]), kernel)
    # n_jobs=1: inside a joblib context (a threaded GridSearchCV) scikit-learn would otherwise split the matrix
    # into column chunks across threads, whose products round differently and whose own-row distances are no
    # longer exactly zero; the kernel values must not depend on where the fit runs
    K = pairwise_kernels(A, B, metric=kernel, n_jobs=1, **kernel_params(kernel, gamma, degree, coef0))
    return require_kernel_block(K, (A.shape[0], B.shape[0]), kernel)


NAMESPACE_KERNELS = ("linear", "poly", "rbf", "sigmoid")
"""The kernels :func:`namespace_kernel_matrix` computes in any array-API namespace (a callable is NumPy code)."""


def namespace_kernel_matrix(A, B, xp, *, kernel="rbf", gamma=None, degree=3, coef0=0.0):
    """``K[i, j] = k(A_i, B_j)`` in the namespace ``xp`` of ``A`` and ``B``, on their device, in their type.

    The formulas of scikit-learn's pairwise kernels (those :func:`kernel_matrix`
    calls), written once with array-API functions: linear ``⟨a, b⟩``; RBF
    ``exp(−γ max(‖a‖² + ‖b‖² − 2⟨a, b⟩, 0))`` (the expansion scikit-learn's
    ``euclidean_distances`` uses, negative distances of rounding clipped);
    polynomial ``(γ⟨a, b⟩ + c₀)^degree``; sigmoid ``tanh(γ⟨a, b⟩ + c₀)``.
    ``gamma`` must be numeric (:func:`resolve_gamma`).  Nothing is read on the
    host (the callers check the values where they read them).

    Parameters
    ----------
    A : array of shape (n, d)
        Rows of the kernel matrix (an array of ``xp``).
    B : array of shape (m, d)
        Its columns, of the same namespace, device and type.
    xp : namespace
        The array-API namespace of ``A`` and ``B``.
    kernel : {"linear", "poly", "rbf", "sigmoid"}
        The kernel, with SVC's names.
    gamma, degree, coef0
        As in :func:`kernel_matrix`.

    Returns
    -------
    array of shape (n, m)
        The kernel values, of ``xp`` on ``A``'s device.

    See Also
    --------
    kernel_matrix : The same kernels on NumPy and sparse input (scikit-learn's pairwise kernels).
    namespace_kernel_diagonal : Its diagonal for ``B = A``, without the ``n × n`` product.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import namespace_kernel_matrix
    >>> namespace_kernel_matrix(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 1.0]]), np,
    ...                         kernel="rbf", gamma=0.5)
    array([[0.36787944],
           [1.        ]])
    """
    if kernel not in NAMESPACE_KERNELS:
        raise ValueError(f"kernel must be one of {NAMESPACE_KERNELS} for array-API input, got {kernel!r}")
    inner = A @ B.T
    if kernel == "linear":
        return inner
    if kernel == "rbf":
        distances = -2.0 * inner + xp.sum(A * A, axis=1)[:, None] + xp.sum(B * B, axis=1)[None, :]
        return xp.exp(-gamma * xp.clip(distances, min=0.0))
    return _from_inner(inner, kernel, gamma, degree, coef0, xp)


def namespace_kernel_diagonal(A, xp, *, kernel="rbf", gamma=None, degree=3, coef0=0.0):
    """``k(A_i, A_i)`` for every row of ``A`` in the namespace ``xp`` (:func:`namespace_kernel_matrix`'s diagonal).

    From the rows' squared norms, with no ``n × n`` product: the RBF distance
    ``‖a‖² + ‖a‖² − 2‖a‖²`` is exactly zero, so its diagonal is exactly one,
    as scikit-learn's is for a matrix of ``A`` with itself.

    Parameters
    ----------
    A : array of shape (n, d)
        The rows (an array of ``xp``).
    xp : namespace
        The array-API namespace of ``A``.
    kernel : {"linear", "poly", "rbf", "sigmoid"}
        The kernel, with SVC's names.
    gamma, degree, coef0
        As in :func:`kernel_matrix` (``gamma`` numeric: :func:`resolve_gamma`).

    Returns
    -------
    array of shape (n,)
        ``k(A_i, A_i)``, of ``xp`` on ``A``'s device.

    See Also
    --------
    namespace_kernel_matrix : The whole kernel matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import namespace_kernel_diagonal
    >>> namespace_kernel_diagonal(np.array([[1.0, 2.0], [0.0, 3.0]]), np, kernel="poly", gamma=1.0, degree=2)
    array([25., 81.])
    """
    if kernel not in NAMESPACE_KERNELS:
        raise ValueError(f"kernel must be one of {NAMESPACE_KERNELS} for array-API input, got {kernel!r}")
    squared = xp.sum(A * A, axis=1)
    if kernel == "linear":
        return squared
    if kernel == "rbf":  # exp(−γ·0) for finite rows; a non-finite row gives NaN, as the whole matrix would
        return xp.where(xp.isfinite(squared), xp.ones_like(squared), xp.full_like(squared, float("nan")))
    return _from_inner(squared, kernel, gamma, degree, coef0, xp)


def _from_inner(inner, kernel, gamma, degree, coef0, xp):
    """The polynomial or sigmoid kernel from the inner products ``inner``."""
    scaled = gamma * inner + coef0
    return scaled ** degree if kernel == "poly" else xp.tanh(scaled)


class _RankLimitReached(Exception):
    """Raised by the column source of :func:`low_rank_gram_factor` to end a factorisation that pays no more."""


def is_positive_semidefinite(kernel, coef0=0.0):
    """Whether every Gram matrix of ``kernel`` is positive semi-definite in exact arithmetic.

    True for the linear and RBF kernels, and the polynomial kernel
    ``(γ⟨x, z⟩ + c₀)^p`` with ``c₀ >= 0`` (a sum of products of PSD
    kernels).  The sigmoid kernel is not PSD in general, and nothing is
    known about a callable or a precomputed matrix.
    """
    return kernel in ("linear", "rbf") or (kernel == "poly" and coef0 >= 0)


def low_rank_gram_factor(X, *, kernel, gamma=None, degree=3, coef0=0.0, max_rank_fraction=0.25, block_size=64):
    """``F`` of shape ``(N, r)`` with ``K = F Fᵀ`` to rounding, or ``None`` when ``K`` has no such small factor.

    The Gram matrix of many samples in few dimensions has a small numerical
    rank (RBF on 10 000 points in the plane: about 300).  A pivoted Cholesky
    factorisation to rounding level (``linsep._core.linalg.pivoted_cholesky``
    with ``tol=0``: every residual ``K_ii − ‖F_i‖² <= N·eps·max K_ii``, so
    every entry of ``K − F Fᵀ`` is at rounding level) then computes only
    ``r`` columns of ``K``, costs ``O(N r²)`` instead of the ``O(N³)`` of a
    factor of the whole matrix, and turns a kernel method whose iteration
    multiplies by ``K`` into the linear method on the rows of ``F``, at
    ``O(N r)`` per iteration instead of ``O(N²)``.

    The factorisation stops, and ``None`` is returned, as soon as it has
    asked for more than ``max_rank_fraction · N`` kernel columns (pivot
    candidates included, so ``r`` is smaller): the factor would no longer
    save work (at ``r = N/4`` it already costs ``N³/16``); likewise past the
    width that linsep's linear methods still solve directly
    (``linsep._core.linalg.too_wide_for_direct``), beyond which the ``r × r``
    systems of the linear method would need an iterative solver.  ``None`` also
    for kernels that are not positive semi-definite
    (:func:`is_positive_semidefinite`), where a Cholesky factor does not
    represent ``K``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Training samples (not a precomputed Gram matrix).
    kernel, gamma, degree, coef0
        As in :func:`kernel_matrix` (``gamma`` numeric).
    max_rank_fraction : float, default=0.25
        Most kernel columns worth computing, as a fraction of ``N``.
    block_size : int, default=64
        Kernel columns computed at a time.
    """
    if not is_positive_semidefinite(kernel, coef0):
        return None
    n = X.shape[0]
    max_columns = int(max_rank_fraction * n)
    if max_columns < block_size:  # not even one block of columns would pay: the whole matrix is as cheap
        return None
    params = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": coef0}
    requested = 0

    def columns(idx):
        nonlocal requested
        requested += len(idx)
        if requested > max_columns or too_wide_for_direct(requested + 1):  # r <= requested; +1: the bias
            raise _RankLimitReached
        return kernel_matrix(X, X[idx], **params)

    diagonal = np.concatenate([np.diagonal(kernel_matrix(X[i:i + 512], X[i:i + 512], **params))
                               for i in range(0, n, 512)])
    try:
        F, _, _ = pivoted_cholesky(columns, diagonal, tol=0.0, block_size=block_size)
    except _RankLimitReached:
        return None
    return F


def resolve_gamma(gamma, X):
    """Return the numeric ``gamma`` of SVC's conventions for the training data ``X``.

    ``"scale"``: ``1 / (d · Var(X))``; ``"auto"`` and ``None``: ``1 / d``
    (``None`` is also scikit-learn's pairwise-kernel default); a number is kept.

    Parameters
    ----------
    gamma : {"scale", "auto"}, float or None
        The estimator's ``gamma`` parameter.
    X : array-like or sparse matrix of shape (N, d)
        The training data.

    Returns
    -------
    float
        The coefficient the kernel uses.

    See Also
    --------
    kernel_params : Where the resolved value goes.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import resolve_gamma
    >>> X = np.array([[0.0, 2.0], [2.0, 0.0]])
    >>> resolve_gamma("scale", X), resolve_gamma("auto", X), resolve_gamma(0.1, X)
    (0.5, 0.5, 0.1)
    """
    n_features = X.shape[1]
    if gamma == "scale":
        if sp.issparse(X):
            mean = np.asarray(X.mean())
            variance = float(np.asarray(X.multiply(X).mean()) - mean**2)
        elif isinstance(X, np.ndarray) or not hasattr(X, "__dlpack__"):
            variance = float(np.asarray(X).var())
        else:  # an array of another namespace (array-API input): its variance on its device, one number read
            from sklearn.utils._array_api import get_namespace

            xp, _ = get_namespace(X)
            variance = float(xp.var(X))
        return 1.0 / (n_features * variance) if variance > 0 else 1.0
    if gamma is None or gamma == "auto":
        return 1.0 / n_features
    return float(gamma)


class KernelColumnCache:
    """Kernel columns ``K[:, j] = k(X, x_j)`` computed on demand, least recently used evicted.

    Memory is ``n_columns × N`` floats, never the ``N × N`` Gram matrix: with
    ``cache_size`` megabytes (SVC's unit) ``n_columns = cache_size·2²⁰ / (8N)``,
    at least one and at most ``N``.  Solvers that revisit few samples (the
    support vectors of SK, SMO) then compute each of their columns once.

    The column returned is a view of the cache's storage: read it before the
    next call, which may overwrite it.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Training samples; for ``kernel="precomputed"`` the Gram matrix itself
        (columns are then slices of it and nothing is cached).
    kernel, gamma, degree, coef0
        As in :func:`kernel_matrix` (``gamma`` numeric or None here; see
        :func:`resolve_gamma`).  Columns equal ``kernel_matrix(X, X[[j]])``
        up to rounding.
    cache_size : float, default=200
        Megabytes of column storage.

    Attributes
    ----------
    n_computed : int
        Columns computed (cache misses).
    n_requests : int
        Columns asked for.

    See Also
    --------
    kernel_matrix : The whole matrix at once.
    linsep.KernelSchlesingerKozinecClassifier : The estimator built on the cache.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import KernelColumnCache, kernel_matrix
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> cache = KernelColumnCache(X, kernel="rbf", gamma=0.5, cache_size=0.001)   # room for 2 columns
    >>> np.allclose(cache.column(7), kernel_matrix(X, X[[7]], kernel="rbf", gamma=0.5).ravel())
    True
    >>> _ = cache.column(7); cache.n_requests, cache.n_computed      # the second request was a hit
    (2, 1)
    """

    def __init__(self, X, *, kernel="rbf", gamma=None, degree=3, coef0=0.0, cache_size=200.0):
        if not (callable(kernel) or kernel in KERNELS):
            raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}")
        self.X = X = summed_duplicates(X)  # rows are scattered entry by entry in _compute
        self.kernel = kernel
        self.gamma = 1.0 / X.shape[1] if gamma is None else float(gamma)
        self.degree = degree
        self.coef0 = float(coef0)
        n = X.shape[0]
        self.n_columns = int(min(n, max(1, cache_size * 2**20 // (8 * n))))
        self.n_computed = 0
        self.n_requests = 0
        self._slots = OrderedDict()  # column index -> row of _store, oldest first
        self._store = None
        self._sq_norms = None
        if kernel == "rbf":  # ‖x_i - x_j‖² = ‖x_i‖² + ‖x_j‖² - 2⟨x_i, x_j⟩
            self._sq_norms = (np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X)
                              else np.einsum("ij,ij->i", X, X))

    def column(self, j):
        """Return ``K[:, j]`` (read-only view, valid until the next call).

        Parameters
        ----------
        j : int
            Index of the training sample ``x_j``.

        Returns
        -------
        ndarray of shape (N,)
            ``k(x_i, x_j)`` for every training sample ``x_i``.
        """
        self.n_requests += 1
        if self.kernel == "precomputed":
            return (np.asarray(self.X[:, [j]].toarray()).ravel() if sp.issparse(self.X)
                    else self.X[:, j])
        slot = self._slots.get(j)
        if slot is not None:
            self._slots.move_to_end(j)
            return self._store[slot]
        if self._store is None:
            self._store = np.empty((self.n_columns, self.X.shape[0]))
        if len(self._slots) < self.n_columns:
            slot = len(self._slots)
        else:
            _, slot = self._slots.popitem(last=False)
        self._compute(j, self._store[slot])
        self._slots[j] = slot
        self.n_computed += 1
        return self._store[slot]

    def block(self, rows, cols):
        """Return the submatrix ``K[rows][:, cols]`` (a new array), computed directly.

        Nothing is cached: solvers that work on a small working set (kernel
        SK with shrinking) ask for its Gram block once per outer round.  The
        arithmetic is that of :meth:`column`, so both agree to rounding.

        Parameters
        ----------
        rows, cols : array-like of int
            Indices of the training samples of the rows and of the columns.

        Returns
        -------
        ndarray of shape (len(rows), len(cols))
            The kernel values.
        """
        rows, cols = np.asarray(rows), np.asarray(cols)
        X, kernel = self.X, self.kernel
        if kernel == "precomputed":
            sub = X[rows][:, cols]
            return np.asarray(sub.toarray() if sp.issparse(sub) else sub, dtype=float)
        if callable(kernel):
            K = require_kernel_block(kernel(X[rows], X[cols]), (rows.size, cols.size), kernel)
            return np.asarray(K.toarray() if sp.issparse(K) else K, dtype=float)
        out = X[rows] @ X[cols].T  # ⟨x_i, x_j⟩, one BLAS gemm
        out = np.array(out.toarray() if sp.issparse(out) else out, dtype=float)
        self._finish(out, None if self._sq_norms is None else self._sq_norms[rows][:, None],
                     None if self._sq_norms is None else self._sq_norms[cols])
        require_finite(out, f"kernel values of kernel {kernel}", _OVERFLOW_HINT)
        return out

    def dot(self, cols, coef):
        """Return ``K[:, cols] @ coef`` from (cached) columns, one at a time.

        Memory stays that of the cache; columns already cached cost one axpy.

        Parameters
        ----------
        cols : array-like of int
            Indices of the columns.
        coef : array-like of float
            One coefficient per column.

        Returns
        -------
        ndarray of shape (N,)
            ``Σ_j coef_j K[:, cols_j]``.
        """
        out = np.zeros(self.X.shape[0])
        for j, c in zip(np.asarray(cols).tolist(), np.asarray(coef, dtype=float).tolist()):
            out += c * self.column(j)
        return out

    def _compute(self, j, out):
        X, kernel = self.X, self.kernel
        if callable(kernel):
            column = require_kernel_block(kernel(X, X[[j]]), (X.shape[0], 1), kernel)
            out[:] = np.ravel(column.toarray() if sp.issparse(column) else column)
            return
        if sp.issparse(X):  # the row's stored entries scattered into a d-vector (X itself stays sparse)
            row = sp.csr_matrix(X[[j]])
            x_j = np.zeros(X.shape[1])
            x_j[row.indices] = row.data
        else:
            x_j = X[j]
        np.copyto(out, np.asarray(X @ x_j).ravel())  # ⟨x_i, x_j⟩, one BLAS gemv
        self._finish(out, self._sq_norms, None if self._sq_norms is None else self._sq_norms[j])
        require_finite(out, f"kernel values of kernel {kernel}", _OVERFLOW_HINT)

    def _finish(self, out, sq_rows, sq_cols):
        """Turn the inner products in ``out`` into kernel values, in place."""
        kernel = self.kernel
        if kernel == "linear":
            return
        if kernel == "rbf":
            out *= -2.0
            out += sq_rows
            out += sq_cols
            np.maximum(out, 0.0, out=out)  # rounding can make a distance negative
            out *= -self.gamma
            np.exp(out, out=out)
            return
        out *= self.gamma
        out += self.coef0
        if kernel == "poly":
            out **= self.degree
        else:  # sigmoid
            np.tanh(out, out=out)
