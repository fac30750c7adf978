"""Kernel Ho–Kashyap on array-API input: the empirical kernel map built on the input's device, HK run there.

The NumPy fit (:mod:`linsep.solvers.ho_kashyap.kernel`) runs the linear
Ho–Kashyap iteration on the empirical kernel map of the training samples: a
pivoted partial Cholesky factor :math:`K \\approx L L^t` (only the pivot
columns of :math:`K` computed), centred and rotated onto its principal axes.
:class:`DeviceKernelMap` builds the same map in the input's namespace and on
its device: the kernel columns (:func:`linsep.kernels.namespace_kernel_matrix`,
the kernels' formulas written once for every namespace), the Schur
complement updates, the triangular solves, the centring and the ``r × r``
eigendecomposition.  :class:`ArrayAPIKernelFit` offers the fit's steps: the kernel estimator's
solver (Ho–Kashyap) runs the one namespace HK pass
(:class:`~linsep.designs.array_api.ArrayAPIDesign` over the map's features,
the map's diagonal Gram matrix shared by every one-vs-rest problem), and the
weights map back to dual coefficients on the device.
Prediction is ``K(X, X_P) a_P + b`` on the device, over the pivots ``P``
(the only training samples with nonzero dual coefficients).

What crosses to the host, each an explicit copy (:func:`~linsep.designs.array_api.host_copy`):

* per block of pivot candidates (``block_size`` = 64 pivots at most), the
  candidates' ``b × b`` Schur complement with a flag that the block's kernel
  columns are finite, and the ``N`` squared norms of the block's new factor
  rows: the pivots are chosen on the host, with the code of the NumPy fit
  (:func:`linsep._core.linalg.greedy_block_cholesky`, the candidates by the
  same ``argpartition``), so that both fits choose the same pivots; the
  residual diagonal (``N`` numbers) is kept on the host;
* once, the ``r`` eigenvalues of the centred map's Gram matrix (which
  directions to keep);
* per HK iteration, the pass's statistics (as for the linear fit), and at
  the end each problem's ``rank + 1`` weights;
* ``gamma="scale"``: the variance of ``X`` (one number).

Host to device: the candidates' indices and their ``b × b`` factor per
block, the pivots' positions (``N`` integers) once, the weights.  The
``N × N`` kernel matrix is never formed: the map holds ``N × r`` numbers
(float64), the kernel columns are computed ``b`` at a time in ``X``'s type.
"""

from __future__ import annotations

import numpy as np

from linsep._core.linalg import greedy_block_cholesky, pivot_candidates, updated_residual
from linsep.designs.array_api import ArrayAPIDesign, read_scalars, to_host, triangular_solver
from linsep.kernels import namespace_kernel_diagonal, namespace_kernel_matrix

__all__ = ["ArrayAPIKernelFit", "DeviceKernel", "DeviceKernelMap", "device_pivoted_cholesky", "kernel_labels",
           "kernel_scores"]


_NOT_FINITE = ("kernel values are not finite: they overflowed; lower degree, gamma or coef0, or rescale X (e.g. with "
               "StandardScaler)")


class DeviceKernel:
    """The fitted kernel of an estimator in the namespace ``xp``: values, diagonals, rows against training samples.

    ``kernel="precomputed"``: the arrays passed are kernel values already
    (the training Gram matrix, or the rows ``k(X_new, X_fit)``).
    """

    def __init__(self, xp, kernel, gamma=None, degree=3, coef0=0.0):
        self.xp, self.kernel = xp, kernel
        self.params = {"gamma": gamma, "degree": degree, "coef0": coef0}

    def __call__(self, A, B):
        """``k(A, B)`` on the device (``A``, ``B`` samples of one type)."""
        return namespace_kernel_matrix(A, B, self.xp, kernel=self.kernel, **self.params)

    def diagonal(self, X):
        if self.kernel == "precomputed":
            return self.xp.linalg.diagonal(X)
        return namespace_kernel_diagonal(X, self.xp, kernel=self.kernel, **self.params)

    def training_columns(self, X):
        """``columns(idx)`` → ``K[:, idx]`` of the training samples ``X`` (or of the Gram matrix ``X``)."""
        xp = self.xp
        if self.kernel == "precomputed":
            return lambda idx: xp.take(X, idx, axis=1)
        return lambda idx: self(X, xp.take(X, idx, axis=0))

    def rows(self, X_new, X_fit, pivots):
        """``k(X_new, X_fit[P])``: the kernel values of new samples against the pivots ``P`` (a device index)."""
        xp = self.xp
        if self.kernel == "precomputed":
            return xp.take(X_new, pivots, axis=1)  # X_new holds k(X_new, X_fit)
        return self(X_new, xp.take(X_fit, pivots, axis=0))


def device_pivoted_cholesky(xp, device, columns, diagonal, *, tol=0.0, block_size=64):
    """:func:`linsep._core.linalg.pivoted_cholesky` with the ``N``-sized work on the device.

    The same blocked greedy pivoting: the factor ``F`` (``N × r``, float64)
    and every product with it stay in ``xp`` on ``device``; the residual
    diagonal (``N`` numbers) and the choice of pivots are on the host (module
    docstring: what crosses, per block).  Returns ``(F, pivots, residual)``,
    ``F`` on the device, ``pivots`` (NumPy ``intp``) in pivot order.

    Raises ``ValueError`` when a block of kernel columns holds a value that is
    not finite (as :func:`linsep.kernels.kernel_matrix` does on the host).
    """
    residual = np.array(to_host(diagonal, xp))  # writable: a DLPack copy may be read-only
    if not np.all(np.isfinite(residual)):
        raise ValueError(_NOT_FINITE)
    n = residual.shape[0]
    top = residual.max(initial=0.0)
    bound = max(float(tol), n * np.finfo(float).eps) * top
    triangular = triangular_solver(xp)
    F, pivots = None, []
    while top > 0:
        candidates = pivot_candidates(residual, bound, block_size)  # the NumPy fit's choice, on the host
        if candidates.size == 0:
            break
        r = len(pivots)
        index = xp.asarray(candidates, device=device)
        S = xp.astype(columns(index), xp.float64)
        finite = xp.all(xp.isfinite(S))
        if r:
            S = S - F @ xp.take(F, index, axis=0).T
        # the candidates' block and the finiteness of their columns: one copy
        copied = to_host(xp.concat([xp.reshape(xp.take(S, index, axis=0), (-1,)),
                                    xp.reshape(xp.astype(finite, xp.float64), (1,))]), xp)
        if not copied[-1]:
            raise ValueError(_NOT_FINITE)
        block = np.array(copied[:-1].reshape(candidates.size, candidates.size))  # factored in place
        chosen, R = greedy_block_cholesky(block, bound, residual[candidates])
        if not chosen:
            residual[candidates] = np.maximum(block.diagonal(), 0.0)
            continue
        # New columns S[:, Q] R⁻ᵀ, with R Rᵀ = S[Q, Q] (Q in pivot order): one triangular solve on the device.
        taken = xp.take(S, xp.asarray(np.asarray(chosen), device=device), axis=1)
        new = triangular(xp.asarray(R, dtype=xp.float64, device=device), taken.T, True).T
        F = new if F is None else xp.concat([F, new], axis=1)
        pivots.extend(candidates[chosen].tolist())
        updated_residual(residual, to_host(xp.sum(new * new, axis=1), xp), candidates, block, pivots[r:])
    if F is None:
        F = xp.zeros((n, 0), dtype=xp.float64, device=device)
    return F, np.array(pivots, dtype=np.intp), residual


class DeviceKernelMap:
    """:class:`~linsep.solvers.ho_kashyap.kernel.EmpiricalKernelMap` in the namespace ``xp``, on ``device``.

    The same map: :func:`device_pivoted_cholesky` ``K ≈ L Lᵀ``, the columns
    centred (``m`` the mean row) and rotated onto the principal axes ``V`` of
    the centred ``r × r`` Gram matrix (eigenvalues above
    ``max(N, r) ε λ_max`` kept), so that ``[features, 1]ᵀ[features, 1]`` is
    the diagonal ``diag(s, N)`` (:attr:`gram`, on the device).  A new sample's
    coordinates are ``φ̃(x) = Tᵀ k(X_P, x) − Vᵀm`` with ``T = R⁻ᵀ V``,
    ``R = L[P]``; the weights ``(w, w₀)`` map back to the dual coefficients
    ``a_P = T w``, ``b = w₀ − mᵀV w``.  (The eigenvectors may differ from the
    host's by signs or rotations within an eigenspace: Ho–Kashyap on the
    features is equivariant under them, and the dual coefficients are not
    changed.)

    Parameters
    ----------
    xp, device
        The namespace and device of the training data.
    columns : callable
        ``columns(idx)`` (``idx`` a device index array) → ``K[:, idx]`` on the device.
    diagonal : array of shape (N,)
        :math:`K_{ii}` on the device.
    tol : float, default=0.0
        The map's truncation (``map_tol``).
    block_size : int, default=64
        Kernel columns computed at a time.

    Attributes
    ----------
    features : array of shape (N, rank)
        The centred training samples in the map (float64, on the device).
    rank : int
    pivots : ndarray of int
        :math:`P`, in pivot order (NumPy: they were chosen on the host).
    gram : array of shape (rank + 1, rank + 1)
        ``diag(s, N)`` on the device, float64.
    """

    def __init__(self, xp, device, columns, diagonal, *, tol=0.0, block_size=64):
        self.xp, self.device = xp, device
        L, pivots, residual = device_pivoted_cholesky(xp, device, columns, diagonal, tol=tol, block_size=block_size)
        n = L.shape[0]
        mean = xp.mean(L, axis=0)
        centred = L - mean
        evals, evecs = xp.linalg.eigh(centred.T @ centred)
        host_evals = to_host(evals, xp)  # r numbers: which directions to keep
        keep = np.flatnonzero(host_evals > host_evals.max(initial=0.0) * max(L.shape) * np.finfo(float).eps)[::-1]
        V = xp.take(evecs, xp.asarray(keep.copy(), device=device), axis=1)  # principal axes, largest first
        self.features = centred @ V
        self.rank = int(keep.size)
        self.gram = xp.asarray(np.diag(np.append(host_evals[keep], float(n))), dtype=xp.float64, device=device)
        self.pivots, self.residual = pivots, residual
        self._pivot_index = xp.asarray(pivots, device=device)
        R = xp.tril(xp.take(L, self._pivot_index, axis=0))
        self._T = triangular_solver(xp)(R.T, V, False)  # R⁻ᵀ V
        self._shift = mean @ V
        self._host_map = None  # (T, Vᵀm) on the host, copied for a trace's dual coefficients (traced_dual)
        position = np.full(n, -1, dtype=np.int64)
        position[pivots] = np.arange(pivots.size)
        self._is_pivot = xp.asarray(position >= 0, device=device)
        self._position = xp.asarray(np.maximum(position, 0), device=device)

    def traced_dual(self, weights):
        """``(dual_coef, intercept)`` on the host of a trace's rows ``weights`` (NumPy, ``n × (rank + 1)``).

        The trace is on the host already (its one copy); ``T`` and ``Vᵀm``
        (``|P| × rank`` and ``rank`` numbers) are copied once per map and each row is
        mapped there as :meth:`dual_coef` maps the returned weights: ``a``
        zero off the pivots.
        """
        xp = self.xp
        if self._host_map is None:  # one copy, shared by the one-vs-rest problems' traces
            flat = to_host(xp.concat([xp.reshape(self._T, (-1,)), self._shift]), xp)
            size = self._T.shape[0] * self._T.shape[1]
            self._host_map = (flat[:size].reshape(tuple(self._T.shape)), flat[size:])
        T, shift = self._host_map
        weights = np.asarray(weights, dtype=np.float64).reshape(-1, self.rank + 1)
        dual = np.zeros((weights.shape[0], self.residual.shape[0]))
        dual[:, self.pivots] = weights[:, :-1] @ T.T
        return dual, weights[:, -1] - weights[:, :-1] @ shift

    def transform_rows(self, K_pivots):
        """``φ̃`` of new samples from their kernel values against the pivots, ``k(X_new, X_P)`` (M, r)."""
        return self.xp.astype(K_pivots, self.xp.float64) @ self._T - self._shift

    def dual_coef(self, W):
        """``(a, b)`` on the device from the weights ``W = (w, w₀)`` (NumPy, ``rank + 1`` numbers): ``a`` is zero off ``P``."""
        xp = self.xp
        w = xp.asarray(np.asarray(W[:-1], dtype=np.float64), device=self.device)
        on_pivots = self._T @ w
        a = xp.where(self._is_pivot, xp.take(on_pivots, self._position), xp.zeros_like(on_pivots[:1]))
        return a, float(W[-1]) - read_scalars(xp, [xp.sum(self._shift * w)])[0]


class ArrayAPIKernelFit:
    """The steps of a kernel fit of array-API data on its device (``BaseKernelSeparator._fit_where_data_live``).

    Validation and the classes are :class:`~linsep.designs.array_api_fit.ArrayAPIFit`'s
    (the distinct labels are the one copy of the labels to the host); HKES's
    held-out rows are drawn on the device as the NumPy fit draws them (or
    ``X_val, y_val`` on ``X``'s device); :meth:`problems` builds the
    :class:`DeviceKernelMap` of the fitted rows and one
    :class:`~linsep.designs.dask_fit.DesignProblem` per ``±1`` problem over
    its features; :meth:`dual` maps a solver's weights back to dual
    coefficients, :meth:`kernel_model` returns the model in ``X``'s
    namespace, type and device, and :func:`kernel_scores` scores new samples
    there.
    """

    where = "array-API input"
    weights_where = "array-API arrays"
    takes_weights = True  # sample_weight and class_weight as a device vector (ArrayAPIFit.weighted_rows)
    traces_where = "array-API input"
    takes_traces = True  # record_history: the rows on the device (recorder), the dual coefficients made on the host

    def __init__(self, X, y, owner, *, sample_weight=None, class_weight=None):
        from linsep.designs.array_api_fit import ArrayAPIFit

        self._data = data = ArrayAPIFit(X, y, owner, sample_weight=sample_weight, class_weight=class_weight)
        self.xp, self.device, self.classes, self.n_features = data.xp, data.device, data.classes, data.n_features
        X_passed, labels_passed = data.X, data.labels  # before rows of weight 0 leave: a CV draws its folds on them
        # the row weights s (sample_weight times class_weight's), checked as in memory; rows of weight 0 leave X
        self.weights = data.weighted_rows()
        self.passed = (X_passed, labels_passed, data._kept)
        self.X, self.labels = data.X, data.labels
        self.X_val = self.labels_val = None
        self.val_weights = None
        self.held_out = False
        self.kernel = self.kernel_map = self._gram_of = None
        self._class_weight = class_weight

    def recorder(self, record_history):
        """The trace recorder whose rows stay on the device (:meth:`ArrayAPIFit.recorder <linsep.designs.array_api_fit.ArrayAPIFit.recorder>`)."""
        return self._data.recorder(record_history)

    def split(self, *, early_stopping, validation_fraction, random_state, X_val=None, y_val=None):
        """The fitted rows (``X_fit``, the model's own copy) and the validation rows, all on the device."""
        data, X, labels = self._data, self.X, self.labels
        if early_stopping and X_val is None:
            # the split of the rows of positive weight (data.labels: those rows), as the NumPy fit draws it
            fitted, rows, _ = data._held_out_split(validation_fraction, random_state)
            self.X_val, self.labels_val, X, labels = X[rows], labels[rows], X[fitted], labels[fitted]
            self.held_out = True
            if self.weights is not None:  # the held-out rows keep their weights
                self.val_weights, self.weights = self.weights[rows], self.weights[fitted]
        elif X_val is not None:
            self.X_val, self.labels_val = data._validation_data(X_val, y_val)
            if self.weights is not None and self._class_weight is not None:  # given rows: class_weight's weights
                self.val_weights = data._class_rows(self.labels_val)
        self.X_fit = self.xp.asarray(X, copy=True) if X is self.X else X
        self.labels = labels
        return self.X_fit

    def problems(self, kernel, params, map_tol, powers=(0.5,)):
        """The map of the fitted rows (``kernel`` with its resolved ``params``) and one problem per ``±1`` column.

        Weighted: each problem's design is that of the features' rows
        ``√s_i y_i`` (``s^power`` for each of ``powers``: the solver's
        ``scaled``), and its validation rows count weighted errors
        (:class:`~linsep.designs.array_api.DeviceWeightedValidation`), as the
        NumPy fit's ``weighted_ho_kashyap``.
        """
        from linsep.designs.array_api import DeviceWeightedValidation
        from linsep.designs.dask_fit import DesignProblem

        xp, device, X = self.xp, self.device, self.X_fit
        if kernel == "precomputed" and self._data._kept is not None:  # the Gram matrix would lose rows, not columns
            raise ValueError("kernel='precomputed' takes no zero sample weights: remove those rows and "
                             "columns of the Gram matrix (and the columns of X_val)")
        if kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"kernel='precomputed' needs a square Gram matrix, got shape {tuple(X.shape)}")
        self.kernel = DeviceKernel(xp, kernel, **params)
        self.kernel_map = kernel_map = DeviceKernelMap(xp, device, self.kernel.training_columns(X),
                                                       self.kernel.diagonal(X), tol=map_tol)
        val_features = None if self.X_val is None else kernel_map.transform_rows(
            self.kernel.rows(self.X_val, X, kernel_map._pivot_index))
        problems = []
        weights = self.weights
        roots = None if weights is None else {power: weights ** power for power in powers}
        for positive in ([self.classes[1]] if self.classes.size == 2 else list(self.classes)):
            validation = None if self.X_val is None else ArrayAPIDesign(
                val_features, _signs(xp, self.labels_val == positive.item()), xp, device)
            if validation is not None and self.val_weights is not None:
                validation = DeviceWeightedValidation(validation, self.val_weights)
            design = ArrayAPIDesign(kernel_map.features, _signs(xp, self.labels == positive.item()), xp, device)
            if weights is None:
                problems.append(DesignProblem(design=design, checked=design, validation=validation))
                continue
            problems.append(DesignProblem(design=design.scaled(roots[max(powers)]), checked=design,
                                          validation=validation, weights=weights,
                                          scaled=lambda power, design=design: design.scaled(roots[power])))
        self._gram_of = problems[0].design if weights is not None else None
        return problems

    def cross_validation(self, draw, kernel, params, map_tol, powers=(0.5,), refit=True):
        """The folds of a cross-validated kernel fit and their maps on the device
        (:class:`~linsep.designs.array_api_kernel_cv.DeviceKernelFolds`): ``kernel`` with its resolved
        ``params``, each fold's map truncated at ``map_tol``; ``draw``, ``powers``, ``refit`` as there."""
        from linsep.designs.array_api_kernel_cv import DeviceKernelFolds

        xp, device = self.xp, self.device
        return DeviceKernelFolds(self, draw, DeviceKernel(xp, kernel, **params),
                                 lambda columns, diagonal: DeviceKernelMap(xp, device, columns, diagonal, tol=map_tol),
                                 map_tol, powers, refit)

    def gram(self):
        """The map's ``diag(s, N)``, shared by the one-vs-rest problems; weighted, that of the scaled features."""
        return self.kernel_map.gram if self._gram_of is None else self._gram_of.gram()

    def dual(self, result):
        """``result`` of Ho–Kashyap on the map's features, with the dual coefficients (on the device) as ``weights``."""
        import dataclasses

        dual, intercept = self.kernel_map.dual_coef(np.asarray(result.weights, dtype=np.float64))
        history = result.history
        if history is not None and "weights" in history:  # a trace: its weights as dual coefficients too, as in memory
            history = dict(history)
            history["dual_coef"], history["intercept"] = self.kernel_map.traced_dual(history.pop("weights"))
        return dataclasses.replace(result, weights=dual, intercept=intercept, history=history,
                                   extra={**result.extra, "rank": self.kernel_map.rank})

    def kernel_model(self, results, owner):
        """``(dual_coef, intercept)`` in ``X``'s namespace, type and device, checked finite (one number read)."""
        xp, dtype = self.xp, self.X.dtype
        dual = xp.astype(xp.stack([r.weights for r in results]), dtype)
        intercept = xp.asarray(np.array([r.intercept for r in results]), dtype=dtype, device=self.device)
        if not read_scalars(xp, [xp.all(xp.isfinite(dual)) & xp.all(xp.isfinite(intercept))])[0]:
            raise ValueError(f"the fitted dual_coef_ of {owner} is not finite: rescale X (e.g. with StandardScaler) "
                             "or lower gamma")
        return dual, intercept

    def device_indices(self, indices):
        """Host indices (``support_``) on the device."""
        return self.xp.asarray(np.asarray(indices), device=self.device)

    def fitted_classes(self):
        return self._data.fitted_classes()

    def held_out_separated(self, dual, intercept, support, classes, X_fit):
        """Per problem, whether every held-out row is strictly on its side (``None`` without a held-out split).

        ``side_tolerance`` with the kernel row in the role of ``x``:
        ``γ_{N+1} (|K| |a|ᵀ + |b|)``; one number per problem read.
        """
        if not self.held_out:
            return None
        xp = self.xp
        K = self.kernel.rows(self.X_val, X_fit, support)
        coefficients = xp.take(dual, support, axis=1)
        scores = K @ coefficients.T + intercept
        unit = 2.0 ** -24 if K.dtype == xp.float32 else 2.0 ** -53
        terms = X_fit.shape[0] + 1
        tolerance = terms * unit / (1 - terms * unit) * (xp.abs(K) @ xp.abs(coefficients).T + xp.abs(intercept))
        positives = [classes[1]] if dual.shape[0] == 1 else [classes[k] for k in range(dual.shape[0])]
        apart = [xp.all(_signs(xp, self.labels_val == c, scores.dtype) * scores[:, k] > tolerance[:, k])
                 for k, c in enumerate(positives)]
        return [bool(value) for value in read_scalars(xp, apart)]


def _signs(xp, positive, dtype=None):
    """``±1`` (float64 unless ``dtype``) from a boolean array, on its device."""
    dtype = xp.float64 if dtype is None else dtype
    one = xp.ones(positive.shape, dtype=dtype, device=positive.device)
    return xp.where(positive, one, -one)


def kernel_scores(estimator, X):
    """``decision_function`` of a kernel model fitted on the device, for ``X`` of its namespace and device.

    ``K(X, X_P) a_P + b`` over the support ``P`` (the only nonzero dual
    coefficients; every training sample for a model without ``support_``,
    the kernel LSVM's); nothing is read on the host.
    """
    from sklearn.utils._array_api import get_namespace

    xp, _ = get_namespace(X)
    fitted = estimator.dual_coef_
    if isinstance(fitted, np.ndarray) or get_namespace(fitted)[0].__name__ != xp.__name__:
        raise TypeError(f"{type(estimator).__name__} was fitted on other arrays than {xp.__name__}'s: score the "
                        "arrays it was fitted on, or fit it on these (fit on the device to score on it)")
    width = estimator.X_fit_.shape[0] if estimator.kernel == "precomputed" else estimator.n_features_in_
    if X.ndim != 2 or X.shape[1] != width:
        raise ValueError(f"X has shape {tuple(X.shape)}; {type(estimator).__name__} expects {width} columns")
    X = xp.astype(X, estimator.X_fit_.dtype)
    kernel = DeviceKernel(xp, estimator.kernel, **estimator._kernel_params())
    support = getattr(estimator, "support_", None)  # None: every training sample (the kernel LSVM's dual)
    if support is None:
        K = X if estimator.kernel == "precomputed" else kernel(X, estimator.X_fit_)
    else:
        K, fitted = kernel.rows(X, estimator.X_fit_, support), xp.take(fitted, support, axis=1)
    scores = K @ fitted.T + estimator.intercept_
    return scores[:, 0] if scores.shape[1] == 1 else scores


def kernel_labels(scores, classes):
    """``predict`` from device ``scores``: the sign's class, or the largest score's above two classes."""
    from sklearn.utils._array_api import get_namespace

    xp, _ = get_namespace(scores)
    chosen = xp.astype(scores > 0, xp.int64) if scores.ndim == 1 else xp.argmax(scores, axis=1)
    return xp.take(classes, chosen)
