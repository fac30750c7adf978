"""The folds of the cross-validated Ho–Kashyap estimators, and the rows of weight 0 they leave out.

``linsep.estimators.ho_kashyap_cv`` draws its folds here (the linear and the
kernel estimator alike), so the rule "a row of weight 0 is removed before an
int ``cv`` draws the folds; the folds of a splitter or of index pairs lose
such rows afterwards" exists once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["stratified_folds", "folds_without_zero_weight"]


def stratified_folds(y, n_splits, random_state=None):
    """Row indices ``[(train, validation), …]`` of ``n_splits`` stratified, shuffled folds.

    Each class is shuffled and dealt round-robin over the folds, continuing
    where the previous class stopped, so every fold holds ``⌊N/F⌋`` or
    ``⌈N/F⌉`` rows and each class is spread as evenly as it can be.  A few
    NumPy calls: scikit-learn's ``StratifiedKFold`` costs about a millisecond,
    more than a whole Ho–Kashyap fit on the paper's small data sets.
    """
    y = np.asarray(y)
    if y.shape[0] < n_splits:
        raise ValueError(f"cv={n_splits} folds need at least {n_splits} samples, got {y.shape[0]}")
    seed = random_state
    rng = seed if isinstance(seed, np.random.RandomState) else np.random.default_rng(seed)
    classes, index = np.unique(y, return_inverse=True)
    order = np.concatenate([rng.permutation(np.flatnonzero(index == c)) for c in range(classes.size)])
    fold = np.empty(y.shape[0], dtype=np.intp)
    fold[order] = np.arange(y.shape[0]) % n_splits
    return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(n_splits)]


def folds_without_zero_weight(folds, weights):
    """``folds`` (row indices of all rows) without the rows of weight 0, renumbered over the kept rows.

    The folds of a splitter or of index pairs describe the rows passed to
    ``fit``; the solvers see only the rows of positive weight (a row of
    weight 0 takes no part in a weighted criterion), so each fold loses
    those rows and the others take their index among the kept rows.
    """
    new_index = np.cumsum(weights > 0) - 1
    folds = [tuple(new_index[rows[weights[rows] > 0]] for rows in fold) for fold in folds]
    for train, validation in folds:
        if len(train) == 0 or len(validation) == 0:
            raise ValueError("every cross-validation fold needs training and validation samples of positive weight")
    return folds
