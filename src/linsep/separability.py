"""Is a two-class data set linearly separable?  A verdict with a checked certificate.

Two classes are (strictly) linearly separable exactly when some ``W = (w, w_0)``
has ``Y W > 0`` for the sign-normalised matrix ``Y = diag(y)[X, 1]``.  By
Gordan's theorem of the alternative, exactly one of these holds:

* there is ``W`` with ``Y W > 0`` (a separating hyperplane), or
* there is ``u >= 0``, ``u != 0`` with ``Yᵀ u = 0`` (then ``0 = uᵀ Y W`` for
  every ``W``, which is impossible if ``Y W > 0``).

:func:`check_separability` first runs Ho–Kashyap, which ends either with a
separating ``W`` or with the proof ``u = -E`` (Lauer & Bloch 2006, §2.1;
Duda, Hart & Stork §5.9).  HK gives no bound on the iterations a proof needs,
so when its budget runs out the answer comes from an exact linear program
(scipy's HiGHS): the Gordan system ``Yᵀu = 0, 1ᵀu = 1, u >= 0`` for the
certificate, or ``Y W >= 1`` for the hyperplane.  Every certificate is
checked before it is returned, and the result says which one was checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

from ._base import encode_pm1
from ._design import sign_normalized
from ._result import SEPARABLE
from .solvers.ho_kashyap import ho_kashyap

# Relative residual ‖Yᵀu‖∞ / ‖|Y|ᵀu‖∞ accepted for a non-separability proof.
PROOF_RTOL = 1e-9


@dataclass(frozen=True)
class SeparatingHyperplane:
    """``w·x + intercept`` is positive on ``classes[1]`` and negative on ``classes[0]``."""

    coef: np.ndarray
    intercept: float
    margin: float
    """Geometric margin ``min_i y_i (w·x_i + w_0) / ‖w‖`` (> 0)."""


@dataclass(frozen=True)
class NonSeparabilityProof:
    """``u >= 0``, ``u != 0`` with ``Σ_i u_i y_i (x_i, 1) = 0`` (Gordan's alternative)."""

    u: np.ndarray
    residual: float
    """Relative residual ``‖Yᵀu‖∞ / ‖|Y|ᵀu‖∞`` (0 in exact arithmetic)."""


@dataclass(frozen=True)
class SeparabilityResult:
    """Verdict of :func:`check_separability`.

    Attributes
    ----------
    separable : bool
    certificate : SeparatingHyperplane or NonSeparabilityProof
        Checked before being returned.
    method : {"ho_kashyap", "linear_programming"}
        Which algorithm produced the certificate.
    classes : ndarray
        The two labels; ``classes[1]`` is the positive side.
    n_iter : int
        Ho–Kashyap iterations spent.
    """

    separable: bool
    certificate: SeparatingHyperplane | NonSeparabilityProof
    method: str
    classes: np.ndarray
    n_iter: int

    def summary(self):
        """One line describing the verdict and the certificate that was checked."""
        c = self.certificate
        if self.separable:
            return (f"separable ({self.method}): hyperplane with geometric margin {c.margin:.6g}, "
                    f"all points strictly on their side")
        support = int(np.count_nonzero(c.u > 0))
        return (f"not separable ({self.method}): u >= 0 on {support} points with "
                f"sum_i u_i y_i (x_i, 1) = 0 (relative residual {c.residual:.2e})")


def proof_residual(Y, u):
    """Relative residual ``‖Yᵀu‖∞ / ‖|Y|ᵀu‖∞`` of a candidate proof (``inf`` if ``u`` is not ``>= 0, != 0``)."""
    u = np.asarray(u, dtype=float)
    if u.min() < 0 or u.sum() <= 0:
        return np.inf
    absY = abs(Y) if sp.issparse(Y) else np.abs(Y)
    scale = np.abs(np.asarray(absY.T @ u)).max()
    return float(np.abs(np.asarray(Y.T @ u)).max() / scale) if scale > 0 else np.inf


def _hyperplane(Y, W):
    scores = np.asarray(Y @ W)
    if scores.min() <= 0:
        return None
    norm = np.linalg.norm(W[:-1])
    margin = scores.min() / norm if norm > 0 else np.inf
    return SeparatingHyperplane(coef=W[:-1].copy(), intercept=float(W[-1]), margin=float(margin))


def _row_normalized(Y):
    # Positive row scaling changes neither separability nor the sign of any
    # certificate component, and keeps the linear programs well scaled.
    norms = np.sqrt(np.asarray(Y.multiply(Y).sum(axis=1)).ravel() if sp.issparse(Y)
                    else np.einsum("ij,ij->i", Y, Y))
    norms[norms == 0] = 1.0
    return (sp.diags(1.0 / norms) @ Y) if sp.issparse(Y) else Y / norms[:, None], norms


def check_separability(X, y, *, max_iter=1000):
    """Decide whether two classes are linearly separable, with a certificate.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (N, d)
    y : array-like of shape (N,)
        Exactly two distinct labels.
    max_iter : int, default=1000
        Ho–Kashyap budget before the exact linear program decides.

    Returns
    -------
    SeparabilityResult

    Examples
    --------
    >>> from linsep import check_separability
    >>> check_separability([[0, 0], [1, 1], [0, 1], [1, 0]], [0, 0, 1, 1]).separable
    False
    """
    X, y = check_X_y(X, y, accept_sparse=("csr", "csc"), dtype=np.float64)
    check_classification_targets(y)
    targets, classes = encode_pm1(y)
    if len(classes) != 2:
        raise ValueError(
            f"check_separability decides between two classes; got {len(classes)} "
            f"(for more, check each one-vs-rest problem separately)")
    Y = sign_normalized(X, targets[:, 0])
    Yn, _ = _row_normalized(Y)

    hk = ho_kashyap(Yn, b0=1.0, max_iter=max_iter, tol=0.0, stop_at_separation=True)
    if hk.status == SEPARABLE:
        plane = _hyperplane(Y, hk.weights)
        if plane is not None:
            return SeparabilityResult(True, plane, "ho_kashyap", classes, hk.n_iter)
    if hk.certificate is not None:
        # u for the row-normalised rows is a valid u for Y after rescaling by 1/‖Y_i‖.
        u = hk.certificate / np.maximum(_row_normalized(Y)[1], np.finfo(float).tiny)
        residual = proof_residual(Y, u)
        if residual <= PROOF_RTOL:
            return SeparabilityResult(False, NonSeparabilityProof(u, residual), "ho_kashyap",
                                      classes, hk.n_iter)
    return _decide_by_linear_programming(Y, Yn, classes, hk.n_iter)


def _decide_by_linear_programming(Y, Yn, classes, n_iter):
    n_samples, n_cols = Yn.shape
    A_eq = sp.vstack([sp.csr_matrix(Yn.T), sp.csr_matrix(np.ones((1, n_samples)))]) if sp.issparse(Yn) \
        else np.vstack([Yn.T, np.ones((1, n_samples))])
    b_eq = np.concatenate([np.zeros(n_cols), [1.0]])
    gordan = linprog(np.zeros(n_samples), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if gordan.status == 0:
        norms = _row_normalized(Y)[1]
        u = np.maximum(gordan.x, 0.0) / norms
        return SeparabilityResult(False, NonSeparabilityProof(u, proof_residual(Y, u)),
                                  "linear_programming", classes, n_iter)
    primal = linprog(np.zeros(n_cols), A_ub=-Yn, b_ub=-np.ones(n_samples),
                     bounds=(None, None), method="highs")
    if primal.status == 0:
        plane = _hyperplane(Y, primal.x)
        if plane is not None:
            return SeparabilityResult(True, plane, "linear_programming", classes, n_iter)
    raise RuntimeError(  # pragma: no cover - both LPs failing means numerical breakdown
        f"separability undecided: Gordan LP status {gordan.status} ({gordan.message}), "
        f"primal LP status {primal.status} ({primal.message})")
