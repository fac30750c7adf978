"""Animations of traced fits: the hyperplane (or a kernel's decision regions) moving over the iterations.

:func:`animate_trace` reads the trace of a two-feature fit (``record_history``)
and returns a matplotlib :class:`~matplotlib.animation.FuncAnimation` with one
frame per shown iteration: the points, the regions each side of the current
model, its line ``w·x + w_0 = 0`` (primal rules) or zero level set (kernel
rules), the points on the wrong side ringed, and ``k`` in the title.  The
animation is a ``TraceAnimation``, a FuncAnimation that notebooks show as an
interactive JavaScript player (its ``_repr_html_`` is ``to_jshtml()``), that
the documentation's gallery embeds, and that :meth:`write` saves as a GIF
(Pillow) or an MP4 (where ffmpeg exists).  :func:`animate_frames` animates
any per-row drawing (the playground's GIF export uses it), :func:`frame_rows`
picks the rows shown.  Matplotlib is imported when something is animated.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from linsep.inspection.labels import trace_positive_class, resolve_label
from linsep.inspection.drawing import _as_2d, _limits, _line_points, _pyplot
from linsep.inspection.drawing import binary_history

__all__ = ["animate_trace", "animate_frames", "frame_rows"]

_REGION_COLORS = ("#fcd5d5", "#c6dbef")   # negative side, positive side (light)
_POINT_COLORS = ("#d62728", "#1f77b4")


def frame_rows(n_rows, max_frames=40):
    """Rows of a trace shown by an animation: all of them up to ``max_frames``, else evenly spaced.

    The first and the last rows are always shown.

    Parameters
    ----------
    n_rows : int
        Rows in the trace.
    max_frames : int, default=40
        Most rows shown.

    Returns
    -------
    list of int
        Increasing row indices.

    See Also
    --------
    animate_trace : Animates the rows it picks.

    Examples
    --------
    >>> from linsep.inspection import frame_rows
    >>> frame_rows(5)
    [0, 1, 2, 3, 4]
    >>> len(frame_rows(104, 12))
    12
    """
    if max_frames < 2:
        raise ValueError(f"max_frames must be at least 2 (the first and the last rows), got {max_frames!r}")
    if n_rows <= max_frames:
        return list(range(n_rows))
    return sorted(set(np.linspace(0, n_rows - 1, max_frames).round().astype(int).tolist()))


_CLASS = None


def _animation_class():
    """``TraceAnimation``: a FuncAnimation shown as jshtml in notebooks, written by suffix (made at first use)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from matplotlib.animation import FuncAnimation, writers

    class TraceAnimation(FuncAnimation):
        """A :class:`~matplotlib.animation.FuncAnimation` over the rows of a trace.

        Attributes
        ----------
        rows_ : list of int
            The trace rows shown, one per frame (the last one held ``hold`` frames more).
        iterations_ : list of int or None
            Their iteration numbers ``k`` (when known).
        figure_, ax_ : matplotlib Figure and Axes
        """

        def _repr_html_(self):
            # Notebooks: the interactive player (matplotlib's own _repr_html_ shows nothing by default).
            return self.to_jshtml()

        def write(self, path, *, fps=None, dpi=None):
            """Save as ``.gif`` (Pillow) or ``.mp4`` (ffmpeg, where it exists) by the file's suffix.

            Parameters
            ----------
            path : str or path-like
                The file; its suffix picks the format.
            fps : float or None, default=None
                Frames per second (default: ``1000 / interval``).
            dpi : float or None, default=None
                Resolution (default: the figure's).

            Returns
            -------
            pathlib.Path
                The file written.
            """
            path = Path(path)
            suffix = path.suffix.lower()
            self._draw_was_started = True  # a refused format is no animation "deleted without rendering"
            fps = 1000.0 / self._interval if fps is None else fps
            if suffix == ".gif":
                writer = "pillow"
            elif suffix in (".mp4", ".m4v", ".mov"):
                if not writers.is_available("ffmpeg"):
                    raise ValueError(f"{path}: MP4 needs ffmpeg, which is not installed; write a .gif instead")
                writer = "ffmpeg"
            else:
                raise ValueError(f"{path}: an animation is written as .gif (Pillow) or .mp4 (ffmpeg), "
                                 f"not {path.suffix or 'a file without suffix'!r}")
            self.save(path, writer=writer, fps=fps, dpi=dpi)
            return path

        def to_gif_bytes(self, *, fps=None, dpi=None):
            """The animated GIF as bytes (what :meth:`write` would write to a ``.gif`` file)."""
            with tempfile.TemporaryDirectory() as folder:
                path = self.write(os.path.join(folder, "animation.gif"), fps=fps, dpi=dpi)
                return path.read_bytes()

    _CLASS = TraceAnimation
    return _CLASS


def animate_frames(figure, draw, rows, *, iterations=None, interval=250, hold=4, ax=None):
    """Animate ``draw(row, last)`` over ``rows`` on ``figure``: the one animation machinery of linsep.

    Parameters
    ----------
    figure : matplotlib Figure
        The figure drawn on (a pyplot figure for notebooks and the gallery).
    draw : callable
        ``draw(row, last)`` draws trace row ``row`` (``last``: the final row
        is shown); it may update artists or clear and redraw its axes.
    rows : sequence of int
        The rows shown, in order (:func:`frame_rows`).
    iterations : sequence of int or None, default=None
        Their iteration numbers (kept as ``iterations_``).
    interval : float, default=250
        Milliseconds between frames.
    hold : int, default=4
        Extra frames that show the last row (a GIF merges them into one
        longer frame).
    ax : matplotlib Axes or None, default=None
        Kept as ``ax_``.

    Returns
    -------
    TraceAnimation
        A :class:`~matplotlib.animation.FuncAnimation` (see :func:`animate_trace`).

    See Also
    --------
    animate_trace : The animation of a traced fit, built on this.
    frame_rows : The rows shown.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from linsep.inspection import animate_frames
    >>> fig, ax = plt.subplots()
    >>> (line,) = ax.plot([], [])
    >>> anim = animate_frames(fig, lambda row, last: line.set_data([0, 1], [0, row]), [0, 1, 2], ax=ax)
    >>> anim.rows_
    [0, 1, 2]
    """
    rows = [int(r) for r in rows]
    if not rows:
        raise ValueError("an animation needs at least one row")
    sequence = rows + [rows[-1]] * max(int(hold), 0)
    final = len(rows) - 1

    def update(frame):
        draw(sequence[frame], frame >= final)
        return []

    anim = _animation_class()(figure, update, frames=len(sequence), interval=interval, blit=False, repeat=True,
                              cache_frame_data=False)
    anim._draw_was_started = True  # the first row is drawn: no "deleted without rendering" warning
    anim.rows_ = rows
    anim.iterations_ = None if iterations is None else [int(k) for k in iterations]
    anim.figure_, anim.ax_ = figure, ax
    return anim


def _trace_model(estimator, history, X):
    """``(scores(row, points), n_rows, kind)`` of a traced two-feature model: primal weights or a kernel expansion."""
    if "weights" in history:
        W = np.asarray(history["weights"], dtype=float)
        if W.ndim != 2 or W.shape[1] != 3:
            raise ValueError(f"animate_trace draws two-feature data; the traced weights have shape {W.shape}")
        return (lambda i, P: P @ W[i, :2] + W[i, 2]), W.shape[0], "primal", W
    if "dual_coef" in history:
        from linsep.kernels import kernel_matrix, resolve_gamma

        if getattr(estimator, "kernel", None) == "precomputed" or not hasattr(estimator, "X_fit_"):
            raise ValueError("animate_trace draws kernel models from their samples; kernel='precomputed' has none")
        X_fit = estimator.X_fit_
        X_fit = X_fit.toarray() if hasattr(X_fit, "toarray") else np.asarray(X_fit)
        if X_fit.shape[1] != 2:
            raise ValueError(f"animate_trace draws two-feature data; the model was fitted on {X_fit.shape[1]}")
        params = dict(kernel=estimator.kernel, gamma=resolve_gamma(estimator.gamma, X_fit),
                      degree=estimator.degree, coef0=estimator.coef0)
        A = np.asarray(history["dual_coef"], dtype=float)
        b = np.asarray(history["intercept"], dtype=float)
        if A.shape[1] != X_fit.shape[0]:
            raise ValueError("the traced dual coefficients do not match the stored samples X_fit_")

        def scores(i, P):
            return kernel_matrix(P, X_fit, **params) @ A[i] + b[i]

        return scores, A.shape[0], "kernel", None
    raise ValueError(f"the trace of {type(estimator).__name__} holds no model to draw (no 'weights' or "
                     "'dual_coef'): animate_trace draws iterative rules fitted with record_history=True")


def animate_trace(estimator, X, y, *, max_frames=40, interval=250, hold=4, class_index=None, pos_label=None,
                  grid_size=120, ax=None, figsize=(5.2, 4.6)):
    """Animate a traced two-feature fit: the hyperplane (or kernel decision regions) over the iterations.

    One frame per shown row of ``history_`` (:func:`frame_rows`: all rows up
    to ``max_frames``, else evenly spaced, first and last kept), each with the
    points, the two sides of the current model shaded, its boundary (the
    line ``w·x + w_0 = 0``, or the zero level set of a kernel expansion), the
    points on the wrong side or on the boundary ringed, and ``k`` in the title
    (the verdict on the last frame).

    Parameters
    ----------
    estimator : fitted linsep estimator
        Fitted with ``record_history`` on two-feature data: a primal rule
        (``history_["weights"]``) or a kernel rule (``history_["dual_coef"]``).
    X : array-like of shape (N, 2)
        The points drawn (usually the training data).
    y : array-like of shape (N,)
        Their labels.
    max_frames : int, default=40
        Most rows shown.
    interval : float, default=250
        Milliseconds between frames (``write`` uses ``1000 / interval`` frames per second).
    hold : int, default=4
        Extra frames on the last row.
    class_index : int or None, default=None
        For a one-vs-rest fit, the binary problem drawn.
    pos_label : label or None, default=None
        The class shaded as the positive side (default: the fit's, :func:`trace_positive_class`).
    grid_size : int, default=120
        Grid points per axis of the shaded regions.
    ax : matplotlib Axes or None, default=None
        Where to draw; ``None`` makes a pyplot figure of ``figsize``.
    figsize : tuple, default=(5.2, 4.6)
        Size of a new figure.

    Returns
    -------
    TraceAnimation
        A :class:`~matplotlib.animation.FuncAnimation` with ``rows_``,
        ``iterations_``, ``figure_``, ``ax_``; ``write(path)`` saves a
        ``.gif`` (Pillow) or ``.mp4`` (ffmpeg), a notebook shows it as a
        player (or ``IPython.display.HTML(anim.to_jshtml())``).

    See Also
    --------
    plot_trace : The same trace as still lines at a few iterations.
    TraceDisplay : Its ``animate()`` animates the display's estimator.
    trace_table : The same trace as the lecture's table.

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> from linsep.inspection import animate_trace
    >>> X, y = [[6, 9], [5, 7], [5, 9], [0, 10]], [1, 1, 2, 2]
    >>> clf = HoKashyapClassifier(pos_label=1, learning_rate=0.9, b0=1.0, record_history=True)
    >>> clf = clf.fit(X, y, coef_init=[1, 1], intercept_init=1)
    >>> anim = animate_trace(clf, X, y, max_frames=12)
    >>> len(anim.rows_), anim.iterations_[0], anim.iterations_[-1]
    (12, 1, 104)
    """
    plt = _pyplot()
    X = _as_2d(X)
    y = np.asarray(y)
    if len(y) != len(X):
        raise ValueError(f"X has {len(X)} rows and y {len(y)} labels")
    history = binary_history(estimator, class_index)
    problem = 0 if class_index is None else class_index
    scores, n_rows, kind, _ = _trace_model(estimator, history, X)
    recorded = trace_positive_class(estimator, problem)
    positive = recorded if pos_label is None else resolve_label(estimator.classes_, pos_label)
    if positive != recorded and len(estimator.classes_) != 2:
        raise ValueError(f"pos_label={pos_label!r}: this one-vs-rest problem's positive class is {recorded!r}")
    sign = 1.0 if positive == recorded else -1.0
    targets = np.where(y == positive, 1.0, -1.0)
    ks = np.asarray(history.get("iteration", np.arange(n_rows)))
    returned = np.asarray(history.get("returned", np.zeros(n_rows, dtype=bool)), dtype=bool)
    rows = frame_rows(n_rows, max_frames)

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    else:
        fig = ax.figure
    limits = _limits(X)
    (x0, x1), (y0, y1) = limits
    gx, gy = np.meshgrid(np.linspace(x0, x1, grid_size), np.linspace(y0, y1, grid_size))
    grid = np.c_[gx.ravel(), gy.ravel()]
    from matplotlib.colors import ListedColormap

    regions = ax.imshow(np.zeros((grid_size, grid_size)), origin="lower", extent=(x0, x1, y0, y1), aspect="auto",
                        cmap=ListedColormap([_REGION_COLORS[0], "#ffffff", _REGION_COLORS[1]]), vmin=-1, vmax=1,
                        zorder=0, interpolation="nearest")
    (line,) = ax.plot([], [], color="k", lw=1.8, zorder=2)
    wrong = ax.scatter([], [], s=220, facecolors="none", edgecolors="#ff7f0e", linewidths=2, zorder=4,
                       label="wrong side")
    negative_labels = [c for c in np.unique(y).tolist() if c != positive]
    for value, color, marker in ((positive, _POINT_COLORS[1], "o"),):
        mask = y == value
        ax.scatter(X[mask, 0], X[mask, 1], c=color, marker=marker, s=50, edgecolors="k", zorder=5,
                   label=f"class {value} (+)")
    for i, value in enumerate(negative_labels):
        mask = y == value
        ax.scatter(X[mask, 0], X[mask, 1], c=_POINT_COLORS[0] if i == 0 else f"C{i + 2}", marker="s", s=50,
                   edgecolors="k", zorder=5, label=f"class {value} (−)" if len(negative_labels) == 1 else f"class {value}")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.legend(loc="best", fontsize=7)
    title = ax.set_title("", fontsize=10)
    name = type(estimator).__name__
    status = np.ravel(getattr(estimator, "status_", [None]))[problem]
    contours = []

    def draw(row, last):
        S = sign * scores(row, grid).reshape(grid_size, grid_size)
        regions.set_data(np.sign(S))
        for artist in contours:
            artist.remove()
        contours.clear()
        if kind == "primal":
            a = sign * np.asarray(history["weights"][row], dtype=float)
            pts = _line_points(a[:2], a[2], limits)
            line.set_data(*(pts if pts is not None else ([], [])))
        elif np.nanmin(S) < 0 < np.nanmax(S):
            contours.append(ax.contour(gx, gy, S, levels=[0], colors="k", linewidths=1.5, zorder=2))
        bad = targets * sign * scores(row, X) <= 0
        wrong.set_offsets(X[bad] if bad.any() else np.empty((0, 2)))
        text = f"{name}: k = {int(ks[row])}"
        if returned[row]:  # the trace's last row: the returned model, an earlier iterate
            text += ", returned"
        if last and status is not None:
            text += f" ({status})"
        title.set_text(text)

    draw(rows[0], len(rows) == 1)
    fig.tight_layout()
    return animate_frames(fig, draw, rows, iterations=ks[rows].tolist(), interval=interval, hold=hold, ax=ax)
