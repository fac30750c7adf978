"""HoKashyapClassifierCV over (C, k) against HKES and against tuned LinearSVC / RidgeClassifierCV; patience defaults.

Two tables, each printed with the machine's load (timings are noisy on a shared machine: both sides of
every ratio are timed in the same run, interleaved split by split).

``python benchmarks/bench_hkes_cv_c.py [--splits N] [--datasets ...] [--grid 7]``
    Per data set (the nine IDA sets of ``linsep.datasets`` with the quick protocol's splits, and
    scikit-learn's ``breast_cancer``, ``wine``, ``digits`` with stratified 75/25 splits, standardised):
    mean test error (%) of HKES (the paper's rule: one held-out third, ``k̂`` over every iterate),
    of ``HoKashyapClassifierCV(Cs=grid)`` (C and ``k̂`` from the same 5 folds, default patience, refit),
    of ``LinearSVC(loss="hinge")`` tuned by 5-fold ``GridSearchCV`` over C = 2^-10 … 2^10 (11 values)
    and of ``RidgeClassifierCV``; the checks "CV(C,k) <= HKES" and "CV(C,k) within 1 point of the better
    peer"; and the tuning time of CV(C,k) against the peers' (LinearSVC grid search + RidgeClassifierCV).
    On the IDA sets every method but HKES fits the whole training split (fitting and tuning parts, as
    ``linsep bench``'s † columns); HKES fits the fitting part and stops on the tuning part.

``python benchmarks/bench_hkes_cv_c.py --patience [--splits N]``
    Candidate defaults of ``n_iter_no_change`` (None = the paper's rule): quick Table 1 means of HKES /
    HKESA over the nine IDA sets (largest gap to the paper's rule, in points), HKES on standardised
    ``breast_cancer`` (5 folds: largest ``n_iter_``, number of ConvergenceWarnings) and on ``digits``
    (one fit on 75 %: time, one-vs-rest problems that reach ``max_iter``).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import RidgeClassifierCV
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from linsep import HoKashyapClassifier, HoKashyapClassifierCV
from linsep.datasets import BENCHMARKS
from linsep.experiments.protocol import load_split

SKLEARN_SETS = {"breast_cancer_sk": load_breast_cancer, "wine": load_wine, "digits": load_digits}
SVC_GRID = {"C": 2.0 ** np.arange(-10, 11, 2)}  # 11 values, 2^-10 … 2^10
PATIENCE_CANDIDATES = (None, 10, 20, 50, 60, 70, 80, 100)


def load():
    return os.getloadavg()[0]


def splits_of(dataset, n_splits):
    """``(X_fit, y_fit, X_tune, y_tune, X_test, y_test)`` per split (the tuning part empty for scikit-learn sets)."""
    if dataset in SKLEARN_SETS:
        X, y = SKLEARN_SETS[dataset](return_X_y=True)
        for train, test in StratifiedShuffleSplit(n_splits, test_size=0.25, random_state=0).split(X, y):
            scaler = StandardScaler().fit(X[train])
            yield scaler.transform(X[train]), y[train], None, None, scaler.transform(X[test]), y[test]
    else:
        for split in range(n_splits):
            yield load_split(dataset, split)


def timed(fit):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = fit()
    return model, time.perf_counter() - start


def error(model, X, y):
    return 100.0 * float(np.mean(model.predict(X) != y))


def compare(datasets, n_splits, grid):
    rows = []
    print(f"load before: {load():.2f}")
    header = (f"{'data set':18s} {'HKES':>6s} {'CV(C,k)':>8s} {'LinSVC':>7s} {'Ridge':>6s} {'<=HKES':>6s} "
              f"{'<=peer+1':>8s} {'t CV(C,k)':>9s} {'t peers':>8s} {'ratio':>6s}")
    print(header)
    for dataset in datasets:
        errors = {name: [] for name in ("hkes", "cvc", "svc", "ridge")}
        times = {name: 0.0 for name in ("cvc", "svc", "ridge")}
        for split, (X_fit, y_fit, X_tune, y_tune, X_test, y_test) in enumerate(splits_of(dataset, n_splits)):
            X_all = X_fit if X_tune is None else np.vstack([X_fit, X_tune])
            y_all = y_fit if y_tune is None else np.concatenate([y_fit, y_tune])
            hkes = HoKashyapClassifier(early_stopping=True, n_iter_no_change=None, random_state=split)
            val = {} if X_tune is None else {"X_val": X_tune, "y_val": y_tune}
            model, _ = timed(lambda: hkes.fit(X_fit, y_fit, **val))
            errors["hkes"].append(error(model, X_test, y_test))
            folds = StratifiedKFold(5, shuffle=True, random_state=split)
            fits = {
                "cvc": lambda: HoKashyapClassifierCV(Cs=grid, random_state=split).fit(X_all, y_all),
                "svc": lambda: GridSearchCV(LinearSVC(loss="hinge", dual=True, max_iter=10_000, random_state=0),
                                            SVC_GRID, cv=folds).fit(X_all, y_all),
                "ridge": lambda: RidgeClassifierCV().fit(X_all, y_all),
            }
            order = list(fits) if split % 2 == 0 else list(reversed(fits))  # interleaved: load hits both sides
            for name in order:
                model, seconds = timed(fits[name])
                errors[name].append(error(model, X_test, y_test))
                times[name] += seconds
        mean = {name: float(np.mean(values)) for name, values in errors.items()}
        peer = min(mean["svc"], mean["ridge"])
        peers_time = times["svc"] + times["ridge"]
        row = (dataset, mean, mean["cvc"] <= mean["hkes"] + 1e-9, mean["cvc"] <= peer + 1.0, times["cvc"],
               peers_time)
        rows.append(row)
        print(f"{dataset:18s} {mean['hkes']:6.2f} {mean['cvc']:8.2f} {mean['svc']:7.2f} {mean['ridge']:6.2f} "
              f"{row[2]!s:>6s} {row[3]!s:>8s} {times['cvc']:9.2f} {peers_time:8.2f} "
              f"{peers_time / times['cvc']:6.1f}", flush=True)
    total_cvc = sum(r[4] for r in rows)
    total_peers = sum(r[5] for r in rows)
    print(f"all sets: CV(C,k) <= HKES on {sum(r[2] for r in rows)}/{len(rows)}, within 1 point of the better "
          f"peer on {sum(r[3] for r in rows)}/{len(rows)}; tuning time {total_cvc:.1f} s against {total_peers:.1f} s "
          f"(LinearSVC grid search + RidgeClassifierCV): {total_peers / total_cvc:.1f}x cheaper")
    print(f"load after: {load():.2f}  (splits={n_splits}, Cs={grid})")


def patience_table(n_splits):
    print(f"load before: {load():.2f}")
    ida = {}
    for n in PATIENCE_CANDIDATES:
        for loss in ("squared", "absolute"):
            means = []
            for dataset in BENCHMARKS:
                errs = []
                for X_fit, y_fit, X_tune, y_tune, X_test, y_test in splits_of(dataset, n_splits):
                    model, _ = timed(lambda: HoKashyapClassifier(
                        early_stopping=True, loss=loss, n_iter_no_change=n, random_state=0).fit(
                            X_fit, y_fit, X_val=X_tune, y_val=y_tune))
                    errs.append(error(model, X_test, y_test))
                means.append(np.mean(errs))
            ida[n, loss] = np.array(means)
    X, y = load_breast_cancer(return_X_y=True)
    Xd, yd = load_digits(return_X_y=True)
    print(f"{'n_iter_no_change':>16s} {'HKES max |Δ|':>12s} {'HKESA max |Δ|':>13s} {'bc max n_iter':>13s} "
          f"{'bc warnings':>11s} {'digits s':>8s} {'digits at max_iter':>18s}")
    for n in PATIENCE_CANDIDATES:
        gaps = [float(np.max(np.abs(ida[n, loss] - ida[None, loss]))) for loss in ("squared", "absolute")]
        n_iters, n_warn = [], 0
        for train, _ in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
            Xs = StandardScaler().fit_transform(X[train])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = HoKashyapClassifier(early_stopping=True, n_iter_no_change=n, random_state=0).fit(Xs, y[train])
            n_iters.append(model.n_iter_)
            n_warn += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        train, _ = next(StratifiedShuffleSplit(1, test_size=0.25, random_state=0).split(Xd, yd))
        Xs = StandardScaler().fit_transform(Xd[train])
        model, seconds = timed(lambda: HoKashyapClassifier(early_stopping=True, n_iter_no_change=n,
                                                           random_state=0).fit(Xs, yd[train]))
        stuck = int(np.sum(np.asarray(model.status_) == "max_iter"))
        print(f"{n!s:>16s} {gaps[0]:12.2f} {gaps[1]:13.2f} {max(n_iters):13d} {n_warn:11d} {seconds:8.2f} "
              f"{stuck:>15d}/10")
    print("Δ: per data set, quick Table 1 mean test error (%) minus the paper's rule's (n_iter_no_change=None)")
    print(f"load after: {load():.2f}  (splits={n_splits})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--datasets", nargs="+", default=list(BENCHMARKS) + list(SKLEARN_SETS))
    parser.add_argument("--grid", type=int, default=7, help="Cs of HoKashyapClassifierCV (default 7)")
    parser.add_argument("--patience", action="store_true", help="the table of candidate n_iter_no_change")
    args = parser.parse_args()
    if args.patience:
        patience_table(args.splits)
    else:
        compare(args.datasets, args.splits, args.grid)


if __name__ == "__main__":
    main()
