"""Every registered estimator × awkward and hostile inputs: a clear refusal or an honest, finite model.

For each cell the fit must either

* raise ``ValueError`` or ``TypeError`` (validation refusing the input), or
* return a model whose decision function is finite on the training data
  (and, for a sparse matrix with unsummed duplicate entries, equal to the
  model of the same matrix in canonical form),
  whose ``status_`` agrees with its training errors (``"separable"`` ⇒ every
  training sample on its side, per one-vs-rest problem), and whose
  ``"not_separable"`` certificate, if it keeps one, passes an independent
  check (:func:`linsep._certificates.is_proof` for the linear estimators; for
  the kernel ones ``u >= 0, u != 0`` and the bias row ``Σ u_i y_i = 0``).

The estimators come from the registry, so one registered later is tested
here without a change.  Work per cell is bounded by a small ``max_iter``
(and ``cv=3``), not by a clock; the data are a few dozen rows.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import available_classifiers, make_classifier
from linsep._base import BaseKernelSeparator
from linsep._certificates import FIT_PROOF_RTOL, is_proof

NAMES = list(available_classifiers())
BUDGET = {"max_iter": 50, "cv": 3}
"""Parameters that bound the work of a cell, set where the estimator has them."""
SEED = 0
"""``random_state`` where the estimator has one: its held-out validation rows can then be found again."""


def _blobs(n=16, d=2, shift=4.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, d)) + shift * y[:, None]
    return X, y


def _with_unsummed_duplicates(X):
    """CSR storing each cell ``v`` as ``v + 7`` and ``-7``: scipy and scikit-learn keep such duplicates."""
    n, d = X.shape
    indptr = np.arange(n + 1) * 2 * d
    indices = np.tile(np.repeat(np.arange(d), 2), n)
    data = np.column_stack([X.ravel() + 7.0, np.full(X.size, -7.0)]).ravel()
    return sp.csr_matrix((data, indices, indptr), shape=X.shape)


def _case(name):
    """The input class ``name`` as ``(X, y)``; ``sparse_<class>``: that class as a CSR matrix."""
    if name.startswith("sparse_") and name[len("sparse_"):] in CASES:
        X, y = _case(name[len("sparse_"):])
        return sp.csr_matrix(X), y
    X, y = _blobs()
    if name == "nan":
        X[3, 1] = np.nan
    elif name == "inf":
        X[3, 1] = -np.inf
    elif name == "empty":
        X, y = X[:0], y[:0]
    elif name == "no_features":
        X = X[:, :0]
    elif name == "one_sample":
        X, y = X[:1], y[:1]
    elif name == "one_class":
        y = np.zeros_like(y)
    elif name == "mismatched_rows":
        y = y[:-1]
    elif name == "X_1d":
        X = X[:, 0]
    elif name == "X_3d":
        X = X[:, :, None]
    elif name == "y_2d":
        y = np.c_[y, y]
    elif name == "strings_in_X":
        X = X.astype(str).astype(object)
        X[0, 0] = "a"
    elif name == "complex_X":
        X = X + 1j
    elif name == "object_numbers":
        X = X.astype(object)
    elif name == "bool_X":
        X = np.c_[y == 1, np.arange(y.size) % 3 == 0]
    elif name == "int_X":
        X = np.round(X).astype(np.int64)
    elif name == "float32":
        X = X.astype(np.float32)
    elif name == "nan_label":
        y = y.astype(float)
        y[2] = np.nan
    elif name == "continuous_labels":
        y = np.linspace(0, 1, y.size)
    elif name == "string_labels":
        y = np.where(y == 1, "yes", "no")
    elif name == "three_classes":
        X = np.vstack([X, _blobs(6, shift=-6.0, seed=1)[0]])
        y = np.r_[y, np.full(6, 2)]
    elif name == "one_row_per_class":
        X, y = X[[0, -1]], y[[0, -1]]
    elif name == "imbalanced":
        X, y = np.vstack([X[y == 0], X[y == 1][:1]]), np.r_[y[y == 0], 1]
    elif name == "rank_deficient":
        X = np.c_[X, X[:, 0], 2 * X[:, 1]]
    elif name == "wide":  # d > N
        X = np.c_[X, np.random.default_rng(3).normal(size=(y.size, 40))]
    elif name == "constant_columns":
        X = np.c_[X, np.full(y.size, 5.0), np.zeros(y.size)]
    elif name == "all_zero":
        X = np.zeros_like(X)
    elif name == "duplicate_rows_both_labels":
        X[1] = X[-1]
    elif name == "sparse_duplicates":
        X = _with_unsummed_duplicates(X)
    elif name == "sparse_csc":
        X = sp.csc_matrix(X)
    elif name == "tiny_values":
        X = X * 1e-300
    elif name == "huge_values":
        X = X * 1e300
    elif name == "extreme_column_scales":
        X = np.c_[X[:, 0] * 1e-300, X[:, 1] * 1e300]
    elif name == "large_offset":
        X = X + 1e12
    elif name == "list_of_lists":
        X, y = X.tolist(), y.tolist()
    elif name == "fortran_order":
        X = np.asfortranarray(X)
    elif name == "strided_view":
        X = np.repeat(X, 2, axis=1)[:, ::2]
    elif name == "int8_X":
        X = np.clip(np.round(X), -100, 100).astype(np.int8)
    elif name == "float16":
        X = X.astype(np.float16)
    elif name == "bool_labels":
        y = y == 1
    elif name == "negative_labels":
        y = np.where(y == 1, -1, -7)
    elif name == "wide_scale_range":  # within float64's safe range, twelve orders apart
        X = np.c_[X[:, 0] * 1e-6, X[:, 1] * 1e6]
    elif name == "identical_rows":  # every row the same, both labels: not separable
        X = np.ones_like(X)
    elif name == "subnormal_column":
        X = np.c_[X, np.full(y.size, 5e-324)]
    elif name == "many_classes":
        X = np.vstack([X, X + 20.0, X - 20.0])
        y = np.r_[y, y + 2, y + 4]
    elif name != "plain":
        raise ValueError(name)
    return X, y


CASES = ["plain", "nan", "inf", "empty", "no_features", "one_sample", "one_class", "mismatched_rows", "X_1d",
         "X_3d", "y_2d", "strings_in_X", "complex_X", "object_numbers", "bool_X", "int_X", "float32", "nan_label",
         "continuous_labels", "string_labels", "three_classes", "one_row_per_class", "imbalanced",
         "rank_deficient", "wide", "constant_columns", "all_zero", "duplicate_rows_both_labels",
         "sparse_duplicates", "sparse_csc", "tiny_values", "huge_values", "extreme_column_scales",
         "large_offset", "list_of_lists", "fortran_order", "strided_view", "int8_X", "float16", "bool_labels",
         "negative_labels", "wide_scale_range", "identical_rows", "subnormal_column", "many_classes"]
CASES += [f"sparse_{case}" for case in ("tiny_values", "huge_values", "extreme_column_scales", "wide",
                                        "constant_columns", "rank_deficient", "three_classes", "imbalanced",
                                        "one_row_per_class", "identical_rows", "large_offset")]


def _estimator(name):
    estimator = make_classifier(name)
    params = estimator.get_params()
    estimator.set_params(**{key: value for key, value in BUDGET.items()
                            if key in params and (params[key] is None or params[key] > value)})
    if "random_state" in params:
        estimator.set_params(random_state=SEED)
    return estimator


def _verdict_rows(model, y):
    """The rows the verdicts speak of: every row passed to ``fit``, held-out validation rows included."""
    return np.arange(y.shape[0])


def _certificate_rows(model, y):
    """The rows a certificate has entries for: a kernel model's proof is over the samples it keeps.

    With early stopping a kernel model keeps only the fitting rows (``X_fit_``); a linear model's
    proof is padded with zeros to every row of ``X``.
    """
    if isinstance(model, BaseKernelSeparator) and getattr(model, "early_stopping", False):
        return model._held_out_rows(y)[0]  # the same seeded split as the fit's
    return _verdict_rows(model, y)


def _problems(model, X, y):
    """Per one-vs-rest problem: the training scores and the ``±1`` targets (one column for two classes)."""
    scores = np.asarray(model.decision_function(X), dtype=float)
    classes = model.classes_
    if scores.ndim == 1:
        return scores[:, None], np.where(y == classes[1], 1.0, -1.0)[:, None]
    return scores, np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def _as_list(value, n_problems):
    return [value] if n_problems == 1 else list(value)


def _check_certificate(model, X, targets, problem, u, rows):
    if np.shape(u) == (targets.shape[0],):  # a proof over every row passed to fit (held-out ones at 0)
        rows = np.arange(targets.shape[0])
    assert np.shape(u) == rows.shape
    u_rows, u = np.asarray(u, dtype=float), np.zeros(targets.shape[0])
    u[rows] = u_rows  # a proof for some of the rows, padded with zeros, is a proof for all of them
    assert np.all(np.isfinite(u)) and u.min() >= 0 and u.max() > 0
    if isinstance(model, BaseKernelSeparator):  # a proof in feature space: its bias row is checkable here
        assert abs(u @ targets[:, problem]) <= FIT_PROOF_RTOL * u.sum()
    else:
        assert is_proof(X, targets[:, problem], u, FIT_PROOF_RTOL)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_refused_clearly_or_fitted_honestly(name, case):
    X, y = _case(case)
    model = _estimator(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning at the small budget is an honest outcome
        try:
            model.fit(X, y)
        except (ValueError, TypeError) as refusal:
            assert str(refusal)  # a message, not a bare exception
            return
    X_float = X.astype(float) if sp.issparse(X) else np.asarray(X, dtype=float)
    y = np.asarray(y)
    scores, targets = _problems(model, X_float, y)
    assert np.all(np.isfinite(scores)), "non-finite decision values on the training data"
    statuses = _as_list(model.status_, targets.shape[1])
    certificates = _as_list(getattr(model, "certificate_", None), targets.shape[1]) \
        if getattr(model, "certificate_", None) is not None else [None] * targets.shape[1]
    if case == "sparse_duplicates":  # the same matrix, each cell stored once: the same model
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            canonical = _estimator(name).fit(sp.csr_matrix(X.toarray()), y)
        np.testing.assert_allclose(scores, _problems(canonical, X_float, y)[0], rtol=1e-6, atol=1e-9)
    rows = _verdict_rows(model, y)
    for problem, status in enumerate(statuses):
        if status == "separable":
            assert np.all(targets[rows, problem] * scores[rows, problem] > 0), \
                f"status 'separable' with training errors (problem {problem})"
        if status == "not_separable" and certificates[problem] is not None:
            _check_certificate(model, X_float, targets, problem, certificates[problem], _certificate_rows(model, y))


def _nan_kernel(A, B):
    return np.full((A.shape[0], B.shape[0]), np.nan)


def _inf_kernel(A, B):
    return np.full((A.shape[0], B.shape[0]), np.inf)


def _wrong_shape_kernel(A, B):
    return np.ones((A.shape[0], B.shape[0] + 1))


HOSTILE_PARAMETERS = {
    "nan_kernel": {"kernel": _nan_kernel},
    "inf_kernel": {"kernel": _inf_kernel},
    "wrong_shape_kernel": {"kernel": _wrong_shape_kernel},
    "overflowing_poly_kernel": {"kernel": "poly", "degree": 400, "gamma": 10.0},
    "huge_step": {"learning_rate": 1e308},
}


HOSTILE_CELLS = [(name, hostile) for name in NAMES for hostile, params in HOSTILE_PARAMETERS.items()
                 if set(params) <= set(make_classifier(name).get_params())]
"""Each estimator with each hostile parameter set it has parameters for."""


@pytest.mark.parametrize("name, hostile", HOSTILE_CELLS)
def test_hostile_parameters_are_refused_or_give_a_finite_model(name, hostile):
    params = HOSTILE_PARAMETERS[hostile]
    model = _estimator(name)
    X, y = _blobs()
    X = X * 1e3  # large enough for a step near the largest float to overflow the weights
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            model.set_params(**params).fit(X, y)
        except (ValueError, TypeError, FloatingPointError) as refusal:  # Widrow–Hoff/LMS: "diverged"
            assert str(refusal)
            return
    scores, targets = _problems(model, X, y)
    assert np.all(np.isfinite(scores))
    if model.status_ == "separable":
        assert np.all(targets[:, 0] * scores[:, 0] > 0)


@pytest.mark.parametrize("name", NAMES)
def test_overwriting_the_training_data_after_fit_changes_no_prediction(name):
    X, y = _blobs()
    X_train = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _estimator(name).fit(X_train, y)
    before = model.decision_function(X)
    X_train[:] = 0.0
    np.testing.assert_array_equal(model.decision_function(X), before)
