"""Which method to use: test error and fit time of linsep's classifiers side by side, from data to the README.

Run: ``PYTHONPATH=src python benchmarks/bench_method_choice.py [RESULTS] [--large 200000 50] [--seeds 3]``.

Three parts, each a Markdown table (the README's "Which method" section is written from them):

1. **The paper's nine IDA data sets**, read from a results folder of ``linsep bench`` (``RESULTS``, e.g.
   ``results/quick`` of ``linsep bench --quick``): every method as the paper tunes it (a grid of 20 values of
   ``C`` for MHKS, MHKA, LSVM and LinearSVC; a validation split for HKES/HKESA; linsep's own cross-validation
   for the ``*_cv`` methods).  Per method: the mean over the sets of the mean test error, the mean rank among
   the methods, on how many sets it is the best or not significantly worse (the run's paired test), and the
   mean fitting time per split, tuning included.
2. **Each method with its defaults** in ``make_pipeline(StandardScaler(), estimator)`` — what a user who
   tunes nothing gets — on scikit-learn's breast cancer data (2 × stratified 5-fold) and on four laws that
   the IDA sets do not cover: two Gaussian classes with a shared random covariance (``gauss``), heavy-tailed
   Student-t features with df = 2 (``heavy-tail``), 9:1 classes with 10 % of the labels flipped
   (``imbalanced-noisy``), 50 features of which 5 are informative and 20 redundant (``redundant``), and
   ``make_classification`` with 8 features and 10 % flipped labels from only 300 training rows (``few-noisy``);
   1 000 training rows for the others, 20 000 test rows, ``--seeds`` draws each.  Test error in %, mean over the draws, and the
   mean fit time.
3. **One large set** (``--large N D``, default 200 000 × 50, the ``gauss`` law, 50 000 test rows): each method
   with its defaults, fitted once in a fresh process: test error, fit time, and the peak resident memory the
   fit and its prediction added above what the process held before them (Linux: the peak resident size
   ``VmHWM``, reset after the warm-up, minus ``VmRSS`` before the fit; ``X`` itself is ``N × D × 8`` bytes).

Every method is first fitted, untimed, on a problem of the same width (1 000 rows; in part 3 the large set
itself), so that numba compiles or loads its loops before the timed fits.  Timings are wall-clock seconds on whatever else the machine runs: the
script prints the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

METHODS = ["hk", "hkes", "hkesa", "mhks", "mhka", "lsvm", "hkes_cv", "hkesa_cv", "hkes_cv_c", "LinearSVC"]


def build(name):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    from linsep import make_classifier

    estimator = LinearSVC() if name == "LinearSVC" else make_classifier(name)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return make_pipeline(StandardScaler(), estimator)


def law(name, n, d, rng):
    """``(X, y)`` of ``n`` rows drawn from one of the synthetic laws (module docstring)."""
    if name == "gauss":
        mixing = rng.standard_normal((d, d)) / np.sqrt(d)
        y = rng.integers(0, 2, n)
        shift = np.full(d, 0.9 / np.sqrt(d))
        X = rng.standard_normal((n, d)) @ mixing.T + np.outer(2 * y - 1, shift @ mixing.T)
        return X, y
    if name == "heavy-tail":
        y = rng.integers(0, 2, n)
        X = rng.standard_t(2, (n, d)) + np.outer(2 * y - 1, np.full(d, 0.35))
        return X, y
    from sklearn.datasets import make_classification

    seed = int(rng.integers(2**31))
    if name == "imbalanced-noisy":
        return make_classification(n, d, n_informative=10, weights=[0.9, 0.1], flip_y=0.1, random_state=seed)
    if name == "redundant":
        return make_classification(n, 50, n_informative=5, n_redundant=20, random_state=seed)
    if name == "few-noisy":
        return make_classification(n, 8, flip_y=0.1, random_state=seed)
    raise ValueError(name)


LAWS = ("gauss", "heavy-tail", "imbalanced-noisy", "redundant", "few-noisy")
TRAIN_ROWS = {"few-noisy": 300}  # the others: 1 000


def _train_test(name, n_train, n_test, d, rng):
    """Training and test rows of one draw of a law (one call: the same mixing, directions and weights)."""
    X, y = law(name, n_train + n_test, d, rng)
    return (X[:n_train], y[:n_train]), (X[n_train:], y[n_train:])


def _warm(name, d, n=1000):
    rng = np.random.default_rng(1)
    X, y = law("gauss", n, d, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(name).fit(X, y)


def _fit_score(name, X, y, X_test, y_test):
    model = build(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X, y)
        elapsed = time.perf_counter() - start
        error = 100 * np.mean(model.predict(X_test) != y_test)
    return error, elapsed


# -- part 1 ------------------------------------------------------------------------------------------------

def ida_table(folder):
    from scipy.stats import rankdata

    from linsep.experiments.report import error_table

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
    from generate_tables import read_results

    rows, record = read_results(folder)
    datasets, methods = record["datasets"], record["methods"]
    table = error_table(rows, datasets, methods, record["protocol"], record.get("test", "ttest"))
    by = {(r["dataset"], r["method"]): r for r in table}
    ranks = {m: [] for m in methods}
    for d in datasets:
        means = np.array([by[d, m]["mean"] for m in methods])
        for m, rank in zip(methods, rankdata(means)):  # tied means share their mean rank
            ranks[m].append(rank)
    lines = [f"IDA sets ({len(datasets)}, {record['splits'][datasets[0]]} splits each, `{record['command']}`)", "",
             "| method | mean error % | mean rank | best or tied | time per split (mean over sets) | × HKES's time |",
             "|---|---|---|---|---|---|"]

    def times(m):
        return np.array([np.mean([r["time_s"] for r in rows if r["dataset"] == d and r["method"] == m
                                  and "time_s" in r]) for d in datasets])

    reference = times("hkes") if "hkes" in methods else None
    for m in methods:
        error = np.mean([by[d, m]["mean"] for d in datasets])
        tied = sum(by[d, m]["best"] or by[d, m]["not_significantly_worse"] for d in datasets)
        ratio = f"{np.mean(times(m) / reference):.1f}" if reference is not None else "—"  # Table 2's mean ratio
        lines.append(f"| `{m}` | {error:.2f} | {np.mean(ranks[m]):.1f} | {tied}/{len(datasets)} | "
                     f"{1000 * np.mean(times(m)):.1f} ms | {ratio} |")
    return "\n".join(lines)


# -- part 2 ------------------------------------------------------------------------------------------------

def defaults_table(methods, seeds):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import RepeatedStratifiedKFold

    columns = ["breast_cancer (sklearn)", *LAWS]
    errors = {m: {} for m in methods}
    times = {m: [] for m in methods}
    Xb, yb = load_breast_cancer(return_X_y=True)
    folds = list(RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0).split(Xb, yb))
    draws = {name: [_train_test(name, TRAIN_ROWS.get(name, 1000), 20_000, 20, np.random.default_rng([seed, i]))
                    for seed in range(seeds)] for i, name in enumerate(LAWS)}
    for m in methods:
        for d in (8, 20, 30, 50):
            _warm(m, d)
        scores = [_fit_score(m, Xb[tr], yb[tr], Xb[te], yb[te]) for tr, te in folds]
        errors[m]["breast_cancer (sklearn)"] = np.mean([s[0] for s in scores])
        times[m] += [s[1] for s in scores]
        for name in LAWS:
            scores = [_fit_score(m, X, y, Xt, yt) for (X, y), (Xt, yt) in draws[name]]
            errors[m][name] = np.mean([s[0] for s in scores])
            times[m] += [s[1] for s in scores]
        print(f"  {m}: done", file=sys.stderr, flush=True)
    best = {c: min(errors[m][c] for m in methods) for c in columns}
    lines = ["Defaults in a StandardScaler pipeline: test error % (best of each column in bold), mean fit time", "",
             "| method | " + " | ".join(columns) + " | mean fit time |", "|---|" + "---|" * (len(columns) + 1)]
    for m in methods:
        cells = [(f"**{errors[m][c]:.2f}**" if errors[m][c] <= best[c] + 1e-9 else f"{errors[m][c]:.2f}")
                 for c in columns]
        lines.append(f"| `{m}` | " + " | ".join(cells) + f" | {1000 * np.mean(times[m]):.1f} ms |")
    return "\n".join(lines)


# -- part 3 ------------------------------------------------------------------------------------------------

def _status_bytes(key):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024  # kB
    raise KeyError(key)


def _reset_peak():
    """Reset the process's peak resident size (VmHWM) to its current one: Linux's clear_refs, value 5."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def large_child(name, n, d):
    """One fit on the large set, in this (fresh) process: prints JSON with error, seconds, memory."""
    (X, y), (X_test, y_test) = _train_test("gauss", n, 50_000, d, np.random.default_rng(7))
    X = np.ascontiguousarray(X)
    with warnings.catch_warnings():  # the same fit, untimed: the fit plan of this size compiled or loaded
        warnings.simplefilter("ignore")
        build(name).fit(X, y)
    # compiling takes memory of its own: reset the peak after it
    _reset_peak()
    before = _status_bytes("VmRSS")
    error, elapsed = _fit_score(name, X, y, X_test, y_test)
    peak = _status_bytes("VmHWM")
    print(json.dumps({"error": error, "seconds": elapsed, "added_bytes": max(peak - before, 0),
                      "x_bytes": X.nbytes}))


def large_table(methods, n, d):
    lines = [f"One large set: `gauss`, {n} × {d} (X {n * d * 8 / 2**20:.0f} MiB), defaults, one fit each", "",
             "| method | test error % | fit time | × LinearSVC's time | peak memory added by the fit |",
             "|---|---|---|---|---|"]
    results = {}
    for m in methods:
        run = subprocess.run([sys.executable, __file__, "--child", m, str(n), str(d)], capture_output=True,
                             text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if run.returncode != 0:
            results[m] = None
            print(f"  {m}: failed: {run.stderr.strip().splitlines()[-1:]}", file=sys.stderr, flush=True)
            continue
        results[m] = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"  {m}: {results[m]}", file=sys.stderr, flush=True)
    reference = (results.get("LinearSVC") or {}).get("seconds")
    for m in methods:
        r = results[m]
        if r is None:
            lines.append(f"| `{m}` | failed | | | |")
            continue
        ratio = f"{r['seconds'] / reference:.2f}" if reference else "—"
        lines.append(f"| `{m}` | {r['error']:.2f} | {r['seconds']:.2f} s | {ratio} | "
                     f"{r['added_bytes'] / 2**20:.0f} MiB ({r['added_bytes'] / r['x_bytes']:.2f} × X) |")
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        large_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", help="a results folder of `linsep bench` (part 1; skipped without)")
    parser.add_argument("--methods", nargs="+", default=METHODS, help="parts 2 and 3 (default: %(default)s)")
    parser.add_argument("--seeds", type=int, default=3, help="draws of each synthetic law (default: 3)")
    parser.add_argument("--large", nargs=2, type=int, default=[200_000, 50], metavar=("N", "D"))
    parser.add_argument("--skip", nargs="*", default=[], choices=["defaults", "large"], help="parts to skip")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}; {os.cpu_count()} logical CPUs")
    if args.results:
        print(ida_table(args.results), end="\n\n", flush=True)
    if "defaults" not in args.skip:
        print(defaults_table(args.methods, args.seeds), end="\n\n", flush=True)
    if "large" not in args.skip:
        print(large_table(args.methods, *args.large), end="\n\n", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
