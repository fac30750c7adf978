"""Every registered estimator × awkward and hostile inputs: a clear refusal or an honest, finite model.

For each cell the fit must either

* raise ``ValueError`` or ``TypeError`` (validation refusing the input), or
* return a model whose decision function is finite on the training data
  (and, for a sparse matrix with unsummed duplicate entries, equal to the
  model of the same matrix in canonical form),
  whose ``status_`` agrees with its training errors (``"separable"`` ⇒ every
  training sample on its side, per one-vs-rest problem), and whose
  ``"not_separable"`` certificate, if it keeps one, passes an independent
  check (:func:`linsep._core.certificates.is_proof` for the linear estimators; for
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
from linsep.estimators.base import BaseKernelSeparator
from linsep._core.certificates import FIT_PROOF_RTOL, is_proof

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


# ================================================================ the newer features (issue 31)
#
# Weights, persistence, data files and Dask chunking, each input class with the
# expectation checked independently of the code under test: a saved file
# against its bytes, a weighted fit against the fit of the data without the
# zero-weight rows, memory and time in a capped child process.

import gzip
import inspect
import json
import os
import subprocess
import sys
import textwrap

import linsep
from linsep.persistence.model_file import MAX_JSON_DEPTH, ModelFileError, write_file
from model_file_mutations import rewrite_model_file
from linsep.datasets import DataFileError, read_data_file

WEIGHTED = [name for name in NAMES if "class_weight" in make_classifier(name).get_params()]
STREAMS = {"perceptron": {}, "lms": {"learning_rate": 0.01}, "kernel_perceptron": {"gamma": 0.5}}


def _three_classes():
    rng = np.random.default_rng(0)
    centers = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 6.0]])
    y = np.repeat([0, 1, 2], 8)
    return centers[y] + rng.normal(size=(24, 2)), y


def _run_child(code, timeout=60):
    """Run ``code`` in a fresh interpreter; its stdout (the child prints its measurements as JSON)."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=timeout, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- weights

@pytest.mark.parametrize("name", WEIGHTED)
def test_negative_class_weight_is_refused_naming_class_weight(name):
    X, y = _three_classes()
    clf = _estimator(name).set_params(class_weight={0: 1.0, 1: -1.0, 2: 1.0})
    with pytest.raises(ValueError, match="class_weight"):
        clf.fit(X, y)


@pytest.mark.parametrize("name", WEIGHTED)
@pytest.mark.parametrize("big", [1e16, 1e300])
def test_one_extreme_weight_fits_correctly_or_is_refused(name, big):
    X, y = _blobs(n=24, shift=8.0)
    s = np.ones(len(y))
    s[5] = big
    clf = _estimator(name)
    if "sample_weight" not in inspect.signature(clf.fit).parameters:
        pytest.skip("no sample_weight")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y, sample_weight=s)
    except ValueError as exc:
        assert "weight" in str(exc)
        return
    assert clf.score(X, y) == 1.0, f"status {clf.status_} with training accuracy {clf.score(X, y)}"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_partial_fit_weighs_the_classes_as_fit(name):
    X, y = _blobs(n=40, shift=2.0)
    params = {**STREAMS[name], "shuffle": False, "class_weight": {0: 1.0, 1: 5.0}}
    fitted = make_classifier(name, max_iter=1, **params).fit(X, y)
    streamed = make_classifier(name, **params).partial_fit(X, y, classes=[0, 1])
    unweighted = make_classifier(name, **{**params, "class_weight": None}).partial_fit(X, y, classes=[0, 1])
    np.testing.assert_allclose(streamed.decision_function(X), fitted.decision_function(X), rtol=1e-12, atol=1e-12)
    assert not np.allclose(streamed.decision_function(X), unweighted.decision_function(X))
    for bad in ("balanced", {0: -1.0, 1: 1.0}):
        with pytest.raises(ValueError, match="class_weight"):
            make_classifier(name, **{**params, "class_weight": bad}).partial_fit(X, y, classes=[0, 1])


def test_lms_stream_survives_a_chunk_that_overflows():
    rng = np.random.default_rng(0)
    X, y = np.vstack([rng.normal(-1, 1, (200, 5)), rng.normal(1, 1, (200, 5))]), np.repeat([0, 1], 200)
    clf = make_classifier("lms", random_state=0).partial_fit(X, y, classes=[0, 1])
    before = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(clf).items()}
    with pytest.raises(FloatingPointError, match="estimator is as before"):
        clf.partial_fit(10.0 * X, y)
    assert set(vars(clf)) == set(before)
    for key, value in before.items():
        assert np.array_equal(getattr(clf, key), value) if isinstance(value, np.ndarray) else getattr(clf, key) == value
    clf.partial_fit(X, y)  # the stream goes on
    assert np.isfinite(clf.coef_).all()


@pytest.mark.parametrize("name", ["hkes", "hkesa", "kernel_hkes"])
def test_zero_weight_row_is_a_removed_row_with_a_held_out_split(name):
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(-1, 1.5, (30, 2)), rng.normal(1, 1.5, (30, 2))])
    y = np.repeat([0, 1], 30)
    s = np.ones(60)
    s[[3, 40]] = 0
    weighted = make_classifier(name, random_state=0).fit(X, y, sample_weight=s)
    removed = make_classifier(name, random_state=0).fit(X[s > 0], y[s > 0])
    np.testing.assert_allclose(weighted.decision_function(X), removed.decision_function(X), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- persistence

def _model():
    X, y = _blobs()
    return make_classifier("mse").fit(X, y)


def test_a_failed_save_leaves_the_previous_file_byte_identical(tmp_path):
    path = tmp_path / "model.npz"
    linsep.save(_model(), path)
    before = path.read_bytes()
    # a full disk: the child may write 1 KiB per file, the model is larger
    result = _run_child(f"""
        import json, resource, signal
        import numpy as np
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        import linsep
        X = np.random.default_rng(0).normal(size=(200, 30)); y = np.arange(200) % 2
        model = linsep.KernelPerceptronClassifier(max_iter=2).fit(X, y)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
        try:
            linsep.save(model, {str(path)!r}); error = None
        except OSError as exc:
            error = type(exc).__name__
        print(json.dumps({{"error": error}}))
    """)
    assert result["error"] is not None
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]  # no temporary file left


@pytest.mark.parametrize("kind", ["directory", "device"])
def test_a_device_or_directory_output_is_refused_and_untouched(tmp_path, kind):
    path = tmp_path / "out" if kind == "directory" else "/dev/null"
    if kind == "directory":
        path.mkdir()
        (path / "keep").write_text("x")
    before = os.stat(path)
    with pytest.raises(ModelFileError, match="directory|regular file"):
        linsep.save(_model(), path)
    with pytest.raises(ModelFileError, match="directory|regular file"):
        write_file(path, b"labels\n")
    after = os.stat(path)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    if kind == "directory":
        assert [p.name for p in path.iterdir()] == ["keep"]
    from linsep.cli import main
    X, y = _blobs()
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    assert main(["fit", "mse", str(data), "-o", str(path)]) == 2


def test_an_atomic_write_keeps_the_mode_and_replaces_the_content(tmp_path):
    path = tmp_path / "model.npz"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    write_file(path, b"new")
    assert path.read_bytes() == b"new" and (os.stat(path).st_mode & 0o777) == 0o640


def test_a_model_without_a_classifier_is_not_saved(tmp_path):
    from sklearn.preprocessing import StandardScaler

    with pytest.raises(ModelFileError, match="classifier"):
        linsep.save(StandardScaler().fit(_blobs()[0]), tmp_path / "s.npz")
    assert not (tmp_path / "s.npz").exists()


def _node(tree, name):
    if isinstance(tree, dict):
        if tree.get("__estimator__") == name:
            return tree
        tree = list(tree.values())
    for value in tree if isinstance(tree, list) else []:
        found = _node(value, name)
        if found is not None:
            return found
    return None


def _bare_scaler_root(meta, arrays):
    meta["root"] = meta["root"]["params"]["steps"]["__list__"][0]["__tuple__"][1]
    for key in [k for k in arrays if not k.startswith("model.steps.0.")]:
        del arrays[key]


def _kw_args(meta, arrays):
    _node(meta, "FunctionTransformer")["params"]["kw_args"] = {"__dict__": {"a": {"__value__": 1}}}


def _sparse_scale(meta, arrays):
    scaler = _node(meta, "StandardScaler")
    key = scaler["attributes"]["scale_"]["__array__"]
    arrays["s.data"], arrays["s.indices"], arrays["s.indptr"] = arrays.pop(key), np.arange(2), np.array([0, 2])
    scaler["attributes"]["scale_"] = {"__sparse__": "csr", "shape": [1, 2], "data": {"__array__": "s.data"},
                                      "indices": {"__array__": "s.indices"}, "indptr": {"__array__": "s.indptr"}}


def _object_class(meta, arrays):
    node = _node(meta, "MSEClassifier")
    key = node["attributes"]["classes_"]["__array__"]
    del arrays[key]
    node["attributes"]["classes_"] = {"__object_array__": [{"__list__": []}, {"__value__": "b"}], "shape": [2]}


@pytest.mark.parametrize("edit, words", [
    (_bare_scaler_root, "classifier"),
    (_kw_args, "kw_args"),
    (_sparse_scale, "sparse"),
    (_object_class, "classes_"),
])
def test_tampered_composite_files_are_refused_in_one_line(tmp_path, edit, words):
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _blobs()
    model = make_pipeline(StandardScaler(), make_column_transformer((StandardScaler(), [0]), remainder="passthrough"),
                          make_classifier("mse")).fit(X, y)
    path = linsep.save(model, tmp_path / "m.npz")
    rewrite_model_file(path, edit)
    with pytest.raises(ModelFileError, match=words) as info:
        linsep.load(path)
    assert "\n" not in str(info.value)


def test_what_save_writes_load_reads_and_beyond_is_refused_at_save(tmp_path):
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _blobs()

    def nested(levels):
        model = make_classifier("mse")
        for _ in range(levels):
            model = make_pipeline(make_column_transformer((StandardScaler(), [0]), remainder="passthrough"), model)
        return model.fit(X, y)

    four = nested(4)
    np.testing.assert_array_equal(linsep.load(linsep.save(four, tmp_path / "4.npz")).predict(X), four.predict(X))
    deep = nested(MAX_JSON_DEPTH // 6 + 1)
    with pytest.raises(ModelFileError, match="nested"):
        linsep.save(deep, tmp_path / "deep.npz")
    assert not (tmp_path / "deep.npz").exists()


def test_predict_writes_one_line_per_sample_whatever_the_labels(tmp_path, capsys):
    from linsep.cli import main

    data = tmp_path / "d.csv"
    data.write_text('x,y\n0,"a\nb"\n1,c\n3,c\n-1,"a\nb"\n')
    assert main(["fit", "mse", str(data), "-o", str(tmp_path / "m.npz")]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.npz"), str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ['"a\\nb"', "c", "c", '"a\\nb"']


# ---------------------------------------------------------------- data files

def _bomb(tmp_path, suffix):
    """A 2 MB gzip file of valid rows that decompresses to about 2 GB (concatenated gzip members)."""
    line = b"1 1:0.5 2:0.25\n" if "svm" in suffix else b"0.5,0.25,1\n"
    member = gzip.compress(line * (2**20 // len(line)), compresslevel=9)
    path = tmp_path / f"bomb{suffix}"
    path.write_bytes(member * (2 * 10**6 // len(member)))
    return path


def _read_in_child(path):
    """``read_data_file(path)`` in a fresh process: its error (or None) and how much the process grew.

    The time it took is measured too, for the record (``benchmarks`` style: shared machines make wall-clock
    bounds in tests flaky); the bounds that make the refusal quick are on bytes, asserted by the callers.
    """
    return _run_child(f"""
        import json, resource, time
        from linsep.datasets import read_data_file
        start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            read_data_file({str(path)!r}); error = None
        except ValueError as exc:
            error = str(exc)
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
        print(json.dumps({{"error": error, "seconds": time.perf_counter() - start, "grown": grown}}))
    """)


@pytest.mark.parametrize("suffix", [".csv.gz", ".svm.gz"])
def test_a_gzip_bomb_is_refused_quickly_in_little_memory(tmp_path, suffix):
    path = _bomb(tmp_path, suffix)
    assert path.stat().st_size <= 2 * 10**6
    result = _read_in_child(path)
    assert result["error"] is not None and "max_decompressed_bytes" in result["error"]
    assert result["grown"] < 200e6, result
    with pytest.raises(DataFileError, match="max_decompressed_bytes"):
        read_data_file(path, max_decompressed_bytes=2**20)


def test_the_decompression_bound_is_configurable(tmp_path):
    path = tmp_path / "d.csv.gz"
    path.write_bytes(gzip.compress(b"0,0,0\n1,1,1\n" * 1000))
    with pytest.raises(DataFileError, match="max_decompressed_bytes"):
        read_data_file(path, max_decompressed_bytes=100)
    assert read_data_file(path, max_decompressed_bytes=None)[0].shape == (2000, 2)


def test_a_huge_svmlight_index_is_refused_quickly_in_little_memory(tmp_path):
    path = tmp_path / "wide.svm"
    path.write_bytes(b"1 2147483647:1\n-1 1:1\n")
    assert path.stat().st_size <= 40
    result = _read_in_child(path)
    assert result["error"] is not None and "max_features" in result["error"]
    assert result["grown"] < 200e6, result
    small = tmp_path / "small.svm"
    small.write_bytes(b"1 10000000:1\n-1 1:1\n1 2:1\n-1 3:1\n")
    with pytest.raises(DataFileError, match="max_features"):
        read_data_file(small)
    assert read_data_file(small, max_features=None)[0].shape == (4, 10_000_000)


# ---------------------------------------------------------------- Dask chunking

DASK_NAMES = [name for name in NAMES if name in ("hk", "modified_hk", "mhks", "mhka", "hkes", "hkesa", "mse", "lsvm")]


@pytest.mark.parametrize("name", DASK_NAMES)
def test_dask_fits_arrays_with_empty_row_chunks_as_in_memory(name):
    da = pytest.importorskip("dask.array")
    X, y = _blobs(n=40, shift=3.0)
    chunks = (10, 0, 15, 0, 15)
    on_blocks = make_classifier(name, random_state=0).fit(da.from_array(X, chunks=(chunks, 2)),
                                                          da.from_array(y, chunks=(chunks,)))
    in_memory = make_classifier(name, random_state=0).fit(X, y)
    if name.startswith("hkes"):  # the held-out split is drawn per row block on dask: same verdicts, not iterates
        assert on_blocks.score(X, y) >= 0.9
        return
    np.testing.assert_allclose(on_blocks.decision_function(X), in_memory.decision_function(X), rtol=1e-6, atol=1e-8)
