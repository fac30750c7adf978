"""Sample weights as scaled rows of ``Y``: the weighted criteria solved by the unweighted solvers.

A weighted least-squares criterion ``Σ_i s_i (y_iᵗa − b_i)²`` is the plain
criterion on the rows ``√s_i y_i`` and targets ``√s_i b_i``; a weighted
single-sample or batch correction ``a ← a + η s_i y_i`` is the plain one on
the rows ``s_i y_i``.  Scaling a row by a positive number changes no sign,
so ``Y W > 0`` (separation) and ``E <= 0`` (Gordan's proof) read the same
on both; a certificate ``ũ`` of the scaled rows is ``u = r ∘ ũ`` on the
original ones (``Ỹᵗũ = Yᵗ(r ∘ ũ)``).  Every weighted solve of linsep is
one of the unweighted solvers on :func:`scaled_labels`, so the unweighted
paths stay exactly as they are.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight

from linsep._core.signed_design import sign_normalized, signed_design
from linsep.designs.memory import as_design

__all__ = ["MAX_WEIGHT_RATIO", "WeightedValidation", "check_class_weight", "check_row_weights", "check_weight_range", "class_weight_table",
           "class_weights_of", "refuse_weights", "scaled_labels", "scaled_margin", "unscaled_margin",
           "validated_sample_weight", "validation_weight_factor", "weighted_signed_design"]

MAX_WEIGHT_RATIO = 1e12
"""Largest ratio of the largest to the smallest positive row weight a fit accepts.

Float64 carries about 16 significant digits.  A row weighted ``10¹⁶`` times
more than another makes the other's part of every weighted sum vanish in
rounding, and some solvers (the LSVM, Widrow–Hoff, kernel HK, the IRLS
variants) then stop on a criterion that no longer sees most rows: a
"converged" model that is useless.  ``10¹²`` leaves four digits for the
smallest rows; beyond it a fit is refused (give such rows weight 0, or
compress the weights, e.g. with a logarithm)."""


def check_class_weight(class_weight, owner, *, stream=False):
    """Refuse a ``class_weight`` whose weights are not finite non-negative numbers (one line naming it).

    The one validation of ``class_weight`` beyond its type (the estimators'
    parameter constraints): used by ``fit`` (in memory and on dask), by the
    validation weights of early stopping and by ``partial_fit``.  A negative
    weight would flip the rows of its class — the criterion would then
    reward misclassifying them —, so it is refused, as are ``nan``, ``inf``
    and non-numbers.  With ``stream`` (``partial_fit``) ``"balanced"`` is
    refused: it needs the class counts of the whole data, which a stream
    never sees (compute the weights, e.g. with
    :func:`sklearn.utils.class_weight.compute_class_weight`, and pass the
    dict).  ``owner`` names the estimator in the message.
    """
    if class_weight is None:
        return
    if isinstance(class_weight, str):
        if stream and class_weight == "balanced":
            raise ValueError(f"{owner}.partial_fit: class_weight='balanced' needs the class counts of the whole "
                             "data, which a stream never sees; pass a dict {label: weight} (e.g. from "
                             "sklearn.utils.class_weight.compute_class_weight on a sample of the stream)")
        return
    if isinstance(class_weight, dict):
        for label, weight in class_weight.items():
            ok = isinstance(weight, (Real, np.floating, np.integer)) and not isinstance(weight, (bool, np.bool_))
            if not ok or not np.isfinite(weight) or weight < 0:
                raise ValueError(f"{owner}: class_weight[{label!r}] = {weight!r}; every class_weight must be a "
                                 "finite number >= 0 (0 leaves the class's rows out)")


def class_weight_table(class_weight, classes, owner, y=None, *, stream=False):
    """The weight of each of ``classes`` under ``class_weight`` (validated by :func:`check_class_weight`).

    ``y``: the labels whose counts ``"balanced"`` uses (``N / (K n_k)``).
    A label of the dict that is not a class is refused, as scikit-learn does.
    """
    check_class_weight(class_weight, owner, stream=stream)
    classes = np.asarray(classes)
    if class_weight is None:
        return np.ones(classes.size)
    return compute_class_weight(class_weight, classes=classes, y=classes if y is None else y)


# scikit-learn 1.8 refuses all-zero weights in _check_sample_weight unless told not to (its
# allow_all_zero_weights); 1.6 and 1.7 have no such parameter and let them through.
_ALLOW_ALL_ZERO = ({"allow_all_zero_weights": True}
                   if "allow_all_zero_weights" in inspect.signature(_check_sample_weight).parameters else {})


def validated_sample_weight(sample_weight, X):
    """``sample_weight`` as a float64 copy of one finite non-negative weight per row of ``X``.

    scikit-learn's ``_check_sample_weight`` (its messages), all-zero weights
    let through on every supported scikit-learn: :func:`check_row_weights`
    refuses them with linsep's message.
    """
    return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True, copy=True,
                                **_ALLOW_ALL_ZERO)


def check_weight_range(s, owner):
    """Refuse row weights ``s`` whose largest-to-smallest positive ratio exceeds :data:`MAX_WEIGHT_RATIO`.

    ``s`` holds the non-negative finite weights of a fit (``sample_weight``
    times ``class_weight``'s), or is ``(smallest positive, largest)`` already
    reduced (a dask fit's block statistics).
    """
    if isinstance(s, tuple):
        smallest, largest = s
    else:
        positive = s[s > 0]
        if positive.size == 0:
            return
        smallest, largest = float(positive.min()), float(positive.max())
    if largest > MAX_WEIGHT_RATIO * smallest:
        raise ValueError(f"{owner}: the sample weights (times class_weight) span a ratio of {largest / smallest:.3g} "
                         f"from the smallest positive to the largest, beyond {MAX_WEIGHT_RATIO:.0e} that float64 "
                         "fits resolve (the small rows would be ignored silently); give such rows weight 0, or "
                         "compress the weights")


def check_row_weights(owner, *, finite, smallest, positive_range, positive_per_class):
    """The rules a fit's row weights (``sample_weight`` times ``class_weight``'s) meet, from their summary.

    Finite, non-negative, within :data:`MAX_WEIGHT_RATIO` from the smallest
    positive to the largest (``positive_range``), not all zero, and positive
    on at least two classes (``positive_per_class``: the rows of positive
    weight per class).  In memory the summary is taken over the array, on
    dask block by block (:func:`linsep.designs.dask_data.row_weights`): one
    rule, one message, on either.
    """
    if not finite:
        raise ValueError("sample weights must be finite")
    if smallest < 0:
        raise ValueError("Negative values in data passed to sample_weight")
    check_weight_range(positive_range, owner)
    if not np.any(positive_per_class):
        raise ValueError(f"{owner}: every sample weight is zero (after class_weight); nothing is left to fit")
    if np.count_nonzero(positive_per_class) < 2:
        raise ValueError(f"{owner} needs samples of at least 2 classes with a positive weight")


def refuse_weights(estimator, sample_weight, where):
    """Refuse ``sample_weight`` / ``class_weight`` where no weighted fit exists (``where``: the kind of input).

    Raises ``ValueError`` (one line) if either is set, so a weight is never
    silently ignored; the in-memory NumPy/SciPy fit takes both.
    """
    if sample_weight is not None or getattr(estimator, "class_weight", None) is not None:
        raise ValueError(f"{type(estimator).__name__} does not take sample_weight or class_weight with {where}; "
                         "fit NumPy or SciPy arrays to weigh the rows")


def weighted_signed_design(X, y, sample_weight, power, rows=None):
    """``Y`` with the rows ``s_i^power y_i (x_i, 1)``: :func:`~linsep._core.signed_design.signed_design` when unweighted.

    Weighted, ``Y`` is formed (one copy of the rows of ``X``): the
    :class:`~linsep._core.signed_design.SignedDesign` view takes its labels to be ``±1``
    (its Gram matrix leaves them out).
    """
    if sample_weight is None:
        return signed_design(X, y, rows)
    return sign_normalized(X if rows is None else X[rows], scaled_labels(y, sample_weight, power))


def scaled_margin(margin, sample_weight):
    """``√s ∘ b`` (``b`` = 1 for ``None``): the targets of the weighted least squares (``margin`` when unweighted)."""
    if sample_weight is None:
        return margin
    return np.sqrt(sample_weight) * (1.0 if margin is None else margin)


def unscaled_margin(result, sample_weight):
    """``result`` (a :class:`~linsep._core.result.SolveResult` or a margin vector) with its margin ``b̃ / √s``."""
    if sample_weight is None:
        return result
    if isinstance(result, np.ndarray):
        return result / np.sqrt(sample_weight)
    return replace(result, margin=None if result.margin is None else result.margin / np.sqrt(sample_weight))


def class_weights_of(class_weight, y_fit, labels):
    """The weight of each of ``labels`` under ``class_weight`` as computed on the training labels ``y_fit``.

    For a validation set given apart: ``"balanced"`` weighs its rows with the
    training classes' weights, as a held-out part of the training set would.
    """
    classes = np.unique(y_fit)
    weights = class_weight_table(class_weight, classes, "class_weight", y_fit)
    return weights[np.searchsorted(classes, labels)]


def scaled_labels(y, sample_weight, power):
    """``y ∘ s^power``: the labels whose signed design has the rows ``s_i^power y_i`` (``y`` when unweighted)."""
    if sample_weight is None:
        return y
    return y * (np.sqrt(sample_weight) if power == 0.5 else sample_weight ** power)


def validation_weight_factor(total, n_rows):
    """``n_rows / total``: the factor that makes validation weights summing to ``total`` sum to their ``n_rows``.

    Raises ``ValueError`` when every validation row has weight 0 (the validation error is then undefined).
    """
    total = float(total)
    if not total > 0:
        raise ValueError("every validation row has weight 0: the validation error is undefined")
    return n_rows / total


class WeightedValidation:
    """A validation design whose error count is weighted: :math:`\\sum_{i : (Y_{\\mathrm{val}} W)_i \\le 0} v_i`, normalised to :math:`N_{\\mathrm{val}}`.

    Early stopping (HKES, HKESA) keeps the iterate of least validation error;
    with weights, a misclassified validation row counts ``v_i / mean(v)``,
    so the recorded ``validation_error`` (the count over ``N_val``) is the
    weighted share of misclassified validation rows.  The compiled segment
    counts unweighted errors, so ``offers_compiled`` is false and the Python
    driver runs such fits.
    """

    offers_compiled = False
    ndim = 2

    def __init__(self, Y_val, weight):
        self.design = as_design(Y_val)
        self.shape = self.design.shape
        self._weight = np.asarray(weight, dtype=float) * validation_weight_factor(np.sum(weight), weight.shape[0])

    def hk_pass(self, *args, **kwargs):  # marks a design for as_design; a validation set is only counted
        raise TypeError("a weighted validation set is only counted, never iterated on")

    def count_nonpositive(self, W):
        scores = np.asarray(self.design.Y @ W)
        return (float(self._weight[scores <= 0].sum()), float(scores.min(initial=np.inf)),
                bool(np.isfinite(scores).all()))
