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
  :class:`~sklearn.compose.ColumnTransformer` of the preprocessing steps in
  ``PREPROCESSING`` around linsep estimators is written as a tree
  (format ``linsep-composite-model``): each node names its class from a fixed
  table, its parameters (JSON) and its fitted attributes (arrays, numbers,
  strings, lists, tuples, dicts, slices, dtypes, nested nodes).

Loading trusts nothing
----------------------
Loading never unpickles and never imports a module or a class named by the
file: a class is looked up in ``PREPROCESSING`` or among linsep's own
estimators, by a name the file can only choose from that table.  The archive,
the ``.npy`` headers, the JSON and the checksum are checked as for any model
file; each node's parameters through the class's own parameter validation;
every linsep estimator inside a composite against its full attribute table
(types, shapes, finiteness).  The preprocessing steps' fitted attributes are
checked for their types only: a tampered scaler (with the checksum recomputed)
is not detected beyond that, but it can hold nothing except numbers, strings
and arrays of them.  A file written with another scikit-learn version loads
with a warning, as scikit-learn's own loading does.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sklearn

from linsep import estimators
from linsep.estimators.registry import registered_name
from linsep._version import __version__
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

__all__ = ["PREPROCESSING", "load", "save"]


def _preprocessing_classes():
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
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

    return {cls.__name__: cls for cls in (Pipeline, ColumnTransformer, StandardScaler, MinMaxScaler, MaxAbsScaler,
                                          RobustScaler, Normalizer, PolynomialFeatures, SimpleImputer,
                                          FunctionTransformer)}


PREPROCESSING = ("Pipeline", "ColumnTransformer", "StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler",
                 "Normalizer", "PolynomialFeatures", "SimpleImputer", "FunctionTransformer")
"""The scikit-learn classes a composite model file may hold (a FunctionTransformer only without functions:
the identity ColumnTransformer uses for ``remainder="passthrough"``; a function cannot be stored)."""


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
    """``linsep.persistence.model_file._Encoder`` plus estimators, tuples, slices and dtypes."""

    def encode(self, value, key):
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, f"{key}.{i}") for i, v in enumerate(value)]}
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
            raise ModelFileError(f"cannot save a {name} (at {key}): a model file holds linsep "
                                 f"estimators and the scikit-learn steps {', '.join(PREPROCESSING)}")
        params = estimator.get_params(deep=False)
        try:
            encoded_params = {k: self.encode(v, f"{key}.{k}") for k, v in params.items()}
        except TypeError as exc:
            raise ModelFileError(f"cannot store the parameter of {name} (at {key}) of type {exc} "
                                 f"in a model file") from None
        if not linsep:  # what load would refuse is not written
            _check_preprocessing_node(name, estimator)
        if linsep and hasattr(estimator, "classes_"):
            check_fitted_model(estimator, params, context="the fitted model cannot be saved: ")
        attributes, skipped = {}, []
        for attribute, value in vars(estimator).items():
            if attribute in params or attribute.startswith("__"):
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
    model : fitted linsep estimator, or Pipeline / ColumnTransformer
        A linsep estimator, or a scikit-learn Pipeline or ColumnTransformer
        of the steps in ``PREPROCESSING`` and linsep estimators.
    path : str or path-like
        The file to write (conventionally ``.npz``; the name is used as given).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ModelFileError
        A step that is not in ``PREPROCESSING``, a parameter JSON cannot
        hold (a function), or a fitted linsep model that could not be loaded
        back (e.g. non-finite weights); a ``ValueError``.

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
            "linsep_version": __version__, "sklearn_version": sklearn.__version__}
    path = Path(path)
    write_file(path, encode_metadata(meta, encoder.arrays))
    return path


def _check_classifier_root(model):
    """Refuse a composite model that does not end in a linsep classifier (save and load share this rule).

    A model file is read to predict (``linsep predict``, :func:`load`): its
    root is a linsep estimator, or a Pipeline whose last step is one (or is
    such a Pipeline).  A bare scaler or ColumnTransformer predicts nothing.
    """
    final = model
    while type(final).__name__ == "Pipeline" and _preprocessing_classes()["Pipeline"] is type(final):
        steps = getattr(final, "steps", None)
        if not isinstance(steps, list) or not steps or not isinstance(steps[-1], tuple) or len(steps[-1]) != 2:
            raise ModelFileError("a Pipeline without steps cannot be a model file")
        final = steps[-1][1]
    if not _is_linsep(final):
        raise ModelFileError(f"a model file holds a classifier: a linsep estimator, or a Pipeline ending in one; "
                             f"this model ends in a {type(final).__name__}")


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
    raise ModelFileError(f"malformed attribute node with keys {sorted(map(str, keys))}")


def _rebuild_node(node, arrays, used):
    name, params, attributes = node["__estimator__"], node["params"], node["attributes"]
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise ModelFileError("malformed estimator node")
    linsep = _linsep_classes()
    cls = linsep.get(name) or _preprocessing_classes().get(name)
    if cls is None or not isinstance(name, str):
        raise ModelFileError(f"class {name!r} is neither a linsep estimator nor one of {', '.join(PREPROCESSING)}")
    decoded = {key: _decode(value, arrays, used, _decode_composite_node) for key, value in params.items()}
    try:
        estimator = cls(**decoded)
    except TypeError as exc:  # a parameter name the class does not take
        raise ModelFileError(f"cannot rebuild {name} ({first_line(exc)})") from None
    set_fitted_attributes(estimator, decoded, attributes, arrays, used,
                          decode=lambda value, arrays, used: _decode(value, arrays, used, _decode_composite_node))
    if name in linsep and hasattr(estimator, "classes_"):
        check_fitted_model(estimator, decoded, context=f"{name}: ")
    elif name not in linsep:
        _check_preprocessing_node(name, estimator)
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
