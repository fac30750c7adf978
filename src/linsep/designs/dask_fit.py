"""Dask input as the estimators' fit flow sees it: the row blocks, each problem's design, its checks, the model.

:class:`DaskFit` offers each step of the one fit flow
(:meth:`linsep.estimators.base.BaseSeparator._fit_problems`'s order, run by
``BaseSeparator._fit_where_data_live``) for a ``dask.array`` ``X`` chunked
by rows: validation summaries (shape, classes, weights summarised per
block, held-out rows per block), one :class:`DesignProblem` per ``±1``
problem (the rows the solver iterates on, the rows its verdict is checked
on, its validation rows), the work the problems share (the Gram matrix, the
LSVM's factor, MSE's linear machine), the checks of the verdicts on the
blocks (:func:`linsep._core.result.demote_unproven` with
:meth:`~linsep.designs.dask.DaskDesign.is_proof`; ``separable`` on the
stored model) and the model in NumPy.  The solvers run as in memory, over
the blockwise design; the estimators never see a block.  Dask itself is
imported only when a dask collection arrives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from linsep._core.linalg import too_wide_for_direct
from linsep._core.result import CONVERGED, SEPARABLE, SolveResult, demote_unproven
from linsep.designs.dask import DaskDesign
from linsep.designs.dask_data import (RowBlocks, class_labels, class_weights_of_rows, dask_array, expand,
                                      held_out_split, labels_like, margin_parts, positive_rows, restrict,
                                      row_blocks_of, row_chunked, row_weights)
from linsep.designs.weights import scaled_margin

__all__ = ["DaskFit", "DesignProblem"]


@dataclass
class DesignProblem:
    """One ``±1`` problem of a fit on a design (dask or array API): what its solver reads and what checks it.

    design
        The rows the solver iterates on (weighted: :math:`\\sqrt{s_i}\\, y_i (x_i, 1)`).
    checked
        The rows its verdicts are checked on (the fitted rows, unscaled).
    validation
        Its validation rows (early stopping), or ``None``.
    weights
        The fitted rows' weights :math:`s` (``None`` unweighted); ``scaled(power)`` then gives the rows
        :math:`s_i^{power} y_i (x_i, 1)` (the weighted Ho–Kashyap solves take both powers).
    target, margin
        MSE's right-hand side as the solver takes it, and the margin vector the estimator stores.
    """

    design: object
    checked: object
    validation: object = None
    weights: object = None
    scaled: object = None
    target: object = None
    margin: object = None


class DaskFit:
    """The steps of a fit of dask data: open (validate), :meth:`problems`, shared work, :meth:`checked`, the model.

    Parameters
    ----------
    X, y
        The training data (``y`` dask or NumPy); validated here.
    owner : str
        The estimator's name, for messages.
    wide : str or None
        ``None`` where the fit solves wide ``X`` (``d + 1`` beyond
        :func:`linsep._core.linalg.too_wide_for_direct`) by distributed
        conjugate gradients, else what cannot (the fit then needs the
        ``(d+1)²`` Gram matrix, refused for wide ``X``).
    sample_weight, class_weight
        The fit's weights (dask or NumPy), summarised per block once the
        classes are known (:meth:`problems`).
    """

    where = "dask input"
    takes_weights = True
    weights_where = "dask arrays"
    traces_where = "dask input (its traces hold N-vectors)"
    labels_checked = True  # class_labels reads them blockwise
    stack = staticmethod(lambda arrays, axis=0: dask_array().stack(arrays, axis=axis))

    def __init__(self, X, y, owner, *, wide=None, sample_weight=None, class_weight=None, rescale_exponent=None):
        X = row_chunked(X)
        p = X.shape[1] + 1
        if too_wide_for_direct(p) and wide is not None:
            # every block task would build a dense p × p Gram matrix, and the client factor it
            raise ValueError(
                f"X has {X.shape[1]} features, too many for {wide} on the dask backend: it solves from the "
                f"(d+1)×(d+1) Gram matrix ({8 * p**2 / 2**30:.2g} GiB here), beyond what is factored directly; "
                f"fit wide X in memory (e.g. as a scipy.sparse matrix), or on dask with HoKashyapClassifier "
                f"(squared loss) or LagrangianSVMClassifier, which solve it by distributed conjugate gradients")
        if X.shape[0] < 2:
            raise ValueError(f"{owner} needs at least 2 samples, got {X.shape[0]}")
        if X.shape[1] < 1:
            raise ValueError("X needs at least one feature")
        self.blocks = RowBlocks(X, labels_like(y, X))
        self.classes = class_labels(self.blocks.labels)
        self.n_features = self.blocks.n_features
        self.owner, self._sample_weight, self._class_weight = owner, sample_weight, class_weight
        self.weights = self.base = self.fit_rows = self._solve_base = self._scaled = None

    @property
    def positives(self):
        """The label taken as ``+1`` in each binary problem (``classes[1]``, or each class one-vs-rest)."""
        return [self.classes[1]] if self.classes.size == 2 else list(self.classes)

    def _open_weights(self):
        if self.weights is None:
            self.weights = row_weights(self.blocks, self.classes, self._sample_weight, self._class_weight,
                                       self.owner)
        return self.weights

    def problems(self, *, early_stopping=False, validation_fraction=None, random_state=None, X_val=None,
                 y_val=None, powers=(0.5,)):
        """One :class:`DesignProblem` per ``±1`` problem: rows of weight 0 and held-out rows left out.

        With weights, as in memory: held-out rows keep their weights (rows
        of weight 0 included) and fitted rows of weight 0 leave; given
        validation rows are weighed by ``class_weight`` only.  ``powers``:
        the scalings of the weighted rows the solver takes (the largest is
        the one it iterates on).
        """
        weights = self._open_weights()
        fit_rows = fit_counts = val_design = None
        if early_stopping:
            fit_rows, fit_counts, val_design = self._validation_design(
                validation_fraction, random_state, X_val, y_val, weights)
        if not early_stopping or X_val is not None:
            fit_rows, fit_counts = positive_rows(self.blocks, weights)
        self.fit_rows = fit_rows
        self.base = base = DaskDesign(self.blocks, None, fit_rows, fit_counts)
        s = None
        if weights is not None:
            s = restrict(base, weights.s)
            self._scaled = {power: base.scaled(s, power) for power in powers}
            self._solve_base = self._scaled[max(self._scaled)]
        else:
            self._solve_base = base
        return [DesignProblem(
            design=self._solve_base.with_positive(positive), checked=base.with_positive(positive),
            validation=None if val_design is None else val_design.with_positive(positive), weights=s,
            scaled=None if s is None else (lambda power, p=positive: self._scaled[power].with_positive(p)))
            for positive in self.positives]

    def _validation_design(self, fraction, random_state, X_val, y_val, weights):
        """``(fit rows, their counts, validation design)`` of early stopping."""
        blocks, classes = self.blocks, self.classes
        if X_val is None:
            fit_rows, fit_counts, val_rows, val_counts = held_out_split(blocks, classes, fraction, random_state)
            if sum(val_counts) == 0:
                raise ValueError("early stopping needs a validation set, but validation_fraction="
                                 f"{fraction} holds out none; give X_val/y_val or more samples")
            validation = DaskDesign(blocks, None, val_rows, val_counts)
            if weights is not None:
                validation = validation.counted_with_weights(restrict(validation, weights.s))
                fit_rows, fit_counts = positive_rows(blocks, weights, fit_rows, fit_counts)
            return fit_rows, fit_counts, validation
        X_val = row_blocks_of(X_val, "X_val")
        if X_val.shape[1] != blocks.n_features:
            raise ValueError(f"X_val has {X_val.shape[1]} features, but {self.owner} "
                             f"is expecting {blocks.n_features} features as input")
        val_blocks = RowBlocks(X_val, labels_like(y_val, X_val, "y_val"))
        unknown = np.setdiff1d(class_labels(val_blocks.labels), classes)
        if unknown.size:
            raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
        validation = DaskDesign(val_blocks, None)
        if weights is not None and weights.table is not None:
            validation = validation.counted_with_weights(class_weights_of_rows(val_blocks.labels, classes,
                                                                               weights.table))
        return None, None, validation

    def host(self, value):
        """A starting weight as given (NumPy)."""
        return value

    def validation_summary(self):
        """``(validation labels, fitted rows)`` for the estimators' warnings; not summarised on dask (``None``)."""
        return None, None

    def gram(self):
        """``YᵀY`` of the rows the solvers iterate on, shared by the problems (labels square to 1); wide: ``None``."""
        return None if too_wide_for_direct(self.n_features + 1) else self._solve_base.gram()

    def lsvm_factor(self, C, cg_forcing):
        """The LSVM's factor of the rows the solvers iterate on, shared by the problems."""
        return self._solve_base.lsvm_factor(float(C), cg_forcing=cg_forcing)

    def mse_problems(self, margin):
        """MSE's problems: :meth:`problems` with the right-hand side (``target``) and the margin stored (``margin``)."""
        margin, parts = margin_parts(margin, self.blocks)
        problems = self.problems()
        design = problems[0].checked
        da = dask_array()
        b = da.ones(design.shape[0], chunks=(tuple(design.counts),)) if margin is None else restrict(design, margin)
        target = parts
        if self.weights is not None:
            target = problems[0].design.vector(scaled_margin(None if margin is None else b, problems[0].weights))
        for problem in problems:
            problem.target, problem.margin = target, b
        self._margin = (margin, b)
        return problems

    def linear_machine(self, C, margin):
        """MSE's linear machine above two classes: one result per class, its verdict the machine's gap.

        ``[X, 1]⁺B`` (weighted: on the rows :math:`\\sqrt{s_i}\\, (x_i, 1)`), the margin stored being ``b`` in
        each sample's own class column (zeros elsewhere).
        """
        problems = self.mse_problems(margin)
        classes = self.classes
        W, factor, gap = problems[0].design.with_positive(classes[-1]).linear_machine(classes, problems[0].target,
                                                                                     C=C)
        status = SEPARABLE if gap > 0 else CONVERGED
        da = dask_array()
        own = restrict(self.base, self.blocks.labels)[:, None] == da.from_array(classes[None, :])
        margins = da.where(own, problems[0].margin[:, None], 0.0)
        return [SolveResult(weights=W[:, k], n_iter=1, status=status, margin=margins[:, k],
                            extra={"factorization": factor.method}) for k in range(classes.size)]

    def checked(self, results, problems):
        """The results with each ``not_separable`` verdict whose proof fails its blockwise check demoted.

        A certificate speaks of every row of ``X``, as in memory: 0 on held-out rows and rows of weight 0.
        """
        results = [demote_unproven(result, problem.checked.is_proof) for result, problem in zip(results, problems)]
        if self.fit_rows is None:
            return results
        return [r if r.certificate is None else replace(r, certificate=expand(self.base, r.certificate))
                for r in results]

    def linear_model(self, results):
        """``(coef, intercept)`` in NumPy, the weights rounded to the in-memory fit's type (float32 for float32 ``X``)."""
        W = np.vstack([np.asarray(r.weights).astype(self.blocks.dtype, copy=False) for r in results])
        return W[:, :-1].copy(), W[:, -1].copy()

    def separates(self, problems, k, coef, intercept):
        """Whether the stored model of problem ``k`` puts every row strictly on its side (held-out rows included)."""
        coef, intercept = coef[k], intercept[k]
        if not problems[k].checked.separates(coef, intercept):
            return False
        return self.fit_rows is None or DaskDesign(self.blocks, None).with_positive(self.positives[k]).separates(
            coef, intercept)

    def fitted_classes(self):
        """``classes_`` as the model keeps them (NumPy)."""
        return self.classes
