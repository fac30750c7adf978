"""scikit-learn estimator for kernel Ho–Kashyap (``make_classifier("kernel_hk")``).

The iteration is linear Ho–Kashyap run in the empirical kernel map; see
:mod:`linsep.solvers.ho_kashyap.kernel` for the equivalence and the
truncated map, and :mod:`linsep.solvers.ho_kashyap` for the iteration,
stopping rules and verdicts.

Defaults (measured with ``benchmarks/bench_kernel_hk.py``: digits, a
held-out 30 %, and 5 000 noisy two-class samples): ``C=0.3``, ``map_tol=0.3``,
``tol=1e-3``.  Plain HK (``C=None``) in an RBF feature space of rank close to
``N`` separates any labelling and generalises no better than interpolation
(accuracy near chance on noisy data); Łęski's ``C`` is the generalisation
control, and ``C = 0.3`` scored at least as well as ``C = 1`` or ``0.1`` on
digits and as well on the noisy sets.  ``map_tol=0.3`` keeps the rank (and
the :math:`O(N r^2)` map) small: on digits it costs at most 0.4 points of
accuracy against ``0.1`` or ``0.03`` for a quarter to a ninth of the rank, and
on 5 000 samples with 20 features ``0.1`` needs rank 3 100 (about six times
the time) for 0.5 points.  The relative stopping rule with ``tol=1e-3``
stops 5–10 times sooner than ``1e-6`` with the same test accuracy.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval

from linsep.designs.backend import DEVICE
from linsep.estimators.base import (CLASS_WEIGHT_CONSTRAINT, KERNEL_CONSTRAINTS, POS_LABEL_CONSTRAINT, POS_LABEL_DOC,
                                    BaseKernelSeparator, FitContext, demote_unseparated, encode_pm1, estimator_init,
                                    refuse_unsupported)
from linsep.estimators.ho_kashyap import HK_SUPPORTED
from linsep._core.certificates import separates, side_tolerance
from linsep.solvers.ho_kashyap.params import (DEFAULT_N_ITER_NO_CHANGE, EARLY_STOPPING_CONSTRAINTS, HK_CONSTRAINTS,
                                             HK_PARAMETERS, HKParams, hk_defaults)
from linsep._core.result import SEPARABLE
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.designs.weights import class_weights_of
from linsep.solvers.ho_kashyap.kernel import EmpiricalKernelMap, kernel_ho_kashyap
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.ho_kashyap.weighted import scaled_ho_kashyap


_HK_NAMES = ("C", *(name for name in HK_PARAMETERS if name != "C"))
"""The HK parameters of the kernel estimator: all of :data:`~linsep.solvers.ho_kashyap.params.HK_PARAMETERS` (``C``
first), forwarded to ``kernel_ho_kashyap`` through ``HKParams``: a parameter added to the table reaches it."""


class KernelHoKashyapClassifier(BaseKernelSeparator):
    """Kernel Ho–Kashyap classifier: HK / Łęski's MHKS / MHKA with :math:`w = \\sum_i a_i \\varphi(x_i)`.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient, as in SVC (``"scale"``: :math:`1 / (d \\operatorname{Var}(X))`; ``"auto"``: :math:`1/d`).
    degree : int, default=3
    coef0 : float, default=0.0
    C : float or None, default=0.3
        ``None``: plain Ho–Kashyap in feature space (target :math:`B`, with the
        non-separability proof).  A number :math:`C \\ge 0`: Łęski's kernel MHKS /
        MHKA, target :math:`\\mathbf{1} + B` and penalty :math:`C \\, w^t w` (bias unpenalised).
    learning_rate : float, default=0.4
        :math:`\\mu` of :math:`B \\leftarrow B + \\mu \\, (E + |E|)`, :math:`0 < \\mu < 1`.
    b0 : float, default=1e-6
        Initial margin :math:`B_0 = b_0 \\mathbf{1}`.
    loss : {"squared", "absolute"}, default="squared"
        :math:`D = I` or the IRLS weights :math:`D_k = \\operatorname{diag}(1 / |e_i|)`.
    update : {"margin", "weights"}, default="margin"
        :math:`W = Y^{+} B` (HK) or :math:`W \\leftarrow W + \\mu \\, Y^{+} |E|` (modified HK).
    max_iter : int, default=10000
        Largest number of margin updates per binary problem (``n_iter_``
        numbers the iterates from :math:`W_1`, so it is at most ``max_iter + 1``).
    tol : float or None, default=1e-3
    stopping : {"relative", "paper"}, default="relative"
    stop_at_separation : bool or "auto", default="auto"
        ``"auto"``: stop at separation only for plain HK (``C=None``, no
        early stopping).
    irls_floor : float, default=1e-6
    early_stopping : bool, default=False
        Kernel HKES / HKESA: keep the weights at the first minimum of the
        validation error over all iterations (``best_iter_``, ``history_``).
    validation_fraction : float, default=1/3
        Share of each class held out when ``early_stopping`` and ``fit``
        receives no ``X_val`` (not available with ``kernel="precomputed"``).
    n_iter_no_change : int or None, default=100
        Early stopping's patience, as in :class:`~linsep.HoKashyapClassifier`
        (``None``: the paper's rule, :math:`\\hat k` over all iterates).
    validation_tol : float, default=0.0
        Least fall of the validation error that resets the patience.
    random_state : int, RandomState or None, default=None
        Seed of that split.
    record_history : bool or int, default=False
        Also record the teaching trace of :ref:`trace-format` (an int
        ``n``: every ``n``-th iterate).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``fit``'s ``sample_weight``.
    map_tol : float in [0, 1), default=0.3
        Truncation of the empirical kernel map: pivot until every training
        point lies within :math:`\\sqrt{\\mathit{map\\_tol} \\cdot \\max_i k(x_i, x_i)}` of the span
        :math:`S` of the pivots' images (``rank_`` of them).  ``0``: the exact map
        (rank up to :math:`N`, :math:`O(N^3)`).  The decision function is
        :math:`\\sum_{p \\in P} a_p k(x_p, x) + b`, and ``"separable"`` is exact (checked on
        the training points); ``"not_separable"`` proves that no function of
        that form separates them — a proof about :math:`S`, which equals the whole
        feature space only with ``map_tol=0``.
    {pos_label}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
        :math:`a` with :math:`f(x) = \\sum_i a_i k(x_i, x) + b`, :math:`b` the ``intercept_``.
    intercept_ : ndarray of shape (1,) or (K,)
    status_ : str or ndarray of str
        ``"separable"``, ``"not_separable"`` (in feature space, with proof),
        ``"converged"`` or ``"max_iter"``.  With early stopping on a held-out
        split, ``"separable"`` means that every row passed to ``fit``, held-out
        ones included, is strictly on its side (the rows in ``X_fit_`` and the
        held-out ones both checked).
    certificate_ : ndarray, None or list
        For ``"not_separable"``: :math:`u \\ge 0,\\ u \\ne 0` with
        :math:`\\sum_i u_i y_i \\varphi(x_i) = 0` and :math:`\\sum_i u_i y_i = 0`.
    margin_vector_ : ndarray or list
        Final margin vector :math:`B`.
    rank_ : int
        Dimension :math:`r` of the (centred) empirical kernel map.
    support_ : ndarray of int
        The pivots :math:`P` of the map (sorted): only these training samples
        can have non-zero dual coefficients.
    best_iter_ : int or ndarray
        Early stopping: the iterate :math:`\\hat k` whose weights were kept.
    X_fit_, classes_, n_iter_, history_

    See Also
    --------
    HoKashyapClassifier : The linear Ho–Kashyap family.
    KernelHoKashyapClassifierCV : Kernel HKES with the stopping iteration cross-validated.
    KernelSchlesingerKozinecClassifier : A maximal-margin hyperplane in the kernel space.
    linsep.solvers.ho_kashyap.kernel_ho_kashyap : The solver, with the equations.

    Examples
    --------
    >>> from linsep import KernelHoKashyapClassifier
    >>> X, y = [[0, 0], [1, 1], [0, 1], [1, 0]], [0, 0, 1, 1]  # XOR
    >>> KernelHoKashyapClassifier(kernel="linear", C=None, map_tol=0).fit(X, y).status_
    'not_separable'
    >>> KernelHoKashyapClassifier(kernel="rbf", gamma=1.0).fit(X, y).predict(X).tolist()
    [0, 0, 1, 1]
    """

    _backends = (DEVICE,)  # the kernel map and the iteration on the input's device (row blocks: refused)
    _device_traces = True
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **{name: HK_CONSTRAINTS[name] for name in _HK_NAMES},
        **EARLY_STOPPING_CONSTRAINTS,
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "map_tol": [Interval(Real, 0, 1, closed="left")],
        "pos_label": POS_LABEL_CONSTRAINT,
    }
    __init__ = estimator_init({
        "kernel": "rbf", "gamma": "scale", "degree": 3, "coef0": 0.0,
        # the kernel map's own defaults: a regularised, looser fit than the linear estimator's
        **hk_defaults(_HK_NAMES, C=0.3, tol=1e-3),
        "early_stopping": False, "validation_fraction": 1 / 3, "n_iter_no_change": DEFAULT_N_ITER_NO_CHANGE,
        "validation_tol": 0.0, "random_state": None, "record_history": False, "map_tol": 0.3, "class_weight": None,
        "pos_label": None,
    })

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None, sample_weight=None):
        """Fit on ``X`` (N, d) — or the Gram matrix (N, N) for ``kernel="precomputed"``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d) or (N, N)
            Training samples, or their Gram matrix for ``kernel="precomputed"``.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        X_val : array-like of shape (M, d) or (M, N), optional
            Validation samples for early stopping, or for
            ``kernel="precomputed"`` their kernel rows ``k(X_val, X)``.
            Without them, ``validation_fraction`` of ``X`` is held out.
        y_val : array-like of shape (M,), optional
            Labels of ``X_val``.
        sample_weight : array-like of shape (N,), default=None
            Non-negative weight :math:`s_i` per row (all ones when None),
            multiplied by ``class_weight``'s: the weighted criterion
            :math:`\\sum_i s_i (y_i^t W - b_i)^2` in the empirical kernel map, as
            :class:`~linsep.HoKashyapClassifier` does; held-out rows keep
            their weights in the validation error.  Rows of weight 0 are left
            out before the kernel map is built (refused with
            ``kernel="precomputed"``, whose Gram matrix would lose rows and
            columns).  See :ref:`weights`.

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        if self.kernel == "precomputed" and self.early_stopping and X_val is None:
            raise ValueError("early stopping with kernel='precomputed' needs X_val = k(X_val, X) and y_val")
        elsewhere = self._fit_on_backend(X, y, X_val=X_val, y_val=y_val, sample_weight=sample_weight)
        if elsewhere is not None:
            return elsewhere
        X, y = self._validate_fit(X, y)
        held_out = self.early_stopping and X_val is None
        weights = self._sample_weight(X, y, sample_weight)
        fit = FitContext()
        if weights is not None and self.early_stopping and X_val is None:
            fit_rows, val_rows = self._held_out_rows_with_weight(y, weights)  # the split of the rows of weight > 0
            X_val, y_val, fit.val_weight = X[val_rows], y[val_rows], weights[val_rows]
            X, y, weights = X[fit_rows], y[fit_rows], weights[fit_rows]
        X, y, X_val, y_val = self._early_stopping_data(X, y, X_val, y_val)
        fit.validation = (X_val, None)
        if weights is not None:
            if y_val is not None and fit.val_weight is None and self.class_weight is not None:
                fit.val_weight = class_weights_of(self.class_weight, y, y_val)
            X, y, weights = self._rows_with_weight(X, y, weights)
        self._fit_kernel(X, y, fit, extra_targets=None if y_val is None else {"y_val": y_val}, sample_weight=weights)
        if held_out:  # the verdict describes every row passed to fit, the held-out ones included
            self._check_held_out_separation(X_val, y_val)
        return self

    def _refuse_on_backend(self, where):
        # record_history: refused or honoured by the fit flow (_fit_where_data_live, _device_traces)
        refuse_unsupported(HKParams.from_estimator(self), HKParams.neutral(), where, HK_SUPPORTED | {"record_history"})
        if callable(self.kernel):
            raise ValueError(f"a callable kernel is not available for {where} (it is NumPy code); use a named "
                             "kernel, or kernel='precomputed' with the Gram matrix on the device")

    def _solve_on_designs(self, data, fit, **ignored):
        # Ho–Kashyap on the features of the map built where the data live (one map, one Gram matrix diag(s, N)
        # for every one-vs-rest problem); the weights come back as dual coefficients
        # Weighted: scaled_ho_kashyap on the features' rows s_i^power y_i (both powers for IRLS), their Gram matrix
        # shared; record_history reaches here only where the fit data record traces (data.recorder)
        kwargs = HKParams.from_estimator(self).solver_kwargs()
        problems = data.problems(self.kernel, self._kernel_params(), self.map_tol,
                                 powers=(0.5, 1) if self.loss == "absolute" else (0.5,))
        gram = data.gram()
        traces = [data.recorder(self.record_history) if self.record_history else None for _ in problems]
        return [data.dual(ho_kashyap(problem.design, **kwargs, Y_val=problem.validation, gram=gram, trace=trace)
                          if problem.weights is None else
                          scaled_ho_kashyap(problem.scaled, problem.weights, kwargs, Y_val=problem.validation,
                                            gram=gram, trace=trace))
                for problem, trace in zip(problems, traces)], problems

    def _check_held_out_separation(self, X_val, y_val):
        """Demote ``separable`` where a held-out row is not strictly on its side (the solver saw only the others)."""
        if not np.any(np.atleast_1d(self.status_) == SEPARABLE):
            return
        targets = encode_pm1(y_val, self.classes_)[0]
        K = X_val if self.kernel == "precomputed" else self._kernel_matrix(X_val, self.X_fit_)
        scores = (np.asarray(K @ self.dual_coef_.T) + self.intercept_).reshape(X_val.shape[0], -1)
        # strictly on its side: beyond the rounding bound of the score (its kernel row in the role of x)
        tolerance = side_tolerance(K, self.dual_coef_, self.intercept_).reshape(X_val.shape[0], -1)
        self.status_ = demote_unseparated(self.status_,
                                          lambda k: separates(scores[:, k], targets[:, k], tolerance[:, k]))

    def _prepare_fit(self, X, fit):
        # one kernel map (only its pivot columns of K computed), one Gram matrix
        # of the features and one block of validation kernel rows for every
        # one-vs-rest problem
        if self.kernel == "precomputed":
            kernel_map = EmpiricalKernelMap(X, tol=self.map_tol)
        else:
            # The arithmetic of predict (and of a Gram matrix passed as "precomputed"): fit and
            # predict see the same kernel values, and a named kernel matches its precomputed Gram.
            blocks = [X[i:i + 512] for i in range(0, X.shape[0], 512)]
            kernel_map = EmpiricalKernelMap(
                columns=lambda idx: self._kernel_matrix(X, X[idx]),
                diagonal=np.concatenate([np.diagonal(self._kernel_matrix(B, B)) for B in blocks]),
                tol=self.map_tol)
        X_val = fit.validation[0]
        K_val = None if X_val is None else (X_val if self.kernel == "precomputed"
                                            else self._kernel_matrix(X_val, X))
        return kernel_map, K_val

    def _solve_binary(self, X, y, fit, y_val=None, sample_weight=None):
        kernel_map, K_val = fit.state
        return kernel_ho_kashyap(
            None, y,
            K_val=K_val, y_val=y_val, sample_weight=sample_weight, val_weight=fit.val_weight,
            kernel_map=kernel_map, trace=make_recorder(self.record_history),
            **HKParams.from_estimator(self).solver_kwargs(),  # every HK parameter of the table, stop rule resolved
        )

    def _store_outputs(self, results, fit):
        pick = (lambda values: values[0]) if len(results) == 1 else list
        self.certificate_ = pick([r.certificate for r in results])
        self.margin_vector_ = pick([r.margin for r in results])
        self.rank_ = int(results[0].extra["rank"])
        self.support_ = np.sort(fit.state[0].pivots)
        if self.early_stopping:
            self.best_iter_ = pick([r.best_iter for r in results])
            if len(results) > 1:
                self.best_iter_ = np.array(self.best_iter_)


if KernelHoKashyapClassifier.__doc__ is not None:  # no docstring under python -OO
    KernelHoKashyapClassifier.__doc__ = KernelHoKashyapClassifier.__doc__.replace("    {pos_label}",
                                                                                  "    " + POS_LABEL_DOC)
