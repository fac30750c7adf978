"""Pickle-free model files: the fitted arrays and a JSON description in one ``.npz`` archive.

Format (version 1)
------------------
An uncompressed zip archive as :func:`numpy.savez` writes it: one ``.npy``
member per fitted array, plus the member ``__meta__``, a UTF-8 JSON document
(stored as ``uint8``) with the format name and version, the registered
algorithm, its parameters, the fitted attributes as a typed tree whose leaves
name the arrays or hold JSON scalars, and a SHA-256 checksum over the
metadata and every array.

Reading trusts nothing
----------------------
A model file may be truncated, damaged or edited; the checksum catches
accidents, not someone who recomputes it.  :func:`load_model` therefore
checks, in this order, and refuses with a one-line :class:`ModelFileError`:

1. the archive: stored (uncompressed), unencrypted ``.npy`` members with
   distinct names, whose sizes add up to no more than the file itself (no
   decompression bomb), each with a correct CRC;
2. each array: a ``.npy`` header, read by :func:`parse_npy_header` (the
   exact layout NumPy writes; never NumPy's literal parser, whose tokenizer
   errors would escape), of a boolean, integer, float or string dtype whose
   shape accounts for exactly the bytes present (nothing is allocated on a
   header's word);
3. the metadata: UTF-8 JSON nested at most :data:`MAX_JSON_DEPTH` deep,
   format and version, then the checksum — before the tree is decoded —,
   then exactly the keys :func:`save_model` writes;
4. the model: every fitted attribute against :data:`ATTRIBUTES` (type, dtype
   kind, shape consistent with ``classes_``, ``n_features_in_`` and the
   training samples a kernel model keeps; finite values wherever prediction
   reads them), the attributes its family predicts with
   (:data:`FAMILY_ATTRIBUTES`), and the parameters through the estimator's
   own ``_validate_params``.

:func:`save_model` runs the same model check before writing, so a fit that
produced unusable values (``nan`` weights after an overflow) is refused at
once instead of being written.

A Pipeline, ColumnTransformer or CalibratedClassifierCV around linsep
estimators (text Pipelines included) is written by :func:`linsep.save` in the
format :data:`COMPOSITE_FORMAT` (same archive, checksum and checks 1–3; the
metadata holds a tree of steps, see :mod:`linsep.persistence` and
:mod:`linsep.persistence.sklearn_steps`); :func:`load_model` reads both
formats.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
import stat
import struct
import tempfile
import zipfile
import zlib
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from linsep.estimators.base import BaseKernelSeparator, BaseLinearSeparator
from linsep.estimators.registry import make_classifier
from linsep._core.result import STATUSES
from linsep._version import version as linsep_version

__all__ = ["ATTRIBUTES", "FAMILY_ATTRIBUTES", "FORMAT", "FORMAT_VERSION", "ModelFileError", "load_model",
           "save_model"]

FORMAT = "linsep-model"
COMPOSITE_FORMAT = "linsep-composite-model"
"""Format name of a Pipeline or ColumnTransformer around linsep models (:mod:`linsep.persistence`)."""
FORMAT_VERSION = 1
MAX_JSON_DEPTH = 64
"""Deepest nesting of the metadata accepted (far below the JSON parser's recursion limit).

:func:`save_model` writes about 7 levels, a composite model 16 plus about 6
per nested Pipeline or ColumnTransformer.  Writers check their metadata
against this same bound (:func:`encode_metadata`): what is written can be
read back."""

_META = "__meta__"
_META_KEYS = {"format", "version", "algorithm", "params", "classes", "attributes", "skipped_attributes",
              "linsep_version", "checksum"}
_ARRAY_KINDS = "biufU"


class ModelFileError(ValueError):
    """A model file that cannot be written or read back; the message is one line."""


# ---------------------------------------------------------------- encoding

def _json_safe(value):
    """Return a JSON-encodable description of ``value`` or raise TypeError."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)


def _json_safe_param(value):
    """A constructor parameter as JSON: a scalar as it is, a dict (``class_weight``) as an ``__items__`` node."""
    if isinstance(value, dict):
        return _Encoder().encode({k: _json_safe(v) for k, v in value.items()}, "params")
    return _json_safe(value)


def _decode_param(value):
    """Inverse of :func:`_json_safe_param` (a dict node is decoded, a JSON scalar kept)."""
    return _decode(value, {}, set()) if isinstance(value, dict) else value


class _Encoder:
    """Fitted attributes → (JSON tree, {key: ndarray}); object arrays become typed lists, sparse matrices their parts."""

    def __init__(self):
        self.arrays = {}

    def _array(self, key, value):
        if key in self.arrays or key == _META:
            raise TypeError(f"two arrays named {key!r}")
        self.arrays[key] = value
        return {"__array__": key}

    def encode(self, value, key):
        if isinstance(value, np.ndarray):
            if value.dtype.kind in _ARRAY_KINDS:
                return self._array(key, value)
            if value.dtype.kind == "O":  # per-class strings or None: JSON, dtype restored on load
                return {"__object_array__": [self.encode(v, f"{key}.{i}") for i, v in enumerate(value.ravel().tolist())],
                        "shape": list(value.shape)}
            raise TypeError(f"array of dtype {value.dtype}")
        if sp.issparse(value) and value.format in ("csr", "csc"):  # e.g. X_fit_ of a kernel model fitted on svmlight data
            return {"__sparse__": value.format, "shape": list(value.shape),
                    **{part: self.encode(getattr(value, part), f"{key}.{part}") for part in ("data", "indices", "indptr")}}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                # e.g. class_weight={0: 1.0, 1: 5.0}: JSON keys are strings, so the pairs keep each label's type
                return {"__items__": [[{"__value__": _json_safe(k)}, self.encode(v, f"{key}.{i}")]
                                      for i, (k, v) in enumerate(value.items())]}
            return {"__dict__": {k: self.encode(v, f"{key}.{k}") for k, v in value.items()}}
        if isinstance(value, (list, tuple)):
            return {"__list__": [self.encode(v, f"{key}.{i}") for i, v in enumerate(value)]}
        return {"__value__": _json_safe(value)}


def checksum(meta, arrays):
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}|{a.dtype.str}|{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def save_model(estimator, algorithm, path):
    """Write a fitted estimator as arrays + JSON metadata (no pickle), after checking it as :func:`load_model` would.

    Raises :class:`ModelFileError` for a parameter that JSON cannot hold or a
    fitted model that could not be loaded back (e.g. non-finite weights);
    :class:`OSError` if the file cannot be written; the write is atomic
    (:func:`write_file`): a previous file at ``path`` survives any failure.
    """
    params = {}
    for name, value in estimator.get_params(deep=False).items():
        try:
            params[name] = _json_safe_param(value)
        except TypeError as exc:
            raise ModelFileError(f"cannot store parameter {name} of type {exc} in a model file: a model file holds "
                                 f"no code, name a built-in option instead (a kernel: 'linear', 'poly', 'rbf', "
                                 f"'sigmoid')") from None
    check_fitted_model(estimator, params, context="the fitted model cannot be saved: ")
    enc, attributes, skipped = _Encoder(), {}, []
    # Every attribute that is not a constructor parameter was set by fit:
    # public ones (coef_, dual_coef_, X_fit_ …) and private ones some
    # estimators predict with (e.g. a resolved kernel ``_gamma``).
    for name, value in vars(estimator).items():
        if name in params or name.startswith("__"):
            continue
        try:
            attributes[name] = enc.encode(value, name)
        except TypeError:
            skipped.append(name)  # e.g. a fitted sub-object: not needed to predict
    missing = sorted(set(_required_attributes(estimator)) & set(skipped))
    if missing:
        raise ModelFileError(f"the fitted model cannot be saved: cannot store {', '.join(missing)}")
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "algorithm": algorithm, "params": params,
            "classes": attributes["classes_"],
            "attributes": attributes, "skipped_attributes": skipped, "linsep_version": linsep_version()}
    path = Path(path)
    write_file(path, encode_metadata(meta, enc.arrays))
    return path


def encode_metadata(meta, arrays):
    """The bytes of a model file: ``meta`` (checksum added) and ``arrays`` as an ``.npz`` archive.

    The one encoder of both formats, and the place of the save/load
    symmetry rule: metadata that :func:`load_model` would refuse for its
    nesting (:data:`MAX_JSON_DEPTH`) is refused here, before anything is
    written.
    """
    meta = dict(meta)
    meta["checksum"] = checksum(meta, arrays)
    text = json.dumps(meta)
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ModelFileError(f"the model cannot be saved: its description is nested {depth} levels deep, beyond "
                             f"the {MAX_JSON_DEPTH} a model file may hold (fewer nested Pipelines)")
    buffer = io.BytesIO()
    np.savez(buffer, **{_META: np.frombuffer(text.encode(), dtype=np.uint8)}, **arrays)
    return buffer.getvalue()


def write_file(path, data):
    """Write ``data`` (bytes) to ``path`` atomically: the old file, if any, survives any failure.

    The one writer of model files (and of ``linsep predict -o``).  The bytes
    go to a new temporary file in the target's folder (so the final rename
    never crosses file systems), which is flushed and ``fsync``-ed, then
    renamed over ``path`` with :func:`os.replace`.  A write that fails half
    way (a full disk, a file-size limit, an interruption) removes only that
    temporary file, which this call created; ``path`` is left as it was.
    An existing ``path`` that is not a regular file (a directory, a device
    node such as ``/dev/full``, a pipe) is refused before anything is
    written, and never replaced or deleted.

    Raises
    ------
    ModelFileError
        ``path`` exists and is not a regular file.
    OSError
        The folder is missing or not writable, or the write failed.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows a symbolic link: the file it names is the one replaced
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
        raise ModelFileError(f"cannot write {path}: it is {kind}; give the path of a file")
    target = Path(os.path.realpath(path))  # replace the file a link names, keep the link
    handle = tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False)
    temporary = handle.name
    try:
        with handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:  # the new file keeps the permissions of the one it replaces
            os.chmod(temporary, stat.S_IMODE(mode))
        else:  # as open() would have created it: 0o666 less the umask (NamedTemporaryFile makes 0o600)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)  # the temporary file only: this call created it
        raise
    return path


# ---------------------------------------------------------------- reading the archive

# What zipfile and numpy's header parser raise on damaged bytes (unsupported
# zip versions and flags included).  Listed, not ``Exception``: a mistake in
# this module must still show up as a traceback.
_DAMAGED = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, struct.error, EOFError, OSError, ValueError,
            TypeError, OverflowError, NotImplementedError, RuntimeError, UnicodeDecodeError, SyntaxError,
            MemoryError, RecursionError)


# The ``.npy`` header as numpy.save writes it, and nothing else: NumPy's own
# parser evaluates a Python literal and lets tokenizer and syntax errors of a
# crafted header escape; this one matches the exact layout and refuses any
# other with one line.
_NPY_MAGIC = b"\x93NUMPY"
_NPY_HEADER = re.compile(
    r"\{'descr': '(?P<descr>[<>|=]?[biufU][0-9]{1,4})', 'fortran_order': (?P<fortran>True|False), "
    r"'shape': \((?P<shape>(?:[0-9]{1,19}, )*(?:[0-9]{1,19},?)?)\), \} *\n")


def parse_npy_header(data):
    """``(shape, fortran_order, dtype, offset of the array bytes)`` from the start of a ``.npy`` member.

    Accepts versions 1.0 and 2.0 of the format with the header NumPy writes
    (``{'descr': …, 'fortran_order': …, 'shape': (…), }``) for a boolean,
    integer, float or string dtype; raises :class:`ValueError` with one line
    for anything else (never NumPy's parser errors).
    """
    if len(data) < 10 or data[:6] != _NPY_MAGIC:
        raise ValueError("member is not a .npy array (bad magic)")
    version = (data[6], data[7])
    if version == (1, 0):
        length, start = int.from_bytes(data[8:10], "little"), 10
    elif version == (2, 0):
        if len(data) < 12:
            raise ValueError("truncated .npy header")
        length, start = int.from_bytes(data[8:12], "little"), 12
    else:
        raise ValueError(f"unsupported .npy version {version[0]}.{version[1]}")
    if start + length > len(data):
        raise ValueError("truncated .npy header")
    try:
        header = data[start:start + length].decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(".npy header is not ASCII text") from None
    match = _NPY_HEADER.fullmatch(header)
    if match is None:
        raise ValueError("malformed .npy header")
    try:
        dtype = np.dtype(match["descr"])  # the pattern admits only numeric and string codes
    except TypeError:  # a code of no such size, e.g. '<i3'
        raise ValueError(f"unknown .npy dtype {match['descr']!r}") from None
    shape = tuple(int(size) for size in match["shape"].replace(",", " ").split())
    return shape, match["fortran"] == "True", dtype, start + length


def _read_npy(data):
    """An ndarray from the bytes of one ``.npy`` member, of a plain dtype whose size matches the header."""
    shape, fortran, dtype, start = parse_npy_header(data)
    if dtype.itemsize == 0:
        raise ValueError(f"array of dtype {dtype}")
    count = math.prod(shape)
    if count * dtype.itemsize != len(data) - start:
        raise ValueError(f"shape {shape} of {dtype} does not match its {len(data) - start} bytes")
    array = np.frombuffer(data, dtype=dtype, count=count, offset=start)
    return array.reshape(shape, order="F" if fortran else "C").copy()


def _read_archive(data):
    """``{name: ndarray}`` of the ``.npy`` members of a zip archive given as bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        names = [m.filename for m in members]
        if len(set(names)) != len(names):
            raise ValueError("duplicate members")
        for member in members:
            if not member.filename.endswith(".npy"):
                raise ValueError(f"member {member.filename!r} is not an array")
            if member.compress_type != zipfile.ZIP_STORED or member.flag_bits & 0x1:
                raise ValueError(f"member {member.filename!r} is compressed or encrypted")
        if sum(m.file_size for m in members) > len(data):  # stored members: no bigger than the file holding them
            raise ValueError("members larger than the archive")
        arrays = {m.filename[:-4]: _read_npy(archive.read(m)) for m in members}  # read() checks the CRC
    return arrays


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_NESTING = np.zeros(256, dtype=np.int8)
_JSON_NESTING[[ord("["), ord("{")]], _JSON_NESTING[[ord("]"), ord("}")]] = 1, -1


def _json_depth(text):
    """Deepest nesting of ``[`` / ``{`` outside strings, without parsing (a parser would recurse that deep)."""
    codes = np.frombuffer(_JSON_STRING.sub('""', text).encode(), dtype=np.uint8)
    return int(np.cumsum(_JSON_NESTING[codes], dtype=np.int64).max(initial=0))


def _parse_meta(blob):
    if blob.dtype != np.uint8 or blob.ndim != 1:
        raise ModelFileError("metadata is not a byte string")
    try:
        text = blob.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError("metadata is not UTF-8 text") from None
    if _json_depth(text) > MAX_JSON_DEPTH:
        raise ModelFileError(f"metadata nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, ints beyond the digit limit
        raise ModelFileError(f"metadata is not valid JSON ({first_line(exc)})") from None


# ---------------------------------------------------------------- decoding the tree

def _decode(node, arrays, used, extra=None):
    """The fitted value described by a node of the metadata tree; refuses any node :class:`_Encoder` does not write.

    ``extra(node, arrays, used)`` decodes the node kinds of composite models
    (:mod:`linsep.persistence`); it raises :class:`ModelFileError` for any
    node it does not know either.
    """
    if not isinstance(node, dict):
        raise ModelFileError(f"malformed attribute node of type {type(node).__name__}")
    keys = set(node)
    if keys == {"__array__"}:
        key = node["__array__"]
        if not isinstance(key, str) or key not in arrays or key in used:
            raise ModelFileError(f"attribute refers to a missing array {key!r}")
        used.add(key)
        return arrays[key]
    if keys == {"__value__"}:
        value = node["__value__"]
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ModelFileError(f"malformed scalar of type {type(value).__name__}")
        return value
    if keys == {"__list__"} and isinstance(node["__list__"], list):
        return [_decode(v, arrays, used, extra) for v in node["__list__"]]
    if keys == {"__dict__"} and isinstance(node["__dict__"], dict):
        return {k: _decode(v, arrays, used, extra) for k, v in node["__dict__"].items()}
    if keys == {"__items__"} and isinstance(node["__items__"], list):
        pairs = node["__items__"]
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
            raise ModelFileError("malformed dict items")
        items = [(_decode(k, arrays, used, extra), _decode(v, arrays, used, extra)) for k, v in pairs]
        if not all(k is None or isinstance(k, (bool, int, float, str)) for k, _ in items):
            raise ModelFileError("malformed dict key")
        return dict(items)
    if keys == {"__object_array__", "shape"} and isinstance(node["__object_array__"], list):
        items = [_decode(v, arrays, used, extra) for v in node["__object_array__"]]
        shape = _shape(node["shape"], len(items))
        out = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):  # element by element: numpy would broadcast nested arrays
            out[i] = item
        return out.reshape(shape)
    if keys == {"__sparse__", "shape", "data", "indices", "indptr"} and node["__sparse__"] in ("csr", "csc"):
        data, indices, indptr = (_decode(node[part], arrays, used, extra) for part in ("data", "indices", "indptr"))
        shape = _shape(node["shape"], None)
        if (len(shape) != 2 or not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in (data, indices, indptr))
                or data.dtype.kind != "f" or indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu"):
            raise ModelFileError("malformed sparse matrix")
        matrix_class = sp.csr_matrix if node["__sparse__"] == "csr" else sp.csc_matrix
        try:
            matrix = matrix_class((data, indices, indptr), shape=shape)
            matrix.check_format(full_check=True)  # index bounds and ordering, not only lengths
        except (ValueError, TypeError, IndexError, OverflowError) as exc:
            raise ModelFileError(f"malformed sparse matrix ({first_line(exc)})") from None
        return matrix
    if extra is not None:
        return extra(node, arrays, used)
    raise ModelFileError(f"malformed attribute node with keys {sorted(map(str, keys))}")


def _shape(value, size):
    if (not isinstance(value, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
            or (size is not None and int(np.prod(value, dtype=object)) != size)):
        raise ModelFileError(f"malformed shape {value!r}")
    return tuple(value)


# ---------------------------------------------------------------- checking the model
#
# One table says what every fitted attribute must look like.  Shapes name
# their dimensions: "P" problems (1 for two classes, K for one-vs-rest), "d"
# features (n_features_in_), "n" training samples a kernel model keeps (rows
# of X_fit_), None any size.  Attributes prediction reads must be finite;
# diagnostics are checked for type and shape only (a margin bound may be
# inf).  An attribute the table does not know (a new estimator's diagnostic)
# is accepted as decoded: the decoder only yields arrays of plain dtypes,
# JSON scalars, lists and dicts of them.


def _fail(name, what):
    raise ModelFileError(f"{name} {what}")


def _is_int(value):
    return isinstance(value, (Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, (Real, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_))


def _array(kinds, shape, finite=False, sparse=False):
    """An ndarray (or, with ``sparse``, a CSR/CSC matrix) of one of the dtype ``kinds`` and this shape."""

    def check(name, value, dims):
        if not (isinstance(value, np.ndarray) or (sparse and sp.issparse(value))):
            _fail(name, f"is a {type(value).__name__}, expected an array")
        if value.dtype.kind not in kinds:
            _fail(name, f"has dtype {value.dtype}, expected kind {'/'.join(kinds)}")
        expected = tuple(dims.get(s) if isinstance(s, str) else s for s in shape)
        if value.ndim != len(shape) or any(e is not None and e != s for e, s in zip(expected, value.shape)):
            words = ", ".join("any" if e is None else str(e) for e in expected)
            _fail(name, f"has shape {value.shape}, expected ({words})")
        values = value.data if sp.issparse(value) else value
        if finite and values.dtype.kind == "f" and not np.isfinite(values).all():
            _fail(name, "has non-finite values (nan or inf)")

    return check


def _integer(minimum=0):
    def check(name, value, dims):
        if not _is_int(value) or value < minimum:
            _fail(name, f"is {value!r}, expected an integer >= {minimum}")

    return check


def _is_finite(value):
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond float range
        return False


def _real(finite=False, positive=False):
    def check(name, value, dims):
        if not _is_real(value) or (finite and not _is_finite(value)) or (positive and not value > 0):
            _fail(name, f"is {value!r}, expected a {'finite ' if finite else ''}{'positive ' if positive else ''}number")

    return check


def _status(name, value, dims):
    if not isinstance(value, str) or value not in STATUSES:
        _fail(name, f"is {value!r}, expected one of {', '.join(STATUSES)}")


def _history(name, value, dims):
    if not isinstance(value, dict):
        _fail(name, f"is a {type(value).__name__}, expected a dict of arrays")
    for key, trace in value.items():
        _array("biuf", (None,) * getattr(trace, "ndim", 1))(f"{name}[{key!r}]", trace, dims)


def _optional(check):
    def optional(name, value, dims):
        if value is not None:
            check(name, value, dims)

    return optional


def _per_problem(check, axis=0):
    """One value for two classes; for one-vs-rest one per class: a list, or an array with the classes along ``axis``."""

    def per_problem(name, value, dims):
        P = dims["P"]
        if P == 1:
            return check(name, value, dims)
        if isinstance(value, list):
            items = value
        elif isinstance(value, np.ndarray) and value.ndim > axis:
            items = list(np.moveaxis(value, axis, 0))
        else:
            items = None
        if items is None or len(items) != P:
            _fail(name, f"does not hold one value per class ({P})")
        for i, item in enumerate(items):
            check(f"{name}[{i}]", item.item() if isinstance(item, np.ndarray) and item.ndim == 0 else item, dims)

    return per_problem


def _classes(name, value, dims):
    _array(_ARRAY_KINDS + "O", (None,))(name, value, dims)
    if value.dtype.kind == "O" and not all(isinstance(v, str) for v in value):  # e.g. labels of a pandas column
        _fail(name, "holds objects other than strings")
    if value.size < 2:
        _fail(name, f"has {value.size} class(es), expected at least 2")
    if not np.all(value[1:] > value[:-1]):  # also refuses nan
        _fail(name, "is not sorted and unique")


def _feature_names(name, value, dims):
    _array("O", ("d",))(name, value, dims)
    if not all(isinstance(v, str) for v in value):
        _fail(name, "holds non-string feature names")


ATTRIBUTES = {
    "n_features_in_": _integer(1),
    "classes_": _classes,
    "feature_names_in_": _feature_names,
    "coef_": _array("f", ("P", "d"), finite=True),
    "intercept_": _array("f", ("P",), finite=True),
    "X_fit_": _array("f", ("n", "d"), finite=True, sparse=True),
    "dual_coef_": _array("f", ("P", "n"), finite=True),
    "_gamma": _real(finite=True, positive=True),
    "status_": _per_problem(_status),
    "n_iter_": _per_problem(_integer()),
    "best_iter_": _per_problem(_optional(_integer())),
    "history_": _per_problem(_optional(_history)),
    "certificate_": _per_problem(_optional(_array("f", (None,)))),
    "margin_vector_": _per_problem(_array("f", (None,)), axis=1),
    "alpha_": _per_problem(_array("if", (None,))),
    "margin_": _per_problem(_real()),
    "margin_upper_bound_": _per_problem(_real()),
    "rank_": _integer(),
    "n_kernel_columns_": _integer(),
}
"""Fitted attribute name → check of its value; listed in dependency order (``classes_`` and ``X_fit_`` size the rest)."""

COMMON_ATTRIBUTES = ("n_features_in_", "classes_", "intercept_", "status_", "n_iter_")
FAMILY_ATTRIBUTES = (
    (BaseKernelSeparator, ("X_fit_", "_gamma", "dual_coef_")),  # f(x) = Σ α_i k(x_i, x) + b
    (BaseLinearSeparator, ("coef_",)),  # f(x) = w·x + b
)
"""The attributes each family predicts with, besides :data:`COMMON_ATTRIBUTES`."""


def _required_attributes(estimator):
    family = next((names for cls, names in FAMILY_ATTRIBUTES if isinstance(estimator, cls)), ())
    return COMMON_ATTRIBUTES + family


def check_fitted_model(estimator, params, context=""):
    """Refuse a fitted estimator whose attributes :data:`ATTRIBUTES` / :data:`FAMILY_ATTRIBUTES` do not accept.

    ``params`` are the estimator's parameters; ``context`` prefixes the
    one-line :class:`ModelFileError`.
    """
    try:
        fitted = vars(estimator)
        for name in _required_attributes(estimator):
            if name not in fitted:
                _fail(name, "is missing")
        classes = fitted["classes_"]
        _classes("classes_", classes, {})
        dims = {"P": 1 if classes.size == 2 else classes.size}
        ATTRIBUTES["n_features_in_"]("n_features_in_", fitted["n_features_in_"], dims)
        dims["d"] = int(fitted["n_features_in_"])
        if "X_fit_" in fitted:
            ATTRIBUTES["X_fit_"]("X_fit_", fitted["X_fit_"], dims)
            dims["n"] = fitted["X_fit_"].shape[0]
        for name, check in ATTRIBUTES.items():
            if name in fitted:
                check(name, fitted[name], dims)
        if isinstance(estimator, BaseKernelSeparator):
            gamma = params.get("gamma")
            if _is_real(gamma) and fitted["_gamma"] != float(gamma):
                _fail("_gamma", f"is {fitted['_gamma']!r} but the parameter gamma is {gamma!r}")
            if params.get("kernel") == "precomputed" and dims["n"] != dims["d"]:
                _fail("X_fit_", "of a precomputed kernel is not a square Gram matrix")
    except ModelFileError as exc:
        raise ModelFileError(f"{context}{exc}") from None


# ---------------------------------------------------------------- loading

def first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def load_model(path):
    """Rebuild the estimator of a model file, refusing anything :func:`save_model` would not have written.

    Returns ``(estimator, metadata)``.  Raises :class:`ModelFileError` (one
    line, prefixed by the path) for a missing, unreadable, damaged, foreign or
    inconsistent file.
    """
    path = Path(path)
    if path.is_dir():
        raise ModelFileError(f"{path}: is a directory, not a model file")
    if not path.is_file():
        raise ModelFileError(f"no such model file: {path}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return _load(data)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None


_COMPOSITE_READER = []
"""The reader of :data:`COMPOSITE_FORMAT` files, registered by the module that defines that format
(``linsep.persistence``, imported by ``linsep`` itself) through :func:`register_composite_reader`:
this module, below it, never imports it back."""


def register_composite_reader(rebuild):
    """Make ``rebuild(meta, arrays)`` the reader of :data:`COMPOSITE_FORMAT` files."""
    _COMPOSITE_READER[:] = [rebuild]


def _load(data):
    """The estimator and metadata of a model file's bytes: a single linsep model, or a composite one."""
    meta, arrays = read_verified(data)
    if meta["format"] == COMPOSITE_FORMAT:
        if not _COMPOSITE_READER:  # pragma: no cover - linsep's own __init__ registers it
            raise ModelFileError("a Pipeline model file needs linsep.persistence to read it")
        return _COMPOSITE_READER[0](meta, arrays), meta
    return _rebuild_estimator(meta, arrays), meta


def read_verified(data):
    """``(metadata, arrays)`` of a model file whose archive, format, version and checksum are sound."""
    if not data.startswith(b"PK"):
        raise ModelFileError("not a linsep model file (not an .npz archive)")
    try:
        arrays = _read_archive(data)
    except _DAMAGED as exc:
        raise ModelFileError(f"not a readable linsep model file (truncated or damaged: {first_line(exc)})") from None
    if _META not in arrays:
        raise ModelFileError("not a linsep model file (no metadata)")
    meta = _parse_meta(arrays.pop(_META))
    if not isinstance(meta, dict) or meta.get("format") not in (FORMAT, COMPOSITE_FORMAT):
        raise ModelFileError(f"not a linsep model file (format {meta.get('format') if isinstance(meta, dict) else None!r})")
    if meta.get("version") != FORMAT_VERSION:
        raise ModelFileError(f"model format version {meta.get('version')!r}, this linsep reads version {FORMAT_VERSION}")
    stored = meta.pop("checksum", None)
    if stored != checksum(meta, arrays):
        raise ModelFileError("checksum mismatch — the file was modified or is damaged")
    # From here on the bytes are what save_model wrote, or someone recomputed
    # the checksum: every piece is still checked before use.
    meta["checksum"] = stored
    return meta, arrays


def _rebuild_estimator(meta, arrays):
    if set(meta) != _META_KEYS:
        raise ModelFileError(f"unexpected metadata keys {sorted(set(meta) ^ _META_KEYS)}")
    algorithm, params, attributes = meta["algorithm"], meta["params"], meta["attributes"]
    if not isinstance(algorithm, str) or not isinstance(params, dict) or not isinstance(attributes, dict):
        raise ModelFileError("malformed metadata (algorithm, params or attributes)")
    params = {k: _decode_param(v) for k, v in params.items()}
    if not isinstance(meta["skipped_attributes"], list) or not isinstance(meta["linsep_version"], str):
        raise ModelFileError("malformed metadata (skipped_attributes or linsep_version)")
    try:
        estimator = make_classifier(algorithm, **params)
    except (ValueError, TypeError) as exc:  # unknown algorithm, unknown parameter name
        raise ModelFileError(f"cannot rebuild the model ({first_line(exc)})") from None
    used = set()
    set_fitted_attributes(estimator, params, attributes, arrays, used)
    classes = _decode(meta["classes"], arrays, set())  # a second description of classes_, kept for readers
    if not (isinstance(classes, np.ndarray) and isinstance(getattr(estimator, "classes_", None), np.ndarray)
            and classes.dtype == estimator.classes_.dtype and np.array_equal(classes, estimator.classes_)):
        raise ModelFileError("classes do not match classes_")
    if used != set(arrays):
        raise ModelFileError(f"arrays not referenced by the metadata: {sorted(set(arrays) - used)[:3]}")
    check_fitted_model(estimator, params)
    return estimator


def set_fitted_attributes(estimator, params, attributes, arrays, used, decode=None, validate_params=True):
    """Validate ``estimator``'s parameters, then set the decoded fitted ``attributes`` on it.

    An attribute may not shadow a parameter, a class attribute (a method) or
    a dunder name.  ``decode`` (default :func:`_decode`) turns a node into a value.
    ``validate_params=False`` skips the parameter validation, for a class that
    has neither parameters nor a validation (a calibrator of CalibratedClassifierCV).
    """
    decode = decode or _decode
    try:
        if validate_params:
            estimator._validate_params()
    except (ValueError, TypeError) as exc:  # InvalidParameterError is both
        raise ModelFileError(f"invalid parameter ({first_line(exc)})") from None
    for name, node in attributes.items():
        if not name.isidentifier() or name.startswith("__") or name in params or hasattr(type(estimator), name):
            raise ModelFileError(f"attribute name {name!r} is not a fitted attribute")
        try:
            setattr(estimator, name, decode(node, arrays, used))
        except ModelFileError as exc:
            raise ModelFileError(f"{name}: {exc}") from None
