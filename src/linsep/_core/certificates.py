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
* a hyperplane is accepted when ``y_i (w·x_i + w_0) > 0`` and finite for every
  sample, evaluated as the estimators' ``decision_function`` evaluates it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.signed_design import summed_duplicates

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


def separates(scores, y):
    """Whether every ``y_i · score_i`` is finite and strictly positive (``scores`` and ``y`` of shape (N,))."""
    signed = np.asarray(y, dtype=np.float64).ravel() * np.asarray(scores, dtype=np.float64).ravel()
    return bool(np.all(np.isfinite(signed)) and signed.min(initial=np.inf) > 0)


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
