"""Lagrangian support vector machine (LSVM), linear and kernel forms.

Mangasarian & Musicant's LSVM [1]_, as written in Lauer & Bloch [2]_ §2.6,
solves the soft-margin SVM with squared slacks and a penalised bias

.. math::

    \\min_{w, w_0, \\xi} \\tfrac12 (w^t w + w_0^2) + \\tfrac{C}{2} \\xi^t \\xi
    \\quad \\text{s.t. } Y(\\tilde X w + w_0 1) \\ge 1 - \\xi       \\qquad (18)

through its dual, a bound-constrained quadratic programme

.. math::

    \\min_{\\alpha \\ge 0} f(\\alpha) = \\tfrac12 \\alpha^t Q \\alpha - 1^t \\alpha,
    \\qquad Q = \\frac{I}{C} + H H^t                                \\qquad (19, 21)

solved by the fixed-point iteration, convergent for ``0 < μ < 2/C``,

.. math::

    \\alpha_{k+1} = Q^{-1} \\Bigl[ 1 + \\tfrac12 \\bigl( (Q\\alpha_k - 1 - \\mu\\alpha_k)
                  + |Q\\alpha_k - 1 - \\mu\\alpha_k| \\bigr) \\Bigr]            \\qquad (22)

with ``μ = 1.9/C`` by default (Mangasarian & Musicant's choice).

Sign convention
---------------
The paper takes ``H = Y[X̃, −1]`` and ``ŵ_0 = −1ᵗYα̂`` (eq. 20): that is
Mangasarian's plane ``xᵗw = γ`` with ``γ = ŵ_0``.  linsep's augmented
matrices put the bias last with ``+1`` (:mod:`linsep._design`), so here
``H = Y[X̃, 1]`` and the weights are simply ``W = Hᵗα``:

.. math::

    w = \\tilde X^t Y \\alpha, \\qquad w_0 = +1^t Y \\alpha,
    \\qquad f(x) = x^t w + w_0 .

``HHᵗ``, ``Q`` and ``α`` are the same under both conventions; only the
sign of the stored bias differs from the paper's ``ŵ_0``.

Cost
----
*Linear form* (:func:`lagrangian_svm`): ``Q⁻¹`` is applied by the
Sherman–Morrison–Woodbury identity

.. math::

    Q^{-1} r = C \\bigl( r - H S^{-1} H^t r \\bigr), \\qquad
    S = \\frac{I}{C} + H^t H = \\frac{I}{C} + [\\tilde X, 1]^t [\\tilde X, 1],

so only the ``(d+1)×(d+1)`` matrix ``S`` is factored (Cholesky, once; it
does not depend on the labels).  Because ``α_{k+1} = Q⁻¹ r_k``, the product
``Qα_{k+1}`` *is* ``r_k``: it is carried over instead of recomputed, so one
iteration costs exactly one pass ``X̃ᵗ u`` and one pass ``X̃ v`` plus a few
vector operations.  ``H`` is never formed: ``Hᵗr = [X̃, 1]ᵗ(y∘r)``.

*Kernel form* (:func:`kernel_lagrangian_svm`): ``X̃X̃ᵗ`` becomes a Gram
matrix ``K``, ``Q = I/C + (yyᵗ)∘(K + 11ᵗ)`` is ``N×N`` and is factored once
(Cholesky); each iteration is two triangular solves.  For small ``N``.

Stopping rule
-------------
``‖α_{k+1} − α_k‖ <= tol · ‖α_{k+1}‖``.  Mangasarian's rule is absolute,
but ``α = Cξ`` at the optimum scales with ``C``, and the paper's model
selection sweeps ``C`` over ``2^-10 … 2^10``; the relative rule gives the
same accuracy over that whole range.

References
----------
.. [1] O. L. Mangasarian and D. R. Musicant, "Lagrangian support vector
   machines", Journal of Machine Learning Research 1, 161–177, 2001.
.. [2] F. Lauer and G. Bloch, "Ho–Kashyap classifier with early stopping for
   regularization", Pattern Recognition Letters 27(9), 2006, §2.6.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._result import CONVERGED, MAX_ITER, SolveResult

DEFAULT_MU_FACTOR = 1.9
"""``μ = 1.9 / C`` unless given (Mangasarian & Musicant)."""


def _check_params(C, mu, tol, max_iter):
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")
    mu = DEFAULT_MU_FACTOR / C if mu is None else float(mu)
    if not 0 < mu < 2.0 / C:
        raise ValueError(f"mu must satisfy 0 < mu < 2/C = {2.0 / C:g} for convergence, got {mu!r}")
    if tol < 0 or max_iter < 0:
        raise ValueError("tol and max_iter must be >= 0")
    return float(C), mu


class _PDFactor:
    """Cholesky factor of a symmetric matrix that is positive definite in exact arithmetic.

    Rounding (huge feature scales, an indefinite kernel such as the sigmoid)
    can make the Cholesky factorisation fail; the fallback is an
    eigendecomposition with eigenvalues floored at ``floor`` — for ``Q`` and
    ``S`` the exact spectrum is ``>= 1/C`` — applied factor-wise, never as an
    explicit inverse.
    """

    def __init__(self, M, floor):
        try:
            self._cho = sla.cho_factor(M, lower=True, check_finite=False)
            if np.all(np.isfinite(self._cho[0])):
                self.method = "cholesky"
                return
        except (np.linalg.LinAlgError, ValueError):
            pass
        evals, self._evecs = sla.eigh(M, check_finite=False)
        self._evals = np.maximum(evals, floor)
        self.method = "eigh"

    def solve(self, rhs):
        if self.method == "cholesky":
            return sla.cho_solve(self._cho, rhs, check_finite=False)
        return self._evecs @ ((self._evecs.T @ rhs) / self._evals)


def _iterate(solve_q, n_samples, mu, tol, max_iter, record_history):
    """Iteration (22) given ``r ↦ Q⁻¹r``; returns ``(α, n_iter, status, history)``.

    ``1 + ((u) + |u|)/2`` with ``u = Qα − 1 − μα`` is ``max(Qα − μα, 1)``,
    and ``Qα_k = r_{k−1}`` (the previous right-hand side), so no product with
    ``Q`` is ever needed.
    """
    r = np.ones(n_samples)
    alpha = solve_q(r)  # α_0 = Q⁻¹1, Mangasarian's start
    q_alpha = r
    buffer, diff = np.empty(n_samples), np.empty(n_samples)
    hist = {"objective": [0.5 * float(alpha @ q_alpha) - float(alpha.sum())], "step": [np.nan]}
    status = MAX_ITER
    k = 0
    while k < max_iter:
        np.multiply(alpha, -mu, out=buffer)
        buffer += q_alpha
        r = np.maximum(buffer, 1.0, out=buffer)
        new_alpha = solve_q(r)
        np.subtract(new_alpha, alpha, out=diff)
        step = float(np.linalg.norm(diff))
        # Qα_{k+1} = r_k; the old Qα array becomes the next work buffer.
        buffer, q_alpha = q_alpha, r
        alpha = new_alpha
        k += 1
        if record_history:
            hist["objective"].append(0.5 * float(alpha @ q_alpha) - float(alpha.sum()))
            hist["step"].append(step)
        if step <= tol * float(np.linalg.norm(alpha)):
            status = CONVERGED
            break
    history = {name: np.asarray(v) for name, v in hist.items()} if record_history else None
    # The iterates reach α >= 0 only in the limit (entries of inactive
    # constraints end at ±rounding); return the feasible projection, a change
    # below the stopping tolerance.
    return np.maximum(alpha, 0.0, out=alpha), k, status, history


class LSVMFactor:
    """``r ↦ Q⁻¹r`` for the linear LSVM by Sherman–Morrison–Woodbury (see the module docstring).

    ``S = I/C + [X, 1]ᵗ[X, 1]`` does not depend on the labels, so one factor
    serves every one-vs-rest problem on the same ``X``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        The samples, *not* augmented (the bias column is handled implicitly).
    C : float
        The paper's ``C > 0``.
    """

    def __init__(self, X, C):
        self.X = X
        self.C = float(C)
        n_samples, n_features = X.shape
        gram = np.empty((n_features + 1, n_features + 1))
        xtx = X.T @ X
        gram[:-1, :-1] = xtx.toarray() if sp.issparse(xtx) else xtx
        gram[:-1, -1] = gram[-1, :-1] = np.asarray(X.sum(axis=0)).ravel()
        gram[-1, -1] = n_samples
        gram[np.diag_indices_from(gram)] += 1.0 / self.C
        self._factor = _PDFactor(gram, 1.0 / self.C)
        self.method = self._factor.method
        self._sr = np.empty(n_samples)

    def h_transpose(self, v, y):
        """``Hᵗv = [X, 1]ᵗ(y∘v)``, i.e. the augmented ``W`` for ``v = α`` (eq. 20)."""
        yv = np.multiply(y, v, out=self._sr)
        return np.concatenate([np.asarray(self.X.T @ yv).ravel(), [yv.sum()]])

    def solver(self, y):
        """Return ``r ↦ Q⁻¹r`` for labels ``y`` (±1)."""
        X, C, factor = self.X, self.C, self._factor

        def solve_q(r):
            z = factor.solve(self.h_transpose(r, y))
            hz = np.asarray(X @ z[:-1]).ravel()
            hz += z[-1]
            hz *= y  # H z
            np.subtract(r, hz, out=hz)
            hz *= C
            return hz

        return solve_q


def lagrangian_svm(X, y, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, factor=None,
                   record_history=False):
    """Linear LSVM: iteration (22) with Sherman–Morrison–Woodbury (see the module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Samples, not augmented.
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    C : float, default=1.0
        Weight of ``½‖ξ‖²`` in (18) (larger ``C``: fewer margin violations).
    mu : float or None, default=None
        Step ``μ`` of (22), ``0 < μ < 2/C``; ``None`` means ``1.9/C``.
    tol : float, default=1e-6
        Stop when ``‖α_{k+1} − α_k‖ <= tol·‖α_{k+1}‖``.
    max_iter : int, default=10000
        Largest number of updates (22).
    factor : LSVMFactor or None
        A factor of the same ``X`` and ``C`` to reuse (one-vs-rest).
    record_history : bool, default=False
        Keep the dual objective ``f(α_k)`` (21) and the step ``‖α_k − α_{k−1}‖``
        (``f`` is not monotone: ``α_0 = Q⁻¹1`` is the unconstrained minimiser).

    Returns
    -------
    SolveResult
        ``weights`` ``W = (w, w_0) = Hᵗα`` (bias last, ``w_0 = +1ᵗYα``),
        ``status`` ``"converged"`` or ``"max_iter"``, ``n_iter`` the number
        of updates (22), ``extra["alpha"]`` the dual solution ``α >= 0``.
    """
    C, mu = _check_params(C, mu, tol, max_iter)
    y = np.asarray(y, dtype=float)
    if factor is None:
        factor = LSVMFactor(X, C)
    elif factor.C != C:
        raise ValueError("factor was built for another C")
    alpha, n_iter, status, history = _iterate(factor.solver(y), y.shape[0], mu, tol, max_iter,
                                              record_history)
    return SolveResult(
        weights=factor.h_transpose(alpha, y),
        n_iter=n_iter,
        status=status,
        history=history,
        extra={"alpha": alpha, "factorization": factor.method},
    )


def kernel_lagrangian_svm(K, y, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, record_history=False):
    """Kernel LSVM: iteration (22) with ``Q = I/C + (yyᵗ)∘(K + 11ᵗ)`` factored once.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Gram matrix ``K_ij = k(x_i, x_j)`` of the training samples.
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    C, mu, tol, max_iter, record_history
        As in :func:`lagrangian_svm`.

    Returns
    -------
    SolveResult
        ``weights`` the signed dual coefficients ``y∘α`` and ``intercept``
        ``w_0 = 1ᵗYα``, so ``f(x) = Σ_i y_i α_i k(x_i, x) + w_0``;
        ``extra["alpha"]`` is ``α``.
    """
    C, mu = _check_params(C, mu, tol, max_iter)
    y = np.asarray(y, dtype=float)
    Q = np.asarray(K, dtype=float) + 1.0
    Q *= y[:, None]
    Q *= y[None, :]
    Q[np.diag_indices_from(Q)] += 1.0 / C
    factor = _PDFactor(Q, 1.0 / C)
    alpha, n_iter, status, history = _iterate(factor.solve, y.shape[0], mu, tol, max_iter,
                                              record_history)
    signed = y * alpha
    return SolveResult(
        weights=signed,
        n_iter=n_iter,
        status=status,
        intercept=float(signed.sum()),
        history=history,
        extra={"alpha": alpha, "factorization": factor.method},
    )
