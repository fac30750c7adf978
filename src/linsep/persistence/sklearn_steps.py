"""The scikit-learn steps a composite model file may hold, and what each may hold.

:mod:`linsep.persistence` writes and reads Pipelines of these steps around
linsep estimators; this module says, for each step, what is stored and what
is refused, with the same rules when saving and when loading:

* **preprocessing** (``PREPROCESSING``): scalers, imputer, polynomial
  features, the function-free ``FunctionTransformer``, ``ColumnTransformer``;
* **text** (``TEXT``): ``CountVectorizer``, ``TfidfVectorizer``,
  ``HashingVectorizer`` and ``TfidfTransformer`` with the built-in analyzers
  (``"word"`` with a ``token_pattern``, ``"char"``, ``"char_wb"``), built-in
  ``strip_accents``, ``stop_words`` as a list of strings or ``"english"``, and
  no function (``preprocessor``, ``tokenizer``, ``analyzer``); the
  ``vocabulary_`` is stored as its terms in column order (a JSON list: the
  column of a term is its position, so no index can be out of range), ``idf_``
  as an array, ``dtype`` by name from :data:`DTYPES`;
* **feature selection** (``SelectKBest``, ``SelectPercentile``) with a score
  function named from :data:`SCORE_FUNCTIONS` (a name, never a pickled
  callable);
* **calibration**: ``CalibratedClassifierCV`` (sigmoid, isotonic or
  temperature; ``ensemble`` true or false; ``cv`` an integer or ``None``) over
  a linsep estimator, a Pipeline ending in one, or a ``FrozenEstimator`` of
  either.  Its fitted calibrators are stored as their numbers (the isotonic
  interpolation function is rebuilt from its thresholds).

Every check raises :class:`~linsep.persistence.model_file.ModelFileError`
with one line saying what is refused and what to do instead.
"""

from __future__ import annotations

import re

import numpy as np

from linsep import estimators
from linsep.persistence.model_file import ModelFileError, _classes, _is_int, _is_real

__all__ = ["DTYPES", "ENCODINGS", "PREPROCESSING", "SCORE_FUNCTIONS", "SUPPORTED", "TEXT", "step_classes"]

PREPROCESSING = ("Pipeline", "ColumnTransformer", "StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler",
                 "Normalizer", "PolynomialFeatures", "SimpleImputer", "FunctionTransformer")
"""The preprocessing classes (a FunctionTransformer only without functions: the identity ColumnTransformer
uses for ``remainder="passthrough"``; a function cannot be stored)."""

TEXT = ("CountVectorizer", "TfidfVectorizer", "HashingVectorizer", "TfidfTransformer")
"""The text vectorizers and transformers."""

SELECTION = ("SelectKBest", "SelectPercentile")
CALIBRATION = ("CalibratedClassifierCV", "FrozenEstimator")
SUPPORTED = PREPROCESSING + TEXT + SELECTION + CALIBRATION
"""Every scikit-learn class a user puts in a model file (besides the calibrators CalibratedClassifierCV fits)."""

_CALIBRATORS = ("_SigmoidCalibration", "IsotonicRegression", "_TemperatureScaling")
_VECTORIZERS = ("CountVectorizer", "TfidfVectorizer", "HashingVectorizer")
_CALIBRATOR_OF_METHOD = {"sigmoid": "_SigmoidCalibration", "isotonic": "IsotonicRegression",
                         "temperature": "_TemperatureScaling"}

DTYPES = ("float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool")
"""The ``dtype`` of a vectorizer, stored by name: a NumPy scalar type of one of these names, or ``float`` / ``int``."""

ENCODINGS = ("utf-8", "utf8", "ascii", "latin-1", "latin1", "iso-8859-1", "cp1252", "utf-16", "utf-32")
"""The ``encoding`` of a vectorizer (used on bytes documents); a name outside this list is refused, so that a
file never makes Python look up a codec it names."""

SCORE_FUNCTIONS = ("chi2", "f_classif", "mutual_info_classif")
"""The score functions of ``SelectKBest`` / ``SelectPercentile``, stored by name."""

_ANALYZERS = ("word", "char", "char_wb")
_REFUSED_LINE = "transform the data with it before the Pipeline and save the steps after it"


def step_classes():
    """``{name: class}`` of every scikit-learn class a composite model file may hold (a fixed table)."""
    import sklearn.calibration as calibration
    from sklearn.calibration import CalibratedClassifierCV, _SigmoidCalibration
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfTransformer, TfidfVectorizer
    from sklearn.feature_selection import SelectKBest, SelectPercentile
    from sklearn.frozen import FrozenEstimator
    from sklearn.impute import SimpleImputer
    from sklearn.isotonic import IsotonicRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import (
        FunctionTransformer,
        MaxAbsScaler,
        MinMaxScaler,
        Normalizer,
        PolynomialFeatures,
        RobustScaler,
        StandardScaler,
    )

    classes = (Pipeline, ColumnTransformer, StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, Normalizer,
               PolynomialFeatures, SimpleImputer, FunctionTransformer, CountVectorizer, TfidfVectorizer,
               HashingVectorizer, TfidfTransformer, SelectKBest, SelectPercentile, CalibratedClassifierCV,
               FrozenEstimator, _SigmoidCalibration, IsotonicRegression)
    temperature = getattr(calibration, "_TemperatureScaling", None)  # scikit-learn >= 1.8
    return {cls.__name__: cls for cls in classes + ((temperature,) if temperature is not None else ())}


def calibrated_classifier_class():
    from sklearn.calibration import _CalibratedClassifier

    return _CalibratedClassifier


def dtype_types():
    """``{name: type}`` of :data:`DTYPES`, plus Python's ``float`` and ``int``."""
    return {**{name: np.dtype(name).type for name in DTYPES}, "float": float, "int": int}


def score_functions():
    import sklearn.feature_selection as selection

    return {name: getattr(selection, name) for name in SCORE_FUNCTIONS}


def is_linsep(estimator):
    return getattr(estimators, type(estimator).__name__, None) is type(estimator) \
        and type(estimator).__name__ in estimators.__all__


def _is_step(estimator, name):
    return type(estimator).__name__ == name and step_classes().get(name) is type(estimator)


REBUILT = {"IsotonicRegression": ("f_",), **{name: ("_stop_words_id",) for name in _VECTORIZERS}}
"""Fitted attributes that are not stored but rebuilt when loading (the isotonic interpolation function; the
``id`` of the stop-word list a vectorizer checked)."""


def refusal(name, key):
    """The one-line refusal of a class outside the table."""
    return (f"cannot save a {name} (at {key}): a model file holds linsep estimators and the scikit-learn steps "
            f"{', '.join(SUPPORTED)}; {_REFUSED_LINE}")


# ---------------------------------------------------------------- parameters (saving: before encoding)

def check_parameters(name, estimator):
    """Refuse, in one line with the alternative, parameters that a model file does not store for this step."""
    if name in _VECTORIZERS:
        _check_vectorizer_parameters(name, estimator)
    elif name in SELECTION:
        function = estimator.score_func
        if not (isinstance(function, str) and function in SCORE_FUNCTIONS) \
                and not any(function is f for f in score_functions().values()):
            raise ModelFileError(f"a {name} is stored with a score function named from {', '.join(SCORE_FUNCTIONS)}, "
                                 f"not {getattr(function, '__name__', type(function).__name__)}: use one of them, "
                                 f"or {_REFUSED_LINE}")
    elif name == "CalibratedClassifierCV":
        _check_calibrated_estimator(estimator)
        cv = estimator.cv
        if cv is not None and not _is_int(cv):
            raise ModelFileError(f"a CalibratedClassifierCV is stored with cv an integer or None, not a "
                                 f"{type(cv).__name__}: cv is only used by fit, so set_params(cv=5) before saving")


def _check_vectorizer_parameters(name, v):
    for param in ("preprocessor", "tokenizer"):
        if getattr(v, param) is not None:
            raise ModelFileError(f"a {name} with a {param} function cannot be stored (a model file holds no code): "
                                 f"use the built-in ones (token_pattern, lowercase, strip_accents, stop_words), or "
                                 f"apply the function to the documents before the Pipeline")
    if not (isinstance(v.analyzer, str) and v.analyzer in _ANALYZERS):
        raise ModelFileError(f"a {name} with a custom analyzer cannot be stored (a model file holds no code): use "
                             f"analyzer='word' with a token_pattern, 'char' or 'char_wb', or apply it before the "
                             f"Pipeline")
    if v.strip_accents not in (None, "ascii", "unicode"):
        raise ModelFileError(f"a {name} with a strip_accents function cannot be stored: use strip_accents='ascii' "
                             f"or 'unicode', or apply the function before the Pipeline")
    if v.input != "content":
        raise ModelFileError(f"a {name} with input={v.input!r} cannot be stored (a loaded model would read files "
                             f"named by its input): read the files and pass their text (input='content')")
    if not (isinstance(v.encoding, str) and v.encoding.lower() in ENCODINGS):
        raise ModelFileError(f"a {name} with encoding={v.encoding!r} cannot be stored: use one of "
                             f"{', '.join(ENCODINGS)}, or decode the documents before the Pipeline")
    if not isinstance(v.lowercase, bool) or not isinstance(v.binary, bool):
        raise ModelFileError(f"{name}: lowercase and binary must be booleans")
    pattern = v.token_pattern
    if pattern is not None:
        if not isinstance(pattern, str):
            raise ModelFileError(f"{name}: token_pattern must be a string or None")
        try:
            groups = re.compile(pattern).groups
        except (re.error, RecursionError, OverflowError, ValueError) as exc:
            raise ModelFileError(f"{name}: token_pattern is not a regular expression ({exc})") from None
        if groups > 1 and v.analyzer == "word":
            raise ModelFileError(f"{name}: token_pattern has {groups} capturing groups, at most 1")
    stop_words = v.stop_words
    if not (stop_words is None or stop_words == "english"
            or (isinstance(stop_words, list) and all(isinstance(w, str) for w in stop_words))):
        raise ModelFileError(f"a {name} is stored with stop_words None, 'english' or a list of strings, not a "
                             f"{type(stop_words).__name__}: pass list(stop_words)")
    ngrams = v.ngram_range
    if not (isinstance(ngrams, tuple) and len(ngrams) == 2 and all(_is_int(n) for n in ngrams)
            and 1 <= ngrams[0] <= ngrams[1]):
        raise ModelFileError(f"{name}: ngram_range must be a tuple (min_n, max_n) with 1 <= min_n <= max_n")
    if not _is_dtype(v.dtype):
        raise ModelFileError(f"a {name} is stored with a dtype named from {', '.join(DTYPES)}, not {v.dtype!r}")
    if name != "HashingVectorizer":
        _vocabulary_of_parameter(name, v.vocabulary)


def _is_dtype(value):
    if isinstance(value, type):
        return dtype_types().get(value.__name__) is value
    if isinstance(value, np.dtype):
        return value.name in DTYPES
    return isinstance(value, str) and value in DTYPES


def _vocabulary_of_parameter(name, vocabulary):
    """The term → column mapping of a ``vocabulary`` parameter (None for none); refuses what fit would refuse."""
    if vocabulary is None:
        return None
    if isinstance(vocabulary, dict):
        mapping = vocabulary
    elif isinstance(vocabulary, (list, tuple)) or (isinstance(vocabulary, np.ndarray) and vocabulary.ndim == 1
                                                    and vocabulary.dtype.kind == "U"):
        mapping = {}
        for i, term in enumerate(vocabulary.tolist() if isinstance(vocabulary, np.ndarray) else vocabulary):
            if not isinstance(term, str) or mapping.setdefault(term, i) != i:
                raise ModelFileError(f"{name}: the vocabulary parameter holds a duplicate or non-string term")
    else:
        raise ModelFileError(f"a {name} is stored with a vocabulary given as a dict or a list, not a "
                             f"{type(vocabulary).__name__}: pass sorted(vocabulary) (the order fit gives a set)")
    _check_vocabulary(f"{name}.vocabulary", mapping)
    return mapping


def _check_vocabulary(name, mapping):
    """A term → column mapping: string terms, integer columns that are exactly 0 … n-1."""
    if not isinstance(mapping, dict) or not mapping:
        raise ModelFileError(f"{name} is not a non-empty mapping of terms to columns")
    if not all(isinstance(term, str) for term in mapping):
        raise ModelFileError(f"{name} holds a term that is not a string")
    columns = list(mapping.values())
    if not all(_is_int(c) for c in columns):
        raise ModelFileError(f"{name} holds a column that is not an integer")
    if sorted(columns) != list(range(len(columns))):
        raise ModelFileError(f"{name} columns are not exactly 0 … {len(columns) - 1} (negative, out of range "
                             f"or repeated)")


# ---------------------------------------------------------------- fitted state (saving and loading)

def _float_array(name, value, length=None, finite=True):
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype.kind != "f":
        raise ModelFileError(f"{name} is not a 1-d float array")
    if length is not None and value.shape[0] != length:
        raise ModelFileError(f"{name} has {value.shape[0]} values, expected {length}")
    if finite and not np.isfinite(value).all():
        raise ModelFileError(f"{name} has non-finite values")


def _n_features(name, estimator, required=True):
    n = vars(estimator).get("n_features_in_")
    if n is None and not required:
        return None
    if not _is_int(n) or n < 1:
        raise ModelFileError(f"{name}.n_features_in_ is {n!r}, expected an integer >= 1")
    return int(n)


def _finite_real(name, value, positive=False):
    if not _is_real(value) or not np.isfinite(value) or (positive and not value > 0):
        raise ModelFileError(f"{name} is {value!r}, expected a finite {'positive ' if positive else ''}number")


def check_fitted(name, estimator):
    """Refuse a step whose fitted state could not have been written by fitting it (types, lengths, consistency).

    Called on the model being saved and on the model loaded; an unfitted step
    (no fitted attribute) passes.
    """
    fitted = vars(estimator)
    if name in ("CountVectorizer", "TfidfVectorizer"):
        _check_vectorizer_parameters(name, estimator)
        state = [a for a in ("vocabulary_", "fixed_vocabulary_", "_tfidf") if a in fitted]
        if state and ("vocabulary_" not in state or "fixed_vocabulary_" not in state
                      or (name == "TfidfVectorizer") != ("_tfidf" in state)):
            raise ModelFileError(f"{name} is partly fitted (it has {', '.join(state)})")
        if not state:
            return
        vocabulary = fitted["vocabulary_"]
        _check_vocabulary(f"{name}.vocabulary_", vocabulary)
        fixed = fitted.get("fixed_vocabulary_")
        if not isinstance(fixed, bool) or fixed != (estimator.vocabulary is not None):
            raise ModelFileError(f"{name}.fixed_vocabulary_ does not match its vocabulary parameter")
        if fixed and _vocabulary_of_parameter(name, estimator.vocabulary) != vocabulary:
            raise ModelFileError(f"{name}.vocabulary_ differs from its vocabulary parameter")
        if name == "TfidfVectorizer":
            tfidf = fitted.get("_tfidf")
            if not _is_step(tfidf, "TfidfTransformer"):
                raise ModelFileError("TfidfVectorizer._tfidf is not a TfidfTransformer")
            if any(getattr(tfidf, p) != getattr(estimator, p) for p in ("norm", "use_idf", "smooth_idf",
                                                                          "sublinear_tf")):
                raise ModelFileError("TfidfVectorizer._tfidf does not have the vectorizer's parameters")
            if _n_features("TfidfVectorizer._tfidf", tfidf, required=False) != len(vocabulary):
                raise ModelFileError(f"TfidfVectorizer._tfidf has {vars(tfidf).get('n_features_in_')!r} features, "
                                     f"its vocabulary {len(vocabulary)}")
    elif name == "HashingVectorizer":
        _check_vectorizer_parameters(name, estimator)
    elif name == "TfidfTransformer":
        if "n_features_in_" not in fitted:
            if "idf_" in fitted:
                raise ModelFileError("TfidfTransformer.idf_ without n_features_in_")
            return
        n = _n_features(name, estimator)
        if estimator.use_idf != ("idf_" in fitted):
            raise ModelFileError(f"TfidfTransformer.idf_ is {'missing' if estimator.use_idf else 'present'} "
                                 f"with use_idf={estimator.use_idf}")
        if "idf_" in fitted:
            _float_array("TfidfTransformer.idf_", fitted["idf_"], n)
    elif name in SELECTION:
        check_parameters(name, estimator)
        if "scores_" not in fitted:
            return
        n = _n_features(name, estimator)
        _float_array(f"{name}.scores_", fitted["scores_"], n, finite=False)  # chi2 of an empty column is nan
        if fitted.get("pvalues_") is not None:
            _float_array(f"{name}.pvalues_", fitted["pvalues_"], n, finite=False)
    elif name == "MaxAbsScaler" and "scale_" in fitted:
        n = _n_features(name, estimator)
        _float_array("MaxAbsScaler.scale_", fitted["scale_"], n)
        _float_array("MaxAbsScaler.max_abs_", fitted.get("max_abs_"), n)
    elif name == "CalibratedClassifierCV":
        check_parameters(name, estimator)
        _check_calibration(estimator)
    elif name == "FrozenEstimator":
        problem = classifier_problem(estimator.estimator, fitted=True)
        if problem:
            raise ModelFileError(f"FrozenEstimator: {problem}")
    elif name == "_SigmoidCalibration" and fitted:
        _finite_real("_SigmoidCalibration.a_", fitted.get("a_"))
        _finite_real("_SigmoidCalibration.b_", fitted.get("b_"))
    elif name == "_TemperatureScaling" and fitted:
        _finite_real("_TemperatureScaling.beta_", fitted.get("beta_"), positive=True)
    elif name == "IsotonicRegression" and "X_thresholds_" in fitted:
        X, y = fitted["X_thresholds_"], fitted.get("y_thresholds_")
        _float_array("IsotonicRegression.X_thresholds_", X)
        _float_array("IsotonicRegression.y_thresholds_", y, X.shape[0])
        if X.shape[0] < 1 or not np.all(X[1:] > X[:-1]):
            raise ModelFileError("IsotonicRegression.X_thresholds_ is empty or not strictly increasing")
        for attribute in ("X_min_", "X_max_"):
            _finite_real(f"IsotonicRegression.{attribute}", fitted.get(attribute))
        if not isinstance(fitted.get("increasing_"), (bool, np.bool_)):
            raise ModelFileError("IsotonicRegression.increasing_ is not a boolean")


def _check_calibrated_estimator(model):
    if model.estimator is None:
        raise ModelFileError("a CalibratedClassifierCV(estimator=None) calibrates a LinearSVC, not a linsep "
                             "estimator: pass one, e.g. CalibratedClassifierCV(linsep.make_classifier('mhks'))")
    problem = classifier_problem(model.estimator, fitted=False)
    if problem:
        raise ModelFileError(f"CalibratedClassifierCV.estimator: {problem}; a model file calibrates linsep "
                             f"estimators (or Pipelines ending in one)")


def _check_calibration(model):
    fitted = vars(model)
    _check_calibrated_estimator(model)
    if "calibrated_classifiers_" not in fitted:
        return
    classes, calibrated = fitted.get("classes_"), fitted["calibrated_classifiers_"]
    try:
        _classes("classes_", classes, {})
    except ModelFileError as exc:
        raise ModelFileError(f"CalibratedClassifierCV.{exc}") from None
    if not isinstance(calibrated, list) or not calibrated or (model.ensemble is False and len(calibrated) != 1):
        raise ModelFileError("CalibratedClassifierCV.calibrated_classifiers_ is not a non-empty list "
                             "(one item when ensemble=False)")
    n_features = _n_features("CalibratedClassifierCV", model, required=False)
    expected_calibrator = _CALIBRATOR_OF_METHOD.get(model.method)
    for i, item in enumerate(calibrated):
        where = f"CalibratedClassifierCV.calibrated_classifiers_[{i}]"
        if type(item) is not calibrated_classifier_class():
            raise ModelFileError(f"{where} is not a calibrated classifier")
        problem = classifier_problem(item.estimator, fitted=True)
        if problem:
            raise ModelFileError(f"{where}: {problem}")
        if not (isinstance(item.classes, np.ndarray) and item.classes.dtype == classes.dtype
                and np.array_equal(item.classes, classes)):
            raise ModelFileError(f"{where}.classes differs from classes_")
        if item.method != model.method:
            raise ModelFileError(f"{where}.method differs from method")
        inner = item.estimator.classes_
        if model.method == "temperature":  # fitted on the classes' codes 0 … K-1: one score per class
            if inner.size != classes.size:
                raise ModelFileError(f"{where}: its estimator has {inner.size} classes, classes_ {classes.size}")
        elif inner.dtype != classes.dtype or not np.isin(inner, classes).all():
            raise ModelFileError(f"{where}: its estimator's classes are not among classes_")
        expected = 1 if model.method == "temperature" or inner.size == 2 else inner.size
        calibrators = item.calibrators
        if not isinstance(calibrators, list) or len(calibrators) != expected or not all(
                _is_step(c, expected_calibrator) for c in calibrators):
            raise ModelFileError(f"{where}.calibrators is not a list of {expected} {expected_calibrator}")
        width = input_width(item.estimator)
        if n_features is not None and width is not None and width != n_features:
            raise ModelFileError(f"{where}: its estimator reads {width} features, the calibrated model "
                                 f"{n_features}")


def classifier_problem(model, fitted):
    """``None`` if ``model`` predicts through linsep estimators, else why not (one phrase).

    A linsep estimator; a Pipeline whose last step is such a model; a
    ``CalibratedClassifierCV`` of one; a ``FrozenEstimator`` of one.  With
    ``fitted``, the estimator that predicts must be fitted.
    """
    name = type(model).__name__
    if is_linsep(model):
        if fitted and "classes_" not in vars(model):
            return f"its {name} is not fitted"
        return None
    if _is_step(model, "Pipeline"):
        steps = getattr(model, "steps", None)
        if not isinstance(steps, list) or not steps or not isinstance(steps[-1], tuple) or len(steps[-1]) != 2:
            return "a Pipeline without steps"
        return classifier_problem(steps[-1][1], fitted)
    if _is_step(model, "FrozenEstimator"):
        return classifier_problem(model.estimator, True)
    if _is_step(model, "CalibratedClassifierCV"):
        if fitted and "calibrated_classifiers_" not in vars(model):
            return "its CalibratedClassifierCV is not fitted"
        return None  # its own check (check_fitted) looks inside
    return f"it ends in a {name}, not a linsep estimator"


# ---------------------------------------------------------------- widths along a Pipeline

def input_width(step):
    """The number of features ``step`` reads, where it records it (None otherwise)."""
    if _is_step(step, "Pipeline"):
        first = next((s for _, s in step.steps if s not in (None, "passthrough")), None)
        return None if first is None else input_width(first)
    if _is_step(step, "FrozenEstimator"):
        return input_width(step.estimator)
    n = vars(step).get("n_features_in_") if hasattr(step, "__dict__") else None
    return int(n) if _is_int(n) else None


_SAME_WIDTH = ("TfidfTransformer", "MaxAbsScaler", "Normalizer", "StandardScaler", "MinMaxScaler", "RobustScaler")


def output_width(step):
    """The number of features ``step`` produces, where its fitted state says (None otherwise)."""
    name = type(step).__name__
    if name in step_classes() and step_classes()[name] is type(step):
        if name in ("CountVectorizer", "TfidfVectorizer"):
            vocabulary = vars(step).get("vocabulary_")
            return len(vocabulary) if isinstance(vocabulary, dict) else None
        if name == "HashingVectorizer":
            return step.n_features if _is_int(step.n_features) else None
        if name in _SAME_WIDTH:
            return input_width(step)
        if name in SELECTION and "scores_" in vars(step):
            return int(step.get_support().sum())
        if name == "Pipeline":
            last = next((s for _, s in reversed(step.steps) if s not in (None, "passthrough")), None)
            return None if last is None else output_width(last)
    return None


def check_widths(pipeline):
    """Refuse a Pipeline in which a step reads another number of features than the step before it produces."""
    previous = None
    for label, step in pipeline.steps:
        if step is None or step == "passthrough":
            continue
        if previous is not None:
            produced, read = output_width(previous[1]), input_width(step)
            if produced is not None and read is not None and produced != read:
                raise ModelFileError(f"Pipeline step {label!r} reads {read} features but step {previous[0]!r} "
                                     f"produces {produced}")
        previous = (label, step)


# ---------------------------------------------------------------- rebuilt attributes

def rebuild(name, estimator):
    """Set the fitted attributes of :data:`REBUILT` on a loaded step."""
    fitted = vars(estimator)
    if name == "IsotonicRegression" and "X_thresholds_" in fitted:
        estimator._build_f(fitted["X_thresholds_"], fitted["y_thresholds_"])
    elif name in _VECTORIZERS and ("vocabulary_" in fitted or name == "HashingVectorizer"):
        # the stop words were checked against the tokenizer when fitting: not again (and not warned again)
        estimator._stop_words_id = id(estimator.stop_words)


def vocabulary_terms(vocabulary):
    """The terms of a checked vocabulary in column order."""
    terms = [None] * len(vocabulary)
    for term, column in vocabulary.items():
        terms[column] = term
    return terms


def vocabulary_of_terms(terms):
    """The vocabulary of terms in column order, refusing a non-string or repeated term."""
    if not isinstance(terms, list) or not terms:
        raise ModelFileError("malformed vocabulary (not a non-empty list of terms)")
    if not all(isinstance(t, str) for t in terms):
        raise ModelFileError("malformed vocabulary (a term is not a string)")
    vocabulary = {term: column for column, term in enumerate(terms)}
    if len(vocabulary) != len(terms):
        raise ModelFileError("malformed vocabulary (a term is repeated)")
    return vocabulary
