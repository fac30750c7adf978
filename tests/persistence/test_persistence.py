"""linsep.save / linsep.load: every registered estimator and Pipelines of preprocessing around them, no pickle."""

import warnings

import numpy as np
import pytest
from model_file_mutations import load_refusing_pickle, mutations, rewrite_model_file
from sklearn.compose import make_column_transformer
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
)

import linsep
from linsep import available_classifiers, make_classifier
from linsep.persistence.model_file import ModelFileError
from linsep.cli import main
from problems import overwrite

RNG = np.random.default_rng(0)
X_TRAIN = np.r_[RNG.normal(0.0, 1.0, (15, 3)), RNG.normal(3.0, 1.0, (15, 3))]
Y_TRAIN = np.r_[np.zeros(15, int), np.ones(15, int)]
X_TEST = RNG.normal(1.5, 2.0, (25, 3))
NAMES = sorted(available_classifiers())


_load = load_refusing_pickle


def _fit(model, X=X_TRAIN, y=Y_TRAIN):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def _same_predictions(model, loaded, X=X_TEST):
    assert type(loaded) is type(model)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_estimator_round_trips(tmp_path, name):
    model = _fit(make_classifier(name))
    path = linsep.save(model, tmp_path / "m.npz")
    _same_predictions(model, _load(path))
    assert _load(str(path)).get_params() == model.get_params()


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_estimator_in_a_pipeline_round_trips(tmp_path, name):
    model = _fit(make_pipeline(StandardScaler(), make_classifier(name)))
    _same_predictions(model, _load(linsep.save(model, tmp_path / "p.npz")))


@pytest.mark.parametrize("steps", [
    (MinMaxScaler(), PolynomialFeatures(degree=2), MaxAbsScaler()),
    (SimpleImputer(), RobustScaler(), Normalizer()),
    (make_column_transformer((StandardScaler(), [0, 1]), (MinMaxScaler(), [2])),),
    (make_column_transformer((StandardScaler(), [0]), remainder="passthrough"), PolynomialFeatures()),
    (make_column_transformer((StandardScaler(), slice(0, 2)), ("drop", [2])),),
])
def test_preprocessing_steps_round_trip(tmp_path, steps):
    X = X_TRAIN.copy()
    X[3, 1] = np.nan if isinstance(steps[0], SimpleImputer) else X[3, 1]
    model = _fit(make_pipeline(*steps, make_classifier("mhks")), X)
    _same_predictions(model, _load(linsep.save(model, tmp_path / "p.npz")))


def test_column_transformer_by_column_names(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X_TRAIN, columns=["a", "b", "c"])
    model = _fit(make_pipeline(make_column_transformer((StandardScaler(), ["a", "b"]), remainder="drop"),
                               make_classifier("lsvm")), frame)
    loaded = _load(linsep.save(model, tmp_path / "p.npz"))
    test = pd.DataFrame(X_TEST, columns=["a", "b", "c"])
    assert np.array_equal(loaded.predict(test), model.predict(test))


def test_multiclass_and_string_labels(tmp_path):
    y = np.array(["cat", "dog", "emu"])[np.arange(30) % 3]
    model = _fit(make_pipeline(StandardScaler(), make_classifier("hk")), y=y)
    _same_predictions(model, _load(linsep.save(model, tmp_path / "p.npz")))


POS_LABEL_NAMES = [name for name in NAMES if "pos_label" in make_classifier(name).get_params()]


@pytest.mark.parametrize("name", POS_LABEL_NAMES)
@pytest.mark.parametrize("pos_label", [0, "a"])
def test_estimators_with_pos_label_round_trip(tmp_path, name, pos_label):
    y = Y_TRAIN if pos_label == 0 else np.array(["a", "b"])[Y_TRAIN]  # pos_label names classes_[0]
    model = _fit(make_classifier(name).set_params(pos_label=pos_label), y=y)
    loaded = _load(linsep.save(model, tmp_path / "m.npz"))
    _same_predictions(model, loaded)
    assert loaded.get_params()["pos_label"] == pos_label and type(loaded.pos_label) is type(pos_label)
    np.testing.assert_array_equal(loaded.classes_, model.classes_)


@pytest.mark.parametrize("step, words", [
    (PCA(n_components=2), "cannot save a PCA"),
    (FunctionTransformer(np.log1p), "cannot store the parameter"),
])
def test_unsupported_steps_are_refused_when_saving(tmp_path, step, words):
    model = _fit(make_pipeline(step, make_classifier("hk")), np.abs(X_TRAIN))
    with pytest.raises(ModelFileError, match=words):
        linsep.save(model, tmp_path / "p.npz")
    assert not (tmp_path / "p.npz").exists()


@pytest.mark.parametrize("edit, words", [
    (lambda m, a: m["root"].update(__estimator__="os.system"), "is neither a linsep estimator"),
    (lambda m, a: m["root"]["params"].update(evil={"__value__": 1}), "cannot rebuild Pipeline"),
    (lambda m, a: m["root"]["params"]["steps"]["__list__"][1]["__tuple__"][1]["attributes"].update(
        coef_={"__value__": 1.0}), "coef_ is a float"),
    (lambda m, a: m["root"]["params"]["steps"]["__list__"][0]["__tuple__"][1]["attributes"].update(
        fit={"__value__": 1.0}), "not a fitted attribute"),
    (lambda m, a: m["root"]["params"]["steps"]["__list__"][0]["__tuple__"][1]["params"].update(
        with_mean={"__value__": "yes"}), "invalid parameter"),
    (lambda m, a: m.update(root={"__pickle__": "x"}), "malformed attribute node"),
])
def test_tampered_composite_files_are_refused(tmp_path, edit, words):
    path = linsep.save(_fit(make_pipeline(StandardScaler(), make_classifier("hk"))), tmp_path / "p.npz")
    rewrite_model_file(path, edit)
    with pytest.raises(ModelFileError, match=words) as info:
        _load(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))


def test_sampled_mutations_of_a_pipeline_file(tmp_path):
    model = _fit(make_pipeline(StandardScaler(), make_classifier("hk")))
    path = linsep.save(model, tmp_path / "p.npz")
    good, predictions = path.read_bytes(), model.predict(X_TEST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for label, data in mutations(good, positions=range(0, len(good), 29), masks=(0x01, 0x80)):
            overwrite(path, data)
            try:
                loaded = _load(path)
            except ModelFileError as exc:
                assert "\n" not in str(exc), label
                continue
            assert np.array_equal(loaded.predict(X_TEST), predictions), label


def test_command_line_predicts_with_a_saved_pipeline(tmp_path, capsys):
    model = _fit(make_pipeline(StandardScaler(), make_classifier("hk")))
    path = linsep.save(model, tmp_path / "p.npz")
    data = tmp_path / "x.csv"
    data.write_text("a,b,c\n" + "".join(",".join(map(str, row)) + "\n" for row in X_TEST))
    assert main(["predict", str(path), str(data)]) == 0
    assert capsys.readouterr().out.split() == [str(v) for v in model.predict(X_TEST)]


def test_files_written_by_the_command_line_load(tmp_path):
    data = tmp_path / "train.csv"
    data.write_text("a,b,c,y\n" + "".join(",".join(map(str, [*row, label])) + "\n"
                                          for row, label in zip(X_TRAIN, Y_TRAIN)))
    assert main(["fit", "mhks", str(data), "-o", str(tmp_path / "m.npz")]) == 0
    assert isinstance(_load(tmp_path / "m.npz"), linsep.HoKashyapClassifier)
