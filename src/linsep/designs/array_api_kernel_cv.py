"""Kernel Ho–Kashyap cross-validated on the device: the folds' empirical kernel maps of array-API input, where it lies.

``KernelHoKashyapClassifierCV`` fits array-API input (PyTorch on any device, CuPy, array-api-strict; issue 41)
with the steps of its in-memory fit; :class:`DeviceKernelFolds` offers what is specific to the device, as
:class:`~linsep.designs.array_api_cv.DeviceFolds` does for the linear estimator:

* the folds, drawn on the host exactly as the NumPy fit draws them (the labels of the rows passed come to the
  host once; with rows of weight 0, the ``N`` flags of the kept rows too);
* per fold, the empirical kernel map of the block ``K[train, train]`` the NumPy fit maps
  (:class:`~linsep.designs.array_api_kernel.DeviceKernelMap`: only the pivot columns of the block computed, on
  the device, the pivots chosen on the host as in memory) and the features of the fold's validation rows from
  their kernel values against the fold's pivots, ``K[validation, P]``: the ``N × N`` kernel matrix is never
  formed (the NumPy fit forms it once), each fold holds its ``N_f × r_f`` features (float64);
* each (C, fold) run is Ho–Kashyap on those features (the map's diagonal Gram matrix shared by every ``C`` and
  every one-vs-rest problem; weighted, that of the scaled features, built once per fold);
* ``refit=False``: each fold model's dual coefficients (zero off its pivots) spread over all rows and averaged
  there; the separation checked on the scores ``K(X, X_P) a_P + b`` over the union ``P`` of the folds' pivots
  (one number read).

What crosses to the host beyond the kernel maps' own copies (:mod:`linsep.designs.array_api_kernel`): the labels
(and kept rows' flags) once, each run's ``rank + 1`` weights and, per iteration, the pass's statistics and the
validation count (:mod:`linsep.designs.array_api`).  Host to device: each fold's row indices once.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from linsep.designs.array_api import (ArrayAPIDesign, DeviceTraceRecorder, DeviceWeightedValidation, host_copy,
                                      read_scalars)
from linsep.designs.dask_fit import DesignProblem

__all__ = ["DeviceKernelFolds", "KernelProblem"]


@dataclasses.dataclass(slots=True)
class KernelProblem:
    """One ``±1`` problem of a cross-validated kernel fit on the device.

    labels
        The ``±1`` labels of every row kept (float64, on the device).
    refit
        The :class:`~linsep.designs.dask_fit.DesignProblem` of the refit (the map of all rows), or ``None``
        (``refit=False``: no map of all rows is built, as in memory).
    """

    labels: object
    refit: DesignProblem | None = None


class DeviceKernelFolds:
    """The folds of a cross-validated kernel fit of array-API data and their kernel maps, on the data's device.

    Parameters
    ----------
    data : ArrayAPIKernelFit
        The fit's data on the device (``X_fit``: the rows kept, the fitted kernel's training samples).
    draw : callable
        ``draw(X, labels, kept)``: the folds ``[(train, validation), …]`` (host row indices of the rows kept)
        from ``X`` as passed, the host labels of every row passed and the host flags of the rows of positive
        weight (``None``: all) — the estimator's drawing, as in memory.
    kernel : DeviceKernel
        The fitted kernel (:class:`~linsep.designs.array_api_kernel.DeviceKernel`).
    make_map : callable
        ``make_map(columns, diagonal)``: the :class:`~linsep.designs.array_api_kernel.DeviceKernelMap` of the
        block whose columns ``columns(idx)`` returns and whose diagonal is ``diagonal`` (the fit's ``map_tol``).
    map_tol : float
        The maps' truncation (the refit's map, :meth:`ArrayAPIKernelFit.problems
        <linsep.designs.array_api_kernel.ArrayAPIKernelFit.problems>`).
    powers : tuple of float
        The powers of the weights whose scaled rows the runs read (``(0.5,)``; ``(0.5, 1)`` for IRLS).
    refit : bool
        Whether the refit's map of all rows is built (:attr:`problems` ``refit``).

    Attributes
    ----------
    folds : list of (ndarray, ndarray)
        The host row indices of each fold.
    problems : list of KernelProblem
        One per ``±1`` problem.
    validation_sizes : list of float
        Each fold's validation rows, or with weights their weights' sum.
    fold_grams, full_gram
        ``None``: the search's early end reads the folds' Gram matrices in the input space, which a kernel fit
        has not (as in memory).
    """

    fold_grams = full_gram = None

    def __init__(self, data, draw, kernel, make_map, map_tol, powers=(0.5,), refit=True):
        xp, device = data.xp, data.device
        X_passed, labels_passed, kept = data.passed
        labels = host_copy(labels_passed, xp)  # the one copy of the labels: the folds are drawn on the host
        kept = None if kept is None else host_copy(kept, xp).astype(bool)
        if kernel.kernel == "precomputed" and kept is not None:  # the Gram matrix would lose rows, not columns
            raise ValueError("kernel='precomputed' takes no zero sample weights: remove those rows and "
                             "columns of the Gram matrix")
        if kernel.kernel == "precomputed" and data.X_fit.shape[0] != data.X_fit.shape[1]:
            raise ValueError(f"kernel='precomputed' needs a square Gram matrix, got shape {tuple(data.X_fit.shape)}")
        self.folds = draw(X_passed, labels, kept)
        self.xp, self.device, self.X, self.weights, self.powers = xp, device, data.X_fit, data.weights, tuple(powers)
        self.kernel, self._make_map = kernel, make_map
        self._maps = [self._fold_map(train, validation) for train, validation in self.folds]
        if refit:
            self.problems = [KernelProblem(problem.checked.y, problem)
                             for problem in data.problems(kernel.kernel, kernel.params, map_tol, powers=self.powers)]
            self._data = data
        else:
            # ±1 (float64) per problem, as the refit's designs hold them
            self.problems = [KernelProblem(2.0 * xp.astype(data.labels == positive.item(), xp.float64) - 1.0)
                             for positive in ([data.classes[1]] if data.classes.size == 2 else list(data.classes))]
            self._data = None
        self._grams = [None] * len(self.folds)  # weighted: each fold's Gram matrix of its scaled features
        if self.weights is None:
            self.validation_sizes = [float(len(validation)) for _, validation in self.folds]
        else:
            self.validation_sizes = read_scalars(xp, [xp.sum(xp.take(self.weights, self._upload(validation)))
                                                      for _, validation in self.folds])

    def _upload(self, rows):
        return self.xp.asarray(np.asarray(rows, dtype=np.int64), device=self.device)

    def _fold_map(self, train, validation):
        """``(map, validation features, train rows, validation rows)`` of one fold (the NumPy fit's
        ``EmpiricalKernelMap(K[train, train])`` and ``transform(K[validation, train])``)."""
        xp, X, kernel = self.xp, self.X, self.kernel
        train_rows, validation_rows = self._upload(train), self._upload(validation)
        if kernel.kernel == "precomputed":  # K[train, train] read a block of columns at a time, never copied whole
            columns = lambda idx: xp.take(xp.take(X, xp.take(train_rows, idx), axis=1), train_rows, axis=0)  # noqa: E731
            diagonal = xp.take(kernel.diagonal(X), train_rows)
            kernel_map = self._make_map(columns, diagonal)
            pivots = xp.take(train_rows, kernel_map._pivot_index)
            K_val = xp.take(xp.take(X, validation_rows, axis=0), pivots, axis=1)
        else:
            X_train = xp.take(X, train_rows, axis=0)
            kernel_map = self._make_map(kernel.training_columns(X_train), kernel.diagonal(X_train))
            K_val = kernel.rows(xp.take(X, validation_rows, axis=0), X_train, kernel_map._pivot_index)
        return kernel_map, kernel_map.transform_rows(K_val), train_rows, validation_rows

    def fold(self, f, problem):
        """``(run, gram)``: fold ``f`` of ``problem`` (a :class:`KernelProblem`) as a
        :class:`~linsep.designs.dask_fit.DesignProblem` over the fold map's features, and the Gram matrix its runs
        share (the map's ``diag(s, N_f)``; weighted, that of the scaled features, built once per fold)."""
        xp, device = self.xp, self.device
        kernel_map, val_features, train_rows, validation_rows = self._maps[f]
        design = ArrayAPIDesign(kernel_map.features, xp.take(problem.labels, train_rows), xp, device)
        validation = ArrayAPIDesign(val_features, xp.take(problem.labels, validation_rows), xp, device)
        if self.weights is None:
            return DesignProblem(design=design, checked=design, validation=validation), kernel_map.gram
        s = xp.take(self.weights, train_rows)
        roots = {power: s ** power for power in self.powers}
        run = DesignProblem(design=design.scaled(roots[max(self.powers)]), checked=design,
                            validation=DeviceWeightedValidation(validation, xp.take(self.weights, validation_rows)),
                            weights=s, scaled=lambda power: design.scaled(roots[power]))
        if self._grams[f] is None:  # label free: the same for every one-vs-rest problem
            self._grams[f] = run.design.gram()
        return run, self._grams[f]

    def whole(self, f, values):
        """``values`` of fold ``f``'s training rows (a certificate) as a vector of every row kept, zero elsewhere."""
        return self._spread(values, self.folds[f][0])

    def _spread(self, values, train):
        """``values`` of the host rows ``train`` put among all rows kept (zero elsewhere), by a gather on the device."""
        xp = self.xp
        position = np.full(self.X.shape[0], len(train), dtype=np.int64)
        position[train] = np.arange(len(train))
        padded = xp.concat([values, xp.zeros(1, dtype=values.dtype, device=self.device)])
        return xp.take(padded, self._upload(position))

    def refit_gram(self):
        """The refit's Gram matrix (that of the map of all rows; weighted, of its scaled features)."""
        return self._data.gram()

    def refit_dual(self, result):
        """The refit's ``result`` with its dual coefficients (on the device) as ``weights``."""
        return self._data.dual(result)

    def recorder(self, record_history):
        """The refit's trace recorder, its rows kept on the device (:class:`~linsep.designs.array_api.DeviceTraceRecorder`)."""
        return DeviceTraceRecorder.of(record_history, self.xp)

    def average(self, runs, problem):
        """``(dual, intercept, separates)`` of ``refit=False``: the fold models averaged, as the NumPy fit averages them.

        Each run's weights map back to the dual coefficients of its fold's training rows (zero off its pivots),
        spread over all rows and summed fold by fold, then divided by the number of folds; the intercepts'
        mean; ``separates``: every row strictly positive, ``y_i (K(x_i, X_P) a_P + b) > 0`` over the union ``P``
        of the folds' pivots (the only nonzero coefficients; one number read).
        """
        xp = self.xp
        dual, intercepts = None, []
        for run, (kernel_map, *_), (train, _) in zip(runs, self._maps, self.folds):
            a, b = kernel_map.dual_coef(np.asarray(run.weights, dtype=np.float64))
            spread = self._spread(a, train)
            dual = spread if dual is None else dual + spread
            intercepts.append(b)
        dual = dual / len(runs)
        intercept = float(np.mean(intercepts))
        support = self._support_index()
        # in float64, as the NumPy fit's K @ dual (its K converted to float64)
        scores = xp.astype(self.kernel.rows(self.X, self.X, support), xp.float64) @ xp.take(dual, support) + intercept
        separates = bool(read_scalars(xp, [xp.min(problem.labels * scores) > 0])[0])
        return dual, intercept, separates

    def _support_index(self):
        return self._upload(self.support(refit=False))

    def support(self, refit):
        """The rows whose dual coefficients may be nonzero (host, sorted): the refit map's pivots, or with
        ``refit=False`` the union of the folds' pivots."""
        if refit:
            return np.sort(self._data.kernel_map.pivots)
        return np.unique(np.concatenate([train[kernel_map.pivots]
                                         for (kernel_map, *_), (train, _) in zip(self._maps, self.folds)]))
