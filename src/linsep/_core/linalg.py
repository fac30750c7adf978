"""Factor-once least-squares solves ``W = (YᵀDY + CĨ)⁺ YᵀD r`` without an inverse.

Ho–Kashyap iterations (Lauer & Bloch 2006, eqs. 7, 11, 14) solve one
least-squares problem per iteration with the same matrix ``Y`` and a new
right-hand side.  :class:`LeastSquaresFactor` factors once and then costs one
pass ``Yᵀ r`` plus two triangular solves per right-hand side.

Choice of factorisation:

* full column rank, or ``C > 0``: Cholesky of ``S(YᵀDY + CĨ)S``, the Gram
  matrix equilibrated by ``S = diag(1/‖Y_j‖)`` so that features of wildly
  different scales do not ruin its conditioning (the cheapest path: about
  the cost of forming ``YᵀY``), kept when its pivot ratio exceeds
  ``PIVOT_TOL``;
* ``C > 0`` and that pivot test fails: an eigendecomposition of the same
  matrix (positive definite in exact arithmetic), tiny eigenvalues dropped;
* rank-deficient or ``d + 1 > N`` with ``C = 0``: a thin SVD of :math:`D^{1/2} Y`
  (through a QR factorisation), truncated at ``max(N, p) · eps · s_max`` as
  :func:`numpy.linalg.matrix_rank` does, which yields the minimum-norm
  least-squares solution ``W = Y⁺ r``.  The SVD factors are applied, never
  multiplied into an explicit pseudo-inverse.

Wide data (``p = d + 1`` above :data:`_DIRECT_MAX_COLUMNS`, typically sparse
text or one-hot features) never form the ``p × p`` system: the factory
:func:`least_squares_solver` then returns :class:`IterativeLeastSquares`,
conjugate gradients on the normal equations, matrix-free (a few passes over
the non-zeros of ``Y`` per solve).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from linsep._core.signed_design import SignedDesign, summed_duplicates
from linsep._core.krylov import (FREQUENT_COLUMNS, RecycledSteps, column_squares, conjugate_gradients,
                                 conjugate_gradients_columns, minimum_norm_map)
from linsep._core.null_space import PEELING_MAX_FREE
from linsep._core.threads import RowSplitCSR, pass_threads, serial_blas_for

# A Cholesky pivot ratio below this signals (near) rank deficiency: the
# equilibrated Gram matrix then has a condition number above 1/PIVOT_TOL² =
# 1e10 and the normal equations lose more than 6 digits, enough to break the
# orthogonality YᵀE = 0 that Ho–Kashyap relies on (exactly collinear features,
# as in the IDA "image" set, give ratios near 1e-7).  The SVD (C = 0) or eigh (C > 0) path takes over.
PIVOT_TOL = 1e-5

_DIRECT_MAX_COLUMNS = 2000
"""Widest ``Y`` (columns ``p = d + 1``, bias included) solved by a factorisation of the ``p × p`` system;
wider ones go to :class:`IterativeLeastSquares` (see :func:`least_squares_solver`)."""
_DENSE_BUDGET_BYTES = 1 << 30
"""Largest dense copy of :math:`D^{1/2} Y` (``8Np`` bytes) the direct path's SVD may make for sparse ``Y``; beyond
it the iterative solver is used.  (The Gram matrix, ``8p²`` bytes with ``p <= _DIRECT_MAX_COLUMNS``, is far below.)"""
_EPS = float(np.finfo(np.float64).eps)
CG_RTOL = 1e-10
"""Default relative residual tolerance of :class:`IterativeLeastSquares` (see its docstring)."""
CG_PROOF_RTOL = 1e-14
"""The tightened tolerance of a solve whose result is to back a non-separability proof."""
CG_FORCING = 1e-2
"""Forcing factor of the inexact solves inside an iteration (:attr:`IterativeLeastSquares.forcing`): a warm-started
solve stops once its residual is this fraction of the residual it started from (the change of the right-hand side)."""
_INEXACT_MIN_ENTRIES = 1 << 16
"""Fewest stored entries of ``Y`` for which iterations solve inexactly (:func:`iteration_forcing`): below, a solve
is cheap and every W-step is solved to ``tol``, so the iterates are those of the direct path to ``tol``."""
_CG_MAX_ITER = 5000
FITTED_RTOL = 1e-9
"""Largest error of the fitted values ``Y W`` that :class:`IterativeLeastSquares` tracks (``track_fitted``):
``‖tracked − Y W‖₂ <= FITTED_RTOL ‖Y W‖₂``, checked after every solve that tracked them (:class:`_FittedCheck`).

Through a recycled correction ``Y W`` moves by ``Σ_j c_j Y s_j``, each kept ``Y s_j`` the difference of two
tracked values and so in error by their rounding (about ``eps ‖Y‖ ‖W‖``, however small the step), which the
coefficients multiply; they grow as the steps shrink (to 1e8 in the Lagrangian SVM's iterations on text).
Unchecked, the drift grew without bound: to 1e-3 of ``‖Y W‖∞`` within 35 Ho–Kashyap steps on text under
OpenBLAS's Haswell kernels, to 2.6e-8 … 6.1e-7 (by kernel) in the Lagrangian SVM's fit of the 15 000-document
corpus (K = 4).  A product every few solves does not bound it: the kept ``Y s_j`` keep their errors, and the
first correction after a product put the drift back at 1e-3 (``docs/performance_notes.md``)."""
_FITTED_PROBES = 4
"""Random vectors of :class:`_FittedCheck` (``k``)."""
_FITTED_SHARE = 0.02
"""The share ``s`` of :data:`FITTED_RTOL` that :class:`_FittedCheck`'s estimate of the error may reach."""
_FITTED_SEED = 40
"""Seed of :class:`_FittedCheck`'s vectors: the same in every fit, so that a fit repeats bit for bit."""
_RECURSIVE_SOLVES = 16
"""Inexact solves in a row that start from the previous solve's recursive residual (no product) before one
computes the true residual ``g − M x`` again (:class:`IterativeLeastSquares`)."""


@dataclass(frozen=True)
class SolverLimits:
    """The size limits of the W-step factory: the defaults above, or those of a :func:`solver_limits` block."""

    direct_max_columns: int = _DIRECT_MAX_COLUMNS
    dense_budget_bytes: int = _DENSE_BUDGET_BYTES
    cg_max_iter: int = _CG_MAX_ITER
    product_threads: int | None = None  # threads of the sparse CG products (None: linsep._core.threads.pass_threads)
    frequent_columns: int = FREQUENT_COLUMNS  # k of the minimum-norm map's metric (linsep._core.krylov)
    peeling_max_free: int = PEELING_MAX_FREE  # free columns of the map's peeling (linsep._core.null_space; 0: none)
    first_solve_max_iter: int | None = None  # CG iterations of each iterative solver's first solve (None: cg_max_iter)
    map_max_iter: int | None = None  # CG iterations of the minimum-norm map (None: the solver's cg_max_iter)
    direct_weighted: bool = True  # False: a weighted system (IRLS) goes to CG, as one the direct path refuses
    inexact_min_entries: int = _INEXACT_MIN_ENTRIES  # fewest entries of Y for inexact solves (iteration_forcing)


_LIMITS = contextvars.ContextVar("linsep_solver_limits", default=SolverLimits())


@contextlib.contextmanager
def solver_limits(**limits):
    """Private: run a block with other :class:`SolverLimits` (tests force the iterative path with it).

    Scoped to the block and to the current thread's context: nothing outside it changes.
    """
    token = _LIMITS.set(replace(_LIMITS.get(), **limits))
    try:
        yield
    finally:
        _LIMITS.reset(token)


_potrf, _potrs = sla.get_lapack_funcs(("potrf", "potrs"), (np.empty((1, 1)),))


def _to_dense(Y):
    return Y.toarray() if sp.issparse(Y) or isinstance(Y, SignedDesign) else Y


def _gram(A):
    """``AᵀA`` as a dense array.

    NumPy recognises ``A.T @ A`` and calls BLAS ``syrk`` (half the flops of a
    general product).  SciPy's own ``syrk`` would do the same through a second
    OpenBLAS copy, whose threads then compete with NumPy's on small problems.
    """
    if sp.issparse(A):
        return np.asarray((A.T @ A).toarray(), dtype=float)
    if isinstance(A, SignedDesign):
        return A.gram()
    A = np.asarray(A, dtype=float)
    return A.T @ A


class _TooLargeForDirect(Exception):
    """The direct path would densify a large sparse ``Y`` (rank-deficient SVD): go iterative."""


class LeastSquaresFactor:
    """Solver for :math:`\\min_W \\lVert D^{1/2} (Y W - r) \\rVert^2 + C \\lVert \\tilde I W \\rVert^2` with ``Y`` fixed.

    Parameters
    ----------
    Y : ndarray, sparse matrix or :class:`~linsep._core.signed_design.SignedDesign` of shape (N, p)
        Sign-normalised augmented design matrix (bias column last).
    sample_weight : ndarray of shape (N,) or None
        The diagonal of ``D`` (``None`` means ``D = I``).
    ridge : float
        ``C >= 0``; the penalty leaves the last (bias) coordinate free, as the
        matrix ``Ĩ`` of Lauer & Bloch (2006), eq. 11.
    gram : ndarray of shape (p, p) or None
        ``YᵀDY`` when the caller has it (problems whose ``Y`` differ only by
        the signs of their rows share ``YᵀY``); computed otherwise.
    singular : {"svd", "eigh"}
        The factorisation of a (numerically) singular system without ``C``: ``"svd"``, the QR and SVD of
        ``Y`` itself (a dense float64 copy of ``Y``; the minimum-norm solution to the precision of ``Y``), or
        ``"eigh"``, the eigendecomposition of the unscaled ``YᵀDY`` with eigenvalues below
        :math:`\\max(N, p)\\, \\varepsilon \\, \\lambda_\\max` cut (no copy of ``Y``: for a ``SignedDesign`` that must not
        be formed; the minimum-norm solution on the directions whose singular values exceed
        :math:`\\sqrt{\\max(N, p)\\, \\varepsilon}\\, s_\\max`, the rest counted as null space).

    Attributes
    ----------
    method : {"cholesky", "eigh", "svd"}
        Which factorisation was used.
    rank : int
        Numerical rank found (``p`` on the Cholesky path).
    """

    def __init__(self, Y, sample_weight=None, ridge=0.0, gram=None, singular="svd"):
        if singular not in ("svd", "eigh"):
            raise ValueError(f"singular must be 'svd' or 'eigh', got {singular!r}")
        if sample_weight is not None and not _LIMITS.get().direct_weighted:
            raise _TooLargeForDirect
        self.Y = Y
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.ridge = float(ridge)
        n_samples, n_cols = Y.shape
        self._p = n_cols
        if gram is not None:
            gram = np.array(gram, dtype=float)
        elif self.sample_weight is None:
            gram = _gram(Y)
        elif isinstance(Y, SignedDesign):
            gram = Y.gram(self.sample_weight)
        else:
            root = np.sqrt(self.sample_weight)
            gram = _gram(Y.multiply(root[:, None]).tocsr() if sp.issparse(Y) else Y * root[:, None])
        if not np.all(np.isfinite(gram)):
            # LAPACK's eigensolvers can loop forever on non-finite input: refuse it here.
            raise FloatingPointError(
                "the least-squares system overflowed (non-finite YᵀDY): the data or the weights are too "
                "extreme for this solver (for IRLS, raise irls_floor)")
        norms = np.sqrt(np.maximum(gram.diagonal(), 0.0))
        norms[norms == 0.0] = 1.0
        self._scale = 1.0 / norms
        gram_scaled = gram * self._scale[:, None] * self._scale
        if self.ridge > 0:
            penalty = self.ridge * self._scale[:-1] ** 2
            gram_scaled[np.arange(n_cols - 1), np.arange(n_cols - 1)] += penalty
        use_cholesky = self.ridge > 0 or n_cols <= n_samples
        if use_cholesky:
            # LAPACK potrf directly: scipy.linalg.cholesky's checks cost more than the
            # factorisation itself at the sizes of a typical fit.
            lower, info = _potrf(gram_scaled, lower=1, clean=1)
            pivots = np.abs(lower.diagonal())
            if info == 0 and np.all(np.isfinite(pivots)) and pivots.min() > PIVOT_TOL * pivots.max():
                # S G S = L Lᵀ  ⇒  G = (S⁻¹L)(S⁻¹L)ᵀ: S⁻¹L is still lower triangular, so
                # it is the Cholesky factor of G itself and solves need no rescaling.
                self._chol = np.asfortranarray(lower * norms[:, None])
                self.method, self.rank = "cholesky", n_cols
                return
            if self.ridge > 0:
                self._factor_eigh(gram_scaled)
                return
        if singular == "eigh":
            # the minimum-norm solution of Y itself: the eigenvectors of the unscaled YᵀDY (a column scaling
            # would give the minimum of another norm).  A null direction's eigenvalue comes out of eigh as
            # rounding, some ε λ_max: the cut is the SVD's max(N, p) ε, on eigenvalues (√ of it on s / s_max)
            self._scale = np.ones(n_cols)
            self._factor_eigh(gram, cut=max(n_samples, n_cols) * np.finfo(float).eps)
            return
        self._factor_svd()

    def _factor_eigh(self, gram_scaled, cut=None):
        # C > 0 makes the matrix positive definite in exact arithmetic; an
        # eigen-decomposition absorbs what rounding takes away.
        evals, evecs = sla.eigh(gram_scaled, check_finite=False)
        keep = evals > evals.max() * (self._p * np.finfo(float).eps if cut is None else cut)
        self._evecs, self._evals = evecs[:, keep], evals[keep]
        self.rank = int(keep.sum())
        self.method = "eigh"

    def _factor_svd(self):
        if sp.issparse(self.Y) and 8 * self.Y.shape[0] * self.Y.shape[1] > _LIMITS.get().dense_budget_bytes:
            raise _TooLargeForDirect
        # No column equilibration here: the minimum-norm solution must be the one of
        # Y itself (W = Y⁺ r), and the SVD is insensitive to column scaling anyway.
        A = np.array(_to_dense(self.Y), dtype=float)
        if self.sample_weight is not None:
            A = A * np.sqrt(self.sample_weight)[:, None]
        # QR first, then the SVD of the small square factor R: much cheaper than a
        # direct SVD of a tall (or wide) matrix, and as accurate.
        tall = A.shape[0] >= A.shape[1]
        Q, R = sla.qr(A if tall else A.T, mode="economic", check_finite=False)
        U_r, s, Vt_r = sla.svd(R, check_finite=False, lapack_driver="gesvd")
        U, Vt = (Q @ U_r, Vt_r) if tall else (Vt_r.T, (Q @ U_r).T)
        cutoff = s.max(initial=0.0) * max(A.shape) * np.finfo(float).eps
        keep = s > cutoff
        self._U, self._s, self._Vt = U[:, keep], s[keep], Vt[keep]
        self.rank = int(keep.sum())
        self.method = "svd"

    @property
    def stats(self):
        """What a solver reports in ``SolveResult.extra``: ``{"factorization": method}``."""
        return {"factorization": self.method}

    def reweighted(self, sample_weight):
        """The same problem with new weights ``D`` (IRLS): a new factorisation (through the factory)."""
        return least_squares_solver(self.Y, sample_weight, self.ridge)

    @property
    def cholesky_factor(self):
        """Lower triangular ``L`` with ``YᵀDY + CĨ = L Lᵀ`` (Cholesky path only)."""
        if self.method != "cholesky":
            raise AttributeError(f"no Cholesky factor: the factorisation is {self.method!r}")
        return self._chol

    @property
    def svd_factors(self):
        """``(U, s, Vt)`` of the truncated SVD :math:`D^{1/2} Y \\approx U \\operatorname{diag}(s) V^t` (SVD path only)."""
        if self.method != "svd":
            raise AttributeError(f"no SVD factors: the factorisation is {self.method!r}")
        return self._U, self._s, self._Vt

    @property
    def spectral_factor(self):
        """``M`` of shape ``(p, r)`` with :math:`(Y^t D Y + C \\tilde I)^{+} = M M^t` (eigh path only).

        :meth:`solve_normal` applies :math:`S V \\Lambda^{-1} V^t S` (``S`` the column scaling, ``V``, ``Λ``
        the ``r`` eigenpairs kept); ``M = S V Λ^{-1/2}`` is that operator as one factor, which the compiled
        Ho–Kashyap loop applies as ``M (Mᵀ g)`` (``linsep.solvers.ho_kashyap.loops``).
        """
        if self.method != "eigh":
            raise AttributeError(f"no spectral factor: the factorisation is {self.method!r}")
        return (self._evecs * self._scale[:, None]) / np.sqrt(self._evals)

    def solve(self, rhs):
        """Return ``W`` minimising :math:`\\lVert D^{1/2} (Y W - \\mathit{rhs}) \\rVert^2 + C \\lVert \\tilde I W \\rVert^2` (minimum norm if not unique)."""
        rhs = np.asarray(rhs, dtype=float)
        if self.method == "svd":
            if self.sample_weight is not None:
                rhs = rhs * np.sqrt(self.sample_weight) if rhs.ndim == 1 else rhs * np.sqrt(self.sample_weight)[:, None]
            return self._Vt.T @ ((self._U.T @ rhs) / (self._s if rhs.ndim == 1 else self._s[:, None]))
        weighted = rhs if self.sample_weight is None else (
            rhs * self.sample_weight if rhs.ndim == 1 else rhs * self.sample_weight[:, None])
        return self.solve_normal(np.asarray(self.Y.T @ weighted))

    def normal_solver(self):
        """:meth:`solve_normal` as a function ``g ↦ (z, info)`` in LAPACK's form, for a loop of many solves.

        On the Cholesky path it is LAPACK's ``potrs`` with the factor bound (the call :meth:`solve_normal`
        makes, so the same numbers; ``info != 0`` only on invalid arguments): a dask worker's chain of iterates
        (``step.block_chain``) solves with it without going through this class at every iterate (nor through
        ``scipy.linalg.cho_solve``, whose checks cost 25 times the solve on a small system).  Elsewhere
        :meth:`solve_normal` with ``info = 0``.
        """
        if self.method == "cholesky":
            return functools.partial(_potrs, self._chol, lower=1)
        return self._solve_normal_with_info

    def _solve_normal_with_info(self, g):
        return self.solve_normal(g), 0

    def solve_normal(self, g):
        """Return ``(YᵀDY + CĨ)⁻¹ g`` on the Cholesky/eigh paths (``g`` in original coordinates)."""
        if self.method == "cholesky":
            # LAPACK potrs directly: the NumPy Ho–Kashyap loop (sparse data, modified HK) calls
            # this once per iteration on small systems, where scipy.linalg.cho_solve's checks dominate.
            z, info = _potrs(self._chol, g, lower=1)
            if info != 0:  # pragma: no cover - only on invalid arguments
                raise np.linalg.LinAlgError(f"potrs failed with info={info}")
            return z
        if self.method == "eigh":
            s = self._scale if np.ndim(g) == 1 else self._scale[:, None]
            coeffs = self._evecs.T @ (g * s)
            z = self._evecs @ (coeffs / (self._evals if coeffs.ndim == 1 else self._evals[:, None]))
            return z * s
        raise RuntimeError("solve_normal is not available on the SVD path")  # pragma: no cover


class IterativeLeastSquares:
    """Matrix-free solver for :math:`\\min_W \\lVert D^{1/2} (Y W - r) \\rVert^2 + C \\lVert \\tilde I W \\rVert^2` by conjugate gradients.

    Conjugate gradients on the normal equations

    .. math::

        (Y^t D Y + C \\tilde I)\\, W = Y^t D\\, r ,

    with the operator applied as ``v ↦ Yᵀ(D(Y v)) + C Ĩ v`` (two passes over
    the non-zeros of ``Y``; the ``p × p`` matrix is never formed).  The same
    interface as :class:`LeastSquaresFactor` (``solve``, ``solve_normal``,
    ``reweighted``, ``method``, ``rank``), chosen by
    :func:`least_squares_solver` for wide data.  Sparse products run on
    :func:`linsep._core.threads.pass_threads` threads (:class:`~linsep._core.threads.RowSplitCSR`, the same bits).

    * **Warm start.** Each solve starts from the previous solution of the
      same solver (zero at first): Ho–Kashyap's right-hand sides change
      little from one iteration to the next, so a solve costs a few
      iterations.  IRLS's reweighted solvers (:meth:`reweighted`) start from
      the last solution too.
    * **Preconditioner.** Jacobi, ``M = diag(YᵀDY + CĨ)``, from the column
      norms of ``Y`` (it equalises columns of very different scales, as
      tf-idf columns are; about 7 times fewer iterations on text data),
      except where it would change the answer (next point).
    * **Minimum norm for C = 0.** Without a penalty, rank-deficient ``Y``
      (or ``d + 1 > N``) has many least-squares solutions; the answer must be
      :class:`LeastSquaresFactor`'s, the minimum-norm ``W = Y⁺ r`` (the one
      in the row space of ``Y``).  Plain CG from a start in the row space
      (zero, earlier solutions; ``D > 0`` keeps the row space) stays there
      and converges to it; Jacobi-preconditioned iterates converge to the
      minimum ``M``-norm solution instead (the same ``Y W``, another
      null-space component).  So with ``C = 0`` and ``minimum_norm=True``
      (default) CG runs unpreconditioned; with ``minimum_norm=False`` it is
      preconditioned, and :meth:`minimum_norm_part` maps the weights
      Ho–Kashyap returns to ``Y⁺ r`` (its ``Y W``, ``E``, ``B`` are the
      minimum-norm solves' all along).  Ho–Kashyap with validation rows
      (early stopping) asks for ``minimum_norm=True``: the validation scores
      of its iterates depend on their null-space component.
    * **Inexact solves inside an iteration.** With ``forcing = η > 0`` a
      solve without an explicit ``tol`` stops as soon as its residual is
      ``η`` times the residual it started from, ``‖YᵀD(r − r_prev)‖`` for
      a warm start (or at ``tol``, whichever comes first): the error of
      ``W`` is then about :math:`\\eta` times the step :math:`W_k - W_{k-1}` and shrinks
      with it, as in inexact Newton methods (Dembo, Eisenstat & Steihaug
      1982).  The iterations that use it (Ho–Kashyap, the Lagrangian SVM)
      re-solve their returned weights at ``tol`` (:meth:`solve` with
      ``tol`` given).  ``converged`` then says whether the solve met its own
      target; ``exact`` whether it met ``tol``.
    * **Recycled steps.** With ``forcing > 0`` the solver keeps its last
      ``linsep._core.krylov.RECYCLED_STEPS`` steps :math:`s_j = W_j - W_{j-1}` and their images
      :math:`M s_j` (from the residuals, no extra product) and starts each warm
      solve from the Galerkin correction of the previous solution in their
      span: :math:`W_0 = W_{k-1} + V c` with :math:`(V^t M V) \\, c = V^t r_0`.  In an
      iteration that converges linearly the right-hand sides change along
      nearly the same directions from one iteration to the next (the slowest
      mode), so this start leaves CG a fraction of the work (the matrix does
      not change; the forcing target stays ``η ‖r_0‖`` of the plain warm
      start, so each solve is as accurate as without it).
    * **Fitted values.** With ``track_fitted`` (and ``forcing > 0``) ``Y W`` moves with ``W``: from the
      true product that each true residual makes, by the kept steps' ``Y s_j`` through a correction and
      by CG's own products ``Y d`` (:meth:`fitted_values`).  After each such solve a randomised check
      (:class:`_FittedCheck`) takes them only if they are within :data:`FITTED_RTOL` of the product
      ``Y W`` (in 2-norm, relative), and forms the product instead otherwise.
    * **Tolerance.** A solve stops when the relative residual of the normal
      equations ``‖YᵀD(r − Y W) − C Ĩ W‖ <= tol · ‖YᵀD r‖``, ``tol`` =
      :data:`CG_RTOL` (``1e-10``) by default, or after ``max_iter``
      iterations (then ``converged`` is ``False``), or when the residual
      stagnates at the rounding floor.  For Ho–Kashyap this means the
      orthogonality ``YᵀE = 0`` holds only to ``tol · ‖YᵀB‖``, so
      ``u = −E`` is only a *candidate* proof: the solver re-solves at
      :data:`CG_PROOF_RTOL` and accepts it only after the per-column check of
      :mod:`linsep._core.certificates` (see :func:`linsep.solvers.ho_kashyap.ho_kashyap`).

    Parameters
    ----------
    Y : sparse matrix, ndarray or :class:`~linsep._core.signed_design.SignedDesign` of shape (N, p)
    sample_weight : ndarray of shape (N,) or None
        The diagonal of ``D``.
    ridge : float
        ``C >= 0``.
    tol : float
        Relative residual tolerance of a solve (see above).
    max_iter : int or None
        Most CG iterations per solve (default 5000).
    penalize_bias : bool
        Penalise the last coordinate too (``C I`` instead of ``C Ĩ``; the
        Lagrangian SVM's ``I/ν + HᵀH``).
    minimum_norm : bool
        With ``C = 0``: solve to the minimum-norm solution (unpreconditioned)
        rather than the minimum ``M``-norm one (preconditioned, faster).
    forcing : float
        ``η`` of the inexact solves (above); ``0`` (default): every solve to ``tol``.
    products : tuple (A, At) or None, default=None
        What computes ``Y v`` and ``Yᵀ u``, shared with the solver this one is :meth:`reweighted` from (the
        CSR copies of sparse ``Y`` are made once per fit); ``None``: formed from ``Y``.

    Attributes
    ----------
    method : "cg"
    rank : None
        Not computed.
    iterations : int
        CG iterations summed over all solves (and over the solvers this one
        was reweighted from).
    solves : int
        Number of solves (right-hand-side columns).
    converged : bool
        Whether the last solve met its target (``tol``, or the forcing target).
    exact : bool
        Whether the last solve met ``tol`` itself.
    residual : float
        Relative residual of the last solve.
    """

    method = "cg"
    rank = None

    def __init__(self, Y, sample_weight=None, ridge=0.0, *, tol=CG_RTOL, max_iter=None, penalize_bias=False,
                 minimum_norm=True, forcing=0.0, track_fitted=False, products=None):
        n_samples, n_cols = Y.shape
        self.Y = Y
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.ridge = float(ridge)
        self.tol = float(tol)
        self.max_iter = _LIMITS.get().cg_max_iter if max_iter is None else int(max_iter)
        self._first_max_iter = _LIMITS.get().first_solve_max_iter  # None: the first solve's budget is max_iter
        self.penalize_bias = bool(penalize_bias)
        self.minimum_norm = bool(minimum_norm)
        self.forcing = float(forcing)
        self.track_fitted = bool(track_fitted)
        self._A, self._At = self._products(Y) if products is None else products
        self._penalty = np.full(n_cols, self.ridge)
        if not self.penalize_bias:
            self._penalty[-1] = 0.0
        self._inv_diag = None
        if self.ridge > 0 or not self.minimum_norm:
            diagonal = self._normal_diagonal() + self._penalty
            diagonal[diagonal == 0.0] = 1.0
            self._inv_diag = 1.0 / diagonal
        self._x = np.zeros(n_cols)
        self._recycled = RecycledSteps()  # steps s_j and M s_j of the inexact solves (forcing > 0)
        self._image, self._recursive = None, 0  # M x of the last solution x, from its residual; solves since a true one
        self._fitted = self._returned = None  # Y x of the last solution x (track_fitted), and the copy returned
        self._fitted_check = None  # the check of the tracked Y x (_FittedCheck), made once needed
        self.fitted_products = 0  # products Y x that replaced tracked values the check refused
        self.iterations, self.solves, self.converged, self.exact, self.residual = 0, 0, True, True, 0.0
        self.metric_columns = 0  # k of the minimum-norm map's metric, once it ran with one
        self.minimum_norm_map = None  # how the last minimum-norm map ran: "peeled", "metric cg" or "cg"

    def _products(self, Y):
        """``(A, At)``: what computes ``Y v`` and ``Yᵀ u`` (a distributed solver's subclass has its own)."""
        if sp.issparse(Y):
            # CSR copies of Y and Yᵀ: both products of an iteration run row-wise, in float64, their
            # rows split over threads (the same bits on any number of them).
            A = sp.csr_matrix(Y, dtype=np.float64)
            threads = _LIMITS.get().product_threads or pass_threads(A.nnz)
            return RowSplitCSR(A, threads), RowSplitCSR(A.T.tocsr(), threads)
        A = Y if isinstance(Y, SignedDesign) else np.asarray(Y, dtype=float)
        return A, A.T

    def _normal_diagonal(self):
        """``diag(YᵀDY)``, the Jacobi preconditioner less the penalty."""
        return column_squares(getattr(self._A, "matrix", self._A), self.sample_weight)

    def _matvec(self, v):
        z = self._image_of_last = np.asarray(self._A @ v, dtype=float)  # Y v, read by the fitted values' tracking
        if self.sample_weight is not None:
            z = z * self.sample_weight
        out = np.asarray(self._At @ z, dtype=float).ravel()
        if self.ridge > 0:
            out += self._penalty * v
        return out

    @property
    def product_threads(self):
        """Threads of the products ``Y v`` and ``Yᵀ u`` (:class:`linsep._core.threads.RowSplitCSR`; 1 for dense ``Y``)."""
        parts = getattr(self._A, "parts", None)
        return 1 if parts is None else len(parts)

    @property
    def stats(self):
        """``factorization``, ``cg_iterations``, ``cg_solves``, ``cg_residual`` (last solve), ``cg_product_threads``,
        ``cg_metric_columns`` (``k`` of the minimum-norm map's metric; 0: plain CG or no map),
        ``minimum_norm_map`` (:meth:`minimum_norm_part`: ``"peeled"``, ``"metric cg"``, ``"cg"``; ``None``: no map)."""
        return {"factorization": self.method, "cg_iterations": self.iterations, "cg_solves": self.solves,
                "cg_residual": self.residual, "cg_product_threads": self.product_threads,
                "cg_metric_columns": self.metric_columns, "minimum_norm_map": self.minimum_norm_map}

    def reweighted(self, sample_weight):
        """The same ``Y`` and ``C`` with new weights ``D`` (IRLS), warm-started from the last solution."""
        other = IterativeLeastSquares(self.Y, sample_weight, self.ridge, tol=self.tol, max_iter=self.max_iter,
                                      penalize_bias=self.penalize_bias, minimum_norm=self.minimum_norm,
                                      forcing=self.forcing, track_fitted=self.track_fitted,
                                      products=(self._A, self._At))
        other._x = self._x.copy()
        other._fitted_check = self._fitted_check  # it checks Y x, whatever the weights
        other.iterations, other.solves = self.iterations, self.solves
        return other

    def minimum_norm_part(self, W, tol=None):
        """The minimum-norm ``W'`` with ``Y W' = Y W``: the projection of ``W`` on the row space of ``Y``.

        Every least-squares solution of a ``C = 0`` problem (whatever ``D``)
        maps to the minimum-norm one ``Y⁺ r`` (:func:`linsep._core.krylov.minimum_norm_map`:
        directly where sparse ``Y`` peels, else by CG kept in the row space).  Its iterations are counted.
        """
        limits = _LIMITS.get()
        out, n_iter, self.residual, self.converged, self.minimum_norm_map = minimum_norm_map(
            self._A, self._At, W, self.tol if tol is None else float(tol),
            self.max_iter if limits.map_max_iter is None else limits.map_max_iter,
            threads=self.product_threads, frequent_columns=limits.frequent_columns,
            peeling_max_free=limits.peeling_max_free)
        self.iterations += n_iter
        self.exact = self.residual <= self.tol
        if self.minimum_norm_map == "metric cg":
            self.metric_columns = limits.frequent_columns
        self.solves += 1
        return out

    def solve(self, rhs, tol=None, x0=None):
        """Return ``W`` minimising :math:`\\lVert D^{1/2} (Y W - \\mathit{rhs}) \\rVert^2 + C \\lVert \\tilde I W \\rVert^2` (minimum norm if ``C = 0``), to ``tol``.

        ``tol=None``: the solver's own ``tol``, or its forcing target (inexact
        solve) if ``forcing > 0``; an explicit ``tol`` is always met in full.
        ``x0``: the warm start (default: the last solution).  A 2-D ``rhs``:
        its columns, each from zero, in one lockstep CG (:meth:`_solve_columns`);
        ``converged`` then says whether every column met the tolerance and
        ``residual`` is the largest.
        """
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 2:
            return self._solve_columns(rhs, tol)
        weighted = rhs if self.sample_weight is None else rhs * self.sample_weight
        return self.solve_normal(np.asarray(self._At @ weighted, dtype=float).ravel(), tol, x0)

    def _solve_columns(self, rhs, tol):
        """The columns of a 2-D ``rhs``, unrelated, each from zero, in one lockstep CG (one product of ``Y``
        with every column still running per iteration: :func:`linsep._core.krylov.conjugate_gradients_columns`).

        Each column stops at ``tol`` (or, without it, at the solver's target for a solve from zero: ``tol``, or
        the forcing share of its right-hand side); ``converged`` says whether every column met it, ``exact``
        whether every column met ``tol``, ``residual`` is the largest.  The last column is the warm start of
        the next solve, as if the columns had been solved one after another.
        """
        weighted = rhs if self.sample_weight is None else rhs * self.sample_weight[:, None]
        g = np.asarray(self._At @ weighted, dtype=float)
        rtol = float(tol) if tol is not None else max(self.tol, self.forcing)
        x = np.zeros((g.shape[0], rhs.shape[1]))
        with serial_blas_for(self):
            x, n_iter, residual, converged = conjugate_gradients_columns(self._matmat, g, x, self._inv_diag, rtol,
                                                                         self._iteration_budget())
        self.iterations += int(n_iter.sum())
        self.solves += rhs.shape[1]
        self.residual = float(residual.max(initial=0.0))
        self.exact = bool(np.all(residual <= self.tol))
        self.converged = bool(np.all(converged))
        self._x, self._image, self._fitted = x[:, -1].copy(), None, None
        self._returned = self._x.copy()
        return x

    def adopt(self, x):
        """Take ``x``, solved elsewhere to this solver's ``tol`` for the same system, as its last solution.

        The next solve starts from it (and counts no iterations for it).  Ho–Kashyap's first W-steps of
        the one-vs-rest problems of a fit are solved together (their ``YᵀY`` is the same) and each
        problem's solver goes on from its own.  Returns the copy of ``x`` a solve would return.
        """
        self._x = np.array(x, dtype=float)
        self._image = self._fitted = None
        self._returned = self._x.copy()
        self.converged = self.exact = True
        return self._returned

    def _iteration_budget(self):
        """Most CG iterations of the next solve: ``first_solve_max_iter`` (a private limit) for the first, else ``max_iter``."""
        return self.max_iter if self.solves or self._first_max_iter is None else self._first_max_iter

    def _matmat(self, V):
        """``(YᵀDY + CĨ) V`` for the columns of ``V``: :meth:`_matvec` with one product of ``Y`` for all of them."""
        Z = np.asarray(self._A @ V, dtype=float)
        if self.sample_weight is not None:
            Z = Z * self.sample_weight[:, None]
        out = np.asarray(self._At @ Z, dtype=float)
        if self.ridge > 0:
            out += self._penalty[:, None] * V
        return out

    def solve_normal(self, g, tol=None, x0=None):
        """Return the solution of ``(YᵀDY + CĨ) W = g``, warm-started from ``x0`` (default: the last solution).

        ``tol`` as in :meth:`solve`.
        """
        g = np.asarray(g, dtype=float)
        start = self._x.copy() if x0 is None else np.array(x0, dtype=float)
        forcing = self.forcing if tol is None else 0.0
        known = fitted = on_step = None
        recycling = self.forcing > 0 and x0 is None and bool(np.any(g))
        if recycling:  # inexact iteration: start from the recycled steps' correction
            previous = start.copy()
            if self._image is not None and self._recursive < _RECURSIVE_SOLVES:
                # M x_prev = g_prev − r_prev from the last solve's own (recursively updated) residual:
                # one product pair less per solve; a true residual every _RECURSIVE_SOLVES solves.
                r0 = g - self._image
                self._recursive += 1
            else:
                r0 = g - self._matvec(start)
                self._recursive = 0
                self._fitted = self._image_of_last if self.track_fitted else None  # Y x afresh
            if self._fitted is not None:  # Y x moves with x: by the kept steps' Y s_j, then by CG's Y d
                fitted, previous_fitted = self._fitted.copy(), self._fitted
                on_step = lambda alpha: np.add(fitted, alpha * self._image_of_last, out=fitted)  # noqa: E731
            known = (self._recycled.corrected(start, r0, fitted), float(np.linalg.norm(r0)))
        with serial_blas_for(self):
            x, n_iter, residual, converged = conjugate_gradients(self._matvec, g, start, self._inv_diag,
                                                                 self.tol if tol is None else float(tol),
                                                                 self._iteration_budget(),
                                                                 forcing=forcing, start=known, on_step=on_step)
        self._image = None
        if recycling:  # CG left its final residual in known[0]
            if fitted is not None and not self._checked_fitted().accepts(fitted, x):
                fitted = np.asarray(self._A @ x, dtype=float)
                self.fitted_products += 1
            self._recycled.keep(x - previous, r0 - known[0], None if fitted is None else fitted - previous_fitted)
            self._image = g - known[0]
        self._x, self._fitted, self._returned = x, fitted, x.copy()
        self.iterations += n_iter
        self.solves += 1
        # "exact": the solver's own tolerance was met (a tightened solve may stop above its tighter one);
        # "converged": so was the target of this solve (an inexact solve's forcing target)
        self.exact, self.residual = residual <= self.tol, residual
        self.converged = self.exact or (forcing > 0 and converged)
        return self._returned

    def _checked_fitted(self):
        """The :class:`_FittedCheck` of this ``Y`` (made at the first solve that tracks ``Y x``)."""
        if self._fitted_check is None:
            frobenius = _frobenius(getattr(self._A, "matrix", self._A))
            self._fitted_check = _FittedCheck(self._At, self.Y.shape[0], frobenius)
        return self._fitted_check

    def fitted_values(self, W):
        """A copy of ``Y W`` if ``W`` is the last solution :meth:`solve_normal` returned and ``track_fitted``
        kept it up to date (``None`` otherwise; ``W`` must not have been changed in place)."""
        return self._fitted.copy() if self._fitted is not None and W is self._returned else None


def _frobenius(A):
    """``‖A‖_F`` of a sparse matrix, a :class:`SignedDesign` or a dense array."""
    if sp.issparse(A):
        return float(np.linalg.norm(summed_duplicates(A).data))
    if isinstance(A, SignedDesign):  # rows ±[x_i, 1]
        return float(np.sqrt(sum(float(np.square(Xb, dtype=np.float64).sum()) for _, Xb in A._blocks()) + A.shape[0]))
    return float(np.linalg.norm(np.asarray(A)))


class _FittedCheck:
    """Whether tracked fitted values ``f`` are within :data:`FITTED_RTOL` of ``A x``: Freivalds' check.

    For ``k`` (:data:`_FITTED_PROBES`) standard normal vectors ``w_i`` and ``z_i = Aᵀ w_i`` (one product of
    ``Aᵀ`` with ``k`` columns, once), ``P_i = w_iᵀ f − z_iᵀ x = w_iᵀ e`` for the error ``e = f − A x`` is
    normal with variance ``‖e‖₂²``, and ``Σ P_i² / ‖e‖₂²`` is ``χ²`` with ``k`` degrees of freedom.
    :meth:`accepts` takes ``f`` when ``√(Σ P_i² / k) <= s τ ‖f‖₂`` (``s`` = :data:`_FITTED_SHARE`, ``τ`` =
    :data:`FITTED_RTOL`) and the check's own rounding ``r_i`` is at most half of that: an error
    ``‖e‖₂ > τ ‖f‖₂`` then passes only if ``χ²_k < k (1.5·s)²``, with probability 1.6e-6 (k = 4,
    s = 0.02), and only after growing fifty-fold since the last check took ``f``.  The check's rounding,
    to first order in ``eps``: ``|r_i| <= eps ‖w_i‖₂ (‖f‖₂ + 2 ‖A‖_F ‖x‖₂)`` (the products ``w_iᵀ f`` and
    ``z_iᵀ x``, and ``z_i``'s own, ``eps |Aᵀ| |w_i|``, with ``‖Aᵀ w‖₂ <= ‖A‖_F ‖w‖₂``); where that is more,
    the check refuses ``f`` (the product is formed).  A check costs ``2 k (N + p)`` flops, two products
    with ``k`` rows, after one product of ``Aᵀ`` with ``k`` columns: far less than the product ``A x`` it
    spares (measured in ``docs/performance_notes.md``).
    The vectors come from a fixed seed (:data:`_FITTED_SEED`): a fit repeats bit for bit.
    """

    def __init__(self, At, n_rows, frobenius):
        W = np.random.default_rng(_FITTED_SEED).standard_normal((n_rows, _FITTED_PROBES))
        self._W, self._Z = W.T, np.asarray(At @ W, dtype=float).T  # rows w_i and z_i (views of C-order columns)
        self._w_norm = float(np.linalg.norm(W, axis=0).max())
        self._frobenius = frobenius

    def accepts(self, f, x):
        """Whether ``f`` may stand for ``A x`` (class docstring)."""
        f_norm = float(np.linalg.norm(f))
        threshold = _FITTED_SHARE * FITTED_RTOL * f_norm
        rounding = _EPS * self._w_norm * (f_norm + 2.0 * self._frobenius * float(np.linalg.norm(x)))
        if not rounding <= 0.5 * threshold:
            return False
        P = self._W @ f - self._Z @ x
        return float(np.sqrt(np.mean(np.square(P)))) <= threshold


class GramOnly:
    """A stand-in for ``Y`` that a backend never forms: its shape, for :class:`LeastSquaresFactor` given ``gram``.

    The SVD path (rank-deficient ``Y`` without ``C``) needs ``Y`` itself: it
    raises a clear error instead.
    """

    def __init__(self, shape):
        self.shape = shape

    def __array__(self, *args, **kwargs):
        raise ValueError(
            "this backend solves the least-squares steps from the Gram matrix, which is (numerically) "
            "singular here (collinear features, or fewer samples than columns): give C > 0 "
            "(MHKS / MHKA), remove the collinear features, or fit the data in memory as NumPy arrays")
def iteration_forcing(Y, forcing=None, default=CG_FORCING):
    """The forcing factor ``η`` of an iteration's inexact W-steps on ``Y`` (:class:`IterativeLeastSquares`).

    ``forcing`` if given (``0``: every solve to ``tol``), else ``default`` (:data:`CG_FORCING` unless a solver
    states its own, e.g. the LSVM's ``linsep.solvers.lsvm.LSVM_CG_FORCING``) for ``Y`` with at least
    :data:`_INEXACT_MIN_ENTRIES` stored entries and ``0`` below.  Inexact solves perturb the iterates by a
    fraction ``η`` of each step, so a fit then agrees with the direct path's to about ``η`` times its last
    steps rather than to ``tol``; where a solve is cheap that is not worth it.
    """
    if forcing is not None:
        return float(forcing)
    entries = getattr(Y, "nnz", None)  # stored entries of sparse Y (or of a stand-in that knows them)
    if entries is None:
        entries = Y.shape[0] * Y.shape[1]
    return float(default) if entries >= _LIMITS.get().inexact_min_entries else 0.0


def too_wide_for_direct(n_cols):
    """Whether a ``p × p`` system with ``p = n_cols`` goes to the iterative solver (see :func:`least_squares_solver`).

    The width alone decides: the Gram matrix of the widest direct system (``8p²`` bytes, 32 MB) is
    far inside :data:`_DENSE_BUDGET_BYTES`.
    """
    return n_cols > _LIMITS.get().direct_max_columns


def least_squares_solver(Y, sample_weight=None, ridge=0.0, gram=None, *, tol=CG_RTOL, penalize_bias=False,
                         minimum_norm=True, singular="svd"):
    """The W-step solver for ``Y``: :class:`LeastSquaresFactor` or :class:`IterativeLeastSquares`.

    The direct factorisation serves every ``Y`` with at most
    :data:`_DIRECT_MAX_COLUMNS` columns (and every call that passes ``gram``,
    which is then already in memory); wider ``Y`` (or a sparse
    rank-deficient ``Y`` whose SVD would need a dense copy beyond
    :data:`_DENSE_BUDGET_BYTES`) get
    the matrix-free conjugate gradients.  Both solve the same problem and
    return the same solution (the minimum-norm one when it is not unique),
    exactly or to the relative residual ``tol``.
    ``penalize_bias`` and ``minimum_norm`` are those of :class:`IterativeLeastSquares`
    (``penalize_bias`` always takes the iterative path), ``singular`` that of :class:`LeastSquaresFactor`.
    """
    if gram is not None or not (penalize_bias or too_wide_for_direct(Y.shape[1])):
        try:
            return LeastSquaresFactor(Y, sample_weight, ridge, gram=gram, singular=singular)
        except _TooLargeForDirect:
            pass
    return IterativeLeastSquares(Y, sample_weight, ridge, tol=tol, penalize_bias=penalize_bias,
                                 minimum_norm=minimum_norm)


def greedy_block_cholesky(block, bound, residual):
    """Greedy pivoted Cholesky of a small candidate block ``S[c, c]`` (right-looking, ``b × b``), in place.

    The inner step of :func:`pivoted_cholesky` (also of the device map,
    :class:`linsep.designs.array_api_kernel.DeviceKernelMap`, which brings
    each ``b × b`` block to the host for it): the candidate of largest
    residual is taken while it exceeds ``bound``.  Returns ``(chosen, R)``:
    the local indices taken, in pivot order, and the lower triangular ``R``
    with ``R Rᵀ = S[Q, Q]`` (``None`` when none is taken); ``block`` is left
    holding the Schur complement, whose diagonal is the candidates' residual.

    ``residual``: the candidates' residual diagonal ``d_c = A_cc − ‖F_c‖²`` as
    the caller tracks it, written onto the block's diagonal first.  The block's
    own diagonal is the same quantity recomputed from the columns, whose last
    bits depend on the arithmetic that computed them (a kernel's ``‖a‖² + ‖b‖² −
    2⟨a, b⟩``, summed in another order on a device or another BLAS): where the
    residuals tie — an RBF kernel's are all exactly one at the start — those bits
    would choose the first pivot, and every pivot after it.  From the tracked
    residual the first candidate in order wins a tie, on every machine.
    """
    block[np.diag_indices_from(block)] = residual
    chosen, factor_columns = [], []
    while True:
        d = block.diagonal().copy()
        d[chosen] = -np.inf
        local = int(np.argmax(d))
        if not d[local] > bound:
            break
        col = block[:, local] / np.sqrt(d[local])
        block -= np.outer(col, col)
        chosen.append(local)
        factor_columns.append(col)
    if not chosen:
        return chosen, None
    return chosen, np.tril(np.array(factor_columns).T[chosen])


def pivot_candidates(residual, bound, block_size):
    """The next block's pivot candidates of :func:`pivoted_cholesky`: the ``block_size`` largest residuals above ``bound``.

    Empty when no residual exceeds ``bound`` (the factorisation is done).
    """
    candidates = np.flatnonzero(residual > bound)
    if candidates.size > block_size:
        candidates = candidates[np.argpartition(residual[candidates], -block_size)[-block_size:]]
    return candidates


def updated_residual(residual, norms, candidates, block, new_pivots):
    """The residual diagonal after a block of :func:`pivoted_cholesky`, in place.

    ``norms``: the squared norms of the block's new factor rows; the
    candidates' residuals are those the block factorisation left
    (``block``'s diagonal), the new pivots' zero, and rounding below zero
    is clipped.
    """
    residual -= norms
    residual[candidates] = block.diagonal()
    residual[new_pivots] = 0.0
    np.maximum(residual, 0.0, out=residual)
    return residual


def pivoted_cholesky(columns, diagonal, *, tol=0.0, block_size=64):
    """Greedy pivoted (partial) Cholesky ``A ≈ F Fᵀ`` of a positive semi-definite ``A`` from its columns.

    Pivots are taken while some residual diagonal entry
    ``d_i = A_ii − ‖F_i‖²`` exceeds ``max(tol, N·eps) · max_i A_ii``; at the
    end every ``d_i`` is below that bound, and since ``A − F Fᵀ`` is then
    positive semi-definite (the Schur complement), every entry satisfies
    ``|A_ij − (F Fᵀ)_ij| <= sqrt(d_i d_j)``.  ``F`` equals
    ``A[:, P] R⁻ᵀ`` with ``R = F[P]`` lower triangular (``P`` the pivots in
    order): the Nyström approximation ``A[:, P] A[P, P]⁻¹ A[P, :]`` on the
    pivot set.  Cost ``O(N r²)`` for rank ``r``, and only the ``r`` pivot
    columns of ``A`` are read (never the whole matrix).

    Blocked: the ``block_size`` samples of largest residual are the
    candidates; their columns are brought up to date with one matrix product
    (the Schur complement ``S[:, c]``), the small block ``S[c, c]`` is
    factored with greedy pivoting (a candidate whose residual falls to the
    bound — a near-duplicate of a pivot — is not taken), and the new columns
    are ``S[:, Q] R_Q⁻ᵀ``, one triangular solve: all the ``O(N r²)`` work is
    matrix–matrix products.

    Parameters
    ----------
    columns : callable
        ``columns(idx)`` returns ``A[:, idx]``, shape ``(N, len(idx))``.
    diagonal : ndarray of shape (N,)
        ``A_ii``.
    tol : float
        Relative bound on the residual diagonal (0: to rounding level).
    block_size : int
        Columns fetched per block.

    Returns
    -------
    F : ndarray of shape (N, r)
    pivots : ndarray of int, shape (r,)
    residual : ndarray of shape (N,)
        The final ``d_i`` (clipped at 0).
    """
    residual = np.array(diagonal, dtype=float)
    n = residual.shape[0]
    top = residual.max(initial=0.0)
    bound = max(float(tol), n * np.finfo(float).eps) * top
    F = np.zeros((n, min(n, 8 * block_size)), order="F")
    pivots = []
    while top > 0:
        candidates = pivot_candidates(residual, bound, block_size)
        if candidates.size == 0:
            break
        r = len(pivots)
        S = np.array(columns(candidates), dtype=float, order="F")
        if r:
            S -= F[:, :r] @ F[candidates, :r].T
        block = S[candidates].copy()
        chosen, R = greedy_block_cholesky(block, bound, residual[candidates])
        if not chosen:
            residual[candidates] = np.maximum(block.diagonal(), 0.0)
            continue
        # New columns S[:, Q] R⁻ᵀ, with R R^t = S[Q, Q] the factor just computed (Q in pivot order).
        new = sla.solve_triangular(R, S[:, chosen].T, lower=True, check_finite=False).T
        if r + len(chosen) > F.shape[1]:  # grow the buffer geometrically
            grown = np.zeros((n, min(n, max(2 * F.shape[1], r + len(chosen)))), order="F")
            grown[:, :r] = F[:, :r]
            F = grown
        F[:, r:r + len(chosen)] = new
        pivots.extend(candidates[chosen].tolist())
        updated_residual(residual, np.einsum("ij,ij->i", new, new), candidates, block, pivots[r:])
    r = len(pivots)
    return np.ascontiguousarray(F[:, :r]), np.array(pivots, dtype=np.intp), residual


class PositiveDefiniteFactor:
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

    converged = True  # a factorisation solves exactly (to rounding)

    def solve(self, rhs):
        if self.method == "cholesky":
            return sla.cho_solve(self._cho, rhs, check_finite=False)
        return self._evecs @ ((self._evecs.T @ rhs) / self._evals)
