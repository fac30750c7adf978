"""``linsep``: the command-line tool, a thin layer over the public API.

::

    linsep bench [--protocol validation|test] [--datasets …] [--methods …] [--splits N]
                 [--quick] [--jobs J] [--out DIR] [--seed S] [--test ttest|wilcoxon]
    linsep fit ALGO DATA -o MODEL [--param name=value …]
    linsep predict MODEL DATA [-o FILE]
    linsep separable DATA        (exit status 0 with a verdict, 3 when undecided)
    linsep trace ALGO DATA [--param name=value …] [--init-weights w0,w1,…] [--b0 VALUE]
                 [--positive LABEL] [--class LABEL] [--steps K] [--every N] [--digits D] [--plot OUT.png]
    linsep list

DATA is a CSV file with a header row and the label in the last column, or an
svmlight/libsvm file (extension ``.svm``, ``.libsvm``, ``.svmlight``).

Model files never use pickle.  A model is one ``.npz`` archive (read with
``allow_pickle=False``) holding the fitted arrays plus a JSON document
``__meta__`` with the format name and version, the algorithm, its
parameters, the fitted non-array attributes and a SHA-256 checksum over the
metadata and every array, so a truncated, edited or foreign file is refused
with a one-line message (exit status 2) instead of being half-loaded.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np

FORMAT = "linsep-model"
FORMAT_VERSION = 1
SVMLIGHT_SUFFIXES = (".svm", ".libsvm", ".svmlight")
_META = "__meta__"
EXIT_UNDECIDED = 3
"""Exit status of ``linsep separable`` when no certificate passed its check (2 is for bad input)."""


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# ---------------------------------------------------------------- data files

def _parse_labels(raw):
    """Labels as ints if they all are, else floats, else strings."""
    for cast in (int, float):
        try:
            return np.array([cast(v) for v in raw])
        except ValueError:
            pass
    return np.array(raw, dtype=str)


def _read_csv(path, n_features=None):
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror if isinstance(exc, OSError) else 'not a text file'}") from None
    rows = [row for row in csv.reader(io.StringIO(text)) if row and any(cell.strip() for cell in row)]
    if not rows:
        raise CLIError(f"{path}: empty file (expected a header row and data rows)")
    header, body = rows[0], rows[1:]
    if not body:
        raise CLIError(f"{path}: no data rows after the header")
    width = len(header)
    labelled = n_features is None or width == n_features + 1
    if n_features is None and width < 2:
        raise CLIError(f"{path}: missing label column (need at least one feature column and the label last)")
    if n_features is not None and width not in (n_features, n_features + 1):
        raise CLIError(f"{path}: {width} columns, the model expects {n_features} features "
                       f"(optionally followed by the label)")
    n_x = width - 1 if labelled else width
    X = np.empty((len(body), n_x))
    for i, row in enumerate(body, start=2):
        if len(row) != width:
            raise CLIError(f"{path}, line {i}: {len(row)} fields, the header has {width} (ragged rows)")
        for j, cell in enumerate(row[:n_x]):
            try:
                X[i - 2, j] = float(cell)
            except ValueError:
                raise CLIError(f"{path}, line {i}, column {header[j]!r}: non-numeric value {cell!r}") from None
    if not np.isfinite(X).all():
        raise CLIError(f"{path}: non-finite feature values (nan or inf)")
    y = _parse_labels([row[-1].strip() for row in body]) if labelled else None
    return X, y


def _read_svmlight(path, n_features=None):
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), n_features=n_features)
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError, RuntimeError) as exc:
        raise CLIError(f"{path}: not a valid svmlight/libsvm file ({str(exc).splitlines()[0]})") from None
    if X.shape[0] == 0:
        raise CLIError(f"{path}: empty file (no samples)")
    if not np.isfinite(X.data).all() or not np.isfinite(y).all():
        raise CLIError(f"{path}: non-finite values (nan or inf)")
    y = y.astype(int) if np.all(y == np.round(y)) else y
    return X.tocsr(), y


def read_data(path, n_features=None):
    """``(X, y)`` from a CSV (header, label last) or svmlight file; ``y`` is None for an unlabelled CSV."""
    if not Path(path).is_file():
        raise CLIError(f"no such data file: {path}")
    if Path(path).suffix.lower() in SVMLIGHT_SUFFIXES:
        return _read_svmlight(path, n_features)
    return _read_csv(path, n_features)


# ---------------------------------------------------------------- model files

def _json_safe(value):
    """Return a JSON-encodable description of ``value`` or raise TypeError."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)


class _Encoder:
    """Fitted attributes → (JSON tree, {key: ndarray}); arrays of object dtype become typed lists."""

    def __init__(self):
        self.arrays = {}

    def encode(self, value, key):
        if isinstance(value, np.ndarray):
            if value.dtype.kind in "biufU":
                self.arrays[key] = value
                return {"__array__": key}
            if value.dtype.kind == "O":  # per-class strings or None: JSON, dtype restored on load
                return {"__object_array__": [self.encode(v, f"{key}.{i}") for i, v in enumerate(value.tolist())],
                        "shape": list(value.shape)}
            raise TypeError(f"array of dtype {value.dtype}")
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise TypeError("dict with non-string keys")
            return {"__dict__": {k: self.encode(v, f"{key}.{k}") for k, v in value.items()}}
        if isinstance(value, (list, tuple)):
            return {"__list__": [self.encode(v, f"{key}.{i}") for i, v in enumerate(value)]}
        return {"__value__": _json_safe(value)}


def _decode(node, arrays):
    if "__array__" in node:
        return arrays[node["__array__"]]
    if "__object_array__" in node:
        items = [_decode(v, arrays) for v in node["__object_array__"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(node["shape"])
    if "__dict__" in node:
        return {k: _decode(v, arrays) for k, v in node["__dict__"].items()}
    if "__list__" in node:
        return [_decode(v, arrays) for v in node["__list__"]]
    return node["__value__"]


def _checksum(meta, arrays):
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}|{a.dtype.str}|{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def save_model(estimator, algorithm, path):
    """Write a fitted estimator as arrays + JSON metadata (no pickle)."""
    from . import __version__

    try:
        params = {k: _json_safe(v) for k, v in estimator.get_params(deep=False).items()}
    except TypeError as exc:
        raise CLIError(f"cannot store parameter of type {exc} in a model file") from None
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
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "algorithm": algorithm, "params": params,
            "classes": enc.encode(estimator.classes_, "classes_") if hasattr(estimator, "classes_") else None,
            "attributes": attributes, "skipped_attributes": skipped, "linsep_version": __version__}
    meta["checksum"] = _checksum(meta, enc.arrays)
    blob = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    path = Path(path)
    with open(path, "wb") as handle:  # exact name: np.savez would append ".npz"
        np.savez(handle, **{_META: blob}, **enc.arrays)
    return path


def load_model(path):
    """Rebuild the estimator of a model file, refusing anything not written by :func:`save_model`."""
    from ._registry import make_classifier

    path = Path(path)
    if not path.is_file():
        raise CLIError(f"no such model file: {path}")
    if not zipfile.is_zipfile(path):
        raise CLIError(f"{path}: not a linsep model file (not an .npz archive; truncated or foreign)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if _META not in archive.files:
                raise CLIError(f"{path}: not a linsep model file (no metadata)")
            arrays = {k: archive[k] for k in archive.files}
        meta = json.loads(arrays.pop(_META).tobytes().decode())
    except CLIError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, UnicodeDecodeError, KeyError) as exc:
        raise CLIError(f"{path}: not a readable linsep model file ({type(exc).__name__}: "
                       f"{str(exc).splitlines()[0] if str(exc) else 'truncated or corrupt'})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CLIError(f"{path}: not a linsep model file (format {meta.get('format') if isinstance(meta, dict) else None!r})")
    if meta.get("version") != FORMAT_VERSION:
        raise CLIError(f"{path}: model format version {meta.get('version')!r}, this linsep reads version {FORMAT_VERSION}")
    stored = meta.pop("checksum", None)
    if stored != _checksum(meta, arrays):
        raise CLIError(f"{path}: checksum mismatch — the file was modified or is damaged")
    try:
        estimator = make_classifier(meta["algorithm"], **meta["params"])
        for name, node in meta["attributes"].items():
            setattr(estimator, name, _decode(node, arrays))
    except (ValueError, TypeError, KeyError) as exc:
        raise CLIError(f"{path}: cannot rebuild the model ({exc})") from None
    return estimator, meta


# ---------------------------------------------------------------- commands

def _parse_param(text):
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise CLIError(f"--param expects name=value, got {text!r}")
    if raw in ("None", "none", "null"):
        return name.strip(), None
    try:
        value = json.loads(raw.lower() if raw in ("True", "False") else raw)
    except ValueError:
        value = raw  # a bare string, e.g. loss=absolute
    return name.strip(), value


def _cmd_fit(args):
    from ._registry import make_classifier

    params = dict(_parse_param(p) for p in args.param)
    try:
        estimator = make_classifier(args.algorithm, **params)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc).splitlines()[0]) from None
    X, y = read_data(args.data)
    if y is None:  # pragma: no cover - read_data always labels when n_features is None
        raise CLIError(f"{args.data}: no label column")
    if hasattr(X, "toarray") and not estimator.__sklearn_tags__().input_tags.sparse:
        X = X.toarray()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(X, y)
        except (ValueError, TypeError) as exc:
            raise CLIError(f"cannot fit {args.algorithm} on {args.data}: {str(exc).splitlines()[0]}") from None
    save_model(estimator, args.algorithm, args.output)
    error = 100 * np.mean(estimator.predict(X) != y)
    status = getattr(estimator, "status_", None)
    status = f", status {status}" if isinstance(status, str) else ""
    print(f"{args.algorithm}: {X.shape[0]} samples, {X.shape[1]} features, {len(estimator.classes_)} classes"
          f"{status}, training error {error:.2f}% -> {args.output}")
    for w in {str(w.message).splitlines()[0] for w in caught}:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def _cmd_predict(args):
    estimator, _ = load_model(args.model)
    n_features = getattr(estimator, "n_features_in_", None)
    X, y = read_data(args.data, n_features=n_features)
    if hasattr(X, "toarray") and not estimator.__sklearn_tags__().input_tags.sparse:
        X = X.toarray()
    try:
        labels = estimator.predict(X)
    except (ValueError, TypeError, AttributeError) as exc:
        raise CLIError(f"cannot predict {args.data} with {args.model}: {str(exc).splitlines()[0]}") from None
    text = "".join(f"{label}\n" for label in labels.tolist())
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    if y is not None and y.dtype.kind == np.asarray(estimator.classes_).dtype.kind:
        print(f"error on the labels in {args.data}: {100 * np.mean(labels != y):.2f}%", file=sys.stderr)
    return 0


def _cmd_separable(args):
    from .separability import check_separability

    X, y = read_data(args.data)
    if np.unique(y).size < 2:
        raise CLIError(f"{args.data}: separability needs two classes, the labels have only {np.unique(y)[0]!r}")
    try:
        verdict = check_separability(X, y)
    except ValueError as exc:
        raise CLIError(f"{args.data}: {str(exc).splitlines()[0]}") from None
    print({True: "separable", False: "not separable", None: "undecided"}[verdict.separable])
    print(f"method: {verdict.method}")
    print(verdict.summary())
    return EXIT_UNDECIDED if verdict.separable is None else 0


def _numbers(text, option):
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise CLIError(f"{option} expects numbers separated by commas, got {text!r}") from None
    if not all(np.isfinite(values)):
        raise CLIError(f"{option} must be finite numbers")
    return values


def _cmd_trace(args):
    """Fit with a trace and print the lecture-style table of its iterations."""
    import inspect

    from . import inspection
    from ._registry import make_classifier

    params = dict(_parse_param(p) for p in args.param)
    params["record_history"] = args.every if args.every > 1 else True
    try:
        estimator = make_classifier(args.algorithm, **params)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc).splitlines()[0]) from None
    if "record_history" not in estimator.get_params():
        raise CLIError(f"{args.algorithm} records no trace (not an iterative algorithm)")
    X, y = read_data(args.data)
    if hasattr(X, "toarray") and not estimator.__sklearn_tags__().input_tags.sparse:
        X = X.toarray()
    if args.positive is not None:  # the lecture's class 1 as +1, whatever the label order
        if args.positive not in set(map(str, y.tolist())):
            raise CLIError(f"--positive {args.positive!r} is not a label of {args.data}")
        y = np.where(np.array(list(map(str, y.tolist()))) == args.positive, 1, -1)
    fit_args = set(inspect.signature(estimator.fit).parameters)
    fit_params = {}
    if args.init_weights is not None:
        if "coef_init" not in fit_args:
            raise CLIError(f"{args.algorithm} takes no starting weights (--init-weights)")
        a = _numbers(args.init_weights, "--init-weights")
        if len(a) != X.shape[1] + 1:
            raise CLIError(f"--init-weights needs {X.shape[1] + 1} numbers (w0 first, then one per feature), "
                           f"got {len(a)}")
        fit_params.update(intercept_init=a[0], coef_init=a[1:])
    if args.b0 is not None:
        b = _numbers(args.b0, "--b0")
        if "margin" in fit_args:
            fit_params["margin"] = b[0] if len(b) == 1 else b
        elif "b0" in estimator.get_params() and len(b) == 1:
            estimator.set_params(b0=b[0])
        else:
            raise CLIError(f"{args.algorithm} takes no margin vector "
                           f"({'one number only' if 'b0' in estimator.get_params() else 'no --b0'})")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(X, y, **fit_params)
        except (ValueError, TypeError) as exc:
            raise CLIError(f"cannot fit {args.algorithm} on {args.data}: {str(exc).splitlines()[0]}") from None
    classes = [str(c) for c in estimator.classes_.tolist()]
    problem = 0
    if len(classes) > 2:  # one-vs-rest: one trace per class
        label = classes[0] if args.one_vs_rest is None else args.one_vs_rest
        if label not in classes:
            raise CLIError(f"--class {label!r} is not a label of {args.data} ({', '.join(classes)})")
        problem = classes.index(label)
    elif args.one_vs_rest is not None:
        raise CLIError("--class picks a one-vs-rest problem; the data have two classes")
    table = inspection.trace_table(estimator, problem=problem, precision=args.digits)
    shown = table if args.steps is None or args.steps >= len(table) else table.head(args.steps)
    print(shown)
    if len(shown) < len(table):
        last = str(table.head(len(table))).splitlines()[-1]
        print(f"… {len(table) - len(shown)} more rows; the last:\n{last}")
    n_iter, status = np.ravel(estimator.n_iter_)[problem], getattr(estimator, "status_", None)
    status = f", status {np.ravel(status)[problem]}" if status is not None else ""
    print(f"{args.algorithm}: n_iter_ = {n_iter}{status}"
          + (f" (class {classes[problem]!r} against the rest)" if len(classes) > 2 else ""))
    for w in {str(w.message).splitlines()[0] for w in caught}:
        print(f"warning: {w}", file=sys.stderr)
    if args.plot:
        X_dense = X.toarray() if hasattr(X, "toarray") else X
        try:
            drawn = inspection.plot_trace(estimator, X_dense, y,
                                          class_index=problem if len(estimator.classes_) > 2 else None)
        except (ValueError, ImportError) as exc:
            raise CLIError(f"--plot: {str(exc).splitlines()[0]}") from None
        drawn.figure_.savefig(args.plot)
        print(f"plot -> {args.plot}")
    return 0


def _cmd_list(args):
    from ._registry import available_classifiers

    names = available_classifiers()
    width = max(map(len, names))
    for name, summary in names.items():
        print(f"{name:<{width}}  {summary}")
    return 0


def _cmd_bench(args):
    from .experiments import run_benchmark
    from .experiments.stats import TESTS

    try:
        report = run_benchmark(datasets=args.datasets, methods=args.methods, protocol=args.protocol,
                               n_splits=args.splits, quick=args.quick, jobs=args.jobs, out=args.out,
                               seed=args.seed, test=args.test, progress=not args.no_progress)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    print(report.markdown)
    print(f"significance: {TESTS[args.test]}, alpha = 5%")
    print(f"{report.n_computed} runs computed, {report.n_cached} reused from the cache in {report.out / 'cache'}")
    for failure in report.failures[:5]:
        print(f"FAILED {failure['dataset']}/{failure['method']}/split {failure['split']}: {failure['error']}")
    print("wrote:")
    for path in report.files:
        print(f"  {path}")
    return 1 if report.failures else 0


def build_parser():
    parser = argparse.ArgumentParser(prog="linsep", description="Classical linear-discriminant learners.")
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="reproduce Lauer & Bloch (2006), Tables 1-3 and Figures 1-2")
    bench.add_argument("--protocol", choices=("validation", "test"), default="validation",
                       help="validation: Table 1 (§3.2); test: Table 3 (§3.3, optimistic)")
    bench.add_argument("--datasets", nargs="+", metavar="NAME", help="default: all nine")
    bench.add_argument("--methods", nargs="+", metavar="NAME",
                       help="hk hkes hkesa mhks mhka lsvm svm linear_svc or any `linsep list` name")
    bench.add_argument("--splits", type=int, metavar="N", help="realizations per data set (default 100/20)")
    bench.add_argument("--quick", action="store_true",
                       help="10 splits, all nine data sets, LinearSVC instead of the slow libsvm SVC")
    bench.add_argument("--jobs", type=int, default=1, metavar="J", help="parallel workers (-1: all cores)")
    bench.add_argument("--out", default="results", metavar="DIR", help="output folder (default: results)")
    bench.add_argument("--seed", type=int, default=0, help="seed of the splits (default 0)")
    bench.add_argument("--test", choices=("ttest", "wilcoxon"), default="ttest",
                       help="paired test for the asterisks (default: paired t-test)")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    bench.set_defaults(func=_cmd_bench)

    fit = sub.add_parser("fit", help="fit an algorithm on a data file and save the model")
    fit.add_argument("algorithm", metavar="ALGO", help="a name from `linsep list`")
    fit.add_argument("data", metavar="DATA", help="CSV (header, label last) or .svm/.libsvm/.svmlight")
    fit.add_argument("-o", "--output", required=True, metavar="MODEL", help="model file to write")
    fit.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="estimator parameter (JSON value or bare string), repeatable")
    fit.set_defaults(func=_cmd_fit)

    predict = sub.add_parser("predict", help="predict the labels of a data file with a saved model")
    predict.add_argument("model", metavar="MODEL")
    predict.add_argument("data", metavar="DATA", help="same format as for fit; the label column is optional in CSV")
    predict.add_argument("-o", "--output", metavar="FILE", help="write the labels here (default: stdout)")
    predict.set_defaults(func=_cmd_predict)

    separable = sub.add_parser("separable", help="decide linear separability, with a checked certificate")
    separable.add_argument("data", metavar="DATA")
    separable.set_defaults(func=_cmd_separable)

    trace = sub.add_parser("trace", help="fit with a trace and print the table of its iterations (k, a(k), b(k), e(k)…)")
    trace.add_argument("algorithm", metavar="ALGO", help="an iterative algorithm from `linsep list`")
    trace.add_argument("data", metavar="DATA", help="CSV (header, label last) or .svm/.libsvm/.svmlight")
    trace.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                       help="estimator parameter (JSON value or bare string), repeatable")
    trace.add_argument("--init-weights", metavar="W0,W1,…",
                       help="starting weights a(1) in the lecture's order, bias first (Ho-Kashyap family)")
    trace.add_argument("--b0", metavar="VALUE",
                       help="starting margin b0 (Ho-Kashyap family), or the margin vector b (mse, widrow_hoff, "
                            "lms: one number or one per sample, comma-separated)")
    trace.add_argument("--positive", metavar="LABEL", help="the label taken as the positive class (+1)")
    trace.add_argument("--class", dest="one_vs_rest", metavar="LABEL",
                       help="more than two classes: the one-vs-rest problem of this class (default: the first)")
    trace.add_argument("--steps", type=int, metavar="K", help="print only the first K rows (and the last)")
    trace.add_argument("--every", type=int, default=1, metavar="N", help="record every N-th iteration")
    trace.add_argument("--digits", type=int, default=4, metavar="D", help="significant digits (default 4)")
    trace.add_argument("--plot", metavar="OUT.png", help="also draw the trace (needs matplotlib)")
    trace.set_defaults(func=_cmd_trace)

    lst = sub.add_parser("list", help="the registered algorithms")
    lst.set_defaults(func=_cmd_list)
    return parser


def main(argv=None):
    """Entry point of the ``linsep`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CLIError as exc:
        print(f"linsep {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
