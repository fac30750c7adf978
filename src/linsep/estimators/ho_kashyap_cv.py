"""Ho–Kashyap with cross-validated early stopping and refit (``"hkes_cv"``, ``"hkesa_cv"``, ``"kernel_hkes_cv"``).

An extension of linsep beyond Lauer & Bloch (2006).  HKES [1]_ chooses its
stopping iteration :math:`\\hat k` on one held-out third of the training data and keeps
the weights trained on the other two thirds: on small data sets :math:`\\hat k` is
noisy (one split) and the model never sees a third of the data.  Here

1. the training data are split into ``cv`` stratified folds; on each fold
   :math:`f` one Ho–Kashyap run on the other folds records the validation error
   :math:`GE_f(k)` of every iterate :math:`W_k` on fold :math:`f` (exactly the run HKES
   makes on its split, :func:`linsep.solvers.ho_kashyap.ho_kashyap` with
   ``Y_val``): one run per fold, never one fit per candidate :math:`k`;
2. :math:`\\hat k` is the first minimiser of the mean curve

   .. math::

       \\overline{GE}(k) = \\frac{1}{F} \\sum_{f=1}^{F} GE_f(\\min(k, k^*_f)),
       \\qquad \\hat k = \\min \\operatorname{argmin}_k \\overline{GE}(k),

   where :math:`k^*_f` is where fold :math:`f`'s run stopped: a run that stops earlier
   is extended with its last value (its model would not change after :math:`k^*_f`);
3. ``refit=True``: Ho–Kashyap on *all* training data, stopped after exactly
   :math:`\\hat k` iterates (:math:`\\hat k - 1` margin updates, the convention of HKES's
   ``best_iter_``): the weights are :math:`W_{\\hat k}` of the full data.

With a grid ``Cs``, :math:`C` is tuned jointly with :math:`\\hat k` from the same folds:
each pair :math:`(f, C)` makes one Ho–Kashyap run (one factorisation of
:math:`Y^t Y + C \\tilde I`, the fold's Gram matrix :math:`Y^t Y` shared by every :math:`C`) that
records :math:`GE_f(C, k)` along its whole :math:`k` path, so the surface

.. math::

    \\overline{GE}(C, k) = \\frac{1}{F} \\sum_{f=1}^{F} GE_f(C, \\min(k, k^*_{f,C})),
    \\qquad (\\hat C, \\hat k) = \\operatorname{argmin}_{C, k} \\overline{GE}(C, k)

costs :math:`F \\cdot |\\mathit{Cs}|` runs, never one fit per pair :math:`(C, k)`; ties go to the
first :math:`C` of the grid, then the first :math:`k`.  One-vs-rest problems share
one :math:`C` (the one minimising the sum of their errors at their own :math:`\\hat k`):
``predict`` compares their scores, which :math:`C` scales, so a :math:`C` per problem
would make them incomparable; :math:`\\hat k` stays per problem.  A number :math:`C` is Łęski's
MHKS / MHKA penalty :math:`C \\, w^t w` with target :math:`\\mathbf{1} + B` (Lauer & Bloch 2006,
eqs. 10–11; at :math:`k = 1` the ridge classifier), ``None`` plain HK as HKES.
Each run stops at the Ho–Kashyap rule or, with ``n_iter_no_change``, once
its validation error has not improved for that many iterations
(``linsep.solvers.ho_kashyap.rules.patience_spent``).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
import dataclasses
import time

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval

from linsep.estimators.cv_folds import folds_without_zero_weight, stratified_folds
from linsep.designs.backend import DEVICE
from linsep.estimators.base import (FitContext, CLASS_WEIGHT_CONSTRAINT, KERNEL_CONSTRAINTS, POS_LABEL_CONSTRAINT,
                                   POS_LABEL_DOC, BaseKernelSeparator, BaseLinearSeparator, encode_pm1,
                                   estimator_init, refuse_unsupported, rows_with_weight)
from linsep.estimators.ho_kashyap import HK_SUPPORTED
from linsep.estimators.kernel_hk import KernelHoKashyapClassifier
from linsep.solvers.ho_kashyap.params import HK_CONSTRAINTS, HK_PARAMETERS, HKParams, hk_defaults
from linsep._core.plan import READS_FLOAT32
from linsep._core.signed_design import SignedDesign, sign_normalized, signed_scores
from linsep.designs.weights import WeightedValidation, weighted_signed_design
from linsep.solvers.ho_kashyap.weighted import scaled_ho_kashyap, weighted_ho_kashyap
from linsep.solvers.ho_kashyap.params import DEFAULT_N_ITER_NO_CHANGE, PATIENCE_CONSTRAINTS
from linsep._core.result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE, SolveResult
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.solvers.ho_kashyap.segments import Lockstep
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep._core.threads import pass_threads
from linsep.solvers.ho_kashyap.kernel import EmpiricalKernelMap, kernel_ho_kashyap


def default_C_grid(n_values):
    """The grid of ``Cs=n_values``: ``C=None`` (HKES-CV itself), then ``n_values - 1`` values from :math:`10^{-2}` to :math:`10^3`.

    :math:`C` weighs :math:`C \\, w^t w` against the sum of squared errors (Łęski's
    MHKS), as ``alpha`` in :class:`~sklearn.linear_model.RidgeClassifier`:
    at :math:`k = 1` the model is that ridge classifier (unpenalised bias).
    """
    if n_values < 1:
        raise ValueError(f"Cs must be at least 1, got {n_values}")
    return [None] + [float(c) for c in np.logspace(-2, 3, n_values - 1)] if n_values > 1 else [None]


def penalty_order(grid):
    """The indices of ``grid`` from the largest penalty ``C`` to the smallest, ``None`` (no penalty) last.

    The order of ``early_exit``'s waves: the strongly penalised runs stop within a few iterations, and the
    reference they leave lets the slow, weakly penalised ones stop early where they stay far behind.
    """
    return sorted(range(len(grid)), key=lambda c: (grid[c] is None, -(grid[c] or 0.0)))


def run_best_error(run):
    """The least validation error of a fold run, :math:`\\min_k GE(k)` over its ``history["validation_error"]``."""
    return float(np.min(run.history["validation_error"]))


def reference_of_best(best, n_val, z):
    """``early_exit``'s reference for a fold whose best error so far is ``best``: ``best`` plus ``z`` standard errors.

    The standard error is that of an error rate on the fold's ``n_val`` rows (with sample weights their sum, as
    repeated rows), :math:`\\sqrt{p (1 - p) / n_\\mathrm{val}}` with :math:`p` at least one row's share (a best of
    0 still leaves a margin) and at most 1/2.  ``inf`` (no reference) for ``best = inf`` (no run yet).
    """
    if not np.isfinite(best):
        return np.inf
    p = min(max(best, 1.0 / n_val), 0.5)
    return best + z * np.sqrt(p * (1.0 - p) / n_val)


def early_exit_reference(runs, n_val, z):
    """The reference error of ``early_exit`` for a fold: its best error so far plus ``z`` standard errors.

    ``runs``: the fold's runs so far (any ``C``); the best is the least of their validation errors,
    :math:`\\hat p`, and the reference :func:`reference_of_best` of it.  ``inf`` (no reference) before the
    first run.  The definition; a fit keeps a running best per fold instead (``_fold_runs``: one scan of
    each run's curve, so the search stays linear in the number of values of ``C``), which gives the same
    number, the minimum being exact.
    """
    return reference_of_best(min((run_best_error(run) for run in runs), default=np.inf), n_val, z)


def _validation_size(fit, f):
    """``n_val`` of fold ``f`` for :func:`early_exit_reference`: its validation rows, or their weights' sum."""
    if fit.fold_data is not None:  # the data live elsewhere: the sums were read there, once
        return fit.fold_data.validation_sizes[f]
    validation = fit.folds[f][1]
    return len(validation) if fit.row_weight is None else float(np.sum(fit.row_weight[validation]))


def mean_validation_curve(curves):
    """Pad each fold's curve with its last value to the longest, stack and average.

    Returns ``(per_fold, mean)`` of shapes ``(F, L)`` and ``(L,)``.
    """
    length = max(len(c) for c in curves)
    per_fold = np.empty((len(curves), length))
    for row, curve in zip(per_fold, curves):  # np.pad(mode="edge") per curve costs more than the tiny runs it pads
        row[:len(curve)] = curve
        row[len(curve):] = curve[-1]
    return per_fold, per_fold.mean(axis=0)


def flat_grid(best_errors, n_val):
    """Whether the grid's best errors all lie within one standard error: ``(spread, standard_error, flat)``.

    ``best_errors``: the mean validation error at its own :math:`\\hat k` of each ``C`` (of one binary
    problem: ``cv_results_["best_validation_error"]``, whose NaN — a ``C`` the search did not run — are left
    out); ``n_val``: the validation rows of all folds together
    (with sample weights their sum).  The spread is :math:`\\max_C - \\min_C`; the standard error that of an
    error rate :math:`p` (the least one, at least one row's share, at most 1/2) on ``n_val`` rows,
    :math:`\\sqrt{p (1 - p) / n_\\mathrm{val}}`, as ``early_exit``'s.  ``flat``: spread at most one standard
    error — where rows outnumber features by far, every ``C`` of the grid is weak and the search cannot tell
    them apart: one penalised fit would do.
    """
    best_errors = np.asarray(best_errors, dtype=float)
    best_errors = best_errors[~np.isnan(best_errors)]  # a C the search did not run (search_stopped_)
    spread = float(best_errors.max() - best_errors.min())
    p = min(max(float(best_errors.min()), 1.0 / n_val), 0.5)
    standard_error = float(np.sqrt(p * (1.0 - p) / n_val))
    return spread, standard_error, spread <= standard_error


SEARCH_END_ROWS_PER_COLUMN = 1000
"""Least training rows per column of ``Y`` (:math:`N_\\mathrm{train} / (d + 1)`, the smallest fold's) from which
:func:`flat_search_end` may end a search: "N ≫ d", where every value of the default grid is a weak penalty.  The
data sets of ``linsep bench`` have at most 74 rows per feature: their searches always run the whole grid."""

SEARCH_END_PENALTY_SHARE = 1e-2
"""Largest :math:`C / \\lambda^+` (the penalty against the least eigenvalue of a fold's Gram matrix on its range)
of the last value of ``C`` run for which :func:`flat_search_end` counts the rest of the grid as the same model."""


def gram_range_floor(gram, n_rows):
    """:math:`\\lambda^+`: the least eigenvalue of the Gram matrix ``gram`` of ``n_rows`` rows on its numerical range.

    The range is cut as the ``C = None`` runs cut it
    (:class:`~linsep._core.linalg.LeastSquaresFactor` with ``singular="eigh"``: eigenvalues above
    :math:`\\max(N, p)\\, \\varepsilon \\, \\lambda_\\max`); ``inf`` for a zero matrix.
    """
    evals = np.linalg.eigvalsh(np.asarray(gram, dtype=float))
    kept = evals[evals > evals.max() * max(n_rows, len(evals)) * np.finfo(float).eps]
    return float(kept.min()) if kept.size else np.inf


def flat_search_end(tried, best_errors, n_val, fold_grams, n_train, remaining, floors=None):
    """Whether a search over ``C`` (largest penalty first) may end before ``remaining``: ``None`` or why, a dict.

    It ends when all three hold:

    1. rows outnumber columns by far: ``n_train`` (the smallest fold's training rows) is at least
       :data:`SEARCH_END_ROWS_PER_COLUMN` per column of the folds' Gram matrices;
    2. the remaining values cannot give another model: the last value run, :math:`C_\\mathrm{last}`, is at most
       :data:`SEARCH_END_PENALTY_SHARE` of :math:`\\lambda^+_f` (:func:`gram_range_floor`) for every fold
       :math:`f`.  Every remaining value is smaller (the waves' order, :func:`penalty_order`), and for
       :math:`0 \\le C, C' \\le C_\\mathrm{last}` the W-steps' operators differ by
       :math:`\\lVert (G_f + C \\tilde I)^{-1} - (G_f + C' \\tilde I)^{-1} \\rVert
       \\le C_\\mathrm{last} / (\\lambda^+_f)^2`, a share :math:`C_\\mathrm{last} / \\lambda^+_f` of
       :math:`\\lVert G_f^{+} \\rVert` on the range.  ``None`` (plain HK) is the limit :math:`C \\to 0`: the
       penalised runs' target :math:`\\mathbf{1} + B` is HK's margin vector started at :math:`(1 + b_0)
       \\mathbf{1}` instead of :math:`b_0 \\mathbf{1}`, and HK is homogeneous in its margin vector, so the
       iterates differ by a factor only, their signs not at all;
    3. the values run agree: their best mean validation errors (``best_errors``) lie within one standard error
       on the ``n_val`` validation rows (:func:`flat_grid`), so the evidence agrees with the bound.

    Parameters
    ----------
    tried : list of (float or None)
        The values of ``C`` run, in the order run (at least two).
    best_errors : array-like
        Their least mean validation errors.
    n_val : float
        The validation rows of all folds (with sample weights their sum).
    fold_grams : list of ndarray
        Each fold's Gram matrix :math:`G_f = [X_R, 1]^t [X_R, 1]` of its training rows.
    n_train : int
        The smallest fold's training rows.
    remaining : list of (float or None)
        The values not yet run.
    floors : list of float, optional
        Each fold's :math:`\\lambda^+_f` (:func:`gram_range_floor` of ``fold_grams``), where the caller keeps
        them across waves; computed here if not given.

    Returns
    -------
    dict or None
        ``None``: the search goes on.  Otherwise ``"after_C"`` (the last value run), ``"not_run"``
        (``remaining``), ``"spread"``, ``"standard_error"``, ``"penalty_share"`` (the largest
        :math:`C_\\mathrm{last} / \\lambda^+_f`) and ``"reason"`` (a sentence, what ``verbose`` prints).
    """
    if len(tried) < 2 or not remaining or not fold_grams:
        return None
    n_columns = fold_grams[0].shape[0]
    if n_train < SEARCH_END_ROWS_PER_COLUMN * n_columns:
        return None
    last = tried[-1]
    if last is None or any(c is None or c < last for c in tried[:-1]) or any(
            c is not None and c > last for c in remaining):
        return None  # not the waves' order: the bound speaks of values below the last one run
    spread, standard_error, flat = flat_grid(best_errors, n_val)  # first: no eigenvalues where the values differ
    if not flat:
        return None
    if floors is None:
        floors = [gram_range_floor(gram, n_train) for gram in fold_grams]
    share = max(last / floor for floor in floors)
    if not share <= SEARCH_END_PENALTY_SHARE:
        return None
    reason = (f"search ended after C={last:g}: the best validation errors of the {len(tried)} values of C run lie "
              f"within {spread:.2g} of each other, at most one standard error ({standard_error:.2g} on {n_val:g} "
              f"validation rows), and C={last:g} is {share:.2g} of every fold's least Gram eigenvalue, so the "
              f"{len(remaining)} smaller values not run ({', '.join(str(c) for c in remaining)}) cannot give "
              f"another model")
    return {"after_C": last, "not_run": list(remaining), "spread": spread, "standard_error": standard_error,
            "penalty_share": float(share), "reason": reason}


@dataclass(slots=True)
class CVFitContext(FitContext):
    """The :class:`~linsep.estimators.base.FitContext` of a cross-validated fit: the folds and what their runs share.

    folds, row_weight
        The ``(train, validation)`` row indices of each fold; the rows' weights (``None`` unweighted).
    hk_options
        The HK options of every run of the fit (built once, not per (C, fold)).
    surfaces, shared_C
        With a grid of ``C``: each problem's runs, curves, :math:`\\hat k` and errors per ``C`` (indexed by
        problem), and the index of the ``C`` shared by the problems.
    progress_problem
        The number of problems reported so far (``verbose``).
    X, views, Y, fold_grams, full_gram, view_grams, label_free_fold_grams, fold_of, fold_images
        The per-problem state of the runs (:meth:`HoKashyapClassifierCV._prepare_problem`): the data the runs
        read, whether through views of ``X`` or a formed ``Y``, the folds' Gram matrices (those of the views and
        the label-free ones, built once per fit), each row's fold (the lockstep runs) and each fold's
        :math:`Y^t \\mathbf{1}` (:func:`view_images`).
    search_stopped
        Why the problem's search over ``C`` ended before the grid's end (:func:`flat_search_end`), or ``None``.
    fold_data
        Where the data live outside memory (a device): the folds' designs, Gram matrices and validation sizes
        there (``fit_data.cross_validation``, :meth:`HoKashyapClassifierCV._solve_on_designs`); ``None`` in memory.
    """

    folds: list | None = None
    row_weight: np.ndarray | None = None
    hk_options: dict | None = None
    surfaces: list | None = None
    shared_C: int = 0
    progress_problem: int = 0
    X: object = None
    views: bool = False
    Y: object = None
    fold_grams: list | None = None
    full_gram: np.ndarray | None = None
    view_grams: tuple | None = None
    label_free_fold_grams: list | None = None
    fold_of: np.ndarray | None = None
    search_stopped: dict | None = None
    fold_images: np.ndarray | None = None
    fold_data: object = None


class _CrossValidatedStopping:
    """What the linear and the kernel estimator share: folds, one HK run per fold, :math:`\\hat k`, the verdict, storage.

    A subclass provides ``_run_fold(fit, f, y, C, reference)`` (the early-stopped run of fold
    ``f`` with that ``C`` and the patience's reference error, whose ``history["validation_error"]`` is the fold's
    curve) and ``_refit_run(y, max_iter, C)`` (HK on all rows), and ``_average(runs, y)``
    (``weights, intercept, separates`` of the averaged fold models) for
    ``refit=False``.
    """

    def _make_folds(self, X, y):
        cv = 5 if self.cv is None else self.cv
        if isinstance(cv, Integral):
            folds = stratified_folds(y, int(cv), self.random_state)
        else:
            try:
                folds = [(np.asarray(train), np.asarray(validation))
                         for train, validation in check_cv(cv, y, classifier=True).split(X, y)]
            except (TypeError, ValueError) as exc:
                raise ValueError(f"cv must be an int >= 2, a cross-validation splitter or (train, validation) "
                                 f"index pairs; got {cv!r} ({exc})") from None
        n_samples = y.shape[0]
        for train, validation in folds:
            if len(train) == 0 or len(validation) == 0:
                raise ValueError("every cross-validation fold needs training and validation samples")
            for rows in (train, validation):
                if rows.ndim != 1 or rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n_samples:
                    raise ValueError(f"cv folds must hold row indices in [0, {n_samples}), got {rows!r}")
        return folds

    def _folds_of_kept_rows(self, X, y, kept):
        """The folds over the rows of positive weight, drawn as :meth:`_weighted_folds` draws them.

        ``y``: the labels of every row passed; ``kept``: a boolean flag per row (``None``: every row kept).  An
        int ``cv`` draws its folds on the kept rows' labels; a splitter or index pairs on all rows, then the
        folds lose the others (``linsep.estimators.cv_folds``).  Where the data live outside memory this is
        the drawing, on the host copy of the labels (``X`` is read by a splitter only).
        """
        if kept is None:
            return self._make_folds(X, y)
        if self.cv is None or isinstance(self.cv, Integral):
            return self._make_folds(None, y[kept])
        return folds_without_zero_weight(self._make_folds(X, y), kept)

    def _weighted_folds(self, X, y, sample_weight):
        """:class:`CVFitContext` ``fit`` with ``folds`` and the row weights ``row_weight`` (``None`` unweighted); ``X, y``.

        A row of weight 0 leaves before the folds of an int ``cv`` are drawn;
        the folds of a splitter or of index pairs are drawn on the rows as
        passed, then lose such rows (``linsep.estimators.cv_folds``).
        """
        weights = self._sample_weight(X, y, sample_weight)
        kept = rows_with_weight(weights)
        drawn_here = self.cv is None or isinstance(self.cv, Integral)  # folds drawn by stratified_folds
        if kept is not None and drawn_here:
            X, y, weights = self._drop_rows(X, y, weights, kept)
        folds = self._make_folds(X, y)
        if kept is not None and not drawn_here:
            folds = folds_without_zero_weight(folds, weights)
            X, y, weights = self._drop_rows(X, y, weights, kept)
        return CVFitContext(folds=folds, row_weight=weights), X, y

    def _drop_rows(self, X, y, weights, kept):
        return X[kept], y[kept], weights[kept]

    def _hk_options(self):
        # Early-stopped runs never stop at separation (as HKES): the validation
        # error may still fall after the training data are separated.
        options = HKParams.from_estimator(self, stop_at_separation=False).solver_kwargs()
        # Given per run: the folds' budget, C and patience; the refit's trace.
        for name in ("max_iter", "record_history", "C", "n_iter_no_change", "validation_tol"):
            del options[name]
        return options

    def _C_grid(self):
        """The values of ``C`` tried: ``[C]`` for ``Cs=None``, an int's default grid, or the given list."""
        if self.Cs is None:
            return [self.C]
        if isinstance(self.Cs, Integral):
            return default_C_grid(int(self.Cs))
        grid = [None if c is None else float(c) for c in self.Cs]
        if not grid or any(c is not None and not (np.isfinite(c) and c >= 0) for c in grid):
            raise ValueError(f"Cs must be None, an int >= 1 or a non-empty list of None or numbers >= 0; "
                             f"got {self.Cs!r}")
        return grid

    def _fold_runs(self, fit, y, grid):
        """``runs[c][f]``: the early-stopped run of fold ``f`` with ``C = grid[c]``.

        With ``early_exit`` and several values of ``C``, the values run in waves from the largest penalty to
        the smallest (``None`` last: :func:`penalty_order`), the folds of a wave side by side (``n_jobs``);
        each fold run is given the reference error of the waves before it on its fold
        (:func:`early_exit_reference`, kept as a running best per fold: linear in the number of values of ``C``).  The waves make the references, and so the runs, the same for any
        ``n_jobs``.  After a wave the search may end (:meth:`_search_end`, ``fit.search_stopped``): the values
        of ``C`` not run keep ``None`` runs.
        """
        n_folds = len(fit.folds)
        waves = [list(range(len(grid)))] if self.early_exit is None else [[c] for c in penalty_order(grid)]
        runs = [[None] * n_folds for _ in grid]
        fit.search_stopped = None
        # early_exit's running best per fold: each run's curve is scanned once, when its wave ends (the rule
        # of early_exit_reference over all earlier runs, without re-reading them wave after wave)
        best = [np.inf] * n_folds
        # what _search_end reads once per fit: each value's least mean validation error, the folds' λ⁺
        search_memo = {"best": {}, "floors": None}
        n_val = [_validation_size(fit, f) for f in range(n_folds)] if self.early_exit is not None else None
        run_fold, report, close = self._progress(fit, grid, len(grid) * n_folds)
        try:
            for done_waves, wave in enumerate(waves, start=1):
                references = [np.inf] * n_folds
                if self.early_exit is not None:
                    references = [reference_of_best(best[f], n_val[f], self.early_exit) for f in range(n_folds)]
                tasks = [(c, f) for c in wave for f in range(n_folds)]
                group = self._lockstep_group(fit) if self.n_jobs in (None, 1) and len(tasks) > 1 else 0
                if group > 1:
                    # the wave's runs side by side, one read of X per iteration (the same runs, bit for bit), in
                    # groups whose vectors stay within a share of X (_lockstep_group)
                    done = []
                    for first in range(0, len(tasks), group):
                        part = tasks[first:first + group]
                        lockstep, start = self._lockstep(fit, y), time.perf_counter()
                        runs_done = lockstep.results([self._run_fold(fit, f, y, grid[c], references[f],
                                                                     lockstep=lockstep) for c, f in part])
                        seconds = (time.perf_counter() - start) / len(part)
                        for (c, f), run in zip(part, runs_done):
                            report(f, grid[c], run, seconds)
                        done += runs_done
                elif self.n_jobs in (None, 1) or len(tasks) == 1:
                    done = [run_fold(fit, f, y, grid[c], references[f]) for c, f in tasks]
                else:
                    from joblib import Parallel, delayed

                    done = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                        delayed(run_fold)(fit, f, y, grid[c], references[f]) for c, f in tasks)
                for (c, f), run in zip(tasks, done):
                    runs[c][f] = run
                    if self.early_exit is not None:
                        best[f] = min(best[f], run_best_error(run))
                if done_waves < len(waves):
                    fit.search_stopped = self._search_end(fit, grid, runs, waves[:done_waves], search_memo)
                    if fit.search_stopped is not None:
                        if self.verbose:
                            print(f"[{type(self).__name__}] problem {fit.progress_problem}: "
                                  f"{fit.search_stopped['reason']}", flush=True)
                        break
        finally:
            close()
        return runs

    def _search_end(self, fit, grid, runs, waves_done, memo):
        """``None``, or why the waves after ``waves_done`` need not run (:func:`flat_search_end`); ``fit.fold_grams``.

        Only with ``early_exit`` (the waves, largest penalty first) and the squared loss (the bound is on the
        fixed Gram matrices of the folds, which IRLS reweights); the kernel twin has no such matrices.
        ``memo``: what is read once per fit, not once per wave (filled here): ``"best"``, the least mean
        validation error of each value of ``C`` run; ``"floors"``, each fold's :func:`gram_range_floor`.
        """
        if fit.fold_grams is None or self.loss != "squared" or len(waves_done) < 2:
            return None
        n_train = min(len(train) for train, _ in fit.folds)
        if n_train < SEARCH_END_ROWS_PER_COLUMN * fit.fold_grams[0].shape[0]:
            return None  # first, at no cost: it rules out most searches, which then stay linear in the grid
        tried = [c for wave in waves_done for c in wave]
        n_val = sum(_validation_size(fit, f) for f in range(len(fit.folds)))
        best = memo["best"]
        for c in tried:
            if c not in best:
                best[c] = mean_validation_curve([r.history["validation_error"] for r in runs[c]])[1].min()
        if memo["floors"] is None:
            memo["floors"] = (fit.fold_data.range_floors(n_train) if fit.fold_data is not None else
                              [gram_range_floor(gram, n_train) for gram in fit.fold_grams])
        run = set(tried)
        return flat_search_end([grid[c] for c in tried], [best[c] for c in tried], n_val, fit.fold_grams, n_train,
                               [grid[c] for c in range(len(grid)) if c not in run], floors=memo["floors"])

    def _search_on_folds(self, folds):
        """``(results, problems)`` of a fit where the data live: the search and the refit of each of
        ``folds.problems`` on the fit data's folds (``folds``: ``fit.fold_data``), as :meth:`_fit_problems` in memory."""
        cv_fit = CVFitContext(folds=folds.folds, fold_data=folds, hk_options=self._hk_options())
        if self.Cs is not None:
            self._search_grid(cv_fit, None, folds.problems)
        results = []
        for column, problem in enumerate(folds.problems):
            cv_fit.problem = column
            results.append(self._solve_binary(None, problem, cv_fit))
        return results, folds.problems

    def _lockstep_group(self, fit):
        """How many runs of a wave go side by side (:class:`HoKashyapClassifierCV`, :meth:`_lockstep`); 0: each alone."""
        return 0

    def _progress(self, fit, grid, n_tasks):
        """``(run_fold, close)``: ``_run_fold`` reporting each (C, fold) run as ``verbose`` asks.

        ``verbose=1``: a tqdm progress bar when tqdm is installed (an optional extra), else one line per
        run; ``verbose >= 2``: one line per run (problem, C, fold, k̂, its validation error, n_iter, seconds).
        """
        if not self.verbose:
            return self._run_fold, lambda f, C, run, seconds: None, lambda: None
        problem = fit.progress_problem = fit.progress_problem + 1
        name, n_folds = type(self).__name__, len(fit.folds)
        bar = None
        if self.verbose == 1:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                bar = tqdm(total=n_tasks, desc=f"{name} problem {problem}", unit="run", leave=False)

        def report(f, C, run, seconds):
            if bar is not None:
                bar.update(1)
            else:
                curve = (run.history or {}).get("validation_error")
                k = int(np.argmin(curve)) + 1 if curve is not None and len(curve) else 0
                error = f"{float(curve[k - 1]):.4f}" if k else "nan"
                shared = " (its share of a wave run in lockstep)" if (run.extra or {}).get("plan", {}).get(
                    "lockstep") else ""
                print(f"[{name}] problem {problem} C={C} fold {f + 1}/{n_folds}: best k {k}, validation error "
                      f"{error}, {run.n_iter} iterations, {seconds:.2f} s{shared}", flush=True)

        def run_fold(fit, f, y, C, reference):
            start = time.perf_counter()
            run = self._run_fold(fit, f, y, C, reference)
            report(f, C, run, time.perf_counter() - start)
            return run

        return run_fold, report, (lambda: None) if bar is None else bar.close

    def _fit_problems(self, X, y, fit=None, extra_targets=None, **fit_params):
        # One-vs-rest with a grid of C: one C for every problem.  predict compares the problems'
        # scores, and C scales them: each problem's own best C would make them incomparable.  The C
        # kept minimises the sum over the problems of their cross-validation error at their own k̂.
        fit.surfaces = None
        fit.hk_options = self._hk_options()  # the same for every run of the fit: built once, not per (C, fold)
        if self.Cs is not None:
            # in the solver's sign, as the refit's (pos_label); the folds are drawn on the labels themselves
            targets = self._positive_sign() * encode_pm1(y, self.classes_)[0]
            self._search_grid(fit, self._solver_input(X, fit), [targets[:, c] for c in range(targets.shape[1])])
        return super()._fit_problems(X, y, fit, extra_targets=extra_targets, **fit_params)

    def _search_grid(self, fit, X, problems):
        """The surfaces of the grid of ``C`` of every problem (``problems``: what ``_run_fold`` takes as ``y``) and
        the ``C`` they share (``fit.surfaces``, ``fit.shared_C``)."""
        fit.surfaces = [self._surface(fit, X, y) for y in problems]
        fit.shared_C = self._choose_C(fit.surfaces)
        if self.verbose and len(self._C_grid()) > 1:
            self._report_flat_grid(fit)

    def _surface(self, fit, X, y):
        """Per :math:`C` of one binary problem: the runs, the mean curves, :math:`\\hat k`, the mean error there; and
        why the search ended early (``None``: it ran the whole grid).

        A value of ``C`` the search did not run (:func:`flat_search_end`) has no runs (``None``), no curve
        (``None``), :math:`\\hat k = 0` and a NaN error.
        """
        self._prepare_problem(fit, X, y, fold_runs=True)
        runs_per_C = self._fold_runs(fit, y, self._C_grid())
        curves = [None if runs[0] is None else mean_validation_curve([r.history["validation_error"] for r in runs])
                  for runs in runs_per_C]
        best_iters = np.array([0 if curve is None else int(np.argmin(curve[1])) + 1  # argmin: the first minimiser
                               for curve in curves])
        best_errors = np.array([np.nan if curve is None else curve[1][k - 1] for curve, k in zip(curves, best_iters)])
        return runs_per_C, curves, best_iters, best_errors, fit.search_stopped

    def _report_flat_grid(self, fit):
        """``verbose``: say where every ``C`` of the grid reaches the same error within one standard error."""
        n_val = sum(_validation_size(fit, f) for f in range(len(fit.folds)))
        # per one-vs-rest problem; the grid is flat where it is flat for every problem
        verdicts = [flat_grid(surface[3], n_val) for surface in fit.surfaces]
        spread, standard_error, _ = max(verdicts, key=lambda v: v[0] - v[1])
        flat = all(v[2] for v in verdicts)
        name = type(self).__name__
        if flat:
            run = int(np.sum(~np.isnan(fit.surfaces[0][3])))
            values = f"all {run} values of C" if run == len(self._C_grid()) else f"the {run} values of C run"
            print(f"[{name}] the best validation errors of {values} lie within "
                  f"{spread:.2g} of each other, less than one standard error ({standard_error:.2g} on "
                  f"{n_val:g} validation rows): the search cannot tell them apart here, and one fit with a "
                  f"fixed C (Cs=None, C={self._C_grid()[fit.shared_C]}) would do", flush=True)
        else:
            print(f"[{name}] the best validation errors over C spread {spread:.2g}, above one standard error "
                  f"({standard_error:.2g} on {n_val:g} validation rows)", flush=True)

    def _choose_C(self, surfaces):
        """Index in the grid of the ``C`` shared by the problems: least sum of their errors at their own :math:`\\hat k`.

        A ``C`` some problem's search did not run (NaN) is not chosen.
        """
        total = np.sum([surface[3] for surface in surfaces], axis=0)
        return int(np.argmin(np.where(np.isnan(total), np.inf, total)))  # ties: the first C

    def _prepare_problem(self, fit, X, y, fold_runs):
        """Per-problem state of the fold runs (``fold_runs``) and of the refit (none by default)."""

    def _solve_binary(self, X, y, fit):
        grid = self._C_grid()
        if fit.surfaces:  # a grid of C: the problems' surfaces are known, in order, and the C chosen
            runs_per_C, curves, best_iters, best_errors, stopped = fit.surfaces[fit.problem]
            chosen = fit.shared_C
            self._prepare_problem(fit, X, y, fold_runs=False)
        else:
            runs_per_C, curves, best_iters, best_errors, stopped = self._surface(fit, X, y)
            chosen = 0
        C, runs, (per_fold, mean), best_iter = grid[chosen], runs_per_C[chosen], curves[chosen], int(best_iters[chosen])
        if self.refit:
            final = self._refit_run(fit, y, best_iter - 1, C)
            weights, intercept, n_iter = final.weights, final.intercept, final.n_iter
            margin, history, status, certificate = final.margin, final.history, final.status, final.certificate
            if status == MAX_ITER:  # stopped at k̂ as planned
                status = CONVERGED
        else:
            weights, intercept, separates = self._average(fit, runs, y)
            n_iter, margin, history, certificate = max(r.n_iter for r in runs), None, None, None
            status = SEPARABLE if separates else CONVERGED
        if isinstance(X, np.ndarray) and X.dtype == np.float32:
            # float32 data give a float32 model, as the Ho–Kashyap family's (the formed Y's runs are float64)
            weights = np.asarray(weights).astype(np.float32)
        if status == CONVERGED:
            proofs = [(f, r) for f, r in enumerate(runs) if r.certificate is not None]
            if proofs:  # a subset that cannot be separated proves that the whole set cannot
                f, run = proofs[0]
                if fit.fold_data is not None:  # zero off the fold's rows, where the data live
                    certificate = fit.fold_data.whole(f, run.certificate)
                else:
                    certificate = np.zeros(y.shape[0])
                    certificate[fit.folds[f][0]] = run.certificate
                status = NOT_SEPARABLE
            elif any(r.status == MAX_ITER for r in runs):
                status = MAX_ITER
        length = max(len(curve[1]) for curve in curves if curve is not None)
        surface = {"C": np.array([np.nan if c is None else c for c in grid]),
                   "mean_validation_error": np.vstack([np.full(length, np.nan) if curve is None else
                                                       np.pad(curve[1], (0, length - len(curve[1])), mode="edge")
                                                       for curve in curves]),
                   "best_iter": best_iters, "best_validation_error": best_errors,
                   "fold_n_iter": np.array([[0 if r is None else r.n_iter for r in runs_C]
                                            for runs_C in runs_per_C])}
        return SolveResult(weights=weights, intercept=intercept, n_iter=n_iter, status=status, margin=margin,
                           certificate=certificate, history=history, best_iter=best_iter,
                           extra={"cv_curve": mean, "cv_curves": per_fold, "C": C, "cv_results": surface,
                                  "search_stopped": stopped})

    def _store_outputs(self, results, fit):
        binary = len(results) == 1
        pick = (lambda values: values[0]) if binary else list
        self.certificate_ = pick([r.certificate for r in results])
        if self.refit:
            self.margin_vector_ = pick([r.margin for r in results])
        elif hasattr(self, "margin_vector_"):  # from an earlier fit with refit
            del self.margin_vector_
        self.best_iter_ = results[0].best_iter if binary else np.array([r.best_iter for r in results])
        self.cv_curve_ = pick([r.extra["cv_curve"] for r in results])
        self.cv_curves_ = pick([r.extra["cv_curves"] for r in results])
        self.C_ = results[0].extra["C"]  # one C for every one-vs-rest problem
        self.cv_results_ = pick([r.extra["cv_results"] for r in results])
        self.search_stopped_ = pick([r.extra["search_stopped"] for r in results])


_CV_NOT_OFFERED = {
    "update": "the runs are HKES runs (W = Y⁺B)",
    "stop_at_separation": "early-stopped runs never stop at separation (the validation error may still fall)",
}
"""The HK parameters (:data:`~linsep.solvers.ho_kashyap.params.HK_PARAMETERS`) the cross-validated estimators do not offer, and why."""

_CV_HK_NAMES = ("loss", "C", *(name for name in HK_PARAMETERS if name not in {"loss", "C", *_CV_NOT_OFFERED}))
"""The HK parameters of the cross-validated estimators: every one of the table but :data:`_CV_NOT_OFFERED` (C by the
grid ``Cs``), so a parameter added to the table reaches them (their runs take it through ``HKParams``)."""

_CV_PARAMETERS = {
    "cv": 5, **hk_defaults(_CV_HK_NAMES), "Cs": None, "refit": True, "n_iter_no_change": DEFAULT_N_ITER_NO_CHANGE,
    "validation_tol": 0.0, "class_weight": None, "n_jobs": None, "record_history": False, "random_state": None,
    "pos_label": None, "verbose": 0, "early_exit": 2.0,
}
"""The parameters of :class:`HoKashyapClassifierCV` with their defaults (the kernel twin adds its kernel's)."""


class HoKashyapClassifierCV(_CrossValidatedStopping, BaseLinearSeparator):
    """Ho–Kashyap with early stopping chosen by cross-validation, then refitted on all data.

    linsep's extension of HKES / HKESA (Lauer & Bloch 2006, §2.3–2.4) beyond
    the paper: the stopping iteration :math:`\\hat k` is the first minimiser of the
    validation error averaged over ``cv`` folds, and the model is
    Ho–Kashyap on the whole training set stopped at :math:`\\hat k` (see the module
    docstring for the equations).

    Parameters
    ----------
    cv : int, cross-validation splitter or iterable, default=5
        An int: that many stratified folds, shuffled with ``random_state``.
        Otherwise anything :func:`sklearn.model_selection.check_cv` accepts
        (a splitter such as ``KFold``, or ``(train, validation)`` index pairs).
    loss : {"squared", "absolute"}, default="squared"
        HKES (:math:`D = I`) or HKESA (IRLS weights :math:`D_k = \\operatorname{diag}(1 / |e_i|)`).
    C : float or None, default=None
        ``None``: HK, as HKES.  A number: Łęski's regularised MHKS / MHKA
        (target :math:`\\mathbf{1} + B`, penalty :math:`C \\, w^t w`), early-stopped the same way.
        Used when ``Cs`` is ``None``.
    Cs : None, int or list of (float or None), default=None
        ``None``: only ``C`` (:math:`\\hat k` alone is tuned).  A list: the values of
        ``C`` tuned jointly with :math:`\\hat k` from the same folds (``None`` in it
        stands for plain HK).  An int :math:`n`: ``C=None`` and :math:`n - 1` values
        from :math:`10^{-2}` to :math:`10^3` on a log scale (``default_C_grid``; ``7`` is
        ``linsep bench``'s ``hkes_cv_c`` column).
    refit : bool, default=True
        ``True``: the model is :math:`W_{\\hat k}` of Ho–Kashyap on all training data.
        ``False``: no refit; the model is the average of the ``cv`` fold
        models, each one the HKES model of its fold (weights at that fold's
        own validation minimum), as ``LogisticRegressionCV(refit=False)``
        averages the fold coefficients at each fold's best ``C``.  A linear
        model's decision function is linear in its weights, so this is
        the fold models' average decision function.
    learning_rate : float, default=0.4
        :math:`\\mu` of :math:`B \\leftarrow B + \\mu \\, (E + |E|)`, :math:`0 < \\mu < 1`.
    b0 : float, default=1e-6
        Initial margin :math:`B_0 = b_0 \\mathbf{1}`.
    max_iter : int, default=10000
        Largest number of margin updates of each fold's run.
    tol : float or None, default=1e-6
        Tolerance of ``stopping`` (see :class:`~linsep.HoKashyapClassifier`).
    stopping : {"relative", "paper"}, default="relative"
        Where each fold's run stops (:math:`k^*_f`): the HK stopping rule, as HKES.
    irls_floor : float, default=1e-6
        Floor of :math:`|e_i|` relative to :math:`\\max |e|` in the IRLS weights.
    n_iter_no_change : int or None, default=100
        Patience of each fold's run: it stops once its validation error has
        not improved for this many iterations.  ``None``: every run goes to
        the Ho–Kashyap stopping point (``linsep bench``'s ``hkes_cv`` and
        ``hkesa_cv`` columns).
    validation_tol : float, default=0.0
        Least fall of the validation error (a fraction) that resets the patience.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight`` (as in
        :class:`~linsep.HoKashyapClassifier`; ``"balanced"`` is computed on
        all rows passed to ``fit``): they weigh the fold runs, the refit and
        the validation errors.
    n_jobs : int or None, default=None
        Folds (and values of ``C``) run in parallel on this many joblib threads (the compiled
        Ho–Kashyap loop releases the GIL); ``None``: one after the other.
    record_history : bool or int, default=False
        Keep the refit's per-iteration traces in ``history_`` (``True``: every
        iteration, an int ``n``: every ``n``-th; see :ref:`trace-format`);
        the fold runs keep only their validation curves.
    random_state : int, RandomState or None, default=None
        Seed of the folds of an int ``cv``.
    verbose : int, default=0
        Progress of the (C, fold) runs: ``0`` silent; ``1`` a progress bar per one-vs-rest problem when
        tqdm is installed (else as ``2``); ``2`` one printed line per run (problem, ``C``, fold, its
        best :math:`k`, that validation error, iterations, seconds).
    early_exit : float or None, default=2.0
        Early exit of hopeless runs, with several values of ``C``: they run from the largest penalty to the
        smallest (``None`` last), and a fold's run stops after ``n_iter_no_change`` iterations unless its
        validation error comes within ``early_exit`` standard errors
        (:math:`\\sqrt{p (1 - p) / n_\\mathrm{val}}`) of the best error an earlier ``C`` reached on that
        fold, however its own error still falls.  Its curve then ends there (a shorter curve is extended with
        its last value), so such a ``C`` is chosen only if it wins all the same.  On text the weakly
        penalised runs (``C = 0.01``) fall for hundreds of iterations to errors far above the best; this
        saves them.  The waves also let the search end early where rows outnumber columns by far, the values
        left are weak penalties against every fold's Gram matrix and the values run agree within one standard
        error (``linsep.estimators.ho_kashyap_cv.flat_search_end``; ``search_stopped_``).  ``None``: every
        run goes on until its own patience runs out, and every ``C`` runs (the full search).  Without
        ``n_iter_no_change`` it has no effect on the runs.
    {pos_label}
        The folds are drawn on the labels, so they do not depend on it; the
        fold runs, the choice of :math:`\\hat k` and the refit run in its convention.

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray
    best_iter_ : int or ndarray of shape (K,)
        :math:`\\hat k`, one per class for more than two classes (one-vs-rest): the
        index of the iterate kept, counted as HKES's ``best_iter_`` (:math:`k = 1`
        is the first least-squares solution), so the refit equals
        ``HoKashyapClassifier(max_iter=best_iter_ - 1, stop_at_separation=False)``
        on all data.
    cv_curve_ : ndarray of shape (L,), or list of them per class
        Mean validation error (fraction) of :math:`W_k`, :math:`k = 1, \\dots, L`; entry
        :math:`\\hat k - 1` is its minimum.
    cv_curves_ : ndarray of shape (n_folds, L), or list of them per class
        Each fold's curve, extended with its last value to the longest run
        (for the chosen :math:`C`).
    C_ : float or None
        The chosen :math:`C` (``None`` for plain HK), one for all one-vs-rest
        problems.
    cv_results_ : dict, or list of dicts per class
        The cross-validation surface: ``"C"`` (the grid, NaN for ``None``),
        ``"mean_validation_error"`` of shape (n_C, L) (row ``c``: the mean
        curve of ``C = Cs[c]``, extended with its last value),
        ``"best_iter"`` and ``"best_validation_error"`` (per :math:`C`: its
        :math:`\\hat k` and the mean error there), ``"fold_n_iter"`` of shape
        (n_C, n_folds) (the iterations each fold's run made: where ``early_exit``
        stopped it, or its patience, or the Ho–Kashyap rule).  Drawn by
        :func:`linsep.inspection.plot_cv_surface`.  A ``C`` the search did not run (``search_stopped_``)
        has NaN errors, ``best_iter`` 0 and ``fold_n_iter`` 0, and is never chosen.
    search_stopped_ : dict, None or list
        ``None``: the whole grid ran.  Otherwise why the search over ``C`` ended early
        (``linsep.estimators.ho_kashyap_cv.flat_search_end``): ``"after_C"`` (the last value run),
        ``"not_run"``, ``"spread"`` and ``"standard_error"`` of the best errors of the values run, ``"penalty_share"``
        (:math:`C / \\lambda^+` of the last value run) and ``"reason"`` (what ``verbose`` prints).  One per
        problem for more than two classes.
    n_iter_ : int or ndarray of shape (K,)
        ``refit=True``: index :math:`k` of the final iterate of the refit, which
        is :math:`\\hat k` unless the refit met a verdict or its stopping rule first.
        ``refit=False``: the longest fold run.
    status_ : str or ndarray of str
        ``"separable"``: the model puts every row passed to ``fit`` strictly
        on its side (every fold's validation rows included: the verdict is
        checked on all of them, never on a fold).
        ``"not_separable"``: the refit, or a fold's run (a subset that cannot
        be separated proves the whole set cannot), found the proof in
        ``certificate_``.  ``"max_iter"`` (with a ConvergenceWarning): a fold's
        run used its whole ``max_iter`` budget, so its curve may be cut short.
        ``"converged"`` otherwise — the planned stop at :math:`\\hat k` or, earlier, the
        refit's stopping rule.
    certificate_ : ndarray, None or list
        For ``"not_separable"``: :math:`u \\ge 0`, :math:`u \\ne 0` with :math:`Y^t u = 0` on
        the whole training set (a fold's proof, zero outside its rows).
    margin_vector_ : ndarray or list
        The refit's final margin vector :math:`B` (absent without refit).
    history_ : dict or list of dict
        The refit's traces, with ``record_history`` and ``refit=True``: its
        last row is the model, iterate ``n_iter_``.

    See Also
    --------
    HoKashyapClassifier : HKES with ``early_stopping=True`` (one held-out split, no refit).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from linsep import HoKashyapClassifierCV
    >>> X, y = make_classification(n_samples=120, random_state=0)
    >>> clf = HoKashyapClassifierCV(random_state=0).fit(X, y)
    >>> clf.cv_curves_.shape[0], clf.cv_curve_[clf.best_iter_ - 1] == clf.cv_curve_.min()
    (5, np.True_)
    """

    _parameter_constraints = {
        "cv": ["cv_object"],
        **{name: HK_CONSTRAINTS[name] for name in _CV_HK_NAMES},
        "Cs": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
        "refit": ["boolean"],
        **PATIENCE_CONSTRAINTS,
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "n_jobs": [None, Integral],
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "random_state": ["random_state"],
        "pos_label": POS_LABEL_CONSTRAINT,
        "verbose": ["verbose"],
        "early_exit": [None, Interval(Real, 0, None, closed="left")],
    }

    __init__ = estimator_init(_CV_PARAMETERS)

    _dtypes = READS_FLOAT32  # float32 X is not copied to float64: large data's runs read it as it is

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Choose :math:`\\hat k` by cross-validation on ``X, y`` and fit (see the class docstring).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), optional
            Non-negative weight :math:`s_i` per row, multiplied by the weights of
            ``class_weight`` (:ref:`weights`): every fold's run and the refit
            minimise the weighted criterion of
            :class:`~linsep.HoKashyapClassifier`, and each fold's validation
            error is the weighted share of its misclassified rows.  A row of
            weight 0 is removed before the folds of an int ``cv`` are drawn
            (the fit of the data without it); the folds of a splitter or of
            index pairs are drawn on the rows as passed, then lose such rows.

        Returns
        -------
        self : object
            The fitted estimator: the refit on all of ``X`` stopped after :math:`\\hat k`
            iterates (or, with ``refit=False``, the average of the fold models).
        """
        elsewhere = self._fit_on_backend(X, y, sample_weight=sample_weight)
        if elsewhere is not None:  # the data's own device: the same search there (_solve_on_designs)
            return elsewhere
        X, y = self._validate_fit(X, y)
        fit, X, y = self._weighted_folds(X, y, sample_weight)
        return self._fit_problems(X, y, fit)

    _backends = (DEVICE,)  # the folds' runs and the refit on the input's device (row blocks: refused)
    _device_traces = True  # the refit's trace recorded where the data live (fit_data.recorder)

    def _refuse_on_backend(self, where):
        # every HK parameter of the CV is honoured where the data live; one added later is refused until it is
        refuse_unsupported(HKParams.from_estimator(self), HKParams.neutral(), where, HK_SUPPORTED | {"record_history"})

    def _solve_on_designs(self, data, fit, **ignored):
        """``(results, problems)``: the search and the refit of each problem where the data live (a device).

        The steps of the in-memory fit on the fit data's designs (``data.cross_validation``): the folds drawn
        on the host copy of the labels as in memory (:meth:`_folds_of_kept_rows`), each (C, fold) run on the
        fold's rows of ``X`` read in place, the folds' Gram matrices there (all rows' less the validation
        rows' where the folds partition the rows, :func:`_folds_partition`), the same waves, early exits and
        early end of the search, the same :math:`\\hat k` and ``C``, the refit on all rows.
        """
        folds = data.cross_validation(self._folds_of_kept_rows, _folds_partition,
                                      powers=(0.5, 1) if self.loss == "absolute" else (0.5,))
        return self._search_on_folds(folds)

    def _prepare_problem(self, fit, X, y, fold_runs):
        if fit.fold_data is not None:  # the folds' designs and Gram matrices where the data live
            fit.views, fit.Y = False, None
            fit.fold_grams, fit.full_gram = fit.fold_data.fold_grams, fit.fold_data.full_gram
            return
        fit.X = X  # weighted runs scale the rows of X themselves (linsep.designs.weights)
        fit.views = self._fold_views(X, fit)
        if fit.views:
            # Large dense data: each run reads the rows of X it needs (SignedDesign views: the compiled loop
            # gathers them by index), so no fold copies Y; the folds' Gram matrices are built once, label free.
            fit.Y = None
            if fit.view_grams is None:
                fit.view_grams = view_grams(X, fit.folds)
            fit.fold_grams, fit.full_gram = fit.view_grams
            # Yᵀ1 of each fold's training rows, for their first W-steps (HKPlan.first_image): one pass
            fit.fold_images = view_images(X, y, self._fold_of(fit)) if fold_runs and fit.full_gram is not None \
                else None
            return
        fit.Y = sign_normalized(X, y)  # one matrix per problem; the folds take its rows
        fit.fold_grams = fit.full_gram = None
        if fold_runs and self.Cs is not None:
            if fit.label_free_fold_grams is None:
                s = fit.row_weight
                # The Gram matrix of the rows the fold's runs iterate on: √s_i y_i (x_i, 1) (s_i for IRLS).  The
                # labels square to 1, so every one-vs-rest problem has the same bits: built for the first only.
                Y = fit.Y if s is None else weighted_signed_design(X, y, s, 1 if self.loss == "absolute" else 0.5)
                fit.label_free_fold_grams = ([Y[train].T @ Y[train] for train, _ in fit.folds]
                                             if isinstance(Y, np.ndarray) else [])
            fit.fold_grams = fit.label_free_fold_grams or None

    def _fold_views(self, X, fit):
        """Whether the runs read the rows of ``X`` through views (large dense unweighted data) or a formed ``Y``.

        ``_fold_design`` (private, tests): ``"views"`` or ``"formed"`` forces the path; by default the views from
        :data:`VIEW_MIN_ENTRIES` entries of ``Y`` on (below, ``Y`` formed once per problem, as the paper's small
        data sets always were).
        """
        if fit.row_weight is not None or not isinstance(X, np.ndarray):
            return False
        forced = getattr(self, "_fold_design", None)
        if forced is not None:
            return forced == "views"
        return X.shape[0] * (X.shape[1] + 1) >= VIEW_MIN_ENTRIES

    def _lockstep_group(self, fit):
        """Runs of a wave that go side by side in one :meth:`_lockstep` (0: each alone).

        Where the runs read float32 ``X`` through views and the folds partition its rows (:func:`view_grams`
        then has the full Gram matrix), the runs of a wave share one read of ``X`` per iteration, as many at
        once as keep their vectors (``B``, ``E`` and the next ``B`` of each, in the type of ``X``) within
        :data:`LOCKSTEP_SHARE_OF_X` of ``X.nbytes``, at least two.  The private attribute
        ``_lockstep_runs = False`` (tests) keeps every run alone.
        """
        if (not fit.views or fit.full_gram is None or getattr(self, "_lockstep_runs", True) is False
                or not Lockstep.serves(fit.X)):
            return 0
        n_train = max(len(train) for train, _ in fit.folds)
        return max(2, int(LOCKSTEP_SHARE_OF_X * fit.X.nbytes // (3 * n_train * fit.X.itemsize)))

    def _lockstep(self, fit, y):
        """A :class:`~linsep.solvers.ho_kashyap.segments.Lockstep` for runs of a wave on ``fit.X`` (:meth:`_lockstep_group`)."""
        return Lockstep(fit.X, y, self._fold_of(fit), threads=pass_threads(fit.X.size))

    def _fold_of(self, fit):
        """Each row's fold (the one it validates), where the folds partition the rows (``fit.full_gram``)."""
        if fit.fold_of is None:
            fit.fold_of = np.empty(fit.X.shape[0], dtype=np.int64)
            for f, (_, validation) in enumerate(fit.folds):
                fit.fold_of[validation] = f
        return fit.fold_of

    def _run_fold(self, fit, f, y, C, reference=np.inf, lockstep=None):
        train, validation = fit.folds[f]
        # Every C of the grid reuses the fold's Gram matrix YᵀY (each run factors YᵀY + CĨ once).
        gram = None if fit.fold_grams is None else fit.fold_grams[f]
        # With a refit only the folds' validation curves are read: their inexact W-steps (wide X) are not
        # re-solved in full at the end (hundreds of CG iterations per run); the average of refit=False is.
        plan = {"polish": False} if self.refit else {}
        if fit.views:
            plan["singular"] = "eigh"  # a singular system without C: no dense copy of Y for its SVD
            if fit.fold_images is not None:
                plan["first_image"] = fit.fold_images[f]  # no pass over X of the run's own for its W_1
        if fit.fold_data is not None:  # ``y``: the problem's designs where the data live; the fold's rows in place
            run = fit.fold_data.fold(f, y)
            plan["validation_reference"] = reference
            if run.weights is None:
                return ho_kashyap(run.design, Y_val=run.validation, max_iter=self.max_iter, C=C, gram=gram,
                                  n_iter_no_change=self.n_iter_no_change, validation_tol=self.validation_tol,
                                  plan=plan, **fit.hk_options)
            params = dict(fit.hk_options, max_iter=self.max_iter, C=C, n_iter_no_change=self.n_iter_no_change,
                          validation_tol=self.validation_tol)
            return scaled_ho_kashyap(run.scaled, run.weights, params, gram=gram, Y_val=run.validation, plan=plan)
        s = fit.row_weight
        if s is not None:
            params = dict(fit.hk_options, max_iter=self.max_iter, C=C, n_iter_no_change=self.n_iter_no_change,
                          validation_tol=self.validation_tol)
            return weighted_ho_kashyap(fit.X, y[train], train, s[train], params, gram=gram,
                                       Y_val=WeightedValidation(fit.Y[validation], s[validation]),
                                       plan=dict(plan, validation_reference=reference))
        if fit.views:
            Y, Y_val = SignedDesign(fit.X, y[train], train), SignedDesign(fit.X, y[validation], validation)
        else:
            Y, Y_val = fit.Y[train], fit.Y[validation]
        return ho_kashyap(Y, Y_val=Y_val, max_iter=self.max_iter, C=C, gram=gram,
                          n_iter_no_change=self.n_iter_no_change, validation_tol=self.validation_tol,
                          plan=dict(plan, validation_reference=reference,
                                     lockstep=None if lockstep is None else (lockstep, f)), **fit.hk_options)

    def _refit_run(self, fit, y, max_iter, C):
        if fit.fold_data is not None:  # ``y``: the problem's designs on all rows, where the data live
            trace = fit.fold_data.recorder(self.record_history)
            if y.weights is None:
                return ho_kashyap(y.design, max_iter=max_iter, C=C, record_history=bool(self.record_history),
                                  gram=fit.full_gram, trace=trace, **fit.hk_options)
            params = dict(fit.hk_options, max_iter=max_iter, C=C, record_history=bool(self.record_history))
            return scaled_ho_kashyap(y.scaled, y.weights, params, gram=fit.full_gram, trace=trace)
        trace = make_recorder(self.record_history)
        if fit.row_weight is not None:
            params = dict(fit.hk_options, max_iter=max_iter, C=C, record_history=bool(self.record_history))
            return weighted_ho_kashyap(fit.X, y, None, fit.row_weight, params, trace=trace)
        Y = SignedDesign(fit.X, y) if fit.views else fit.Y
        return ho_kashyap(Y, max_iter=max_iter, C=C, record_history=bool(self.record_history), gram=fit.full_gram,
                          trace=trace, plan={"singular": "eigh"} if fit.views else None, **fit.hk_options)

    def _average(self, fit, runs, y):
        weights = np.mean([np.asarray(r.weights, dtype=float) for r in runs], axis=0)
        if fit.fold_data is not None:  # the separation checked where the rows live (the smallest score read)
            return weights, None, bool(y.checked.count_nonpositive(weights)[1] > 0)
        scores = signed_scores(fit.X, y, weights) if fit.views else np.asarray(fit.Y @ weights)
        return weights, None, bool(scores.min() > 0)


LOCKSTEP_SHARE_OF_X = 0.5
"""The share of ``X.nbytes`` that the vectors of runs side by side may take (``_lockstep_group``): at
800 000 × 100 float32 and ``cv=5``, 20 runs (a wave of one ``C``'s five folds fits four times over)."""

VIEW_MIN_ENTRIES = 1 << 22
"""Entries of ``Y`` (N × (d + 1)) from which :class:`HoKashyapClassifierCV`'s runs read ``X`` through views.

Below, ``Y`` is formed once per problem and each fold run copies its rows (``Y[train]``, ``Y[validation]``),
in float64: cheap at these sizes, and the path every result of the paper's data sets was computed on.  From
:math:`2^{22}` entries (32 MiB of float64 ``Y``) the copies cost more than the runs (at 800 000 × 100 each of
the 35 runs of ``Cs=7`` copied 0.5 GB): the runs then read the rows of ``X`` itself, in its own type
(float32 stays float32), by index, and the folds' Gram matrices come from one pass (:func:`view_grams`).
"""


def _folds_partition(folds, n_samples):
    """Whether every row is in exactly one fold's validation rows and each fold trains on exactly the others.

    By counts and marks (linear in the rows: at 640 000 rows a ``np.unique`` / ``np.isin`` test per fold cost
    as much as the Gram matrices it guards).
    """
    counts = np.bincount(np.concatenate([validation for _, validation in folds]), minlength=n_samples)
    if counts.shape[0] != n_samples or not np.all(counts == 1):
        return False
    for train, validation in folds:
        if len(train) + len(validation) != n_samples:
            return False
        in_train = np.zeros(n_samples, dtype=bool)
        in_train[train] = True
        # len(train) marks (no row twice) and none on a validation row: train is the complement
        if np.count_nonzero(in_train) != len(train) or in_train[validation].any():
            return False
    return True


def view_images(X, y, fold_of):
    """:math:`Y_f^t \\mathbf{1} = [X_R, 1]^t y_R` of each fold's training rows ``R``, float64, shape (F, d + 1).

    ``fold_of``: each row's fold, the folds partitioning the rows (:func:`view_grams`).  One pass over ``X``
    (blocks of its rows as they lie, no gather) gives each validation block's sum :math:`s_f`; the training
    rows' is :math:`\\sum_g s_g - s_f`.  The first W-step of a fold's run needs only this vector
    (``HKPlan.first_image``): its own pass over the rows it trains on, five per value of ``C``, is saved.
    """
    n_folds = int(fold_of.max()) + 1
    indicator = np.zeros((X.shape[0], n_folds))
    indicator[np.arange(X.shape[0]), fold_of] = 1.0
    blocks = (SignedDesign(X, y).T @ indicator).T  # row f: Σ over fold f's rows of y_i (x_i, 1)
    return blocks.sum(axis=0) - blocks


def view_grams(X, folds):
    """``(fold_grams, full_gram)``: :math:`[X_R, 1]^t [X_R, 1]` of each fold's training rows and of all rows, float64.

    Where the validation sets partition the rows (every row in exactly one, its fold's training rows the
    others: an int ``cv``, ``KFold``), one pass over ``X``: the Gram matrix :math:`G_f` of each validation block,
    :math:`G = \\sum_f G_f` and each fold's :math:`G - G_f`.  The difference loses to cancellation only
    :math:`\\varepsilon \\lVert G \\rVert`, against the :math:`\\varepsilon \\lVert G \\rVert` of summing the rows themselves.
    Otherwise (overlapping or incomplete splits) each fold's training rows are summed on their own and
    ``full_gram`` is ``None`` (the refit builds its own).  Labels square to 1: one set for every problem.
    """
    n_samples = X.shape[0]
    ones = lambda rows: np.ones(len(rows), dtype=X.dtype)  # noqa: E731 - the labels do not enter a Gram matrix
    partition = _folds_partition(folds, n_samples)
    if not partition:
        return [SignedDesign(X, ones(train), train).gram() for train, _ in folds], None
    blocks = [SignedDesign(X, ones(validation), validation).gram() for _, validation in folds]
    full = np.sum(blocks, axis=0)
    return [full - block for block in blocks], full


class KernelHoKashyapClassifierCV(_CrossValidatedStopping, BaseKernelSeparator):
    """Kernel HKES / HKESA with early stopping chosen by cross-validation, then refitted on all data.

    :class:`HoKashyapClassifierCV` in the empirical kernel map of
    :class:`~linsep.KernelHoKashyapClassifier` (``"kernel_hkes_cv"``): the
    Gram matrix :math:`K` of all training samples is computed once (``gamma``
    resolved once on all of them, so the folds and the refit share one
    kernel); fold :math:`f` runs kernel Ho–Kashyap on the map of its block
    ``K[train, train]`` and records the validation error of each iterate on
    the rows ``K[validation, train]``; :math:`\\hat k` is the first minimiser of the
    mean curve (a shorter run extended with its last value), and the refit is
    kernel HK on the map of all of :math:`K` for :math:`\\hat k` iterates.  Cost: the
    Gram matrix and ``cv + 1`` kernel maps (one per fold block and one of
    :math:`K`), shared by the one-vs-rest problems.  Data on a GPU (PyTorch, CuPy) are fitted on their device
    with the same folds, maps and runs, the maps built from the kernel columns they need, without the Gram
    matrix.

    Parameters
    ----------
    kernel, gamma, degree, coef0
        As in :class:`~linsep.KernelHoKashyapClassifier` (default RBF,
        ``gamma="scale"``); ``kernel="precomputed"`` takes the Gram matrix of
        the training samples.
    map_tol : float in [0, 1), default=0.3
        Truncation of each empirical kernel map (the folds' and the refit's),
        as in :class:`~linsep.KernelHoKashyapClassifier`; ``0``: exact maps.
    cv, loss, C, Cs, refit, learning_rate, b0, max_iter, tol, stopping, irls_floor
        As in :class:`HoKashyapClassifierCV` (HKES's defaults: ``C=None``,
        ``tol=1e-6``, as ``kernel_hkes``).  ``refit=False`` averages the
        fold models' dual coefficients (zero outside each fold's training
        rows) and intercepts: the average of their decision functions.
    n_iter_no_change, validation_tol, class_weight, n_jobs, record_history, random_state, pos_label, verbose
        As in :class:`HoKashyapClassifierCV`: ``class_weight`` (dict,
        ``"balanced"`` or None, default=None) multiplies ``fit``'s
        ``sample_weight``.
    early_exit : float or None, default=2.0
        As in :class:`HoKashyapClassifierCV`: with several values of ``C``, a fold's run that stays more than
        this many standard errors behind an earlier ``C`` on its fold stops after ``n_iter_no_change``
        iterations.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
    intercept_ : ndarray of shape (1,) or (K,)
    X_fit_, classes_, n_iter_, status_, certificate_, margin_vector_, history_
        As in :class:`~linsep.KernelHoKashyapClassifier`; the certificate is in
        feature space (:math:`\\sum_i u_i y_i \\varphi(x_i) = 0`, :math:`\\sum_i u_i y_i = 0`).
    best_iter_, cv_curve_, cv_curves_, C_, cv_results_, search_stopped_
        As in :class:`HoKashyapClassifierCV` (``search_stopped_`` is always ``None``: the search's early end
        needs the folds' Gram matrices in the input space).
    support_ : ndarray of int
        The training samples whose dual coefficients may be nonzero (sorted): the pivots of the refit's map,
        or with ``refit=False`` the union of the folds' pivots (in the rows of ``X_fit_``).

    See Also
    --------
    KernelHoKashyapClassifier : Kernel HK, and kernel HKES with one held-out split.
    HoKashyapClassifierCV : The same in the input space.

    Examples
    --------
    >>> from linsep import KernelHoKashyapClassifierCV
    >>> X, y = [[0, 0], [1, 1], [0, 1], [1, 0]] * 3, [0, 0, 1, 1] * 3  # XOR
    >>> KernelHoKashyapClassifierCV(cv=3, gamma=1.0, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **HoKashyapClassifierCV._parameter_constraints,
                              "map_tol": [Interval(Real, 0, 1, closed="left")]}

    _backends = (DEVICE,)  # the folds' maps, their runs and the refit on the input's device (row blocks: refused)
    _device_traces = True  # the refit's trace recorded where the data live

    __init__ = estimator_init({"kernel": "rbf", "gamma": "scale", "degree": 3, "coef0": 0.0, **_CV_PARAMETERS,
                               "map_tol": 0.3})

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Choose :math:`\\hat k` by cross-validation on ``X`` (N, d) — or the Gram matrix (N, N) — and fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d) or (N, N)
            Training samples, or their Gram matrix for ``kernel="precomputed"``.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), optional
            Non-negative weight :math:`s_i` per row, multiplied by the weights of
            ``class_weight`` (:ref:`weights`): every fold's run and the refit
            minimise the weighted criterion of
            :class:`~linsep.KernelHoKashyapClassifier` in their kernel map, and
            each fold's validation error is the weighted share of its
            misclassified rows.  Rows of weight 0 leave as in
            :meth:`~linsep.HoKashyapClassifierCV.fit` (refused with
            ``kernel="precomputed"``, whose Gram matrix would lose columns).

        Returns
        -------
        self : object
            The fitted estimator: the refit in the kernel map of all of ``X``,
            stopped after :math:`\\hat k` iterates.
        """
        elsewhere = self._fit_on_backend(X, y, sample_weight=sample_weight)
        if elsewhere is not None:  # the data's own device: the same folds, maps and search there (_solve_on_designs)
            return elsewhere
        X, y = self._validate_fit(X, y)
        fit, X, y = self._weighted_folds(X, y, sample_weight)
        return self._fit_kernel(X, y, fit)

    # kernel HK's refusals: an HK parameter not honoured where the data live, a callable kernel (NumPy code)
    _refuse_on_backend = KernelHoKashyapClassifier._refuse_on_backend

    def _solve_on_designs(self, data, fit, **ignored):
        """``(results, problems)``: the search and the refit of each problem where the data live (a device).

        The steps of the in-memory fit on the fit data's folds (``data.cross_validation``): the folds drawn on
        the host copy of the labels as in memory (:meth:`_folds_of_kept_rows`), the map of each fold's block
        ``K[train, train]`` and its validation rows' features built there, each (C, fold) run on them, the same
        waves and early exits, the same :math:`\\hat k` and ``C``, the refit on the map of all rows.
        """
        folds = data.cross_validation(self._folds_of_kept_rows, self.kernel, self._kernel_params(), self.map_tol,
                                      powers=(0.5, 1) if self.loss == "absolute" else (0.5,), refit=self.refit)
        return self._search_on_folds(folds)

    def _drop_rows(self, X, y, weights, kept):
        return self._rows_with_weight(X, y, weights)  # refuses a precomputed Gram matrix

    def _prepare_fit(self, X, fit):
        K = X if self.kernel == "precomputed" else self._kernel_matrix(X, X)
        K = np.asarray(K.toarray() if hasattr(K, "toarray") else K, dtype=float)
        fold_maps = [(EmpiricalKernelMap(K[np.ix_(train, train)], tol=self.map_tol), K[np.ix_(validation, train)])
                     for train, validation in fit.folds]
        return K, fold_maps, EmpiricalKernelMap(K, tol=self.map_tol) if self.refit else None

    def _run_fold(self, fit, f, y, C, reference=np.inf):
        if fit.fold_data is not None:  # ``y``: the problem where the data live; the fold map's features there
            run, gram = fit.fold_data.fold(f, y)
            params = dict(fit.hk_options, max_iter=self.max_iter, C=C, n_iter_no_change=self.n_iter_no_change,
                          validation_tol=self.validation_tol)
            plan = {"validation_reference": reference}
            if run.weights is None:
                return ho_kashyap(run.design, Y_val=run.validation, gram=gram, plan=plan, **params)
            return scaled_ho_kashyap(run.scaled, run.weights, params, gram=gram, Y_val=run.validation, plan=plan)
        _, fold_maps, _ = fit.state
        kernel_map, K_val = fold_maps[f]
        train, validation = fit.folds[f]
        s = fit.row_weight
        weights = {} if s is None else {"sample_weight": s[train], "val_weight": s[validation]}
        return kernel_ho_kashyap(None, y[train], K_val=K_val, y_val=y[validation], kernel_map=kernel_map,
                                 max_iter=self.max_iter, C=C, n_iter_no_change=self.n_iter_no_change,
                                 validation_tol=self.validation_tol, plan={"validation_reference": reference}, **weights,
                                 **fit.hk_options)

    def _refit_run(self, fit, y, max_iter, C):
        if fit.fold_data is not None:  # ``y.refit``: the problem on the map of all rows, where the data live
            data, problem = fit.fold_data, y.refit
            params = dict(fit.hk_options, max_iter=max_iter, C=C, record_history=bool(self.record_history))
            trace = data.recorder(self.record_history)
            if problem.weights is None:
                return data.refit_dual(ho_kashyap(problem.design, gram=data.refit_gram(), trace=trace, **params))
            return data.refit_dual(scaled_ho_kashyap(problem.scaled, problem.weights, params,
                                                     gram=data.refit_gram(), trace=trace))
        return kernel_ho_kashyap(None, y, kernel_map=fit.state[2], max_iter=max_iter, C=C,
                                 sample_weight=fit.row_weight, record_history=bool(self.record_history),
                                 trace=make_recorder(self.record_history), **fit.hk_options)

    def _average(self, fit, runs, y):
        if fit.fold_data is not None:  # the fold models' dual coefficients averaged where the data live
            return fit.fold_data.average(runs, y)
        K = fit.state[0]
        dual = np.zeros(y.shape[0])
        for run, (train, _) in zip(runs, fit.folds):
            dual[train] += run.weights
        dual /= len(runs)
        intercept = float(np.mean([run.intercept for run in runs]))
        return dual, intercept, bool(np.min(y * (K @ dual + intercept)) > 0)

    def _solve_binary(self, X, y, fit):
        result = super()._solve_binary(X, y, fit)
        return dataclasses.replace(result, extra={**result.extra, "support": self._support(fit)})

    def _support(self, fit):
        """The rows whose dual coefficients may be nonzero (sorted): the refit map's pivots, or with ``refit=False``
        the union of the folds' pivots (each fold model is zero off its own)."""
        if fit.fold_data is not None:
            return fit.fold_data.support(self.refit)
        _, fold_maps, full_map = fit.state
        if self.refit:
            return np.sort(full_map.pivots)
        return np.unique(np.concatenate([train[kernel_map.pivots]
                                         for (kernel_map, _), (train, _) in zip(fold_maps, fit.folds)]))

    def _store_outputs(self, results, fit):
        super()._store_outputs(results, fit)
        self.support_ = results[0].extra["support"]  # the maps are shared by the one-vs-rest problems


if HoKashyapClassifierCV.__doc__ is not None:  # no docstring under python -OO
    HoKashyapClassifierCV.__doc__ = HoKashyapClassifierCV.__doc__.replace("    {pos_label}", "    " + POS_LABEL_DOC)
