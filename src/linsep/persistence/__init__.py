"""Save and load fitted models without pickle: :func:`save` and :func:`load`.

>>> import tempfile
>>> import numpy as np
>>> import linsep
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> X, y = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 3.0], [4.0, 3.0]]), np.array([0, 0, 1, 1])
>>> model = make_pipeline(StandardScaler(), linsep.HoKashyapClassifier()).fit(X, y)
>>> path = linsep.save(model, tempfile.mkdtemp() + "/model.npz")
>>> linsep.load(path).predict(X).tolist()
[0, 0, 1, 1]

Both write the pickle-free format of ``linsep.persistence.model_file``: one ``.npz``
archive of the fitted arrays, a JSON description and a SHA-256 checksum.

* A linsep estimator alone is written as the command line writes it
  (``linsep fit``), with the registered algorithm name: ``linsep predict``
  and :func:`load` read the same files.
* A scikit-learn :class:`~sklearn.pipeline.Pipeline` or
  :class:`~sklearn.compose.ColumnTransformer` of the steps in ``SUPPORTED``
  (preprocessing, the text vectorizers ``TEXT``, ``SelectKBest`` /
  ``SelectPercentile``, ``CalibratedClassifierCV``; see
  :mod:`linsep.persistence.sklearn_steps`) around linsep estimators is
  written as a tree (format ``linsep-composite-model``): each node names its
  class from a fixed table, its parameters (JSON) and its fitted attributes
  (arrays, numbers, NumPy scalars, strings, lists, tuples, dicts, slices,
  dtypes, a vocabulary as its terms in column order, a score function or a
  dtype type by name, nested nodes).

Loading trusts nothing
----------------------
Loading never unpickles and never imports a module or a class named by the
file: a class is looked up in ``SUPPORTED`` (and the calibrators
CalibratedClassifierCV fits) or among linsep's own estimators, by a name the
file can only choose from that table; a score function or dtype likewise from
a fixed list.  The archive, the ``.npy`` headers, the JSON and the checksum
are checked as for any model file; each node's parameters through the class's
own parameter validation and ``sklearn_steps.check_parameters`` (no function,
no file input); every linsep estimator inside a composite against its full
attribute table (types, shapes, finiteness); the text, selection and
calibration steps by ``sklearn_steps.check_fitted`` (a vocabulary of distinct
string terms, one ``idf_`` / ``scores_`` value per column, calibrators of the
method's kind, one per class, the same classes throughout), and the widths
along each Pipeline.  The scalers' fitted attributes are checked for their
types only: a tampered scaler (with the checksum recomputed) is not detected
beyond that, but it can hold nothing except numbers, strings and arrays of
them.  A file written with another scikit-learn version loads with a warning,
as scikit-learn's own loading does.
"""

from __future__ import annotations

import warnings
from collections import UserList
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sklearn

from linsep import estimators
from linsep.estimators.registry import registered_name
from linsep._version import version as linsep_version
from linsep.persistence.model_file import (
    COMPOSITE_FORMAT,
    FORMAT_VERSION,
    ModelFileError,
    _decode,
    _Encoder,
    first_line,
    _json_safe,
    _required_attributes,
    check_fitted_model,
    encode_metadata,
    load_model,
    register_composite_reader,
    save_model,
    set_fitted_attributes,
    write_file,
)
from linsep.persistence import sklearn_steps
from linsep.persistence.sklearn_steps import PREPROCESSING, SUPPORTED, TEXT

__all__ = ["PREPROCESSING", "SUPPORTED", "TEXT", "load", "save"]

_ALTERNATIVE = ("a model file holds no code: name a built-in option (a kernel: 'linear', 'poly', 'rbf', "
                "'sigmoid'), or apply the function to the data before the Pipeline and save the steps after it")

_PARAMETER_FREE = ("_SigmoidCalibration", "_TemperatureScaling")
"""Classes without parameters (nor a parameter validation): their nodes have empty ``params``."""


def _preprocessing_classes():
    """``{name: class}`` of the scikit-learn classes a composite model file may hold (``sklearn_steps``)."""
    return sklearn_steps.step_classes()


def _linsep_classes():
    return {name: getattr(estimators, name) for name in estimators.__all__}


def _algorithm_of(estimator):
    """A registered name building ``type(estimator)`` (its parameters override the name's preset)."""
    name = registered_name(type(estimator))
    if name is not None:
        return name
    raise ModelFileError(f"cannot save a {type(estimator).__name__}: not a registered linsep estimator")


def _is_linsep(estimator):
    return _linsep_classes().get(type(estimator).__name__) is type(estimator)


# ---------------------------------------------------------------- writing

class _CompositeEncoder(_Encoder):
    """``linsep.persistence.model_file._Encoder`` plus estimators, tuples, slices, dtypes, NumPy scalars, dtype
    types and score functions by name, and the calibrated classifiers of a CalibratedClassifierCV."""

    def encode(self, value, key):
        if isinstance(value, np.generic) and not isinstance(value, np.ndarray):
            if value.dtype.kind not in "biuf":
                raise TypeError(type(value).__name__)
            return {"__scalar__": value.dtype.str, "value": value.item()}  # a calibrator's a_ keeps its type
        if isinstance(value, type):  # a vectorizer's dtype=np.float64
            if sklearn_steps.dtype_types().get(value.__name__) is not value:
                raise TypeError(f"type {value.__name__}")
            return {"__type__": value.__name__}
        if callable(value) and not hasattr(value, "fit"):  # SelectKBest's score_func, by name only
            name = next((n for n, f in sklearn_steps.score_functions().items() if f is value), None)
            if name is None:
                raise TypeError(f"function {getattr(value, '__name__', type(value).__name__)}")
            return {"__score_func__": name}
        if type(value) is sklearn_steps.calibrated_classifier_class():
            return {"__calibrated__": {field: self.encode(getattr(value, field), f"{key}.{field}")
                                       for field in ("estimator", "calibrators", "classes", "method")}}
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, f"{key}.{i}") for i, v in enumerate(value)]}
        if isinstance(value, UserList) and type(value).__name__ == "_RemainderColsList":
            # scikit-learn 1.6 to 1.8 with force_int_remainder_cols=True (1.6's default): the column indices of a
            # ColumnTransformer's remainder in a list that warns when read; stored as the plain list, which the
            # ColumnTransformer transforms with alike
            return super().encode(list(value.data), key)
        if isinstance(value, slice):
            return {"__slice__": [_json_safe(value.start), _json_safe(value.stop), _json_safe(value.step)]}
        if isinstance(value, np.dtype):  # e.g. SimpleImputer's _fit_dtype
            dtype = value
            if dtype.kind not in "biuf" or dtype.fields is not None:
                raise TypeError(f"dtype {dtype}")
            return {"__dtype__": dtype.str}
        if hasattr(value, "get_params") and hasattr(value, "fit"):
            return self.estimator(value, key)
        return super().encode(value, key)

    def estimator(self, estimator, key):
        name = type(estimator).__name__
        linsep = _is_linsep(estimator)
        if not linsep and _preprocessing_classes().get(name) is not type(estimator):
            raise ModelFileError(sklearn_steps.refusal(name, key))
        if not linsep:  # a function or a reader of files: refused with what to do instead
            sklearn_steps.check_parameters(name, estimator)
        params = estimator.get_params(deep=False)
        encoded_params = {}
        for param, value in params.items():
            try:
                encoded_params[param] = self.encode(value, f"{key}.{param}")
            except TypeError as exc:
                raise ModelFileError(f"cannot store the parameter {param} of {name} (at {key}), a {exc}, in a "
                                     f"model file: {_ALTERNATIVE}") from None
        if not linsep:  # what load would refuse is not written
            _check_preprocessing_node(name, estimator)
        if linsep and hasattr(estimator, "classes_"):
            check_fitted_model(estimator, params, context="the fitted model cannot be saved: ")
        attributes, skipped = {}, []
        rebuilt = sklearn_steps.REBUILT.get(name, ()) if not linsep else ()
        for attribute, value in vars(estimator).items():
            if attribute in params or attribute.startswith("__") or attribute in rebuilt:
                continue
            if attribute == "vocabulary_" and name in TEXT:  # checked: the terms in column order
                attributes[attribute] = {"__vocabulary__": sklearn_steps.vocabulary_terms(value)}
                continue
            try:
                attributes[attribute] = self.encode(value, f"{key}.{attribute}")
            except TypeError as exc:
                if not linsep:  # a preprocessing step needs all its fitted state
                    raise ModelFileError(f"cannot store {name}.{attribute} ({exc}) in a model file") from None
                skipped.append(attribute)  # e.g. a fitted sub-object: not needed to predict
        missing = sorted(set(_required_attributes(estimator)) & set(skipped)) if linsep else []
        if missing:
            raise ModelFileError(f"the fitted model cannot be saved: cannot store {', '.join(missing)}")
        return {"__estimator__": name, "params": encoded_params, "attributes": attributes}


def save(model, path):
    """Write a fitted model to ``path`` without pickle; returns the path.

    Parameters
    ----------
    model : fitted linsep estimator, Pipeline or CalibratedClassifierCV
        A linsep estimator, or a scikit-learn Pipeline, ColumnTransformer or
        CalibratedClassifierCV of the steps in ``SUPPORTED`` and linsep
        estimators (a text Pipeline: a vectorizer, TfidfTransformer,
        SelectKBest, a scaler, then a linsep estimator or a calibrated one).
    path : str or path-like
        The file to write (conventionally ``.npz``; the name is used as given).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ModelFileError
        A step that is not in ``SUPPORTED``, a parameter a model file does
        not hold (a function, a tokenizer, ``input="filename"``, a score
        function outside ``sklearn_steps.SCORE_FUNCTIONS``), or a fitted
        model that could not be loaded back (e.g. non-finite weights); one
        line naming what to do instead; a ``ValueError``.

    See Also
    --------
    load : Reads the file back.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> import linsep
    >>> model = make_pipeline(StandardScaler(), linsep.HoKashyapClassifier()).fit([[0.0], [1.0], [3.0], [4.0]], [0, 0, 1, 1])
    >>> path = linsep.save(model, pathlib.Path(tempfile.mkdtemp()) / "model.npz")
    >>> linsep.load(path).predict([[0.5], [3.5]]).tolist()
    [0, 1]
    """
    if _is_linsep(model):
        return save_model(model, _algorithm_of(model), path)
    _check_classifier_root(model)
    encoder = _CompositeEncoder()
    root = encoder.estimator(model, "model")
    meta = {"format": COMPOSITE_FORMAT, "version": FORMAT_VERSION, "root": root,
            "linsep_version": linsep_version(), "sklearn_version": sklearn.__version__}
    path = Path(path)
    write_file(path, encode_metadata(meta, encoder.arrays))
    return path


def _check_classifier_root(model):
    """Refuse a composite model that does not end in a linsep classifier (save and load share this rule).

    A model file is read to predict (``linsep predict``, :func:`load`): its
    root is a linsep estimator, a CalibratedClassifierCV of one, or a Pipeline
    whose last step is either (or is such a Pipeline).  A bare scaler or
    ColumnTransformer predicts nothing.
    """
    problem = sklearn_steps.classifier_problem(model, fitted=False)
    if problem == "a Pipeline without steps":
        raise ModelFileError("a Pipeline without steps cannot be a model file")
    if problem is not None:
        raise ModelFileError(f"a model file holds a classifier: a linsep estimator, a CalibratedClassifierCV of "
                             f"one, or a Pipeline ending in either; this model ends in a {type(_final(model)).__name__}")


def _final(model):
    while sklearn_steps._is_step(model, "Pipeline") and isinstance(getattr(model, "steps", None), list) \
            and model.steps and isinstance(model.steps[-1], tuple) and len(model.steps[-1]) == 2:
        model = model.steps[-1][1]
    return model


def _check_preprocessing_node(name, estimator):
    """Refuse a preprocessing step (saved or loaded) that could not transform as the model file promises.

    A FunctionTransformer is stored only as the identity (no functions, no
    keyword arguments: they would be passed to the identity and fail in
    ``predict``); no fitted attribute of a preprocessing step is a sparse
    matrix (scikit-learn's steps in ``PREPROCESSING`` keep dense arrays).
    """
    if name == "FunctionTransformer":
        for param in ("func", "inverse_func", "kw_args", "inv_kw_args"):
            if getattr(estimator, param, None) is not None:
                raise ModelFileError(f"a FunctionTransformer is stored only as the identity: {param} must be None")
    for attribute, value in vars(estimator).items():
        if sp.issparse(value):
            raise ModelFileError(f"{name}.{attribute} is a sparse matrix; the preprocessing steps keep dense arrays")
    sklearn_steps.check_parameters(name, estimator)
    sklearn_steps.check_fitted(name, estimator)
    if name == "Pipeline" and isinstance(getattr(estimator, "steps", None), list):
        sklearn_steps.check_widths(estimator)


# ---------------------------------------------------------------- reading

_COMPOSITE_META_KEYS = {"format", "version", "root", "linsep_version", "sklearn_version", "checksum"}


def load(path):
    """The fitted model of a file written by :func:`save` or ``linsep fit``.

    Never unpickles, never imports what the file names; refuses a missing,
    damaged, foreign or inconsistent file with a one-line
    ``linsep.persistence.model_file.ModelFileError`` (a ``ValueError``) prefixed
    by the path.

    Parameters
    ----------
    path : str or path-like
        A model file.

    Returns
    -------
    estimator
        The fitted linsep estimator, Pipeline or ColumnTransformer, predicting
        as the model that was saved.

    See Also
    --------
    save : Writes such a file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import linsep
    >>> model = linsep.MSEClassifier().fit([[0.0], [1.0], [3.0], [4.0]], [0, 0, 1, 1])
    >>> path = linsep.save(model, pathlib.Path(tempfile.mkdtemp()) / "mse.npz")
    >>> type(linsep.load(path)).__name__
    'MSEClassifier'
    """
    return load_model(path)[0]


def _decode_composite_node(node, arrays, used):
    keys = set(node)
    if keys == {"__tuple__"} and isinstance(node["__tuple__"], list):
        return tuple(_decode(v, arrays, used, _decode_composite_node) for v in node["__tuple__"])
    if keys == {"__slice__"} and isinstance(node["__slice__"], list) and len(node["__slice__"]) == 3 \
            and all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in node["__slice__"]):
        return slice(*node["__slice__"])
    if keys == {"__dtype__"} and isinstance(node["__dtype__"], str):
        try:
            dtype = np.dtype(node["__dtype__"])
        except TypeError:
            dtype = None
        if dtype is None or dtype.kind not in "biuf" or dtype.fields is not None or dtype.str != node["__dtype__"]:
            raise ModelFileError(f"malformed dtype {node['__dtype__']!r}")
        return dtype
    if keys == {"__estimator__", "params", "attributes"}:
        return _rebuild_node(node, arrays, used)
    if keys == {"__scalar__", "value"} and isinstance(node["__scalar__"], str):
        return _decode_scalar(node["__scalar__"], node["value"])
    if keys == {"__type__"} and isinstance(node["__type__"], str):
        value = sklearn_steps.dtype_types().get(node["__type__"])
        if value is None:
            raise ModelFileError(f"unknown dtype name {node['__type__']!r} (one of {', '.join(sklearn_steps.DTYPES)})")
        return value
    if keys == {"__score_func__"} and isinstance(node["__score_func__"], str):
        function = sklearn_steps.score_functions().get(node["__score_func__"])
        if function is None:
            raise ModelFileError(f"unknown score function {node['__score_func__']!r} "
                                 f"(one of {', '.join(sklearn_steps.SCORE_FUNCTIONS)})")
        return function
    if keys == {"__vocabulary__"}:
        return sklearn_steps.vocabulary_of_terms(node["__vocabulary__"])
    if keys == {"__calibrated__"} and isinstance(node["__calibrated__"], dict) \
            and set(node["__calibrated__"]) == {"estimator", "calibrators", "classes", "method"}:
        fields = {k: _decode(v, arrays, used, _decode_composite_node) for k, v in node["__calibrated__"].items()}
        return sklearn_steps.calibrated_classifier_class()(fields["estimator"], fields["calibrators"],
                                                           classes=fields["classes"], method=fields["method"])
    raise ModelFileError(f"malformed attribute node with keys {sorted(map(str, keys))}")


def _decode_scalar(code, value):
    """A NumPy scalar of a boolean, integer or float dtype, holding exactly the JSON value."""
    try:
        dtype = np.dtype(code)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in "biuf" or dtype.fields is not None or dtype.str != code:
        raise ModelFileError(f"malformed scalar dtype {code!r}")
    expected = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}[dtype.kind]
    if not isinstance(value, expected) or (dtype.kind != "b" and isinstance(value, bool)):
        raise ModelFileError(f"malformed {dtype} scalar {value!r}")
    if dtype.kind in "iu" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        # NumPy >= 2 raises OverflowError here; NumPy 1.24 to 1.26 wrap the integer around (with a warning)
        raise ModelFileError(f"scalar {value!r} does not fit a {dtype}")
    try:
        with np.errstate(over="raise", invalid="raise"):
            scalar = dtype.type(value)
    except (OverflowError, FloatingPointError):
        raise ModelFileError(f"scalar {value!r} does not fit a {dtype}") from None
    if dtype.kind == "f" and np.isfinite(scalar) != np.isfinite(float(value)):
        raise ModelFileError(f"scalar {value!r} does not fit a {dtype}")
    return scalar


def _rebuild_node(node, arrays, used):
    name, params, attributes = node["__estimator__"], node["params"], node["attributes"]
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise ModelFileError("malformed estimator node")
    if not isinstance(name, str):
        raise ModelFileError(f"class {name!r} is neither a linsep estimator nor one of {', '.join(SUPPORTED)}")
    linsep = _linsep_classes()
    cls = linsep.get(name) or _preprocessing_classes().get(name)
    if cls is None:
        raise ModelFileError(f"class {name!r} is neither a linsep estimator nor one of {', '.join(SUPPORTED)}")
    rebuilt = set(attributes) & set(sklearn_steps.REBUILT.get(name, ()) if name not in linsep else ())
    if rebuilt or (name in _PARAMETER_FREE and params):
        raise ModelFileError(f"{name}: {sorted(rebuilt or params)[0]!r} is not stored in a model file")
    decoded = {key: _decode(value, arrays, used, _decode_composite_node) for key, value in params.items()}
    try:
        estimator = cls(**decoded)
    except TypeError as exc:  # a parameter name the class does not take
        raise ModelFileError(f"cannot rebuild {name} ({first_line(exc)})") from None
    set_fitted_attributes(estimator, decoded, attributes, arrays, used,
                          decode=lambda value, arrays, used: _decode(value, arrays, used, _decode_composite_node),
                          validate_params=name not in _PARAMETER_FREE)
    if name in linsep and hasattr(estimator, "classes_"):
        check_fitted_model(estimator, decoded, context=f"{name}: ")
    elif name not in linsep:
        _check_preprocessing_node(name, estimator)
        sklearn_steps.rebuild(name, estimator)
    return estimator


def rebuild_composite(meta, arrays):
    """The Pipeline / ColumnTransformer of a verified composite model file (see :func:`load`)."""
    if set(meta) != _COMPOSITE_META_KEYS or not isinstance(meta["root"], dict):
        raise ModelFileError(f"unexpected metadata keys {sorted(set(meta) ^ _COMPOSITE_META_KEYS)}")
    if not isinstance(meta["sklearn_version"], str) or not isinstance(meta["linsep_version"], str):
        raise ModelFileError("malformed metadata (sklearn_version or linsep_version)")
    used = set()
    model = _decode(meta["root"], arrays, used, _decode_composite_node)
    if not hasattr(model, "fit"):
        raise ModelFileError("the model file's root is not an estimator")
    _check_classifier_root(model)
    if used != set(arrays):
        raise ModelFileError(f"arrays not referenced by the metadata: {sorted(set(arrays) - used)[:3]}")
    if meta["sklearn_version"] != sklearn.__version__:
        warnings.warn(f"the model file was written with scikit-learn {meta['sklearn_version']}, this is "
                      f"{sklearn.__version__}: its preprocessing steps may not predict as they did", UserWarning)
    return model


register_composite_reader(rebuild_composite)
