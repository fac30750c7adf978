"""One base classifier for every linsep estimator.

The estimator layer does four things and nothing else (the numerical work is
in :mod:`linsep.solvers`):

1. validate ``X`` and ``y`` once, with scikit-learn's validators;
2. encode the labels: two classes become ``-1 / +1`` (``classes_[1]`` is
   ``+1``), more classes become one ``±1`` column per class (one-vs-rest);
3. call the family's solver (``_solve_binary``) once per column, which
   returns a :class:`~linsep._core.result.SolveResult`, and check its
   verdict;
4. unpack the results into ``coef_``, ``intercept_``, ``n_iter_``,
   ``status_``, ``history_`` (and the family's outputs,
   ``_store_outputs``) and raise one
   :class:`~sklearn.exceptions.ConvergenceWarning` if any solve hit its
   iteration budget.

The same steps run for data that live elsewhere (dask row blocks, an
array-API device) over the backend's fit data
(:mod:`linsep.designs.dask_fit`, :mod:`linsep.designs.array_api_fit`).

``decision_function`` / ``predict`` come from scikit-learn's
:class:`~sklearn.linear_model._base.LinearClassifierMixin` for primal models,
and from :class:`BaseKernelSeparator` for models with ``dual_coef_``.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
import weakref
from abc import ABCMeta, abstractmethod
from dataclasses import dataclass, replace

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from linsep.designs.backend import backend_of, is_dask_collection, refuse_array_api
from linsep.designs.dask_data import linear_scores, predicted_labels
from linsep._core.certificates import FIT_PROOF_RTOL, decision_scores, is_proof, separates, side_tolerance
from linsep._core.signed_design import column_shifts, scale_columns, unscale_coef
from linsep._core.plan import FLOAT64_ONLY, fit_plan, validation_dtypes
from linsep._core.result import MAX_ITER, NOT_SEPARABLE, SEPARABLE, demote_unproven, demote_unseparated
from linsep._core.finite import require_finite_model
from linsep._core.threads import serial_blas_below
from linsep.designs.weights import check_row_weights, class_weight_table, refuse_weights, validated_sample_weight
from linsep.kernels import KERNELS, kernel_matrix, resolve_gamma, training_samples

__all__ = ["BaseSeparator", "BaseLinearSeparator", "BaseKernelSeparator", "CLASS_WEIGHT_CONSTRAINT",
           "KERNEL_CONSTRAINTS", "POS_LABEL_CONSTRAINT", "POS_LABEL_DOC", "FitContext", "check_class_labels", "check_two_classes",
           "encode_pm1", "estimator_init", "name_backends", "is_dask_collection",
           "is_plain_training_data", "refuse_unsupported", "rows_with_weight", "starting_weights"]

CLASS_WEIGHT_CONSTRAINT = [None, StrOptions({"balanced"}), dict]
"""Constraint of ``class_weight``: ``None``, ``"balanced"`` or ``{label: weight}`` (as in scikit-learn)."""

POS_LABEL_CONSTRAINT = [None, Real, str, "boolean"]
"""Constraint of ``pos_label``: ``None`` or a class label (as scikit-learn's metrics take it)."""

POS_LABEL_DOC = """pos_label : int, float, bool, str or None, default=None
        The class that the solver and the traces treat as positive (``+1``):
        the lecture's convention, e.g. ``pos_label=1`` for ``y = [1, 1, 2,
        2]``.  ``None``: ``classes_[1]``.  Two-class fits only.
        ``classes_`` stay sorted and the stored model keeps scikit-learn's
        sign (``decision_function > 0`` means ``classes_[1]``), so with
        ``pos_label=classes_[0]`` the fitted model (``coef_`` or
        ``dual_coef_``, and ``intercept_``) is the negated final iterate,
        while ``history_`` (``a(k)``, ``b(k)``, ``e(k)``, dual
        coefficients) and the starting weights ``coef_init`` /
        ``intercept_init`` (where ``fit`` takes them) are in the
        ``pos_label`` convention (:ref:`pos-label`)."""
"""The docstring entry of ``pos_label``, shared by the estimators that take it."""

KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNELS)), callable],
    "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 0, None, closed="left")],
    "coef0": [Real],
}
"""Parameter constraints of the kernel parameters, shared by every kernel estimator."""


def estimator_init(parameters):
    """An ``__init__`` taking exactly ``parameters`` (name → default) as keyword-only arguments, stored as given.

    scikit-learn reads an estimator's parameters from the signature of its
    ``__init__``; this one carries an explicit :class:`inspect.Signature`, so
    ``get_params``, ``clone``, ``repr`` and the estimator checks see the
    parameters one by one, while their list lives in one table.
    """
    names = tuple(parameters)

    def __init__(self, **kwargs):
        unknown = [name for name in kwargs if name not in parameters]
        if unknown:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument {unknown[0]!r}")
        for name in names:
            setattr(self, name, kwargs.get(name, parameters[name]))

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=parameters[name]) for name in names])
    return __init__


def refuse_unsupported(values, neutral, where, supported=()):
    """Refuse each parameter of ``neutral`` (name → neutral value) not in ``supported`` that is set away from neutral.

    ``values`` is a mapping, or an object with the parameters as attributes
    (e.g. :class:`~linsep.solvers.ho_kashyap.params.HKParams`, whose
    :meth:`~linsep.solvers.ho_kashyap.params.HKParams.neutral` values are the defaults); ``where`` names the backend in the message.  A backend lists
    what it honours in ``supported``: a parameter added later is refused
    there until the backend declares it, never silently ignored.
    """
    for name, default in neutral.items():
        if name in supported:
            continue
        value = values.get(name, default) if isinstance(values, dict) else getattr(values, name, default)
        if value is not None and value is not default and _differs(value, default):
            raise ValueError(f"{name}={value!r} is not available for {where}; fit in memory to use it")


def _differs(value, default):
    """``value != default`` as one truth value; an array (starting weights) given where the default is a scalar differs."""
    try:
        return bool(value != default)
    except (TypeError, ValueError):  # an array's comparison has no single truth value
        return True


def starting_weights(n_classes, n_features, coef_init, intercept_init):
    """``W_0 = (coef_init, intercept_init)`` (bias last; a missing part is 0), checked; ``None`` if neither is given.

    Starting weights serve two-class problems only (one ``W_0`` per problem).
    """
    if coef_init is None and intercept_init is None:
        return None
    if n_classes != 2:
        raise ValueError("coef_init / intercept_init are supported for two-class problems only")
    coef = np.zeros(n_features) if coef_init is None else np.asarray(coef_init, dtype=float).ravel()
    if coef.shape[0] != n_features:
        raise ValueError(f"coef_init has {coef.shape[0]} entries, X has {n_features} features")
    weights = np.append(coef, 0.0 if intercept_init is None else float(intercept_init))
    if not np.all(np.isfinite(weights)):
        raise ValueError("coef_init and intercept_init must be finite")
    return weights


def encode_pm1(y, classes=None):
    """Encode labels as ``±1`` columns, as ``LabelBinarizer(neg_label=-1)`` does.

    Returns ``(targets, classes)``: ``classes`` are the sorted distinct labels
    (or the given ones); ``targets`` has shape ``(N, 1)`` for two classes
    (``classes[1]`` ↦ +1) and ``(N, K)`` for :math:`K > 2` classes (one-vs-rest:
    class ``k`` ↦ +1 in column ``k``).  Labels must already be validated
    (:func:`check_class_labels`) and, with ``classes`` given, belong to
    them.  Written with ``np.unique`` because ``LabelBinarizer`` re-runs its
    target-type checks at every call, which cost milliseconds: more than a
    whole Ho–Kashyap fit on the paper's data sets.
    """
    y = np.asarray(y)
    if classes is None:
        classes, index = np.unique(y, return_inverse=True)
    else:
        classes = np.asarray(classes)
        index = np.searchsorted(classes, y)
    if classes.size == 2:
        return np.where(index == 1, 1.0, -1.0)[:, None], classes
    targets = np.full((y.shape[0], classes.size), -1.0)
    targets[np.arange(y.shape[0]), index.ravel()] = 1.0
    return targets, classes


def check_two_classes(classes, owner):
    """Refuse training labels of one class: every linsep estimator separates at least two."""
    if classes.size < 2:
        raise ValueError(f"{owner} needs samples of at least 2 classes in the data, "
                         f"but the data contain only one class: {classes.tolist()[0]!r}")


def check_class_labels(y):
    """Refuse targets that are not class labels, as ``check_classification_targets`` does; return the classes.

    ``y`` is a 1-d array already validated by ``_validate_fit``.  Integer,
    boolean and (unicode) string labels, and floats holding whole numbers,
    are plain class labels: the sorted distinct values are returned at once
    unless there are more than 20 samples and more classes than half of them
    (scikit-learn then warns that ``y`` may be a regression target).
    Everything else (floats with fractions, bytes, object arrays) goes
    through scikit-learn's ``check_classification_targets``, which gives its
    usual error or warning.  The fast path matters because that check
    converts and inspects ``y`` again, a noticeable share of a whole
    Ho–Kashyap fit on the paper's small data sets (measured in
    ``docs/performance_notes.md``).
    """
    kind = y.dtype.kind
    if y.ndim == 1 and (kind in "biuU" or (kind == "f" and np.array_equal(y, y.astype(int)))):
        classes = np.unique(y)
        if y.shape[0] <= 20 or classes.size <= round(0.5 * y.shape[0]):
            return classes
    check_classification_targets(y)
    return np.unique(y)


def is_plain_training_data(X, y, dtypes=(np.float64,)):
    """Whether ``validate_data`` would accept ``X, y`` for fitting and return them unchanged.

    True for a 2-d NumPy array ``X`` of one of ``dtypes`` (not a subclass such as
    ``np.memmap``) of at least 2 rows and 1 column whose values are finite,
    with a 1-d NumPy ``y`` of one integer, boolean, unicode or finite float
    label per row.  The finiteness test is one sum over ``X`` (a sum of
    finite numbers that overflows only sends the data to the full checks),
    as in scikit-learn's own ``_assert_all_finite``.  Everything else,
    including every input that must be converted or refused, goes through
    ``validate_data``, which gives scikit-learn's usual conversions, errors
    and warnings.
    """
    if not (type(X) is np.ndarray and X.dtype in dtypes and X.ndim == 2
            and X.shape[0] >= 2 and X.shape[1] >= 1
            and type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == X.shape[0]
            and y.dtype.kind in "biufU"):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return math.isfinite(X.sum()) and (y.dtype.kind != "f" or math.isfinite(y.sum()))


def row_class_weights(estimator, y, *, stream=False):
    """The weight ``class_weight`` gives each row of the labels ``y`` (ones when it is ``None``).

    The one computation of class weights of ``fit`` and ``partial_fit``
    (``stream``): :func:`linsep.designs.weights.class_weight_table` validates them
    (finite, non-negative; ``"balanced"`` refused for a stream) and, for
    ``fit``, ``"balanced"`` counts the classes of ``y``.
    """
    classes = np.asarray(estimator.classes_) if stream else np.unique(y)  # fit: scikit-learn's compute_sample_weight
    table = class_weight_table(getattr(estimator, "class_weight", None), classes, type(estimator).__name__,
                               None if stream else y, stream=stream)
    return table[np.searchsorted(classes, y)]


def rows_with_weight(sample_weight):
    """Indices of the rows with a positive weight, or ``None`` when every row has one.

    A row of weight 0 takes no part in any weighted criterion, so the
    solvers never see it: for the Ho–Kashyap family its margin and error
    would otherwise enter the verdicts (:math:`Y W > 0` on every row, :math:`E \\le 0`)
    although they do not enter :math:`W`.
    """
    if sample_weight is None or sample_weight.all():
        return None
    return np.flatnonzero(sample_weight)


@dataclass(slots=True)
class FitContext:
    """What one fit hands from its validation to its solves, verdict checks and storing: one per fit.

    A fit builds one context and passes it, as an argument, through
    :meth:`BaseSeparator._fit_problems` to the family's solver call
    (``_solve_binary``) and its outputs (``_store_outputs``); nothing of it is
    kept on the estimator.  Its fields are declared (a family that needs
    more declares a subclass, as the cross-validated estimators do):

    shifts
        Power-of-two exponents of the columns rescaled before solving
        (:func:`linsep._core.signed_design.column_shifts`), or ``None``.
    fit_rows
        The rows of ``X`` the solvers fit (a held-out split or rows of weight
        0 left out), or ``None`` for all of them.
    validation
        ``(X_val, rows)``: the early-stopping rows, a separate array
        (``rows=None``) or rows of ``X`` itself; ``(None, None)`` without.
    val_weight
        Weights of the validation rows, or ``None``.
    y_val
        The validation labels as given (``None`` without validation rows).
    n_fitted
        How many rows the solvers fit (the held-out ones excluded).
    initial_weights
        Starting weights ``W_0`` (bias last), or ``None``.
    all_labels
        The labels of every row of ``X`` (the verdicts speak of all of them).
    state
        Work shared by the one-vs-rest problems (a kernel map, a Gram matrix,
        a factor, a column cache), built once per fit.
    shared
        Per-problem work done for all problems at once before they are
        solved (``_shared_work``), indexed by problem; ``None`` without.
    problem
        The index of the problem being solved (its column of the targets).
    rng
        The random generator of a fit that draws (sample orders).
    stack
        How per-problem vectors are stacked in the data's namespace
        (``np.stack``; ``dask.array.stack``, ``xp.stack`` where the data live).
    """

    shifts: np.ndarray | None = None
    fit_rows: np.ndarray | None = None
    validation: tuple = (None, None)
    val_weight: np.ndarray | None = None
    y_val: np.ndarray | None = None
    n_fitted: int | None = None
    initial_weights: np.ndarray | None = None
    all_labels: np.ndarray | None = None
    state: object = None
    shared: list | None = None
    problem: int = 0
    rng: object = None
    stack: object = np.stack


_PARAMETER_NAMES = weakref.WeakKeyDictionary()
"""Per estimator class: ``(__init__, its parameter names)``; weak, so classes made at run time can be freed."""


BACKEND_NAMES = {"{blocks}": "dask", "{Blocks}": "Dask"}
"""The backends' names where the estimators' docstrings speak of them (as tokens: the family modules name no
backend, the base names them once; :func:`name_backends` fills them in)."""


def name_backends(*owners):
    """Fill the backends' names (:data:`BACKEND_NAMES`) into the docstrings of ``owners`` (classes, methods)."""
    for owner in owners:
        function = getattr(owner, "__func__", owner)
        if function.__doc__ is not None:  # no docstrings under python -OO
            doc = function.__doc__
            for token, name in BACKEND_NAMES.items():
                doc = doc.replace(token, name)
            function.__doc__ = doc


def _fit_data_type(backend):
    """The fit data of a backend (imported at its first fit: dask only when a dask collection arrives)."""
    if backend == "dask":
        from linsep.designs.dask_fit import DaskFit

        return DaskFit
    from linsep.designs.array_api_fit import ArrayAPIFit

    return ArrayAPIFit


def _init_parameter_names(cls):
    cached = _PARAMETER_NAMES.get(cls)
    if cached is None or cached[0] is not cls.__init__:  # first use, or __init__ replaced since
        cached = (cls.__init__, tuple(super(BaseSeparator, cls)._get_param_names()))
        _PARAMETER_NAMES[cls] = cached
    return cached[1]


def _blas_threads_sized_to_data(method):
    """Run a ``fit`` or ``partial_fit`` on one BLAS thread when its ``X`` is small (``serial_blas_below``).

    The size is that of ``X`` as passed (``N × d``; ``N × N`` for kernel
    estimators, whose Gram matrix is their data): read before validation,
    from ``shape`` alone, so nothing is converted twice.
    """
    @functools.wraps(method)
    def fit_on_sized_blas_threads(self, X, *args, **kwargs):
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2 or not all(isinstance(n, Integral) for n in shape):
            return method(self, X, *args, **kwargs)  # a list, or a dask array of unknown size: decided later
        n_rows, n_cols = shape
        with serial_blas_below(n_rows * (n_rows if isinstance(self, BaseKernelSeparator) else n_cols)):
            return method(self, X, *args, **kwargs)

    fit_on_sized_blas_threads._blas_sized = True
    return fit_on_sized_blas_threads


class BaseSeparator(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Validation, label encoding, one-vs-rest and unpacking shared by all estimators.

    The fit flow lives here (:meth:`_fit_problems` in memory,
    :meth:`_fit_where_data_live` where the data live elsewhere); a family
    declares what differs: its solver call ``_solve_binary(X, y, fit, ...)
    -> SolveResult`` for one ``±1`` problem (and ``_solve_on_designs`` for
    the backends it lists in :attr:`_backends`), its parameters, its
    outputs beyond the model (:meth:`_store_outputs`) and, where the
    problems share work, :meth:`_shared_work`.  Every ``fit`` and
    ``partial_fit`` a subclass defines runs its BLAS work on one thread when
    ``X`` is small (:func:`linsep._core.threads.serial_blas_below`).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("fit", "partial_fit"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_blas_sized", False):
                setattr(cls, name, _blas_threads_sized_to_data(method))

    # Solvers work in float64: numerically safer for the least-squares and
    # projection steps, and float32 input is then fitted the same way.  A
    # subclass whose solver reads float32 as it is lists _plan.READS_FLOAT32 here;
    # its data keep their type (_plan.working_dtype decides, for every path).
    _accept_sparse = ("csr", "csc")
    _dtypes = FLOAT64_ONLY

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self._accept_sparse)
        return tags

    @classmethod
    def _get_param_names(cls):
        # The parameter names come from the signature of __init__; scikit-learn recomputes
        # them with inspect.signature in every get_params (and so in every fit's parameter
        # validation), about 20 µs, a tenth of a small fit.  Cached per class and __init__.
        return list(_init_parameter_names(cls))

    _backends = ()
    """The backends besides memory on which this estimator fits the data where they live (``"dask"``,
    ``"array_api"``: :func:`linsep.designs.backend.backend_of`), through the same flow
    (:meth:`_fit_where_data_live`) and its family's :meth:`_solve_on_designs`.  Array-API input to an estimator
    without it is refused; dask input too (:meth:`_validate_fit`)."""

    def _fit_on_backend(self, X, y, **arguments):
        """The fit of ``X`` where it lives when that is not memory and this estimator fits it there; else ``None``.

        The one place that asks which backend holds the data (the estimators'
        ``fit`` call it first; ``_validate_fit`` refuses what is left).
        """
        backend = backend_of(X, y)
        if backend not in self._backends:
            return None
        if getattr(self, "pos_label", None) is not None:
            raise ValueError(f"pos_label={self.pos_label!r} is not available for {backend} input; "
                             f"fit in memory to use it (the fitted model does not depend on it otherwise)")
        return self._fit_where_data_live(backend, X, y, **arguments)

    def _fit_where_data_live(self, backend, X, y, *, sample_weight=None, X_val=None, y_val=None, coef_init=None,
                             intercept_init=None, margin=None):
        """The fit flow of data that stay where they live (dask row blocks, an array-API device), step by step.

        The same steps as in memory, each offered by the backend's fit data
        (:class:`linsep.designs.dask_fit.DaskFit`,
        :class:`linsep.designs.array_api_fit.ArrayAPIFit`): refuse what the
        backend cannot honour → validate (the data's summaries: shape,
        classes, weights) → encode (one design per ``±1`` problem) → the
        family's solver calls over the designs (:meth:`_solve_on_designs`) →
        each verdict checked on its design → the model in the data's
        namespace, ``separable`` checked on it → the family's outputs
        (:meth:`_store_outputs`, as in memory).
        """
        data_type = _fit_data_type(backend)
        name = type(self).__name__
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        if X_val is not None and not getattr(self, "early_stopping", False):
            raise ValueError("X_val / y_val are only used with early_stopping=True")
        if not data_type.takes_weights:
            refuse_weights(self, sample_weight, data_type.weights_where)
        self._refuse_on_backend(data_type.where)
        if not (getattr(data_type, "takes_traces", False) and self._device_traces):
            refuse_unsupported(self.get_params(), {"record_history": False}, data_type.traces_where)
        data = data_type(X, y, name, wide=self._cannot_solve_wide(), sample_weight=sample_weight,
                         class_weight=getattr(self, "class_weight", None), rescale_exponent=self._rescale_exponent)
        classes = data.classes if data.labels_checked else check_class_labels(data.classes)
        check_two_classes(classes, name)
        self.n_features_in_ = data.n_features
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.classes_ = classes
        fit = FitContext(stack=data.stack, initial_weights=starting_weights(
            classes.size, data.n_features, data.host(coef_init), data.host(intercept_init)))
        results, problems = self._solve_on_designs(data, fit, X_val=X_val, y_val=y_val, margin=margin)
        if problems is not None:  # one design per problem (not a linear machine, whose verdict is its own)
            results = data.checked(results, problems)
        self._unpack_common(results)
        self.coef_, self.intercept_ = data.linear_model(results)
        if problems is not None:
            self.status_ = demote_unseparated(
                self.status_, lambda k: data.separates(problems, k, self.coef_, self.intercept_))
        fit.y_val, fit.n_fitted = data.validation_summary()
        fit.val_weight = getattr(data, "validation_weights", lambda: None)()  # weighted validation rows (device)
        self._store_outputs(results, fit)
        self.classes_ = data.fitted_classes()
        return self

    def _solve_on_designs(self, data, fit, **arguments):
        """``(results, problems)``: the family's solver calls over the problems of ``data`` (a backend's fit data).

        Declared by each family that lists :attr:`_backends`; ``problems`` is
        ``None`` where the results are not one per design (MSE's linear
        machine, which checks its own verdict).
        """
        raise NotImplementedError(f"{type(self).__name__} fits no data outside memory")

    def _refuse_on_backend(self, where):
        """Refuse the family's parameters that a backend (``where``) cannot honour (nothing by default)."""

    def _cannot_solve_wide(self):
        """``None`` where this fit solves wide ``X`` on a blockwise backend, else what cannot (named in the refusal)."""
        return None

    _device_traces = False
    """Whether this family's device fit (array-API input) records ``record_history``'s trace (its solver takes
    the fit data's ``recorder``); where not, ``record_history`` is refused for that input."""

    _device_alternative = None
    """The estimator whose device fit does this one's work (array-API input), named when this one refuses it."""

    _validation_plan = None
    """Private (tests), set on an instance as ``_solver_plan`` is: ``{"plain": False}`` sends plain data through
    ``validate_data`` too (the path of all other data); ``{"validate_data": f}`` calls ``f`` in its place (pass
    a wrapper to observe it)."""

    def _refuse_device_input(self, X, y, owner):
        """Refuse array-API ``X`` or ``y`` for a method with no fit on the device (``partial_fit``), in one line."""
        refuse_array_api(X, y, owner, self._device_alternative)

    def _validate_fit(self, X, y):
        plan = self._validation_plan or {}
        if backend_of(X, y) == "dask":
            # Estimators that fit dask arrays blockwise take them before this point (_fit_on_backend);
            # the others would silently bring all of X into memory.
            raise TypeError(
                f"{type(self).__name__} does not fit dask arrays (only HoKashyapClassifier, MSEClassifier and "
                f"LagrangianSVMClassifier do, blockwise); call X.compute() to fit the data in memory")
        # those with a device fit took theirs (_fit_on_backend)
        refuse_array_api(X, y, type(self).__name__, self._device_alternative)
        if plan.get("plain", True) and is_plain_training_data(X, y, self._dtypes):
            # What validate_data would do to such data, minus its generic dispatching
            # (dataframe detection, feature-name and tag look-ups: about 90 µs per call, half
            # of a whole HKES fit on the paper's small data sets): X and y are used as they
            # are, the feature count is recorded, stale feature names are dropped.
            self.n_features_in_ = X.shape[1]
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            X, y = plan.get("validate_data", validate_data)(
                self, X, y, accept_sparse=self._accept_sparse, dtype=validation_dtypes(self._dtypes),
                ensure_min_samples=2, y_numeric=False,
            )
        classes = check_class_labels(y)
        check_two_classes(classes, type(self).__name__)
        # _validate_extra checks validation labels against these classes
        # before _fit_problems sets the same (sorted, unique) classes_ again.
        self.classes_ = classes
        return X, y

    def _sample_weight(self, X, y, sample_weight):
        """The per-row weights :math:`s` of a fit: ``sample_weight`` times the weights of ``class_weight``.

        ``None`` when neither is given (the unweighted solvers run as they
        are).  Validated in one place by scikit-learn's
        ``_check_sample_weight`` (one finite, non-negative number per row);
        ``class_weight`` (``"balanced"``: :math:`N / (K n_k)` for class :math:`k`, or a
        dict) is computed on the original labels, so every one-vs-rest
        problem weighs each class as the user asked.  All-zero weights leave
        nothing to fit and are refused.
        """
        class_weight = getattr(self, "class_weight", None)
        if sample_weight is None and class_weight is None:
            return None
        s = validated_sample_weight(sample_weight, X)
        if class_weight is not None:
            s *= row_class_weights(self, y)
        positive = s > 0
        with np.errstate(invalid="ignore"):
            positive_range = (float(s[positive].min(initial=np.inf)), float(s.max(initial=0.0)))
        check_row_weights(type(self).__name__, finite=bool(np.all(np.isfinite(s))), smallest=float(s.min()),
                          positive_range=positive_range,
                          positive_per_class=np.unique(y[positive], return_counts=True)[1])
        return s

    def _validate_extra(self, X_extra, y_extra):
        """Validate an extra labelled set (e.g. validation data) against the fitted shape."""
        X_extra = validate_data(self, X_extra, accept_sparse=self._accept_sparse,
                                dtype=validation_dtypes(self._dtypes), reset=False)
        y_extra = np.asarray(y_extra)
        if y_extra.ndim != 1 or y_extra.shape[0] != X_extra.shape[0]:
            raise ValueError(
                f"validation labels must be a 1-d array with one label per row of X_val; "
                f"got shape {y_extra.shape} for {X_extra.shape[0]} rows"
            )
        unknown = np.setdiff1d(np.unique(y_extra), self.classes_)
        if unknown.size:
            raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
        return X_extra, y_extra

    def _early_stopping_data(self, X, y, X_val, y_val):
        """Return ``X, y, X_val, y_val`` for estimators with ``early_stopping``.

        Given validation data are validated; without them, and with
        ``early_stopping``, a stratified ``validation_fraction`` of each class
        is held out of ``X, y`` (at least one sample of each class stays for
        training) with ``random_state``.  ``X_val`` is ``None`` when there is
        no early stopping.
        """
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        if X_val is not None and not self.early_stopping:
            raise ValueError("X_val / y_val are only used with early_stopping=True")
        if X_val is not None:
            return (X, y, *self._validate_extra(X_val, y_val))
        if not self.early_stopping:
            return X, y, None, None
        fit_rows, val_rows = self._held_out_rows(y)
        return X[fit_rows], y[fit_rows], X[val_rows], y[val_rows]

    def _held_out_rows(self, y):
        """Indices ``(fit_rows, val_rows)`` of the stratified ``validation_fraction`` split of ``y`` (sorted)."""
        # A RandomState passed by the caller is used as it is; an int or None seeds a
        # numpy Generator, ~10x cheaper to create than a RandomState.  A few NumPy calls
        # instead of train_test_split(stratify=...), whose fixed cost (about 3 ms) would
        # dominate a whole HKES fit on the paper's small data sets.
        seed = self.random_state
        rng = seed if isinstance(seed, np.random.RandomState) else np.random.default_rng(seed)
        held_out = np.zeros(y.shape[0], dtype=bool)
        for label in self.classes_:  # set by _validate_fit: the sorted distinct labels of y
            members = np.flatnonzero(y == label)
            n_val = min(members.size - 1, int(round(self.validation_fraction * members.size)))
            held_out[rng.permutation(members)[:n_val]] = True
        if not held_out.any():
            raise ValueError(
                "early stopping needs a validation set, but validation_fraction="
                f"{self.validation_fraction} of {y.shape[0]} samples holds out none; "
                "give X_val/y_val or more samples")
        return np.flatnonzero(~held_out), np.flatnonzero(held_out)

    def _held_out_rows_with_weight(self, y, weights):
        """:meth:`_held_out_rows` drawn over the rows of positive weight only (all rows for ``weights=None``).

        Zero weight is a removed row: the split, and so the fit, is that of
        the data without such rows (same seed, same positions drawn).
        """
        kept = None if weights is None else rows_with_weight(weights)
        if kept is None:
            return self._held_out_rows(y)
        fit_rows, val_rows = self._held_out_rows(y[kept])
        return kept[fit_rows], kept[val_rows]

    def _fit_problems(self, X, y, fit=None, extra_targets=None, **fit_params):
        """The fit after validation, top to bottom: encode → the solvers' data → per problem: solve, check → store.

        1. encode ``y`` with the classes found by ``_validate_fit`` (one ``±1``
           column per problem, in the solver's sign: ``pos_label``);
        2. the data the solvers see (:meth:`_solver_input`: exact power-of-two
           rescaling for linear models) and the work the problems share
           (:meth:`_shared_work`, kept per problem in ``fit.shared``);
        3. for each problem: the family's solver call (``_solve_binary``), then
           the check of its ``not_separable`` proof (:meth:`_checked_proof`);
        4. the common attributes (:meth:`_unpack_common`), the model and the
           family's outputs (:meth:`_store`, :meth:`_store_outputs`), a finite
           model, and the check of ``separable`` verdicts on the stored model
           (:meth:`_check_separation`).

        ``fit`` is the fit's :class:`FitContext` (a new, empty one by
        default).  ``extra_targets`` maps a keyword of ``_solve_binary`` to
        labels to be encoded like ``y`` (e.g. ``{"y_val": y_val}``); column
        ``k`` of each encoded array goes to problem ``k``.
        """
        fit = FitContext() if fit is None else fit
        targets, self.classes_ = encode_pm1(y, self.classes_)
        sign = self._positive_sign()  # -1: the solver runs with pos_label = classes_[0] as +1
        encoded_extra = {name: sign * encode_pm1(labels, self.classes_)[0]
                         for name, labels in (extra_targets or {}).items()}
        X_solve = self._solver_input(X, fit)
        solved = targets if sign > 0 else -targets
        fit.shared = self._shared_work(X_solve, solved, fit, fit_params)
        results = []
        for column in range(targets.shape[1]):
            fit.problem = column
            per_problem = {name: values[:, column] for name, values in encoded_extra.items()}
            result = self._solve_binary(X_solve, solved[:, column], fit, **per_problem, **fit_params)
            results.append(self._checked_proof(result, X_solve, solved[:, column], fit))
        self._unpack_common(results)
        self._store(results, fit)
        require_finite_model(self)
        if sign < 0:
            self._negate_model()
        self._check_separation(X, targets, fit)
        return self

    def _shared_work(self, X, targets, fit, fit_params):
        """Work done once for all problems before they are solved: a list indexed by problem, or ``None`` (default).

        ``targets`` holds every problem's ``±1`` labels, one column each, in the solver's sign;
        ``fit_params`` the keywords each ``_solve_binary`` call will get.  The
        result is ``fit.shared``; problem ``k``'s solver call reads
        ``fit.shared[fit.problem]``.
        """
        return None

    def _positive_sign(self):
        """``-1.0`` when ``pos_label`` names ``classes_[0]`` (the solver then sees its rows as ``+1``), else ``1.0``.

        Refuses a ``pos_label`` that is not a class, or one given for more
        than two classes.  The traces keep the solver's sign; the stored
        model is negated back (:meth:`_negate_model`), so that
        ``decision_function > 0`` means ``classes_[1]`` as in scikit-learn.
        """
        pos_label = getattr(self, "pos_label", None)
        if pos_label is None:
            return 1.0
        classes = np.asarray(self.classes_)
        if classes.size != 2:
            raise ValueError(f"pos_label={pos_label!r} applies to two-class fits; {type(self).__name__} got "
                             f"{classes.size} classes {classes.tolist()} (one-vs-rest): leave pos_label=None")
        matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
        if not matches:
            raise ValueError(f"pos_label={pos_label!r} is not a class of y; the classes are {classes.tolist()}")
        return -1.0 if matches[0] == 0 else 1.0

    def _negate_model(self):
        """Turn the stored model of a ``pos_label = classes_[0]`` fit into scikit-learn's sign (``classes_[1]`` positive)."""
        self.intercept_ = -self.intercept_

    def _fit_weighted(self, X, y, sample_weight, per_row=None, fit=None, **fit_params):
        """:meth:`_fit_problems` with the fit's weights (:meth:`_sample_weight`) as ``sample_weight=``.

        Without weights (and ``class_weight=None``) this is ``_fit_problems``
        itself: the unweighted path is unchanged.  With weights, rows of
        weight 0 are removed first (:func:`rows_with_weight`), with the same
        rows of the arrays in ``per_row`` (keyword → array of one entry per
        row, e.g. a margin vector), and ``_solve_binary`` receives the
        positive weights as ``sample_weight``.
        """
        per_row = dict(per_row or {})
        weights = self._sample_weight(X, y, sample_weight)
        if weights is not None:
            rows = rows_with_weight(weights)
            if rows is not None:
                X, y, weights = X[rows], y[rows], weights[rows]
                per_row = {name: None if values is None else values[rows] for name, values in per_row.items()}
            fit_params["sample_weight"] = weights
        return self._fit_problems(X, y, fit, **per_row, **fit_params)

    # Hooks of _fit_problems: the data the solvers see, and the checks of their verdicts.
    def _solver_input(self, X, fit):
        """The training data as the solvers receive them (``X`` itself by default)."""
        return X

    def _checked_proof(self, result, X, y, fit):
        """``result``, with a ``not_separable`` verdict whose proof fails the check demoted (no check by default)."""
        return result

    def _check_separation(self, X, targets, fit):
        """Demote ``separable`` statuses that the stored model contradicts (no check by default)."""

    def _unpack_common(self, results, warn=True):
        binary = len(results) == 1
        # Which path ran, per problem (tests, benchmarks).  The solvers that record no plan (Kozinec,
        # the kernel rules) belong to float64-only estimators: they worked in self._dtypes[0].
        self._fit_plans = [fit_plan(r.extra, self._dtypes[0]) for r in results]
        statuses = np.array([r.status for r in results], dtype=object)
        n_iters = np.array([r.n_iter for r in results])
        self.status_ = statuses[0] if binary else statuses
        self.n_iter_ = int(n_iters[0]) if binary else n_iters
        histories = [r.history for r in results]
        if any(h is not None for h in histories):
            self.history_ = histories[0] if binary else histories
        elif hasattr(self, "history_"):
            del self.history_
        stuck = [self.classes_[i] if not binary else None for i, r in enumerate(results) if r.status == MAX_ITER]
        if stuck and warn:
            warnings.warn(self._convergence_message(stuck, binary), ConvergenceWarning)

    def _convergence_message(self, stuck, binary):
        """The ConvergenceWarning's text: plain class labels, and only the parameters this estimator has."""
        params = self.get_params(deep=False)
        labels = ", ".join(repr(label.item() if isinstance(label, np.generic) else label) for label in stuck)
        which = "" if binary else f" for class(es) {labels} (one-vs-rest)"
        budget = f"max_iter={params['max_iter']}" if "max_iter" in params else "its iteration budget"
        advice = ["increase max_iter"] if "max_iter" in params else []
        if "tol" in params:
            advice.append("loosen tol")
        hint = (" " + " or ".join(advice).capitalize() + ".") if advice else ""
        return (f"{type(self).__name__} reached {budget} without converging{which}; "
                f"status_ is 'max_iter'.{hint}")

    @abstractmethod
    def _solve_binary(self, X, y, fit, **kwargs):
        """Solve one ``±1`` problem and return its :class:`~linsep._core.result.SolveResult`."""

    @abstractmethod
    def _store(self, results, fit):
        """Set the model attributes (``coef_`` or ``dual_coef_``, ...) from the results, then the family's outputs."""

    def _store_outputs(self, results, fit):
        """The family's own fitted attributes beyond the model (``certificate_``, ``margin_vector_``, ...; none by default)."""


class BaseLinearSeparator(LinearClassifierMixin, BaseSeparator):
    """Base of primal models: the solver returns augmented weights (bias last).

    Data of any representable scale: columns whose magnitude lies outside
    the safe range of :func:`linsep._core.signed_design.column_shifts` (beyond :math:`2^{\\pm 53}`
    for float64) are rescaled by powers of two before solving — exact in
    floating point, and a no-op (no copy) for ordinary data — and ``coef_``
    is mapped back to the original columns.  Verdicts are then checked on the
    returned model: ``"not_separable"`` needs a proof that passes
    :func:`linsep._core.certificates.is_proof` (per-column relative residual at most
    ``FIT_PROOF_RTOL = 1e-6``), ``"separable"`` needs
    :math:`y_i \\, f(x_i) > \\tau_i` (finite, :math:`f` the ``decision_function``, :math:`\\tau_i` the rounding
    bound of ``linsep._core.certificates.side_tolerance``) on every training sample;
    a verdict that fails its check is reported as ``"converged"`` (no
    verdict).
    """

    _rescale_exponent = None
    """Columns beyond :math:`2^{\\pm n}`, :math:`n` this exponent, are rescaled (``None``: the dtype's safe range, :math:`2^{\\pm 53}` for float64)."""

    def _solver_input(self, X, fit):
        fit.shifts = shifts = column_shifts(X, self._rescale_exponent)
        if shifts is None:
            return X
        if fit.initial_weights is not None:
            # starting weights follow the columns' power-of-two scaling: the same a(1)ᵗy_i
            fit.initial_weights = np.array(fit.initial_weights, dtype=float)
            fit.initial_weights[:-1] = np.ldexp(fit.initial_weights[:-1], -shifts.astype(np.int32))
        X = scale_columns(X, shifts)
        X_val, val_rows = fit.validation  # validation rows follow the training columns' scaling too
        if val_rows is not None:  # held-out rows of X itself
            fit.validation = (X, val_rows)
        elif X_val is not None:
            fit.validation = (scale_columns(X_val, shifts), None)
        return X

    def _negate_model(self):
        super()._negate_model()
        self.coef_ = -self.coef_

    # With a held-out split (fit.fit_rows) the solvers see all of X and the fitting rows' labels.  A proof
    # found on the fitting rows is checked on them (a copy, made only then) and, zero on the held-out rows,
    # proves that all of X cannot be separated; "separable" is checked on every row of X, since the model was
    # chosen on the held-out rows, not fitted to them.
    def _checked_proof(self, result, X, y, fit):
        rows = fit.fit_rows
        if rows is None or result.status != NOT_SEPARABLE:
            return demote_unproven(result, lambda certificate: is_proof(X, y, certificate, FIT_PROOF_RTOL))
        fitted = X[rows]
        result = demote_unproven(result, lambda certificate: is_proof(fitted, y, certificate, FIT_PROOF_RTOL))
        if result.certificate is not None:
            certificate = np.zeros(X.shape[0], dtype=np.asarray(result.certificate).dtype)
            certificate[rows] = result.certificate
            result = replace(result, certificate=certificate)
        return result

    def _check_separation(self, X, targets, fit):
        claimed = np.flatnonzero(np.atleast_1d(self.status_) == SEPARABLE)
        if not claimed.size:
            return
        if fit.fit_rows is not None:  # the verdict describes every row of X, held-out ones included
            targets = encode_pm1(fit.all_labels, self.classes_)[0]
        with np.errstate(over="ignore", invalid="ignore"):
            scores = decision_scores(X, self.coef_[claimed], self.intercept_[claimed])
            tolerance = side_tolerance(X, self.coef_[claimed], self.intercept_[claimed])
        column_of = {problem: column for column, problem in enumerate(claimed)}
        self.status_ = demote_unseparated(self.status_, lambda k: separates(
            scores[:, column_of[k]], targets[:, k], tolerance[:, column_of[k]]))

    def _store(self, results, fit):
        self._store_linear_model(results, fit.shifts)
        self._store_outputs(results, fit)

    def _store_linear_model(self, results, shifts=None):
        """``coef_`` and ``intercept_`` from the results' weights (bias last), in the original columns."""
        W = np.vstack([r.weights for r in results])
        self.coef_ = W[:, :-1].copy() if shifts is None else unscale_coef(W[:, :-1], shifts)
        self.intercept_ = W[:, -1].copy()
        if shifts is not None and getattr(self, "history_", None) is not None:
            # traced weights a(k) = [w, w0] in the original columns too, like coef_
            for history in (self.history_ if isinstance(self.history_, list) else [self.history_]):
                if history is not None and "weights" in history:
                    traced = np.array(history["weights"], dtype=float)
                    with np.errstate(over="ignore"):
                        traced[..., :-1] = np.ldexp(traced[..., :-1], shifts.astype(np.int32))
                    history["weights"] = traced

    def fit(self, X, y, sample_weight=None):
        """Fit the model to ``X`` (N, d) and labels ``y`` (any two or more values).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d)
            Training samples.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).
        sample_weight : array-like of shape (N,), default=None
            Non-negative weight per row (all ones when None), multiplied by
            ``class_weight``'s; rows of weight 0 are left out of the fit
            (:ref:`weights`).

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        X, y = self._validate_fit(X, y)
        return self._fit_weighted(X, y, sample_weight)

    # Dask arrays get dask arrays back, computed block by block (linsep.designs.dask); everything else is
    # scikit-learn's LinearClassifierMixin.
    def decision_function(self, X):
        """Signed score per sample, :math:`w^t x + w_0`: positive on the side of ``classes_[1]``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (N, d)
            Samples.

        Returns
        -------
        scores : ndarray of shape (N,) or (N, K)
            One score per sample for two classes, one per class otherwise (a
            dask array for dask ``X``, computed block by block).
        """
        if backend_of(X) == "dask":
            check_is_fitted(self)
            return linear_scores(X, self.coef_, self.intercept_, self.n_features_in_, type(self).__name__)
        return super().decision_function(X)

    def predict(self, X):
        """Predicted class labels: the side of the hyperplane, or the largest score above two classes.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (N, d)
            Samples.

        Returns
        -------
        labels : ndarray of shape (N,)
            Labels from ``classes_`` (a dask array for dask ``X``).
        """
        if backend_of(X) == "dask":
            return predicted_labels(self.decision_function(X), self.classes_)
        return super().predict(X)


class BaseKernelSeparator(BaseSeparator):
    """Base of kernel models: :math:`f(x) = \\sum_i \\alpha_i k(x_i, x) + b` per problem.

    Subclasses' solvers return ``weights`` = dual coefficients :math:`\\alpha` (already
    multiplied by the :math:`\\pm 1` labels) and ``intercept`` :math:`b`.  The training
    samples are kept in ``X_fit_`` (``kernel="precomputed"`` keeps nothing and
    expects ``K(X, X_fit)`` at prediction time).

    Kernel parameters follow SVC: ``kernel``, ``gamma`` (``"scale"``,
    ``"auto"`` or a number, resolved once on the training data into
    ``_gamma``), ``degree``, ``coef0``; their constraints are
    :data:`KERNEL_CONSTRAINTS`.  A subclass whose one-vs-rest problems share
    fit-time work (a kernel column cache, a Gram matrix, an eigendecomposition)
    builds it in ``_prepare_fit(X)``; the fit's :class:`FitContext` carries it
    (``fit.state``) to the solves.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    _device_solves_dual = False
    """Whether this family's device fit (array-API input) solves the dual on the kernel matrix or its low-rank
    factor (the kernel LSVM: :class:`linsep.designs.array_api_kernel_lsvm.ArrayAPIKernelLSVMFit`, weights taken)
    instead of running on the empirical kernel map (kernel HK: :class:`linsep.designs.array_api_kernel.ArrayAPIKernelFit`)."""

    def _kernel_params(self):
        return {"gamma": self._gamma, "degree": self.degree, "coef0": self.coef0}

    def _kernel_matrix(self, A, B):
        return kernel_matrix(A, B, kernel=self.kernel, **self._kernel_params())

    def _prepare_fit(self, X, fit):
        """Fit-time state shared by the one-vs-rest problems (``None`` by default)."""
        return None

    def _negate_model(self):
        super()._negate_model()
        self.dual_coef_ = -self.dual_coef_

    def _store(self, results, fit):
        self.dual_coef_ = np.vstack([r.weights for r in results])
        self.intercept_ = np.array([r.intercept if r.intercept is not None else 0.0 for r in results])
        self._store_outputs(results, fit)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model to ``X`` (N, d) — or a Gram matrix (N, N) for ``kernel="precomputed"``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, d) or (N, N)
            Training samples, or their Gram matrix for ``kernel="precomputed"``.
        y : array-like of shape (N,)
            Class labels, any two or more values (one-vs-rest above two).

        Returns
        -------
        self : object
            The fitted estimator; ``status_`` says how each problem ended.
        """
        X, y = self._validate_fit(X, y)
        return self._fit_kernel(X, y)

    def _fit_where_data_live(self, backend, X, y, *, sample_weight=None, X_val=None, y_val=None, **ignored):
        """The kernel fit of data on a device (:class:`linsep.designs.array_api_kernel.ArrayAPIKernelFit`), step by step.

        The steps of :meth:`_fit_kernel` where the data live: refuse what the
        backend cannot honour → validate (shape, classes) → the fitted and
        validation rows (HKES's held-out split: the rows the NumPy fit holds
        out) → ``X_fit_`` and ``gamma`` → the family's solver calls over the
        kernel problems (:meth:`_solve_on_designs`) → the model in the data's
        namespace (``dual_coef_``, ``intercept_``, ``support_``, ``classes_``)
        → the family's outputs; ``separable`` is checked on held-out rows.
        """
        if self._device_solves_dual:  # the kernel LSVM: K (or its low-rank factor) and the iteration on the device
            from linsep.designs.array_api_kernel_lsvm import ArrayAPIKernelLSVMFit as ArrayAPIKernelFit
        else:
            from linsep.designs.array_api_kernel import ArrayAPIKernelFit

        name = type(self).__name__
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        if X_val is not None and not getattr(self, "early_stopping", False):
            raise ValueError("X_val / y_val are only used with early_stopping=True")
        if not ArrayAPIKernelFit.takes_weights:
            refuse_weights(self, sample_weight, ArrayAPIKernelFit.weights_where)
        self._refuse_on_backend(ArrayAPIKernelFit.where)
        if callable(self.kernel):
            raise ValueError(f"a callable kernel is not available for {ArrayAPIKernelFit.where} (it is NumPy code); "
                             "use a named kernel, or kernel='precomputed' with the Gram matrix on the device")
        if not (ArrayAPIKernelFit.takes_traces and self._device_traces):
            refuse_unsupported(self.get_params(), {"record_history": False}, ArrayAPIKernelFit.traces_where)
        data = ArrayAPIKernelFit(X, y, name, sample_weight=sample_weight,
                                 class_weight=getattr(self, "class_weight", None))
        classes = check_class_labels(data.classes)
        check_two_classes(classes, name)
        self.n_features_in_ = data.n_features
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.classes_ = classes
        self.X_fit_ = data.split(early_stopping=getattr(self, "early_stopping", False),
                                 validation_fraction=getattr(self, "validation_fraction", None),
                                 random_state=getattr(self, "random_state", None), X_val=X_val, y_val=y_val)
        self._gamma = resolve_gamma(self.gamma, self.X_fit_)
        results, problems = self._solve_on_designs(data, FitContext(), X_val=X_val, y_val=y_val)
        self._unpack_common(results)
        self.dual_coef_, self.intercept_ = data.kernel_model(results, name)
        if self._device_solves_dual:
            self._store_outputs(results, FitContext(stack=data.stack))
        else:
            self._store_outputs(results, FitContext(state=(data.kernel_map, None)))
            self.support_ = data.device_indices(self.support_)
        self.classes_ = data.fitted_classes()
        separated = None if self._device_solves_dual else data.held_out_separated(
            self.dual_coef_, self.intercept_, self.support_, self.classes_, self.X_fit_)
        if separated is not None:  # the verdict describes every row passed to fit, the held-out ones included
            self.status_ = demote_unseparated(self.status_, lambda k: separated[k])
        return self

    def _fit_kernel_weighted(self, X, y, sample_weight):
        """:meth:`_fit_kernel` with the fit's weights (:meth:`_sample_weight`) as ``sample_weight=``.

        Rows of weight 0 are left out before the kernel state is built; a
        precomputed Gram matrix would lose rows and columns (and predict
        would expect the columns of the kept rows only), so it is refused.
        """
        X, y, weights = self._rows_with_weight(X, y, self._sample_weight(X, y, sample_weight))
        return self._fit_kernel(X, y, sample_weight=weights)

    def _rows_with_weight(self, X, y, weights):
        """``X, y, weights`` without the rows of weight 0 (refused for a precomputed Gram matrix)."""
        rows = rows_with_weight(weights)
        if rows is None:
            return X, y, weights
        if self.kernel == "precomputed":
            raise ValueError("kernel='precomputed' takes no zero sample weights: remove those rows and "
                             "columns of the Gram matrix (and the columns of X_val)")
        return X[rows], y[rows], weights[rows]

    def _fit_kernel(self, X, y, fit=None, extra_targets=None, sample_weight=None, **fit_params):
        """Keep the training samples, resolve ``gamma``, build the shared state, solve."""
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"kernel='precomputed' needs a square Gram matrix, got shape {X.shape}")
        if column_shifts(X) is not None:
            # Kernel values of such data over- or underflow, and no rescaling is exact for
            # every kernel and gamma: refuse rather than fit garbage.
            what = "Gram matrix" if self.kernel == "precomputed" else "X"
            raise ValueError(
                f"{type(self).__name__} needs the magnitudes of its {what} within 2^-p .. 2^p per column "
                f"(p = {np.finfo(X.dtype).nmant + 1} for {X.dtype}); some column lies outside. Rescale "
                f"the data (e.g. with StandardScaler) or use a linear estimator, which rescales exactly.")
        self.X_fit_ = X = training_samples(X, self.kernel)  # own copy, sparse duplicates summed
        self._gamma = resolve_gamma(self.gamma, X)
        fit = FitContext() if fit is None else fit
        fit.state = self._prepare_fit(X, fit)
        if sample_weight is not None:
            fit_params["sample_weight"] = sample_weight
        return self._fit_problems(X, y, fit, extra_targets=extra_targets, **fit_params)

    def decision_function(self, X):
        """Signed score per sample, :math:`\\sum_i \\alpha_i k(x_i, x) + b`: positive on the side of ``classes_[1]``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d) or (n, N)
            Samples, or their kernel values against ``X_fit_`` for
            ``kernel="precomputed"``.

        Returns
        -------
        scores : ndarray of shape (n,) or (n, K)
            One score per sample for two classes, one per class otherwise.
        """
        check_is_fitted(self)
        if backend_of(X) == "array_api":  # a model fitted on the device, scored there
            from linsep.designs.array_api_kernel import kernel_scores

            return kernel_scores(self, X)
        X = validate_data(self, X, accept_sparse=self._accept_sparse, dtype=validation_dtypes(self._dtypes),
                          reset=False)
        K = X if self.kernel == "precomputed" else self._kernel_matrix(X, self.X_fit_)
        scores = np.asarray(K @ self.dual_coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class labels: the sign of the score, or the largest score above two classes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d) or (n, N)
            Samples, or their kernel values against ``X_fit_`` for
            ``kernel="precomputed"``.

        Returns
        -------
        labels : ndarray of shape (n,)
            Labels from ``classes_``.
        """
        scores = self.decision_function(X)
        if backend_of(X) == "array_api":
            from linsep.designs.array_api_kernel import kernel_labels

            return kernel_labels(scores, self.classes_)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
