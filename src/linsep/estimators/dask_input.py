"""Dask input for the estimators: validation, the row-block split, the verdict checks, blockwise prediction.

The numerical work runs in the in-memory drivers over a
:class:`~linsep.designs.dask.DaskDesign` (the blockwise data operations);
this module is the estimator side of dask input: it validates the arrays
into persisted row blocks (:func:`prepare`), holds out the early-stopping
rows block by block (:func:`validation_split`), receives each estimator's
parameter object, checks the verdicts blockwise and stores the model.
Parameters the dask backend cannot honour are refused through
:data:`UNSUPPORTED` (:func:`linsep.solvers.ho_kashyap.params.refuse_unsupported`).

Imported by the estimators; dask itself is imported only when a dask
collection arrives (:func:`linsep.designs.dask._dask`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.utils.validation import _check_sample_weight

from linsep.designs.backend import is_dask_collection
from linsep._core.linalg import too_wide_for_direct
from linsep.solvers.ho_kashyap.params import HKParams, refuse_unsupported, starting_weights
from linsep._core.plan import FLOAT64_ONLY, working_dtype
from linsep._core.result import CONVERGED, SEPARABLE, SolveResult, demote_unproven, demote_unseparated
from linsep.designs import dask as blockwise
from linsep.designs.dask import (
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
from linsep.designs.weights import check_class_weight, check_weight_range, class_weight_table, scaled_margin, validation_weight_factor
from linsep.solvers.ho_kashyap.weighted import scaled_ho_kashyap
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.lsvm.solver import lagrangian_svm
from linsep.solvers.mse import mse

__all__ = [
    "HK_SUPPORTED",
    "UNSUPPORTED",
    "decision_function",
    "fit_ho_kashyap",
    "fit_lsvm",
    "fit_mse",
    "predict",
    "prepare",
    "sample_weights",
    "validation_split",
]

UNSUPPORTED = {"record_history": False}
"""Estimator parameters the dask backend cannot honour, with their neutral values (traces hold N-vectors)."""

HK_SUPPORTED = frozenset({"learning_rate", "b0", "max_iter", "tol", "stopping", "stop_at_separation", "update",
                          "C", "loss", "irls_floor", "n_iter_no_change", "validation_tol"})
"""The :class:`~linsep.solvers.ho_kashyap.params.HKParams` the dask backend honours; any other one set is refused."""


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


class _Weights:
    """A fit's row weights on dask: ``s`` (persisted, chunked like the row blocks), the class weights, any zero."""

    def __init__(self, s, table, any_zero):
        self.s, self.table, self.any_zero = s, table, any_zero


def sample_weights(estimator, blocks, sample_weight):
    """``sample_weight`` times ``class_weight``'s weights (:class:`_Weights`), or ``None`` when neither is set.

    The in-memory rules of ``BaseSeparator._sample_weight``: one finite,
    non-negative weight per row (NumPy weights through scikit-learn's
    ``_check_sample_weight``, dask weights checked blockwise), class weights
    from the labels of all rows (``"balanced"``: ``N / (K n_k)``, scikit-learn's
    formula), not all zero, two classes with a positive weight.
    """
    class_weight = getattr(estimator, "class_weight", None)
    if sample_weight is None and class_weight is None:
        return None
    _, da = _dask()
    classes, n, chunks = estimator.classes_, sum(blocks.sizes), (tuple(blocks.sizes),)
    if is_dask_collection(sample_weight):
        if not isinstance(sample_weight, da.Array) or sample_weight.shape != (n,):
            raise ValueError(f"sample_weight must be a 1-d array of {n} weights, got shape "
                             f"{getattr(sample_weight, 'shape', None)}")
        s = sample_weight.astype(np.float64).rechunk(chunks)
    elif sample_weight is None:
        s = da.ones(n, chunks=chunks)
    else:
        s = da.from_array(_check_sample_weight(sample_weight, blocks.X, dtype=np.float64, ensure_non_negative=True,
                                               allow_all_zero_weights=True, copy=True), chunks=chunks)
    table = None
    name = type(estimator).__name__
    if class_weight is not None:
        check_class_weight(class_weight, name)
        if isinstance(class_weight, str) and class_weight == "balanced":
            counts = np.sum(_compute(*[_delayed(_class_counts)(labels, classes) for labels in blocks.label_parts]),
                            axis=0)
            table = n / (classes.size * counts.astype(np.float64))
        else:
            table = class_weight_table(class_weight, classes, name)
        s = s * blocks.labels.map_blocks(_class_weight_block, classes=classes, table=table, dtype=np.float64)
    (s,) = _persist(s)
    stats = _compute(*[_delayed(_weight_stats)(part, labels, classes)
                       for part, labels in zip(s.to_delayed().ravel(), blocks.label_parts)])
    if not all(finite for finite, _, _ in stats):
        raise ValueError("sample weights must be finite")
    if min(extremes[0] for _, extremes, _ in stats) < 0:
        raise ValueError("Negative values in data passed to sample_weight")
    check_weight_range((min(extremes[1] for _, extremes, _ in stats),
                        max(extremes[2] for _, extremes, _ in stats)), name)
    positive = np.sum([count for _, _, count in stats], axis=0)
    if not positive.any():
        raise ValueError(f"{name}: every sample weight is zero (after class_weight); nothing is left to fit")
    if np.count_nonzero(positive) < 2:
        raise ValueError(f"{name} needs samples of at least 2 classes with a positive weight")
    return _Weights(s, table, bool(positive.sum() < n))


def _class_counts(labels, classes):
    return np.bincount(np.searchsorted(classes, labels), minlength=classes.size)


def _class_weight_block(labels, classes, table):
    return table[np.searchsorted(classes, labels)]


def _weight_stats(s, labels, classes):
    """``(all finite, (smallest, smallest positive, largest), rows of positive weight per class)`` of a block.

    Every reduction has an identity: a block may be empty (a row chunk of size 0).
    """
    positive = s[s > 0]
    extremes = (float(s.min(initial=np.inf)), float(positive.min(initial=np.inf)), float(s.max(initial=0.0)))
    return (bool(np.isfinite(s).all()), extremes,
            np.bincount(np.searchsorted(classes, labels[s > 0]), minlength=classes.size))


def _positive_rows(blocks, weights, rows=None, counts=None):
    """``(rows, counts)`` of the rows ``rows`` (``None``: all) of each block whose weight is positive.

    Rows of weight 0 leave the fit, as in memory (``linsep.estimators.base.rows_with_weight``);
    ``rows, counts`` as given when no weight is 0 (``None``: the blocks are read whole).
    """
    if weights is None or not weights.any_zero:
        return rows, counts
    rows = [None] * len(blocks.sizes) if rows is None else rows
    kept = _persist(*[_delayed(_positive_of)(part, r) for part, r in zip(weights.s.to_delayed().ravel(), rows)])
    return list(kept), list(_compute(*[_delayed(len)(r) for r in kept]))


def _positive_of(s, rows):
    return np.flatnonzero(s > 0) if rows is None else rows[s[rows] > 0]


def _restrict(design, values):
    """A dask array of one entry per row of ``X`` (chunked like its blocks) at ``design``'s rows, persisted."""
    _, da = _dask()
    if all(rows is None for rows in design.rows):
        return values
    take = _delayed(_take_rows)
    (restricted,) = _persist(da.concatenate([
        da.from_delayed(take(part, rows), shape=(n,), dtype=values.dtype)
        for part, rows, n in zip(values.to_delayed().ravel(), design.rows, design.counts)]))
    return restricted


def _take_rows(values, rows):
    return values if rows is None else values[rows]


def _expand(design, values):
    """``values`` of ``design``'s rows (dask) as one entry per row of ``X``, zero elsewhere (persisted)."""
    _, da = _dask()
    place = _delayed(_placed)
    parts = values.rechunk((tuple(design.counts),)).to_delayed().ravel()
    (expanded,) = _persist(da.concatenate([
        da.from_delayed(place(part, rows, n), shape=(n,), dtype=values.dtype)
        for part, rows, n in zip(parts, design.rows, design.blocks.sizes)]))
    return expanded


def _placed(values, rows, n):
    if rows is None:
        return values
    out = np.zeros(n, dtype=values.dtype)
    out[rows] = values
    return out


def _positives(classes):
    """The label taken as ``+1`` in each binary problem (``classes[1]``, or each class one-vs-rest)."""
    return [classes[1]] if classes.size == 2 else list(classes)


def _checked_verdicts(results, designs):
    """Demote verdicts whose evidence fails its blockwise check (the rule of :func:`demote_unproven`)."""
    return [demote_unproven(result, lambda certificate, design=design: blockwise.is_proof(design, certificate))
            for result, design in zip(results, designs)]


def _check_separation(estimator, designs):
    estimator.status_ = demote_unseparated(estimator.status_, lambda k: all(_compute(*designs[k].tasks(
        blockwise._separates_block, coef=estimator.coef_[k], intercept=float(estimator.intercept_[k])))))


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


def _validation_design(estimator, blocks, classes, X_val, y_val, weights=None):
    """``(fit rows, their counts, validation design)`` for early stopping (``None``s without it).

    With weights, as in memory: held-out rows keep their weights (rows of
    weight 0 included) and fitted rows of weight 0 leave; given validation
    rows are weighed by ``class_weight`` only.
    """
    if not estimator.early_stopping:
        return None, None, None
    if X_val is None:
        fit_rows, fit_counts, val_rows, val_counts = validation_split(
            blocks, classes, estimator.validation_fraction, estimator.random_state)
        if sum(val_counts) == 0:
            raise ValueError("early stopping needs a validation set, but validation_fraction="
                             f"{estimator.validation_fraction} holds out none; give X_val/y_val or more samples")
        validation = DaskDesign(blocks, None, val_rows, val_counts)
        if weights is not None:
            validation = _counted(validation, _restrict(validation, weights.s))
            fit_rows, fit_counts = _positive_rows(blocks, weights, fit_rows, fit_counts)
        return fit_rows, fit_counts, validation
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
    validation = DaskDesign(val_blocks, None)
    if weights is not None and weights.table is not None:
        validation = _counted(validation, val_blocks.labels.map_blocks(
            _class_weight_block, classes=classes, table=weights.table, dtype=np.float64))
    return None, None, validation


def _counted(validation, weight):
    """``validation`` counting errors with ``weight`` normalised to sum to its rows (``linsep.designs.weights.WeightedValidation``)."""
    (total,) = _compute(weight.sum())
    return validation.counted_with(weight * validation_weight_factor(total, validation.shape[0]))


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
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    weights = sample_weights(estimator, blocks, sample_weight)
    fit_rows, fit_counts, val_design = _validation_design(estimator, blocks, classes, X_val, y_val, weights)
    if not estimator.early_stopping or X_val is not None:
        fit_rows, fit_counts = _positive_rows(blocks, weights)
    initial_weights = starting_weights(classes.size, blocks.n_features, coef_init, intercept_init)
    base = DaskDesign(blocks, None, fit_rows, fit_counts)
    kwargs = params.solver_kwargs()
    if weights is not None:
        s = _restrict(base, weights.s)
        scaled = {power: base.scaled(s, power) for power in ((0.5, 1) if kwargs["loss"] == "absolute" else (0.5,))}
        solve_base = scaled[max(scaled)]
    else:
        solve_base = base
    gram = blockwise._prepared_gram(solve_base)[0]  # shared by the one-vs-rest problems (signs do not change it)
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
    certificates = [r.certificate if r.certificate is None or fit_rows is None else _expand(base, r.certificate)
                    for r in results]
    estimator.certificate_ = _pick(results, certificates)
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


def fit_mse(estimator, X, y, margin=None, sample_weight=None):
    """:meth:`linsep.MSEClassifier.fit` for dask ``X``: ``Y⁺b`` (two classes) or the linear machine ``[X, 1]⁺B``.

    Weighted: the same solves on the rows ``√s_i y_i`` and targets ``√s_i b_i``
    (:meth:`DaskDesign.scaled`), rows of weight 0 left out.
    """
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    weights = sample_weights(estimator, blocks, sample_weight)
    margin, margin_parts = _margin_parts(margin, blocks)
    design = DaskDesign(blocks, classes[-1], *_positive_rows(blocks, weights))
    _, da = _dask()
    b = da.ones(design.shape[0], chunks=(tuple(design.counts),)) if margin is None else _restrict(design, margin)
    solve_design, target = design, margin_parts
    if weights is not None:
        s = _restrict(design, weights.s)
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
        own = _restrict(design, blocks.labels)[:, None] == da.from_array(classes[None, :])
        margins = [da.where(own, b[:, None], 0.0)]
    estimator._unpack_common(results)
    _store(estimator, results, blocks)
    if classes.size == 2:
        _check_separation(estimator, designs)
    estimator.margin_vector_ = margins[0]
    return estimator


def fit_lsvm(estimator, X, y, sample_weight=None):
    """:meth:`linsep.LagrangianSVMClassifier.fit` for dask ``X``: the in-memory iteration over blockwise passes.

    Weighted (penalty ``C s_i``): the dual in ``β = α/√s`` on the rows ``√s_i h_i``
    (:meth:`DaskDesign.scaled`), rows of weight 0 left out; ``alpha_`` is ``α``.
    """
    blocks = prepare(estimator, X, y)
    classes = estimator.classes_
    weights = sample_weights(estimator, blocks, sample_weight)
    design = DaskDesign(blocks, None, *_positive_rows(blocks, weights))
    solve_design = design
    if weights is not None:
        s = _restrict(design, weights.s)
        solve_design = design.scaled(s, 0.5)
    factor = solve_design.lsvm_factor(float(estimator.C))
    designs = [design.with_positive(positive) for positive in _positives(classes)]  # verdicts: unscaled rows
    results = [lagrangian_svm(solve_design.with_positive(positive), None, C=estimator.C, mu=estimator.mu,
                              tol=estimator.tol, max_iter=estimator.max_iter, factor=factor)
               for positive in _positives(classes)]
    _finish(estimator, results, designs)
    _, da = _dask()
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else da.stack(alphas)
    return estimator
