"""Matplotlib display of :class:`~linsep.HoKashyapClassifierCV`'s cross-validation surface over ``(C, k)``.

The same conventions as the displays of ``linsep.inspection.trace_plots`` (a constructor
that stores what is drawn, ``from_estimator``, ``plot(ax=...)``; matplotlib
imported only when drawing); re-exported by :mod:`linsep.inspection`.
"""

from __future__ import annotations

import numpy as np

from linsep.inspection.trace_plots import _figure_and_axes

__all__ = ["CVSurfaceDisplay", "plot_cv_surface"]


class CVSurfaceDisplay:
    """The cross-validation surface of :class:`~linsep.HoKashyapClassifierCV` over ``(C, k)``.

    One curve per value of ``C``: the validation error averaged over the
    folds, ``mean_k GE(C, k)`` in %, against the iteration ``k``; the chosen
    pair ``(C_, best_iter_)`` is marked.

    Parameters
    ----------
    cv_results : dict
        ``cv_results_`` of the estimator (one binary problem): ``C`` (NaN
        for ``C=None``), ``mean_validation_error`` of shape (n_C, L),
        ``best_iter`` and ``best_validation_error``.
    chosen_C : float or None
        The ``C`` kept (``C_``).
    best_iter : int
        The iterate kept (``best_iter_``).
    title : str or None, default=None

    Attributes
    ----------
    figure_ : matplotlib Figure
    ax_ : matplotlib Axes
    lines_ : list of matplotlib Line2D
        One per ``C``, in the order of ``cv_results["C"]``.

    See Also
    --------
    plot_cv_surface : Draws it from a fitted estimator.
    linsep.HoKashyapClassifierCV : The estimator whose ``cv_results_`` it draws.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from linsep import HoKashyapClassifierCV
    >>> from linsep.inspection import CVSurfaceDisplay
    >>> X, y = make_classification(n_samples=120, n_features=4, random_state=0)
    >>> model = HoKashyapClassifierCV(Cs=[None, 1.0], cv=3, max_iter=200).fit(X, y)
    >>> display = CVSurfaceDisplay.from_estimator(model)
    >>> len(display.lines_)
    2
    """

    def __init__(self, *, cv_results, chosen_C, best_iter, title=None):
        self.cv_results = cv_results
        self.chosen_C = chosen_C
        self.best_iter = best_iter
        self.title = title

    @classmethod
    def from_estimator(cls, estimator, *, class_index=None, ax=None):
        """Read ``cv_results_``, ``C_`` and ``best_iter_`` of a fitted :class:`~linsep.HoKashyapClassifierCV`.

        Parameters
        ----------
        estimator : HoKashyapClassifierCV
            Fitted with ``Cs``.
        class_index : int or None, default=None
            The binary problem of a one-vs-rest fit (the first by default).
        ax : matplotlib Axes or None, default=None
            Where to draw (a new figure by default).

        Returns
        -------
        CVSurfaceDisplay
            Drawn.
        """
        results = getattr(estimator, "cv_results_", None)
        if results is None:
            raise ValueError(f"{type(estimator).__name__} has no cv_results_: fit a HoKashyapClassifierCV first")
        chosen, best = estimator.C_, estimator.best_iter_
        if isinstance(results, list):
            index = 0 if class_index is None else int(class_index)
            results, best = results[index], np.asarray(best)[index]
        return cls(cv_results=results, chosen_C=chosen, best_iter=int(best),
                   title=f"{type(estimator).__name__}: cross-validation over (C, k)").plot(ax=ax)

    def plot(self, *, ax=None):
        """Draw the surface.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (a new figure by default).

        Returns
        -------
        CVSurfaceDisplay
            ``self``, with ``figure_``, ``ax_`` and ``lines_``.
        """
        self.figure_, self.ax_ = _figure_and_axes(ax, (6, 4))
        surface = np.asarray(self.cv_results["mean_validation_error"], dtype=float)
        iterations = np.arange(1, surface.shape[1] + 1)
        self.lines_ = []
        for C, curve in zip(self.cv_results["C"], surface):
            label = "C=None (HK)" if np.isnan(C) else f"C={C:.3g}"
            (line,) = self.ax_.plot(iterations, 100 * curve, lw=1.2, label=label)
            self.lines_.append(line)
        row = [i for i, C in enumerate(self.cv_results["C"])
               if (np.isnan(C) and self.chosen_C is None) or C == self.chosen_C]
        if row:
            self.ax_.plot([self.best_iter], [100 * surface[row[0], self.best_iter - 1]], "k*", ms=12,
                          label=f"chosen (C, k̂) = ({self.chosen_C}, {self.best_iter})")
        self.ax_.set_xscale("log")
        self.ax_.set_xlabel("iteration k")
        self.ax_.set_ylabel("mean validation error (%)")
        self.ax_.legend(fontsize="small")
        if self.title:
            self.ax_.set_title(self.title)
        return self


def plot_cv_surface(estimator, *, class_index=None, ax=None):
    """Draw the cross-validation surface over ``(C, k)`` of a fitted :class:`~linsep.HoKashyapClassifierCV`.

    The same as :meth:`CVSurfaceDisplay.from_estimator`.

    Parameters
    ----------
    estimator : HoKashyapClassifierCV
        Fitted with ``Cs``.
    class_index : int or None, default=None
        The binary problem of a one-vs-rest fit (the first by default).
    ax : matplotlib Axes or None, default=None
        Where to draw (a new figure by default).

    Returns
    -------
    CVSurfaceDisplay
        With ``figure_``, ``ax_`` and ``lines_``.

    See Also
    --------
    CVSurfaceDisplay : The display itself.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from linsep import HoKashyapClassifierCV
    >>> from linsep.inspection import plot_cv_surface
    >>> X, y = make_classification(n_samples=120, n_features=4, random_state=0)
    >>> model = HoKashyapClassifierCV(Cs=3, cv=3, max_iter=200).fit(X, y)
    >>> plot_cv_surface(model).chosen_C == model.C_
    True
    """
    return CVSurfaceDisplay.from_estimator(estimator, class_index=class_index, ax=ax)
