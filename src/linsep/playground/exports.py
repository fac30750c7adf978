"""The playground's exports: the trace (CSV, LaTeX), the figure (PNG, SVG), an animation (GIF), the points (CSV).

Each function returns the file's content (``str`` or ``bytes``); the page
hands it to the browser as a download.  The figures use matplotlib (Agg) and
the GIF Pillow (through :func:`linsep.inspection.animate_frames`), both imported when called.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from linsep.inspection import animate_frames, frame_rows

from .session import hyperplane_text, points_csv  # noqa: F401 (points_csv: an export too)

__all__ = ["trace_csv", "trace_latex", "figure_bytes", "animation_gif", "points_csv", "draw_frame"]

COLORS = {1: "#1f77b4", -1: "#d62728"}
REGION_COLORS = {1: "#c6dbef", -1: "#fcd5d5"}


def trace_csv(run):
    """The whole trace as CSV: ``k``, the vectors spread over columns (``a0, a1, a2``, ``b1…bN``, ``e1…eN``), the scalars."""
    records = run.records
    columns = run.table.columns
    header, widths = [], {}
    for column in columns:
        value = records[0][column]
        if isinstance(value, tuple):
            widths[column] = len(value)
            first = 0 if column == "a" else 1  # a(k) = [w0, w1, …]; samples numbered from 1
            header += [f"{column}{j + first}" for j in range(len(value))]
        else:
            header.append({"criterion": "J", "training_errors": "errors"}.get(column, column))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for record in records:
        row = []
        for column in columns:
            value = record[column]
            if column in widths:
                row += [f"{v:.12g}" for v in (value or (float("nan"),) * widths[column])]
            else:
                row.append("" if value is None else value if isinstance(value, (int, np.integer, str)) else f"{value:.12g}")
        writer.writerow(row)
    return out.getvalue()


LONGTABLE_ROWS = 40
"""Kept rows beyond which :func:`trace_latex` writes a ``longtable`` (about one page) unless told."""


def trace_latex(run, precision=4, *, first=None, every=None, longtable=None):
    """The trace as LaTeX: :meth:`linsep.inspection.TraceTable.to_latex` of the run's table itself.

    The same format as ``trace_table(estimator).to_latex()`` (the page adds
    nothing of its own), so a teacher gets one format from the page and from
    Python.

    Parameters
    ----------
    run : Run
        The page's traced fit.
    precision : int, default=4
        Significant digits.
    first, every : int or None
        Keep the first ``first`` rows and/or every ``every``-th one (the last
        row always; ``\\vdots`` marks the gaps); ``None`` for both: every row.
    longtable : bool or None, default=None
        A ``longtable`` (needs ``\\usepackage{longtable}``) that breaks across
        pages; ``None``: when more than :data:`LONGTABLE_ROWS` rows are kept.
    """
    from linsep.inspection import trace_table

    table = trace_table(run.estimator, precision=precision)
    if longtable is None:
        longtable = len(table.kept_rows(first, every)) > LONGTABLE_ROWS
    return table.to_latex(first=first, every=every, longtable=longtable)


def clipped_line(w, w0, level, xlim, ylim):
    """Two points of ``w·x + w0 = level`` spanning the box."""
    if abs(w[1]) >= abs(w[0]):
        xs = np.array(xlim, dtype=float)
        return xs, (level - w0 - w[0] * xs) / w[1]
    ys = np.array(ylim, dtype=float)
    return (level - w0 - w[1] * ys) / w[0], ys


def draw_frame(ax, run, pos, X, y, xlim, ylim, certificate=True):
    """Draw the points and row ``pos`` of ``run`` (``None`` or -1: points only) on a matplotlib axes."""
    from matplotlib.colors import ListedColormap

    X, y = np.asarray(X, dtype=float).reshape(-1, 2), np.asarray(y)
    if run is not None and pos is not None and pos >= 0:
        scores = run.grid(pos, xlim, ylim, size=150)
        ax.imshow(np.sign(scores), origin="lower", extent=(*xlim, *ylim), aspect="auto", vmin=-1, vmax=1,
                  cmap=ListedColormap([REGION_COLORS[-1], "#ffffff", REGION_COLORS[1]]), zorder=0)
        if run.kernel:
            gx, gy = np.linspace(*xlim, 150), np.linspace(*ylim, 150)
            ax.contour(gx, gy, scores, levels=[0], colors="k", linewidths=1.5)
        else:
            w, w0 = run.weights(pos)
            if np.linalg.norm(w) > 0:
                ax.plot(*clipped_line(w, w0, 0.0, xlim, ylim), "k-", lw=1.5, label=hyperplane_text(w, w0))
        wrong = run.misclassified(pos)
        ax.scatter(X[wrong, 0], X[wrong, 1], s=260, facecolors="none", edgecolors="#ff7f0e", lw=2, zorder=3)
        ax.set_title(f"{run.method}: k = {run.k(pos)}" + (" (returned)" if run.returned(pos) else "")
                     + (f" — {run.verdict()}" if pos == len(run) - 1 else ""),
                     fontsize=9)
        cert = run.certificate() if certificate and pos == len(run) - 1 else None
        if cert and cert["kind"] == "hyperplane":
            w, w0, m = cert["w"], cert["w0"], cert["margin"]
            for level in (-1, 1):
                ax.plot(*clipped_line(w, w0, level * m * np.linalg.norm(w), xlim, ylim), "k--", lw=0.8)
            if "hull_points" in cert:
                p, q = cert["hull_points"]
                ax.plot([p[0], q[0]], [p[1], q[1]], "g:o", lw=1.2, zorder=4)
        elif cert and cert["kind"] == "proof":
            u = cert["u"] / cert["u"].max()
            for i in cert["rows"]:
                ax.scatter(*X[i], s=200 + 600 * u[i], facecolors="none", edgecolors="#2ca02c", lw=2, zorder=4)
                ax.annotate(f"u{i + 1} = {u[i]:.3g}", X[i], textcoords="offset points", xytext=(8, 8),
                            color="#2ca02c", fontsize=8)
    for cls, marker in ((1, "o"), (-1, "s")):
        mask = y == cls
        ax.scatter(X[mask, 0], X[mask, 1], c=COLORS[cls], marker=marker, s=60, edgecolors="k", zorder=5,
                   label=f"class {cls:+d}")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel("x1")
    ax.set_ylabel("x2")
    ax.legend(loc="upper right", fontsize=8)


def figure_bytes(run, pos, X, y, xlim, ylim, fmt="png", dpi=120):
    """The figure of row ``pos`` as PNG or SVG bytes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 5.0))
    draw_frame(fig.subplots(), run, pos, X, y, xlim, ylim)
    out = io.BytesIO()
    fig.savefig(out, format=fmt, dpi=dpi, bbox_inches="tight")
    return out.getvalue()


def frame_positions(n_rows, max_frames=40):
    """Rows shown by the animation: all of them up to ``max_frames``, else evenly spaced, first and last kept."""
    return frame_rows(n_rows, max_frames)


def animation_gif(run, X, y, xlim, ylim, max_frames=40, duration_ms=250, dpi=72):
    """An animated GIF of the run (at most ``max_frames`` frames; the last one held longer).

    The frames are the page's figure (:func:`draw_frame`); the animation and
    the GIF are :func:`linsep.inspection.animate_frames`'s, as for
    ``linsep trace --animate``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 5.0), dpi=dpi)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.1, top=0.92)
    ax = fig.subplots()

    def draw(pos, last):
        ax.clear()
        draw_frame(ax, run, pos, X, y, xlim, ylim)

    rows = frame_positions(len(run), max_frames)
    anim = animate_frames(fig, draw, rows, iterations=[run.k(i) for i in rows], interval=duration_ms,
                          hold=max(1, round(2000 / duration_ms) - 1), ax=ax)
    return anim.to_gif_bytes(dpi=dpi)
