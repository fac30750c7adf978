"""scikit-learn estimators for Kozinec and Schlesinger–Kozinec (linear and kernel).

=========================  ==============================================  ==============
Method                     class                                            registry name
=========================  ==============================================  ==============
Kozinec                    :class:`KozinecClassifier`                       ``kozinec``
Schlesinger–Kozinec        :class:`SchlesingerKozinecClassifier`            ``sk``
kernel SK (Franc–Hlaváč)   :class:`KernelSchlesingerKozinecClassifier`      ``kernel_sk``
=========================  ==============================================  ==============

The equations and stopping rules are in :mod:`linsep.solvers.kozinec`.

The linear estimators fit in float64 even on float32 data (which
scikit-learn's validation converts, one copy; ``coef_`` is float64): their
state is a set of inner products :math:`\\langle \\omega, \\xi_i \\rangle` updated by one Gram column per
step, and both verdicts compare quantities to float64 rounding — the origin
lies in the hull when
:math:`\\lVert \\omega \\rVert^2 \\le 10^{-14} \\max_k \\lVert \\xi_k \\rVert^2`, and the
:math:`\\varepsilon`-optimality gap
:math:`\\lVert \\omega \\rVert - \\min_i \\langle \\omega, \\xi_i \\rangle / \\lVert \\omega \\rVert`
is a difference of nearly equal numbers.
Gram columns rounded to float32 (relative error :math:`\\sim 10^{-7}`) would hide a
touching hull behind :math:`10^7` times that threshold and stall the gap test; a
column computed in float64 from float32 rows would convert all of ``X`` at
every step.  The two-hull formulation centres ``X`` (a copy) in any case.

Data on a GPU (a CUDA tensor, a CuPy array) are fitted where they live, both
formulations, by the steps of the NumPy fit
(``linsep.solvers.kozinec.on_design.schlesinger_kozinec_on_designs``): the
Gram columns in float64 a block of rows at a time, so that a float32 ``X`` is
never copied whole, and a few scalars read per step; ``coef_`` is then of
``X``'s type (float32 stays float32) and on its device.  ``record_history``
is refused for such data.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from linsep.designs.backend import DEVICE
from linsep.estimators.base import (KERNEL_CONSTRAINTS, POS_LABEL_CONSTRAINT, POS_LABEL_DOC, BaseKernelSeparator,
                                   BaseLinearSeparator)
from linsep._core.trace import RECORD_HISTORY_CONSTRAINT, make_recorder
from linsep.kernels import KernelColumnCache
from linsep.solvers.kozinec.on_design import schlesinger_kozinec_on_designs
from linsep.solvers.kozinec.solver import FORMULATIONS, kernel_schlesinger_kozinec, schlesinger_kozinec


def _store_margins(estimator, results):
    """``margin_``, ``margin_upper_bound_`` (float, or one per class for one-vs-rest) and ``certificate_``.

    ``certificate_`` is the proof behind a ``"not_separable"`` status — the
    convex coefficients :math:`u` of the touching hulls, :math:`u \\ge 0`, :math:`Y^t u = 0`
    — and ``None`` for any other status (a list over the classes for
    one-vs-rest), as in the Ho–Kashyap estimators; for the linear
    estimators the base class has checked it with
    ``linsep._core.certificates.is_proof`` before it is stored.
    """
    binary = len(results) == 1
    estimator.certificate_ = results[0].certificate if binary else [r.certificate for r in results]
    margins = np.array([r.extra["margin"] for r in results])
    bounds = np.array([r.extra["margin_upper_bound"] for r in results])
    estimator.margin_ = float(margins[0]) if binary else margins
    estimator.margin_upper_bound_ = float(bounds[0]) if binary else bounds


def refuse_sample_weight(estimator, unsupported):
    """Refuse ``sample_weight`` (and any other fit argument) with the reason.

    Kozinec's and Schlesinger–Kozinec's algorithms are geometric: they
    approach the nearest points of the two classes' convex hulls (the
    maximal-margin hyperplane), which depend on the set of points only.
    A weight of a sample has no place in that problem (a repeated point
    leaves the hull unchanged), so ``fit`` takes none; the estimators'
    ``fit`` has no ``sample_weight`` parameter, which is how scikit-learn
    recognises an estimator without sample weights.
    """
    if unsupported:
        raise TypeError(
            f"{type(estimator).__name__}.fit() takes no {', '.join(sorted(unsupported))}: its algorithm finds the "
            "nearest points of the classes' convex hulls, in which a sample weight has no meaning")


class _LinearKozinecBase(BaseLinearSeparator):
    _rule = "sk"
    _backends = (DEVICE,)  # on the device, the NumPy fit's steps (row blocks: refused); no trace there

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, **unsupported):
        """Fit on ``X`` (N, d), dense or sparse, and labels ``y`` (two or more classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        **unsupported : dict
            Refused with a ``TypeError`` (``sample_weight`` included): the
            algorithm finds the nearest points of the classes' convex hulls,
            in which a sample weight has no meaning.

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        refuse_sample_weight(self, unsupported)
        elsewhere = self._fit_on_backend(X, y)
        if elsewhere is not None:
            return elsewhere
        X, y = self._validate_fit(X, y)
        return self._fit_problems(X, y)

    def _solve_on_designs(self, data, fit, **ignored):
        problems = data.problems()
        return schlesinger_kozinec_on_designs(
            [problem.design for problem in problems], formulation=self.formulation, rule=self._rule,
            C=getattr(self, "C", None), epsilon=getattr(self, "epsilon", None), tol=getattr(self, "tol", 0.0),
            max_iter=self.max_iter), problems

    def _solve_binary(self, X, y, fit):
        return schlesinger_kozinec(
            X, y, formulation=self.formulation, rule=self._rule, C=getattr(self, "C", None),
            epsilon=getattr(self, "epsilon", None), tol=getattr(self, "tol", 0.0),
            max_iter=self.max_iter, record_history=bool(self.record_history),
            trace=make_recorder(self.record_history))

    def _store_outputs(self, results, fit):
        _store_margins(self, results)


_SHARED_DOC = """
    formulation : {"two_hull", "augmented"}, default="two_hull"
        ``"two_hull"``: nearest points :math:`w_1, w_2` of the two class hulls,
        :math:`w = w_1 - w_2`,
        :math:`b = (\\lVert w_2 \\rVert^2 - \\lVert w_1 \\rVert^2) / 2` (Franc & Hlaváč 2003);
        its limit is the maximal-margin hyperplane with an unpenalised bias
        (the hard-margin SVM).  ``"augmented"``: the seed note's
        :math:`\\xi_i = y_i (x_i, 1)`, nearest point of
        :math:`\\operatorname{Conv}\\{\\xi_i\\}` to the origin; the bias is inside
        the norm, so the margin is measured in :math:`\\mathbb{R}^{d+1}`.
    max_iter : int, default=10000 (Kozinec), 100000 (SK)
        Largest number of updates per binary problem.  Non-separable data end
        here with status ``"max_iter"`` and a ConvergenceWarning (or earlier
        with ``"not_separable"`` when the hulls are seen to touch); the
        iterate with the fewest training errors is then kept.
    record_history : bool or int, default=False
        Also record the teaching trace of :ref:`trace-format` (an int
        ``n``: every ``n``-th iterate).
        Keep ``margin`` and ``margin_upper_bound`` per iteration in ``history_``.
    """ + POS_LABEL_DOC + """
"""

_SHARED_ATTRS = """
    coef_ : ndarray of shape (1, d) or (K, d)
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray
    margin_ : float or ndarray of shape (K,)
        Margin of the returned hyperplane on the training data:
        :math:`\\min_i y_i (w^t x_i + b) / \\lVert w \\rVert` (``"two_hull"``) or
        :math:`\\min_i \\langle \\omega, \\xi_i \\rangle / \\lVert \\omega \\rVert` with
        :math:`\\omega = (w, b)` (``"augmented"``).
        Negative or zero when the data are not separated.
    margin_upper_bound_ : float or ndarray of shape (K,)
        Upper bound of the optimal margin: :math:`\\lVert w_1 - w_2 \\rVert / 2` or
        :math:`\\lVert \\omega \\rVert` (of :math:`G + I/C` when :math:`C` is given).
        ``margin_upper_bound_ - margin_`` bounds how far the hyperplane is
        from the maximal-margin one (:math:`\\varepsilon`-optimality).
    n_iter_ : int or ndarray of shape (K,)
        Updates made.
    status_ : str or ndarray of str
        ``"separable"`` (Kozinec), ``"converged"`` (SK, ε-optimal),
        ``"max_iter"`` or ``"not_separable"`` (the hulls touch to rounding).
    certificate_ : ndarray, None or list
        For ``"not_separable"``: the proof :math:`u \\ge 0,\\ u \\ne 0` with
        :math:`\\sum_i u_i y_i \\, (x_i, 1) = 0` (it passes
        ``linsep._core.certificates.is_proof``); ``None`` otherwise; a list
        of them for one-vs-rest.
    history_ : dict or list of dict
        Only with ``record_history``.
"""


class KozinecClassifier(_LinearKozinecBase):
    __doc__ = f"""Kozinec's rule: stops at the first separating hyperplane.

    Each update moves the hull point to the point of a segment nearest to the
    other hull (or to the origin, ``"augmented"``), towards the worst point;
    see :mod:`linsep.solvers.kozinec`.

    Parameters
    ----------{_SHARED_DOC}
    Attributes
    ----------{_SHARED_ATTRS}
    See Also
    --------
    SchlesingerKozinecClassifier : Goes on to an ε-optimal maximal margin.
    PerceptronClassifier : The other rule that stops at the first separating hyperplane.
    linsep.solvers.kozinec.kozinec : The solver, with the equations.

    Examples
    --------
    >>> from linsep import KozinecClassifier
    >>> clf = KozinecClassifier().fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> clf.status_
    'separable'
    """

    _rule = "kozinec"
    _parameter_constraints = {
        "formulation": [StrOptions(set(FORMULATIONS))],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "pos_label": POS_LABEL_CONSTRAINT,
    }

    def __init__(self, *, formulation="two_hull", max_iter=10_000, record_history=False, pos_label=None):
        self.pos_label = pos_label
        self.formulation = formulation
        self.max_iter = max_iter
        self.record_history = record_history


class SchlesingerKozinecClassifier(_LinearKozinecBase):
    __doc__ = f"""Schlesinger–Kozinec: an ε-optimal maximal-margin hyperplane.

    Stops when
    :math:`\\mathit{{margin\\_upper\\_bound}} - \\mathit{{margin}} \\le \\varepsilon`
    (and the margin is positive), so the returned margin is within
    :math:`\\varepsilon` of the optimal one.

    Parameters
    ----------
    tol : float, default=1e-2
        Relative :math:`\\varepsilon`: stop when
        :math:`\\mathit{{margin\\_upper\\_bound}} - \\mathit{{margin}} \\le \\mathit{{tol}} \\cdot \\mathit{{margin\\_upper\\_bound}}`
        (invariant to the scale of ``X``), i.e. the margin is at least
        :math:`1 - \\mathit{{tol}}` times the optimal one.
    epsilon : float or None, default=None
        Absolute :math:`\\varepsilon` of the seed note; when given it replaces ``tol``.
    C : float or None, default=None
        ``None``: hard margin.  A number: soft margin with quadratic slacks
        (L2-SVM with unpenalised bias for ``"two_hull"``): the hard margin
        for the Gram matrix :math:`G + I/C`; always converges.{_SHARED_DOC}
    Attributes
    ----------{_SHARED_ATTRS}
    See Also
    --------
    KozinecClassifier : Stops at the first separating hyperplane.
    KernelSchlesingerKozinecClassifier : The same in a kernel space.
    LagrangianSVMClassifier : A soft-margin SVM (squared slacks).
    linsep.solvers.kozinec.schlesinger_kozinec : The solver, with the equations.

    Examples
    --------
    >>> from linsep import SchlesingerKozinecClassifier
    >>> clf = SchlesingerKozinecClassifier().fit([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> round(clf.margin_, 2), clf.status_
    (1.0, 'converged')
    """

    _rule = "sk"
    _parameter_constraints = {
        "tol": [Interval(Real, 0, 1, closed="left")],
        "epsilon": [None, Interval(Real, 0, None, closed="left")],
        "C": [None, Interval(Real, 0, None, closed="neither")],
        **KozinecClassifier._parameter_constraints,
    }

    def __init__(self, *, tol=1e-2, epsilon=None, C=None, formulation="two_hull", max_iter=100_000,
                 record_history=False, pos_label=None):
        self.pos_label = pos_label
        self.tol = tol
        self.epsilon = epsilon
        self.C = C
        self.formulation = formulation
        self.max_iter = max_iter
        self.record_history = record_history


class KernelSchlesingerKozinecClassifier(BaseKernelSeparator):
    """Two-hull Schlesinger–Kozinec in a kernel space (Franc & Hlaváč 2003).

    :math:`f(x) = \\sum_i \\alpha_i y_i k(x_i, x) + b` with :math:`\\alpha` convex weights on each
    class hull.  Kernel columns are served by a bounded least-recently-used
    cache (:class:`linsep.kernels.KernelColumnCache`), so memory is
    :math:`O(N \\cdot \\mathit{cache})` and the Gram matrix is never formed.  With shrinking
    (the default) the steps run on a working set — the support plus the
    points of smallest margin — and the stopping rule is re-checked on all
    N points before it is accepted, so ``margin_`` and
    ``margin_upper_bound_`` are exact over the whole training set.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        As SVC; ``"precomputed"`` takes Gram matrices in fit and predict.
    gamma : {"scale", "auto"} or float, default="scale"
        SVC's convention: ``"scale"`` is :math:`1 / (d \\operatorname{Var}(X))`, ``"auto"`` :math:`1 / d`.
    degree : int, default=3
    coef0 : float, default=0.0
    C : float or None, default=1.0
        A number: soft margin with quadratic slacks (L2-SVM), i.e. the hard
        margin for :math:`K + I/C`; it always converges (:math:`K + I/C` is positive
        definite), hence the default (SVC's value).  ``None``: hard margin,
        the maximal-margin classifier in the kernel space; non-separable
        data then end at ``max_iter`` with a ConvergenceWarning.
    tol : float, default=1e-2
        Relative :math:`\\varepsilon`: stop when
        :math:`\\mathit{margin\\_upper\\_bound} - \\mathit{margin} \\le \\mathit{tol} \\cdot \\mathit{margin\\_upper\\_bound}`.
    epsilon : float or None, default=None
        Absolute :math:`\\varepsilon`; when given it replaces ``tol``.
    max_iter : int, default=100000
        Largest number of updates (one kernel column each) per binary problem.
    cache_size : float, default=200
        Megabytes for cached kernel columns (shared by the one-vs-rest problems).
    update : {"sk", "mdm"}, default="mdm"
        ``"mdm"``: move weight from a support point of the worst point's
        class (chosen by second order, the largest decrease of :math:`\\lVert w \\rVert^2`) to
        the worst point (Mitchell–Dem'yanov–Malozemov); ``"sk"``: Franc &
        Hlaváč's update (the class point shrinks towards the worst point).
        Same stop and guarantee; MDM needs far fewer iterations and gives a
        sparser ``dual_coef_`` (see
        :func:`linsep.solvers.kozinec.kernel_schlesinger_kozinec`).
    shrinking : bool, default=True
        Run the steps on a working set (support + smallest margins) with its
        Gram block, re-checking the rule on all points; ``False`` scans all N
        points at every step.  The block holds at most as many numbers as the
        column cache.
    record_history : bool or int, default=False
        Also record the teaching trace of :ref:`trace-format` (an int
        ``n``: every ``n``-th iterate).
        Keep ``margin`` and ``margin_upper_bound`` in ``history_``: per
        iteration without shrinking, per check on all points with it.
    {pos_label}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, N) or (K, N)
        :math:`\\alpha_i y_i` per problem.
    intercept_ : ndarray of shape (1,) or (K,)
    X_fit_ : ndarray of shape (N, d)
    margin_ : float or ndarray of shape (K,)
        Margin in the feature space (of :math:`K + I/C` when :math:`C` is given).
    margin_upper_bound_ : float or ndarray of shape (K,)
        :math:`\\lVert w_1 - w_2 \\rVert / 2 \\ge` the optimal margin.
    n_iter_, status_, history_
        As for :class:`SchlesingerKozinecClassifier`.
    n_kernel_columns_ : int
        Kernel columns computed (cache misses), over all problems.
    certificate_ : ndarray, None or list
        For ``"not_separable"`` (hard margin, ``C=None``): :math:`u \\ge 0,\\ u \\ne 0`
        with :math:`\\sum_i u_i y_i \\varphi(x_i) = 0` and :math:`\\sum_i u_i y_i = 0` (the hulls
        touch in the feature space); ``None`` otherwise.

    See Also
    --------
    SchlesingerKozinecClassifier : The linear rule.
    KernelLagrangianSVMClassifier : A kernel SVM with squared slacks, :math:`N \\times N` factor.
    linsep.kernels.KernelColumnCache : The bounded cache of kernel columns.
    linsep.solvers.kozinec.kernel_schlesinger_kozinec : The solver, with the equations.

    Examples
    --------
    >>> from linsep import KernelSchlesingerKozinecClassifier
    >>> X, y = [[0, 0], [1, 1], [0, 1], [1, 0]], [0, 0, 1, 1]   # XOR
    >>> KernelSchlesingerKozinecClassifier(gamma=2.0).fit(X, y).predict(X).tolist()
    [0, 0, 1, 1]
    """

    # SK's per-point updates are sequential; the kernel LSVM, a maximal-margin machine, fits on the device
    _device_alternative = "KernelLagrangianSVMClassifier"
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        "C": [None, Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, 1, closed="left")],
        "epsilon": [None, Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "update": [StrOptions({"sk", "mdm"})],
        "shrinking": ["boolean"],
        "record_history": RECORD_HISTORY_CONSTRAINT,
        "pos_label": POS_LABEL_CONSTRAINT,
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, tol=1e-2,
                 epsilon=None, max_iter=100_000, cache_size=200.0, update="mdm", shrinking=True,
                 record_history=False, pos_label=None):
        self.pos_label = pos_label
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.tol = tol
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.update = update
        self.shrinking = shrinking
        self.record_history = record_history

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, **unsupported):
        """Fit on ``X`` (N, d) — or a Gram matrix (N, N) for ``kernel="precomputed"``; no ``sample_weight``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d) or (N, N)
            Training samples, or the Gram matrix for ``kernel="precomputed"``.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        **unsupported : dict
            Refused with a ``TypeError`` (``sample_weight`` included): the
            algorithm finds the nearest points of the classes' convex hulls,
            in which a sample weight has no meaning.

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        refuse_sample_weight(self, unsupported)
        return super().fit(X, y)

    def _prepare_fit(self, X, fit):
        # one column cache for all one-vs-rest problems: they share the samples
        return KernelColumnCache(X, kernel=self.kernel, cache_size=self.cache_size, **self._kernel_params())

    def _solve_binary(self, X, y, fit):
        return kernel_schlesinger_kozinec(
            fit.state, y, C=self.C, epsilon=self.epsilon, tol=self.tol, max_iter=self.max_iter,
            record_history=bool(self.record_history), update=self.update, shrinking=self.shrinking,
            trace=make_recorder(self.record_history))

    def _store_outputs(self, results, fit):
        _store_margins(self, results)
        self.n_kernel_columns_ = fit.state.n_computed


if KernelSchlesingerKozinecClassifier.__doc__ is not None:  # no docstring under python -OO
    KernelSchlesingerKozinecClassifier.__doc__ = KernelSchlesingerKozinecClassifier.__doc__.replace(
        "    {pos_label}", "    " + POS_LABEL_DOC)
