"""Matplotlib display of a separability verdict (:func:`linsep.check_separability`).

The conventions of ``linsep.inspection.trace_plots`` (constructor, ``from_verdict``,
``plot(ax=...)``; matplotlib imported only when drawing); re-exported by
:mod:`linsep.inspection`.
"""

from __future__ import annotations

import textwrap

import numpy as np

from linsep.inspection.trace_plots import _as_2d, _figure_and_axes, _limits, _line_points, _scatter_classes

__all__ = ["SeparabilityDisplay", "plot_separability"]


class SeparabilityDisplay:
    """A separability verdict drawn on two-dimensional data.

    *Separable*: the certified hyperplane :math:`w^t x + w_0 = 0` and the two lines
    at its geometric margin on either side.  *Not separable*: the points that
    carry the proof :math:`u` (:math:`u_i > 0`, sized by :math:`u_i`), the convex hulls of
    each class's carriers and their common point

    .. math::

        \\frac{\\sum_{y_i = +1} u_i x_i}{\\sum_{y_i = +1} u_i}
        = \\frac{\\sum_{y_i = -1} u_i x_i}{\\sum_{y_i = -1} u_i} :

    :math:`\\sum_i u_i y_i (x_i, 1) = 0` says exactly that the two hulls meet there,
    so no line separates the classes.  *Undecided* (no certificate passed its
    check): the data and the verdict only.  Build it with :meth:`from_verdict`
    or :func:`plot_separability`.

    Parameters
    ----------
    verdict : SeparabilityResult
        The result of :func:`linsep.check_separability` on ``X, y``.
    X : ndarray of shape (N, 2)
        The data.
    y : ndarray of shape (N,)
        Their labels.

    Attributes
    ----------
    figure_ : matplotlib Figure
    ax_ : matplotlib Axes
    common_point_ : ndarray of shape (2,) or None
        Not separable: the point shared by the two hulls.

    See Also
    --------
    plot_separability : Build and draw it from a verdict.
    linsep.check_separability : The verdict it draws.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep import check_separability
    >>> from linsep.inspection import SeparabilityDisplay
    >>> X, y = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]), [0, 0, 1, 1]
    >>> display = SeparabilityDisplay.from_verdict(check_separability(X, y), X, y)
    >>> display.common_point_                      # XOR: both hulls contain the centre
    array([0.5, 0.5])
    """

    def __init__(self, *, verdict, X, y):
        if hasattr(verdict, "one_vs_rest"):
            raise ValueError("plot_separability draws one two-class verdict; for more classes pass one of "
                             "verdict.one_vs_rest[label] (or verdict.pairwise[a, b]) with the same X, y")
        self.verdict = verdict
        self.X = _as_2d(X)
        self.y = np.asarray(y)
        if len(self.y) != len(self.X):
            raise ValueError(f"X has {len(self.X)} rows and y {len(self.y)} labels")
        u = getattr(getattr(verdict, "certificate", None), "u", None)
        if u is not None and len(u) != len(self.X):
            raise ValueError(f"the proof weighs the {len(u)} rows the verdict was computed on; X has {len(self.X)} "
                             f"rows (pass the same X and y)")
        classes = np.asarray(getattr(verdict, "classes", np.unique(self.y)))
        if classes.dtype == object and len(classes) == 2 and classes[0] == "rest":  # one class against the rest
            self.y = np.where(self.y == classes[1], str(classes[1]), "rest")

    @classmethod
    def from_verdict(cls, verdict, X, y, *, ax=None):
        """Draw the verdict of :func:`linsep.check_separability` on the data it was given.

        Parameters
        ----------
        verdict : SeparabilityResult
            ``check_separability(X, y)``.
        X : array-like of shape (N, 2)
            The same data.
        y : array-like of shape (N,)
            The same labels.
        ax : matplotlib Axes or None, default=None
            Where to draw.

        Returns
        -------
        SeparabilityDisplay
        """
        return cls(verdict=verdict, X=X, y=y).plot(ax=ax)

    def plot(self, ax=None):
        """Draw the data and the certificate.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw; ``None`` creates a figure.

        Returns
        -------
        SeparabilityDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        fig, ax = _figure_and_axes(ax, figsize=(5, 4.2))
        verdict, X, y = self.verdict, self.X, self.y
        classes = np.asarray(getattr(verdict, "classes", np.unique(y)))
        if classes.dtype == object and classes[0] == "rest":
            classes = np.array(["rest", str(classes[1])])
        limits = _limits(X)
        _scatter_classes(ax, X, y, classes)
        cert = getattr(verdict, "certificate", None)
        self.common_point_ = None
        if cert is not None and hasattr(cert, "coef"):
            self._draw_hyperplane(ax, cert, limits)
        elif cert is not None and hasattr(cert, "u"):
            self._draw_proof(ax, np.asarray(cert.u, dtype=float), classes)
        ax.set_xlim(limits[0])
        ax.set_ylim(limits[1])
        ax.set_xlabel("$x_1$")
        ax.set_ylabel("$x_2$")
        summary = verdict.summary() if hasattr(verdict, "summary") else str(verdict)
        head, _, rest = summary.partition(":")
        # The certificate's summary is long: wrap it to the axes' width so it is never cut off.
        body = textwrap.fill(rest.strip(), width=70) if rest else ""
        ax.set_title(head + (":\n" + body if body else ""), fontsize=8)
        ax.legend(fontsize=7, loc="best")
        self.figure_, self.ax_ = fig, ax
        return self

    @staticmethod
    def _draw_hyperplane(ax, cert, limits):
        w, b = np.asarray(cert.coef, dtype=float), float(cert.intercept)
        norm = np.linalg.norm(w)
        pts = _line_points(w, b, limits)
        if pts is not None:
            ax.plot(*pts, color="k", lw=2, label="certified hyperplane")
        if np.isfinite(cert.margin) and norm > 0:
            for sign in (-1, 1):
                pts = _line_points(w, b, limits, offset=sign * cert.margin * norm)
                if pts is not None:
                    ax.plot(*pts, color="k", lw=1, ls="--",
                            label=f"margin {cert.margin:.3g}" if sign > 0 else None)

    def _draw_proof(self, ax, u, classes):
        X, y = self.X, self.y
        carriers = u > 0
        size = 60 + 400 * u / u.max()
        ax.scatter(X[carriers, 0], X[carriers, 1], s=size[carriers], facecolor="none", edgecolor="C3",
                   linewidth=1.5, label="carriers of the proof ($u_i > 0$)", zorder=4)
        common = None
        for i, c in enumerate(classes[:2]):
            sel = carriers & (y == c)
            if not sel.any():
                continue
            P = X[sel]
            self._draw_hull(ax, P, color=f"C{i}")
            point = u[sel] @ P / u[sel].sum()
            common = point if common is None else (common + point) / 2
        if common is not None:
            self.common_point_ = common
            ax.scatter(*common, marker="*", s=220, color="C3", edgecolor="k", zorder=5,
                       label="common point of the two hulls")

    @staticmethod
    def _draw_hull(ax, P, color):
        if len(P) >= 3:
            from scipy.spatial import ConvexHull, QhullError

            try:
                hull = ConvexHull(P)
            except QhullError:   # collinear carriers: their hull is a segment
                pass
            else:
                ring = P[np.r_[hull.vertices, hull.vertices[0]]]
                ax.fill(ring[:, 0], ring[:, 1], color=color, alpha=0.15, zorder=1)
                ax.plot(ring[:, 0], ring[:, 1], color=color, lw=1, zorder=2)
                return
        order = np.lexsort(P.T[::-1])
        ax.plot(P[order, 0], P[order, 1], color=color, lw=1.5, zorder=2)


def plot_separability(verdict, X, y, *, ax=None):
    """Draw a separability verdict on two-dimensional data.

    The same as :meth:`SeparabilityDisplay.from_verdict` (parameters there).

    Returns
    -------
    SeparabilityDisplay
        With ``figure_``, ``ax_`` and ``common_point_``.

    Parameters
    ----------
    verdict : SeparabilityResult
        ``check_separability(X, y)``.
    X : array-like of shape (N, 2)
        The same data.
    y : array-like of shape (N,)
        The same labels.
    ax : matplotlib Axes or None, default=None
        Where to draw.

    See Also
    --------
    SeparabilityDisplay : The display, with its ``plot`` method.
    linsep.check_separability : The verdict it draws.

    Examples
    --------
    >>> from linsep import check_separability
    >>> from linsep.inspection import plot_separability
    >>> X, y = [[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1]
    >>> display = plot_separability(check_separability(X, y), X, y)
    >>> display.common_point_ is None              # separable: a line and its margin instead
    True
    """
    return SeparabilityDisplay.from_verdict(verdict, X, y, ax=ax)
