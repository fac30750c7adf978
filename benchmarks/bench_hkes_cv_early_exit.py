"""``HoKashyapClassifierCV``'s ``early_exit``: its cost in the number of values of ``C``, and what it changes in the choice.

``python benchmarks/bench_hkes_cv_early_exit.py [--Cs 10 100 1000] [--repeat 3]``
    Fit time of ``HoKashyapClassifierCV(Cs=n, random_state=0)`` with ``early_exit=2.0`` (the default) and
    with ``early_exit=None`` (the full search) on 300 rows of ``make_classification(800, 8, flip_y=0.1,
    random_state=0)`` (N = 300, d = 8), the two interleaved, minimum and median of ``--repeat`` fits; the
    chosen ``C`` and :math:`\\hat k` of each and the summed fold iterations.  The reference of a fold is kept as
    a running best (one scan of each run's curve): ``early_exit`` should cost no more than the full search at
    any ``n``.

``python benchmarks/bench_hkes_cv_early_exit.py --choice [--seeds 20] [--grid 7] [--patience 100]``
    What ``early_exit=2.0`` changes against ``early_exit=None``, per data law (:data:`LAWS`) over ``--seeds``
    draws, each fitted on 300 rows and tested on the others: the draws where the chosen ``C`` differs, where
    ``(C, k̂)`` differs, the mean test error (%) of each and the largest paired difference, and the runs
    ``early_exit`` cut short (share of the (C, fold) runs whose iterations differ).  ``--patience``: the
    estimators' ``n_iter_no_change`` (``early_exit`` acts only through the patience: a run that the
    Ho–Kashyap rule stops before its patience runs out is never cut).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.datasets import make_classification

from linsep import HoKashyapClassifierCV

N_TRAIN = 300


def _logistic_plane(n, seed):
    """Gaussian X (d = 8), labels from a logistic model on a random hyperplane (noise everywhere)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 8))
    p = 1 / (1 + np.exp(-2.0 * (X @ rng.standard_normal(8))))
    return X, (rng.random(n) < p).astype(int)


def _heavy_tails(n, seed):
    """Student-t (3 degrees) X, d = 8, a linear rule with 10 % flipped labels and a 4:1 class imbalance."""
    rng = np.random.default_rng(seed)
    X = rng.standard_t(3, size=(n, 8))
    score = X @ rng.standard_normal(8)
    y = (score > np.quantile(score, 0.8)).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


LAWS = {
    "make_classification(800, 8, flip_y=0.1)": lambda seed: make_classification(800, 8, flip_y=0.1,
                                                                                 random_state=seed),
    "logistic hyperplane, d = 8": lambda seed: _logistic_plane(800, seed),
    "student-t, 10 % flips, 4:1": lambda seed: _heavy_tails(800, seed),
}
"""The data laws of ``--choice``: 800 rows each, the first 300 fitted, the other 500 tested."""


def timings(Cs_values, repeat):
    X, y = make_classification(800, 8, flip_y=0.1, random_state=0)
    X, y = X[:N_TRAIN], y[:N_TRAIN]
    HoKashyapClassifierCV(Cs=3, random_state=0).fit(X, y)  # compile outside the timings
    print(f"N = {N_TRAIN}, d = 8, cv = 5; load {os.getloadavg()[0]:.2f}")
    print(f"{'Cs':>6} {'early_exit':>10} {'min s':>8} {'median s':>9} {'C_':>10} {'k̂':>3} {'fold iters':>10}")
    for n in Cs_values:
        times = {2.0: [], None: []}
        fits = {}
        for r in range(repeat):
            for early_exit in ((2.0, None) if r % 2 == 0 else (None, 2.0)):
                start = time.perf_counter()
                fits[early_exit] = HoKashyapClassifierCV(Cs=n, early_exit=early_exit, random_state=0).fit(X, y)
                times[early_exit].append(time.perf_counter() - start)
        for early_exit, clf in fits.items():
            C = "None" if clf.C_ is None else f"{clf.C_:.4g}"
            print(f"{n:>6} {str(early_exit):>10} {min(times[early_exit]):8.3f} {np.median(times[early_exit]):9.3f} "
                  f"{C:>10} {clf.best_iter_:>3} {int(clf.cv_results_['fold_n_iter'].sum()):>10}", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")


def choice(n_seeds, grid, patience):
    print(f"Cs = {grid}, cv = 5, n_iter_no_change = {patience}, {N_TRAIN} training rows, {n_seeds} seeds per law; "
          f"early_exit=2.0 against None")
    print(f"{'law':<42} {'C differs':>9} {'(C,k̂) differs':>14} {'err 2.0 %':>9} {'err None %':>10} "
          f"{'max |diff| pt':>13} {'runs cut %':>10}")
    for name, law in LAWS.items():
        n_C = n_Ck = 0
        errors, cut = {2.0: [], None: []}, []
        for seed in range(n_seeds):
            X, y = law(seed)
            fits = {e: HoKashyapClassifierCV(Cs=grid, early_exit=e, n_iter_no_change=patience, random_state=seed)
                    .fit(X[:N_TRAIN], y[:N_TRAIN]) for e in (2.0, None)}
            for e, clf in fits.items():
                errors[e].append(100 * (1 - clf.score(X[N_TRAIN:], y[N_TRAIN:])))
            a, b = fits[2.0], fits[None]
            n_C += a.C_ != b.C_
            n_Ck += (a.C_, a.best_iter_) != (b.C_, b.best_iter_)
            cut.append(np.mean(a.cv_results_["fold_n_iter"] != b.cv_results_["fold_n_iter"]))
        diff = np.abs(np.subtract(errors[2.0], errors[None]))
        print(f"{name:<42} {n_C:>6}/{n_seeds} {n_Ck:>11}/{n_seeds} {np.mean(errors[2.0]):9.2f} "
              f"{np.mean(errors[None]):10.2f} {diff.max():13.2f} {100 * np.mean(cut):10.1f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--Cs", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--choice", action="store_true")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--grid", type=int, default=7)
    parser.add_argument("--patience", type=int, default=100)
    args = parser.parse_args(argv)
    if args.choice:
        choice(args.seeds, args.grid, args.patience)
    else:
        timings(args.Cs, args.repeat)


if __name__ == "__main__":
    main()
