"""Ho–Kashyap family: HK, modified HK, MHKS, MHKA, HKES, HKESA.

All six methods are one iteration on the augmented, sign-normalised matrix
``Y = diag(y)[X, 1]`` (:mod:`linsep._design`), differing in four switches.

Ho–Kashyap (HK) [1]_ [2]_ (Lauer & Bloch 2006, eqs. 6–9) minimises

.. math::

    J(W, B) = \\lVert Y W - B \\rVert^2 \\quad \\text{subject to } B > 0

by alternating a least-squares solve for the weights and a projected gradient
step on the margin vector:

.. math::

    W_k = Y^{+} B_k, \\qquad E_k = Y W_k - B_k, \\qquad
    B_{k+1} = B_k + \\mu (E_k + |E_k|), \\quad 0 < \\mu < 1,

from ``B_0 = b_0 1``.  Because ``Yᵀ E_k = 0``, a vector ``E_k <= 0`` with
``E_k != 0`` proves that no ``W`` has ``Y W > 0`` (Gordan's alternative):
linsep keeps ``u = -E_k`` as the certificate.

Modified HK (the encyclopedia variant [1]_) replaces the weight solve by the
increment ``W_{k+1} = W_k + \\mu Y^{+} |E_k|``; started from ``W_0 = Y⁺B_0`` it
produces the same iterates as HK (``Y⁺E_k = 0``), and differs when started
from an arbitrary ``W_0``.

MHKS / MHKA (Łęski 2003, Lauer & Bloch eqs. 10–11) add a margin of one and a
regularisation ``C`` on ``w`` but not on the bias (``Ĩ``):

.. math::

    J = (Y W - 1 - B)^t D (Y W - 1 - B) + C w^t w, \\qquad
    W_k = (Y^t D_k Y + C \\tilde I)^{-1} Y^t D_k (B_k + 1),

with ``D = I`` (squared errors, factored once) or ``D_k = diag(1/|e_i|)``
(absolute errors, iteratively reweighted least squares, refactored at each
iteration; a relative floor keeps the weights finite).

HKES / HKESA (Lauer & Bloch §2.3–2.4, eqs. 12–14) run HK (squared, or
absolute with ``D_k`` but no ``C``) and record the validation error ``GE_k`` at
every iteration up to the HK stopping point ``k*``; the returned weights are
``W_k̂`` with ``k̂ = argmin_k GE_k`` (the first minimiser over *all* ``k``,
not "stop at the first rise").

Stopping rules
--------------
``stopping="paper"``: ``|J_k - J_{k-1}| < tol`` with ``tol = 0.5 b_0²`` by
default (eq. 9 and §3.1).  The raw criterion ``J`` grows with ``N`` and
with the scale of ``B``, so this absolute rule stops early on large data
sets and, on the four points of the lecture [3]_, at ``k = 2`` before the
data are separated.

``stopping="relative"`` (default): ``|J_k - J_{k-1}| <= tol · J_{k-1}``.
It is invariant to ``b_0``, to the data scale and to ``N``; it never fires
while ``J`` keeps shrinking geometrically (the separable case), so separable
data end separated, and with ``tol = 1e-6`` it reproduces the paper's
benchmark errors.

Whatever the rule, each iteration first checks the verdicts: all points
strictly separated (``Y W > 0``, when ``stop_at_separation``) and, for
``C = 0``, the non-separability proof ``E <= 0, E != 0``.

References
----------
.. [1] Y.-C. Ho and R. L. Kashyap, "An algorithm for linear inequalities and
   its applications", IEEE Trans. Electronic Computers 14(5), 1965.
.. [2] F. Lauer and G. Bloch, "Ho–Kashyap classifier with early stopping for
   regularization", Pattern Recognition Letters 27(9), 2006.
.. [3] R. O. Duda, P. E. Hart and D. G. Stork, Pattern Classification, 2nd
   ed., §5.9 (the lecture's worked example follows it).
.. [4] J. Łęski, "Ho–Kashyap classifier with generalization control",
   Pattern Recognition Letters 24(14), 2003.
"""

from __future__ import annotations

import numpy as np

from .._linalg import LeastSquaresFactor
from .._result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE, SolveResult

STOPPING_RULES = ("relative", "paper")

# E may hold rounding noise where the exact value is 0 (points on their
# margin); a non-separability proof allows positive components this small,
# relative to the margin vector.
_PROOF_RTOL = 1e-10

# The fused sweep (see _fused_sweep) serves dense data with at least this many
# rows; below it Y fits in cache and the plain two products are as fast.
_FUSED_MIN_ROWS = 65_536
# Rows per block of the sweep: 2048 rows of 100 doubles (1.6 MB) stay in cache
# between the product Y_b W and the accumulation Y_bᵀ max(E_b, 0).
_SWEEP_ROWS = 2048
# The fused path updates W incrementally; an exact solve every this many
# iterations keeps rounding drift from breaking YᵀE = 0.
_REFRESH_EVERY = 64


def _fused_sweep(Y, W, target, Z, E):
    """One pass over ``Y``: ``Z = Y W``, ``E = Z - target``; return ``Yᵀ max(E, 0)``.

    Since ``W_{k+1} = W_k + 2μ (YᵀY)⁻¹ Yᵀ max(E_k, 0)`` for HK with a fixed
    factorisation, one sweep over cache-sized row blocks gives everything an
    iteration needs while each block is still in cache, so an iteration reads
    ``Y`` from memory once instead of twice (``Z`` and ``E`` are written in place).
    """
    g = np.zeros(Y.shape[1])
    for start in range(0, Y.shape[0], _SWEEP_ROWS):
        stop = start + _SWEEP_ROWS
        block = Y[start:stop]
        z_block, e_block = Z[start:stop], E[start:stop]
        np.dot(block, W, out=z_block)
        np.subtract(z_block, target[start:stop], out=e_block)
        g += np.maximum(e_block, 0.0) @ block
    return g


def nonseparability_proof(E, B, sample_weight=None):
    """Return ``u = -D E`` if ``E <= 0`` and ``E != 0`` (to rounding), else ``None``.

    With ``Yᵀ D E = 0`` (true at every Ho–Kashyap iterate without
    regularisation) such a ``u`` satisfies ``u >= 0, u != 0, Yᵀ u = 0``, which
    rules out any ``W`` with ``Y W > 0``.
    """
    scale = np.abs(B).max(initial=0.0)
    if scale == 0.0 or E.max() > _PROOF_RTOL * scale or E.min() >= -1e3 * _PROOF_RTOL * scale:
        return None
    u = np.maximum(-E, 0.0)
    return u if sample_weight is None else u * sample_weight


def ho_kashyap(
    Y,
    *,
    learning_rate=0.4,
    b0=1e-6,
    max_iter=10_000,
    tol=1e-6,
    stopping="relative",
    stop_at_separation=True,
    update="margin",
    C=None,
    loss="squared",
    irls_floor=1e-6,
    initial_weights=None,
    initial_margin=None,
    Y_val=None,
    record_history=False,
):
    """Run the Ho–Kashyap iteration on ``Y`` (see the module docstring).

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (N, p)
        Sign-normalised augmented design matrix, bias column last.
    learning_rate : float
        ``μ`` in ``B_{k+1} = B_k + μ(E_k + |E_k|)``; ``0 < μ < 1``.
    b0 : float
        Initial margin ``B_0 = b_0 1`` (ignored if ``initial_margin`` is given).
    max_iter : int
        Largest number of margin updates.
    tol : float or None
        Tolerance of the stopping rule; ``None`` with ``stopping="paper"``
        means the paper's ``0.5 b_0²``.
    stopping : {"relative", "paper"}
        ``|ΔJ| <= tol·J_{k-1}`` or the paper's ``|ΔJ| < tol``.
    stop_at_separation : bool
        Stop as soon as ``Y W > 0`` (the lecture's rule).
    update : {"margin", "weights"}
        ``W = Y⁺B`` (HK) or ``W += μ Y⁺|E|`` (modified HK).
    C : float or None
        ``None``: plain HK (target ``B``).  A number ``>= 0``: Łęski's
        modified HK, target ``1 + B`` and penalty ``C wᵀw`` (MHKS / MHKA).
    loss : {"squared", "absolute"}
        ``D = I`` or the IRLS weights ``D_k = diag(1/max(|e_i|, floor))``.
    irls_floor : float
        Floor of ``|e_i|`` relative to ``max |e|``.
    initial_weights, initial_margin : ndarray or None
        Start from a given ``W_0`` / ``B_0`` (the lecture's example starts at
        ``a = 1, b = 1``).
    Y_val : ndarray or sparse matrix of shape (M, p) or None
        Sign-normalised validation matrix: enables early stopping (HKES).
    record_history : bool
        Keep per-iteration traces (always kept with ``Y_val``).

    Returns
    -------
    SolveResult
        ``weights`` (bias last), ``margin`` ``B``, ``status``, ``certificate``
        (``u >= 0`` with ``Yᵀu = 0`` for ``not_separable``), ``n_iter`` — the
        index ``k`` of the final iterate ``W_k``, counted from ``k = 1`` for
        the first weights as in the paper and the lecture (so ``n_iter - 1``
        margin updates were made) — ``history`` with ``criterion``,
        ``training_errors`` and ``validation_error`` (entry ``k - 1`` belongs
        to ``W_k``), and ``best_iter`` ``k̂`` for early stopping.
    """
    if stopping not in STOPPING_RULES:
        raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {stopping!r}")
    if update not in ("margin", "weights"):
        raise ValueError(f"update must be 'margin' or 'weights', got {update!r}")
    if loss not in ("squared", "absolute"):
        raise ValueError(f"loss must be 'squared' or 'absolute', got {loss!r}")
    if tol is None:
        tol = 0.5 * b0**2 if stopping == "paper" else 1e-6

    n_samples = Y.shape[0]
    regularized = C is not None
    ridge = float(C) if regularized else 0.0
    offset = 1.0 if regularized else 0.0
    absolute = loss == "absolute"
    # Without a penalty, Yᵀ D E = 0 at every iterate, so E <= 0 is a proof.
    can_prove = ridge == 0.0

    B = np.full(n_samples, float(b0)) if initial_margin is None else np.array(initial_margin, dtype=float)
    D = None
    factor = LeastSquaresFactor(Y, None, ridge)
    W = factor.solve(B + offset) if initial_weights is None else np.array(initial_weights, dtype=float)

    fused = (update == "margin" and not absolute and factor.method == "cholesky"
             and isinstance(Y, np.ndarray) and Y.flags.c_contiguous and n_samples >= _FUSED_MIN_ROWS)

    def residual(W, B):
        if fused:  # also leaves g = Yᵀ max(E, 0) for the next weight update
            nonlocal g
            Z, E = np.empty(n_samples), np.empty(n_samples)
            g = _fused_sweep(Y, W, B if offset == 0.0 else B + offset, Z, E)
            return Z, E
        Z = np.asarray(Y @ W)
        return Z, (Z - B if offset == 0.0 else Z - offset - B)

    def criterion(E, W):
        J = float(E @ E) if D is None else float(E @ (D * E))
        return J + ridge * float(W[:-1] @ W[:-1]) if regularized else J

    g = None
    Z, E = residual(W, B)
    J = criterion(E, W)
    early_stopping = Y_val is not None
    keep_history = record_history or early_stopping
    hist = {"criterion": [J], "training_errors": [int(np.count_nonzero(Z <= 0))]}
    if early_stopping:
        n_val = Y_val.shape[0]
        hist["validation_error"] = [np.count_nonzero(np.asarray(Y_val @ W) <= 0) / n_val]
        best_W, best_iter = W, 0

    certificate = None
    k = 0
    J_prev = None
    while True:
        if stop_at_separation and Z.min() > 0:
            status = SEPARABLE
            break
        # E.max() first: the full proof test runs only when E is (nearly) non-positive.
        if can_prove and E.max() <= _PROOF_RTOL * B.max():
            if fused:  # judge the proof on the exact least-squares iterate, not the drifted one
                W = factor.solve(B if offset == 0.0 else B + offset)
                Z, E = residual(W, B)
            certificate = nonseparability_proof(E, B, D)
            if certificate is not None:
                status = NOT_SEPARABLE
                break
        if J_prev is not None:
            change = abs(J_prev - J)
            if (change <= tol * J_prev) if stopping == "relative" else (change < tol):
                status = CONVERGED
                break
        if k >= max_iter:
            status = MAX_ITER
            break

        # μ(E + |E|) = 2μ max(E, 0): the margin grows only where Y W exceeds it.
        step = np.maximum(E, 0.0)
        step *= 2.0 * learning_rate
        if absolute:
            abs_e = np.abs(E)
            D = 1.0 / np.maximum(abs_e, irls_floor * abs_e.max(initial=0.0) + np.finfo(float).tiny)
            factor = LeastSquaresFactor(Y, D, ridge)
        if update == "weights":
            W = W + learning_rate * factor.solve(np.abs(E))
        B = B + step
        if fused and (k + 1) % _REFRESH_EVERY:
            W = W + factor.solve_normal((2.0 * learning_rate) * g)
        elif update == "margin":
            W = factor.solve(B if offset == 0.0 else B + offset)
        Z, E = residual(W, B)
        J_prev, J = J, criterion(E, W)
        k += 1
        if not np.isfinite(J):  # pragma: no cover - guarded by the factorisation's rank test
            raise FloatingPointError(
                f"Ho–Kashyap diverged at iteration {k} (least-squares factorisation: {factor.method}); "
                "the data are too ill-conditioned for this solver")

        if keep_history:
            hist["criterion"].append(J)
            hist["training_errors"].append(int(np.count_nonzero(Z <= 0)))
        if early_stopping:
            error = np.count_nonzero(np.asarray(Y_val @ W) <= 0) / n_val
            hist["validation_error"].append(error)
            if error < hist["validation_error"][best_iter]:
                best_W, best_iter = W, k

    weights = best_W if early_stopping else W
    separated = bool(np.asarray(Y @ weights).min() > 0)
    if separated:
        status = SEPARABLE
    elif status == SEPARABLE:  # early stopping picked an iterate that does not separate
        status = CONVERGED
    history = {name: np.asarray(v) for name, v in hist.items()} if keep_history else None
    return SolveResult(
        weights=weights,
        n_iter=k + 1,
        status=status,
        margin=B,
        certificate=certificate,
        history=history,
        best_iter=best_iter + 1 if early_stopping else None,
        extra={"factorization": factor.method},
    )
