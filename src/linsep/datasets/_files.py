"""Read labelled data files as they come: CSV (any delimiter, header or not, gzip) and svmlight/libsvm.

:func:`read_data_file` is what ``linsep fit``, ``predict``, ``separable``
and ``trace`` read their DATA with; every refusal is a :class:`DataFileError`
(a ``ValueError``) of one line naming the file, the line and the column.

CSV rules
---------
* ``.gz`` is read through gzip (``data.csv.gz``, ``data.svm.gz``); the
  format is the suffix before it.
* The delimiter is the one given, else the one of ``,``, tab and ``;`` that
  the first line holds (comma if none).
* Header: given (``header=True``/``False``), or detected: the first row is
  a header when one of its cells is not a number while that column holds
  numbers on every other row.  A first row of numbers is therefore data —
  never a silently lost row —; a header of numeric names must be declared.
* The label column is the last unless ``label_column`` names it (a header
  name) or gives its index (``0`` the first, ``-1`` the last); the columns
  ``drop_columns`` (names or indices, e.g. an ``id``) are removed before
  anything else.
* A file containing NUL bytes is refused (a binary file is not data).

Size limits
-----------
Data files come from anywhere, so two sizes are bounded before anything is
allocated on a file's word:

* **Decompression**: a ``.gz`` file is read by one bounded reader
  (:func:`read_compressed`), in pieces, and refused with one line as soon
  as it decompresses to more than ``max_decompressed_bytes`` (default
  :data:`MAX_DECOMPRESSED_BYTES`, 128 MiB): a "gzip bomb" of a few
  megabytes that expands to gigabytes costs at most that much memory and
  is refused before any parsing.  Larger honest files: pass a larger
  ``max_decompressed_bytes`` (or ``None`` for no bound), or decompress them.
* **svmlight feature count**: the features of an svmlight file are sized by
  its largest index, so a 40-byte line ``1 2147483647:1`` would ask for
  billions of columns.  Without ``n_features`` (a model's), the largest
  index may be at most ``max_features`` (default :data:`MAX_SVMLIGHT_FEATURES`,
  2²⁰) or the file's (decompressed) size in bytes, whichever is larger;
  beyond, the file is refused.  Pass ``n_features`` or a larger
  ``max_features`` for wider data.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from pathlib import Path

import numpy as np

__all__ = ["MAX_DECOMPRESSED_BYTES", "MAX_SVMLIGHT_FEATURES", "SVMLIGHT_SUFFIXES", "DataFileError",
           "read_compressed", "read_data_file"]

SVMLIGHT_SUFFIXES = (".svm", ".libsvm", ".svmlight")
MAX_DECOMPRESSED_BYTES = 128 * 2**20
"""Default bound on what a ``.gz`` data file may decompress to (128 MiB); see the module's size limits."""
MAX_SVMLIGHT_FEATURES = 2**20
"""Default bound on an svmlight file's feature count (its largest index), unless the file is larger in bytes."""
_PIECE = 2**20  # bytes decompressed per step of the bounded reader
_DELIMITERS = (",", "\t", ";")


class DataFileError(ValueError):
    """A data file that cannot be read as asked; the message is one line naming the file."""


def first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _format_of(path):
    """``(suffix, gzipped)``: the format suffix, looking through a final ``.gz``."""
    suffixes = [s.lower() for s in path.suffixes]
    gzipped = bool(suffixes) and suffixes[-1] == ".gz"
    suffix = suffixes[-2] if gzipped and len(suffixes) > 1 else "" if gzipped else (suffixes[-1] if suffixes else "")
    return suffix, gzipped


def _parse_labels(raw):
    """Labels as ints if they all are (and fit in int64), else floats, else strings."""
    for cast, dtype in ((int, np.int64), (float, np.float64)):
        try:
            return np.array([cast(v) for v in raw], dtype=dtype)
        except (ValueError, OverflowError):
            pass
    return np.array(raw, dtype=str)


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def read_compressed(path, max_decompressed_bytes=MAX_DECOMPRESSED_BYTES):
    """The decompressed bytes of the gzip file ``path``, refused once they exceed ``max_decompressed_bytes``.

    The one reader of compressed data files: it decompresses in pieces of
    1 MiB and stops at the first piece beyond the bound, so a decompression
    bomb costs at most the bound in memory and time.

    Parameters
    ----------
    path : path-like
        A gzip file (several concatenated members are read as one stream).
    max_decompressed_bytes : int or None, default=MAX_DECOMPRESSED_BYTES
        The most bytes the file may decompress to; ``None`` for no bound.

    Returns
    -------
    bytes

    Raises
    ------
    DataFileError
        One line: unreadable or damaged gzip data, or more than the bound.
    """
    path = Path(path)
    limit = None if max_decompressed_bytes is None else int(max_decompressed_bytes)
    pieces, total = [], 0
    try:
        with gzip.open(path, "rb") as stream:
            while True:
                piece = stream.read(_PIECE)
                if not piece:
                    break
                total += len(piece)
                if limit is not None and total > limit:
                    raise DataFileError(
                        f"{path}: decompresses to more than {limit} bytes (max_decompressed_bytes; "
                        "a decompression bomb, or a file to decompress first or read with a larger bound)")
                pieces.append(piece)
    except OSError as exc:  # gzip.BadGzipFile is one
        raise DataFileError(f"cannot read {path}: {exc.strerror or first_line(exc)}") from None
    except (EOFError, zlib.error) as exc:
        raise DataFileError(f"cannot read {path}: damaged gzip data ({first_line(exc)})") from None
    return b"".join(pieces)


def _read_raw(path, gzipped, max_decompressed_bytes):
    if gzipped:
        return read_compressed(path, max_decompressed_bytes)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"cannot read {path}: {exc.strerror or first_line(exc)}") from None


def _read_text(path, raw):
    if b"\x00" in raw:
        raise DataFileError(f"{path}: contains NUL bytes (a binary file, or UTF-16 text: save it as UTF-8)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path}: not a UTF-8 text file") from None


def _column_index(spec, header, width, path, option):
    """The index of the column ``spec`` (a header name, or an integer index, negative from the end)."""
    if isinstance(spec, (int, np.integer)) or (isinstance(spec, str) and spec.lstrip("-").isdigit()
                                               and (header is None or spec not in header)):
        index = int(spec)
        if not -width <= index < width:
            raise DataFileError(f"{path}: {option} {index} is out of range for {width} columns")
        return index % width
    if header is None:
        raise DataFileError(f"{path}: {option} {spec!r} names a column, but the file has no header row "
                            f"(give a column index, or declare the header)")
    matches = [j for j, name in enumerate(header) if name.strip() == str(spec).strip()]
    if not matches:
        raise DataFileError(f"{path}: {option} {spec!r} is not a column of the header ({', '.join(header[:10])})")
    if len(matches) > 1:
        raise DataFileError(f"{path}: {option} {spec!r} names {len(matches)} columns of the header")
    return matches[0]


def _split_columns(spec):
    if spec is None:
        return []
    if isinstance(spec, str):
        return [part for part in (p.strip() for p in spec.split(",")) if part]
    return list(spec)


def _read_csv(path, text, n_features, header, label_column, delimiter, drop_columns):
    if delimiter is None:
        first = text.split("\n", 1)[0]
        delimiter = next((d for d in _DELIMITERS if d in first), ",")
    elif delimiter in ("tab", "\\t"):
        delimiter = "\t"
    if len(delimiter) != 1:
        raise DataFileError(f"the delimiter must be one character, got {delimiter!r}")
    try:
        numbered = [(line, row) for line, row in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), 1)
                    if row and any(cell.strip() for cell in row)]
    except csv.Error as exc:  # e.g. a field beyond the csv module's size limit
        raise DataFileError(f"{path}: not a valid CSV file ({first_line(exc)})") from None
    if not numbered:
        raise DataFileError(f"{path}: empty file (no data rows)")
    width = len(numbered[0][1])
    for line, row in numbered:
        if len(row) != width:
            raise DataFileError(f"{path}, line {line}: {len(row)} fields, the first row has {width} (ragged rows"
                                f"{'' if delimiter != ',' else '; another delimiter? see --delimiter'})")
    if header is None:  # detected: a non-number where the column below holds numbers only
        first, rest = numbered[0][1], [row for _, row in numbered[1:]]
        header = bool(rest) and any(not _is_number(first[j]) and all(_is_number(row[j]) for row in rest)
                                    for j in range(width))
    names = [cell.strip() for cell in numbered[0][1]] if header else None
    body = numbered[1:] if header else numbered
    if not body:
        raise DataFileError(f"{path}: no data rows after the header")
    dropped = {_column_index(spec, names, width, path, "--drop-columns") for spec in _split_columns(drop_columns)}
    kept = [j for j in range(width) if j not in dropped]
    label = None if label_column is None else _column_index(label_column, names, width, path, "--label-column")
    if label is not None and label in dropped:
        raise DataFileError(f"{path}: the label column is also dropped")
    if n_features is None or len(kept) == n_features + 1:
        label = kept[-1] if label is None else label
    elif len(kept) == n_features and label_column is None:
        label = None  # features only: data to predict
    else:
        raise DataFileError(f"{path}: {len(kept)} columns{' after dropping' if dropped else ''}, the model expects "
                            f"{n_features} features (optionally with the label)")
    features = [j for j in kept if j != label]
    if not features:
        raise DataFileError(f"{path}: no feature column (need at least one besides the label)")
    X = np.empty((len(body), len(features)))
    for i, (line, row) in enumerate(body):
        for k, j in enumerate(features):
            try:
                X[i, k] = float(row[j])
            except ValueError:
                column = repr(names[j]) if names else f"{j + 1}"
                hint = "" if header or i else " (a header row? declare it with --header)"
                raise DataFileError(f"{path}, line {line}, column {column}: non-numeric value {row[j]!r}{hint}") from None
        if label is not None and not row[label].strip():
            raise DataFileError(f"{path}, line {line}: empty label")
    if not np.isfinite(X).all():
        raise DataFileError(f"{path}: non-finite feature values (nan, inf, or beyond ±1.8e308)")
    y = None if label is None else _parse_labels([row[label].strip() for _, row in body])
    return X, y


def _read_svmlight(path, raw, n_features, max_features):
    from sklearn.datasets import load_svmlight_file

    try:
        # from the bytes already read (bounded if gzipped): scikit-learn's reader would decompress on its own
        X, y = load_svmlight_file(io.BytesIO(raw), n_features=n_features)
    except (ValueError, TypeError, RuntimeError, EOFError, OSError, zlib.error) as exc:
        raise DataFileError(f"{path}: not a valid svmlight/libsvm file ({first_line(exc)})") from None
    # The reader sizes the columns by the largest index without allocating per column (a CSR matrix);
    # everything after it (column scaling, CSC, a dense row) would: bound the count here.
    bound = None if max_features is None else max(int(max_features), len(raw))
    if n_features is None and bound is not None and X.shape[1] > bound:
        raise DataFileError(f"{path}: feature index {X.shape[1]} is beyond the bound of {bound} features for a "
                            f"file of {len(raw)} bytes (max_features; pass a larger max_features, or n_features)")
    if X.shape[0] == 0:
        raise DataFileError(f"{path}: empty file (no samples)")
    if not np.isfinite(X.data).all() or not np.isfinite(y).all():
        raise DataFileError(f"{path}: non-finite values (nan, inf, or beyond ±1.8e308)")
    if np.all(y == np.round(y)) and np.all(np.abs(y) < 2.0**53):  # whole numbers that int64 holds exactly
        y = y.astype(np.int64)
    return X.tocsr(), y


def read_data_file(path, n_features=None, *, header=None, label_column=None, delimiter=None, drop_columns=None,
                   max_decompressed_bytes=MAX_DECOMPRESSED_BYTES, max_features=MAX_SVMLIGHT_FEATURES):
    """``(X, y)`` from a CSV or svmlight/libsvm file, gzipped or not.

    Parameters
    ----------
    path : str or path-like
        ``.csv`` (or any other name) for delimited text, ``.svm``,
        ``.libsvm`` or ``.svmlight`` for sparse svmlight data; either may end
        in ``.gz``.
    n_features : int or None, default=None
        The number of features a model expects: a CSV may then hold exactly
        these columns (``y`` is ``None``) or these plus the label.
    header : bool or None, default=None
        Whether the first CSV row is a header; ``None`` detects it (see the
        module).
    label_column : str, int or None, default=None
        The label column of a CSV: a header name or an index (negative from
        the end); the last column by default.
    delimiter : str or None, default=None
        The CSV delimiter (``"tab"`` for a tab); detected by default.
    drop_columns : str, list or None, default=None
        CSV columns to ignore, by name or index (a comma-separated string or a list).
    max_decompressed_bytes : int or None, default=MAX_DECOMPRESSED_BYTES
        The most bytes a ``.gz`` file may decompress to (128 MiB); ``None``
        for no bound.  Beyond it the file is refused (see the module's size
        limits).
    max_features : int or None, default=MAX_SVMLIGHT_FEATURES
        Without ``n_features``: the largest feature index an svmlight file
        may use is the larger of this (2²⁰) and the file's size in bytes;
        ``None`` for no bound.

    Returns
    -------
    X : ndarray of shape (N, d), or a CSR matrix for svmlight data
    y : ndarray of shape (N,) or None
        Integers if every label is one, else floats, else strings.

    Raises
    ------
    DataFileError
        One line naming the file (and line and column) for anything that
        cannot be read as asked.

    See Also
    --------
    load_benchmark : The bundled IDA data sets.

    Examples
    --------
    >>> import gzip, tempfile, pathlib
    >>> from linsep.datasets import read_data_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "points.csv.gz"
    >>> text = chr(10).join(["id;x1;x2;label", "7;0.5;1.0;a", "8;2.0;0.0;b"])
    >>> _ = path.write_bytes(gzip.compress(text.encode()))
    >>> X, y = read_data_file(path, label_column="label", drop_columns="id")
    >>> X.tolist(), y.tolist()
    ([[0.5, 1.0], [2.0, 0.0]], ['a', 'b'])
    """
    path = Path(path)
    if path.is_dir():
        raise DataFileError(f"{path}: is a directory, not a data file")
    if not path.exists():
        raise DataFileError(f"no such data file: {path}")
    if not path.is_file():
        raise DataFileError(f"{path}: not a regular file (a data file is expected)")
    suffix, gzipped = _format_of(path)
    if suffix in SVMLIGHT_SUFFIXES:
        given = [name for name, value in (("header", header), ("label column", label_column),
                                          ("delimiter", delimiter), ("dropped columns", drop_columns))
                 if value is not None]
        if given:
            raise DataFileError(f"{path}: an svmlight file has no {', '.join(given)} (options for CSV files)")
        raw = _read_raw(path, gzipped, max_decompressed_bytes)
        if gzipped:  # checked here: scikit-learn's reader lets a NUL or damaged stream through as odd errors
            _read_text(path, raw)
        return _read_svmlight(path, raw, n_features, max_features)
    text = _read_text(path, _read_raw(path, gzipped, max_decompressed_bytes))
    return _read_csv(path, text, n_features, header, label_column, delimiter, drop_columns)
