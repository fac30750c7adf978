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
from linsep._core.result import NOT_SEPARABLE, SolveResult
from linsep.cli import FORMAT_VERSION, CLIError, load_model, main, read_data
from linsep.persistence.model_file import checksum

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


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", sorted(available_classifiers()))
def test_model_file_round_trip_every_registered_estimator(tmp_path, name, n_classes):
    """Generic storage of fitted attributes (coef_, dual_coef_, X_fit_, per-class status, history …)."""
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.6, (12, 2)) for c in ((0, 0), (3, 0), (0, 3))[:n_classes]])
    y = np.repeat(["a", "b", "c"][:n_classes], 12)
    est = make_classifier(name)
    if "record_history" in est.get_params():
        est.set_params(record_history=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
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
        meta["checksum"] = checksum(meta, arrays)
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


def _assert_one_line_or_ok(capsys, *argv, progress=False):
    """Exit 0 with only warnings on stderr, or exit 2 with one line; ``progress``: a fit that asked for progress
    output (``verbose``) may print it to stderr too."""
    code, out, err = _run(capsys, *argv)
    assert code in (0, 2), (code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "error:" in err and "Traceback" not in err, err
    elif not progress:
        assert all(line.startswith("warning: ") for line in err.splitlines() if "error on the labels" not in line), err
    else:
        assert "Traceback" not in err, err
    return code


@pytest.mark.parametrize("scale", [1e307, 1e-307])
@pytest.mark.parametrize("name", sorted(available_classifiers()))
def test_extreme_scales_exit_0_or_one_line(tmp_path, capsys, name, scale):
    """Values near the ends of float64: a model whose predictions can be trusted, or one line and exit 2."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-2, 1, (6, 2)), rng.normal(2, 1, (6, 2))]) * scale
    data = _write_csv(tmp_path / "extreme.csv", X, np.repeat([0, 1], 6))
    if _assert_one_line_or_ok(capsys, "fit", name, data, "-o", tmp_path / "m.npz", "--param", "max_iter=200") == 0:
        load_model(tmp_path / "m.npz")  # whatever was written passes the loader's checks
        _assert_one_line_or_ok(capsys, "predict", tmp_path / "m.npz", data)
    else:
        assert not (tmp_path / "m.npz").exists()


def test_output_paths_that_cannot_be_written(tmp_path, capsys, model):
    path, data = model
    for output in (tmp_path / "nodir" / "m.npz", tmp_path):
        err = _assert_refused(capsys, "fit", "hk", data, "-o", output)
        assert "cannot write" in err
        err = _assert_refused(capsys, "predict", path, data, "-o", output)
        assert "cannot write" in err
    assert not (tmp_path / "nodir").exists()
    os.chmod(tmp_path, 0o500)  # an unwritable folder: the OSError of open() becomes one line
    try:
        if not os.access(tmp_path, os.W_OK):  # root writes anyway
            assert "Permission denied" in _assert_refused(capsys, "predict", path, data, "-o", tmp_path / "p.txt")
    finally:
        os.chmod(tmp_path, 0o700)


def test_directories_and_special_files_as_inputs(tmp_path, capsys, model):
    path, data = model
    assert "is a directory" in _assert_refused(capsys, "fit", "hk", tmp_path, "-o", tmp_path / "x.npz")
    assert "is a directory" in _assert_refused(capsys, "separable", tmp_path)
    assert "is a directory" in _assert_refused(capsys, "predict", tmp_path, data)
    assert "is a directory" in _assert_refused(capsys, "predict", path, tmp_path)
    assert "no such data file" in _assert_refused(capsys, "separable", tmp_path / "missing.csv")


def test_blank_label_and_one_class_messages(tmp_path, capsys):
    blank = tmp_path / "blank.csv"
    blank.write_text("a,y\n1,0\n2, \n3,1\n")
    assert "line 3: empty label" in _assert_refused(capsys, "fit", "hk", blank, "-o", tmp_path / "m.npz")
    one = tmp_path / "one.csv"
    one.write_text("a,y\n1,0\n2,0\n")
    err = _assert_refused(capsys, "fit", "hk", one, "-o", tmp_path / "m.npz")
    assert err.rstrip().endswith("only one class: 0") and "np." not in err
    assert _assert_refused(capsys, "separable", one).rstrip().endswith("only 0")
    huge = tmp_path / "huge.csv"
    huge.write_text("a,y\n1,1" + "0" * 30 + "\n2,2\n")  # beyond int64: floats, not object arrays
    assert read_data(huge)[1].dtype.kind == "f"


def test_argument_errors_are_one_line(capsys):
    for argv in (["fit", "hk"], ["nope"], [], ["predict"], ["bench", "--splits", "x"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and len(err.strip().splitlines()) == 1 and "error:" in err, err


def test_odd_parameter_values_every_estimator(tmp_path, capsys, blobs):
    """Every parameter of every algorithm given odd values: a fit, or one line and exit 2."""
    X, y = blobs
    data = _write_csv(tmp_path / "train.csv", X[::4], y[::4])
    written = 0  # a new output file each time: rewriting one file makes ext4 flush it (5 ms a save)
    for name in sorted(available_classifiers()):
        for param in make_classifier(name).get_params():
            if param == "max_iter":
                continue  # valid huge budgets are slow, not wrong
            for raw in ("abc", "[1]", '{"a": 1}', "-1", "1e400", "null", "true"):
                written += 1
                _assert_one_line_or_ok(capsys, "fit", name, data, "-o", tmp_path / f"m{written}.npz", "--param",
                                       f"{param}={raw}", progress=param == "verbose")


def test_predict_overflowing_scores_is_one_line(tmp_path, capsys, blobs):
    X, y = blobs
    small = _write_csv(tmp_path / "small.csv", X * 1e-9, y)  # weights far above 1
    path = tmp_path / "m.npz"
    assert _run(capsys, "fit", "hk", small, "-o", path)[0] == 0
    far = _write_csv(tmp_path / "far.csv", np.array([[1e308, 1e308, 1e308], [1.0, 1.0, 1.0]]), ["a", "b"])
    err = _assert_refused(capsys, "predict", path, far)
    assert "overflow" in err and "sample 1" in err


def test_warnings_are_one_line_each(tmp_path, capsys, blobs):
    X, y = blobs
    data = _write_csv(tmp_path / "train.csv", X, y)
    code, out, err = _run(capsys, "fit", "perceptron", data, "-o", tmp_path / "m.npz", "--param", "max_iter=1",
                          "--param", "margin=100")
    assert code == 0 and "perceptron" in out
    assert err.splitlines() and all(line.startswith("warning: ") for line in err.splitlines())
    assert len(set(err.splitlines())) == len(err.splitlines())


def test_debug_variable_shows_the_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LINSEP_DEBUG", "1")
    with pytest.raises(CLIError, match="no such data file"):
        main(["separable", str(tmp_path / "missing.csv")])


def test_sparse_kernel_model_round_trip(tmp_path, capsys, blobs):
    X, _ = blobs
    data = tmp_path / "train.svm"
    dump_svmlight_file(X, np.repeat([0, 1], 20), str(data))
    assert _run(capsys, "fit", "kernel_hk", data, "-o", tmp_path / "k.npz")[0] == 0
    code, out, _ = _run(capsys, "predict", tmp_path / "k.npz", data)
    assert code == 0 and out.split() == [str(v) for v in np.repeat([0, 1], 20)]


def test_cli_reports_undecided_with_its_own_exit_status(tmp_path, capsys):
    from types import SimpleNamespace

    from linsep import cli

    path = tmp_path / "d.csv"
    path.write_text("a,label\n0,0\n1,1\n")
    plan = {  # HK claims a proof that fails the check, and the linear programs fail: no verdict
        "ho_kashyap": lambda Y, **kw: SolveResult(np.zeros(Y.shape[1]), 3, NOT_SEPARABLE,
                                                  certificate=np.ones(Y.shape[0])),
        "linprog": lambda *a, **kw: SimpleNamespace(status=2, x=None)}
    from linsep._core.plan import forced_plan

    with forced_plan(separability=plan):
        assert cli.main(["separable", str(path)]) == cli.EXIT_UNDECIDED == 3
    assert capsys.readouterr().out.splitlines()[0] == "undecided"


ROOT = Path(__file__).resolve().parents[1]


def test_version_flag(capsys):
    import linsep

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"linsep {linsep.__version__}\n"
    run = subprocess.run([sys.executable, "-m", "linsep", "--version"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout == f"linsep {linsep.__version__}\n" and run.stderr == ""
    assert "--version" in subprocess.run([sys.executable, "-m", "linsep", "--help"], capture_output=True,
                                         text=True, timeout=120).stdout


def test_splits_help_names_the_data_sets_with_20_realizations(capsys):
    from linsep.datasets import BENCHMARKS

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    twenty = sorted(name for name, spec in BENCHMARKS.items() if spec.n_realizations == 20)
    assert twenty == ["image", "splice"]  # the protocol's realization counts, as the paper's Table 2 runs
    assert "default: 20 for image and splice, 100 for the other 7 data sets; --quick: 10" in text
    assert all(BENCHMARKS[name].n_realizations == 100 for name in BENCHMARKS if name not in twenty)


def test_fit_param_rule_random_state_accepted_others_named(tmp_path, capsys, blobs):
    X, y = blobs
    data = _write_csv(tmp_path / "d.csv", X, y)
    code, out, err = _run(capsys, "fit", "lsvm", data, "-o", tmp_path / "m.npz", "--param", "random_state=0")
    assert code == 0 and "lsvm:" in out  # no random numbers in the LSVM: the seed is dropped
    err = _assert_refused(capsys, "fit", "lsvm", data, "-o", tmp_path / "m.npz", "--param", "verbose=1")
    assert "lsvm (LagrangianSVMClassifier) has no parameter 'verbose'; its parameters: C, mu," in err


def test_citation_file_cites_this_version():
    import yaml  # the test extra (and a dependency of dask)

    import linsep

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["title"] == "linsep"
    # the declared release: linsep.__version__ adds the commit in a checkout (0.1.0+g<commit>[.dirty])
    assert str(cff["version"]) == linsep._version.BASE_VERSION == linsep.__version__.split("+")[0]
    assert cff["license"] == "BSD-3-Clause"
    assert cff["message"] and cff["authors"] == [{"name": "The linsep developers"}]
    assert "date-released" not in cff  # 0.1.0 is unreleased (docs/changelog.rst)
    references = {ref["title"]: ref for ref in cff["references"]}
    lauer = references["Ho–Kashyap classifier with early stopping for regularization"]
    assert lauer["year"] == 2006 and lauer["doi"] == "10.1016/j.patrec.2005.12.009"
    assert lauer["journal"] == "Pattern Recognition Letters" and (lauer["volume"], lauer["issue"]) == (27, "9")
    assert [a["family-names"] for a in lauer["authors"]] == ["Lauer", "Bloch"]
    for ref in cff["references"]:
        assert ref["type"] in {"article", "book", "conference-paper"} and ref["authors"] and ref["year"]
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("BSD 3-Clause License") and "Copyright (c) 2026, The linsep developers" in license_text
