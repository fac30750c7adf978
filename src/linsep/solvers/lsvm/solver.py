"""Lagrangian support vector machine (LSVM), linear and kernel forms.

Mangasarian & Musicant's LSVM [1]_, as written in Lauer & Bloch [2]_ §2.6,
solves the soft-margin SVM with squared slacks and a penalised bias

.. math::

    \\begin{aligned}
    &\\min_{w, w_0, \\xi} \\ \\tfrac12 (w^t w + w_0^2) + \\tfrac{C}{2} \\, \\xi^t \\xi \\\\
    &\\text{s.t. } Y (\\tilde X w + w_0 \\mathbf{1}) \\ge \\mathbf{1} - \\xi
      \\qquad (18)
    \\end{aligned}

through its dual, a bound-constrained quadratic programme

.. math::

    \\begin{aligned}
    &\\min_{\\alpha \\ge 0} \\ f(\\alpha)
      = \\tfrac12 \\, \\alpha^t Q \\alpha - \\mathbf{1}^t \\alpha, \\\\
    &Q = \\frac{I}{C} + H H^t \\qquad (19, 21)
    \\end{aligned}

solved by the fixed-point iteration, convergent for :math:`0 < \\mu < 2/C`,

.. math::

    \\begin{aligned}
    \\alpha_{k+1} = Q^{-1} \\Bigl[ \\, \\mathbf{1} + \\tfrac12 \\bigl(
      & (Q \\alpha_k - \\mathbf{1} - \\mu \\alpha_k) \\\\
      & + |Q \\alpha_k - \\mathbf{1} - \\mu \\alpha_k| \\bigr) \\Bigr] \\qquad (22)
    \\end{aligned}

with :math:`\\mu = 1.9 / C` by default (Mangasarian & Musicant's choice).

Sign convention
---------------
The paper takes :math:`H = Y [\\tilde X,\\ -\\mathbf{1}]` and
:math:`\\hat w_0 = -\\mathbf{1}^t Y \\hat\\alpha` (eq. 20): that is Mangasarian's
plane :math:`x^t w = \\gamma` with :math:`\\gamma = \\hat w_0`.  linsep's
augmented matrices put the bias last with :math:`+1`
(``linsep._core.signed_design``), so here
:math:`H = Y [\\tilde X,\\ \\mathbf{1}]` and the weights are simply
:math:`W = H^t \\alpha`:

.. math::

    w = \\tilde X^t Y \\alpha, \\qquad w_0 = +\\mathbf{1}^t Y \\alpha,
    \\qquad f(x) = x^t w + w_0 .

:math:`H H^t`, :math:`Q` and :math:`\\alpha` are the same under both
conventions; only the sign of the stored bias differs from the paper's
:math:`\\hat w_0`.

Cost
----
*Linear form* (:func:`~linsep.solvers.lsvm.lagrangian_svm`): :math:`Q^{-1}`
is applied by the Sherman–Morrison–Woodbury identity

.. math::

    \\begin{aligned}
    Q^{-1} r &= C \\bigl( r - H S^{-1} H^t r \\bigr), \\\\
    S &= \\frac{I}{C} + H^t H
       = \\frac{I}{C} + [\\tilde X,\\ \\mathbf{1}]^t [\\tilde X,\\ \\mathbf{1}],
    \\end{aligned}

so only the :math:`(d+1) \\times (d+1)` matrix :math:`S` is factored
(Cholesky, once; it does not depend on the labels).  Because
:math:`\\alpha_{k+1} = Q^{-1} r_k`, the product :math:`Q \\alpha_{k+1}` *is*
:math:`r_k`: it is carried over instead of recomputed, so one iteration
costs exactly one product :math:`\\tilde X v` and one :math:`\\tilde X^t u`
plus a few vector operations, all fused into one compiled pass over the rows
so that :math:`\\tilde X` streams from memory once per iteration, split over
threads on large data (``_LinearStep``).  :math:`H` is never formed:
:math:`H^t r = [\\tilde X,\\ \\mathbf{1}]^t (y \\circ r)`.

*Kernel form* (:func:`~linsep.solvers.lsvm.kernel_lagrangian_svm`):
:math:`\\tilde X \\tilde X^t` becomes a Gram matrix :math:`K`,
:math:`Q = I/C + (y y^t) \\circ (K + \\mathbf{1}\\mathbf{1}^t)` is
:math:`N \\times N` and is factored once (Cholesky); each iteration is two
triangular solves.  For small :math:`N`.

Stopping rule
-------------
The change of :math:`\\alpha` *and* of the weights it defines, both relative:

.. math::

    \\begin{aligned}
    \\lVert \\alpha_{k+1} - \\alpha_k \\rVert
      &\\le \\mathit{tol} \\cdot \\lVert \\alpha_{k+1} \\rVert
      \\quad \\text{and} \\\\
    \\lVert W_{k+1} - W_k \\rVert
      &\\le \\mathit{tol} \\cdot \\lVert W_{k+1} \\rVert,
      \\qquad W_k = H^t \\alpha_k .
    \\end{aligned}

Mangasarian's rule is the first one with an absolute :math:`\\mathit{tol}`.
Relative, because :math:`\\alpha = C \\xi` at the optimum scales with
:math:`C` and the paper's model selection sweeps :math:`C` over
:math:`2^{-10}, \\dots, 2^{10}`.  The second test makes sure the model itself
has settled: on nearly separable data with a large :math:`C` (IDA thyroid and
image, :math:`C \\ge 256`) the :math:`\\alpha`-rule alone stops while
:math:`W` still moves.  It costs nothing:
:math:`W_{k+1} = H^t Q^{-1} r_k = S^{-1} H^t r_k` (push-through identity) is
the small vector the Woodbury solve computes anyway, and in the kernel form

.. math::

    \\lVert \\Delta W \\rVert^2 = \\Delta\\alpha^t \\, (Q - I/C) \\, \\Delta\\alpha,
    \\qquad Q \\, \\Delta\\alpha = r_k - r_{k-1} .

The returned :math:`\\alpha` is the last iterate, not projected onto
:math:`\\alpha \\ge 0`: the entries of inactive constraints approach 0 from
both sides, and projecting them would move :math:`W = H^t \\alpha` by
:math:`H^t \\alpha^-`, a sum over all :math:`N` samples.

References
----------
.. [1] O. L. Mangasarian and D. R. Musicant, "Lagrangian support vector
   machines", Journal of Machine Learning Research 1, 161–177, 2001.
.. [2] F. Lauer and G. Bloch, "Ho–Kashyap classifier with early stopping for
   regularization", Pattern Recognition Letters 27(9), 2006, §2.6.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.signed_design import SignedDesign, augment, augmented_gram, signed_scores
from linsep._core.certificates import sample_errors, side_tolerance, strict_errors
from linsep._core.plan import dtype_plan, working_dtype
from linsep._core.linalg import IterativeLeastSquares, PositiveDefiniteFactor, iteration_forcing, too_wide_for_direct
from linsep._core.lsvm_update import LinearStepping, dual_update, linear_pass
from linsep.solvers.lsvm.loops import lsvm_pass
from linsep._core.threads import PARALLEL_LOCK, pass_threads, serial_blas_for
from linsep._core.compilation import prepare
from linsep._core.result import CONVERGED, MAX_ITER, SolveResult

DEFAULT_MU_FACTOR = 1.9
"""``μ = 1.9 / C`` unless given (Mangasarian & Musicant)."""
LSVM_CG_FORCING = 3e-1
"""Forcing factor of the LSVM's inexact ``S⁻¹g`` solves on wide ``X`` (``_IterativeS``), looser than the
shared ``linsep._core.linalg.CG_FORCING`` (``1e-2``) of the Ho–Kashyap W-steps, which it leaves unchanged.

A solve stopped at :math:`\\eta` times the change :math:`H^t (r_k - r_{k-1})` of its right-hand side errs by
about :math:`\\eta` times the step :math:`W_{k+1} - W_k`; the stopping rule drives that step below
:math:`\\mathit{tol} \\cdot \\lVert W \\rVert`, and the returned
weights are re-solved to ``linsep._core.linalg.CG_RTOL`` (``_LinearStep.polish``), so the rule and the returned
model keep their meaning.  Iteration (22) settles slowly (a contraction of ``|1 − μC| = 0.9`` with the default
``μ``), so the solves need not be ten times tighter than its steps.  On the three problems of
``benchmarks/bench_sparse_text.py`` (``C = 1`` and ``2``), ``10⁻¹`` takes a quarter to a third fewer CG
iterations than ``10⁻²``, and ``3·10⁻¹`` up to a fifth fewer again (one case equal: 180 against 179), fits
5–20 % faster; the test errors are the same, the weights within ``2·10⁻⁷`` of the ``10⁻¹`` fit's (relative) and
the iteration counts within 2 (``tests/test_lsvm.py::test_sparse_inner_forcing_matches_tight_solve``)."""


def _check_params(C, mu, tol, max_iter):
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")
    mu = DEFAULT_MU_FACTOR / C if mu is None else float(mu)
    if not 0 < mu < 2.0 / C:
        raise ValueError(f"mu must satisfy 0 < mu < 2/C = {2.0 / C:g} for convergence, got {mu!r}")
    if tol < 0 or max_iter < 0:
        raise ValueError("tol and max_iter must be >= 0")
    return float(C), mu


def _iterate(step, tol, max_iter, record_history, trace=None, row=None, count_errors=None):
    """Run iteration (22) with a *step* object (``_KernelStep`` or ``_LinearStep``).

    The step holds :math:`\\alpha_k` (``step.alpha``) and the right-hand side
    :math:`r_{k-1}`, which equals :math:`Q \\alpha_k` because
    :math:`\\alpha_k = Q^{-1} r_{k-1}`; so the update
    :math:`r_k = \\mathbf{1} + (u + |u|)/2 = \\max(Q \\alpha_k - \\mu \\alpha_k, 1)` (with
    :math:`u = Q \\alpha_k - \\mathbf{1} - \\mu \\alpha_k`) never needs a product with
    :math:`Q`.  Each call advances one iteration and returns
    :math:`\\lVert \\Delta\\alpha \\rVert^2, \\lVert \\alpha \\rVert^2, \\lVert \\Delta W \\rVert^2, \\lVert W \\rVert^2`
    and the dual objective
    :math:`f(\\alpha) = \\tfrac12 \\alpha^t Q \\alpha - \\mathbf{1}^t \\alpha`.  Returns ``(n_iter, status,
    history)``.  With a ``trace``, ``row()`` gives the iterate's trace
    values, recorded for ``k = 0 … n_iter``, and ``count_errors()`` its
    training errors, kept for every ``k``.
    """
    hist = {"objective": [step.objective], "step": [np.nan], "weight_step": [np.nan]} if record_history else None
    status = MAX_ITER
    k = 0
    errors = []
    if trace is not None:
        trace.record(0, **row())
        errors.append(count_errors())
    while k < max_iter:
        step_sq, alpha_sq, weight_step_sq, weight_sq, objective = step()
        k += 1
        if trace is not None:
            errors.append(count_errors())
            if trace.wants(k):
                trace.record(k, **row())
        if record_history:
            hist["objective"].append(objective)
            hist["step"].append(np.sqrt(step_sq))
            hist["weight_step"].append(np.sqrt(weight_step_sq))
        if step_sq <= tol**2 * alpha_sq and weight_step_sq <= tol**2 * weight_sq:
            status = CONVERGED
            break
    # α is returned as iterated, not projected onto α >= 0: the entries of
    # inactive constraints approach 0 from both sides (their error shrinks
    # by 1 − μC per step), and W = Hᵗα with a clipped α would carry their
    # negative part Hᵗα⁻, summed over N samples, into the weights.
    history = {name: np.asarray(v) for name, v in hist.items()} if record_history else None
    if trace is not None:
        trace.record(k, final=True, **row())
        history = trace.merge_into({**(history or {}), "training_errors": np.asarray(errors, dtype=np.int64)})
    return k, status, history


class _KernelStep:
    """Update (22) with an ``N×N`` factor of ``Q``; ``‖W‖² = αᵗ(Q − I/C)α``."""

    def __init__(self, factor, C, mu, n_samples, linear_term=None):
        self.factor, self.C, self.mu = factor, C, mu
        # c of f = ½αᵗQα − cᵗα: 1, or √s for weighted rows (lagrangian_svm's sample_weight)
        self._c = 1.0 if linear_term is None else linear_term
        self.q_alpha = np.ones(n_samples) if linear_term is None else linear_term.copy()
        self.alpha = factor.solve(self.q_alpha)  # α_0 = Q⁻¹1, Mangasarian's start
        self.objective = 0.5 * float(self.alpha @ self.q_alpha) - self._linear(self.alpha)
        self._r, self._diff = np.empty(n_samples), np.empty(n_samples)

    def _linear(self, alpha):
        return float(alpha.sum()) if np.isscalar(self._c) else float(alpha @ self._c)

    def __call__(self):
        C, alpha, q_alpha, r = self.C, self.alpha, self.q_alpha, self._r
        np.multiply(alpha, -self.mu, out=r)
        r += q_alpha
        np.maximum(r, self._c, out=r)
        new = self.factor.solve(r)
        diff = np.subtract(new, alpha, out=self._diff)
        step_sq, alpha_sq = float(diff @ diff), float(new @ new)
        np.subtract(r, q_alpha, out=q_alpha)  # QΔα = r_k − r_{k−1}
        weight_step_sq = max(float(diff @ q_alpha) - step_sq / C, 0.0)
        weight_sq = max(float(new @ r) - alpha_sq / C, 0.0)
        self.alpha, self.q_alpha, self._r = new, r, q_alpha  # Qα_{k+1} = r_k
        self.objective = 0.5 * float(new @ r) - self._linear(new)
        return step_sq, alpha_sq, weight_step_sq, weight_sq, self.objective


class _LinearStep(LinearStepping):
    """Update (22) by Sherman–Morrison–Woodbury, fused into one pass over the rows of ``X``.

    Given :math:`z_k = S^{-1} H^t r_{k-1}`, each row computes in turn
    :math:`\\alpha_k = C (r_{k-1} - H z_k)` (:math:`= Q^{-1} r_{k-1}`),
    :math:`r_k = \\max(r_{k-1} - \\mu \\alpha_k, 1)` and its share of
    :math:`g_k = H^t r_k`; then :math:`z_{k+1} = S^{-1} g_k`.
    Both products with a row of ``X`` happen while it is in cache, so an
    iteration streams ``X`` from memory once and each ``N``-vector once
    (unfused, at ``d = 20`` the vectors alone cost as much memory traffic as
    ``X``).  Dense ``X`` runs the compiled pass ``linsep.solvers.lsvm.loops.lsvm_pass``
    (float32 read as float32, sums in float64; rows split over threads,
    ``linsep._core.threads.pass_threads``); sparse ``X`` the same steps as two
    sparse products (:func:`linear_pass`, also the dask backend's block
    pass).  :math:`z_k = H^t Q^{-1} r_{k-1} = H^t \\alpha_k` is :math:`W_k` (the push-through
    identity), so the weights of eq. 20 come free.
    """

    # the right-hand sides g of the weights (current, next) that :meth:`polish` re-solves; None: nothing to polish
    _rhs = _next_rhs = None

    def __init__(self, lsvm_factor, y, mu, threads=None):
        self.f, self.y, self.mu = lsvm_factor, y, mu
        self.solves_converged = True  # every S⁻¹g of this problem met its tolerance (CG for wide X)
        n_samples = y.shape[0]
        self._r = np.ones(n_samples)
        self.alpha = np.empty(n_samples)
        X = lsvm_factor.X
        self._linear_term = None
        if lsvm_factor.sample_weight is not None:
            # Weighted (C s_i per row): the dual in β = α/√s on the rows H̃ = √s H, whose linear term is
            # c = √s instead of 1 (linsep.designs.weights); whole-vector passes (linear_pass) on any X.
            self._linear_term = np.sqrt(lsvm_factor.sample_weight)
            self.y = y * self._linear_term
            self._r = self._linear_term.copy()
            self.weights = self._solve(np.append(np.asarray(X.T @ (self.y * self._r)).ravel(),
                                                 float(self.y @ self._r)))
            self._next = None
            self.objective = self._pass(first=True)[4]
            return
        if sp.issparse(X):
            ones = np.append(np.asarray(X.T @ y).ravel(), y.sum())
        else:
            self._X = np.ascontiguousarray(X)  # validated data are C-ordered already: no copy
            self._y = y.astype(self._X.dtype)  # ±1: exact in either type
            self._threads = pass_threads(X.shape[0] * X.shape[1]) if threads is None else int(threads)
            ones = SignedDesign(self._X, self._y).T @ np.ones(n_samples)  # Hᵀ1, summed in float64
        self.weights, self._rhs = self._solve(ones), ones
        self._next = None
        # α_0 = Q⁻¹1 (Mangasarian's start): the same pass without a previous α
        self.objective = self._pass(first=True)[4]

    def _pass(self, first=False):
        if self._linear_term is None and sp.issparse(self.f.X) and isinstance(self.f._factor, _IterativeS):
            # Wide sparse X: the CSR copies of [X, 1] and its transpose that CG multiplies by anyway
            # (row-wise products, the bias column included) and the row-wise update between them.
            solver = self.f._factor.solver
            u = solver.fitted_values(self.weights)  # H W tracked through the solve that gave W, else a product
            if u is None:
                u = np.asarray(solver._A @ self.weights, dtype=float)
            self.alpha, self._r, step_sq, alpha_sq, objective = dual_update(
                u, self.y, self._r, None if first else self.alpha, self.f.C, self.mu)
            g = np.asarray(solver._At @ (self.y * self._r), dtype=float).ravel()
        elif sp.issparse(self.f.X) or self._linear_term is not None:
            self.alpha, self._r, g, step_sq, alpha_sq, objective = linear_pass(
                self.f.X, self.y, self.weights, self._r, None if first else self.alpha, self.f.C, self.mu,
                linear_term=self._linear_term)
        else:
            g = np.empty(self.weights.shape[0])
            parallel = self._threads > 1 and PARALLEL_LOCK.acquire(blocking=False)
            try:
                args = (self._X, self._y, self.weights, self._r, self.alpha, self.f.C, float(self.mu), bool(first), g,
                        self._threads if parallel else None)
                if first:
                    prepare(lsvm_pass, args, "the LSVM pass",
                            key=(self._X.dtype, self._y.dtype, self._r.dtype, args[-1] is None))
                step_sq, alpha_sq, objective = lsvm_pass(*args)
            finally:
                if parallel:
                    PARALLEL_LOCK.release()
        self._next, self._next_rhs = self._solve(g), g
        return step_sq, alpha_sq, 0.0, 0.0, objective

    def _solve(self, g):
        z = self.f._factor.solve(g)
        self.solves_converged &= self.f._factor.converged
        return z

    def polish(self):
        """Re-solve the weights :math:`W_k = S^{-1} g_{k-1}` to the full tolerance (after the inexact solves of wide ``X``)."""
        if self._rhs is not None and isinstance(self.f._factor, _IterativeS):  # (a blockwise step keeps no rhs)
            self.weights = self.f._factor.solve(self._rhs, exact=True, x0=self.weights)
            self.solves_converged &= self.f._factor.converged



class _IterativeS:
    """``S⁻¹g`` for ``S = I/C + HᵗH`` by conjugate gradients, for wide ``X`` (``S`` is never formed).

    The operator ``v ↦ v/C + Hᵗ(H v)`` costs two passes over the non-zeros of
    ``X``; Jacobi-preconditioned (``S`` is positive definite, ``>= I/C``) and
    warm-started from the previous solve, whose right-hand side ``Hᵗr_k``
    changes little between iterations.  On large ``X``
    (``linsep._core.linalg.iteration_forcing``) a solve inside the iteration is
    inexact: it stops once its residual is ``LSVM_CG_FORCING``
    times the change :math:`H^t (r_k - r_{k-1})` of the right-hand side, so the
    error of :math:`W_{k+1}` is a small fraction of the step :math:`W_{k+1} - W_k`
    and vanishes with it (see ``linsep._core.linalg.IterativeLeastSquares``);
    the returned weights are re-solved (:meth:`solve` with ``exact=True``) to
    the relative residual ``linsep._core.linalg.CG_RTOL`` (``1e-10``), far
    below the iteration's own ``tol`` on :math:`\\lVert W_{k+1} - W_k \\rVert`.
    """

    method = "cg"

    def __init__(self, X, C, sample_weight=None, forcing=None):
        H = augment(X) if sp.issparse(X) else SignedDesign(X, np.ones(X.shape[0]))
        # track_fitted: the pass needs H W of each solution, which CG's own products H d give along the way
        self.solver = IterativeLeastSquares(H, sample_weight, 1.0 / C, penalize_bias=True, track_fitted=True,
                                            forcing=iteration_forcing(H, forcing, default=LSVM_CG_FORCING))

    def solve(self, g, exact=False, x0=None):
        return self.solver.solve_normal(g, self.solver.tol if exact else None, x0)

    @property
    def converged(self):
        """Whether the last solve met its tolerance."""
        return self.solver.converged


class LSVMFactor:
    """``Q⁻¹`` of the linear LSVM by Sherman–Morrison–Woodbury (see the module docstring).

    ``S = I/C + [X, 1]ᵗ[X, 1]`` does not depend on the labels, so one factor
    serves every one-vs-rest problem on the same ``X``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        The samples, *not* augmented (the bias column is handled implicitly).
    C : float
        The paper's ``C > 0``.
    sample_weight : ndarray of shape (N,) or None
        Row weights ``s``: ``S = I/C + [X, 1]ᵗ diag(s) [X, 1]`` (``None``: all ones).
    forcing : float or None
        Wide ``X`` only: the forcing factor of the inexact solves inside the iteration
        (``linsep._core.linalg.iteration_forcing``; ``None``: by the size of ``X``).
    """

    def __init__(self, X, C, sample_weight=None, forcing=None):
        self.X = X
        self.C = float(C)
        self.sample_weight = sample_weight  # s: S = I/C + [X, 1]ᵀ diag(s) [X, 1] (weighted rows)
        n_samples, n_features = X.shape
        if too_wide_for_direct(n_features + 1):
            # Wide X (sparse text data): S by conjugate gradients, never formed.
            self._factor = _IterativeS(X, self.C, sample_weight, forcing)
        elif sample_weight is not None:
            if sp.issparse(X):
                H = augment(X)
                gram = (H.T @ sp.diags(sample_weight) @ H).toarray()
            else:
                gram = SignedDesign(X, np.ones(n_samples, dtype=X.dtype)).gram(sample_weight)
            gram[np.diag_indices_from(gram)] += 1.0 / self.C
            self._factor = PositiveDefiniteFactor(gram, 1.0 / self.C)
        else:
            # [X, 1]ᵀ[X, 1] summed in float64 whatever the type of X (the labels square away)
            gram = augmented_gram(X) if sp.issparse(X) else SignedDesign(X, np.ones(n_samples, dtype=X.dtype)).gram()
            gram[np.diag_indices_from(gram)] += 1.0 / self.C
            self._factor = PositiveDefiniteFactor(gram, 1.0 / self.C)
        self.method = self._factor.method

    @property
    def product_threads(self):
        """Threads of the CG products for wide sparse ``X`` (``linsep._core.threads.RowSplitCSR``), else 1."""
        return self._factor.solver.product_threads if isinstance(self._factor, _IterativeS) else 1

    @property
    def stats(self):
        """``{"factorization": method}``, plus the CG counts so far for wide ``X``."""
        return self._factor.solver.stats if isinstance(self._factor, _IterativeS) else {"factorization": self.method}

    def stepper(self, y, mu, threads=None):
        """The update (22) for labels ``y`` (±1) and step ``mu``, started at ``α_0 = Q⁻¹1``.

        ``threads`` (``None``: ``linsep._core.threads.pass_threads``) splits the compiled pass's rows.
        """
        return _LinearStep(self, y, mu, threads)


def lagrangian_svm(X, y, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, factor=None,
                   record_history=False, trace=None, sample_weight=None, plan=None):
    """Linear LSVM: iteration (22) with Sherman–Morrison–Woodbury (see the module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Samples, not augmented (or a design that carries its labels, e.g.
        ``linsep.designs.dask.DaskDesign``, with its ``factor``).
    y : ndarray of shape (N,) or None
        Labels in {-1, +1} (``None`` for a design that carries them).
    C : float, default=1.0
        Weight of :math:`\\tfrac12 \\lVert \\xi \\rVert^2` in (18) (larger :math:`C`: fewer margin violations).
    mu : float or None, default=None
        Step :math:`\\mu` of (22), :math:`0 < \\mu < 2/C`; ``None`` means :math:`1.9/C`.
    tol : float, default=1e-6
        Stop when :math:`\\lVert \\alpha_{k+1} - \\alpha_k \\rVert \\le \\mathit{tol} \\cdot \\lVert \\alpha_{k+1} \\rVert`
        and :math:`\\lVert W_{k+1} - W_k \\rVert \\le \\mathit{tol} \\cdot \\lVert W_{k+1} \\rVert`
        (module docstring).
    max_iter : int, default=10000
        Largest number of updates (22).
    factor : LSVMFactor or None
        A factor of the same ``X`` and ``C`` to reuse (one-vs-rest).
    record_history : bool, default=False
        Keep the dual objective :math:`f(\\alpha_k)` (21) and the steps
        :math:`\\lVert \\alpha_k - \\alpha_{k-1} \\rVert`,
        :math:`\\lVert W_k - W_{k-1} \\rVert` (:math:`f` is not monotone:
        :math:`\\alpha_0 = Q^{-1} \\mathbf{1}` is the unconstrained minimiser).
    trace : trace recorder or None
        Record the weights :math:`W_k` (rows :math:`k = 0, \\dots, \\texttt{n_iter}`).
    sample_weight : ndarray of shape (N,) or None
        Positive :math:`s_i`: the penalty :math:`\\tfrac{C}{2} \\sum_i s_i \\xi_i^2`
        (:math:`Q = \\operatorname{diag}(1 / (C s)) + H H^t`), solved as the dual in
        :math:`\\beta = \\alpha / \\sqrt{s}` on the rows :math:`\\sqrt{s_i} \\, h_i`
        with the linear term :math:`\\sqrt{s}` (``_LinearStep``); ``alpha`` is the
        original :math:`\\alpha`.  A given ``factor`` must have been built with the same
        weights.
    plan : dict or None, default=None
        The execution plan (tests, benchmarks, ``linsep warm-up``): ``{"threads": n}`` forces the compiled
        pass's thread count, ``{"cg_forcing": η}`` the inexact solves of wide ``X``
        (``linsep._core.linalg.iteration_forcing``; with ``factor=None``).  It never changes what is solved.
        ``None``: chosen from the data.

    Returns
    -------
    SolveResult
        ``weights`` :math:`W = (w, w_0) = H^t \\alpha` (bias last,
        :math:`w_0 = +\\mathbf{1}^t Y \\alpha`),
        ``status`` ``"converged"`` or ``"max_iter"`` (also when a CG solve of
        wide ``X`` stopped short of its tolerance), ``n_iter`` the number
        of updates (22), ``extra["alpha"]`` the dual solution :math:`\\alpha` (the
        last iterate: inactive entries are 0 up to about
        :math:`\\mathit{tol} \\cdot \\max \\alpha`,
        of either sign).

    See Also
    --------
    kernel_lagrangian_svm : The kernel form.
    linsep.LagrangianSVMClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> from linsep.solvers.lsvm.solver import lagrangian_svm
    >>> result = lagrangian_svm(X, y, C=1.0)
    >>> result.status, result.weights.shape, result.extra["alpha"].shape   # (w, b) and the dual α
    ('converged', (3,), (40,))
    """
    C, mu = _check_params(C, mu, tol, max_iter)
    if y is not None:
        y = np.asarray(y, dtype=float)
    if factor is None:
        factor = LSVMFactor(X, C, sample_weight, forcing=(plan or {}).get("cg_forcing"))
    elif factor.C != C:
        raise ValueError("factor was built for another C")
    elif getattr(factor, "sample_weight", None) is not sample_weight:
        raise ValueError("factor was built for other sample weights")
    threads = (plan or {}).get("threads")
    # y None: a design that carries its labels (and its own pass)
    step = factor.stepper(X, mu) if y is None else factor.stepper(y, mu, threads)
    def count_errors():
        if y is None:  # a design (a device's): the count of y_i f(x_i) <= 0 its step read, or the design's own
            wrong = getattr(step, "wrong", None)
            return int(X.count_nonpositive(step.weights)[0]) if wrong is None else wrong
        return sample_errors(X, y, step.weights)

    with serial_blas_for(factor):  # the whole iteration, when the sparse products run on threads
        n_iter, status, history = _iterate(step, tol, max_iter, record_history, trace,
                                           lambda: {"weights": step.weights}, count_errors)
        step.polish()
    if status == CONVERGED and not step.solves_converged:
        status = MAX_ITER  # a CG solve stopped short of its tolerance: no claim of convergence
    alpha = step.alpha if sample_weight is None else step.alpha * np.sqrt(sample_weight)  # α = √s β
    return SolveResult(
        weights=step.weights.astype(working_dtype(X), copy=False),  # = Hᵗα (eq. 20), from the last Woodbury solve
        n_iter=n_iter,
        status=status,
        history=history,
        extra={"alpha": alpha, **factor.stats, "plan": dtype_plan(working_dtype(X))},
    )


def kernel_lagrangian_svm(K, y, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, record_history=False,
                          trace=None, sample_weight=None, factor=None):
    """Kernel LSVM: iteration (22) with :math:`Q = I/C + (y y^t) \\circ (K + \\mathbf{1}\\mathbf{1}^t)` factored once.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Gram matrix :math:`K_{ij} = k(x_i, x_j)` of the training samples.
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    C, mu, tol, max_iter, record_history
        As in :func:`lagrangian_svm`.
    trace : trace recorder or None
        Record ``dual_coef`` :math:`y \\circ \\alpha_k` and ``intercept`` (rows
        :math:`k = 0, \\dots, \\texttt{n_iter}`).
    sample_weight : ndarray of shape (N,) or None
        Positive :math:`s_i`: the penalty :math:`\\tfrac{C}{2} \\sum_i s_i \\xi_i^2`, solved as in
        :func:`lagrangian_svm`
        (:math:`Q = I/C + (\\tilde y \\tilde y^t) \\circ (K + \\mathbf{1}\\mathbf{1}^t)`,
        :math:`\\tilde y = \\sqrt{s} \\, y`).
    factor : factor of Q or None
        :math:`Q` factored where the data live (``K`` and ``y`` then ``None``;
        the labels and weights are the factor's): its ``stepper(mu)`` runs
        update (22) there and reads the stopping rule's numbers, its
        ``dual(α)`` gives :math:`(y \\circ \\alpha, \\alpha)`
        (``linsep.designs.array_api_kernel_lsvm.DeviceKernelLSVMFactor``, the
        array-API device's).  ``intercept`` is then left to the caller
        (``None``: reading it is a copy from the device); no history nor trace.

    Returns
    -------
    SolveResult
        ``weights`` the signed dual coefficients :math:`y \\circ \\alpha` and ``intercept``
        :math:`w_0 = \\mathbf{1}^t Y \\alpha`, so
        :math:`f(x) = \\sum_i y_i \\alpha_i k(x_i, x) + w_0`;
        ``extra["alpha"]`` is :math:`\\alpha`.

    See Also
    --------
    lagrangian_svm : The linear form, factored in :math:`(d+1) \\times (d+1)`.
    linsep.KernelLagrangianSVMClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import kernel_matrix
    >>> from linsep.solvers.lsvm.solver import kernel_lagrangian_svm
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([-1, -1, 1, 1])                         # XOR
    >>> result = kernel_lagrangian_svm(kernel_matrix(X, X, kernel="rbf", gamma=2.0), y, C=10.0)
    >>> result.status, bool((np.sign(result.weights) == y).all())   # weights = y∘α, α > 0
    ('converged', True)
    """
    C, mu = _check_params(C, mu, tol, max_iter)
    if factor is not None:
        if factor.C != C:
            raise ValueError("factor was built for another C")
        step = factor.stepper(mu)
        n_iter, status, _ = _iterate(step, tol, max_iter, False)
        signed, alpha = factor.dual(step.alpha)
        return SolveResult(weights=signed, n_iter=n_iter, status=status, intercept=None,
                           extra={"alpha": alpha, "factorization": factor.method})
    y = np.asarray(y, dtype=float)
    labels = y
    if sample_weight is not None:  # the dual in β = α/√s on the rows √s_i y_i, linear term √s (as lagrangian_svm)
        root = np.sqrt(sample_weight)
        y = y * root
    Q = np.asarray(K, dtype=float) + 1.0
    Q *= y[:, None]
    Q *= y[None, :]
    Q[np.diag_indices_from(Q)] += 1.0 / C
    factor = PositiveDefiniteFactor(Q, 1.0 / C)
    step = _KernelStep(factor, C, mu, y.shape[0], None if sample_weight is None else root)
    def count_errors():
        signed = y * step.alpha
        return strict_errors(K @ signed + signed.sum(), labels, side_tolerance(K, signed, signed.sum()))

    n_iter, status, history = _iterate(step, tol, max_iter, record_history, trace,
                                       lambda: {"dual_coef": y * step.alpha, "intercept": (y * step.alpha).sum()},
                                       count_errors)
    alpha = step.alpha
    signed = y * alpha  # y_i β_i √s_i = y_i α_i
    if sample_weight is not None:
        alpha = alpha * root
    return SolveResult(
        weights=signed,
        n_iter=n_iter,
        status=status,
        intercept=float(signed.sum()),
        history=history,
        extra={"alpha": alpha, "factorization": factor.method},
    )

