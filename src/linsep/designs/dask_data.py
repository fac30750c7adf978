"""Dask input as persisted row blocks: the data a :class:`~linsep.designs.dask.DaskDesign` is built on.

Validation of dask ``X`` into row blocks (all columns in each, known sizes,
real numbers) and of the labels into the same chunks (:class:`RowBlocks`);
row weights summarised block by block and checked by the rules every fit
follows (:func:`row_weights`, :func:`linsep.designs.weights.check_row_weights`);
the stratified held-out rows of early stopping, drawn per block
(:func:`held_out_split`); and one-value-per-row dask vectors restricted to a
design's rows or expanded back to all rows of ``X`` (:func:`restrict`,
:func:`expand`, :func:`margin_parts`); and a fitted model's blockwise scores and labels of new
rows (:func:`linear_scores`, :func:`predicted_labels`).  Nothing here knows an estimator;
dask itself is imported only when a dask collection arrives.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from linsep._core.plan import FLOAT64_ONLY, working_dtype
from linsep.designs.backend import is_dask_collection
from linsep.designs.dask import _compute, _dask, _delayed, _persist, worker_groups
from linsep.designs.weights import check_class_weight, check_row_weights, class_weight_table, validated_sample_weight

__all__ = ["BlockWeights", "RowBlocks", "class_labels", "class_weights_of_rows", "dask_array", "expand", "held_out_split",
           "labels_like", "linear_scores", "margin_parts", "positive_rows", "predicted_labels", "restrict", "row_blocks_of",
           "row_chunked", "row_weights"]

MAX_BLOCK_BYTES = 1 << 30
"""Largest row block (all columns, float64) that a column-chunked ``X`` is rechunked into."""


def dask_array():
    """The ``dask.array`` module, imported at first use (``import linsep`` never imports dask)."""
    return _dask()[1]


class RowBlocks:
    """Persisted row blocks of ``X`` (all columns) and of the labels, with their sizes."""

    def __init__(self, X, labels):
        dask, _ = _dask()
        X, labels = dask.persist(X, labels)
        self.X = X
        self.labels = labels
        self.X_parts = X.to_delayed().ravel().tolist()
        self.label_parts = labels.to_delayed().ravel().tolist()
        self.sizes = [int(n) for n in X.chunks[0]]
        self.groups = worker_groups(X, len(self.sizes))  # one task per group per pass (designs.dask)
        self.n_features = int(X.shape[1])
        self.dtype = working_dtype(X)  # of the fitted weights, as in memory (float32 for float32 X)


def row_chunked(X, name="X"):
    """``X`` as a 2-d dask array chunked by rows only; clear errors for what cannot be handled."""
    _, da = _dask()
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a dask array (or a NumPy array), got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (samples × features), got {X.ndim} dimension(s)")
    if any(np.isnan(c) for chunks in X.chunks for c in chunks):
        raise ValueError(f"{name} has chunks of unknown size (e.g. after boolean indexing); "
                         f"call {name}.compute_chunk_sizes() first")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if len(X.chunks[1]) > 1:
        largest = max(X.chunks[0]) * X.shape[1] * 8
        if largest > MAX_BLOCK_BYTES:
            raise ValueError(
                f"{name} is chunked by columns and a row block with all {X.shape[1]} columns would take "
                f"{largest / 2**20:.0f} MiB (limit {MAX_BLOCK_BYTES / 2**20:.0f} MiB); rechunk it by rows, "
                f"e.g. {name}.rechunk({{0: 'auto', 1: -1}})")
        X = X.rechunk({1: -1})
    return X


def row_blocks_of(X, name="X"):
    """``X`` (dask, or NumPy brought to dask) as a 2-d dask array chunked by rows (:func:`row_chunked`)."""
    if not is_dask_collection(X):
        X = dask_array().from_array(np.asarray(X, dtype=working_dtype(X, FLOAT64_ONLY)))
    return row_chunked(X, name)


def labels_like(y, X, name="y"):
    """``y`` as a 1-d dask array with the row chunks of ``X``."""
    _, da = _dask()
    if is_dask_collection(y):
        if not isinstance(y, da.Array):
            raise TypeError(f"{name} must be a dask or NumPy array, got {type(y).__name__}")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or any(np.isnan(c) for c in y.chunks[0]):
            raise ValueError(f"{name} must be a 1-d array with known chunk sizes")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {y.shape[0]} labels for {X.shape[0]} rows of X")
        return y if y.chunks[0] == X.chunks[0] else y.rechunk((X.chunks[0],))
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"{name} must be 1-d with one label per row of X ({X.shape[0]}), got shape {y.shape}")
    return da.from_array(y, chunks=(X.chunks[0],))


def class_labels(labels):
    """The sorted distinct labels (computed: small), checked as class labels."""
    from sklearn.utils.multiclass import check_classification_targets

    _, da = _dask()
    (classes,) = _compute(da.unique(labels))
    classes = np.unique(classes)
    check_classification_targets(classes)
    return classes


def _held_out_block(labels, classes, fraction, seed, index):
    """Stratified held-out rows of one block: ``(fit rows, validation rows)``."""
    rng = np.random.default_rng([seed, index])
    held_out = np.zeros(labels.shape[0], dtype=bool)
    for label in classes:
        members = np.flatnonzero(labels == label)
        n_val = min(members.size - 1, int(round(fraction * members.size)))
        if n_val > 0:
            held_out[rng.permutation(members)[:n_val]] = True
    return np.flatnonzero(~held_out), np.flatnonzero(held_out)


class BlockWeights:
    """A fit's row weights on dask: ``s`` (persisted, chunked like the row blocks), the class weights, any zero."""

    def __init__(self, s, table, any_zero):
        self.s, self.table, self.any_zero = s, table, any_zero


def row_weights(blocks, classes, sample_weight, class_weight, owner):
    """``sample_weight`` times ``class_weight``'s weights (:class:`BlockWeights`), or ``None`` when neither is set.

    The data side of the rules of :func:`linsep.designs.weights.check_row_weights`
    (the same as in memory): NumPy weights pass scikit-learn's
    ``_check_sample_weight``, dask weights are summarised blockwise; class
    weights come from the labels of all rows (``"balanced"``: ``N / (K n_k)``,
    scikit-learn's formula).
    """
    if sample_weight is None and class_weight is None:
        return None
    _, da = _dask()
    n, chunks = sum(blocks.sizes), (tuple(blocks.sizes),)
    if is_dask_collection(sample_weight):
        if not isinstance(sample_weight, da.Array) or sample_weight.shape != (n,):
            raise ValueError(f"sample_weight must be a 1-d array of {n} weights, got shape "
                             f"{getattr(sample_weight, 'shape', None)}")
        s = sample_weight.astype(np.float64).rechunk(chunks)
    elif sample_weight is None:
        s = da.ones(n, chunks=chunks)
    else:
        s = da.from_array(validated_sample_weight(sample_weight, blocks.X), chunks=chunks)
    table = None
    if class_weight is not None:
        check_class_weight(class_weight, owner)
        if isinstance(class_weight, str) and class_weight == "balanced":
            counts = np.sum(_compute(*[_delayed(_class_counts)(labels, classes) for labels in blocks.label_parts]),
                            axis=0)
            table = n / (classes.size * counts.astype(np.float64))
        else:
            table = class_weight_table(class_weight, classes, owner)
        s = s * blocks.labels.map_blocks(_class_weight_block, classes=classes, table=table, dtype=np.float64)
    (s,) = _persist(s)
    stats = _compute(*[_delayed(_weight_stats)(part, labels, classes)
                       for part, labels in zip(s.to_delayed().ravel(), blocks.label_parts)])
    positive = np.sum([count for _, _, count in stats], axis=0)
    check_row_weights(owner, finite=all(finite for finite, _, _ in stats),
                      smallest=min(extremes[0] for _, extremes, _ in stats),
                      positive_range=(min(extremes[1] for _, extremes, _ in stats),
                                      max(extremes[2] for _, extremes, _ in stats)),
                      positive_per_class=positive)
    return BlockWeights(s, table, bool(positive.sum() < n))


def _class_counts(labels, classes):
    return np.bincount(np.searchsorted(classes, labels), minlength=classes.size)


def class_weights_of_rows(labels, classes, table):
    """The weight of each row's class (``table``, one per class of ``classes``) as a dask array like ``labels``."""
    return labels.map_blocks(_class_weight_block, classes=classes, table=table, dtype=np.float64)


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


def positive_rows(blocks, weights, rows=None, counts=None):
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


def restrict(design, values):
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


def expand(design, values):
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


def held_out_split(blocks, classes, fraction, random_state):
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


def margin_parts(margin, blocks):
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


# --- Prediction ------------------------------------------------------------------------------------------------

def _decision_block(X, coef, intercept):
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    return np.asarray(X @ coef.T) + intercept


def linear_scores(X, coef, intercept, n_features, owner):
    """Blockwise ``X coefᵀ + intercept`` (a dask array: (N,) for one row of ``coef``, (N, K) otherwise)."""
    X = row_chunked(X)
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {owner} is expecting {n_features} features as input")
    coef, intercept = np.asarray(coef, dtype=np.float64), np.asarray(intercept, dtype=np.float64)
    scores = X.map_blocks(_decision_block, coef=coef, intercept=intercept, chunks=(X.chunks[0], (coef.shape[0],)),
                          dtype=np.float64)
    return scores[:, 0] if coef.shape[0] == 1 else scores


def _labels_block(scores, classes):
    if scores.ndim == 1:
        return classes[(scores > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


def predicted_labels(scores, classes):
    """Blockwise labels of the scores of :func:`linear_scores` (a dask array)."""
    if scores.ndim == 1:
        return scores.map_blocks(_labels_block, classes=classes, dtype=classes.dtype)
    return scores.map_blocks(_labels_block, classes=classes, drop_axis=1, dtype=classes.dtype)
