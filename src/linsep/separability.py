"""Is a two-class data set linearly separable?  A verdict with a checked certificate.

Two classes are (strictly) linearly separable exactly when some ``W = (w, w_0)``
has ``Y W > 0`` for the sign-normalised matrix ``Y = diag(y)[X, 1]``.  By
Gordan's theorem of the alternative, exactly one of these holds:

* there is ``W`` with ``Y W > 0`` (a separating hyperplane), or
* there is ``u >= 0``, ``u != 0`` with ``Yᵀ u = 0`` (then ``0 = uᵀ Y W`` for
  every ``W``, which is impossible if ``Y W > 0``).

:func:`~linsep.check_separability` first runs Ho–Kashyap, which ends either with a
separating ``W`` or with the proof ``u = -E`` (Lauer & Bloch 2006, §2.1;
Duda, Hart & Stork §5.9).  HK gives no bound on the iterations a proof needs,
so when its budget runs out the answer comes from an exact linear program
(scipy's HiGHS): the Gordan system ``Yᵀu = 0, 1ᵀu = 1, u >= 0`` for the
certificate, or ``Y W >= 1`` for the hyperplane.

Every certificate is checked before it is returned, independently of the
solver that found it (``linsep._certificates``): a hyperplane must put
every sample strictly on its side, with finite scores, in the original
units; a proof ``u`` must satisfy ``|Σ_i u_i Y_ij| <= rtol Σ_i u_i |Y_ij|``
for every column ``j`` (bias included), which no data with a separating
hyperplane of relative margin above ``rtol = 1e-9`` admit.  Columns of any
representable magnitude are first rescaled by powers of two
(``linsep._design.column_shifts``; exact, and it changes neither the
verdict nor the certificates).  When no candidate passes its check, the
answer is ``undecided`` (``separable is None``, no certificate): never an
unchecked proof.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

from ._base import encode_pm1
from ._certificates import PROOF_RTOL, decision_scores, design_proof_residuals, is_proof, proof_residuals, separates
from ._design import column_shifts, scale_columns, sign_normalized, unscale_coef
from ._result import NOT_SEPARABLE, SEPARABLE, UNDECIDED
from .solvers.ho_kashyap import ho_kashyap


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
    """Largest per-column relative residual ``|Σ_i u_i Y_ij| / Σ_i u_i |Y_ij|`` (0 in exact arithmetic)."""


@dataclass(frozen=True)
class SeparabilityResult:
    """Verdict of :func:`check_separability`.

    Attributes
    ----------
    separable : bool or None
        ``True`` / ``False`` with a checked certificate; ``None`` when
        undecided (no candidate certificate passed its check).
    certificate : SeparatingHyperplane, NonSeparabilityProof or None
        Checked before being returned; ``None`` when undecided.
    method : {"ho_kashyap", "linear_programming"}
        Which algorithm produced the certificate (the last one tried when
        undecided).
    classes : ndarray
        The two labels; ``classes[1]`` is the positive side.
    n_iter : int
        Ho–Kashyap iterations spent.

    See Also
    --------
    check_separability : The function that returns it.
    linsep.inspection.SeparabilityDisplay : Draws the verdict on two-feature data.

    Examples
    --------
    >>> from linsep import check_separability
    >>> verdict = check_separability([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> verdict.separable, verdict.status, verdict.method
    (True, 'separable', 'ho_kashyap')
    >>> bool(verdict.certificate.margin > 0)
    True
    """

    separable: bool | None
    certificate: SeparatingHyperplane | NonSeparabilityProof | None
    method: str
    classes: np.ndarray
    n_iter: int

    @property
    def status(self):
        """``"separable"``, ``"not_separable"`` or ``"undecided"``."""
        return UNDECIDED if self.separable is None else SEPARABLE if self.separable else NOT_SEPARABLE

    def summary(self):
        """One line describing the verdict and the certificate that was checked.

        Returns
        -------
        str
            The verdict, the method that reached it and what was checked: the
            hyperplane's geometric margin, or the proof's support and residual.
        """
        c = self.certificate
        if self.separable is None:
            return (f"undecided ({self.method}): no separating hyperplane and no proof of non-separability "
                    f"passed the check (per-column relative residual <= {PROOF_RTOL:g})")
        if self.separable:
            return (f"separable ({self.method}): hyperplane with geometric margin {c.margin:.6g}, "
                    f"all points strictly on their side")
        support = int(np.count_nonzero(c.u > 0))
        return (f"not separable ({self.method}): u >= 0 on {support} points with "
                f"sum_i u_i y_i (x_i, 1) = 0 (largest relative residual per column {c.residual:.2e})")


def proof_residual(Y, u):
    """Largest per-column relative residual ``|Σ_i u_i Y_ij| / Σ_i u_i |Y_ij|`` of a candidate proof on ``Y``.

    ``Y`` is a sign-normalised matrix (any columns, the bias included); ``inf``
    if ``u`` is not ``>= 0, != 0``.  See ``linsep._certificates.proof_residuals``.
    """
    residuals = design_proof_residuals(Y if sp.issparse(Y) else np.asarray(Y), u)
    return np.inf if residuals is None else float(residuals.max())


def _norm(v):
    largest = np.abs(v).max(initial=0.0)
    return 0.0 if largest == 0 else float(largest * np.linalg.norm(v / largest))


def _hyperplane(X, y, shifts, W):
    """The checked hyperplane, in the original units, from weights ``W`` for the rescaled columns (or ``None``)."""
    if not np.all(np.isfinite(W)):
        return None
    try:
        coef = W[:-1] if shifts is None else unscale_coef(W[:-1], shifts)
    except ValueError:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.asarray(decision_scores(X, coef, W[-1])).ravel()
    if not separates(scores, y):
        return None
    norm = _norm(coef)
    with np.errstate(over="ignore"):
        margin = float((y * scores).min() / norm) if norm > 0 else np.inf
    return SeparatingHyperplane(coef=coef.copy(), intercept=float(W[-1]), margin=margin)


def _proof(X, y, u):
    """The checked proof (``u`` unchanged: it is invariant to column scaling), or ``None``."""
    if u is None:
        return None
    u = np.maximum(np.asarray(u, dtype=float), 0.0)
    residuals = proof_residuals(X, y, u)
    if residuals is None or not np.all(residuals <= PROOF_RTOL):
        return None
    return NonSeparabilityProof(u, float(residuals.max()))


def _row_normalized(Y):
    # Positive row scaling changes neither separability nor the sign of any
    # certificate component, and keeps the linear programs well scaled.
    largest = (abs(Y).max(axis=1).toarray().ravel() if sp.issparse(Y) else np.abs(Y).max(axis=1))
    largest = np.where(largest > 0, largest, 1.0)
    Y = (sp.diags(1.0 / largest) @ Y) if sp.issparse(Y) else Y / largest[:, None]
    norms = np.sqrt(np.asarray(Y.multiply(Y).sum(axis=1)).ravel() if sp.issparse(Y)
                    else np.einsum("ij,ij->i", Y, Y))
    norms[norms == 0] = 1.0
    return (sp.diags(1.0 / norms) @ Y) if sp.issparse(Y) else Y / norms[:, None], norms * largest


def check_separability(X, y, *, max_iter=1000):
    """Decide whether two classes are linearly separable, with a checked certificate.

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
        ``separable`` is ``True`` or ``False`` with a certificate that passed
        an independent check, or ``None`` (``status == "undecided"``) when no
        candidate did.

    See Also
    --------
    HoKashyapClassifier : Plain HK gives the same kind of verdict on its training data.
    linsep.inspection.plot_separability : Draws the certified line and margin, or the proof's points.

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
    signs = targets[:, 0]
    shifts = column_shifts(X)
    Xs = X if shifts is None else scale_columns(X, shifts)  # exact; same verdict and certificates
    Y = sign_normalized(Xs, signs)
    Yn, norms = _row_normalized(Y)

    hk = ho_kashyap(Yn, b0=1.0, max_iter=max_iter, tol=0.0, stop_at_separation=True)
    if hk.status == SEPARABLE:
        plane = _hyperplane(X, signs, shifts, hk.weights)
        if plane is not None:
            return SeparabilityResult(True, plane, "ho_kashyap", classes, hk.n_iter)
    if hk.certificate is not None:
        # u for the row-normalised rows is a valid u for Y after rescaling by 1/‖Y_i‖.
        proof = _proof(Xs, signs, hk.certificate / norms)
        if proof is not None:
            return SeparabilityResult(False, proof, "ho_kashyap", classes, hk.n_iter)
    return _decide_by_linear_programming(X, Xs, signs, shifts, Yn, norms, classes, hk.n_iter)


def _decide_by_linear_programming(X, Xs, signs, shifts, Yn, norms, classes, n_iter):
    n_samples, n_cols = Yn.shape
    A_eq = sp.vstack([sp.csr_matrix(Yn.T), sp.csr_matrix(np.ones((1, n_samples)))]) if sp.issparse(Yn) \
        else np.vstack([Yn.T, np.ones((1, n_samples))])
    b_eq = np.concatenate([np.zeros(n_cols), [1.0]])
    gordan = linprog(np.zeros(n_samples), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if gordan.status == 0:
        proof = _proof(Xs, signs, np.maximum(gordan.x, 0.0) / norms)
        if proof is not None:
            return SeparabilityResult(False, proof, "linear_programming", classes, n_iter)
    primal = linprog(np.zeros(n_cols), A_ub=-Yn, b_ub=-np.ones(n_samples),
                     bounds=(None, None), method="highs")
    if primal.status == 0:
        plane = _hyperplane(X, signs, shifts, primal.x)
        if plane is not None:
            return SeparabilityResult(True, plane, "linear_programming", classes, n_iter)
    return SeparabilityResult(None, None, "linear_programming", classes, n_iter)
