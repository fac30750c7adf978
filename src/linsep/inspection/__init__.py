"""Look inside a fitted estimator: the lecture-style table of its iterations.

Fit any iterative estimator with ``record_history=True`` (or an int ``n``
to keep every ``n``-th iterate) and :func:`trace_table` lays its trace out
as the lecture's worked examples do: one row per iteration ``k`` with the
weights ``a(k)``, the margin vector ``b(k)`` and error ``e(k)`` (Ho–Kashyap
and MSE-type rules), the corrected sample (single-sample rules), the
criterion, the training errors and the validation error where there is
one.  The trace format is documented in :ref:`trace-format`.

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

from linsep.inspection.drawing import NO_TRACE_ADVICE, problem_history
from linsep.inspection.trace_plots import __all__ as _plots, TraceDisplay, ValidationErrorDisplay, plot_trace, plot_validation_curve  # noqa: E501,F401
from linsep.inspection.separability_plot import SeparabilityDisplay, plot_separability  # noqa: F401
from linsep.inspection.cv_plot import CVSurfaceDisplay, plot_cv_surface  # noqa: F401
from linsep.inspection.animation import __all__ as _animation, animate_frames, animate_trace, frame_rows  # noqa: F401
from linsep.inspection.labels import resolve_label, trace_positive_class

__all__ = ["TraceTable", "trace_table", "get_trace", "positive_class_labels", "resolve_label", "trace_positive_class",
           *_plots, *_animation, "SeparabilityDisplay", "plot_separability", "CVSurfaceDisplay", "plot_cv_surface"]

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


# LaTeX headers of the table's columns (to_latex); other columns print their key.
_LATEX_HEADERS = {"k": "$k$", "a": r"$\mathbf{a}(k) = [w_0, \mathbf{w}]$", "a_last": r"$\mathbf{a}(k) = [\mathbf{w}, w_0]$",
                  "b": r"$\mathbf{b}(k)$", "e": r"$\mathbf{e}(k)$", "criterion": "$J$",
                  "training_errors": "errors", "dual_coef": r"$\alpha_i y_i$", "intercept": "$b$",
                  "sample": "sample", "pass": "pass", "validation_error": r"val.\ error", "margin": "margin",
                  "margin_upper_bound": "bound", "objective": "objective", "mistakes": "mistakes", "step": "step"}


def positive_class_labels(y, positive):
    """Labels ``+1`` for the class ``positive`` and ``-1`` for every other: the lecture's sign convention.

    A two-class fit takes ``classes_[1]`` (the larger label) as the positive
    side; fitting on these labels instead makes ``positive`` the ``+1`` class
    of the trace whatever the label order (``linsep trace --positive LABEL``).
    ``positive`` may be the label itself or its text (``"1"`` for the label 1).

    Parameters
    ----------
    y : array-like of shape (N,)
        Class labels.
    positive : object
        The label of the ``+1`` class (or its text).

    Returns
    -------
    ndarray of shape (N,)
        ``+1`` where ``y`` is ``positive``, ``-1`` elsewhere.

    See Also
    --------
    trace_table : The lecture's table of a traced fit.

    Examples
    --------
    >>> from linsep.inspection import positive_class_labels
    >>> positive_class_labels(["cat", "dog", "cat"], "cat").tolist()
    [1, -1, 1]
    """
    y = np.asarray(y)
    return np.where(y == resolve_label(y, positive), 1, -1)


def get_trace(estimator, problem=0):
    """The trace dict of a fitted estimator (``history_``; ``problem`` picks a one-vs-rest class).

    Raises a ValueError naming ``record_history`` when the fit recorded no trace.

    Parameters
    ----------
    estimator : fitted linsep estimator
        Fitted with ``record_history=True`` (or an int).
    problem : int, default=0
        For a one-vs-rest fit, the binary problem whose trace is returned.

    Returns
    -------
    dict of str to ndarray
        The trace (:ref:`trace-format`): ``"iteration"``, the vectors the
        algorithm has (``"weights"``, ``"margin_vector"``…) and its scalar traces.

    Raises
    ------
    ValueError
        When the fit recorded no trace (it names ``record_history``).

    See Also
    --------
    trace_table : The same trace laid out as the lecture's table.

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
    >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, y)
    >>> from linsep.inspection import get_trace
    >>> trace = get_trace(clf)
    >>> trace["weights"].shape                     # one row a(k) = [w, w0] per iteration
    (3, 3)
    >>> trace["iteration"]
    array([1, 2, 3])
    """
    check_is_fitted(estimator)
    history = getattr(estimator, "history_", None)
    if history is not None:
        history = problem_history(estimator, history, problem, "problem")
    if not history or "iteration" not in history:
        raise ValueError(f"{type(estimator).__name__} has no trace: {NO_TRACE_ADVICE}")
    return history


def _aligned(values, iterations, returned):
    """Entries of a scalar trace for the rows ``iterations`` (None where it has none).

    A scalar trace holds one entry per iteration and ends at the final one, so
    it is aligned by the end of the iterations' rows; one with exactly one entry
    per such row is taken as is.  A returned row (``returned``: the model is an
    earlier iterate, :ref:`trace-format`) takes the entry of its iteration.
    """
    values = np.asarray(values)
    steps = iterations[~returned]
    if values.shape[0] == steps.shape[0]:
        by_row = list(values)
    else:
        index = steps - (steps[-1] - (values.shape[0] - 1))
        by_row = [values[i] if 0 <= i < values.shape[0] else None for i in index]
    for k in iterations[returned]:
        same = np.flatnonzero(steps == k)
        if same.size:
            by_row.append(by_row[same[0]])
        else:  # a row the stride left out: the entry of iteration k itself
            i = k - (steps[-1] - (values.shape[0] - 1))
            by_row.append(values[i] if 0 <= i < values.shape[0] else None)
    return by_row


def _returned_note(estimator, problem=0):
    """What a trace's returned row is (:ref:`trace-format`): early stopping's k̂, or the pocket."""
    best = getattr(estimator, "best_iter_", None)
    if best is not None:
        return f"returned: best iterate k̂ = {int(np.ravel(best)[problem if np.ndim(best) else 0])} (early stopping)"
    return "returned: the pocket, the iterate of fewest training errors"


class TraceTable:
    """A printable table of a trace: ``str(table)``, :meth:`~TraceTable.to_records`, :meth:`~TraceTable.to_dataframe`.

    Attributes
    ----------
    columns : list of str
        The record keys, in order (``"k"``, ``"a"`` or ``"dual_coef"``,
        ``"intercept"``, ``"b"``, ``"e"``, ``"sample"``, then the scalar
        traces by their history key).
    headers : list of str
        Column titles of the printed table.

    Parameters
    ----------
    columns : list of str
        The record keys, in order.
    headers : list of str
        Column titles of the printed table.
    rows : list of tuple
        One tuple per recorded iteration, in the order of ``columns``.
    precision : int, default=4
        Significant digits of the printed numbers.
    max_entries : int, default=8
        Longest vector printed in full.
    zero_tol : float, default=1e-12
        Rounding noise printed as ``0``: a number whose magnitude is at most
        ``zero_tol`` times the largest magnitude of its row (all its vectors
        and numbers) prints as ``0`` (``4.441e-16`` beside entries of size 1).
        ``0`` prints every number as computed.  The records are not changed.

    See Also
    --------
    trace_table : Builds the table of a fitted estimator.

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
    >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, y)
    >>> from linsep.inspection import trace_table
    >>> table = trace_table(clf)
    >>> len(table), table.columns[:3]
    (3, ['k', 'a', 'b'])
    >>> [record["training_errors"] for record in table.to_records()]   # one dict per row
    [1, 1, 0]
    """

    def __init__(self, columns, headers, rows, precision=4, max_entries=8, zero_tol=1e-12):
        self.columns, self.headers, self._rows = columns, headers, rows
        self.precision, self.max_entries, self.zero_tol = precision, max_entries, zero_tol

    def __len__(self):
        return len(self._rows)

    def to_records(self):
        """One dict per row; vectors as tuples of floats, scalars as Python numbers (None if absent).

        Returns
        -------
        list of dict
            One dict per row, keyed by ``columns``.
        """
        return [dict(zip(self.columns, row)) for row in self._rows]

    def to_dataframe(self):
        """The records as a pandas DataFrame indexed by ``k`` (needs pandas).

        Returns
        -------
        pandas.DataFrame
            One row per recorded iteration, indexed by ``k``.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_dataframe needs pandas; use to_records() without it") from exc
        return pd.DataFrame.from_records(self.to_records(), columns=self.columns).set_index("k")

    def head(self, n):
        """The first ``n`` rows as a new table.

        Parameters
        ----------
        n : int
            Number of rows kept.

        Returns
        -------
        TraceTable
            The first ``n`` rows, printed with the same settings.
        """
        return TraceTable(self.columns, self.headers, self._rows[:n], self.precision, self.max_entries,
                          self.zero_tol)

    def _row_scale(self, row):
        """The largest magnitude among the floats of ``row`` (vectors included): the scale of its rounding noise."""
        scale = 0.0
        for value in row:
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if isinstance(v, (float, np.floating)) and np.isfinite(v):
                    scale = max(scale, abs(float(v)))
        return scale

    def _cell(self, value, floor=0.0, ellipsis="…"):
        if value is None:
            return ""
        if isinstance(value, tuple):
            shown = [self._cell(v, floor) for v in value[:self.max_entries]]
            if len(value) > self.max_entries:
                shown.append(f"{ellipsis} ({len(value)})")
            return "[" + ", ".join(shown) + "]"
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        if isinstance(value, str):  # the note of a returned row
            return value
        value = float(value)
        return "0" if value == 0 or abs(value) <= floor else f"{value:.{self.precision}g}"

    def _text_rows(self, ellipsis="…"):
        """The rows as printed: one list of cell texts per row (noise below ``zero_tol`` × the row's scale as 0)."""
        tol = float(self.zero_tol or 0.0)
        return [[self._cell(v, tol * self._row_scale(row), ellipsis) for v in row] for row in self._rows]

    def __str__(self):
        cells = [self.headers] + self._text_rows()
        widths = [max(len(line[j]) for line in cells) for j in range(len(self.headers))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in cells)

    def __repr__(self):
        return str(self)

    def kept_rows(self, first=None, every=None):
        """Indices of the rows :meth:`to_latex` keeps: the first ``first``, every ``every``-th, the last (all if neither).

        Parameters
        ----------
        first : int or None
            Keep the first ``first`` rows.
        every : int or None
            Keep every ``every``-th row (rows 0, ``every``, ``2 every``, …).

        Returns
        -------
        list of int
            The kept rows' indices, in order; the last row is always kept.
        """
        for name, value in (("first", first), ("every", every)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                      or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        n = len(self._rows)
        if first is None and every is None:
            return list(range(n))
        kept = set(range(min(first or 0, n))) | (set(range(0, n, every)) if every else set()) | {n - 1}
        return sorted(kept)

    def to_latex(self, *, first=None, every=None, longtable=False):
        """The table as a LaTeX ``tabular`` for slides and handouts (numbers as printed; vectors in math mode).

        Needs no LaTeX package beyond the standard ones (``\\mathbf``) and,
        with ``longtable``, the ``longtable`` package; one line per row,
        ``\\hline`` under the headers.

        Parameters
        ----------
        first : int or None, default=None
            Keep the first ``first`` rows.
        every : int or None, default=None
            Keep every ``every``-th row (rows ``0, every, 2·every, …``).
            With ``first`` and/or ``every`` the last row (the final iterate)
            is always kept, and a line of ``\\vdots`` marks each gap; with
            neither, every row is kept.
        longtable : bool, default=False
            A ``longtable`` (breaks across pages, headers repeated) instead of a
            ``tabular``: for a full run too long for one page or slide.

        Returns
        -------
        str
            ``\\begin{tabular}{…} … \\end{tabular}`` (or ``longtable``) and a final newline.

        Examples
        --------
        >>> from linsep import HoKashyapClassifier
        >>> from linsep.inspection import trace_table
        >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
        >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, y)
        >>> print(trace_table(clf, precision=3).head(1).to_latex(), end="")
        \\begin{tabular}{rlllrr}
        \\hline
        $k$ & $\\mathbf{a}(k) = [w_0, \\mathbf{w}]$ & $\\mathbf{b}(k)$ & $\\mathbf{e}(k)$ & $J$ & errors \\\\
        \\hline
        1 & $[3.22, 0.153, -0.438]$ & $[1, 1, 1, 1]$ & $[-0.803, -0.0803, -1.04, 0.161]$ & 1.77 & 1 \\\\
        \\hline
        \\end{tabular}
        """
        def header(column, text):
            if column == "a" and text.endswith("[w, w0]"):
                column = "a_last"
            return _LATEX_HEADERS.get(column, text.replace("_", r"\_"))

        kept = set(self.kept_rows(first, every))
        align = "".join("l" if self._rows and (isinstance(self._rows[0][j], tuple) or self.columns[j] == "note")
                        else "r" for j in range(len(self.columns)))
        environment = "longtable" if longtable else "tabular"
        head = [r"\hline", " & ".join(header(c, h) for c, h in zip(self.columns, self.headers)) + r" \\", r"\hline"]
        lines = [rf"\begin{{{environment}}}{{{align}}}"] + head
        if longtable:
            lines += [r"\endhead"]
        previous = -1
        for i, (row, texts) in enumerate(zip(self._rows, self._text_rows(ellipsis=r"\ldots"))):
            if i not in kept:
                continue
            if i != previous + 1:  # rows left out
                lines.append(rf"\multicolumn{{{len(self.columns)}}}{{c}}{{$\vdots$}} \\")
            previous = i
            cells = [t.replace("k̂", r"$\hat{k}$") if isinstance(v, str) else f"${t}$" if isinstance(v, tuple)
                     or t.startswith("-") else t for v, t in zip(row, texts)]
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\hline", rf"\end{{{environment}}}"]
        return "\n".join(lines) + "\n"

    def to_html(self):
        """The table as an HTML ``<table>`` (numbers as printed), what notebooks show.

        Returns
        -------
        str
            ``<table class="linsep-trace">`` with a header row and one row per iteration.
        """
        from html import escape

        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(f"<td>{escape(t)}</td>" for t in texts) + "</tr>"
                       for texts in self._text_rows())
        return (f'<table class="linsep-trace"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    def _repr_html_(self):
        return self.to_html()


def trace_table(estimator, *, problem=0, bias_first=True, precision=4, max_entries=8, pos_label=None,
                first_sample=0, zero_tol=1e-12):
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
    pos_label : label or None, default=None
        The class whose side ``a(k)`` calls positive.  ``None``: the
        convention the fit ran in (the estimator's ``pos_label``, else
        ``classes_[1]``; :func:`trace_positive_class`).  The other class of a
        two-class fit shows the same run with ``a(k)`` (and the dual
        coefficients and intercept of kernel rules) negated, as
        scikit-learn's displays negate ``decision_function`` for
        ``pos_label=classes_[0]``; ``b(k)``, ``e(k)``, ``J`` and the error
        counts do not depend on the sign.  A run from given starting weights
        depends on its convention: to *run* it in the lecture's, fit with the
        estimator's ``pos_label`` (:ref:`pos-label`).
    first_sample : {0, 1}, default=0
        Number of the first sample in the ``sample`` column (``1``: the
        lecture's ``y_1 … y_N``); the records follow it.
    zero_tol : float, default=1e-12
        Printed numbers at most ``zero_tol`` times the largest magnitude of
        their row show as ``0`` (rounding noise such as ``4.441e-16``);
        ``0`` keeps them.  The records keep full precision.

    Returns
    -------
    TraceTable
        Rows ``k`` as recorded (see :ref:`trace-format` for the iteration
        numbering of each algorithm; with ``record_history="updates"`` one
        row per update of a single-sample rule, with its ``sample`` and
        ``pass``); scalar traces (``criterion`` as ``J``,
        ``training_errors``, ``mistakes``, ``validation_error``, SK's
        ``margin``/``margin_upper_bound``, LSVM's ``objective``) are matched to
        the rows by iteration number.

    See Also
    --------
    get_trace : The trace dict itself.
    plot_trace : The same trace drawn (two-feature data).

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> from linsep.inspection import trace_table
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
    >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True)
    >>> clf = clf.fit(X, y, coef_init=[1, 1], intercept_init=1)
    >>> print(trace_table(clf, precision=3).head(2))
    k  a(k) = [w0, w]       b(k)              e(k)                         J    errors
    1  [1, 1, 1]            [1, 1, 1, 1]      [15, 12, -16, -12]           769  2
    2  [34.6, 2.68, -3.79]  [28, 22.6, 1, 1]  [-11.4, -1.14, -14.9, 2.29]  359  1
    """
    trace = get_trace(estimator, problem)
    if first_sample not in (0, 1) or isinstance(first_sample, bool):
        raise ValueError(f"first_sample must be 0 or 1, got {first_sample!r}")
    sign = _display_sign(estimator, problem, pos_label)
    iterations = np.asarray(trace["iteration"])
    returned = np.asarray(trace.get("returned", np.zeros(iterations.shape[0], dtype=bool)), dtype=bool)
    columns, headers, data = ["k"], ["k"], [[int(k)] for k in iterations]

    def add(key, header, values):
        columns.append(key)
        headers.append(header)
        for row, value in zip(data, values):
            row.append(value)

    def vectors(array):
        return [tuple(float(v) for v in row) for row in np.asarray(array)]

    if "weights" in trace:
        W = sign * np.asarray(trace["weights"])
        if bias_first:
            W = np.c_[W[:, -1], W[:, :-1]]
        add("a", "a(k) = [w0, w]" if bias_first else "a(k) = [w, w0]", vectors(W))
    if "dual_coef" in trace:
        add("dual_coef", "dual coef", vectors(sign * np.asarray(trace["dual_coef"])))
        add("intercept", "intercept", [float(sign * v) for v in trace["intercept"]])
    if "margin_vector" in trace:
        add("b", "b(k)", vectors(trace["margin_vector"]))
    if "error_vector" in trace:
        add("e", "e(k)", vectors(trace["error_vector"]))
    if "sample" in trace:
        add("sample", "sample", [None if s < 0 else int(s) + first_sample for s in trace["sample"]])
    if "pass" in trace:  # an update-level trace: its per-pass scalars do not match the rows
        add("pass", "pass", [int(p) for p in trace["pass"]])
    for key, header in _SCALAR_COLUMNS.items():
        if key in trace and "pass" not in trace:
            values = _aligned(trace[key], iterations, returned)
            add(key, header, [None if v is None else v.item() if hasattr(v, "item") else v for v in values])
    if returned.any():  # the last row is the returned model, an earlier iterate: say so
        add("note", "note", [_returned_note(estimator, problem) if r else None for r in returned])
    return TraceTable(columns, headers, [tuple(row) for row in data], precision, max_entries, zero_tol)


def _display_sign(estimator, problem, pos_label):
    """``1`` to show the trace as recorded, ``-1`` to show it with ``pos_label``'s side positive instead."""
    if pos_label is None:
        return 1.0
    classes = np.asarray(estimator.classes_)
    recorded = trace_positive_class(estimator, problem)
    label = resolve_label(classes, pos_label)
    if label == recorded:
        return 1.0
    if classes.size != 2:
        raise ValueError(f"pos_label={pos_label!r}: problem {problem} of this one-vs-rest fit has "
                         f"{recorded!r} as its positive class; the rest is not one label")
    return -1.0
