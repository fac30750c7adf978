"""The kernel Lagrangian SVM on array-API input: the kernel matrix, its factors and the iteration on the device.

:class:`~linsep.KernelLagrangianSVMClassifier` chooses among three paths
(``linsep.estimators.lsvm``); :class:`ArrayAPIKernelLSVMFit` takes the same
paths where the data live (PyTorch on any device, CuPy, array-api-strict):

* **low rank** (:math:`K = F F^t` to rounding with few columns): the
  factor :math:`F` by :func:`~linsep.designs.array_api_kernel.device_pivoted_cholesky`
  (the pivots chosen on the host by the NumPy fit's code, only the pivot
  columns of :math:`K` computed, on the device, in float64 as the NumPy fit computes them), then the linear LSVM on the
  rows of :math:`F` (:class:`~linsep.designs.array_api.DeviceLSVMFactor`:
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
  :math:`K`): the NumPy fit finds the fixed point by active sets from kernel
  columns (``linsep.solvers.lsvm.active_set_kernel_lagrangian_svm``), whose
  membership decisions are made row by row on the host; the device runs the
  iteration on :math:`Q` instead, which converges to the same fixed point
  (the dual (19, 21) has one solution), to the accuracy its stopping rule
  ``tol`` gives.  ``mu``, ``tol`` and ``n_iter_`` then mean what they mean
  for the iteration.

What crosses to the host, each an explicit copy
(:func:`~linsep.designs.array_api.host_copy`): the classes (once); with
weights, their summary (:meth:`linsep.designs.array_api_fit.ArrayAPIFit.weighted_rows`);
per block of pivot candidates of the low-rank factor, what
:mod:`linsep.designs.array_api_kernel` lists; two numbers per factorisation
(whether the factor is finite, its smallest pivot); per iteration the five
numbers of the stopping rule (one copy: the steps of :math:`\\alpha` and
:math:`W` and their sizes, the dual objective); at the end, for the
low-rank path, each problem's ``r + 1`` weights, and the intercepts
:math:`\\sum_i y_i \\alpha_i` (one copy for every problem).  The ``N × N``
kernel matrix, :math:`Q`, its factor and :math:`\\alpha` never leave the device;
``dual_coef_``, ``intercept_`` and ``alpha_`` are in ``X``'s namespace,
type and device (float32 stays float32; :math:`Q`, the factors and the
iteration are float64, as in the NumPy fit).
"""

from __future__ import annotations

import numpy as np

from linsep._core.linalg import too_wide_for_direct
from linsep._core.plan import dtype_plan
from linsep._core.result import SolveResult
from linsep.designs.array_api import ArrayAPIDesign, DeviceFactor, DeviceLSVMFactor, read_scalars
from linsep.designs.array_api_kernel import ArrayAPIKernelFit, DeviceKernel, _signs, device_pivoted_cholesky
from linsep.kernels import _RankLimitReached, is_positive_semidefinite
from linsep.solvers.lsvm.solver import _check_params, _iterate, lagrangian_svm

__all__ = ["ArrayAPIKernelLSVMFit", "device_low_rank_factor"]


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

    Validation, the classes and the model in ``X``'s namespace are
    :class:`~linsep.designs.array_api_kernel.ArrayAPIKernelFit`'s; the row
    weights (``sample_weight`` times ``class_weight``'s) are a device vector
    (:meth:`linsep.designs.array_api_fit.ArrayAPIFit.weighted_rows`: rows of
    weight 0 leave the fit, refused for ``kernel="precomputed"`` as in
    memory); :meth:`solve` runs the kernel LSVM's path (module docstring) for
    every one-vs-rest problem.
    """

    takes_weights = True

    def __init__(self, X, y, owner, *, sample_weight=None, class_weight=None):
        from linsep.designs.array_api_fit import ArrayAPIFit

        self._data = data = ArrayAPIFit(X, y, owner, sample_weight=sample_weight, class_weight=class_weight)
        self.xp, self.device, self.classes, self.n_features = data.xp, data.device, data.classes, data.n_features
        self.X_val = self.labels_val = None
        self.held_out = False
        self.kernel = self.kernel_map = None
        self._sample_weight_given = sample_weight is not None or class_weight is not None

    def split(self, **ignored):
        """The fitted rows (``X_fit_``, the model's own copy): those of positive weight (no held-out split)."""
        data = self._data
        self.row_weights = data.weighted_rows()  # None unweighted; rows of weight 0 leave X and the labels
        if data._kept is not None and self._precomputed:
            raise ValueError("kernel='precomputed' takes no zero sample weights: remove those rows and "
                             "columns of the Gram matrix")
        self.X, self.labels = data.X, data.labels
        self.X_fit = self.xp.asarray(self.X, copy=True) if data._kept is None else self.X
        return self.X_fit

    _precomputed = False

    def for_kernel(self, kernel):
        """Declare the estimator's kernel before :meth:`split` (a precomputed Gram matrix keeps every row)."""
        self._precomputed = kernel == "precomputed"
        return self

    def stack(self, arrays, axis=0):
        return self.xp.stack(arrays, axis=axis)

    def solve(self, kernel, params, *, C, mu, tol, max_iter, path=None, active_set_min_samples, probe_samples):
        """One :class:`~linsep._core.result.SolveResult` per ``±1`` problem, as ``KernelLagrangianSVMClassifier`` solves it.

        ``weights`` the signed dual coefficients :math:`y \\circ \\alpha` (on
        the device, float64), ``intercept`` :math:`\\sum_i y_i \\alpha_i`,
        ``extra["alpha"]`` :math:`\\alpha` (in ``X``'s type) and
        ``extra["plan"]["path"]`` the path that ran (``"low_rank"`` or
        ``"gram"``).  ``path`` forces one (``"low_rank"``, ``"active_set"``:
        the iteration on :math:`Q` here, ``"gram"``), as the estimator's
        private ``_solver_plan`` does; ``None``: the NumPy fit's choice.
        """
        xp, device, X = self.xp, self.device, self.X_fit
        n = X.shape[0]
        if kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"kernel='precomputed' needs a square Gram matrix, got shape {tuple(X.shape)}")
        self.kernel = device_kernel = DeviceKernel(xp, kernel, **params)
        C, mu = _check_params(C, mu, tol, max_iter)
        weights = self.row_weights
        root = None if weights is None else xp.sqrt(weights)
        signs = [_signs(xp, self.labels == positive.item()) for positive in self._data.positives]
        many = path is None and n >= active_set_min_samples
        F = None
        if path in (None, "low_rank") and kernel != "precomputed" and (not many or self._probe(probe_samples)):
            F = device_low_rank_factor(xp, device, device_kernel, X)
        if F is not None:
            results = self._low_rank(F, signs, root, C, mu, tol, max_iter)
        else:
            K = X if kernel == "precomputed" else device_kernel(X, X)
            results = [self._iterated(K, y, root, C, mu, tol, max_iter) for y in signs]
        intercepts = read_scalars(xp, [result.intercept for result in results])  # one copy for every problem
        return [_with(result, intercept) for result, intercept in zip(results, intercepts)]

    def _probe(self, probe_samples):
        """The NumPy fit's probe: whether ``K`` of the same ``probe_samples`` rows has a factor of half as many columns."""
        xp, X = self.xp, self.X_fit
        rows = np.random.default_rng(0).choice(X.shape[0], size=min(probe_samples, X.shape[0]), replace=False)
        sample = xp.take(X, xp.asarray(np.sort(rows), device=self.device), axis=0)
        return device_low_rank_factor(xp, self.device, self.kernel, sample, max_rank_fraction=0.5) is not None

    def _low_rank(self, F, signs, root, C, mu, tol, max_iter):
        """The linear LSVM on the rows of ``F`` (one factor of ``S`` for every problem), as the NumPy fit's."""
        xp, device = self.xp, self.device
        factor = None
        results = []
        for y in signs:
            design = ArrayAPIDesign(F, y, xp, device)
            solved = design if root is None else design.scaled(root)  # the rows √s_i h_i, linear term √s
            if factor is None:  # S = I/C + [F, 1]ᵀ diag(s) [F, 1] ignores the labels: shared
                factor = DeviceLSVMFactor(solved, C, linear_term=root)
            result = lagrangian_svm(solved, None, C=C, mu=mu, tol=tol, max_iter=max_iter, factor=factor)
            alpha = result.extra["alpha"]  # α = √s β (weighted), on the device
            signed = y * alpha  # f(x) = Σ y_i α_i (k(x_i, x) + 1), as kernel_lagrangian_svm
            results.append(SolveResult(weights=signed, n_iter=result.n_iter, status=result.status,
                                       intercept=xp.sum(signed), extra=self._extra(alpha, factor.method, "low_rank",
                                                                                   F.shape[1])))
        return results

    def _iterated(self, K, y, root, C, mu, tol, max_iter):
        """:func:`linsep.solvers.lsvm.kernel_lagrangian_svm` on the device: ``Q`` factored once, iteration (22)."""
        xp, device = self.xp, self.device
        scaled = y if root is None else y * root  # the dual in β = α/√s on the rows √s_i y_i, linear term √s
        Q = (xp.astype(K, xp.float64) + 1.0) * scaled[:, None] * scaled[None, :]
        Q = Q + xp.eye(Q.shape[0], dtype=xp.float64, device=device) / C
        factor = DeviceFactor.positive_definite(xp, Q, 1.0 / C)
        del Q  # the factor holds what the iteration needs
        step = _DeviceKernelStep(xp, factor, C, mu, scaled, root)
        n_iter, status, _ = _iterate(step, tol, max_iter, False)
        alpha = step.alpha
        signed = scaled * alpha  # y_i β_i √s_i = y_i α_i
        if root is not None:
            alpha = alpha * root
        return SolveResult(weights=signed, n_iter=n_iter, status=status, intercept=xp.sum(signed),
                           extra=self._extra(alpha, factor.method, "gram"))

    def _extra(self, alpha, method, path, rank=None):
        xp = self.xp
        extra = {"alpha": xp.astype(alpha, self.X.dtype), "factorization": method,
                 "plan": dtype_plan(np.dtype(np.float64), path=path)}
        if rank is not None:
            extra["rank"] = int(rank)
        return extra


def _with(result, intercept):
    from dataclasses import replace

    return replace(result, intercept=float(intercept))


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
