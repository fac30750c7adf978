"""Cross-validation on the device: the folds of array-API input, their designs and Gram matrices, over ``X`` as it lies.

``HoKashyapClassifierCV`` fits array-API input (PyTorch on any device, CuPy, array-api-strict; issue 41) with the
steps of its in-memory fit; :class:`DeviceFolds` offers what is specific to the device:

* the folds, drawn on the host exactly as the NumPy fit draws them: the labels come to the host once (one copy
  of ``N`` labels; with rows of weight 0, one copy of the ``N`` flags of the kept rows), the estimator's own
  drawing (an int ``cv``'s stratified folds, a splitter, index pairs) runs on them;
* each fold's Gram matrix :math:`[X_R, 1]^t S [X_R, 1]` on the device, float64 (``p × p``): where the
  validation sets partition the rows (an int ``cv``, ``KFold``) the Gram matrix of all rows less the validation
  rows' own (``HoKashyapClassifierCV``'s views of large ``X`` do the same on the host), otherwise the
  training rows' own; rows are read by index a block at a time (:data:`~linsep.designs.array_api.GRAM_ROW_BLOCKS`
  blocks), so at most an eighth of the rows summed is copied beside ``X``;
* each run's designs (:class:`FoldDesign`): the fold's training and validation rows of ``X`` read by index,
  never copied; their scores share one product :math:`X w + w_0` of all rows per iterate (one pass over ``X``
  for both), and :math:`Y_R^t u` spreads ``u`` over all rows (zero off ``R``) for one product :math:`X^t t`:
  two passes over ``X`` an iteration, as the fit of all rows makes;
* the folds' :math:`\\lambda^+` (the search's early end, ``flat_search_end``) from their eigenvalues on the
  device: one number per fold read, all in one copy.

What crosses to the host: the labels (and kept rows' flags) once; each run's row indices go to the device (an
upload of ``N`` integers per run, not kept: the runs of a fit would otherwise hold ``3 N`` integers per fold
there); during the runs, what :mod:`linsep.designs.array_api` lists (a pass's statistics per iteration, the
validation count, ``p`` weights at the end).  Weights (``sample_weight``, ``class_weight``) scale the rows as in
:class:`~linsep.designs.array_api_fit.ArrayAPIFit`: the folds' weighted validation errors are counted on the
device (:class:`~linsep.designs.array_api.DeviceWeightedValidation`), the folds' weight sums read once.
"""

from __future__ import annotations

import numpy as np

from linsep.designs.array_api import (GRAM_ROW_BLOCKS, ArrayAPIDesign, DeviceTraceRecorder,
                                      DeviceWeightedValidation, host_copy, read_scalars)
from linsep.designs.dask_fit import DesignProblem

__all__ = ["DeviceFolds", "FoldDesign"]


def _spread(xp, values, position, device):
    """``values`` of some rows put among all rows by ``position`` (a row's place, or ``len(values)``: zero)."""
    return xp.take(xp.concat([values, xp.zeros(1, dtype=values.dtype, device=device)]), position)


class _SharedProduct:
    """:math:`X w + w_0` of all rows for the iterate last asked (by identity): a run's training and validation
    designs score the same iterate from one pass over ``X``."""

    __slots__ = ("_key", "_value")

    def __init__(self):
        self._key = self._value = None

    def of(self, design, W):
        if self._key is not W:
            Wx = design._in_x_type(W)
            self._value = design.X @ Wx[:-1] + Wx[-1]
            self._key = W  # held: the identity test cannot meet a recycled id
        return self._value


class FoldDesign(ArrayAPIDesign):
    """``Y_R = diag(y_R)[X_R, 1]`` of the rows ``R`` of ``X`` (``index``, on the device), read by index, never copied.

    ``y`` holds the labels of the rows ``R`` (scaled by weights where :meth:`scaled`); ``position`` maps each
    row of ``X`` to its place in ``R`` (``len(R)`` off ``R``): :math:`Y_R^t u` and the weighted Gram matrix
    spread a vector over all rows through it (a gather: the array API has no scatter).  A validation design
    needs none.  ``product``: the :class:`_SharedProduct` of the run, so that the training and the validation
    rows of one iterate cost one product :math:`X w`.
    """

    def __init__(self, X, y, xp, device, index, *, position=None, product=None, row_squares=None):
        super().__init__(X, y, xp, device, row_squares=row_squares)
        self.index, self.position = index, position
        self.product = _SharedProduct() if product is None else product
        self.shape = (int(index.shape[0]), X.shape[1] + 1)

    def scaled(self, r):
        r = self.xp.astype(r, self.X.dtype)
        squares = r * r if self.row_squares is None else self.row_squares * r * r
        return FoldDesign(self.X, self.y * r, self.xp, self.device, self.index, position=self.position,
                          product=self.product, row_squares=squares)

    def spread(self, values):
        """``values`` of the rows ``R`` as a vector of all rows of ``X``, zero off ``R`` (on the device)."""
        return _spread(self.xp, values, self.position, self.device)

    def scores(self, W):
        return self.y * self.xp.take(self.product.of(self, W), self.index)

    def rmatvec(self, u):
        xp = self.xp
        t = self.spread(self.y * u)
        return xp.astype(xp.concat([self.X.T @ t, xp.reshape(xp.sum(t), (1,))]), xp.float64)

    def gram(self, D=None):
        """``[X_R, 1]ᵀ D [X_R, 1]`` (float64, on the device): the weights spread over all rows, zero off ``R``."""
        xp = self.xp
        weights = self.row_squares if D is None else (D if self.row_squares is None else D * self.row_squares)
        if weights is None:
            weights = xp.ones(self.shape[0], dtype=self.X.dtype, device=self.device)
        return ArrayAPIDesign(self.X, None, xp, self.device).gram(self.spread(weights))

    def constant_vector(self, value):
        return self.xp.full(self.shape[0], float(value), dtype=self.X.dtype, device=self.device)


class DeviceFolds:
    """The folds of a cross-validated fit of array-API data (:class:`~linsep.designs.array_api_fit.ArrayAPIFit`).

    Parameters
    ----------
    data : ArrayAPIFit
        The fit's data on the device.
    draw : callable
        ``draw(X, labels, kept)``: the folds ``[(train, validation), …]`` (host row indices of the rows kept)
        from ``X`` (the device array as passed, for a splitter), the host labels of every row passed and the
        host flags of the rows of positive weight (``None``: all) — the estimator's drawing, as in memory.
    partitions : callable
        ``partitions(folds, n_rows)``: whether the validation sets partition the rows (then each fold's Gram
        matrix is that of all rows less its validation rows').
    powers : tuple of float
        The powers of the weights whose scaled rows the runs read (``(0.5,)``; ``(0.5, 1)`` for IRLS), as
        :meth:`~linsep.designs.array_api_fit.ArrayAPIFit.problems`.

    Attributes
    ----------
    folds : list of (ndarray, ndarray)
        The host row indices of each fold.
    problems : list of DesignProblem
        One per ``±1`` problem, on all rows kept (the refit's designs, and the rows the verdicts are checked on).
    full_gram, fold_grams
        The Gram matrix of all rows (weighted: of the scaled rows) and of each fold's training rows, on the device.
    validation_sizes : list of float
        Each fold's validation rows, or with weights their weights' sum.
    """

    def __init__(self, data, draw, partitions, powers=(0.5,)):
        xp, where = data.xp, data.device
        X_passed = data.X
        labels = host_copy(data.labels, xp)  # the one copy of the labels: the folds are drawn on the host
        weights = data.weighted_rows()  # rows of weight 0 leave (data.X, data.labels: the rows kept)
        kept = None if data._kept is None else host_copy(data._kept, xp).astype(bool)
        self.folds = draw(X_passed, labels, kept)
        self.xp, self.device, self.X, self.weights, self.powers = xp, where, data.X, weights, tuple(powers)
        self.problems = data.problems(powers=self.powers)
        self.full_gram = data.gram()
        n_rows = self.X.shape[0]
        squares = self.problems[0].design.row_squares  # the Gram matrix's row weights (None unweighted)
        if partitions(self.folds, n_rows):
            self.fold_grams = [self.full_gram - self._rows_gram(validation, squares) for _, validation in self.folds]
        else:
            self.fold_grams = [self._rows_gram(train, squares) for train, _ in self.folds]
        if weights is None:
            self.validation_sizes = [float(len(validation)) for _, validation in self.folds]
        else:
            self.validation_sizes = read_scalars(xp, [xp.sum(xp.take(weights, self._upload(validation)))
                                                      for _, validation in self.folds])

    def _upload(self, rows):
        return self.xp.asarray(np.asarray(rows, dtype=np.int64), device=self.device)

    def _position(self, train):
        """Each row's place among ``train`` (``len(train)`` off it), on the device."""
        position = np.full(self.X.shape[0], len(train), dtype=np.int64)
        position[train] = np.arange(len(train))
        return self._upload(position)

    def _rows_gram(self, rows, squares):
        """``[X_R, 1]ᵀ S [X_R, 1]`` of the host rows ``rows`` (``S``: ``squares`` of those rows, or none), a block of
        rows copied at a time (:data:`~linsep.designs.array_api.GRAM_ROW_BLOCKS` blocks)."""
        xp, total = self.xp, None
        step = max(1, -(-len(rows) // GRAM_ROW_BLOCKS))
        for start in range(0, len(rows), step):
            index = self._upload(rows[start:start + step])
            block = ArrayAPIDesign(xp.take(self.X, index, axis=0), None, xp, self.device,
                                   row_squares=None if squares is None else xp.take(squares, index)).gram()
            total = block if total is None else total + block
        return total

    def fold(self, f, problem):
        """A :class:`~linsep.designs.dask_fit.DesignProblem` of fold ``f`` of ``problem`` (one of :attr:`problems`).

        ``design``: the training rows (weighted: scaled as the problems' designs), ``checked``: them unscaled,
        ``validation``: the validation rows (weighted: counting weighted errors), ``weights`` and ``scaled``
        as in :meth:`~linsep.designs.array_api_fit.ArrayAPIFit.problems`.  Their row indices go to the device
        for this run only.
        """
        xp, train, validation = self.xp, *self.folds[f]
        train_rows, validation_rows = self._upload(train), self._upload(validation)
        labels = problem.checked.y  # the problem's ±1 labels of every row kept
        product = _SharedProduct()
        design = FoldDesign(self.X, xp.take(labels, train_rows), xp, self.device, train_rows,
                            position=self._position(train), product=product)
        held_out = FoldDesign(self.X, xp.take(labels, validation_rows), xp, self.device, validation_rows,
                              product=product)
        if self.weights is None:
            return DesignProblem(design=design, checked=design, validation=held_out)
        s = xp.take(self.weights, train_rows)
        roots = {power: s ** power for power in self.powers}
        return DesignProblem(design=design.scaled(roots[max(self.powers)]), checked=design,
                             validation=DeviceWeightedValidation(held_out, xp.take(self.weights, validation_rows)),
                             weights=s, scaled=lambda power: design.scaled(roots[power]))

    def whole(self, f, values):
        """``values`` of fold ``f``'s training rows (a certificate) as a vector of every row kept, zero elsewhere."""
        return _spread(self.xp, values, self._position(self.folds[f][0]), self.device)

    def range_floors(self, n_rows):
        """Each fold's :math:`\\lambda^+` (``gram_range_floor`` of ``HoKashyapClassifierCV``), on the device.

        The eigenvalues above :math:`\\max(N, p)\\, \\varepsilon \\, \\lambda_\\max` are kept, as the host's cut
        them; the least of them per fold is the one number read (``inf`` for none), all folds in one copy.
        """
        xp = self.xp
        floors = []
        for gram in self.fold_grams:
            evals = xp.linalg.eigvalsh(gram)
            cut = xp.max(evals) * (max(n_rows, gram.shape[0]) * float(np.finfo(np.float64).eps))
            floors.append(xp.min(xp.where(evals > cut, evals, xp.full_like(evals, np.inf))))
        return read_scalars(xp, floors)

    def recorder(self, record_history):
        """The refit's trace recorder, its rows kept on the device (:class:`~linsep.designs.array_api.DeviceTraceRecorder`)."""
        return DeviceTraceRecorder.of(record_history, self.xp)
