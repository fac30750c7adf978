"""Matplotlib displays of fits, traces and separability verdicts.

The displays (here, and in ``linsep.inspection.separability_plot`` and ``linsep.inspection.cv_plot``) follow scikit-learn's ``*Display`` conventions: a
constructor that stores what is drawn, a ``from_estimator`` /
``from_verdict`` class method that computes it, and ``plot(ax=...)`` that
draws it and keeps the matplotlib objects (``figure_``, ``ax_`` and the
artists).  None of them calls ``plt.show()``.  Matplotlib is imported only
when something is drawn, so ``import linsep`` never needs it.

They read the per-iteration traces of ``history_`` (keys ``"iteration"``,
``"weights"``, the scalar curves such as ``"criterion"``,
``"training_errors"``, ``"mistakes"``, ``"validation_error"``) and the
certificates of :func:`linsep.check_separability`.
"""

from __future__ import annotations

import numpy as np

from linsep.inspection.drawing import _as_2d, _limits, _line_points, _pyplot, binary_history

__all__ = ["TraceDisplay", "ValidationErrorDisplay", "plot_trace", "plot_validation_curve"]

# Scalar traces drawn beside the data: quantities minimised (or bounds), then counts of errors.
_CRITERION_KEYS = ("criterion", "objective", "margin", "margin_upper_bound")
_ERROR_KEYS = ("training_errors", "mistakes")   # counts; the validation error has its own display


def _figure_and_axes(ax, figsize):
    """``(figure, ax)``: a new single-panel figure when ``ax`` is None."""
    if ax is None:
        return _pyplot().subplots(figsize=figsize)
    return ax.figure, ax


def _iterations_of(history, n_rows):
    """Iteration numbers of ``n_rows`` entries of a history key.

    Trace rows carry their numbers in ``history["iteration"]``.  A scalar
    curve holds one entry per iteration and ends at the final one (the last
    row that is not a returned one), so it is aligned by its end; without a trace its entries are iterations
    ``1 … n_rows`` (``validation_error[k - 1]`` belongs to iterate ``k``).
    """
    it = history.get("iteration")
    if it is not None and len(it) == n_rows:
        return np.asarray(it)
    if it is not None and "returned" in history:  # a returned row (an earlier iterate) is not the final one
        it = np.asarray(it)[~np.asarray(history["returned"], dtype=bool)]
    last = int(it[-1]) if it is not None and len(it) else n_rows
    return last - n_rows + 1 + np.arange(n_rows)


def _crosses(pts, limits):
    """Whether the segment ``pts`` (from :func:`_line_points`) passes through the box ``limits``."""
    (x0, x1), (y0, y1) = limits
    xs, ys = pts
    return min(xs) <= x1 and max(xs) >= x0 and min(ys) <= y1 and max(ys) >= y0


def _scatter_classes(ax, X, y, classes=None, **kwargs):
    """Scatter the two (or more) classes with one marker each; returns the artists."""
    y = np.asarray(y)
    classes = np.unique(y) if classes is None else classes
    markers = "os^vD<>p*h"
    artists = []
    for i, c in enumerate(classes):
        sel = y == c
        artists.append(ax.scatter(X[sel, 0], X[sel, 1], marker=markers[i % len(markers)], s=30,
                                  color=f"C{i}", edgecolor="k", linewidth=0.5, label=f"class {c}", zorder=3,
                                  **kwargs))
    return artists


def _default_rows(n_rows, n_lines):
    """Rows to draw: the first, the last and up to ``n_lines - 2`` between, spaced geometrically.

    Geometric spacing shows the early iterations, where the hyperplane moves most.
    """
    if n_rows <= n_lines:
        return np.arange(n_rows)
    inner = np.geomspace(1, n_rows - 1, n_lines - 1)
    return np.unique(np.r_[0, np.round(inner).astype(int)])


class TraceDisplay:
    """Hyperplanes of a two-dimensional fit at selected iterations, with its traced curves beside them.

    The lecture's pictures: the data, the line ``w·x + w_0 = 0`` of the
    iterate ``a(k) = (w, w_0)`` at a few iterations ``k`` (lighter for
    earlier ones), the final line in black, and the criterion and error
    counts recorded in ``history_`` against ``k``.  Build it with
    :meth:`from_estimator` or :func:`plot_trace`.

    Parameters
    ----------
    weights : ndarray of shape (n_lines, 3)
        Augmented iterates ``(w_1, w_2, w_0)`` to draw, bias last.
    iterations : ndarray of shape (n_lines,)
        Iteration number of each row of ``weights``.
    X : ndarray of shape (N, 2)
        The data.
    y : ndarray of shape (N,)
        Their labels.
    curves : dict of str to tuple of (ndarray, ndarray)
        Scalar traces to draw beside the data, as ``name: (iterations, values)``.
    final : ndarray of shape (3,) or None, default=None
        The fitted ``(coef_, intercept_)``, drawn in black.
    title : str or None, default=None
        Title of the data panel.

    Attributes
    ----------
    figure_ : matplotlib Figure
    ax_ : ndarray of matplotlib Axes
        The data panel first, then one panel for the criteria and one for
        the error counts (those that were recorded).
    lines_ : list of matplotlib Line2D
        One line per drawn iterate.

    See Also
    --------
    plot_trace : Build and draw it from a traced estimator.
    linsep.inspection.trace_table : The same trace as a table.

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
    >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, y)
    >>> from linsep.inspection import TraceDisplay
    >>> display = TraceDisplay.from_estimator(clf, X, y, n_lines=4)
    >>> len(display.lines_)
    4
    """

    def __init__(self, *, weights, iterations, X, y, curves, final=None, title=None):
        self.weights = np.asarray(weights, dtype=float)
        self.iterations = np.asarray(iterations)
        self.X = _as_2d(X)
        self.y = np.asarray(y)
        self.curves = dict(curves)
        self.final = None if final is None else np.asarray(final, dtype=float)
        self.title = title

    @classmethod
    def from_estimator(cls, estimator, X, y, *, iterations=None, n_lines=6, class_index=None, ax=None):
        """Read the trace of a fitted estimator and draw it.

        Parameters
        ----------
        estimator : fitted linsep estimator
            Fitted with ``record_history`` on two-dimensional data; its
            ``history_`` must hold ``"weights"`` (primal models).
        X : array-like of shape (N, 2)
            The data to draw (usually the training data).
        y : array-like of shape (N,)
            Their labels.
        iterations : sequence of int or None, default=None
            Iteration numbers ``k`` whose hyperplanes are drawn (those that
            were recorded); ``None`` picks ``n_lines`` of them, the first and
            the last included.
        n_lines : int, default=6
            Number of hyperplanes drawn when ``iterations`` is ``None``.
        class_index : int or None, default=None
            For a one-vs-rest fit, the binary problem to draw.
        ax : sequence of matplotlib Axes or None, default=None
            Where to draw (see :meth:`plot`).

        Returns
        -------
        TraceDisplay
        """
        history = binary_history(estimator, class_index)
        X = _as_2d(X)
        if len(np.asarray(y)) != len(X):
            raise ValueError(f"X has {len(X)} rows and y {len(np.asarray(y))} labels")
        if "weights" not in history:
            raise ValueError(f"history_ of {type(estimator).__name__} has no 'weights': plot_trace draws the "
                             f"hyperplanes of primal models fitted with record_history=True")
        W = np.asarray(history["weights"], dtype=float)
        if W.ndim != 2 or W.shape[1] != 3:
            raise ValueError(f"plot_trace draws two-dimensional data; the traced weights have shape {W.shape}")
        ks = _iterations_of(history, len(W))
        if iterations is None:
            rows = _default_rows(len(W), n_lines)
        else:
            wanted = np.atleast_1d(np.asarray(iterations))
            if wanted.size == 0 or wanted.dtype.kind not in "iu":
                raise ValueError(f"iterations must be a non-empty list of recorded iteration numbers "
                                 f"(recorded: {ks[0]} … {ks[-1]}), got {list(np.ravel(iterations))!r}")
            missing = np.setdiff1d(wanted, ks)
            if missing.size:
                raise ValueError(f"iterations {missing.tolist()} were not recorded "
                                 f"(recorded: {ks[0]} … {ks[-1]}, {len(ks)} rows)")
            rows = np.array([int(np.flatnonzero(ks == k)[0]) for k in wanted])
        curves = {}
        for key in _CRITERION_KEYS + _ERROR_KEYS:
            if key in history and np.ndim(history[key]) == 1 and len(history[key]):
                values = np.asarray(history[key], dtype=float)
                curves[key] = (_iterations_of(history, len(values)), values)
        final = None
        coef = getattr(estimator, "coef_", None)
        if coef is not None:
            c = 0 if class_index is None else class_index
            final = np.r_[np.asarray(coef)[c], np.ravel(estimator.intercept_)[c]]
        name = type(estimator).__name__
        title = name if class_index is None else f"{name}, class {estimator.classes_[class_index]} vs rest"
        display = cls(weights=W[rows], iterations=ks[rows], X=X, y=y, curves=curves, final=final, title=title)
        display._source = (estimator, class_index)  # what animate() replays
        return display.plot(ax=ax)

    def animate(self, *, max_frames=40, interval=250, hold=4, pos_label=None, ax=None):
        """The iterations of the display's estimator as an animation (:func:`linsep.inspection.animate_trace`).

        Every recorded row is a candidate frame (not only the lines drawn);
        the points are the display's ``X`` and ``y``.  Only for a display made
        by :meth:`from_estimator` or :func:`plot_trace`.

        Parameters
        ----------
        max_frames : int, default=40
            Most rows shown (evenly spaced, first and last kept).
        interval : float, default=250
            Milliseconds between frames.
        hold : int, default=4
            Extra frames on the last row.
        pos_label : label or None, default=None
            The class shaded as the positive side (default: the fit's).
        ax : matplotlib Axes or None, default=None
            Where to draw; ``None``: a new figure.

        Returns
        -------
        TraceAnimation
            A matplotlib ``FuncAnimation``: ``write("out.gif")``, or shown by a notebook.

        Examples
        --------
        >>> from linsep import HoKashyapClassifier
        >>> from linsep.inspection import plot_trace
        >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
        >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, y)
        >>> anim = plot_trace(clf, X, y).animate()
        >>> anim.iterations_
        [1, 2, 3]
        """
        source = getattr(self, "_source", None)
        if source is None:
            raise ValueError("animate() replays the estimator of a display made by TraceDisplay.from_estimator "
                             "or plot_trace; use linsep.inspection.animate_trace(estimator, X, y)")
        from linsep.inspection.animation import animate_trace

        estimator, class_index = source
        return animate_trace(estimator, self.X, self.y, max_frames=max_frames, interval=interval, hold=hold,
                             class_index=class_index, pos_label=pos_label, ax=ax)

    def plot(self, ax=None, *, cmap="viridis"):
        """Draw the data, the hyperplanes and the curves.

        Parameters
        ----------
        ax : sequence of matplotlib Axes or None, default=None
            One Axes per panel (data, then criteria and error counts when
            recorded); ``None`` creates a figure with the panels side by side.
        cmap : str, default="viridis"
            Colour map of the iterates, early to late.

        Returns
        -------
        TraceDisplay
            ``self``, with ``figure_``, ``ax_`` and ``lines_`` set.
        """
        plt = _pyplot()
        groups = [g for g in (_CRITERION_KEYS, _ERROR_KEYS) if any(k in self.curves for k in g)]
        n_panels = 1 + len(groups)
        if ax is None:
            fig, axes = plt.subplots(1, n_panels, figsize=(4.2 * n_panels, 4.4), squeeze=False)
            axes = axes[0]
        else:
            axes = np.atleast_1d(np.asarray(ax, dtype=object))
            if len(axes) < n_panels:
                raise ValueError(f"this trace needs {n_panels} axes (data, then "
                                 f"{' and '.join(g[0] for g in groups) or 'nothing'} curves); got {len(axes)}")
            fig = axes[0].figure
        data_ax = axes[0]
        limits = _limits(self.X)
        _scatter_classes(data_ax, self.X, self.y)
        colors = plt.get_cmap(cmap)(np.linspace(0.15, 0.9, max(len(self.weights), 1)))
        self.lines_ = []
        for a, k, color in zip(self.weights, self.iterations, colors):
            pts = _line_points(a[:2], a[2], limits)
            if pts is not None:
                label = f"k = {k}" + ("" if _crosses(pts, limits) else " (out of view)")
                self.lines_ += data_ax.plot(*pts, color=color, lw=1.3, label=label)
        if self.final is not None:
            pts = _line_points(self.final[:2], self.final[2], limits)
            if pts is not None:
                self.lines_ += data_ax.plot(*pts, color="k", lw=2, ls="--", label="fitted")
        data_ax.set_xlim(limits[0])
        data_ax.set_ylim(limits[1])
        data_ax.set_xlabel("$x_1$")
        data_ax.set_ylabel("$x_2$")
        # Below the panel: over the data it would hide the lines it names.
        data_ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
        if self.title:
            data_ax.set_title(self.title, fontsize=10)
        from matplotlib.ticker import MaxNLocator

        for group, curve_ax in zip(groups, axes[1:]):
            for key in group:
                if key in self.curves:
                    ks, values = self.curves[key]
                    curve_ax.plot(ks, values, lw=1.2, label=key.replace("_", " "))
            if group is _CRITERION_KEYS:
                positive = all(np.all(self.curves[k][1] > 0) for k in group if k in self.curves)
                if positive:
                    curve_ax.set_yscale("log")
                curve_ax.set_title("criterion", fontsize=10)
            else:
                curve_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
                curve_ax.set_title("errors", fontsize=10)
            curve_ax.set_xlabel("iteration k")
            curve_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            curve_ax.legend(fontsize=7)
        fig.tight_layout()
        self.figure_, self.ax_ = fig, np.asarray(axes[:n_panels], dtype=object)
        return self


class ValidationErrorDisplay:
    """Validation error of an early-stopping fit against the iteration (Lauer & Bloch 2006, Fig. 1).

    HKES / HKESA record the validation error ``GE_k`` at every iteration and
    keep the weights of its first minimum ``k̂`` (``best_iter_``); this draws
    ``GE_k`` in %, marks ``k̂`` and, when recorded, the training errors.

    Parameters
    ----------
    validation_error : ndarray of shape (n_rec,)
        Validation error (a fraction) of each recorded iterate.
    iterations : ndarray of shape (n_rec,)
        Their iteration numbers.
    best_iter : int or None, default=None
        The iterate kept.
    training_error : ndarray of shape (n_rec,) or None, default=None
        Training error (a fraction) of the same iterates.
    title : str or None, default=None
        Title of the plot.

    Attributes
    ----------
    figure_ : matplotlib Figure
    ax_ : matplotlib Axes
    line_ : matplotlib Line2D
        The validation curve.

    See Also
    --------
    plot_validation_curve : Build and draw it from a fitted early-stopping estimator.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from linsep import make_classifier
    >>> from linsep.inspection import ValidationErrorDisplay
    >>> X, y = make_classification(n_samples=200, n_features=5, flip_y=0.1, random_state=0)
    >>> hkes = make_classifier("hkes", random_state=0).fit(X, y)
    >>> display = ValidationErrorDisplay.from_estimator(hkes)
    >>> display.ax_.get_ylabel()
    'error (%)'
    """

    def __init__(self, *, validation_error, iterations, best_iter=None, training_error=None, title=None):
        self.validation_error = np.asarray(validation_error, dtype=float)
        self.iterations = np.asarray(iterations)
        self.best_iter = best_iter
        self.training_error = None if training_error is None else np.asarray(training_error, dtype=float)
        self.title = title

    @classmethod
    def from_estimator(cls, estimator, *, n_train=None, class_index=None, ax=None):
        """Read ``history_["validation_error"]`` and ``best_iter_`` of a fitted early-stopping estimator.

        Parameters
        ----------
        estimator : fitted estimator with early stopping
            E.g. ``make_classifier("hkes")`` after ``fit``.
        n_train : int or None, default=None
            Number of samples the weights were fitted on; when given, the
            recorded ``training_errors`` counts are drawn as a fraction too.
        class_index : int or None, default=None
            For a one-vs-rest fit, the binary problem to draw.
        ax : matplotlib Axes or None, default=None
            Where to draw.

        Returns
        -------
        ValidationErrorDisplay
        """
        history = binary_history(estimator, class_index)
        if "validation_error" not in history:
            raise ValueError(f"history_ of {type(estimator).__name__} has no 'validation_error': "
                             f"fit with early stopping")
        ge = np.asarray(history["validation_error"], dtype=float)
        best = getattr(estimator, "best_iter_", None)
        if best is not None and class_index is not None:
            best = np.ravel(best)[class_index]
        train = None
        if n_train is not None and "training_errors" in history and len(history["training_errors"]) == len(ge):
            train = np.asarray(history["training_errors"], dtype=float) / n_train
        display = cls(validation_error=ge, iterations=_iterations_of(history, len(ge)),
                      best_iter=None if best is None else int(best), training_error=train,
                      title=type(estimator).__name__)
        return display.plot(ax=ax)

    def plot(self, ax=None):
        """Draw the curve(s) and the kept iterate.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw; ``None`` creates a figure.

        Returns
        -------
        ValidationErrorDisplay
            ``self``, with ``figure_``, ``ax_`` and ``line_`` set.
        """
        fig, ax = _figure_and_axes(ax, figsize=(6, 3.6))
        (self.line_,) = ax.plot(self.iterations, 100 * self.validation_error, lw=1.2, label="validation error")
        if self.training_error is not None:
            ax.plot(self.iterations, 100 * self.training_error, lw=1, color="C2", alpha=0.8,
                    label="training error")
        if self.best_iter is not None:
            ax.axvline(self.best_iter, color="C3", ls="--", lw=1, label=f"k̂ = {self.best_iter} (kept)")
        ax.set_xlabel("iteration k")
        ax.set_ylabel("error (%)")
        if self.title:
            ax.set_title(self.title, fontsize=10)
        ax.legend(fontsize=8)
        self.figure_, self.ax_ = fig, ax
        return self


def plot_trace(estimator, X, y, *, iterations=None, n_lines=6, class_index=None, ax=None):
    """Draw the hyperplanes of a traced two-dimensional fit and its curves.

    The same as :meth:`TraceDisplay.from_estimator` (parameters there).

    Returns
    -------
    TraceDisplay
        With ``figure_``, ``ax_`` and ``lines_``.

    Parameters
    ----------
    estimator : fitted linsep estimator
        Fitted with ``record_history`` on two-dimensional data (primal models).
    X : array-like of shape (N, 2)
        The data to draw.
    y : array-like of shape (N,)
        Their labels.
    iterations : sequence of int or None, default=None
        Iterations whose hyperplanes are drawn; ``None``: ``n_lines`` of them.
    n_lines : int, default=6
        Number of hyperplanes drawn when ``iterations`` is ``None``.
    class_index : int or None, default=None
        For a one-vs-rest fit, the binary problem to draw.
    ax : sequence of matplotlib Axes or None, default=None
        Where to draw.

    See Also
    --------
    TraceDisplay : The display, with its ``plot`` method.
    linsep.inspection.trace_table : The same trace as a table.

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, -1, -1]
    >>> clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, y)
    >>> from linsep.inspection import plot_trace
    >>> display = plot_trace(clf, X, y)
    >>> type(display).__name__, len(display.ax_)   # the data panel and the curves
    ('TraceDisplay', 3)
    """
    return TraceDisplay.from_estimator(estimator, X, y, iterations=iterations, n_lines=n_lines,
                                       class_index=class_index, ax=ax)


def plot_validation_curve(estimator, *, n_train=None, class_index=None, ax=None):
    """Draw the validation error of an early-stopping fit against the iteration.

    The same as :meth:`ValidationErrorDisplay.from_estimator` (parameters there).

    Returns
    -------
    ValidationErrorDisplay
        With ``figure_``, ``ax_`` and ``line_``.

    Parameters
    ----------
    estimator : fitted estimator with early stopping
        E.g. ``make_classifier("hkes")`` after ``fit``.
    n_train : int or None, default=None
        Number of samples the weights were fitted on; draws the training
        error as a fraction too.
    class_index : int or None, default=None
        For a one-vs-rest fit, the binary problem to draw.
    ax : matplotlib Axes or None, default=None
        Where to draw.

    See Also
    --------
    ValidationErrorDisplay : The display, with its ``plot`` method.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from linsep import make_classifier
    >>> from linsep.inspection import plot_validation_curve
    >>> X, y = make_classification(n_samples=200, n_features=5, flip_y=0.1, random_state=0)
    >>> display = plot_validation_curve(make_classifier("hkes", random_state=0).fit(X, y))
    >>> int(display.line_.get_xdata()[0])          # the first iterate, k = 1
    1
    """
    return ValidationErrorDisplay.from_estimator(estimator, n_train=n_train, class_index=class_index, ax=ax)
