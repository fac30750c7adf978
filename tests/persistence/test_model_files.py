"""Model files under damage and tampering: refused in one line (exit 2) or loaded with identical predictions.

Damage: every single-byte corruption (several XOR masks) and every truncation
of a small model file.  Tampering: contents edited with the checksum
recomputed, over primal, kernel and one-vs-rest models — the loader must
check types, shapes, finiteness and parameters itself.
"""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import make_classifier
from linsep.persistence.model_file import MAX_JSON_DEPTH, ModelFileError, checksum, check_fitted_model, load_model, save_model
from linsep.cli import main
from problems import overwrite

X_TRAIN = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 3.0], [4.0, 3.0], [3.0, 4.0]])
Y_TRAIN = np.array([0, 0, 0, 1, 1, 1])
X_TEST = np.random.default_rng(0).normal(2.0, 2.0, (40, 2))


def _fit(name, n_classes=2, sparse=False):
    X, y = X_TRAIN, Y_TRAIN
    if n_classes == 3:
        X, y = np.vstack([X, X + [6.0, 0.0]]), np.r_[y, np.full(6, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_classifier(name).fit(sp.csr_matrix(X) if sparse else X, y)


def _write(path, meta, arrays):
    """Write a model file from (meta, arrays) as save_model lays it out, with the checksum recomputed."""
    meta = dict(meta)
    meta.pop("checksum", None)
    meta["checksum"] = checksum(meta, arrays)
    with open(path, "wb") as handle:
        np.savez(handle, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)


def _read(path):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    return json.loads(arrays.pop("__meta__").tobytes()), arrays


def _refused(path, match=None):
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path)), message
    if match:
        assert match in message, message
    return message


# ---------------------------------------------------------------- damage

@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.npz"
    estimator = _fit("hk")
    save_model(estimator, "hk", path)
    return path, path.read_bytes(), estimator.predict(X_TEST), estimator.decision_function(X_TEST)


def _outcome(path, data, predictions, scores):
    """'refused' or 'same'; anything else (a traceback, different predictions) fails the test."""
    overwrite(path, data)
    try:
        model, _ = load_model(path)
    except ModelFileError as exc:
        assert "\n" not in str(exc)
        return "refused"
    assert np.array_equal(model.predict(X_TEST), predictions)
    assert np.array_equal(model.decision_function(X_TEST), scores)
    return "same"


def test_every_single_byte_corruption_is_refused_or_harmless(tmp_path, small_model):
    path, good, predictions, scores = small_model
    assert 1000 < len(good) < 4000  # a few KB: every byte is tried
    outcomes = {"refused": 0, "same": 0}
    for mask in (0xFF, 0x01, 0x08, 0x80):  # 0x01: encryption flag, 0x08: compression method / data descriptor
        for position in range(len(good)):
            damaged = bytearray(good)
            damaged[position] ^= mask
            outcomes[_outcome(tmp_path / "m.npz", bytes(damaged), predictions, scores)] += 1
    # Bytes of the zip bookkeeping that no reader needs (timestamps, "made by", attributes) change nothing.
    assert outcomes["refused"] > 0.8 * 4 * len(good) and outcomes["same"] > 0


def test_every_truncation_is_refused(tmp_path, small_model):
    path, good, predictions, scores = small_model
    for length in range(len(good)):
        assert _outcome(tmp_path / "m.npz", good[:length], predictions, scores) == "refused"


def test_damaged_file_through_the_command_line_is_one_line(tmp_path, small_model, capsys):
    path, good, _, _ = small_model
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n3,4\n")
    for position in range(0, len(good), 97):
        damaged = bytearray(good)
        damaged[position] ^= 0xFF
        overwrite(tmp_path / "m.npz", bytes(damaged))
        code = main(["predict", str(tmp_path / "m.npz"), str(data)])
        out, err = capsys.readouterr()
        assert code in (0, 2)
        if code == 2:
            assert len(err.splitlines()) == 1 and err.startswith("linsep predict: error: ") and not out


def test_zip_features_save_model_never_writes_are_refused(tmp_path, small_model):
    import zipfile

    path, good, _, _ = small_model
    with np.load(path) as archive:
        members = {f"{k}.npy": None for k in archive.files}
    with zipfile.ZipFile(path) as source:
        contents = {name: source.read(name) for name in members}
    target = tmp_path / "deflated.npz"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name, content in contents.items():
            out.writestr(name, content)
    _refused(target, "compressed")
    with zipfile.ZipFile(target, "w") as out:
        for name, content in contents.items():
            out.writestr(name, content)
        out.writestr("notes.txt", b"hello")
    _refused(target, "not an array")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(target, "w") as out:
            for name, content in contents.items():
                out.writestr(name, content)
            out.writestr("coef_.npy", contents["coef_.npy"])
    _refused(target, "duplicate")


def test_deep_metadata_is_refused_before_parsing(tmp_path):
    path = tmp_path / "deep.npz"
    for depth in (MAX_JSON_DEPTH + 1, 100_000):
        text = '{"format": "linsep-model", "version": 1, "x": ' + "[" * depth + "]" * depth + "}"
        np.savez(open(path, "wb"), __meta__=np.frombuffer(text.encode(), np.uint8))
        _refused(path, "nested deeper")
    # brackets inside strings do not count
    meta, arrays = _read(_saved(tmp_path, "hk"))
    meta["linsep_version"] = "[" * 1000
    _write(path, meta, arrays)
    load_model(path)


def test_metadata_that_is_not_json_or_not_utf8_is_refused(tmp_path):
    path = tmp_path / "m.npz"
    for blob, match in ((b"\xff\xfe", "UTF-8"), (b"{not json", "JSON"), (b"[1, 2]", "format"),
                        (b'{"format": "linsep-model", "version": 1, "n": ' + b"9" * 5000 + b"}", "JSON")):
        np.savez(open(path, "wb"), __meta__=np.frombuffer(blob, np.uint8))
        _refused(path, match)


# ---------------------------------------------------------------- tampering, checksum recomputed

def _saved(tmp_path, name, n_classes=2, sparse=False):
    path = tmp_path / f"{name}-{n_classes}{'-sparse' if sparse else ''}.npz"
    save_model(_fit(name, n_classes, sparse), name, path)
    return path


def _set(attribute, value):
    def edit(meta, arrays):
        meta["attributes"][attribute] = {"__value__": value}

    return edit


def _set_array(attribute, make):
    def edit(meta, arrays):
        arrays[attribute] = make(arrays[attribute])

    return edit


def _set_param(name, value):
    def edit(meta, arrays):
        meta["params"][name] = value

    return edit


def _drop(attribute):
    def edit(meta, arrays):
        del meta["attributes"][attribute]
        arrays.pop(attribute, None)

    return edit


# (estimator, classes, edit, words the message must contain)
TAMPERING = [
    ("hk", 2, _set("n_features_in_", "x"), "n_features_in_"),
    ("hk", 2, _set("n_features_in_", 3), "coef_ has shape"),
    ("hk", 2, _set("classes_", None), "classes_"),
    ("hk", 2, _set_array("classes_", lambda a: a[::-1].copy()), "sorted"),
    ("hk", 2, _set_array("classes_", lambda a: a[:1].copy()), "at least 2"),
    ("hk", 2, _set_array("classes_", lambda a: np.array([0.0, np.nan])), "classes_"),
    ("hk", 2, _set_array("coef_", lambda a: np.full_like(a, np.nan)), "non-finite"),
    ("hk", 2, _set_array("coef_", lambda a: a.astype(np.int64)), "dtype"),
    ("hk", 2, _set_array("coef_", lambda a: a.astype(str)), "dtype"),
    ("hk", 2, _set_array("coef_", lambda a: a.ravel()), "shape"),
    ("hk", 2, _set_array("intercept_", lambda a: np.r_[a, a]), "shape"),
    ("hk", 2, _set_array("intercept_", lambda a: a + np.inf), "non-finite"),
    ("hk", 2, _drop("coef_"), "coef_ is missing"),
    ("hk", 2, _drop("classes_"), "classes_"),
    ("hk", 2, _set("status_", "great"), "status_"),
    ("hk", 2, _set("n_iter_", -1), "n_iter_"),
    ("hk", 2, _set("n_iter_", 1.5), "n_iter_"),
    ("hk", 2, _set("n_iter_", True), "n_iter_"),
    ("hk", 2, _set("margin_vector_", [1, 2]), "margin_vector_"),
    ("hk", 2, _set_param("C", "abc"), "parameter"),
    ("hk", 2, _set_param("max_iter", -5), "parameter"),
    ("hk", 2, _set_param("loss", None), "parameter"),
    ("hk", 2, _set_param("no_such_parameter", 1), "rebuild"),
    ("hk", 2, lambda m, a: m.update(algorithm="nope"), "rebuild"),
    ("hk", 2, lambda m, a: m.update(algorithm=["hk"]), "malformed"),
    ("hk", 2, lambda m, a: m.update(params=None), "malformed"),
    ("hk", 2, lambda m, a: m.update(extra=1), "metadata keys"),
    ("hk", 2, lambda m, a: m.pop("classes"), "metadata keys"),
    ("hk", 2, lambda m, a: m.update(classes={"__value__": [0, 1]}), "malformed scalar"),
    ("hk", 2, lambda m, a: m["attributes"].update(predict={"__value__": 1}), "not a fitted attribute"),
    ("hk", 2, lambda m, a: m["attributes"].update(C={"__value__": 1}), "not a fitted attribute"),
    ("hk", 2, lambda m, a: m["attributes"].update(x={"__array__": "nowhere"}), "missing array"),
    ("hk", 2, lambda m, a: m["attributes"].update(x={"__array__": "coef_"}), "missing array"),  # used twice
    ("hk", 2, lambda m, a: m["attributes"].update(x={"__strange__": 1}), "malformed"),
    ("hk", 2, lambda m, a: m["attributes"].update(x=[1]), "malformed"),
    ("hk", 2, lambda m, a: a.update(extra=np.zeros(2)), "not referenced"),
    ("hk", 3, _set_array("coef_", lambda a: a[:2].copy()), "coef_ has shape"),
    ("hk", 3, lambda m, a: m["attributes"].update(status_={"__object_array__": [{"__value__": "converged"}] * 2,
                                                             "shape": [2]}), "one value per class"),
    ("hk", 3, lambda m, a: m["attributes"].update(status_={"__object_array__": [{"__value__": "converged"}] * 3,
                                                             "shape": [4]}), "malformed shape"),
    ("hk", 3, _set_array("n_iter_", lambda a: -a), "n_iter_"),
    ("hk", 3, _set("status_", "converged"), "one value per class"),
    ("mse", 3, _set_array("margin_vector_", lambda a: a[:, :2].copy()), "one value per class"),
    ("kernel_hk", 2, _set_array("dual_coef_", lambda a: a[:, 1:].copy()), "dual_coef_ has shape"),
    ("kernel_hk", 2, _set_array("X_fit_", lambda a: a[1:].copy()), "dual_coef_ has shape"),
    ("kernel_hk", 2, _set_array("X_fit_", lambda a: np.where(a > 1, np.inf, a)), "non-finite"),
    ("kernel_hk", 2, _set("_gamma", -1.0), "_gamma"),
    ("kernel_hk", 2, _set("_gamma", "abc"), "_gamma"),
    ("kernel_hk", 2, _set("_gamma", 10 ** 400), "_gamma"),
    ("kernel_hk", 2, _drop("X_fit_"), "X_fit_ is missing"),
    ("kernel_hk", 2, _set_param("kernel", "nope"), "parameter"),
    ("kernel_hk", 2, _set_param("gamma", 2.0), "_gamma"),
    ("kernel_perceptron", 3, _set_array("alpha_", lambda a: a[:2].copy()), "one value per class"),
    ("kernel_perceptron", 3, _set_array("dual_coef_", lambda a: a.T.copy()), "dual_coef_ has shape"),
    ("kernel_sk", 3, _set_array("margin_", lambda a: np.array(["a", "b", "c"])), "margin_"),
    ("hkes", 2, _set("best_iter_", "x"), "best_iter_"),
    ("hkes", 2, lambda m, a: m["attributes"].update(history_={"__value__": 3}), "history_"),
    ("kernel_hk", 2, _set("rank_", -2), "rank_"),
]


@pytest.mark.parametrize("name, n_classes, edit, words", TAMPERING,
                         ids=[f"{t[0]}-{t[1]}-{i}" for i, t in enumerate(TAMPERING)])
def test_tampered_contents_are_refused(tmp_path, name, n_classes, edit, words):
    path = _saved(tmp_path, name, n_classes)
    load_model(path)  # the untouched file loads
    meta, arrays = _read(path)
    edit(meta, arrays)
    _write(path, meta, arrays)
    _refused(path, words)


def test_tampered_file_through_the_command_line(tmp_path, capsys):
    path = _saved(tmp_path, "hk")
    meta, arrays = _read(path)
    arrays["coef_"] = np.full_like(arrays["coef_"], np.nan)
    _write(path, meta, arrays)
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n3,4\n")
    assert main(["predict", str(path), str(data)]) == 2
    out, err = capsys.readouterr()
    assert not out and err.splitlines() == [f"linsep predict: error: {path}: coef_ has non-finite values (nan or inf)"]


@pytest.mark.parametrize("name, n_classes", [("hk", 2), ("hkes", 3), ("mse", 3), ("kernel_hk", 2), ("kernel_hkes", 3),
                                             ("kernel_perceptron", 3), ("sk", 3), ("kernel_lsvm", 2)])
def test_rewritten_untouched_contents_load(tmp_path, name, n_classes):
    """The checks accept every model save_model writes (read back and rewritten unchanged)."""
    path = _saved(tmp_path, name, n_classes)
    reference, _ = load_model(path)
    meta, arrays = _read(path)
    _write(path, meta, arrays)
    model, _ = load_model(path)
    np.testing.assert_array_equal(model.decision_function(X_TEST), reference.decision_function(X_TEST))


def test_sparse_training_data_of_a_kernel_model(tmp_path):
    """X_fit_ of a kernel model fitted on sparse data is stored as CSR parts and checked on load."""
    path = _saved(tmp_path, "kernel_hk", sparse=True)
    model, meta = load_model(path)
    assert sp.issparse(model.X_fit_) and meta["skipped_attributes"] == []
    np.testing.assert_array_equal(model.predict(X_TEST), _fit("kernel_hk", sparse=True).predict(X_TEST))
    meta, arrays = _read(path)
    arrays["X_fit_.indices"] = arrays["X_fit_.indices"] + 5  # column indices beyond the shape
    _write(path, meta, arrays)
    _refused(path, "sparse")
    meta, arrays = _read(_saved(tmp_path, "kernel_hk", sparse=True))
    arrays["X_fit_.data"] = arrays["X_fit_.data"].astype(str)
    _write(path, meta, arrays)
    _refused(path, "sparse")


def test_unusable_fitted_models_are_not_written(tmp_path):
    estimator = _fit("hk")
    estimator.coef_[:] = np.nan
    with pytest.raises(ModelFileError, match="coef_ has non-finite"):
        save_model(estimator, "hk", tmp_path / "nan.npz")
    assert not (tmp_path / "nan.npz").exists()
    check_fitted_model(_fit("kernel_sk", 3), {})  # diagnostics may be anything a fit gives: no error
