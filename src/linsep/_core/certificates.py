"""Independent checks of the certificates behind a separability verdict.

Gordan's alternative for ``Y = diag(y)[X, 1]``: either some ``W`` has
``Y W > 0`` (a separating hyperplane) or some ``u >= 0, u != 0`` has
``Yᵀu = 0`` (a proof that none exists).  Solvers produce candidates; the
functions here check them without trusting the solver, and the same way at
every data scale:

* a proof is accepted when, **for every column** ``j`` of ``Y`` (bias
  included), ``|Σ_i u_i Y_ij| <= rtol · Σ_i u_i |Y_ij|``.  Each column is
  judged against its own magnitude, so a small feature column is not hidden
  by the bias column, and the test is invariant to scaling any column or
  ``u``.  Such a ``u`` rules out every hyperplane whose relative margin
  ``min_i Y_i W / max_i |Y_i| |W|`` exceeds ``rtol``: for a positive ``W``
  margin, ``uᵀ Y W`` would be too large to cancel;
* a hyperplane is accepted when ``y_i (w·x_i + w_0) > τ_i`` and finite for every
  sample, evaluated as the estimators' ``decision_function`` evaluates it, with
  ``τ_i`` the rounding bound of that evaluation (:func:`side_tolerance`): a
  point within ``τ_i`` of the hyperplane is *on* it, never strictly on its side.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.signed_design import signed_scores, summed_duplicates

CERTIFICATE_RTOL = 1e-9
"""Largest per-column relative residual of a proof accepted by :func:`linsep.check_separability`."""
FIT_PROOF_RTOL = 1e-6
"""The same for the ``"not_separable"`` status of a fit: looser, because some solvers stop when the
proof holds to about the square root of the machine precision (Kozinec's hulls that touch, where
``‖w‖²`` reaches rounding level); it still rules out every hyperplane of relative margin above 1e-6."""

_BLOCK_ROWS = 4096  # rows per block: the checks never hold a copy of all of X
# Sums whose terms are all below this have lost too many bits to certify anything.
_TOO_SMALL = 2.0**-900


def proof_residuals(X, y, u):
    """Per-column relative residuals ``|Σ_i u_i Y_ij| / Σ_i u_i |Y_ij|`` of ``Y = diag(y)[X, 1]``.

    Returns an array of length ``d + 1`` (the bias column last), or ``None``
    when ``u`` is not a candidate (not finite, a negative entry, all zero, or
    the wrong length).  A column that is exactly zero on the support of
    ``u`` has residual 0; one whose terms are too small to be summed reliably
    has residual ``inf``.  Computed on the support of ``u``, each column
    rescaled by a power of two to its largest magnitude there and ``u`` by
    its maximum, a block of rows at a time: no overflow, no copy of all of ``X``.
    """
    u = np.asarray(u, dtype=np.float64).ravel()
    if u.shape[0] != X.shape[0] or not np.all(np.isfinite(u)) or u.min(initial=0.0) < 0 or not u.max(initial=0.0) > 0:
        return None
    support = np.flatnonzero(u > 0)
    weights = (np.asarray(y, dtype=np.float64).ravel() * u)[support]
    weights = weights / np.abs(weights).max()
    if sp.issparse(X):
        largest, signed, magnitude = _sparse_column_sums(X, support, weights)
    else:
        largest, signed, magnitude = _dense_column_sums(X, support, weights)
    signed[-1], magnitude[-1] = weights.sum(), np.abs(weights).sum()
    return residuals_from_sums(signed, magnitude, largest)


def residuals_from_sums(signed, magnitude, largest):
    """Per-column relative residuals from the sums ``Σ w_i Y_ij``, ``Σ |w_i Y_ij|`` (bias last) and column maxima."""
    with np.errstate(divide="ignore", invalid="ignore"):
        residuals = np.abs(signed) / magnitude
    present = np.append(largest > 0, True)  # the bias column is never zero
    residuals[~present] = 0.0  # a column that is zero on the support of u
    residuals[present & (magnitude < _TOO_SMALL)] = np.inf
    return residuals


# The dense steps, shared with blockwise callers (the Dask backend): column maxima of the
# support's rows, then per-block sums in power-of-two rescaled columns.
def column_largest(block):
    """Per-column ``max |x|`` of a dense block of rows (zeros for no rows)."""
    return np.abs(block).max(axis=0, initial=0.0)


def power_of_two_shifts(largest):
    """Exponents that bring each column's largest magnitude into ``[1/2, 1)`` (0 for a zero column)."""
    return np.where(largest > 0, -np.frexp(largest)[1], 0).astype(np.int32)


def proof_block_sums(block, weights, shifts):
    """A dense block's share of ``Σ_i w_i x_ij`` and ``Σ_i |w_i x_ij|``, columns rescaled by ``2^shifts``."""
    block = np.ldexp(block, shifts)
    return weights @ block, np.abs(weights) @ np.abs(block)


def _sparse_column_sums(X, support, weights):
    """Column maxima, ``Σ w_i x_ij`` and ``Σ |w_i x_ij|`` over the rows ``support`` of a sparse ``X``.

    Only the stored entries are read (one CSR copy of the support's rows), each column
    rescaled by a power of two to its largest magnitude: never a dense row block.
    """
    n_cols = X.shape[1]
    rows = summed_duplicates(sp.csr_matrix(X)[support])  # |1e9| + |3 - 1e9| would hide a cell of 3
    values = np.asarray(rows.data, dtype=np.float64)
    largest = np.zeros(n_cols)
    np.maximum.at(largest, rows.indices, np.abs(values))
    shifts = power_of_two_shifts(largest)
    terms = np.ldexp(values, shifts[rows.indices]) * np.repeat(weights, np.diff(rows.indptr))
    signed = np.zeros(n_cols + 1)
    magnitude = np.zeros(n_cols + 1)
    signed[:-1] = np.bincount(rows.indices, weights=terms, minlength=n_cols)
    magnitude[:-1] = np.bincount(rows.indices, weights=np.abs(terms), minlength=n_cols)
    return largest, signed, magnitude


def _dense_column_sums(X, support, weights):
    """As :func:`_sparse_column_sums` for a dense ``X``, a block of rows at a time."""

    def blocks():  # rows of the support, a block at a time, dense float64
        for start in range(0, support.size, _BLOCK_ROWS):
            yield start, np.asarray(X[support[start:start + _BLOCK_ROWS]], dtype=np.float64)

    largest = np.zeros(X.shape[1])
    for _, block in blocks():
        np.maximum(largest, column_largest(block), out=largest)
    shifts = power_of_two_shifts(largest)
    signed = np.zeros(X.shape[1] + 1)
    magnitude = np.zeros(X.shape[1] + 1)
    for start, block in blocks():
        block_signed, block_magnitude = proof_block_sums(block, weights[start:start + _BLOCK_ROWS], shifts)
        signed[:-1] += block_signed
        magnitude[:-1] += block_magnitude
    return largest, signed, magnitude


def design_proof_residuals(Y, u):
    """Per-column relative residuals ``|Σ_i u_i Y_ij| / Σ_i u_i |Y_ij|`` of a sign-normalised ``Y`` itself.

    ``Y`` (dense or sparse, shape (N, p)) holds its own signs and bias column,
    so every one of its ``p`` columns is checked as :func:`proof_residuals`
    checks ``diag(y)[X, 1]``; ``None`` when ``u`` is not a candidate.
    """
    residuals = proof_residuals(Y, np.ones(Y.shape[0]), u)
    return None if residuals is None else residuals[:-1]  # drop the constant column proof_residuals adds


def is_proof(X, y, u, rtol=CERTIFICATE_RTOL):
    """Whether ``u`` proves that ``X, y`` (labels ``±1``) are not linearly separable (see the module)."""
    residuals = proof_residuals(X, y, u)
    return residuals is not None and bool(np.all(residuals <= rtol))


def decision_scores(X, coef, intercept):
    """``X coefᵀ + intercept`` as :class:`~sklearn.linear_model._base.LinearClassifierMixin` computes it."""
    from sklearn.utils.extmath import safe_sparse_dot

    return safe_sparse_dot(X, np.atleast_2d(coef).T, dense_output=True) + intercept


def rounding_bound(n_terms, dtype=np.float64):
    """``γ_n = n u / (1 − n u)``: the relative error bound of a sum of ``n`` rounded products.

    ``u`` is the unit roundoff of ``dtype`` (``eps / 2``).  Computed in
    floating point, in *any* order (BLAS blocking and FMA included), a dot
    product with ``n`` terms satisfies
    :math:`|\\mathrm{fl}(\\sum_j a_j b_j) - \\sum_j a_j b_j| \\le \\gamma_n \\sum_j |a_j b_j|`
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1,
    eq. (3.5)).  ``inf`` when ``n u >= 1``.
    """
    u = float(np.finfo(dtype).eps) / 2.0
    nu = float(n_terms) * u
    return nu / (1.0 - nu) if nu < 1.0 else np.inf


def side_tolerance(X, coef, intercept):
    """Per-sample tolerance ``τ_i`` of "strictly on its side": within it of the hyperplane is *on* it.

    .. math::

        \\tau_i = \\gamma_{d+1} \\Bigl( \\sum_{j=1}^{d} |x_{ij}|\\,|w_j| + |w_0| \\Bigr),
        \\qquad \\gamma_n = \\frac{n u}{1 - n u},

    with :math:`u` the unit roundoff of the precision the score is computed in
    (:math:`2^{-53}`; :math:`2^{-24}` when the data and the weights are both
    float32, as a float32 model's ``decision_function`` computes it): the bound of :func:`rounding_bound` on the rounding error of the computed
    score :math:`f(x_i) = w \\cdot x_i + w_0` (``d`` products and the bias:
    ``d + 1`` terms).  Why this one: if the stored data and weights put
    :math:`x_i` exactly on the hyperplane (or on the wrong side), the
    computed :math:`y_i f(x_i)` is at most :math:`\\tau_i`, whatever order
    BLAS sums in; so :math:`y_i f(x_i) > \\tau_i` *proves* that the point is
    strictly on its side in exact arithmetic, and margin 0 can never read
    "strictly separated".  It scales with the data and the weights (no
    absolute threshold) and is far below any margin a teacher would draw
    (about :math:`3.3 \\cdot 10^{-16}` of :math:`|x_i| \\cdot |w| + |w_0|` in two
    dimensions).  The ``"separable"`` verdict of every linear estimator, the
    hyperplanes :func:`linsep.check_separability` accepts, the Kozinec/SK
    stopping rules and the trace's ``training_errors`` use it
    (:func:`separates`, :func:`strict_errors`, :func:`signed_errors`); a kernel model
    :math:`f(x) = \\sum_j \\beta_j k(x_j, x) + b` uses it with the kernel row
    :math:`k(x_j, x_i)` as :math:`x_i` and the dual coefficients as :math:`w`.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (N, d)
        The samples (or kernel rows).
    coef : ndarray of shape (d,) or (K, d)
        The weights ``w`` (one row per binary problem).
    intercept : float or ndarray of shape (K,)
        The biases ``w_0``.

    Returns
    -------
    ndarray of shape (N,) (1-D ``coef``) or (N, K)
    """
    work = _score_dtype(X, coef)
    coef = np.asarray(coef, dtype=np.float64)
    flat = coef.ndim == 1
    coef = np.atleast_2d(coef)
    with np.errstate(over="ignore", invalid="ignore"):
        magnitude = _absolute_products(X, np.abs(coef).T) + np.abs(np.asarray(intercept, dtype=np.float64))
    tau = rounding_bound(coef.shape[1] + 1, work) * magnitude
    return tau.ravel() if flat else tau


# Entries of |X| taken at a time by _absolute_products: its float64 work block stays near 2 MiB, so the
# tolerance of a large fit's verdict costs no copy of X.
_ABS_BLOCK_ENTRIES = 1 << 18


def _absolute_products(X, A):
    """``|X| A`` in float64, shape (N, K), for ``A >= 0`` of shape (d, K); dense ``X`` by blocks of rows."""
    from sklearn.utils.extmath import safe_sparse_dot

    if sp.issparse(X):
        return np.asarray(safe_sparse_dot(abs(X), A, dense_output=True), dtype=np.float64)
    X = np.asarray(X)
    out = np.empty((X.shape[0], A.shape[1]))
    step = max(1, _ABS_BLOCK_ENTRIES // max(1, X.shape[1]))
    for start in range(0, X.shape[0], step):
        block = np.array(X[start:start + step], dtype=np.float64)
        out[start:start + step] = np.abs(block, out=block) @ A
    return out


def _score_dtype(X, coef):
    """The precision a score ``X w`` is computed in: float32 only when the data and the weights both are."""
    return np.result_type(getattr(X, "dtype", np.float64), np.asarray(coef).dtype, np.float32)


def _signed(scores, y):
    return np.asarray(y, dtype=np.float64).ravel() * np.asarray(scores, dtype=np.float64).ravel()


def separates(scores, y, tolerance=0.0):
    """Whether every ``y_i · score_i`` is finite and above ``tolerance`` (:func:`side_tolerance`; shape (N,) or scalar)."""
    signed = _signed(scores, y)
    tolerance = np.broadcast_to(np.asarray(tolerance, dtype=np.float64).ravel(), signed.shape)
    return bool(np.all(np.isfinite(signed)) and np.all(signed > tolerance))


def strict_errors(scores, y, tolerance=0.0):
    """Training errors as every linsep verdict and trace counts them: ``y_i · score_i <= τ_i`` (or not finite).

    A point on the hyperplane (within :func:`side_tolerance` of it) is an
    error: it is not strictly on its side, whatever side ``predict`` breaks
    the tie to.  So a model is ``"separable"`` exactly when this count is 0.
    """
    signed = _signed(scores, y)
    tolerance = np.broadcast_to(np.asarray(tolerance, dtype=np.float64).ravel(), signed.shape)
    with np.errstate(invalid="ignore"):
        return int(np.count_nonzero(~(np.isfinite(signed) & (signed > tolerance))))


def signed_errors(Y, W, signed=None):
    """:func:`strict_errors` of augmented weights on a sign-normalised design: the count a trace records.

    ``Y = diag(y) [X, 1]`` (an array, a sparse matrix, or a
    ``linsep._core.signed_design`` view of ``X``), ``W = [w, w_0]`` (bias
    last): row ``i`` is an error when :math:`(Y W)_i \\le \\tau_i`,
    :math:`\\tau_i = \\gamma_{d+1} |Y_i| \\cdot |W|` (:math:`|Y_i| = [|x_i|, 1]`),
    the :func:`side_tolerance` of the score :math:`y_i f(x_i)`.  ``signed``:
    ``Y W`` when the caller has it already.
    """
    work = _score_dtype(getattr(Y, "X", Y), W)
    W = np.asarray(W, dtype=np.float64).ravel()
    if signed is None:
        signed = Y @ W
    X = getattr(Y, "X", None)
    if X is not None:  # a view of X: |Y_i| = [|x_i|, 1], its rows (if a subset) picked
        rows = getattr(Y, "rows", None)
        X = X if rows is None else X[rows]
        magnitude = _absolute_products(X, np.abs(W[:-1])[:, None])[:, 0] + abs(W[-1])
    else:
        magnitude = _absolute_products(Y, np.abs(W)[:, None])[:, 0]
    tolerance = rounding_bound(W.shape[0], work) * magnitude
    return strict_errors(np.asarray(signed, dtype=np.float64).ravel(), 1.0, tolerance)


def sample_errors(X, y, W):
    """:func:`signed_errors` of ``W = [w, w_0]`` on samples ``X`` with labels ``y`` (±1), ``Y`` never formed."""
    W = np.asarray(W, dtype=np.float64).ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        return strict_errors(signed_scores(X, y, W), 1.0, side_tolerance(X, W[:-1], W[-1]))


def nonseparability_certificate(E, D=None, *, xp=None):
    """The certificate of a Ho–Kashyap iterate that proves non-separability: ``u = D · max(−E, 0)``.

    Without a penalty ``Yᵀ D E = 0`` at every iterate, so where ``E <= 0``
    (and ``E != 0``, :func:`proof_test`) ``u >= 0``, ``u != 0`` and
    ``Yᵀ u = 0``: no ``W`` has ``Y W > 0`` (Ho & Kashyap, 1965).  ``D`` is
    the IRLS weights (absolute errors; ``None``: squared errors, ``D = I``).
    ``E`` may be a NumPy array or one block of a dask design; ``xp``, the
    namespace of an array-API ``E`` (its ``clip`` takes keyword bounds).
    """
    u = np.maximum(-E, 0.0) if xp is None else xp.clip(-E, min=0.0)
    return u if D is None else u * D
