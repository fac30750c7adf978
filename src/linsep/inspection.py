"""Look inside a fitted estimator: the lecture-style table of its iterations.

Fit any iterative estimator with ``record_history=True`` (or an int ``n``
to keep every ``n``-th iterate) and :func:`trace_table` lays its trace out
as the lecture's worked examples do: one row per iteration ``k`` with the
weights ``a(k)``, the margin vector ``b(k)`` and error ``e(k)`` (Ho–Kashyap
and MSE-type rules), the corrected sample (single-sample rules), the
criterion, the training errors and the validation error where there is
one.  The trace format is documented in :mod:`linsep._trace`.

>>> import numpy as np
>>> from linsep import HoKashyapClassifier
>>> from linsep.inspection import trace_table
>>> X, y = np.array([[6, 9], [5, 7], [5, 9], [0, 10]]), np.array([1, 1, -1, -1])
>>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True)
>>> clf = clf.fit(X, y, coef_init=[1, 1], intercept_init=1)
>>> table = trace_table(clf, precision=3)
>>> table.to_records()[1]["b"]
(28.0, 22.6, 1.0, 1.0)
>>> print(table.head(2))
k  a(k) = [w0, w]       b(k)              e(k)                         J    errors
1  [1, 1, 1]            [1, 1, 1, 1]      [15, 12, -16, -12]           769  2
2  [34.6, 2.68, -3.79]  [28, 22.6, 1, 1]  [-11.4, -1.14, -14.9, 2.29]  359  1

Plotting is optional (matplotlib) and never needed by the table: the
displays :class:`TraceDisplay` (:func:`plot_trace`, the hyperplane at
selected iterations beside the criterion and error curves),
:class:`ValidationErrorDisplay` (:func:`plot_validation_curve`, HKES's
Fig. 1) and :class:`SeparabilityDisplay` (:func:`plot_separability`) import
it when they draw.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._plotting import __all__ as _plots, SeparabilityDisplay, TraceDisplay, ValidationErrorDisplay, plot_separability, plot_trace, plot_validation_curve  # noqa: E501,F401
from ._plotting import CVSurfaceDisplay, plot_cv_surface  # noqa: F401

__all__ = ["TraceTable", "trace_table", "get_trace", *_plots]

# Scalar history keys shown as columns, with their headers, in this order.
_SCALAR_COLUMNS = {
    "criterion": "J",
    "objective": "objective",
    "training_errors": "errors",
    "mistakes": "mistakes",
    "validation_error": "val. error",
    "margin": "margin",
    "margin_upper_bound": "bound",
    "step": "step",
}


def get_trace(estimator, problem=0):
    """The trace dict of a fitted estimator (``history_``; ``problem`` picks a one-vs-rest class).

    Raises a ValueError naming ``record_history`` when the fit recorded no trace.
    """
    check_is_fitted(estimator)
    history = getattr(estimator, "history_", None)
    if isinstance(history, list):
        history = history[problem]
    if not history or "iteration" not in history:
        raise ValueError(f"{type(estimator).__name__} has no trace: fit it with record_history=True "
                         "(or record_history=n for every n-th iteration)")
    return history


def _aligned(values, iterations, n_rows):
    """Entries of a scalar trace for the rows ``iterations`` (None where it has none).

    A scalar trace holds one entry per iteration and ends at the final one, so
    it is aligned by its end; one with exactly one entry per row is taken as is.
    """
    values = np.asarray(values)
    if values.shape[0] == n_rows:
        return list(values)
    index = iterations - (iterations[-1] - (values.shape[0] - 1))
    return [values[i] if 0 <= i < values.shape[0] else None for i in index]


class TraceTable:
    """A printable table of a trace: ``str(table)``, :meth:`to_records`, :meth:`to_dataframe`.

    Attributes
    ----------
    columns : list of str
        The record keys, in order (``"k"``, ``"a"`` or ``"dual_coef"``,
        ``"intercept"``, ``"b"``, ``"e"``, ``"sample"``, then the scalar
        traces by their history key).
    headers : list of str
        Column titles of the printed table.
    """

    def __init__(self, columns, headers, rows, precision=4, max_entries=8):
        self.columns, self.headers, self._rows = columns, headers, rows
        self.precision, self.max_entries = precision, max_entries

    def __len__(self):
        return len(self._rows)

    def to_records(self):
        """One dict per row; vectors as tuples of floats, scalars as Python numbers (None if absent)."""
        return [dict(zip(self.columns, row)) for row in self._rows]

    def to_dataframe(self):
        """The records as a pandas DataFrame indexed by ``k`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_dataframe needs pandas; use to_records() without it") from exc
        return pd.DataFrame.from_records(self.to_records(), columns=self.columns).set_index("k")

    def head(self, n):
        """The first ``n`` rows as a new table."""
        return TraceTable(self.columns, self.headers, self._rows[:n], self.precision, self.max_entries)

    def _cell(self, value):
        if value is None:
            return ""
        if isinstance(value, tuple):
            shown = [self._cell(v) for v in value[:self.max_entries]]
            if len(value) > self.max_entries:
                shown.append(f"… ({len(value)})")
            return "[" + ", ".join(shown) + "]"
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        value = float(value)
        return "0" if value == 0 else f"{value:.{self.precision}g}"

    def __str__(self):
        cells = [self.headers] + [[self._cell(v) for v in row] for row in self._rows]
        widths = [max(len(line[j]) for line in cells) for j in range(len(self.headers))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in cells)

    def __repr__(self):
        return str(self)


def trace_table(estimator, *, problem=0, bias_first=True, precision=4, max_entries=8):
    """The lecture-style table of a fitted estimator's trace.

    Parameters
    ----------
    estimator : fitted linsep estimator
        Fitted with ``record_history`` truthy.
    problem : int, default=0
        For one-vs-rest fits, the class whose binary problem is shown.
    bias_first : bool, default=True
        Show ``a(k)`` as the lecture writes it, ``[w0, w1, …, wd]`` (the
        trace itself keeps the bias last, ``[w, w0]``).  The records follow
        the same order.
    precision : int, default=4
        Significant digits of the printed numbers (records keep full precision).
    max_entries : int, default=8
        Longest vector printed in full (longer ones end with ``…``).

    Returns
    -------
    TraceTable
        Rows ``k`` as recorded (see :mod:`linsep._trace` for the iteration
        numbering of each algorithm); scalar traces (``criterion`` as ``J``,
        ``training_errors``, ``mistakes``, ``validation_error``, SK's
        ``margin``/``margin_upper_bound``, LSVM's ``objective``) are matched to
        the rows by iteration number.
    """
    trace = get_trace(estimator, problem)
    iterations = np.asarray(trace["iteration"])
    n_rows = iterations.shape[0]
    columns, headers, data = ["k"], ["k"], [[int(k)] for k in iterations]

    def add(key, header, values):
        columns.append(key)
        headers.append(header)
        for row, value in zip(data, values):
            row.append(value)

    def vectors(array):
        return [tuple(float(v) for v in row) for row in np.asarray(array)]

    if "weights" in trace:
        W = np.asarray(trace["weights"])
        if bias_first:
            W = np.c_[W[:, -1], W[:, :-1]]
        add("a", "a(k) = [w0, w]" if bias_first else "a(k) = [w, w0]", vectors(W))
    if "dual_coef" in trace:
        add("dual_coef", "dual coef", vectors(trace["dual_coef"]))
        add("intercept", "intercept", [float(v) for v in trace["intercept"]])
    if "margin_vector" in trace:
        add("b", "b(k)", vectors(trace["margin_vector"]))
    if "error_vector" in trace:
        add("e", "e(k)", vectors(trace["error_vector"]))
    if "sample" in trace:
        add("sample", "sample", [None if s < 0 else int(s) for s in trace["sample"]])
    for key, header in _SCALAR_COLUMNS.items():
        if key in trace:
            values = _aligned(trace[key], iterations, n_rows)
            add(key, header, [None if v is None else v.item() if hasattr(v, "item") else v for v in values])
    return TraceTable(columns, headers, [tuple(row) for row in data], precision, max_entries)
