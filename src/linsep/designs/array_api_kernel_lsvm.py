"""The kernel Lagrangian SVM on array-API input: the kernel matrix, its factors and the iteration on the device.

:class:`~linsep.KernelLagrangianSVMClassifier` chooses among three paths
(``linsep.estimators.lsvm``); :class:`ArrayAPIKernelLSVMFit` takes the same
paths where the data live (PyTorch on any device, CuPy, array-api-strict):

* **low rank** (:math:`K = F F^t` to rounding with few columns): the
  factor :math:`F` by :func:`~linsep.designs.array_api_kernel.device_pivoted_cholesky`
  (the pivots chosen on the host by the NumPy fit's code, only the pivot
  columns of :math:`K` computed, on the device, in float64 as the NumPy fit
  computes them), then the linear LSVM on the rows of :math:`F` (:class:`~linsep.designs.array_api.DeviceLSVMFactor`:
  the :math:`(r+1) \\times (r+1)` factor and the iteration on the device), as
  the NumPy fit does with ``linsep.kernels.low_rank_gram_factor``; the same
  rule (at most ``N/4`` columns) and, from ``ACTIVE_SET_MIN_SAMPLES``
  samples, the same probe of ``PROBE_SAMPLES`` rows (drawn by the same seed)
  decide it;
* **the iteration on** :math:`Q = I/C + (y y^t) \\circ (K + \\mathbf{1}\\mathbf{1}^t)`:
  :math:`K` is computed on the device in ``X``'s type
  (:func:`linsep.kernels.namespace_kernel_matrix`; ``kernel="precomputed"``:
  ``X`` itself), :math:`Q` and its ``N × N`` factor
  (:meth:`~linsep.designs.array_api.DeviceFactor.positive_definite`:
  Cholesky, or the eigenvectors with the spectrum floored at :math:`1/C`)
  are float64 on the device, and each update (22) is two triangular solves
  there (:class:`_DeviceKernelStep`, ``_KernelStep``'s update);
* **many samples** (from ``ACTIVE_SET_MIN_SAMPLES``, no small factor of
  :math:`K`, unweighted): the NumPy fit's active sets from kernel columns
  (``linsep.solvers.lsvm.active_set_kernel_lagrangian_svm``), the same sets
  round by round (:func:`device_active_set`), and where they fail the
  iteration on :math:`Q`, as in memory.

The solvers run the iterations (``linsep.solvers.lsvm.lagrangian_svm`` on the
design over :math:`F`, ``linsep.solvers.lsvm.kernel_lagrangian_svm`` with the
device factor of :math:`Q`); this module builds the problems, the factors
and the update steps on the device, and maps the solutions back to dual
coefficients.

What crosses to the host, each an explicit copy
(:func:`~linsep.designs.array_api.host_copy`): the classes (once); with
weights, their summary (:meth:`linsep.designs.array_api_fit.ArrayAPIFit.weighted_rows`);
per block of pivot candidates of the low-rank factor, what
:mod:`linsep.designs.array_api_kernel` lists; two numbers per factorisation
(whether the factor is finite, its smallest pivot); per iteration the five
numbers of the stopping rule (one copy: the steps of :math:`\\alpha` and
:math:`W` and their sizes, the dual objective); per active-set round two
copies of a few numbers; at the end, for the
low-rank path, each problem's ``r + 1`` weights, and the intercepts
:math:`\\sum_i y_i \\alpha_i` (one copy for every problem).  The ``N × N``
kernel matrix, :math:`Q`, its factor and :math:`\\alpha` never leave the device;
``dual_coef_``, ``intercept_`` and ``alpha_`` are in ``X``'s namespace,
type and device (float32 stays float32; :math:`Q`, the factors and the
iteration are float64, as in the NumPy fit).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from linsep._core.linalg import too_wide_for_direct
from linsep._core.plan import dtype_plan
from linsep._core.result import CONVERGED, MAX_ITER, SolveResult
from linsep.designs.array_api import (ArrayAPIDesign, DeviceFactor, DeviceLSVMFactor, _cholesky, read_scalars,
                                      triangular_solver)
from linsep.designs.array_api_kernel import ArrayAPIKernelFit, DeviceKernel, _signs, device_pivoted_cholesky
from linsep.kernels import is_positive_semidefinite

__all__ = ["ArrayAPIKernelLSVMFit", "DeviceKernelLSVMFactor", "DeviceKernelProblem", "device_active_set",
           "device_low_rank_factor"]


class _RankLimitReached(Exception):
    """More kernel columns asked for than a low-rank factor is worth."""


def device_low_rank_factor(xp, device, kernel, X, *, max_rank_fraction=0.25, block_size=64):
    """:func:`linsep.kernels.low_rank_gram_factor` on the device: ``F`` (``N × r``, float64) or ``None``.

    The kernel columns are computed in float64 whatever ``X``'s type (the
    NumPy fit computes them from ``X`` in float64: float32 values would
    end the factorisation at their rounding noise, on other pivots).
    The same rule: ``None`` for a kernel that is not positive semi-definite,
    where not even one block of columns would pay, or as soon as more than
    ``max_rank_fraction · N`` kernel columns (or more than a direct solve
    takes) have been asked for; else the pivoted Cholesky factor to rounding
    level (``tol=0``), its pivots chosen on the host by the NumPy code
    (:func:`~linsep.designs.array_api_kernel.device_pivoted_cholesky`).

    Parameters
    ----------
    xp, device
        The namespace and device of ``X``.
    kernel : DeviceKernel
        The fitted kernel (not ``"precomputed"``).
    X : array of shape (N, d)
        The training samples, on the device.
    max_rank_fraction, block_size
        As in :func:`linsep.kernels.low_rank_gram_factor`.
    """
    if not is_positive_semidefinite(kernel.kernel, kernel.params["coef0"]):
        return None
    n = X.shape[0]
    max_columns = int(max_rank_fraction * n)
    if max_columns < block_size:  # not even one block of columns would pay: the whole matrix is as cheap
        return None
    requested = 0
    # Kernel values to float64 rounding, as the NumPy fit's (it converts X to float64): a factor "to rounding
    # level" of float32 kernel values would stop at their noise, on other pivots and a coarser K (a float64 copy
    # of X, N·d numbers, while the N × r float64 factor is built)
    X = xp.astype(X, xp.float64, copy=False)
    training_columns = kernel.training_columns(X)

    def columns(idx):
        nonlocal requested
        requested += idx.shape[0]
        if requested > max_columns or too_wide_for_direct(requested + 1):  # r <= requested; +1: the bias
            raise _RankLimitReached
        return training_columns(idx)

    try:
        F, _, _ = device_pivoted_cholesky(xp, device, columns, kernel.diagonal(X), tol=0.0, block_size=block_size)
    except _RankLimitReached:
        return None
    return F


class ArrayAPIKernelLSVMFit(ArrayAPIKernelFit):
    """The steps of the kernel LSVM's fit of array-API data on its device (``BaseKernelSeparator._fit_where_data_live``).

    Validation, the row weights (``sample_weight`` times ``class_weight``'s,
    a device vector; rows of weight 0 leave the fit, refused for
    ``kernel="precomputed"`` as in memory), the classes and the model in
    ``X``'s namespace are
    :class:`~linsep.designs.array_api_kernel.ArrayAPIKernelFit`'s; :meth:`kernel_problems` builds each one-vs-rest problem on the
    kernel LSVM's path (module docstring), :meth:`dual` and
    :meth:`with_intercepts` map the solvers' results to the model.
    """

    def split(self, **ignored):
        """The fitted rows (``X_fit_``, the model's own copy): those of positive weight (no held-out split)."""
        self.X_fit = self.xp.asarray(self.X, copy=True) if self._data._kept is None else self.X
        return self.X_fit

    def stack(self, arrays, axis=0):
        return self.xp.stack(arrays, axis=axis)

    def kernel_problems(self, kernel, params, *, C, path=None, active_set_min_samples, probe_samples):
        """The ``±1`` problems of the kernel LSVM on the device, one at a time (:class:`DeviceKernelProblem`).

        The NumPy fit's path, chosen by its rules (module docstring): the
        low-rank factor ``F`` of ``K`` (a design over ``F`` and one
        :class:`~linsep.designs.array_api.DeviceLSVMFactor` of ``S`` shared by
        every problem: ``linsep.solvers.lsvm.lagrangian_svm`` solves them), else
        ``K`` on the device and, per problem, :class:`DeviceKernelLSVMFactor` of
        its ``Q`` (``linsep.solvers.lsvm.kernel_lagrangian_svm`` solves it; made
        when first needed, so one ``N × N`` factor is held at a time); many
        samples (unweighted): the active sets first
        (:meth:`DeviceKernelProblem.active_set`, kernel columns on demand, ``K``
        whole only if they fail).  ``path`` forces one (``"low_rank"``,
        ``"active_set"``; anything else: ``Q``), as the estimator's private
        ``_solver_plan`` does; ``None``: the NumPy fit's choice.
        """
        xp, device, X = self.xp, self.device, self.X_fit
        n = X.shape[0]
        if kernel == "precomputed" and self._data._kept is not None:  # the Gram matrix would lose rows, not columns
            raise ValueError("kernel='precomputed' takes no zero sample weights: remove those rows and "
                             "columns of the Gram matrix")
        if kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"kernel='precomputed' needs a square Gram matrix, got shape {tuple(X.shape)}")
        self.kernel = device_kernel = DeviceKernel(xp, kernel, **params)
        weights = self.weights
        root = None if weights is None else xp.sqrt(weights)
        signs = [_signs(xp, self.labels == positive.item()) for positive in self._data.positives]
        many = path is None and n >= active_set_min_samples
        F = None
        if path in (None, "low_rank") and kernel != "precomputed" and (not many or self._probe(probe_samples)):
            F = device_low_rank_factor(xp, device, device_kernel, X)
        if F is not None:
            factor = None
            for y in signs:
                design = ArrayAPIDesign(F, y, xp, device)
                solved = design if root is None else design.scaled(root)  # the rows √s_i h_i, linear term √s
                if factor is None:  # S = I/C + [F, 1]ᵀ diag(s) [F, 1] ignores the labels: shared
                    factor = DeviceLSVMFactor(solved, C, linear_term=root)
                yield DeviceKernelProblem(xp, y, factor=factor, design=solved, rank=F.shape[1])
            return
        # the active sets of the NumPy fit (many samples, unweighted: they solve the unweighted dual only)
        active_set = root is None and (path == "active_set" or many)
        whole = []  # K, computed once when a problem first needs it (the active sets read kernel columns only)

        def gram():
            if not whole:
                whole.append(X if kernel == "precomputed" else device_kernel(X, X))
            return whole[0]

        for y in signs:
            yield DeviceKernelProblem(xp, y, make_factor=lambda y=y: DeviceKernelLSVMFactor(xp, gram(), y, C, root),
                                      columns=self._columns(gram, whole) if active_set else None)

    def _columns(self, gram, whole):
        """``columns(rows, cols)`` → ``K[rows][:, cols]`` on the device (``rows`` ``None``: every row), from ``X``."""
        xp, X, kernel = self.xp, self.X_fit, self.kernel

        def columns(rows, cols):
            if whole or kernel.kernel == "precomputed":
                K = xp.take(gram(), cols, axis=1)
                return K if rows is None else xp.take(K, rows, axis=0)
            return kernel(X if rows is None else xp.take(X, rows, axis=0), xp.take(X, cols, axis=0))

        return columns

    def _probe(self, probe_samples):
        """The NumPy fit's probe: whether ``K`` of the same ``probe_samples`` rows has a factor of half as many columns."""
        xp, X = self.xp, self.X_fit
        rows = np.random.default_rng(0).choice(X.shape[0], size=min(probe_samples, X.shape[0]), replace=False)
        sample = xp.take(X, xp.asarray(np.sort(rows), device=self.device), axis=0)
        return device_low_rank_factor(xp, self.device, self.kernel, sample, max_rank_fraction=0.5) is not None

    def dual(self, result, problem):
        """``result`` of a problem's solver with the signed dual coefficients ``y ∘ α`` (device, float64) as ``weights``.

        ``intercept`` is :math:`\\sum_i y_i \\alpha_i` on the device (read
        for every problem at once by :meth:`with_intercepts`),
        ``extra["alpha"]`` :math:`\\alpha` in ``X``'s type and
        ``extra["plan"]["path"]`` the path that ran (``"low_rank"`` or ``"gram"``).
        """
        xp = self.xp
        if problem.design is not None:  # the linear LSVM on F: W is F's; α = √s β (weighted), on the device
            alpha = result.extra["alpha"]
            signed = problem.labels * alpha  # f(x) = Σ y_i α_i (k(x_i, x) + 1), as kernel_lagrangian_svm
            extra = {**result.extra, "rank": problem.rank}
            path = "low_rank"
        else:
            signed, alpha, extra = result.weights, result.extra["alpha"], dict(result.extra)
            path = "active_set" if "active" in extra else "gram"
        extra.update(alpha=xp.astype(alpha, self.X.dtype), plan=dtype_plan(np.dtype(np.float64), path=path))
        return replace(result, weights=signed, intercept=xp.sum(signed), extra=extra)

    def with_intercepts(self, results):
        """``results`` with their intercepts on the host: one copy for every problem."""
        intercepts = read_scalars(self.xp, [result.intercept for result in results])
        return [replace(result, intercept=float(value)) for result, value in zip(results, intercepts)]


class DeviceKernelProblem:
    """One ``±1`` problem of the kernel LSVM on the device.

    ``labels`` (``±1``, float64, on the device); the low-rank path: ``design``
    (the rows of ``F``, scaled by ``√s`` when weighted) and ``factor`` (of
    ``S``, shared), ``rank`` ``F``'s columns; the ``N × N`` path: ``design``
    ``None`` and :attr:`factor` a :class:`DeviceKernelLSVMFactor`, made by
    ``make_factor`` when first asked for (the active sets may not need it);
    with ``columns`` (many samples: ``columns(rows, cols)`` gives
    ``K[rows][:, cols]``) :meth:`active_set` tries the active sets first.
    """

    def __init__(self, xp, labels, *, factor=None, design=None, rank=None, make_factor=None, columns=None):
        self.xp, self.labels, self.design, self.rank, self.columns = xp, labels, design, rank, columns
        self._factor, self._make_factor = factor, make_factor

    @property
    def factor(self):
        if self._factor is None:
            self._factor = self._make_factor()
        return self._factor

    def active_set(self, *, C, max_rounds, max_active, subsample, random_state, atol):
        """:func:`device_active_set` on this problem, or ``None`` where its path has none (no ``columns``)."""
        if self.columns is None:
            return None
        return device_active_set(self.xp, self.columns, self.labels, C=C, max_rounds=max_rounds,
                                 max_active=max_active, subsample=subsample, random_state=random_state, atol=atol)


class DeviceKernelLSVMFactor:
    """``Q = I/C + (ỹ ỹᵀ) ∘ (K + 11ᵀ)`` factored on the device, for ``linsep.solvers.lsvm.kernel_lagrangian_svm``.

    ``ỹ = √s ∘ y`` (``s`` the row weights, ``linear_term`` ``√s``; ``None``:
    ``ỹ = y``, linear term ``1``), as the NumPy solver's weighted dual in
    ``β = α/√s``.  ``Q`` is formed in float64 from ``K`` (``X``'s type) and
    factored once (:meth:`~linsep.designs.array_api.DeviceFactor.positive_definite`:
    Cholesky, or the eigenvectors with the spectrum floored at ``1/C``, as
    ``PositiveDefiniteFactor`` on the host; two numbers read); ``Q`` itself is
    not kept.  :meth:`stepper` runs update (22) on the device, :meth:`dual`
    maps its ``β`` back to ``(y ∘ α, α)``.
    """

    def __init__(self, xp, K, y, C, linear_term=None):
        self.xp, self.C, self._c = xp, float(C), linear_term
        self._y = y if linear_term is None else y * linear_term
        # Q built in place in its own float64 array: beside K, one N × N temporary at a time (the identity)
        Q = xp.astype(K, xp.float64, copy=True)
        Q += 1.0
        Q *= self._y[:, None]
        Q *= self._y[None, :]
        identity = xp.eye(Q.shape[0], dtype=xp.float64, device=y.device)
        identity *= 1.0 / self.C
        Q += identity
        del identity
        self._factor = DeviceFactor.positive_definite(xp, Q, 1.0 / self.C)
        del Q  # the factor holds what the iteration needs
        self.method = self._factor.method

    def stepper(self, mu):
        """Update (22) started at ``α_0 = Q⁻¹c`` (Mangasarian's start), on the device."""
        return _DeviceKernelStep(self.xp, self._factor, self.C, mu, self._y, self._c)

    def dual(self, beta):
        """``(ỹ ∘ β, √s ∘ β)`` = ``(y ∘ α, α)``."""
        return self._y * beta, beta if self._c is None else beta * self._c


class _DeviceKernelStep:
    """``linsep.solvers.lsvm.solver._KernelStep`` on the device: update (22) with an ``N × N`` factor of ``Q``.

    :math:`\\alpha`, :math:`Q\\alpha` and the right-hand side stay on the
    device; each call reads the stopping rule's five numbers in one copy
    (:func:`~linsep.designs.array_api.read_scalars`).  The dual objective of
    the start is not read (only a trace would use it; traces are refused).
    """

    objective = None

    def __init__(self, xp, factor, C, mu, y, linear_term=None):
        self.xp, self.factor, self.C, self.mu = xp, factor, C, mu
        # c of f = ½αᵗQα − cᵗα: 1, or √s for weighted rows
        self._c = linear_term
        self.q_alpha = xp.ones_like(y) if linear_term is None else xp.astype(linear_term, xp.float64, copy=True)
        self.alpha = factor.solve(self.q_alpha)  # α_0 = Q⁻¹1, Mangasarian's start

    def __call__(self):
        xp, C, alpha, q_alpha = self.xp, self.C, self.alpha, self.q_alpha
        r = q_alpha - self.mu * alpha
        r = xp.clip(r, min=1.0) if self._c is None else xp.maximum(r, self._c)  # r_k = max(Qα_k − μα_k, c)
        new = self.factor.solve(r)
        diff = new - alpha
        step_sq, alpha_sq = xp.sum(diff * diff), xp.sum(new * new)
        new_r = xp.sum(new * r)
        linear = xp.sum(new) if self._c is None else xp.sum(new * self._c)
        # ‖ΔW‖² = Δαᵗ(Q − I/C)Δα with QΔα = r_k − r_{k−1}; ‖W‖² = αᵗ(Q − I/C)α with Qα_{k+1} = r_k
        values = read_scalars(xp, [step_sq, alpha_sq, xp.sum(diff * (r - q_alpha)) - step_sq / C,
                                   new_r - alpha_sq / C, 0.5 * new_r - linear])
        self.alpha, self.q_alpha = new, r
        step_sq, alpha_sq, weight_step_sq, weight_sq, self.objective = values
        return step_sq, alpha_sq, max(weight_step_sq, 0.0), max(weight_sq, 0.0), self.objective


def device_active_set(xp, columns, y, *, C, max_rounds, max_active, subsample, random_state, atol):
    """``linsep.solvers.lsvm.active_set_kernel_lagrangian_svm`` on the device: the same sets, the same rounds.

    The primal–dual active-set method from kernel columns (``columns(rows,
    cols)`` → ``K[rows][:, cols]`` on the device, ``rows`` ``None`` for every
    row), with the NumPy solver's choices made on the device: the starting
    subsample (every sample of the smaller class up to half of it, the rest
    drawn with ``random_state``: ``rng.choice`` of an index array draws
    positions that depend on its size only, so the draws are made on the host
    from the class counts and sent as masks over the classes' ranks), the
    active set as a boolean mask, ``Q_AA`` and its Cholesky factor (float64),
    the most violated constraints by a stable sort.  Per round a few numbers
    are read (the active set's size, whether ``α_A`` is finite and its
    smallest entry, the count of violated constraints, whether the set
    changed); nothing ``N``-sized leaves the device.

    Returns a :class:`~linsep._core.result.SolveResult` as the NumPy solver's
    (``weights`` ``y ∘ α`` and ``extra["alpha"]`` on the device,
    ``extra["active"]`` ``|A|``), ``intercept`` ``None`` (read by the caller).
    """
    n = y.shape[0]
    device = y.device
    rng = np.random.default_rng(random_state)
    rounds = 0
    if n > subsample:  # a small problem first, for a starting set close to the answer
        (positives,) = read_scalars(xp, [xp.sum(xp.astype(y > 0, xp.int64))])
        smaller = 1.0 if positives <= n / 2 else -1.0
        minority = y == smaller
        n_minority = int(positives) if smaller > 0 else n - int(positives)
        kept = n_minority if n_minority <= subsample // 2 else subsample // 2
        chosen = np.ones(n_minority, dtype=bool)
        if n_minority > subsample // 2:
            chosen[:] = False
            chosen[rng.choice(n_minority, subsample // 2, replace=False)] = True
        picked = np.zeros(n - n_minority, dtype=bool)
        picked[rng.choice(n - n_minority, subsample - kept, replace=False)] = True
        in_rows = _members(xp, minority, chosen, device) | _members(xp, ~minority, picked, device)
        rows = xp.nonzero(in_rows)[0]  # sorted, as the NumPy solver's np.sort
        y_rows = xp.take(y, rows)
        alpha, _, rounds, done = _device_rounds(
            xp, lambda idx: columns(rows, xp.take(rows, idx)), y_rows, C,
            xp.ones(rows.shape[0], dtype=xp.bool, device=device), max_rounds, max_active, atol)
        if not done:
            return _device_result(xp, xp.zeros(n, dtype=xp.float64, device=device), y, rounds, False, 0)
        free = xp.nonzero(alpha > 0)[0]
        signed = xp.take(y_rows, free) * xp.take(alpha, free)
        margins = y * (xp.astype(columns(None, xp.take(rows, free)), xp.float64) @ signed + xp.sum(signed))
        position = xp.clip(xp.cumulative_sum(xp.astype(in_rows, xp.int64)) - 1, min=0)  # a row's place in rows
        start = (margins < 1.0) | (in_rows & xp.take(alpha > 0, position))
    else:
        start = xp.ones(n, dtype=xp.bool, device=device)
    alpha, active, more, done = _device_rounds(xp, lambda idx: columns(None, idx), y, C, start,
                                               max_rounds - rounds, max_active, atol)
    (n_active,) = read_scalars(xp, [xp.sum(xp.astype(active, xp.int64))])
    return _device_result(xp, alpha, y, rounds + more, done, int(n_active))


def _members(xp, mask, chosen, device):
    """The rows of ``mask`` whose rank among its rows is marked in ``chosen`` (a host mask over those ranks)."""
    rank = xp.clip(xp.cumulative_sum(xp.astype(mask, xp.int64)) - 1, min=0)
    return mask & xp.take(xp.asarray(chosen, device=device), rank)


def _device_rounds(xp, columns, y, C, active, max_rounds, max_active, atol):
    """``_active_set_rounds`` on the device: ``(α, A, rounds, conditions met)``."""
    n = y.shape[0]
    device = y.device
    triangular = triangular_solver(xp)
    zeros = xp.zeros(n, dtype=xp.float64, device=device)
    alpha = zeros
    for rounds in range(1, max_rounds + 1):
        idx = xp.nonzero(active)[0]
        size = int(idx.shape[0])
        if size == 0 or size > max_active:
            return alpha, active, rounds - 1, False
        K_A = xp.astype(columns(idx), xp.float64)
        y_A = xp.take(y, idx)
        Q_AA = (xp.take(K_A, idx, axis=0) + 1.0) * y_A[:, None] * y_A[None, :]
        lower = _cholesky(xp, Q_AA + xp.eye(size, dtype=xp.float64, device=device) / C)
        if lower is None:
            return alpha, active, rounds, False
        ones = xp.ones((size, 1), dtype=xp.float64, device=device)
        alpha_A = triangular(lower.T, triangular(lower, ones, True), False)[:, 0]
        signed = y_A * alpha_A
        gradient = y * (K_A @ signed + xp.sum(signed)) - 1.0  # Qα − 1 outside A (α_I = 0)
        inactive = ~active
        violated = inactive & (gradient < -atol)
        finite, pivot, smallest, count = read_scalars(xp, [
            xp.all(xp.isfinite(alpha_A)), xp.min(xp.abs(xp.linalg.diagonal(lower))), xp.min(alpha_A),
            xp.sum(xp.astype(violated, xp.int64))])
        if not (finite and pivot > 0):  # CuPy's Cholesky does not raise where it fails: NaN or a zero pivot
            return alpha, active, rounds, False
        position = xp.clip(xp.cumulative_sum(xp.astype(active, xp.int64)) - 1, min=0)  # a row's place in A
        alpha = xp.where(active, xp.take(alpha_A, position), zeros)
        if smallest > 0 and count == 0:
            return alpha, active, rounds, True
        limit = max(size, 256)
        if count > limit:
            # the most violated only, ties in row order: the NumPy solver's stable sort of gradient[violated]
            order = xp.argsort(xp.where(violated, gradient, xp.full_like(gradient, np.inf)), stable=True)
            violated = violated & (xp.argsort(order, stable=True) < limit)
        following = (active & (alpha > 0)) | violated
        (changed,) = read_scalars(xp, [xp.any(following != active)])
        if not changed:  # no progress without the conditions: give up
            return alpha, active, rounds, False
        active = following
    return alpha, active, max_rounds, False


def _device_result(xp, alpha, y, n_iter, done, n_active):
    return SolveResult(weights=y * alpha, n_iter=int(n_iter), status=CONVERGED if done else MAX_ITER, intercept=None,
                       extra={"alpha": alpha, "active": n_active})
