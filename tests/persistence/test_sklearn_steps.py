"""Text Pipelines and calibrated linsep models saved and loaded without pickle (``linsep.persistence.sklearn_steps``).

A loaded model predicts exactly as the saved one (labels, decision values,
probabilities) on a small three-topic corpus with a Zipf vocabulary; what a
model file does not store is refused when saving, in one line naming the
alternative; every edit of the new nodes that :func:`linsep.save` would never
write is refused when loading (``model_file_mutations.node_mutations``).
"""

import re
import warnings

import numpy as np
import pytest
from model_file_mutations import load_refusing_pickle, node_mutations, rewrite_model_file, text_corpus
import sklearn.calibration
from sklearn.calibration import CalibratedClassifierCV
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfTransformer, TfidfVectorizer
from sklearn.feature_selection import SelectKBest, SelectPercentile, chi2, f_classif
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, Normalizer
from sklearn.svm import LinearSVC

import linsep
from linsep import make_classifier
from linsep.persistence import sklearn_steps
from linsep.persistence.model_file import ModelFileError

DOCUMENTS, LABELS = text_corpus(300)
TEST, _ = text_corpus(90, seed=1)
TEST = TEST + ["", "unknown words only", "W0É w1 SP3 te4 AR5"]


_load = load_refusing_pickle


def _fit(model, documents=DOCUMENTS, labels=LABELS):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(documents, labels)


def _same_predictions(model, loaded, documents=TEST):
    assert type(loaded) is type(model)
    assert np.array_equal(loaded.predict(documents), model.predict(documents))
    for method in ("decision_function", "predict_proba"):
        if hasattr(model, method):
            assert np.array_equal(getattr(loaded, method)(documents), getattr(model, method)(documents)), method


def _calibrated(**kwargs):
    return CalibratedClassifierCV(make_classifier("mhks"), cv=3, **kwargs)


MODELS = {
    "tfidf": lambda: make_pipeline(TfidfVectorizer(min_df=2, sublinear_tf=True), make_classifier("mhks")),
    "hashing-tfidf": lambda: make_pipeline(HashingVectorizer(n_features=2 ** 12), TfidfTransformer(),
                                           make_classifier("lsvm")),
    "count-chi2-maxabs": lambda: make_pipeline(CountVectorizer(ngram_range=(1, 2), max_features=3000),
                                               SelectKBest(chi2, k=400), MaxAbsScaler(), make_classifier("hk")),
    "percentile-normalizer": lambda: make_pipeline(TfidfVectorizer(stop_words="english", strip_accents="unicode",
                                                                   norm=None, dtype=np.float32),
                                                   SelectPercentile(f_classif, percentile=30), Normalizer(),
                                                   make_classifier("mse")),
    "char-wb": lambda: make_pipeline(CountVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=False,
                                                     binary=True, dtype=np.float64),
                                     TfidfTransformer(use_idf=False), make_classifier("mhks")),
    "stop-list-pattern": lambda: make_pipeline(TfidfVectorizer(stop_words=["w0", "w1é", "w2"], max_df=0.9,
                                                               token_pattern=r"(?u)\b[a-z]\w+\b",
                                                               strip_accents="ascii"),
                                               make_classifier("lsvm")),
    "fixed-vocabulary": lambda: make_pipeline(TfidfVectorizer(vocabulary={f"sp{i}": 59 - i for i in range(60)}
                                                              | {f"te{i}": 60 + i for i in range(60)}),
                                              make_classifier("mhks")),
    "vocabulary-list": lambda: make_pipeline(CountVectorizer(vocabulary=[f"ar{i}" for i in range(60)]
                                                             + [f"te{i}" for i in range(60)]),
                                             make_classifier("hk")),
    "pipeline-calibrated-sigmoid": lambda: make_pipeline(TfidfVectorizer(), _calibrated()),
    "pipeline-calibrated-isotonic": lambda: make_pipeline(HashingVectorizer(n_features=2 ** 10, alternate_sign=False),
                                                          MaxAbsScaler(), _calibrated(method="isotonic")),
    "calibrated-temperature-pipeline": lambda: CalibratedClassifierCV(
        make_pipeline(CountVectorizer(), TfidfTransformer(), make_classifier("lsvm")), cv=3, method="temperature"),
    "calibrated-no-ensemble": lambda: make_pipeline(TfidfVectorizer(), _calibrated(ensemble=False)),
    "calibrated-kernel": lambda: make_pipeline(TfidfVectorizer(min_df=3), _calibrated().set_params(
        estimator=make_classifier("kernel_hk"))),
}


# CalibratedClassifierCV(method="temperature") is new in scikit-learn 1.8: its models are skipped before
_NO_TEMPERATURE = pytest.mark.skipif(not hasattr(sklearn.calibration, "_TemperatureScaling"),
                                     reason="method='temperature' needs scikit-learn >= 1.8")


def _models(names):
    return [pytest.param(name, marks=_NO_TEMPERATURE) if "temperature" in name else name for name in names]


@pytest.mark.parametrize("name", _models(sorted(MODELS)))
def test_text_models_round_trip_exactly_without_pickle(tmp_path, name):
    model = _fit(MODELS[name]())
    loaded = _load(linsep.save(model, tmp_path / "m.npz"))
    _same_predictions(model, loaded)
    first = model.steps[0][1] if hasattr(model, "steps") else None
    if first is not None:
        assert (loaded.steps[0][1].transform(TEST) != first.transform(TEST)).nnz == 0
    assert np.mean(model.predict(DOCUMENTS) == LABELS) > 0.9


def test_acceptance_models_with_binary_labels(tmp_path):
    """The three models of the issue, two classes (one calibrator, one decision column)."""
    labels = np.where(LABELS == "sport", "sport", "other")
    for model in (make_pipeline(TfidfVectorizer(), make_classifier("mhks")),
                  make_pipeline(HashingVectorizer(), TfidfTransformer(), make_classifier("lsvm")),
                  make_pipeline(CountVectorizer(), CalibratedClassifierCV(make_classifier("hk")))):
        _fit(model, labels=labels)
        _same_predictions(model, _load(linsep.save(model, tmp_path / "b.npz")))


def test_calibrated_linsep_model_on_numbers_and_frozen(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + 0.5 * rng.normal(size=(120, 3)), axis=1)]
    fitted = make_classifier("mhks").fit(X, y)
    for model in (CalibratedClassifierCV(make_classifier("lsvm"), method="isotonic").fit(X, y),
                  CalibratedClassifierCV(FrozenEstimator(fitted)).fit(X, y)):
        loaded = _load(linsep.save(model, tmp_path / "c.npz"))
        _same_predictions(model, loaded, rng.normal(size=(50, 4)))


def test_the_vocabulary_costs_a_few_bytes_a_term(tmp_path):
    """The terms are a JSON list in column order (no per-term node, no fixed-width string array)."""
    model = _fit(make_pipeline(TfidfVectorizer(), CalibratedClassifierCV(make_classifier("mhks"))))
    path = linsep.save(model, tmp_path / "m.npz")
    n_terms = len(model[0].vocabulary_)
    with np.load(path, allow_pickle=False) as archive:
        assert archive["__meta__"].size < 12 * n_terms + 20_000
        assert archive["model.steps.0.1._tfidf.idf_"].shape == (n_terms,)


@pytest.mark.parametrize("model, words", [
    (lambda: make_pipeline(TfidfVectorizer(tokenizer=str.split, token_pattern=None), make_classifier("hk")),
     "a TfidfVectorizer with a tokenizer function cannot be stored"),
    (lambda: make_pipeline(CountVectorizer(preprocessor=str.lower), make_classifier("hk")),
     "with a preprocessor function cannot be stored"),
    (lambda: make_pipeline(CountVectorizer(analyzer=str.split), make_classifier("hk")),
     "with a custom analyzer cannot be stored.*analyzer='word' with a token_pattern"),
    (lambda: make_pipeline(CountVectorizer(strip_accents=str.lower), make_classifier("hk")),
     "strip_accents function cannot be stored: use strip_accents='ascii'"),
    (lambda: make_pipeline(CountVectorizer(), SelectKBest(lambda X, y: chi2(X, y)[0], k=10), make_classifier("hk")),
     "score function named from chi2, f_classif, mutual_info_classif, not <lambda>: use one of them"),
    (lambda: make_pipeline(CountVectorizer(), CalibratedClassifierCV(make_classifier("hk"), cv=StratifiedKFold(3))),
     "cv is only used by fit, so set_params"),
    (lambda: make_pipeline(CountVectorizer(), CalibratedClassifierCV(LinearSVC())),
     "estimator: it ends in a LinearSVC, not a linsep estimator; a model file calibrates linsep estimators"),
    (lambda: make_pipeline(CountVectorizer(), CalibratedClassifierCV()),
     r"CalibratedClassifierCV\(estimator=None\) calibrates a LinearSVC, not a linsep estimator: pass one"),
])
def test_what_a_model_file_does_not_hold_is_refused_in_one_line(tmp_path, model, words):
    with pytest.raises(ModelFileError, match=words) as info:
        linsep.save(_fit(model()), tmp_path / "m.npz")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "m.npz").exists()


def test_refusals_that_need_no_fit(tmp_path):
    """input='filename', an unknown encoding, a complex dtype: refused with what to do instead."""
    for params, words in [({"input": "filename"}, "read the files and pass their text"),
                          ({"encoding": "rot13"}, "decode the documents before the Pipeline"),
                          ({"dtype": np.complex128}, "dtype named from float64"),
                          ({"stop_words": ("a", "b")}, "stop_words None, 'english' or a list of strings, not a "
                                                        "tuple: pass list(stop_words)"),
                          ({"vocabulary": {"sp1", "te2"}}, "not a set: pass sorted(vocabulary)")]:
        vectorizer = CountVectorizer().fit(DOCUMENTS)
        model = make_pipeline(vectorizer, make_classifier("hk"))
        model[-1].fit(vectorizer.transform(DOCUMENTS), LABELS)
        vectorizer.set_params(**params)
        with pytest.raises(ModelFileError, match=re.escape(words)):
            linsep.save(model, tmp_path / "m.npz")


NODE_MODELS = ["tfidf", "hashing-tfidf", "count-chi2-maxabs", "fixed-vocabulary", "pipeline-calibrated-sigmoid",
               "pipeline-calibrated-isotonic", "calibrated-temperature-pipeline", "calibrated-no-ensemble"]


@pytest.mark.parametrize("name", _models(NODE_MODELS))
def test_every_edit_of_the_new_nodes_is_refused(tmp_path, name):
    """Each edit of node_mutations (checksum recomputed) is refused in one line naming the path."""
    path = linsep.save(_fit(MODELS[name]()), tmp_path / "good.npz")
    good = path.read_bytes()
    meta = _meta(path)
    edits = node_mutations(meta)
    assert len(edits) >= 20
    target = tmp_path / "edited.npz"
    for label, edit in edits:
        target.write_bytes(good)
        rewrite_model_file(target, edit)
        with pytest.raises(ModelFileError) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _load(target)
        message = str(info.value)
        assert "\n" not in message and message.startswith(str(target)), (label, message)
        assert "checksum" not in message, label  # refused for what it holds, not for a stale checksum


def _meta(path):
    import json

    with np.load(path, allow_pickle=False) as archive:
        return json.loads(archive["__meta__"].tobytes())


def test_named_edits_are_refused_for_their_reason(tmp_path):
    model = _fit(MODELS["pipeline-calibrated-sigmoid"]())
    cases = {label: words for label, words in [
        ("vocabulary_ with a number as a term", "a term is not a string"),
        ("vocabulary_ with a repeated term", "a term is repeated"),
        ("vocabulary_ as a mapping with a negative column", "negative, out of range or repeated"),
        ("vocabulary_ as a mapping with an out-of-range column", "negative, out of range or repeated"),
        ("vocabulary_ as a mapping with non-string keys", "holds a term that is not a string"),
        ("idf_ one value short", "idf_ has .* values, expected"),
        ("idf_ a nan", "idf_ has non-finite values"),
        ("TfidfVectorizer.tokenizer = {'__value__': 'str.split'}", "invalid parameter"),
        ("TfidfVectorizer.input = {'__value__': 'filename'}", "input='filename' cannot be stored"),
        ("dtype type 'object'", "unknown dtype name 'object'"),
        ("one calibrator more", "calibrators is not a list of 3 _SigmoidCalibration"),
        ("the method changed", r"calibrated_classifiers_\[0\].method differs from method"),
        ("a scaler as the estimator", "invalid parameter .*'estimator' parameter of CalibratedClassifierCV"),
    ]}
    path = linsep.save(model, tmp_path / "good.npz")
    good, target = path.read_bytes(), tmp_path / "edited.npz"
    seen = set()
    for label, edit in node_mutations(_meta(path)):
        if label in cases:
            target.write_bytes(good)
            rewrite_model_file(target, edit)
            with pytest.raises(ModelFileError, match=cases[label]):
                _load(target)
            seen.add(label)
    assert seen == set(cases)


def test_unknown_score_function_name_is_refused(tmp_path):
    model = _fit(MODELS["count-chi2-maxabs"]())
    path = linsep.save(model, tmp_path / "m.npz")
    rewrite_model_file(path, lambda m, a: m["root"]["params"]["steps"]["__list__"][1]["__tuple__"][1]["params"]
                       .update(score_func={"__score_func__": "os.system"}))
    with pytest.raises(ModelFileError, match="unknown score function 'os.system'"):
        _load(path)


def test_tables_name_what_is_supported():
    classes = sklearn_steps.step_classes()
    assert set(sklearn_steps.SUPPORTED) <= set(classes)
    assert set(sklearn_steps.score_functions()) == set(sklearn_steps.SCORE_FUNCTIONS)
    assert all(np.dtype(t).kind in "biuf" for t in sklearn_steps.dtype_types().values())
    assert set(sklearn_steps.TEXT) <= set(linsep.persistence.SUPPORTED)


def test_text_column_in_a_column_transformer(tmp_path):
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import StandardScaler

    frame = pd.DataFrame({"text": DOCUMENTS, "length": [float(len(d)) for d in DOCUMENTS]})
    model = _fit(make_pipeline(make_column_transformer((TfidfVectorizer(), "text"), (StandardScaler(), ["length"])),
                               make_classifier("mhks")), frame)
    test = pd.DataFrame({"text": TEST, "length": [float(len(d)) for d in TEST]})
    _same_predictions(model, _load(linsep.save(model, tmp_path / "m.npz")), test)
