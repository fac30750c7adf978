"""Dask input for the estimators: the fits of HK, MSE and the LSVM on a :class:`~linsep.designs.dask.DaskDesign`.

The numerical work runs in the in-memory drivers over the blockwise design;
the data side (row blocks, weights summarised per block, held-out rows per
block, per-row vectors) is :mod:`linsep.designs.dask_data`, the rules
(weights, verdicts, storing) are the estimators' own
(:mod:`linsep.designs.weights`, :func:`linsep._core.result.demote_unproven`,
``BaseLinearSeparator._store_linear_model``).  What stays here is each
estimator's order of those steps on dask data.  Parameters the dask backend
cannot honour are refused through :data:`UNSUPPORTED`
(:func:`linsep.solvers.ho_kashyap.params.refuse_unsupported`).

The estimators reach these fits through their table of backends
(``BaseSeparator._backend_fits``); dask itself is imported only when a dask
collection arrives.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from linsep._core.linalg import too_wide_for_direct
from linsep._core.result import CONVERGED, SEPARABLE, SolveResult, demote_unproven, demote_unseparated
from linsep.designs.dask import DaskDesign
from linsep.designs.dask_data import (RowBlocks, class_labels, class_weights_of_rows, dask_array, expand,
                                      held_out_split, labels_like, margin_parts, positive_rows, restrict,
                                      row_blocks_of, row_chunked, row_weights)
from linsep.designs.weights import scaled_margin
from linsep.estimators.base import check_two_classes
from linsep.solvers.ho_kashyap.params import HKParams
from linsep.estimators.base import refuse_unsupported, starting_weights
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.ho_kashyap.weighted import scaled_ho_kashyap
from linsep.solvers.lsvm.solver import LSVM_CG_FORCING, lagrangian_svm
from linsep.solvers.mse import mse

__all__ = ["HK_SUPPORTED", "UNSUPPORTED", "fit_ho_kashyap", "fit_lsvm", "fit_mse", "prepare"]

UNSUPPORTED = {"record_history": False}
"""Estimator parameters the dask backend cannot honour, with their neutral values (traces hold N-vectors)."""

HK_SUPPORTED = frozenset({"learning_rate", "b0", "max_iter", "tol", "stopping", "stop_at_separation", "update",
                          "C", "loss", "irls_floor", "n_iter_no_change", "validation_tol"})
"""The :class:`~linsep.solvers.ho_kashyap.params.HKParams` the dask backend honours; any other one set is refused."""


def prepare(estimator, X, y, wide=None):
    """Validate ``X, y``, set ``n_features_in_`` and ``classes_``; return the row blocks.

    ``wide``: ``None`` where the fit solves wide ``X`` (``d + 1`` beyond
    :func:`linsep._core.linalg.too_wide_for_direct`) by distributed conjugate gradients, else why it cannot
    (the fit then needs the ``(d+1)²`` Gram matrix, refused for wide ``X``).
    """
    refuse_unsupported(estimator.get_params(), UNSUPPORTED, "dask input (its traces hold N-vectors)")
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
        raise ValueError(f"{type(estimator).__name__} needs at least 2 samples, got {X.shape[0]}")
    if X.shape[1] < 1:
        raise ValueError("X needs at least one feature")
    blocks = RowBlocks(X, labels_like(y, X))
    classes = class_labels(blocks.labels)
    check_two_classes(classes, type(estimator).__name__)
    estimator.n_features_in_ = blocks.n_features
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.classes_ = classes
    return blocks


def _row_weights(estimator, blocks, sample_weight):
    """The fit's row weights on dask (:func:`linsep.designs.dask_data.row_weights`), or ``None``."""
    return row_weights(blocks, estimator.classes_, sample_weight, getattr(estimator, "class_weight", None),
                       type(estimator).__name__)


def _positives(classes):
    """The label taken as ``+1`` in each binary problem (``classes[1]``, or each class one-vs-rest)."""
    return [classes[1]] if classes.size == 2 else list(classes)


def _checked_verdicts(results, designs):
    """Demote verdicts whose evidence fails its blockwise check (the rule of :func:`demote_unproven`)."""
    return [demote_unproven(result, design.is_proof) for result, design in zip(results, designs)]


def _check_separation(estimator, designs):
    estimator.status_ = demote_unseparated(
        estimator.status_, lambda k: designs[k].separates(estimator.coef_[k], estimator.intercept_[k]))


def _store(estimator, results, blocks):
    """The linear model (NumPy), its weights rounded to the in-memory fit's type (float32 for float32 ``X``)."""
    estimator._store_linear_model([replace(r, weights=np.asarray(r.weights).astype(blocks.dtype, copy=False))
                                   for r in results])


def _finish(estimator, results, designs):
    """Checks of the verdicts, the common attributes and the linear model."""
    results = _checked_verdicts(results, designs)
    estimator._unpack_common(results)
    _store(estimator, results, designs[0].blocks)
    _check_separation(estimator, designs)
    return results


def _pick(results, values):
    return values[0] if len(results) == 1 else list(values)


def _validation_design(estimator, blocks, classes, X_val, y_val, weights=None):
    """``(fit rows, their counts, validation design)`` for early stopping (``None``s without it).

    With weights, as in memory: held-out rows keep their weights (rows of
    weight 0 included) and fitted rows of weight 0 leave; given validation
    rows are weighed by ``class_weight`` only.
    """
    if not estimator.early_stopping:
        return None, None, None
    if X_val is None:
        fit_rows, fit_counts, val_rows, val_counts = held_out_split(
            blocks, classes, estimator.validation_fraction, estimator.random_state)
        if sum(val_counts) == 0:
            raise ValueError("early stopping needs a validation set, but validation_fraction="
                             f"{estimator.validation_fraction} holds out none; give X_val/y_val or more samples")
        validation = DaskDesign(blocks, None, val_rows, val_counts)
        if weights is not None:
            validation = validation.counted_with_weights(restrict(validation, weights.s))
            fit_rows, fit_counts = positive_rows(blocks, weights, fit_rows, fit_counts)
        return fit_rows, fit_counts, validation
    X_val = row_blocks_of(X_val, "X_val")
    if X_val.shape[1] != blocks.n_features:
        raise ValueError(f"X_val has {X_val.shape[1]} features, but {type(estimator).__name__} "
                         f"is expecting {blocks.n_features} features as input")
    val_blocks = RowBlocks(X_val, labels_like(y_val, X_val, "y_val"))
    unknown = np.setdiff1d(class_labels(val_blocks.labels), classes)
    if unknown.size:
        raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
    validation = DaskDesign(val_blocks, None)
    if weights is not None and weights.table is not None:
        validation = validation.counted_with_weights(class_weights_of_rows(val_blocks.labels, classes, weights.table))
    return None, None, validation


def fit_ho_kashyap(estimator, X, y, X_val=None, y_val=None, coef_init=None, intercept_init=None, sample_weight=None):
    """:meth:`linsep.HoKashyapClassifier.fit` for dask ``X``: the in-memory solver on :class:`DaskDesign`.

    Weighted: :func:`linsep.designs.weights.scaled_ho_kashyap` on scaled designs
    (:meth:`DaskDesign.scaled`), rows of weight 0 left out.
    """
    if (X_val is None) != (y_val is None):
        raise ValueError("give both X_val and y_val, or neither")
    if X_val is not None and not estimator.early_stopping:
        raise ValueError("X_val / y_val are only used with early_stopping=True")
    params = HKParams.from_estimator(estimator)
    refuse_unsupported(params, HKParams.neutral(), "dask input", HK_SUPPORTED)
    blocks = prepare(estimator, X, y, wide="loss='absolute' (IRLS reweighs the rows)"
                     if params.loss == "absolute" else None)
    wide = too_wide_for_direct(blocks.n_features + 1)
    classes = estimator.classes_
    weights = _row_weights(estimator, blocks, sample_weight)
    fit_rows, fit_counts, val_design = _validation_design(estimator, blocks, classes, X_val, y_val, weights)
    if not estimator.early_stopping or X_val is not None:
        fit_rows, fit_counts = positive_rows(blocks, weights)
    initial_weights = starting_weights(classes.size, blocks.n_features, coef_init, intercept_init)
    base = DaskDesign(blocks, None, fit_rows, fit_counts)
    kwargs = params.solver_kwargs()
    if weights is not None:
        s = restrict(base, weights.s)
        scaled = {power: base.scaled(s, power) for power in ((0.5, 1) if kwargs["loss"] == "absolute" else (0.5,))}
        solve_base = scaled[max(scaled)]
    else:
        solve_base = base
    # shared by the one-vs-rest problems (signs do not change it); wide X: distributed CG, no Gram matrix
    gram = None if wide else solve_base.gram()
    designs, results = [], []
    for positive in _positives(classes):
        design = base.with_positive(positive)
        Y_val = None if val_design is None else val_design.with_positive(positive)
        if weights is None:
            results.append(ho_kashyap(design, **kwargs, initial_weights=initial_weights, Y_val=Y_val, gram=gram))
        else:
            results.append(scaled_ho_kashyap(lambda power, p=positive: scaled[power].with_positive(p), s, kwargs,
                                             initial_weights=initial_weights, Y_val=Y_val, gram=gram))
        designs.append(design)  # verdicts are checked on the unscaled rows
    results = _finish(estimator, results, designs)
    if fit_rows is not None:  # held-out rows: the verdict describes every row of X, those included
        _check_separation(estimator, [DaskDesign(blocks, None).with_positive(p) for p in _positives(classes)])
    # a certificate speaks of every row of X, as in memory: 0 on held-out rows and rows of weight 0
    certificates = [r.certificate if r.certificate is None or fit_rows is None else expand(base, r.certificate)
                    for r in results]
    estimator.certificate_ = _pick(results, certificates)
    estimator.margin_vector_ = _pick(results, [r.margin for r in results])
    if estimator.early_stopping:
        estimator.best_iter_ = results[0].best_iter if len(results) == 1 else np.array([r.best_iter for r in results])
    return estimator


def fit_mse(estimator, X, y, margin=None, sample_weight=None):
    """:meth:`linsep.MSEClassifier.fit` for dask ``X``: :math:`Y^{+} b` (two classes) or the linear machine :math:`[X,\\ \\mathbf{1}]^{+} B`.

    Weighted: the same solves on the rows :math:`\\sqrt{s_i}\\, y_i` and targets :math:`\\sqrt{s_i}\\, b_i`
    (:meth:`DaskDesign.scaled`), rows of weight 0 left out.
    """
    blocks = prepare(estimator, X, y, wide="MSEClassifier")
    classes = estimator.classes_
    weights = _row_weights(estimator, blocks, sample_weight)
    margin, parts = margin_parts(margin, blocks)
    design = DaskDesign(blocks, classes[-1], *positive_rows(blocks, weights))
    da = dask_array()
    b = da.ones(design.shape[0], chunks=(tuple(design.counts),)) if margin is None else restrict(design, margin)
    solve_design, target = design, parts
    if weights is not None:
        s = restrict(design, weights.s)
        solve_design = design.scaled(s, 0.5)
        target = solve_design.vector(scaled_margin(None if margin is None else b, s))
    if classes.size == 2:
        designs = [design.with_positive(classes[1])]
        results = [mse(solve_design.with_positive(classes[1]), target, C=estimator.C)]
        margins = [b]
    else:
        W, factor, gap = solve_design.linear_machine(classes, target, C=estimator.C)
        status = SEPARABLE if gap > 0 else CONVERGED
        results = [SolveResult(weights=W[:, k], n_iter=1, status=status, extra={"factorization": factor.method})
                   for k in range(classes.size)]
        designs = [design.with_positive(c) for c in classes]
        own = restrict(design, blocks.labels)[:, None] == da.from_array(classes[None, :])
        margins = [da.where(own, b[:, None], 0.0)]
    estimator._unpack_common(results)
    _store(estimator, results, blocks)
    if classes.size == 2:
        _check_separation(estimator, designs)
    estimator.margin_vector_ = margins[0]
    return estimator


def fit_lsvm(estimator, X, y, sample_weight=None):
    """:meth:`linsep.LagrangianSVMClassifier.fit` for dask ``X``: the in-memory iteration over blockwise passes.

    Weighted (penalty :math:`C s_i`): the dual in :math:`\\beta_i = \\alpha_i / \\sqrt{s_i}` on the rows
    :math:`\\sqrt{s_i}\\, h_i` (:meth:`DaskDesign.scaled`), rows of weight 0 left out; ``alpha_`` is :math:`\\alpha`.
    """
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    weights = _row_weights(estimator, blocks, sample_weight)
    design = DaskDesign(blocks, None, *positive_rows(blocks, weights))
    solve_design = design
    if weights is not None:
        s = restrict(design, weights.s)
        solve_design = design.scaled(s, 0.5)
    factor = solve_design.lsvm_factor(float(estimator.C), cg_forcing=LSVM_CG_FORCING)
    designs = [design.with_positive(positive) for positive in _positives(classes)]  # verdicts: unscaled rows
    results = [lagrangian_svm(solve_design.with_positive(positive), None, C=estimator.C, mu=estimator.mu,
                              tol=estimator.tol, max_iter=estimator.max_iter, factor=factor)
               for positive in _positives(classes)]
    _finish(estimator, results, designs)
    da = dask_array()
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else da.stack(alphas)
    return estimator
