"""HoKashyapClassifierCV over (C, k) against HKES and against tuned LinearSVC / RidgeClassifierCV; patience defaults.

Two tables, each printed with the machine's load (timings are noisy on a shared machine: both sides of
every ratio are timed in the same run, interleaved split by split).

``python benchmarks/bench_hkes_cv_c.py [--splits N] [--datasets ...] [--grid 7]``
    Per data set (the nine IDA sets of ``linsep.datasets`` with the quick protocol's splits, and
    scikit-learn's ``breast_cancer``, ``wine``, ``digits`` with stratified 75/25 splits, standardised):
    mean test error (%) of HKES (the paper's rule: one held-out third, ``k̂`` over every iterate),
    of ``HoKashyapClassifierCV(Cs=grid)`` (C and ``k̂`` from the same 5 folds, default patience, refit),
    of ``LinearSVC(loss="hinge")`` tuned by 5-fold ``GridSearchCV`` over C = 2^-10 … 2^10 (11 values)
    and of ``RidgeClassifierCV``; the check "CV(C,k) <= HKES" and the paired t-test's p-value of CV(C,k)
    against HKES over the splits (column ``p``; the summary counts the sets where CV(C,k) is above HKES
    with p < 0.05, and gives both mean errors); the check "CV(C,k) within 1 point of the better peer"; and
    the tuning time of CV(C,k) against the peers' (LinearSVC grid search + RidgeClassifierCV).
    On the IDA sets every method but HKES fits the whole training split (fitting and tuning parts, as
    ``linsep bench``'s † columns); HKES fits the fitting part and stops on the tuning part.

``python benchmarks/bench_hkes_cv_c.py --save FILE``, then ``--candidates [NAME ...] --peers FILE``
    Rules of choosing ``(C, k̂)`` (see :data:`CANDIDATES`) on the same splits, beside the HKES and peer
    errors saved by the first command (the peers' tuning is the expensive part and does not depend on
    the rule): per data set the mean test error of each rule, flagged ``H`` where it is above HKES and
    ``P`` where it is more than 1 point above the better peer, and per rule the number of sets meeting
    each criterion, the mean error and its tuning time (the peers' time is the saved one).

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
    RepeatedStratifiedKFold,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from linsep import HoKashyapClassifier, HoKashyapClassifierCV
from linsep.datasets import BENCHMARKS
from linsep.estimators.ho_kashyap_cv import stratified_folds
from linsep.experiments import paired_pvalue
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
        # HKES's "early stopping did not regularise" warning on noisy splits: the table gives its errors
        warnings.simplefilter("ignore", UserWarning)
        model = fit()
    return model, time.perf_counter() - start


def error(model, X, y):
    return 100.0 * float(np.mean(model.predict(X) != y))


def compare(datasets, n_splits, grid, save=None):
    rows, per_split = [], {}
    print(f"load before: {load():.2f}")
    header = (f"{'data set':18s} {'HKES':>6s} {'CV(C,k)':>8s} {'LinSVC':>7s} {'Ridge':>6s} {'<=HKES':>6s} "
              f"{'p':>6s} {'<=peer+1':>8s} {'t CV(C,k)':>9s} {'t peers':>8s} {'ratio':>6s}")
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
        per_split[dataset] = {"errors": errors, "times": times}
        mean = {name: float(np.mean(values)) for name, values in errors.items()}
        peer = min(mean["svc"], mean["ridge"])
        peers_time = times["svc"] + times["ridge"]
        # paired t-test of CV(C,k) against HKES over the splits (two-sided; what matters is p < 0.05 where
        # CV(C,k) is the worse of the two)
        p_hkes = paired_pvalue(errors["cvc"], errors["hkes"])
        row = (dataset, mean, mean["cvc"] <= mean["hkes"] + 1e-9, mean["cvc"] <= peer + 1.0, times["cvc"],
               peers_time, p_hkes)
        rows.append(row)
        print(f"{dataset:18s} {mean['hkes']:6.2f} {mean['cvc']:8.2f} {mean['svc']:7.2f} {mean['ridge']:6.2f} "
              f"{row[2]!s:>6s} {p_hkes:6.3f} {row[3]!s:>8s} {times['cvc']:9.2f} {peers_time:8.2f} "
              f"{peers_time / times['cvc']:6.1f}", flush=True)
    total_cvc = sum(r[4] for r in rows)
    total_peers = sum(r[5] for r in rows)
    worse = [r[0] for r in rows if not r[2] and r[6] < 0.05]
    print(f"all sets: CV(C,k) <= HKES on {sum(r[2] for r in rows)}/{len(rows)}, significantly above HKES "
          f"(paired t-test, p < 0.05) on {len(worse)}{' (' + ', '.join(worse) + ')' if worse else ''}; mean "
          f"error {np.mean([r[1]['cvc'] for r in rows]):.2f} against HKES's {np.mean([r[1]['hkes'] for r in rows]):.2f}; "
          f"within 1 point of the better peer on {sum(r[3] for r in rows)}/{len(rows)}; tuning time "
          f"{total_cvc:.1f} s against {total_peers:.1f} s (LinearSVC grid search + RidgeClassifierCV): "
          f"{total_peers / total_cvc:.1f}x cheaper")
    print(f"load after: {load():.2f}  (splits={n_splits}, Cs={grid})")
    if save:
        import json

        with open(save, "w") as file:
            json.dump(per_split, file)


class _OneStandardError(HoKashyapClassifierCV):
    """The plain HK (``C=None``) unless the best ``C`` beats it by more than one standard error of the folds."""

    def _choose_C(self, surfaces):
        best = super()._choose_C(surfaces)
        errors = np.sum([surface[3] for surface in surfaces], axis=0)
        per_fold = np.sum([surface[1][best][0][:, surface[2][best] - 1] for surface in surfaces], axis=0)
        standard_error = np.std(per_fold, ddof=1) / np.sqrt(per_fold.size)
        within = errors <= errors[best] + standard_error
        grid = self._C_grid()
        if self.toward == "plain":
            plain = [c for c, value in enumerate(grid) if value is None]
            return plain[0] if plain and within[plain[0]] else best
        strength = [np.inf if not within[c] else -(0.0 if grid[c] is None else grid[c]) for c in range(len(grid))]
        return int(np.argmin(strength))  # the largest C within one standard error


class _TowardPlain(_OneStandardError):
    toward = "plain"


class _TowardStronger(_OneStandardError):
    toward = "stronger"


class _ScaledRefit(HoKashyapClassifierCV):
    """The refit runs k̂ · N / N_fold iterates: the folds' k̂ scaled by the training-size ratio."""

    def _refit_run(self, fit, y, max_iter, C):
        n_fold = np.mean([len(train) for train, _ in fit.folds])
        return super()._refit_run(fit, y, int(round((max_iter + 1) * y.shape[0] / n_fold)) - 1, C)


class _SmoothedC(HoKashyapClassifierCV):
    """``C`` by the error curve over the numeric grid averaged with its two neighbours (``None`` alone)."""

    def _choose_C(self, surfaces):
        errors = np.sum([surface[3] for surface in surfaces], axis=0)
        numeric = [c for c, value in enumerate(self._C_grid()) if value is not None]
        padded = np.r_[errors[numeric[0]], errors[numeric], errors[numeric[-1]]]
        errors[numeric] = (padded[:-2] + padded[1:-1] + padded[2:]) / 3
        return int(np.argmin(errors))


class _WithHKES(HoKashyapClassifierCV):
    """HKES's own procedure (one 2/3–1/3 split, the paper's rule, no refit) as one more candidate.

    Its error is measured on the same folds (HKES fitted on each fold's training rows, counted one-vs-rest
    as the surface is) and compared with the surface's minimum; if not above it, the model is HKES on all rows.
    """

    def fit(self, X, y):
        super().fit(X, y)
        binary = len(self.classes_) == 2
        results = [self.cv_results_] if binary else self.cv_results_
        chosen = [c for c, value in enumerate(results[0]["C"])
                  if (np.isnan(value) and self.C_ is None) or value == self.C_][0]
        surface_min = sum(result["best_validation_error"][chosen] for result in results)
        errors = []
        for f, (train, validation) in enumerate(stratified_folds(y, 5, self.random_state)):
            hkes = HoKashyapClassifier(early_stopping=True, n_iter_no_change=None, random_state=f).fit(X[train],
                                                                                                      y[train])
            scores = np.reshape(hkes.decision_function(X[validation]), (len(validation), -1))
            signs = (np.where(y[validation] == hkes.classes_[1], 1.0, -1.0)[:, None] if binary else
                     np.where(y[validation][:, None] == hkes.classes_[None, :], 1.0, -1.0))
            errors.append(np.sum(np.mean(scores * signs <= 0, axis=0)))
        if np.mean(errors) <= surface_min:
            hkes = HoKashyapClassifier(early_stopping=True, n_iter_no_change=None,
                                       random_state=self.random_state).fit(X, y)
            self.coef_, self.intercept_ = hkes.coef_, hkes.intercept_
        return self


def _repeated(seed):
    return RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=seed)


CANDIDATES = {
    "min": lambda seed: HoKashyapClassifierCV(Cs=7, random_state=seed),
    "no_early_exit": lambda seed: HoKashyapClassifierCV(Cs=7, early_exit=None, random_state=seed),
    "1se_plain": lambda seed: _TowardPlain(Cs=7, random_state=seed),
    "1se_stronger": lambda seed: _TowardStronger(Cs=7, random_state=seed),
    "paper_rule": lambda seed: HoKashyapClassifierCV(Cs=7, n_iter_no_change=None, random_state=seed),
    "cv10": lambda seed: HoKashyapClassifierCV(Cs=7, cv=10, random_state=seed),
    "rep3x5": lambda seed: HoKashyapClassifierCV(Cs=7, cv=_repeated(seed)),
    "rep3x5_1se": lambda seed: _TowardPlain(Cs=7, cv=_repeated(seed)),
    "grid13": lambda seed: HoKashyapClassifierCV(Cs=[None, *np.logspace(-3, 4, 12)], random_state=seed),
    "smooth_C": lambda seed: _SmoothedC(Cs=7, random_state=seed),
    "scaled_refit": lambda seed: _ScaledRefit(Cs=7, random_state=seed),
    "average": lambda seed: HoKashyapClassifierCV(Cs=7, refit=False, random_state=seed),
    "with_hkes": lambda seed: _WithHKES(Cs=7, random_state=seed),
}
"""Rules of choosing ``(C, k̂)``: ``min`` is the estimator's (argmin of the mean surface, refit at ``k̂``);
``no_early_exit``: the same without ``early_exit`` (every fold run to its own patience);
``1se_plain`` / ``1se_stronger``: the one-standard-error rule toward ``C=None`` (HKES's configuration) or toward
the largest ``C``; ``paper_rule``: folds without patience; ``cv10``, ``rep3x5``: 10 folds, 3 × 5 repeated folds
(averaged before the argmin, as the 5 folds are); ``grid13``: a wider, finer grid; ``smooth_C``: the error
over ``C`` smoothed before the argmin; ``scaled_refit``: the refit's ``k̂`` times ``N / N_fold``;
``average``: no refit, the fold models averaged; ``with_hkes``: HKES's procedure as a candidate."""


def candidates_table(names, datasets, n_splits, peers_file):
    import json

    with open(peers_file) as file:
        saved = json.load(file)
    print(f"load before: {load():.2f}")
    X_fit, y_fit = next(splits_of(datasets[0], 1))[:2]
    timed(lambda: HoKashyapClassifierCV(Cs=7, random_state=0).fit(X_fit, y_fit))  # compiled loops warm, untimed
    errors = {name: {} for name in names}
    times = {name: {} for name in names}
    for dataset in datasets:
        for split, (X_fit, y_fit, X_tune, y_tune, X_test, y_test) in enumerate(splits_of(dataset, n_splits)):
            X_all = X_fit if X_tune is None else np.vstack([X_fit, X_tune])
            y_all = y_fit if y_tune is None else np.concatenate([y_fit, y_tune])
            for name in names:
                model, seconds = timed(lambda: CANDIDATES[name](split).fit(X_all, y_all))
                errors[name].setdefault(dataset, []).append(error(model, X_test, y_test))
                times[name][dataset] = times[name].get(dataset, 0.0) + seconds
        hkes = np.mean(saved[dataset]["errors"]["hkes"][:n_splits])
        peer = min(np.mean(saved[dataset]["errors"][p][:n_splits]) for p in ("svc", "ridge"))
        cells = []
        for name in names:
            mean = np.mean(errors[name][dataset])
            flags = ("H" if mean > hkes + 1e-9 else "") + ("P" if mean > peer + 1.0 else "")
            cells.append(f"{name}={mean:.2f}{flags}")
        print(f"{dataset:17s} HKES={hkes:.2f} peer={peer:.2f} " + " ".join(cells), flush=True)
    print(f"{'rule':13s} {'<=HKES':>6s} {'<=peer+1':>8s} {'both':>4s} {'mean err':>8s} {'t (s)':>7s} {'peers/t':>7s}")
    peers_time = sum(saved[d]["times"]["svc"] + saved[d]["times"]["ridge"] for d in datasets)
    for name in names:
        means = np.array([np.mean(errors[name][d]) for d in datasets])
        hkes = np.array([np.mean(saved[d]["errors"]["hkes"][:n_splits]) for d in datasets])
        peer = np.array([min(np.mean(saved[d]["errors"][p][:n_splits]) for p in ("svc", "ridge")) for d in datasets])
        below, near = means <= hkes + 1e-9, means <= peer + 1.0
        total = sum(times[name].values())
        print(f"{name:13s} {below.sum():6d} {near.sum():8d} {(below & near).sum():4d} {means.mean():8.3f} "
              f"{total:7.1f} {peers_time / total:7.1f}")
    print(f"load after: {load():.2f}  (splits={n_splits}; peers' time from {peers_file})")


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
    parser.add_argument("--save", help="write the per-split test errors and times to this JSON file")
    parser.add_argument("--candidates", nargs="*", help="rules of choosing (C, k) (default: all of CANDIDATES)")
    parser.add_argument("--peers", help="the --save file of an earlier run (HKES and the peers' errors, times)")
    args = parser.parse_args()
    if args.patience:
        patience_table(args.splits)
    elif args.candidates is not None:
        if not args.peers:
            parser.error("--candidates needs --peers FILE (written by --save)")
        candidates_table(args.candidates or list(CANDIDATES), args.datasets, args.splits, args.peers)
    else:
        compare(args.datasets, args.splits, args.grid, args.save)


if __name__ == "__main__":
    main()
