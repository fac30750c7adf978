"""scikit-learn estimator for the whole Ho–Kashyap family.

=====================  =====================================================
Paper name             :class:`HoKashyapClassifier` parameters
=====================  =====================================================
HK (Ho & Kashyap)      defaults (``make_classifier("hk")``)
modified HK            ``update="weights"``  (``"modified_hk"``)
MHKS (Łęski)           ``C=<float>, loss="squared"``  (``"mhks"``)
MHKA (Łęski)           ``C=<float>, loss="absolute"``  (``"mhka"``)
HKES (Lauer & Bloch)   ``early_stopping=True``  (``"hkes"``)
HKESA (Lauer & Bloch)  ``early_stopping=True, loss="absolute"``  (``"hkesa"``)
=====================  =====================================================

The equations and the stopping rules are documented in
:mod:`linsep.solvers.ho_kashyap`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import _fit_context

from linsep.designs.backend import DEVICE, ROW_BLOCKS
from linsep.estimators.base import (name_backends, CLASS_WEIGHT_CONSTRAINT, POS_LABEL_CONSTRAINT, POS_LABEL_DOC, BaseLinearSeparator,
                                   FitContext, estimator_init, refuse_unsupported, rows_with_weight,
                                   starting_weights)
from linsep._core.plan import READS_FLOAT32
from linsep._core.signed_design import signed_design
from linsep.solvers.ho_kashyap.params import (DEFAULT_N_ITER_NO_CHANGE, EARLY_STOPPING_CONSTRAINTS, HK_CONSTRAINTS,
                                             HK_PARAMETERS, HKParams, parameter_docs)
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.designs.weights import WeightedValidation, class_weights_of
from linsep.solvers.ho_kashyap.weighted import scaled_ho_kashyap, weighted_ho_kashyap
from linsep.solvers.ho_kashyap.plan import HKPlan
from linsep.solvers.ho_kashyap.solver import ho_kashyap, shared_first_weights
from linsep._core.linalg import too_wide_for_direct


HK_VARIANTS = {
    "hk": ({}, "Ho–Kashyap: W = Y⁺B, B ← B + μ(E+|E|); separability verdict with proof"),
    "modified_hk": ({"update": "weights"}, "modified Ho–Kashyap: W ← W + μY⁺|E|"),
    "mhks": ({"C": 1.0, "loss": "squared"}, "Łęski's modified HK, squared errors, regularisation C (Lauer & Bloch §2.2)"),
    "mhka": ({"C": 1.0, "loss": "absolute"}, "Łęski's modified HK, absolute errors (IRLS), regularisation C"),
    "hkes": ({"early_stopping": True}, "Ho–Kashyap with early stopping on a validation set (Lauer & Bloch §2.3)"),
    "hkesa": ({"early_stopping": True, "loss": "absolute"}, "HKES with absolute errors (IRLS) (Lauer & Bloch §2.4)"),
}
"""The registry's names for :class:`~linsep.HoKashyapClassifier`: name → (preset parameters, one-line summary)."""


HK_SUPPORTED = frozenset({"learning_rate", "b0", "max_iter", "tol", "stopping", "stop_at_separation", "update",
                          "C", "loss", "irls_floor", "n_iter_no_change", "validation_tol"})
"""The :class:`~linsep.solvers.ho_kashyap.params.HKParams` honoured where the data live outside memory (every
backend of :attr:`HoKashyapClassifier._backends`); any other one set away from its default is refused there
(:func:`~linsep.estimators.base.refuse_unsupported`), so a new parameter is never silently ignored.  The
patience (``n_iter_no_change``, ``validation_tol``) acts with validation rows (held out, or ``X_val, y_val``)."""


class HoKashyapClassifier(BaseLinearSeparator):
    """Ho–Kashyap linear classifier and its variants (HK, modified HK, MHKS, MHKA, HKES, HKESA).

    Parameters
    ----------
    {hk_parameters}
    early_stopping : bool, default=False
        HKES / HKESA: keep the weights at the first minimum of the
        validation error over all iterations (``best_iter_``, ``history_``).
    validation_fraction : float, default=1/3
        Share of the training data held out (stratified) when
        ``early_stopping`` and ``fit`` receives no ``X_val``.
    n_iter_no_change : int or None, default=100
        Early stopping's patience: stop once the validation error has not
        improved for this many iterations (status ``"converged"``) and keep
        the best iterate seen.  ``None``: the paper's rule, :math:`\\hat k` over every
        iterate up to the Ho–Kashyap stopping point (``linsep bench`` uses it
        for the paper's HKES / HKESA columns).
    validation_tol : float, default=0.0
        Least fall of the validation error (a fraction of the validation
        rows) that resets the patience.
    record_history : bool or int, default=False
        Keep the per-iteration traces in ``history_``: the scalar ones and
        the lecture's ``a(k)``, ``b(k)``, ``e(k)`` (``True``: every
        iteration, an int ``n``: every ``n``-th; bounded memory, see
        :ref:`trace-format`).  A traced fit runs the NumPy loop.
    random_state : int, RandomState or None, default=None
        Seed of the validation split.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight``
        (``"balanced"``: :math:`N / (K n_k)`); one-vs-rest problems weigh the
        original classes.  Early stopping weighs the validation rows too.
    {pos_label}

    Attributes
    ----------
    coef_ : ndarray of shape (1, d) or (K, d)
        float32 for float32 ``X`` (which is then fitted in float32 without
        a float64 copy: :func:`linsep.solvers.ho_kashyap.ho_kashyap`), else
        float64.
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray
    n_iter_ : int or ndarray of shape (K,)
        Index :math:`k` of the final iterate :math:`W_k` (:math:`k = 1` is the first
        least-squares solution), per class for more than two classes.
    status_ : str or ndarray of str
        ``"separable"``, ``"not_separable"``, ``"converged"`` or
        ``"max_iter"`` (per class for more than two classes); a verdict on
        every row of ``X`` (see Notes).
    certificate_ : ndarray, None or list
        For ``"not_separable"``: :math:`u \\ge 0`, :math:`u \\ne 0` with
        :math:`Y^t u = 0` on the training data (zero on held-out rows).
    margin_vector_ : ndarray or list
        Final margin vector :math:`B`.
    history_ : dict or list of dict
        ``criterion``, ``training_errors`` (on every row given to ``fit``,
        the held-out ones included) and (early stopping)
        ``validation_error`` per iteration; only when recorded.  With early
        stopping the trace ends with the returned iterate :math:`\\hat k`
        (:ref:`trace-format`).
    best_iter_ : int or ndarray
        Early stopping: :math:`\\hat k`, the iterate whose weights were kept
        (``history_["validation_error"][best_iter_ - 1]`` is its validation error).

    See Also
    --------
    HoKashyapClassifierCV : HKES with the stopping iteration cross-validated, refitted on all data.
    KernelHoKashyapClassifier : Ho–Kashyap in a kernel's feature space.
    MSEClassifier : The least-squares solution for a fixed margin vector.
    check_separability : A checked verdict on separability, with a linear-program fallback.
    linsep.solvers.ho_kashyap.ho_kashyap : The solver, with the equations.

    Notes
    -----
    With ``early_stopping`` and no ``X_val``, the solver fits on the rows
    kept for fitting and picks :math:`\\hat k` on the held-out rows, but ``status_``
    describes all the rows of ``X`` passed to ``fit``: ``"separable"`` only
    if the model puts every one of them strictly on its side (else
    ``"converged"``), so the status agrees with the training error on
    ``X``; a non-separability proof found on the fitting rows holds for
    ``X`` too (the certificate is zero on the held-out rows).  Validation
    rows passed as ``X_val`` are not part of the verdict.

    Examples
    --------
    >>> from linsep import HoKashyapClassifier
    >>> clf = HoKashyapClassifier().fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> clf.status_
    'separable'
    """

    _backends = (ROW_BLOCKS, DEVICE)
    _device_traces = True
    _dtypes = READS_FLOAT32
    _parameter_constraints = {
        **HK_CONSTRAINTS,
        **EARLY_STOPPING_CONSTRAINTS,
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "pos_label": POS_LABEL_CONSTRAINT,
    }

    # The signature: the HK iteration's parameters (declared once, in _params.HK_PARAMETERS), then the
    # estimator's own.  An explicit inspect.Signature, so scikit-learn sees each parameter.
    __init__ = estimator_init({
        **{name: parameter.default for name, parameter in HK_PARAMETERS.items()},
        "early_stopping": False,
        "validation_fraction": 1 / 3,
        "n_iter_no_change": DEFAULT_N_ITER_NO_CHANGE,
        "validation_tol": 0.0,
        "record_history": False,
        "random_state": None,
        "class_weight": None,
        "pos_label": None,
    })

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None, coef_init=None, intercept_init=None, sample_weight=None):
        """Fit on ``X, y``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (N, d)
        y : array-like of shape (N,)
            Any two or more labels.
        X_val, y_val : array-like, optional
            Validation data for early stopping; if omitted (and
            ``early_stopping``), ``validation_fraction`` of ``X`` is held out.
        coef_init, intercept_init : array-like, optional
            Starting weights :math:`W_0` for a two-class problem (the lecture's
            example starts from :math:`a = \\mathbf{1}`), in the sign convention of the
            solver: ``pos_label``'s side positive (``classes_[1]``'s without
            it); default :math:`W_0 = Y^{+} B_0`.
        sample_weight : array-like of shape (N,), optional
            Non-negative weight :math:`s_i` per row: the criterion becomes
            :math:`\\sum_i s_i (y_i^t W - b_i)^2` (:math:`\\sum_i s_i |e_i|` for
            ``loss="absolute"``; :ref:`weights`).  A row of weight 0 is left
            out (it has no entry in ``margin_vector_``, and ``0`` in
            ``certificate_``, which speaks of every row of ``X``); integer
            weights give the fit of repeated rows.
            With early stopping the held-out rows keep their weights and the
            validation error is the weighted share of misclassified rows (with
            ``X_val`` given, only ``class_weight`` weighs it).  Without ``C``
            and with ``stopping="relative"`` the fit does not change when all
            weights are multiplied by one constant; ``C`` is weighed against
            the weighted sum, as in scikit-learn's ``C`` with weights.

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.

        Notes
        -----
        A ``{blocks}.array`` ``X`` chunked by rows (``y``, ``X_val``, ``y_val``
        {blocks} or NumPy) is fitted blockwise on its workers by
        :ref:`{blocks}`, to the same weights (``sample_weight`` {blocks} or NumPy,
        and ``class_weight``, are honoured); ``margin_vector_`` and
        ``certificate_`` are then {blocks} arrays.  Without ``X_val``, early
        stopping holds out a stratified ``validation_fraction`` of every row
        block (seeded by ``random_state`` and the block's index).
        """
        elsewhere = self._fit_on_backend(X, y, X_val=X_val, y_val=y_val, coef_init=coef_init,
                                         intercept_init=intercept_init, sample_weight=sample_weight)
        if elsewhere is not None:
            return elsewhere
        X, y = self._validate_fit(X, y)
        weights = self._sample_weight(X, y, sample_weight)
        fit = FitContext(all_labels=y)  # the verdict describes every row of X, held-out ones included
        if self.early_stopping and X_val is None and y_val is None:
            # The held-out split stays a pair of row indices into X: no copy of the data.  Rows of weight 0
            # leave before it is drawn (zero weight is a removed row: the split of the data without them).
            fit.fit_rows, val_rows = self._held_out_rows_with_weight(y, weights)
            if weights is not None:  # the held-out rows keep their weights
                fit.val_weight = weights[val_rows]
                weights = weights[fit.fit_rows]
            fit.validation, y, y_val = (X, val_rows), y[fit.fit_rows], y[val_rows]
        else:
            X, y, X_val, y_val = self._early_stopping_data(X, y, X_val, y_val)
            fit.validation = (X_val, None)
            if weights is not None:
                if y_val is not None and self.class_weight is not None:
                    fit.val_weight = class_weights_of(self.class_weight, y, y_val)
                fit.fit_rows = rows_with_weight(weights)  # rows of weight 0 leave, as a view of X
                if fit.fit_rows is not None:
                    y, weights = y[fit.fit_rows], weights[fit.fit_rows]
        if coef_init is not None or intercept_init is not None:
            fit.initial_weights = starting_weights(np.unique(y).size, X.shape[1], coef_init, intercept_init)
        extra = {"y_val": y_val} if y_val is not None else None
        fit.y_val, fit.n_fitted = y_val, y.shape[0]
        return self._fit_problems(X, y, fit, extra_targets=extra,
                                  **({} if weights is None else {"sample_weight": weights}))

    _share_first_solve = True
    """Private (tests), set on an instance: ``False`` lets each one-vs-rest problem solve its own first W-step."""

    def _shared_work(self, X, targets, fit, fit_params):
        # One-vs-rest on wide data with early stopping: every problem starts with a full iterative solve of
        # the same system (labels square to 1), so those first W-steps are solved together, one pass over X
        # per CG step for all problems (shared_first_weights: one W_1 per problem).  Weighted, IRLS,
        # modified-HK and started fits keep their own.
        if (targets.shape[1] > 1 and self.early_stopping and self.loss == "squared" and self.update == "margin"
                and "sample_weight" not in fit_params and fit.initial_weights is None
                and too_wide_for_direct(X.shape[1] + 1) and self._share_first_solve):
            return shared_first_weights(X, targets, fit.fit_rows, C=self.C, b0=self.b0)
        return None

    def _solve_binary(self, X, y, fit, y_val=None, sample_weight=None):
        X_val, val_rows = fit.validation
        Y_val = None if y_val is None else signed_design(X_val, y_val, val_rows)
        if Y_val is not None and fit.val_weight is not None:
            Y_val = WeightedValidation(Y_val, fit.val_weight)
        if sample_weight is not None:
            return weighted_ho_kashyap(
                X, y, fit.fit_rows, sample_weight, HKParams.from_estimator(self).solver_kwargs(),
                initial_weights=fit.initial_weights, Y_val=Y_val, trace=make_recorder(self.record_history),
                plan=getattr(self, "_solver_plan", None))
        return ho_kashyap(
            signed_design(X, y, fit.fit_rows),
            **HKParams.from_estimator(self).solver_kwargs(),
            initial_weights=fit.initial_weights,
            Y_val=Y_val,
            trace=make_recorder(self.record_history),
            plan=HKPlan.of(getattr(self, "_solver_plan", None),  # private: a path forced by tests (not a parameter)
                            first_weights=None if fit.shared is None else fit.shared[fit.problem]),  # _shared_work
        )

    def _refuse_on_backend(self, where):
        # record_history: refused or honoured by the fit flow, per backend (_fit_where_data_live, _device_traces)
        refuse_unsupported(HKParams.from_estimator(self), HKParams.neutral(), where, HK_SUPPORTED | {"record_history"})

    def _cannot_solve_wide(self):
        return "loss='absolute' (IRLS reweighs the rows)" if self.loss == "absolute" else None

    def _solve_on_designs(self, data, fit, X_val=None, y_val=None, **ignored):
        # Weighted: scaled_ho_kashyap on the rows s_i^power y_i (x_i, 1) (both powers for IRLS).  The Gram
        # matrix is shared by the one-vs-rest problems (signs do not change it); wide X: none, distributed CG.
        kwargs = HKParams.from_estimator(self).solver_kwargs()
        problems = data.problems(early_stopping=self.early_stopping, validation_fraction=self.validation_fraction,
                                 random_state=self.random_state, X_val=X_val, y_val=y_val,
                                 powers=(0.5, 1) if self.loss == "absolute" else (0.5,))
        gram = data.gram()
        # record_history reaches here only where the fit data record traces (data.recorder): their rows stay there
        traces = [data.recorder(self.record_history) if self.record_history else None for _ in problems]
        return [ho_kashyap(problem.design, **kwargs, initial_weights=fit.initial_weights, Y_val=problem.validation,
                           gram=gram, trace=trace) if problem.weights is None else
                scaled_ho_kashyap(problem.scaled, problem.weights, kwargs, initial_weights=fit.initial_weights,
                                  Y_val=problem.validation, gram=gram, trace=trace)
                for problem, trace in zip(problems, traces)], problems

    def _store_outputs(self, results, fit):
        binary = len(results) == 1
        pick = (lambda values: values[0]) if binary else list
        self.certificate_ = pick([r.certificate for r in results])
        self.margin_vector_ = pick([r.margin for r in results])
        if self.early_stopping:
            self.best_iter_ = results[0].best_iter if binary else np.array([r.best_iter for r in results])
            if self.C is None and fit.y_val is not None:  # what the fit says of itself; the model is unchanged
                _warn_unregularised(results, fit, np.asarray(self.classes_), self.n_features_in_)


OVERFIT_MIN_GAP = 0.02
"""Smallest excess of the kept iterate's validation error over its error on the fitted rows that
:func:`_warn_unregularised` reads as overfitting (2 points), if it is also above :data:`OVERFIT_Z` standard errors."""
OVERFIT_Z = 5.0
"""That excess in standard errors ``sqrt(v (1 - v) / n_val)`` of the validation error ``v``.  On the nine IDA sets
(five splits each, their tuning part as validation rows) and scikit-learn's ``breast_cancer``, ``wine`` and
``digits`` (three splits each) the largest is 2.7 (small validation sets err well above the fitted rows by noise
alone, up to 15 points); on the 45 000-document four-topic text corpus of ``benchmarks/bench_text_multiclass.py``
it reaches 27 (0.5 % of the fitted rows wrong, 5.7 % of the validation rows)."""


def _warn_unregularised(results, fit, classes, n_features):
    """Warn (``UserWarning``) where early stopping without ``C`` did not regularise the fit.

    Three signs, from what the fit already has, checked in this order:

    * the W-step has at least half as many unknowns ``d + 1`` as fitted rows (near or past interpolation,
      where the least-squares start already fits the noise: early stopping has nothing left to choose);
    * on some problem the kept iterate errs on its validation rows by more than :data:`OVERFIT_MIN_GAP` and
      :data:`OVERFIT_Z` standard errors above its own (unweighted) error on the fitted rows: it fits them far
      better than it predicts (text at ``d + 1`` a third of the fitted rows does this);
    * on every problem the kept iterate's validation error is no lower than always predicting the larger class
      of the validation rows (nothing learnt).

    The paper's IDA sets have ``d + 1`` at most a tenth of the fitted rows and show none of them.  The fitted
    model is not changed.
    """
    y_val, weights = np.asarray(fit.y_val), fit.val_weight
    weights = np.ones(y_val.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    total = weights.sum()
    positives = [classes[1]] if len(results) == 1 else list(classes)
    measured = []  # (validation error, majority-class error, training error) of the kept iterate, per problem
    for result, positive in zip(results, positives):
        history = result.history or {}
        curve = history.get("validation_error")
        if curve is None or result.best_iter is None or total <= 0:
            return
        share = weights[y_val == positive].sum() / total
        wrong = result.extra.get("fitted_errors")  # a traced fit's training_errors count the held-out rows too
        wrong = history.get("training_errors") if wrong is None else wrong
        training = np.nan if wrong is None else float(np.asarray(wrong)[result.best_iter - 1]) / fit.n_fitted
        measured.append((float(np.asarray(curve)[result.best_iter - 1]), float(min(share, 1.0 - share)), training))
    if not measured:
        return
    n_val = y_val.shape[0]
    excess = [(error - training) / np.sqrt(max(error * (1.0 - error), 1e-12) / n_val)
              if error - training > OVERFIT_MIN_GAP else -np.inf for error, _, training in measured]
    error, baseline, _ = max(measured, key=lambda m: m[0] - m[1])  # the problem closest to its baseline
    if 2 * (n_features + 1) >= fit.n_fitted:
        reason = (f"{fit.n_fitted} fitted rows for d + 1 = {n_features + 1} weights: the W-step can nearly "
                  f"interpolate, so early stopping does not regularise (validation error {error:.3f}, "
                  f"{baseline:.3f} for the larger class)")
    elif max(excess) > OVERFIT_Z:
        error, _, training = measured[int(np.argmax(excess))]
        reason = (f"the kept iterate errs on {training:.1%} of its {fit.n_fitted} fitted rows but on {error:.1%} of "
                  f"its {n_val} validation rows (d + 1 = {n_features + 1} weights): it fits the training rows far "
                  "better than it predicts, and early stopping did not regularise it")
    elif all(e >= b for e, b, _ in measured):
        reason = ("the kept iterate does no better on its validation rows than always predicting the larger class "
                  f"(validation error {error:.3f}, {baseline:.3f} for the larger class)")
    else:
        return
    warnings.warn(
        f"HKES without C: {reason}. "
        "Set C (make_classifier('mhks'), or make_classifier('hkes_cv_c') to choose it) or use "
        "HoKashyapClassifierCV(Cs=...).", UserWarning, stacklevel=6)


# The docstring entries of the HK iteration's parameters come from their declaration (no docstring under
# ``python -OO``).
if HoKashyapClassifier.__doc__ is not None:
    HoKashyapClassifier.__doc__ = HoKashyapClassifier.__doc__.replace(
        "    {hk_parameters}\n", parameter_docs(HK_PARAMETERS) + "\n").replace("    {pos_label}", "    " + POS_LABEL_DOC)

name_backends(HoKashyapClassifier.fit)
