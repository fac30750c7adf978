"""Dask input for the estimators: validation, the row-block split, the verdict checks, blockwise prediction.

The numerical work runs in the in-memory drivers over a
:class:`~linsep.designs.dask.DaskDesign` (the blockwise data operations);
this module is the estimator side of dask input: it validates the arrays
into persisted row blocks (:func:`prepare`), holds out the early-stopping
rows block by block (:func:`validation_split`), receives each estimator's
parameter object, checks the verdicts blockwise and stores the model.
Parameters the dask backend cannot honour are refused through
:data:`UNSUPPORTED` (:func:`linsep._params.refuse_unsupported`).

Imported by the estimators; dask itself is imported only when a dask
collection arrives (:func:`linsep.designs.dask._dask`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._backend import is_dask_collection
from ._linalg import too_wide_for_direct
from ._params import HKParams, refuse_unsupported, starting_weights
from ._plan import FLOAT64_ONLY, working_dtype
from ._result import CONVERGED, NOT_SEPARABLE, SEPARABLE, SolveResult
from .designs import dask as blockwise
from .designs.dask import (
    DaskDesign,
    RowBlocks,
    _check_row_chunked,
    _classes,
    _compute,
    _dask,
    _delayed,
    _held_out_block,
    _labels_like,
    _persist,
    decision_function,
    predict,
)
from .solvers.ho_kashyap import ho_kashyap
from .solvers.lsvm import lagrangian_svm
from .solvers.mse import mse

__all__ = [
    "HK_SUPPORTED",
    "UNSUPPORTED",
    "decision_function",
    "fit_ho_kashyap",
    "fit_lsvm",
    "fit_mse",
    "predict",
    "prepare",
    "validation_split",
]

UNSUPPORTED = {"record_history": False}
"""Estimator parameters the dask backend cannot honour, with their neutral values (traces hold N-vectors)."""

HK_SUPPORTED = frozenset({"learning_rate", "b0", "max_iter", "tol", "stopping", "stop_at_separation", "update",
                          "C", "loss", "irls_floor", "n_iter_no_change", "validation_tol"})
"""The :class:`~linsep._params.HKParams` the dask backend honours; any other one set is refused."""


def prepare(estimator, X, y):
    """Validate ``X, y``, set ``n_features_in_`` and ``classes_``; return the row blocks."""
    refuse_unsupported(estimator.get_params(), UNSUPPORTED, "dask input (its traces hold N-vectors)")
    X = _check_row_chunked(X)
    p = X.shape[1] + 1
    if too_wide_for_direct(p):
        # every block task would build a dense p × p Gram matrix, and the client factor it
        raise ValueError(
            f"X has {X.shape[1]} features, too many for the dask backend: it solves from the (d+1)×(d+1) "
            f"Gram matrix ({8 * p**2 / 2**30:.2g} GiB here, built in every block task), beyond what is "
            f"factored directly; fit wide X in memory (e.g. as a scipy.sparse matrix), where conjugate "
            f"gradients never form it")
    if X.shape[0] < 2:
        raise ValueError(f"{type(estimator).__name__} needs at least 2 samples, got {X.shape[0]}")
    if X.shape[1] < 1:
        raise ValueError("X needs at least one feature")
    labels = _labels_like(y, X)
    blocks = RowBlocks(X, labels)
    classes = _classes(blocks.labels)
    if classes.size < 2:
        raise ValueError(f"{type(estimator).__name__} needs samples of at least 2 classes in the data, "
                         f"but the data contain only one class: {classes.tolist()[0]!r}")
    estimator.n_features_in_ = blocks.n_features
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.classes_ = classes
    return blocks


def _positives(classes):
    """The label taken as ``+1`` in each binary problem (``classes[1]``, or each class one-vs-rest)."""
    return [classes[1]] if classes.size == 2 else list(classes)


def _checked_verdicts(results, designs):
    """Demote verdicts whose evidence fails its blockwise check (as the in-memory estimators do)."""
    checked = []
    for result, design in zip(results, designs):
        if result.status == NOT_SEPARABLE and not blockwise.is_proof(design, result.certificate):
            result = replace(result, status=CONVERGED, certificate=None)
        checked.append(result)
    return checked


def _check_separation(estimator, designs):
    statuses = np.array(np.atleast_1d(estimator.status_), dtype=object)
    for k, design in enumerate(designs):
        if statuses[k] == SEPARABLE and not all(_compute(*design.tasks(
                blockwise._separates_block, coef=estimator.coef_[k], intercept=float(estimator.intercept_[k])))):
            statuses[k] = CONVERGED
    estimator.status_ = statuses[0] if statuses.size == 1 else statuses


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


def validation_split(blocks, classes, fraction, random_state):
    """Stratified held-out rows per block: lists of delayed ``(fit rows, validation rows)`` and their counts.

    Each block holds out ``round(fraction · n_c)`` of its ``n_c`` samples of
    each class (at most ``n_c − 1``), with a generator seeded by
    ``(seed, block index)``; the seed is ``random_state`` itself (an int), a
    draw from it (a ``RandomState``) or from NumPy's global generator (``None``).
    """
    if isinstance(random_state, (int, np.integer)):
        seed = int(random_state)
    else:
        rng = random_state if isinstance(random_state, np.random.RandomState) else np.random.mtrand._rand
        seed = int(rng.randint(np.iinfo(np.int32).max))
    split = _delayed(_held_out_block)
    pairs = _persist(*[split(labels, classes, fraction, seed, b) for b, labels in enumerate(blocks.label_parts)])
    counts = _compute(*[_delayed(_pair_sizes)(pair) for pair in pairs])
    fit_rows = [pair[0] for pair in pairs]
    val_rows = [pair[1] for pair in pairs]
    return fit_rows, [c[0] for c in counts], val_rows, [c[1] for c in counts]


def _pair_sizes(pair):
    return len(pair[0]), len(pair[1])


def _validation_design(estimator, blocks, classes, X_val, y_val):
    """``(fit rows, their counts, validation design)`` for early stopping (``None``s without it)."""
    if not estimator.early_stopping:
        return None, None, None
    if X_val is None:
        fit_rows, fit_counts, val_rows, val_counts = validation_split(
            blocks, classes, estimator.validation_fraction, estimator.random_state)
        if sum(val_counts) == 0:
            raise ValueError("early stopping needs a validation set, but validation_fraction="
                             f"{estimator.validation_fraction} holds out none; give X_val/y_val or more samples")
        return fit_rows, fit_counts, DaskDesign(blocks, None, val_rows, val_counts)
    _, da = _dask()
    X_val = X_val if is_dask_collection(X_val) else da.from_array(np.asarray(X_val, dtype=working_dtype(X_val, FLOAT64_ONLY)))
    X_val = _check_row_chunked(X_val, "X_val")
    if X_val.shape[1] != blocks.n_features:
        raise ValueError(f"X_val has {X_val.shape[1]} features, but {type(estimator).__name__} "
                         f"is expecting {blocks.n_features} features as input")
    val_blocks = RowBlocks(X_val, _labels_like(y_val, X_val, "y_val"))
    unknown = np.setdiff1d(_classes(val_blocks.labels), classes)
    if unknown.size:
        raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
    return None, None, DaskDesign(val_blocks, None)


def fit_ho_kashyap(estimator, X, y, X_val=None, y_val=None, coef_init=None, intercept_init=None):
    """:meth:`linsep.HoKashyapClassifier.fit` for dask ``X``: the in-memory solver on :class:`DaskDesign`."""
    if (X_val is None) != (y_val is None):
        raise ValueError("give both X_val and y_val, or neither")
    if X_val is not None and not estimator.early_stopping:
        raise ValueError("X_val / y_val are only used with early_stopping=True")
    params = HKParams.from_estimator(estimator)
    refuse_unsupported(params, HKParams.neutral(), "dask input", HK_SUPPORTED)
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    fit_rows, fit_counts, val_design = _validation_design(estimator, blocks, classes, X_val, y_val)
    initial_weights = starting_weights(classes.size, blocks.n_features, coef_init, intercept_init)
    base = DaskDesign(blocks, None, fit_rows, fit_counts)
    gram = blockwise._prepared_gram(base)[0]  # shared by the one-vs-rest problems (signs do not change it)
    designs, results = [], []
    for positive in _positives(classes):
        design = base.with_positive(positive)
        results.append(ho_kashyap(
            design, **params.solver_kwargs(), initial_weights=initial_weights,
            Y_val=None if val_design is None else val_design.with_positive(positive), gram=gram))
        designs.append(design)
    results = _finish(estimator, results, designs)
    if fit_rows is not None:  # held-out rows: the verdict describes every row of X, those included
        _check_separation(estimator, [DaskDesign(blocks, None).with_positive(p) for p in _positives(classes)])
    estimator.certificate_ = _pick(results, [r.certificate for r in results])
    estimator.margin_vector_ = _pick(results, [r.margin for r in results])
    if estimator.early_stopping:
        estimator.best_iter_ = results[0].best_iter if len(results) == 1 else np.array([r.best_iter for r in results])
    return estimator


def _margin_parts(margin, blocks):
    """``None``, a positive number, or ``N`` values (NumPy or dask) → ``(b, its per-block parts)``, persisted.

    The caller keeps ``b``: its persisted blocks live as long as it does.
    """
    if margin is None:
        return None, None
    _, da = _dask()
    if not is_dask_collection(margin) and np.ndim(margin) == 0:
        value = float(margin)
        if not (np.isfinite(value) and value > 0):
            raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
        margin = da.full(sum(blocks.sizes), value, chunks=(tuple(blocks.sizes),))
    elif not is_dask_collection(margin):
        margin = np.asarray(margin, dtype=np.float64)
        if margin.shape != (sum(blocks.sizes),):
            raise ValueError(f"margin must be a number or have one entry per sample ({sum(blocks.sizes)}), "
                             f"got shape {margin.shape}")
        margin = da.from_array(margin, chunks=(tuple(blocks.sizes),))
    elif margin.shape != (sum(blocks.sizes),):
        raise ValueError(f"margin must be a number or have one entry per sample ({sum(blocks.sizes)}), "
                         f"got shape {margin.shape}")
    (margin,) = _persist(margin.astype(np.float64).rechunk((tuple(blocks.sizes),)))
    return margin, margin.to_delayed().ravel().tolist()


def fit_mse(estimator, X, y, margin=None):
    """:meth:`linsep.MSEClassifier.fit` for dask ``X``: ``Y⁺b`` (two classes) or the linear machine ``[X, 1]⁺B``."""
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    margin, margin_parts = _margin_parts(margin, blocks)
    design = DaskDesign(blocks, classes[-1])
    _, da = _dask()
    b = da.ones(design.shape[0], chunks=(tuple(design.counts),)) if margin is None else margin
    if classes.size == 2:
        designs = [design.with_positive(classes[1])]
        results = [mse(designs[0], margin_parts, C=estimator.C)]
        margins = [b]
    else:
        W, factor, gap = design.linear_machine(classes, margin_parts, C=estimator.C)
        status = SEPARABLE if gap > 0 else CONVERGED
        results = [SolveResult(weights=W[:, k], n_iter=1, status=status, extra={"factorization": factor.method})
                   for k in range(classes.size)]
        designs = [design.with_positive(c) for c in classes]
        own = blocks.labels[:, None] == da.from_array(classes[None, :])
        margins = [da.where(own, b[:, None], 0.0)]
    estimator._unpack_common(results)
    _store(estimator, results, blocks)
    if classes.size == 2:
        _check_separation(estimator, designs)
    estimator.margin_vector_ = margins[0]
    return estimator


def fit_lsvm(estimator, X, y):
    """:meth:`linsep.LagrangianSVMClassifier.fit` for dask ``X``: the in-memory iteration over blockwise passes."""
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    design = DaskDesign(blocks, None)
    factor = design.lsvm_factor(float(estimator.C))
    designs = [design.with_positive(positive) for positive in _positives(classes)]
    results = [lagrangian_svm(d, None, C=estimator.C, mu=estimator.mu, tol=estimator.tol,
                              max_iter=estimator.max_iter, factor=factor) for d in designs]
    _finish(estimator, results, designs)
    _, da = _dask()
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else da.stack(alphas)
    return estimator
