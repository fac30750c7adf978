"""The ``linsep`` command line: fit → predict round trips, separability, safe model files, bad input."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from linsep import available_classifiers, make_classifier
from linsep.cli import FORMAT_VERSION, _checksum, load_model, main, read_data

SRC = Path(__file__).resolve().parents[1] / "src"


def _write_csv(path, X, y, header=None):
    header = header or [f"x{j}" for j in range(X.shape[1])] + ["label"]
    lines = [",".join(header)] + [",".join([*map(repr, map(float, row)), str(label)]) for row, label in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2, 1, (20, 3)), rng.normal(2, 1, (20, 3))])
    return X, np.repeat(["setosa", "virginica"], 20)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _assert_refused(capsys, *argv):
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "error:" in err, err
    assert "Traceback" not in err
    return err


def test_fit_predict_round_trip_csv_string_labels(tmp_path, capsys, blobs):
    X, y = blobs
    data = _write_csv(tmp_path / "train.csv", X, y)
    code, out, _ = _run(capsys, "fit", "hkes", data, "-o", tmp_path / "m.model", "--param", "random_state=0")
    assert code == 0 and "hkes" in out
    code, out, _ = _run(capsys, "predict", tmp_path / "m.model", data)
    expected = make_classifier("hkes", random_state=0).fit(X, y).predict(X)
    assert code == 0 and out.split() == expected.tolist()
    # an unlabelled CSV with the model's number of columns, written to a file
    _write_csv(tmp_path / "new.csv", X[:, :2], X[:, 2], header=["x0", "x1", "x2"])
    code, _, _ = _run(capsys, "predict", tmp_path / "m.model", tmp_path / "new.csv", "-o", tmp_path / "p.txt")
    assert code == 0 and (tmp_path / "p.txt").read_text().split() == expected.tolist()


def test_fit_predict_round_trip_svmlight_numeric_labels(tmp_path, capsys, blobs):
    X, _ = blobs
    y = np.repeat([3, 7], 20)
    for suffix in (".svm", ".libsvm", ".svmlight"):
        data = tmp_path / f"train{suffix}"
        dump_svmlight_file(X, y, str(data))
        assert _run(capsys, "fit", "mhks", data, "-o", tmp_path / "m.npz", "--param", "C=0.25")[0] == 0
        code, out, _ = _run(capsys, "predict", tmp_path / "m.npz", data)
        assert code == 0 and out.split() == [str(v) for v in make_classifier("mhks", C=0.25).fit(X, y).predict(X)]
    model, meta = load_model(tmp_path / "m.npz")
    assert meta["params"]["C"] == 0.25 and model.classes_.dtype.kind == "i"


@pytest.mark.parametrize("name", sorted(available_classifiers()))
def test_model_file_round_trip_every_registered_estimator(tmp_path, name):
    """Generic storage of fitted attributes (coef_, dual_coef_, X_fit_, per-class status …), three classes."""
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.6, (12, 2)) for c in ((0, 0), (3, 0), (0, 3))])
    y = np.repeat(["a", "b", "c"], 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_classifier(name).fit(X, y)
    from linsep.cli import save_model
    save_model(est, name, tmp_path / "m.npz")
    loaded, meta = load_model(tmp_path / "m.npz")
    assert meta["algorithm"] == name
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    np.testing.assert_allclose(loaded.decision_function(X), est.decision_function(X))
    assert loaded.classes_.dtype == est.classes_.dtype


def test_separable_and_xor(tmp_path, capsys, blobs):
    X, y = blobs
    code, out, _ = _run(capsys, "separable", _write_csv(tmp_path / "s.csv", X, y))
    assert code == 0 and out.splitlines()[0] == "separable" and "margin" in out
    xor = _write_csv(tmp_path / "xor.csv", np.array([[0, 0], [1, 1], [0, 1], [1, 0]]), [0, 0, 1, 1])
    code, out, _ = _run(capsys, "separable", xor)
    assert code == 0 and out.splitlines()[0] == "not separable" and "method:" in out


def test_list_names_every_algorithm(capsys):
    code, out, _ = _run(capsys, "list")
    assert code == 0 and {line.split()[0] for line in out.splitlines()} == set(available_classifiers())


@pytest.fixture
def model(tmp_path, capsys, blobs):
    X, y = blobs
    data = _write_csv(tmp_path / "train.csv", X, y)
    assert _run(capsys, "fit", "hk", data, "-o", tmp_path / "m.npz")[0] == 0
    return tmp_path / "m.npz", data


def _rewrite(path, edit_arrays=None, edit_meta=None, rehash=False):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    meta = json.loads(arrays.pop("__meta__").tobytes())
    if edit_arrays:
        edit_arrays(arrays)
    if edit_meta:
        edit_meta(meta)
    if rehash:
        meta.pop("checksum")
        meta["checksum"] = _checksum(meta, arrays)
    with open(path, "wb") as handle:
        np.savez(handle, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)


def test_bad_model_files_are_refused(tmp_path, capsys, model):
    path, data = model
    good = path.read_bytes()
    _assert_refused(capsys, "predict", tmp_path / "missing.npz", data)
    (tmp_path / "trunc.npz").write_bytes(good[: len(good) // 2])
    _assert_refused(capsys, "predict", tmp_path / "trunc.npz", data)
    (tmp_path / "text.npz").write_text("not a model\n")
    _assert_refused(capsys, "predict", tmp_path / "text.npz", data)
    np.savez(tmp_path / "foreign.npz", coef_=np.ones(3))
    assert "not a linsep model" in _assert_refused(capsys, "predict", tmp_path / "foreign.npz", data)

    def flip(arrays):
        arrays["coef_"] = arrays["coef_"] * -1

    _rewrite(path, edit_arrays=flip)
    assert "checksum" in _assert_refused(capsys, "predict", path, data)
    path.write_bytes(good)
    _rewrite(path, edit_meta=lambda m: m["params"].update(learning_rate=0.9))
    assert "checksum" in _assert_refused(capsys, "predict", path, data)
    path.write_bytes(good)
    _rewrite(path, edit_meta=lambda m: m.update(version=FORMAT_VERSION + 1), rehash=True)
    assert "version" in _assert_refused(capsys, "predict", path, data)
    path.write_bytes(good)
    _rewrite(path, edit_meta=lambda m: m.update(format="other"), rehash=True)
    assert "not a linsep model" in _assert_refused(capsys, "predict", path, data)
    path.write_bytes(good)
    assert _run(capsys, "predict", path, data)[0] == 0


@pytest.mark.parametrize("name, text", [
    ("ragged.csv", "a,b,y\n1,2,0\n1,1\n"),
    ("nonnumeric.csv", "a,b,y\n1,2,0\n1,abc,1\n"),
    ("nolabel.csv", "y\n0\n1\n"),
    ("empty.csv", ""),
    ("headeronly.csv", "a,b,y\n"),
    ("nan.csv", "a,b,y\n1,nan,0\n2,1,1\n"),
    ("oneclass.csv", "a,b,y\n1,2,0\n2,1,0\n"),
    ("empty.svm", ""),
    ("garbage.libsvm", "this is not svmlight\n"),
    ("binary.csv", None),
])
def test_bad_data_files_are_refused(tmp_path, capsys, name, text):
    path = tmp_path / name
    if text is None:
        path.write_bytes(bytes(range(256)))
    else:
        path.write_text(text)
    _assert_refused(capsys, "fit", "hk", path, "-o", tmp_path / "m.npz")
    _assert_refused(capsys, "separable", path)
    assert not (tmp_path / "m.npz").exists()


def test_bad_arguments_are_refused(tmp_path, capsys, model):
    path, data = model
    _assert_refused(capsys, "fit", "no_such_algo", data, "-o", tmp_path / "x.npz")
    _assert_refused(capsys, "fit", "hk", data, "-o", tmp_path / "x.npz", "--param", "no_such_param=1")
    _assert_refused(capsys, "fit", "hk", data, "-o", tmp_path / "x.npz", "--param", "oops")
    _assert_refused(capsys, "fit", "hk", tmp_path / "missing.csv", "-o", tmp_path / "x.npz")
    wide = _write_csv(tmp_path / "wide.csv", np.zeros((2, 6)), [0, 1])
    _assert_refused(capsys, "predict", path, wide)
    three = _write_csv(tmp_path / "three.csv", np.arange(6.0).reshape(3, 2), ["a", "b", "c"])
    _assert_refused(capsys, "separable", three)


def test_console_entry_point_subprocess(tmp_path, model):
    """``python -m linsep.cli`` works without installation; errors are one line with status 2."""
    path, data = model
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    ok = subprocess.run([sys.executable, "-m", "linsep.cli", "predict", str(path), str(data)],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and set(ok.stdout.split()) == {"setosa", "virginica"}
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 truncated")
    bad = subprocess.run([sys.executable, "-m", "linsep.cli", "predict", str(tmp_path / "bad.npz"), str(data)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "Traceback" not in bad.stderr


def test_read_data_label_types(tmp_path):
    X = np.arange(6.0).reshape(3, 2)
    assert read_data(_write_csv(tmp_path / "a.csv", X, [1, 2, 1]))[1].dtype.kind == "i"
    assert read_data(_write_csv(tmp_path / "b.csv", X, [0.5, 1.5, 0.5]))[1].dtype.kind == "f"
    assert read_data(_write_csv(tmp_path / "c.csv", X, ["x", "y", "x"]))[1].dtype.kind == "U"
