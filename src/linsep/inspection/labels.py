"""Which class a trace calls positive, and a label named on the command line or in a notebook.

A two-class fit runs its solver with one class as ``+1``: ``pos_label`` when
the estimator has one set, else ``classes_[1]`` (scikit-learn's order).  The
tables, plots and animations of :mod:`linsep.inspection` read it here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["resolve_label", "trace_positive_class"]


def resolve_label(labels, label):
    """The value among ``labels`` that ``label`` names: the label itself, or its text (``"1"`` for the label 1).

    Parameters
    ----------
    labels : array-like
        Class labels (``y`` or ``classes_``).
    label : object
        A label, or its text as typed on a command line.

    Returns
    -------
    object
        The matching label as a Python scalar (``int``, ``float``, ``str``…).

    Raises
    ------
    ValueError
        When no label matches.

    See Also
    --------
    positive_class_labels : ``±1`` labels with the named class as ``+1``.

    Examples
    --------
    >>> from linsep.inspection import resolve_label
    >>> resolve_label([1, 1, 2, 2], "1")
    1
    """
    values = np.unique(np.asarray(labels)).tolist()
    for value in values:
        if value == label and isinstance(value, str) == isinstance(label, str):
            return value
    for value in values:
        if str(value) == str(label):
            return value
    raise ValueError(f"{label!r} is not a label of y (the labels: {values})")


def trace_positive_class(estimator, problem=0):
    """The class that is ``+1`` in the traces of a fitted estimator (its solver's sign convention).

    Two classes: the estimator's ``pos_label`` when set, else ``classes_[1]``.
    One-vs-rest: ``classes_[problem]``.

    Parameters
    ----------
    estimator : fitted linsep estimator
        A fitted classifier (``classes_``; ``pos_label`` where it has one).
    problem : int, default=0
        For a one-vs-rest fit, the binary problem.

    Returns
    -------
    object
        A label of ``classes_`` (a Python scalar).

    See Also
    --------
    trace_table : Shows the trace in this convention, or in the other one (``pos_label``).

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> from linsep.inspection import trace_positive_class
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, 2, 2]
    >>> trace_positive_class(HoKashyapClassifier().fit(X, y)), trace_positive_class(HoKashyapClassifier(pos_label=1).fit(X, y))
    (2, 1)
    """
    classes = np.asarray(estimator.classes_)
    if classes.size > 2:
        return classes.tolist()[problem]
    pos_label = getattr(estimator, "pos_label", None)
    return classes.tolist()[1] if pos_label is None else resolve_label(classes, pos_label)
