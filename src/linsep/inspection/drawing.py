"""What the displays and the animations share: matplotlib on demand, the drawn box, lines in it, one problem's trace."""

from __future__ import annotations

import numpy as np

__all__ = ["NO_TRACE_ADVICE", "binary_history", "problem_history"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("linsep's plots need matplotlib: pip install matplotlib "
                          "(or the bench extra)") from exc
    return plt


NO_TRACE_ADVICE = "fit it with record_history=True (or record_history=n for every n-th iteration)"
"""What to do about a fitted estimator without ``history_``: every in-memory fit with ``record_history``
truthy keeps one (one dict per problem), and so does every fit of array-API input; dask input refuses ``record_history``."""


def problem_history(estimator, history, index, parameter):
    """The trace dict of problem ``index`` of ``history`` (one dict, or one per class), or a clear ValueError."""
    if not isinstance(history, (list, tuple)):
        if index != 0:
            raise ValueError(f"{parameter}={index!r} applies to one-vs-rest fits only; "
                             f"{type(estimator).__name__} was fitted on two classes")
        return history
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool) or not 0 <= index < len(history):
        raise ValueError(f"{parameter}={index!r} is not a class index of this one-vs-rest fit "
                         f"(0 … {len(history) - 1} for the classes {np.asarray(getattr(estimator, 'classes_', [])).tolist()})")
    return history[index]


def _as_2d(X):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"these plots draw two-dimensional data; X has shape {X.shape}")
    return X


def _limits(X, pad=0.1):
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.c_[lo - pad * span, hi + pad * span]   # [[xmin, xmax], [ymin, ymax]]


def _line_points(w, b, limits, offset=0.0):
    """End points of ``{x : w·x + b = offset}`` inside ``limits`` (None if ``w = 0``)."""
    (x0, x1), (y0, y1) = limits
    if abs(w[1]) >= abs(w[0]):
        if w[1] == 0:
            return None
        xs = np.array([x0, x1])
        return xs, (offset - b - w[0] * xs) / w[1]
    ys = np.array([y0, y1])
    return (offset - b - w[1] * ys) / w[0], ys


def binary_history(estimator, class_index):
    """The ``history_`` dict of one binary problem (``class_index`` picks one of a one-vs-rest fit)."""
    history = getattr(estimator, "history_", None)
    if history is None:
        raise ValueError(f"{type(estimator).__name__} has no history_: {NO_TRACE_ADVICE}")
    if isinstance(history, (list, tuple)) and class_index is None:
        raise ValueError(f"{type(estimator).__name__} was fitted one-vs-rest on {len(history)} classes: "
                         f"pass class_index to choose one binary problem")
    return problem_history(estimator, history, 0 if class_index is None else class_index, "class_index")
