"""Array-API input (``sklearn.set_config(array_api_dispatch=True)``): the fits that run on the input's device.

With dispatch on, an ``X`` of another array-API namespace (PyTorch on any
device, CuPy, array-api-strict) is fitted where it lives by the in-memory
drivers over an :class:`~linsep.designs.array_api.ArrayAPIDesign`: HK,
modified HK, MHKS, MHKA, HKES and HKESA (:func:`fit_ho_kashyap`), MSE and
its linear machine above two classes (:func:`fit_mse`), the linear LSVM
(:func:`fit_lsvm`), the batch perceptron (:func:`fit_batch_perceptron`) and
batch Widrow–Hoff (:func:`fit_widrow_hoff`).  The other estimators refuse
such input (:func:`linsep.designs.backend.refuse_array_api`).
``coef_``, ``intercept_``, ``classes_``, ``margin_vector_``,
``decision_function``, ``predict`` and ``score`` are in the input's
namespace and on its device.  The namespace is the one scikit-learn
resolves for ``X`` (a CUDA tensor or a CuPy array carries no
``__array_namespace__``); the labels stay on the device, only the distinct
labels are copied to the host.  What crosses to the host during a fit is
listed in :mod:`linsep.designs.array_api`; an exact check of a
non-separability certificate copies ``X`` once more (float64), on that
verdict only.  Early stopping (HKES, HKESA) holds its rows out on the
device, as the NumPy fit draws them; starting weights go to the device.
Traces and weights are refused in one line
(:func:`linsep.solvers.ho_kashyap.params.refuse_unsupported`,
:func:`linsep.designs.weights.refuse_weights`); columns that the NumPy fit
would rescale by powers of two are refused too.  scikit-learn needs
``SCIPY_ARRAY_API=1`` in the environment for dispatch.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from linsep.designs.weights import refuse_weights
from linsep.estimators.base import FitContext, check_class_labels, check_two_classes
from linsep._core.certificates import FIT_PROOF_RTOL, is_proof
from linsep._core.signed_design import columns_out_of_range, safe_exponent
from linsep.solvers.ho_kashyap.params import HKParams
from linsep.estimators.base import refuse_unsupported, starting_weights
from linsep._core.result import CONVERGED, MAX_ITER, SEPARABLE, SolveResult, demote_unproven, demote_unseparated
from linsep._core.plan import dtype_plan, working_dtype

from linsep.designs.array_api import ArrayAPIDesign, DeviceLSVMFactor, host_copy, read_scalars, to_host
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.lsvm.solver import lagrangian_svm
from linsep.solvers.mse import largest_gram_eigenvalue, mse
from linsep.solvers.perceptron.solver import SCHEDULES, step_size

__all__ = ["HK_SUPPORTED", "fit_batch_perceptron", "fit_ho_kashyap", "fit_lsvm", "fit_mse", "fit_widrow_hoff"]

HK_SUPPORTED = frozenset({"learning_rate", "b0", "max_iter", "tol", "stopping", "stop_at_separation", "update",
                          "C", "loss", "irls_floor", "n_iter_no_change", "validation_tol"})
"""The :class:`~linsep.solvers.ho_kashyap.params.HKParams` honoured on array-API input; any other one set is refused.

The patience (``n_iter_no_change``, ``validation_tol``) acts with validation rows: HKES's held-out split
(drawn on the device, :func:`_held_out_split`) or ``X_val, y_val`` on ``X``'s device.
"""

_ESTIMATOR_NEUTRAL = {"record_history": False}


def _prepare(estimator, X, y, rescale_exponent=None):
    """``(xp, device, X as floats, the classes (NumPy), the labels in xp on X's device)``; sets ``n_features_in_``.

    The labels are read through the namespace scikit-learn resolves for ``X``
    (a CUDA tensor or a CuPy array has no ``__array_namespace__`` and refuses
    ``np.asarray``): the distinct labels are the one copy to the host.  Host
    labels (a NumPy array or a list) are copied to ``X``'s device once.
    """
    from sklearn.utils._array_api import device, get_namespace

    xp, _ = get_namespace(X)
    where = device(X)
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
        raise ValueError(f"X must be 2-d with at least 2 samples and 1 feature, got shape {X.shape}")
    if not xp.isdtype(X.dtype, "real floating"):
        X = xp.astype(X, xp.float64)
    if not bool(xp.all(xp.isfinite(X))):
        raise ValueError("Input X contains NaN or infinity.")
    largest = to_host(xp.max(xp.abs(X), axis=0), xp)
    p = safe_exponent(working_dtype(X, xp=xp), rescale_exponent)  # the range the NumPy fit leaves as it is
    outside = np.flatnonzero(columns_out_of_range(largest, p))
    if outside.size:
        raise ValueError(f"column {outside[0]} of X has magnitudes up to {largest[outside[0]]:.3g}, outside 2^±{p}; "
                         "array-API input is not rescaled (NumPy input is, exactly): rescale X before fitting")
    labels = _device_labels(y, xp, where)
    if tuple(labels.shape) != (X.shape[0],):
        raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got shape {tuple(labels.shape)}")
    classes = check_class_labels(host_copy(xp.unique_values(labels), xp))
    check_two_classes(classes, type(estimator).__name__)
    estimator.n_features_in_ = X.shape[1]
    return xp, where, X, classes, labels


def _device_labels(y, xp, where):
    """The labels ``y`` in ``xp`` on ``where``: device labels as they are, host labels copied there once."""
    from sklearn.utils._array_api import get_namespace

    if isinstance(y, (np.ndarray, list, tuple)):
        host = np.asarray(y)
        if host.dtype.kind not in "biuf":
            raise ValueError(f"labels of array-API input must be numbers or booleans, got dtype {host.dtype}; "
                             "encode them (sklearn.preprocessing.LabelEncoder) or fit NumPy arrays")
        return xp.asarray(host, device=where)
    y_xp, _ = get_namespace(y)
    if y_xp.__name__ != xp.__name__:
        raise ValueError(f"y must be an array of X's namespace ({xp.__name__}) or a NumPy array, "
                         f"got one of {y_xp.__name__}")
    from sklearn.utils._array_api import device

    if device(y) != where:
        raise ValueError(f"y lives on {device(y)}, X on {where}: move y to X's device (y.to_device(X.device))")
    return y


def _designs(X, labels, classes, xp, where):
    positives = [classes[1]] if classes.size == 2 else list(classes)
    one = xp.ones(labels.shape, dtype=X.dtype, device=where)
    return [ArrayAPIDesign(X, xp.where(labels == c.item(), one, -one), xp, where) for c in positives]


def _store(estimator, results, designs, X, xp, where, classes, all_rows=None):
    """Checked verdicts, the common attributes, and the model in the input's namespace.

    ``designs`` are the problems the solver fitted (a proof is checked on
    them: one explicit copy of their rows to the host, on that verdict only);
    ``all_rows`` (held-out early stopping: ``(designs on every row, the fitted
    rows' mask)``) are those a ``separable`` verdict must hold on, and a
    certificate is extended to them with zeros on the held-out rows.
    """
    checked = [demote_unproven(result, lambda certificate, design=design: is_proof(
        to_host(design.X, xp), to_host(design.y, xp), to_host(certificate, xp), FIT_PROOF_RTOL))
        for result, design in zip(results, designs)]
    if all_rows is not None:
        designs, fitted = all_rows
        position = xp.clip(xp.cumulative_sum(xp.astype(fitted, xp.int64)) - 1, min=0)  # row -> its fitted row
        checked = [result if result.certificate is None else replace(result, certificate=xp.where(
            fitted, xp.take(result.certificate, position), xp.zeros_like(designs[0].y))) for result in checked]
    estimator.classes_ = classes
    estimator._unpack_common(checked)
    W = np.vstack([r.weights for r in checked])
    estimator.coef_ = xp.asarray(W[:, :-1], dtype=X.dtype, device=where)
    estimator.intercept_ = xp.asarray(W[:, -1], dtype=X.dtype, device=where)
    def separates(k):  # separable must hold for the stored (rounded) model
        stored = np.append(to_host(estimator.coef_[k, ...], xp), float(estimator.intercept_[k]))
        return designs[k].count_nonpositive(stored)[1] > 0

    estimator.status_ = demote_unseparated(estimator.status_, separates)
    if classes.dtype.kind in "biuf":
        estimator.classes_ = xp.asarray(classes, device=where)
    return checked


def _pick(results, values):
    return values[0] if len(results) == 1 else list(values)


def fit_ho_kashyap(estimator, X, y, X_val=None, y_val=None, coef_init=None, intercept_init=None, sample_weight=None):
    """:meth:`linsep.HoKashyapClassifier.fit` for array-API ``X`` (see the module)."""
    refuse_weights(estimator, sample_weight, "array-API arrays")
    params = HKParams.from_estimator(estimator)
    where_ = "array-API input"
    refuse_unsupported(params, HKParams.neutral(), where_, HK_SUPPORTED)
    refuse_unsupported(estimator.get_params(), _ESTIMATOR_NEUTRAL, where_)
    xp, where, X, classes, labels = _prepare(estimator, X, y)
    start = _starting_weights(classes, X, coef_init, intercept_init, xp)
    designs = _designs(X, labels, classes, xp, where)
    validation, all_rows, summary = [None] * len(designs), None, None
    if X_val is not None or y_val is not None:
        if X_val is None or y_val is None:
            raise ValueError("give both X_val and y_val, or neither")
        if not estimator.early_stopping:
            raise ValueError("X_val / y_val are only used with early_stopping=True")
        X_val, labels_val = _validation_data(X, X_val, y_val, classes, xp, where)
        validation = _designs(X_val, labels_val, classes, xp, where)
        values, counts = xp.unique_counts(labels_val)  # what the warning of an unregularised fit reads of y_val
        summary = (np.repeat(host_copy(values, xp), host_copy(counts, xp)), X.shape[0])
    elif estimator.early_stopping:
        fitted, held_out, counts = _held_out_split(estimator, labels, classes, xp)
        validation = _designs(X[held_out], labels[held_out], classes, xp, where)
        all_rows = (designs, fitted)
        designs = _designs(X[fitted], labels[fitted], classes, xp, where)
        summary = (np.repeat(classes, counts), int(X.shape[0] - counts.sum()))
    gram = designs[0].gram()  # shared by the one-vs-rest problems (signs do not change it)
    results = [ho_kashyap(design, **params.solver_kwargs(), gram=gram, Y_val=val, initial_weights=start)
               for design, val in zip(designs, validation)]
    results = _store(estimator, results, designs, X, xp, where, classes, all_rows)
    estimator.certificate_ = _pick(results, [r.certificate for r in results])
    estimator.margin_vector_ = _pick(results, [r.margin for r in results])
    if estimator.early_stopping:
        estimator.best_iter_ = results[0].best_iter if len(results) == 1 else np.array([r.best_iter for r in results])
        if estimator.C is None:
            y_val_summary, n_fitted = summary
            estimator._warn_if_unregularised(results, FitContext(y_val=y_val_summary, n_fitted=n_fitted,
                                                                 classes=classes))
    return estimator


def _starting_weights(classes, X, coef_init, intercept_init, xp):
    """``W_0`` on the host (``p`` numbers, checked by :func:`~linsep.solvers.ho_kashyap.params.starting_weights`).

    ``coef_init`` / ``intercept_init`` may be NumPy or of ``X``'s namespace
    (copied to the host explicitly; the solver puts ``W_0`` on the device).
    """
    def on_host(value):
        return value if value is None or isinstance(value, (np.ndarray, list, tuple, int, float)) else \
            host_copy(value, xp)

    return starting_weights(classes.size, X.shape[1], on_host(coef_init), on_host(intercept_init))


def _held_out_split(estimator, labels, classes, xp):
    """HKES's stratified hold-out split on the device: ``(fitted rows, held-out rows, held-out count per class)``.

    The rows are boolean masks of ``labels``; the split is the one
    :meth:`~linsep.estimators.base.BaseSeparator._held_out_rows` draws for
    the same labels and ``random_state``: the random permutation of each
    class's members is drawn on the host (it depends only on their count)
    and sent to the device as a mask over the class's ranks, ``K`` small
    uploads; the labels themselves stay on the device.
    """
    seed = estimator.random_state
    rng = seed if isinstance(seed, np.random.RandomState) else np.random.default_rng(seed)
    sizes = host_copy(xp.unique_counts(labels)[1], xp)  # classes are sorted, as unique_counts returns them
    held_out, counts = None, np.zeros(classes.size, dtype=np.int64)
    for k, (label, size) in enumerate(zip(classes, sizes)):
        members = labels == label.item()
        n_val = min(int(size) - 1, int(round(estimator.validation_fraction * int(size))))
        chosen = np.zeros(int(size), dtype=bool)
        chosen[rng.permutation(int(size))[:n_val]] = True  # permutation(members) is members[permutation(size)]
        rank = xp.clip(xp.cumulative_sum(xp.astype(members, xp.int64)) - 1, min=0)  # a member's index among them
        mine = members & xp.take(xp.asarray(chosen, device=labels.device), rank)
        held_out = mine if held_out is None else held_out | mine
        counts[k] = n_val
    if counts.sum() == 0:
        raise ValueError(
            "early stopping needs a validation set, but validation_fraction="
            f"{estimator.validation_fraction} of {labels.shape[0]} samples holds out none; "
            "give X_val/y_val or more samples")
    return ~held_out, held_out, counts


def _validation_data(X, X_val, y_val, classes, xp, where):
    """Given validation data on ``X``'s device: ``(X_val as X's type, its labels)``, checked."""
    from sklearn.utils._array_api import get_namespace

    if isinstance(X_val, np.ndarray) or get_namespace(X_val)[0].__name__ != xp.__name__:
        raise ValueError(f"X_val must be an array of X's namespace ({xp.__name__}) on X's device")
    if X_val.ndim != 2 or X_val.shape[1] != X.shape[1]:
        raise ValueError(f"X_val must have {X.shape[1]} columns, got shape {tuple(X_val.shape)}")
    labels = _device_labels(y_val, xp, where)
    if tuple(labels.shape) != (X_val.shape[0],):
        raise ValueError(f"validation labels must be a 1-d array with one label per row of X_val; "
                         f"got shape {tuple(labels.shape)} for {X_val.shape[0]} rows")
    unknown = np.setdiff1d(host_copy(xp.unique_values(labels), xp), classes)
    if unknown.size:
        raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
    return xp.astype(X_val, X.dtype), labels


def fit_mse(estimator, X, y, margin=None, sample_weight=None):
    """:meth:`linsep.MSEClassifier.fit` for array-API ``X``: ``Y⁺b`` (two classes)."""
    refuse_weights(estimator, sample_weight, "array-API arrays")
    # a trace would be dropped silently otherwise (the array-API solve records none)
    refuse_unsupported(estimator.get_params(), {"record_history": False}, "array-API input")
    xp, where, X, classes, labels = _prepare(estimator, X, y)
    if classes.size != 2:
        return _fit_linear_machine(estimator, X, labels, classes, xp, where, margin)
    (design,) = _designs(X, labels, classes, xp, where)
    if margin is not None and np.ndim(margin) == 0:
        margin = design.constant_vector(float(margin))
    results = _store(estimator, [mse(design, margin, C=estimator.C)], [design], X, xp, where, classes)
    estimator.margin_vector_ = results[0].margin
    return estimator


def _fit_linear_machine(estimator, X, labels, classes, xp, where, margin):
    """MSE's linear machine (more than two classes) on the device: ``W = A⁺B`` with ``A = [X, 1]``.

    ``B`` holds ``b_i`` in the column of sample ``i``'s class (zeros elsewhere),
    as :func:`linsep.solvers.mse.mse_linear_machine` builds it; the solve is
    one ``p × K`` product with the W-step matrix of
    :class:`~linsep.designs.array_api.DeviceLeastSquares`.  ``separable``
    holds when every sample's own discriminant is strictly the largest, for
    the stored (rounded) model too; one scalar crosses to the host for it.
    """
    one = xp.ones(labels.shape, dtype=X.dtype, device=where)
    design = ArrayAPIDesign(X, one, xp, where)  # all labels +1: A = [X, 1]
    b = one if margin is None else (design.constant_vector(float(margin)) if np.ndim(margin) == 0
                                    else design.vector(margin))
    members = xp.stack([labels == c.item() for c in classes], axis=1)  # (N, K), the own class of each row
    B = xp.where(members, b[:, None], xp.zeros_like(X[:, :1]))
    factor = design.least_squares_solver(estimator.C)
    W = factor.solve_normal(xp.astype(xp.concat([X.T @ B, xp.sum(B, axis=0)[None, :]], axis=0), xp.float64))
    weights = to_host(W, xp)  # p × K numbers, once
    estimator.classes_ = classes
    results = [SolveResult(weights=weights[:, k], n_iter=1, status=CONVERGED, margin=B[:, k],
                           extra={**factor.stats, "plan": dtype_plan(design.dtype)}) for k in range(classes.size)]
    estimator._unpack_common(results)
    estimator.coef_ = xp.asarray(weights[:-1, :].T, dtype=X.dtype, device=where)
    estimator.intercept_ = xp.asarray(weights[-1, :], dtype=X.dtype, device=where)
    scores = X @ estimator.coef_.T + estimator.intercept_  # the stored model's discriminants
    own = xp.sum(xp.where(members, scores, xp.zeros_like(scores)), axis=1)
    others = xp.max(xp.where(members, xp.full_like(scores, -xp.inf), scores), axis=1)
    separated = bool(xp.all(xp.isfinite(scores)) & xp.all(own - others > 0))
    estimator.status_ = np.array([SEPARABLE if separated else CONVERGED] * classes.size, dtype=object)
    estimator.margin_vector_ = B
    if classes.dtype.kind in "biuf":
        estimator.classes_ = xp.asarray(classes, device=where)
    return estimator


def fit_batch_perceptron(estimator, X, y, sample_weight=None, coef_init=None, intercept_init=None):
    """:meth:`linsep.BatchPerceptronClassifier.fit` for array-API ``X``: the batch rule on the device.

    :func:`linsep.solvers.perceptron.solver.batch_perceptron`'s iteration
    written with the design's products: ``a ← a + η_k Yᵀ 1_M`` over the
    mistakes ``M = {i : a^t y_i <= b}``; ``a`` stays on the device and
    each iteration reads one number, the count of mistakes (``history_``).
    """
    refuse_weights(estimator, sample_weight, "array-API arrays")
    refuse_unsupported(estimator.get_params(), {"record_history": False}, "array-API input")
    if estimator.schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {estimator.schedule!r}")
    xp, where, X, classes, labels = _prepare(estimator, X, y)
    designs = _designs(X, labels, classes, xp, where)
    start = _starting_weights(classes, X, coef_init, intercept_init, xp)
    results = [_batch_perceptron(design, estimator, start) for design in designs]
    _store(estimator, results, designs, X, xp, where, classes)
    return estimator


def _batch_perceptron(design, estimator, start):
    xp, margin = design.xp, float(estimator.margin)
    a = xp.zeros(design.shape[1], dtype=xp.float64, device=design.device) if start is None else \
        xp.asarray(start, dtype=xp.float64, device=design.device)
    mistakes, status = [], MAX_ITER
    for k in range(1, estimator.max_iter + 1):
        wrong = xp.astype(design.scores(a) <= margin, design.X.dtype)
        (count,) = read_scalars(xp, [xp.sum(wrong)])
        mistakes.append(int(count))
        if count == 0:
            status = SEPARABLE
            break
        a = a + step_size(estimator.learning_rate, estimator.schedule, k) * design.rmatvec(wrong)
    if status == MAX_ITER and read_scalars(xp, [xp.min(design.scores(a))])[0] > margin:
        status = SEPARABLE
    if not bool(xp.all(xp.isfinite(a))):
        raise FloatingPointError("the batch perceptron's weights overflow; scale the features")
    return SolveResult(weights=design.host_weights(a, design.dtype), n_iter=len(mistakes), status=status,
                       history={"mistakes": np.asarray(mistakes, dtype=np.int64)},
                       extra={"plan": dtype_plan(design.dtype)})


def fit_widrow_hoff(estimator, X, y, margin=None, sample_weight=None, coef_init=None, intercept_init=None):
    """:meth:`linsep.WidrowHoffClassifier.fit` for array-API ``X``: batch gradient descent on the device.

    :func:`linsep.solvers.mse.widrow_hoff`'s iteration with the design's
    products; ``a`` stays on the device and each iteration reads two
    numbers (the criterion and the gradient's norm) in one copy.  The
    automatic step comes from :func:`linsep.solvers.mse.largest_gram_eigenvalue`'s
    power iteration on the ``p × p`` Gram matrix (copied to the host once):
    ``YᵀY v`` is the same product.  Columns beyond ``2^±8``, which the NumPy
    fit rescales to precondition the rule, are refused (rescale them).
    """
    refuse_weights(estimator, sample_weight, "array-API arrays")
    refuse_unsupported(estimator.get_params(), {"record_history": False}, "array-API input")
    if estimator.schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {estimator.schedule!r}")
    xp, where, X, classes, labels = _prepare(estimator, X, y, estimator._rescale_exponent)
    designs = _designs(X, labels, classes, xp, where)
    start = _starting_weights(classes, X, coef_init, intercept_init, xp)
    if margin is None:
        b = designs[0].constant_vector(1.0)
    elif np.ndim(margin) == 0:
        b = designs[0].constant_vector(float(margin))
    else:
        b = designs[0].vector(margin)
    if tuple(b.shape) != (X.shape[0],):
        raise ValueError(f"margin must be a number or have one entry per sample ({X.shape[0]}), "
                         f"got shape {tuple(b.shape)}")
    finite, smallest = read_scalars(xp, [xp.all(xp.isfinite(b)), xp.min(b)])
    if not finite or smallest <= 0:
        raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
    learning_rate = estimator.learning_rate
    if learning_rate is None:  # as widrow_hoff chooses it (see there), from the Gram matrix's largest eigenvalue
        gram = to_host(designs[0].gram(), xp)  # signs do not change YᵀY
        lam = largest_gram_eigenvalue(None, gram=gram)
        learning_rate = (2.0 if estimator.schedule == "inverse" else 1.0) / lam if lam > 0 else 1.0
    results = [_widrow_hoff(design, b, estimator, learning_rate, start) for design in designs]
    _store(estimator, results, designs, X, xp, where, classes)
    estimator.margin_vector_ = b if len(designs) == 1 else xp.stack([b] * len(designs), axis=1)
    return estimator


def _widrow_hoff(design, b, estimator, learning_rate, start):
    xp = design.xp
    a = xp.zeros(design.shape[1], dtype=xp.float64, device=design.device) if start is None else \
        xp.asarray(start, dtype=xp.float64, device=design.device)
    (norm_b,) = read_scalars(xp, [xp.linalg.vector_norm(design.rmatvec(b))])
    target = estimator.tol * norm_b
    criterion, status, k = [], MAX_ITER, 0
    while True:
        r = design.scores(a) - b
        g = design.rmatvec(r)
        J, norm_g, finite = read_scalars(xp, [xp.sum(r * r), xp.linalg.vector_norm(g), xp.all(xp.isfinite(a))])
        if not finite:
            raise FloatingPointError(
                f"Widrow–Hoff diverged at iteration {k}: the learning rate is too large for this data; "
                "use learning_rate=None (automatic) or a smaller value, or scale the features")
        criterion.append(J)
        if norm_g <= target:
            status = CONVERGED
            break
        if k >= estimator.max_iter:
            break
        k += 1
        a = a - step_size(learning_rate, estimator.schedule, k) * g
    (smallest,) = read_scalars(xp, [xp.min(r + b)])
    return SolveResult(weights=design.host_weights(a, design.dtype), n_iter=k,
                       status=SEPARABLE if smallest > 0 else status, margin=b,
                       history={"criterion": np.asarray(criterion)}, extra={"plan": dtype_plan(design.dtype)})


def fit_lsvm(estimator, X, y, sample_weight=None):
    """:meth:`linsep.LagrangianSVMClassifier.fit` for array-API ``X``: iteration (22) on the device.

    :func:`linsep.solvers.lsvm.solver.lagrangian_svm` over the design with a
    :class:`~linsep.designs.array_api.DeviceLSVMFactor` (one ``p × p`` factor
    for every one-vs-rest problem); ``alpha_`` stays on the device.
    """
    refuse_weights(estimator, sample_weight, "array-API arrays")
    refuse_unsupported(estimator.get_params(), {"record_history": False}, "array-API input")
    xp, where, X, classes, labels = _prepare(estimator, X, y)
    designs = _designs(X, labels, classes, xp, where)
    factor = DeviceLSVMFactor(designs[0], estimator.C)
    results = [lagrangian_svm(design, None, C=estimator.C, mu=estimator.mu, tol=estimator.tol,
                              max_iter=estimator.max_iter, factor=factor) for design in designs]
    _store(estimator, results, designs, X, xp, where, classes)
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else xp.stack(alphas)
    return estimator
