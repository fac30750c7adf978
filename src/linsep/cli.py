"""``linsep``: the command-line tool, a thin layer over the public API.

::

    linsep bench [--protocol validation|test] [--datasets …] [--methods …] [--splits N]
                 [--quick] [--jobs J] [--scheduler ADDRESS] [--out DIR] [--seed S] [--test ttest|wilcoxon]
    linsep fit ALGO DATA -o MODEL [--param name=value …]
    linsep predict MODEL DATA [-o FILE]
    linsep separable DATA [--pairwise] [--json]   (exit status 0 with verdicts, 3 when one is undecided)
    linsep trace ALGO DATA [--param name=value …] [--init-weights w0,w1,…] [--b0 VALUE]
                 [--positive LABEL] [--class LABEL] [--steps K] [--every N] [--digits D] [--plot OUT.png]
                 [--animate OUT.gif|OUT.mp4] [--frames N]
    linsep list
    linsep playground [--port N] [--host 127.0.0.1] [--no-browser]   (the playground extra: pip install -e '.[playground]')
    linsep warm-up [--bench] [--threads/--no-threads] [--no-progress] [--clean]
    linsep --version

``python -m linsep`` is the same tool.

DATA is a CSV file (delimiter and header detected; the label in the last
column unless ``--label-column`` says otherwise; ``--header``/``--no-header``,
``--delimiter``, ``--drop-columns``) or an svmlight/libsvm file (extension
``.svm``, ``.libsvm``, ``.svmlight``), either possibly gzipped (``.gz``); the
rules are those of :func:`linsep.datasets.read_data_file`.

Model files never use pickle (``linsep.persistence.model_file``): one ``.npz``
archive of the fitted arrays plus JSON metadata with a SHA-256 checksum,
read defensively and checked attribute by attribute, so a truncated, edited
or foreign file is refused instead of being half-loaded.  ``linsep fit``
writes what :func:`linsep.save` writes for one estimator; ``linsep
predict`` reads everything :func:`linsep.load` reads, Pipelines included.

Errors
------
A user error — bad arguments, a missing or malformed data or model file, an
output path that cannot be written, data a solver cannot handle — prints one
line ``linsep COMMAND: error: …`` on stderr and exits with status 2.
:func:`main` maps the exceptions that mean bad input for every subcommand
(:data:`USER_ERRORS`); any other exception is a bug and keeps its traceback.
Set ``LINSEP_DEBUG=1`` to see the traceback of a mapped error too.  Warnings
(e.g. non-convergence) are printed once each, one line, after the output.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from linsep import inspection, separability
from linsep._core.plan import forced
from linsep._version import version
from linsep.estimators.registry import available_classifiers, make_classifier
from linsep.datasets import DataFileError, read_data_file
from linsep.experiments import run_benchmark
from linsep.experiments.provenance import command_line
from linsep.experiments.stats import TESTS
from linsep.persistence.model_file import (FORMAT, FORMAT_VERSION, ModelFileError, first_line, check_fitted_model, load_model,
                          save_model, write_file)

__all__ = ["CLIError", "FORMAT", "FORMAT_VERSION", "USER_ERRORS", "build_parser", "load_model", "main",
           "read_data", "save_model"]

EXIT_UNDECIDED = 3
"""Exit status of ``linsep separable`` when no certificate passed its check (2 is for bad input)."""


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# ---------------------------------------------------------------- files

def _output_file(path):
    """Refuse, before any work, an output path that cannot be a file: a directory, a device node or pipe, or
    one in a missing folder (the write itself, :func:`linsep.persistence.model_file.write_file`, refuses them again)."""
    path = Path(path)
    if path.is_dir():
        raise CLIError(f"cannot write {path}: is a directory")
    if path.exists() and not path.is_file():
        raise CLIError(f"cannot write {path}: not a regular file (a device, pipe or socket); give the path of a file")
    if not path.parent.is_dir():
        raise CLIError(f"cannot write {path}: no such directory {path.parent}")
    return path


def read_data(path, n_features=None, **options):
    """``(X, y)`` of a data file (:func:`linsep.datasets.read_data_file`); ``y`` is None for features only.

    ``options`` are ``header``, ``label_column``, ``delimiter`` and
    ``drop_columns``; a file that cannot be read is a :class:`CLIError`.
    """
    try:
        return read_data_file(path, n_features, **options)
    except DataFileError as exc:
        raise CLIError(str(exc)) from None


def _data_options(args):
    """The data-file options of a subcommand's arguments (see :func:`_add_data_options`)."""
    return {"header": args.header, "label_column": args.label_column, "delimiter": args.delimiter,
            "drop_columns": args.drop_columns}


def _add_data_options(parser):
    group = parser.add_argument_group("data files (CSV, optionally .gz; svmlight .svm/.libsvm/.svmlight[.gz])")
    header = group.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_const", const=True, default=None,
                        help="the first row is a header (default: detected)")
    header.add_argument("--no-header", dest="header", action="store_const", const=False,
                        help="the first row is data")
    group.add_argument("--label-column", metavar="NAME|INDEX",
                       help="the label column by header name or index (0 first, -1 last; default: last)")
    group.add_argument("--delimiter", metavar="CHAR", help="field delimiter ('tab' for a tab; default: detected)")
    group.add_argument("--drop-columns", metavar="COLS", help="columns to ignore, names or indices, comma-separated")


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
    params = dict(_parse_param(p) for p in args.param)
    try:
        estimator = make_classifier(args.algorithm, **params)
    except (ValueError, TypeError) as exc:  # unknown algorithm or parameter name
        raise CLIError(first_line(exc)) from None
    output = _output_file(args.output)
    X, y = read_data(args.data, **_data_options(args))
    if y is None:  # pragma: no cover - read_data always labels when n_features is None
        raise CLIError(f"{args.data}: no label column")
    try:
        estimator.fit(X, y)
    except (ValueError, FloatingPointError, OverflowError) as exc:
        raise CLIError(f"cannot fit {args.algorithm} on {args.data}: {first_line(exc)}") from None
    try:
        check_fitted_model(estimator, estimator.get_params(deep=False))
    except ModelFileError as exc:  # e.g. nan weights after an overflow the solver did not detect
        raise CLIError(f"cannot fit {args.algorithm} on {args.data}: the fit gave an unusable model ({exc}); "
                       f"the data may be too extreme in scale for this algorithm") from None
    save_model(estimator, args.algorithm, output)
    with np.errstate(all="ignore"):  # scores beyond float range still have a sign
        error = 100 * np.mean(estimator.predict(X) != y)
    status = getattr(estimator, "status_", None)
    status = f", status {status}" if isinstance(status, str) else ""
    print(f"{args.algorithm}: {X.shape[0]} samples, {X.shape[1]} features, {len(estimator.classes_)} classes"
          f"{status}, training error {error:.2f}% -> {output}")
    return 0


def _cmd_predict(args):
    output = _output_file(args.output) if args.output else None
    estimator, _ = load_model(args.model)
    X, y = read_data(args.data, n_features=estimator.n_features_in_, **_data_options(args))
    try:
        with np.errstate(all="ignore"):  # overflow is reported below, in one line
            scores = estimator.decision_function(X)
            labels = estimator.predict(X)
    except (ValueError, FloatingPointError, OverflowError) as exc:
        raise CLIError(f"cannot predict {args.data} with {args.model}: {first_line(exc)}") from None
    bad = ~np.isfinite(scores).reshape(X.shape[0], -1).all(axis=1)
    if bad.any():
        raise CLIError(f"cannot predict {args.data} with {args.model}: the decision values of {bad.sum()} "
                       f"sample(s) overflow (the first is sample {np.flatnonzero(bad)[0] + 1}); "
                       f"the data are far outside the model's scale")
    text = "".join(f"{_label_line(label)}\n" for label in labels.tolist())
    if output is not None:
        write_file(output, text.encode())
    else:
        sys.stdout.write(text)
    if y is not None and y.dtype.kind == np.asarray(estimator.classes_).dtype.kind:
        print(f"error on the labels in {args.data}: {100 * np.mean(labels != y):.2f}%", file=sys.stderr)
    return 0


def _label_line(label):
    """A predicted label as one output line: a label holding a line break or other control character
    (possible in a CSV's quoted field) is written as a JSON string, so one sample stays one line."""
    text = str(label)
    if any(ch < " " or ch == "\x7f" or ch in "\u2028\u2029\x85" for ch in text):
        return json.dumps(text)
    return text


def _cmd_separable(args):
    X, y = read_data(args.data, **_data_options(args))
    if np.unique(y).size < 2:
        raise CLIError(f"{args.data}: separability needs two classes, the labels have only {np.unique(y)[0].item()!r}")
    try:
        verdict = separability.check_separability(X, y, **({"pairwise": True} if args.pairwise else {}))
    except (ValueError, FloatingPointError) as exc:
        raise CLIError(f"{args.data}: {first_line(exc)}") from None
    if args.json:
        print(json.dumps(verdict.to_dict(), indent=1))
        return EXIT_UNDECIDED if verdict.separable is None else 0
    print({True: "separable", False: "not separable", None: "undecided"}[verdict.separable]
          + ("" if hasattr(verdict, "method") else " (every class against the rest)"))
    if hasattr(verdict, "method"):  # two classes
        print(f"method: {verdict.method}")
    print(verdict.summary())
    undecided = verdict.separable is None or any(v.separable is None for _, v in getattr(verdict, "verdicts", list)())
    return EXIT_UNDECIDED if undecided else 0


def _numbers(text, option):
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise CLIError(f"{option} expects numbers separated by commas, got {text!r}") from None
    if not all(np.isfinite(values)):
        raise CLIError(f"{option} must be finite numbers")
    return values


def default_positive_label(y):
    """The class ``linsep trace`` takes as positive (+1) without ``--positive``: the label ``1`` if present, else the first.

    ``1`` is the positive class of ``{-1, 1}`` and ``{0, 1}`` labels and the
    lecture's class 1 (its worked examples label the classes 1 and 2 and take
    class 1 as :math:`\\omega_1`, the positive side); without a label ``1``,
    the first label in sorted order.
    """
    labels = np.unique(y)
    for label in labels:
        try:
            if float(label) == 1.0:
                return label
        except (TypeError, ValueError):
            break
    return labels[0]


def _cmd_trace(args):
    """Fit with a trace and print the lecture-style table of its iterations."""
    params = dict(_parse_param(p) for p in args.param)
    plot_path = _plot_file(args.plot) if args.plot else None
    params["record_history"] = args.every if args.every > 1 else "updates"  # single-sample rules: per update
    try:
        estimator = make_classifier(args.algorithm, **params)
    except (ValueError, TypeError) as exc:
        raise CLIError(first_line(exc)) from None
    if "record_history" not in estimator.get_params():
        raise CLIError(f"{args.algorithm} records no trace (not an iterative algorithm)")
    X, y = read_data(args.data, **_data_options(args))
    labels = y  # the user's labels: the plot's legend shows them, whatever the fit saw
    animate_path = _animation_file(args.animate) if args.animate else None
    positive = None
    if args.positive is not None:  # the lecture's class 1 as +1, whatever the label order
        try:
            positive = inspection.resolve_label(y, args.positive)
        except ValueError as exc:
            raise CLIError(f"--positive: {exc} ({args.data})") from None
    elif np.unique(y).size == 2:
        positive = default_positive_label(y)
    if positive is not None:
        if "pos_label" in estimator.get_params():  # the estimator runs (and traces) with it as +1
            estimator.set_params(pos_label=positive)
        else:
            y = inspection.positive_class_labels(y, positive)
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
            raise CLIError(f"cannot fit {args.algorithm} on {args.data}: {first_line(exc)}") from None
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
    # an update-level trace numbers its rows by update, n_iter_ counts passes: say both
    counted = (f"{n_iter} passes, {int(table.to_records()[-1]['k'])} updates (k counts updates)"
               if "pass" in table.columns else f"{n_iter}")
    print(f"{args.algorithm}: n_iter_ = {counted}{status}"
          + (f" (class {classes[problem]!r} against the rest)" if len(classes) > 2 else ""))
    if positive is not None:
        print(f"positive class (+1): {positive}" + ("" if args.positive is not None else
                                                   " (the default; --positive LABEL picks another)"))
    for w in {first_line(w.message) for w in caught}:
        print(f"warning: {w}", file=sys.stderr)
    if plot_path is not None:
        if X.shape[1] != 2:  # before densifying anything: the plot draws two features
            raise CLIError(f"--plot: these plots draw two-dimensional data; X has shape {X.shape}")
        X_dense = X.toarray() if hasattr(X, "toarray") else X  # two columns
        plot_trace = forced("plot_trace", inspection.plot_trace)  # tests: a wrapper, in a forced_plan block
        try:
            drawn = plot_trace(estimator, X_dense, labels, class_index=problem if len(estimator.classes_) > 2 else None)
        except (ValueError, ImportError) as exc:
            raise CLIError(f"--plot: {str(exc).splitlines()[0]}") from None
        _save_figure(drawn.figure_, plot_path)
        print(f"plot -> {plot_path}")
    if animate_path is not None:
        if X.shape[1] != 2:
            raise CLIError(f"--animate: animations draw two-dimensional data; X has shape {X.shape}")
        X_dense = X.toarray() if hasattr(X, "toarray") else X
        try:
            anim = inspection.animate_trace(estimator, X_dense, labels, max_frames=args.frames,
                                            class_index=problem if len(estimator.classes_) > 2 else None)
            anim.write(animate_path)
        except (ValueError, ImportError) as exc:
            raise CLIError(f"--animate: {str(exc).splitlines()[0]}") from None
        print(f"animation -> {animate_path} ({len(anim.rows_)} frames, k = "
              f"{anim.iterations_[0]} … {anim.iterations_[-1]})")
    return 0


def _animation_file(text):
    """The file ``--animate`` writes: ``.gif`` (Pillow) or ``.mp4`` (ffmpeg); ``.gif`` added to a bare name."""
    path = _output_file(text)
    path = path if path.suffix else path.with_name(path.name + ".gif")
    if path.suffix.lower() not in (".gif", ".mp4"):
        raise CLIError(f"--animate {path}: write a .gif (Pillow) or an .mp4 (ffmpeg), not {path.suffix!r}")
    if path.suffix.lower() == ".mp4":  # before any work: the writer must be there
        try:
            from matplotlib.animation import writers
        except ImportError:
            raise CLIError("--animate needs matplotlib: pip install matplotlib") from None
        if not writers.is_available("ffmpeg"):
            raise CLIError(f"--animate {path}: MP4 needs ffmpeg, which is not installed; write a .gif instead")
    return path


def _plot_file(text):
    """The file ``--plot`` writes: refused before any work if it cannot be one; ``.png`` added to a bare name."""
    path = _output_file(text)
    return path if path.suffix else path.with_name(path.name + ".png")


def _save_figure(figure, path):
    """Write ``figure`` to ``path`` in the format its extension names, and make sure the file is there."""
    formats = figure.canvas.get_supported_filetypes()
    if path.suffix[1:].lower() not in formats:
        raise CLIError(f"--plot {path}: unknown image format {path.suffix!r} "
                       f"(one of {', '.join('.' + f for f in sorted(formats))})")
    figure.savefig(path)
    if not path.is_file():  # pragma: no cover - a backend that wrote elsewhere
        raise CLIError(f"--plot {path}: no file was written")


def _cmd_list(args):
    names = available_classifiers()
    width = max(map(len, names))
    for name, summary in names.items():
        print(f"{name:<{width}}  {summary}")
    return 0


def _cmd_playground(args):
    from linsep.playground.server import run_from_arguments  # Bokeh only here: an optional extra

    return run_from_arguments(args)


def _positive_int(text):
    """An option's value as an int of at least one (argparse reports anything else as a usage error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _cmd_warm_up(args):
    import numba

    from linsep._core.numba_cache import clear_cache
    from linsep.warmup import warm_up

    cache = numba.config.CACHE_DIR or "beside linsep's modules (__pycache__)"
    if args.clean:
        removed = clear_cache()
        print(f"linsep warm-up: removed {len(removed)} files of linsep's compiled code (numba's disk cache: {cache})")
    seconds = warm_up("bench" if args.bench else "all", progress=not args.no_progress, parallel=args.threads,
                      jobs=args.jobs)
    print(f"linsep warm-up: compiled code ready in {seconds:.1f} s (numba's disk cache: {cache})")
    return 0


def _cmd_bench(args):
    try:
        report = run_benchmark(datasets=args.datasets, methods=args.methods, protocol=args.protocol,
                               n_splits=args.splits, quick=args.quick, jobs=args.jobs, out=args.out,
                               seed=args.seed, test=args.test, progress=not args.no_progress,
                               scheduler=args.scheduler, command=command_line(args.argv))
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


def _splits_help():
    """``--splits``'s help, from the data sets' realization counts (the protocol's defaults)."""
    from linsep.datasets import BENCHMARKS
    from linsep.experiments.runner import QUICK_SPLITS

    by_count = {}
    for name, spec in BENCHMARKS.items():
        by_count.setdefault(spec.n_realizations, []).append(name)
    common = max(by_count, key=lambda n: len(by_count[n]))
    rare = "; ".join(f"{n} for {' and '.join(sorted(names))}" for n, names in sorted(by_count.items()) if n != common)
    return (f"realizations per data set (default: {rare}, {common} for the other {len(by_count[common])} data sets; "
            f"--quick: {QUICK_SPLITS}); a data set never gets more than its default")


class _Parser(argparse.ArgumentParser):
    """argparse with the tool's error convention: one line, exit status 2 (the usage is on ``--help``)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _VersionAction(argparse.Action):
    """``--version``: the version is asked for only when the flag is given (in a checkout it runs git)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"linsep {version()}\n")
        parser.exit()


def build_parser():
    parser = _Parser(prog="linsep", description="Classical linear-discriminant learners.")
    parser.add_argument("--version", action=_VersionAction, help="print linsep's version (with the git commit "
                        "when run from a checkout) and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="reproduce Lauer & Bloch (2006), Tables 1-3 and Figures 1-2")
    bench.add_argument("--protocol", choices=("validation", "test"), default="validation",
                       help="validation: Table 1 (§3.2); test: Table 3 (§3.3, optimistic)")
    bench.add_argument("--datasets", nargs="+", metavar="NAME", help="default: all nine")
    bench.add_argument("--methods", nargs="+", metavar="NAME",
                       help="hk hkes hkesa mhks mhka lsvm svm linear_svc or any `linsep list` name")
    bench.add_argument("--splits", type=int, metavar="N", help=_splits_help())
    bench.add_argument("--quick", action="store_true",
                       help="10 splits, all nine data sets, LinearSVC instead of the slow libsvm SVC")
    bench.add_argument("--jobs", type=int, default=1, metavar="J", help="parallel workers (-1: all cores)")
    bench.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the splits on the Dask cluster at ADDRESS (needs the dask extra)")
    bench.add_argument("--out", default="results", metavar="DIR", help="output folder (default: results)")
    bench.add_argument("--seed", type=int, default=0, help="seed of the splits (default 0)")
    bench.add_argument("--test", choices=("ttest", "wilcoxon"), default="ttest",
                       help="paired test for the asterisks (default: paired t-test)")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    bench.set_defaults(func=_cmd_bench)

    fit = sub.add_parser("fit", help="fit an algorithm on a data file and save the model")
    fit.add_argument("algorithm", metavar="ALGO", help="a name from `linsep list`")
    fit.add_argument("data", metavar="DATA", help="CSV (label last by default) or .svm/.libsvm/.svmlight, or .gz")
    fit.add_argument("-o", "--output", required=True, metavar="MODEL", help="model file to write")
    fit.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="estimator parameter (JSON value or bare string), repeatable")
    _add_data_options(fit)
    fit.set_defaults(func=_cmd_fit)

    predict = sub.add_parser("predict", help="predict the labels of a data file with a saved model")
    predict.add_argument("model", metavar="MODEL")
    predict.add_argument("data", metavar="DATA", help="same format as for fit; the label column is optional in CSV")
    predict.add_argument("-o", "--output", metavar="FILE", help="write the labels here (default: stdout)")
    _add_data_options(predict)
    predict.set_defaults(func=_cmd_predict)

    separable = sub.add_parser("separable", help="decide linear separability, with a checked certificate")
    separable.add_argument("data", metavar="DATA")
    separable.add_argument("--pairwise", action="store_true",
                           help="more than two classes: also decide every pair of classes")
    separable.add_argument("--json", action="store_true",
                           help="print the verdicts and certificates as JSON (rows: 0-based indices of data rows)")
    _add_data_options(separable)
    separable.set_defaults(func=_cmd_separable)

    trace = sub.add_parser("trace", help="fit with a trace and print the table of its iterations (k, a(k), b(k), e(k)…)")
    trace.add_argument("algorithm", metavar="ALGO", help="an iterative algorithm from `linsep list`")
    trace.add_argument("data", metavar="DATA", help="CSV (label last by default) or .svm/.libsvm/.svmlight, or .gz")
    trace.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                       help="estimator parameter (JSON value or bare string), repeatable")
    trace.add_argument("--init-weights", metavar="W0,W1,…",
                       help="starting weights a(1) in the lecture's order, bias first (Ho-Kashyap family)")
    trace.add_argument("--b0", metavar="VALUE",
                       help="starting margin b0 (Ho-Kashyap family), or the margin vector b (mse, widrow_hoff, "
                            "lms: one number or one per sample, comma-separated)")
    trace.add_argument("--positive", metavar="LABEL",
                       help="the label taken as the positive class (+1); default: the label 1 if the data have "
                            "one (the lecture's class 1; +1 of -1/+1 labels), else the first label; the output "
                            "says which")
    trace.add_argument("--class", dest="one_vs_rest", metavar="LABEL",
                       help="more than two classes: the one-vs-rest problem of this class (default: the first)")
    trace.add_argument("--steps", type=int, metavar="K", help="print only the first K rows (and the last)")
    trace.add_argument("--every", type=int, default=1, metavar="N", help="record every N-th iteration")
    trace.add_argument("--digits", type=int, default=4, metavar="D", help="significant digits (default 4)")
    trace.add_argument("--plot", metavar="OUT.png",
                       help="also draw the trace into this file (needs matplotlib; .png is added to a name "
                            "without an extension)")
    trace.add_argument("--animate", metavar="OUT.gif",
                       help="also write an animation of the iterations: .gif (Pillow) or .mp4 (needs ffmpeg); "
                            "the hyperplane or kernel regions at up to --frames iterations")
    trace.add_argument("--frames", type=int, default=40, metavar="N",
                       help="most frames of --animate (evenly spaced rows, first and last kept; default 40)")
    _add_data_options(trace)
    trace.set_defaults(func=_cmd_trace)

    lst = sub.add_parser("list", help="the registered algorithms")
    lst.set_defaults(func=_cmd_list)

    play = sub.add_parser("playground", help="points, methods and their iterations in a local web page "
                          "(the playground extra)")
    play.add_argument("--port", type=int, default=5006, help="port to serve on (0: a free one; default 5006)")
    play.add_argument("--host", default="127.0.0.1", help="loopback address to serve on (default 127.0.0.1)")
    play.add_argument("--no-browser", dest="browser", action="store_false", help="do not open a web browser")
    play.set_defaults(func=_cmd_playground)

    warm = sub.add_parser("warm-up", help="compile linsep's loops ahead of time (once per machine)")
    warm.add_argument("--threads", action=argparse.BooleanOptionalAction, default=None,
                      help="also compile the passes split over threads (default: when numba has more than one)")
    warm.add_argument("--bench", action="store_true",
                      help="only what `linsep bench` runs (dense float64 data, one thread per worker)")
    warm.add_argument("--jobs", type=_positive_int, default=1, metavar="N",
                      help="compile in N processes side by side (numba compiles on one core each; default 1)")
    warm.add_argument("--no-progress", action="store_true", help="no progress bar")
    warm.add_argument("--clean", action="store_true",
                      help="first delete linsep's compiled code from numba's disk cache, then compile it anew")
    warm.set_defaults(func=_cmd_warm_up)
    return parser


USER_ERRORS = (CLIError, ValueError, FloatingPointError, OverflowError, OSError, MemoryError)
"""Exceptions that mean bad input or an impossible request, whatever the subcommand.

``ValueError`` covers scikit-learn's input and parameter validation
(``InvalidParameterError``), ``LinAlgError`` and :class:`ModelFileError`;
``FloatingPointError`` / ``OverflowError`` data beyond what a solver can
represent; ``OSError`` files that cannot be read or written;
``MemoryError`` data too large for this machine.  Anything else
(``TypeError``, ``AttributeError``, ``KeyError`` …) is a bug in linsep and
keeps its traceback.
"""


def _error_line(exc):
    """One line describing a user error."""
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    elif isinstance(exc, (FloatingPointError, OverflowError)):
        text = f"numerical overflow ({first_line(exc)})"
    elif isinstance(exc, MemoryError):
        text = "not enough memory for this data"
    else:
        text = str(exc)
    text = " ".join(text.split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:499] + "…"  # e.g. a long foreign value quoted in a message


def _reader_went_away():
    """Exit quietly (status 0) when the reader of stdout closed it, as ``linsep list | head -1`` does.

    The rest of the output has nowhere to go; stdout is pointed at the null
    device so that the interpreter's last flush does not fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (captured): nothing left to flush
        pass
    return 0


@functools.lru_cache(maxsize=None)
def _parser():
    # Built once per process: building it (six subcommands, and argparse's gettext look-ups for every
    # sub-parser) took about as long as a small fit, for every call of main.  Parsing does not change it.
    return build_parser()


def main(argv=None):
    """Entry point of the ``linsep`` console script; returns the exit status.

    Every subcommand runs under the same handling: a reader that closes
    stdout early ends the command quietly with status 0; exceptions of
    :data:`USER_ERRORS` become one line on stderr and exit status 2 (with
    ``LINSEP_DEBUG=1`` they are raised instead); warnings are collected and
    printed once each, one line, after a successful command.

    Tests force paths below it in a ``linsep._core.plan.forced_plan`` block:
    ``separability=`` (the solvers of ``linsep separable``'s ``check_separability``)
    and ``plot_trace=`` (what ``linsep trace --plot`` draws with).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)
    args.argv = argv  # the command line as given: linsep bench records it with its results
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            status = args.func(args)
            sys.stdout.flush()  # here, not at exit: a closed pipe is seen while it can be handled
        except BrokenPipeError:
            return _reader_went_away()
        except USER_ERRORS as exc:
            if os.environ.get("LINSEP_DEBUG"):
                raise
            print(f"linsep {args.command}: error: {_error_line(exc)}", file=sys.stderr)
            return 2
    for message in dict.fromkeys(first_line(w.message) for w in caught):
        print(f"warning: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
