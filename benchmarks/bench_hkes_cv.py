"""Cost of HKES with cross-validated early stopping and refit (``hkes_cv``), as time ratios.

    python benchmarks/bench_hkes_cv.py --splits 20     # the README's numbers
    python benchmarks/bench_hkes_cv.py [--splits N] [--datasets heart thyroid ...] [--cv 5] [--blas-threads 1]

For every split of every data set (``linsep.datasets.benchmark_splits``, default 20 per data set),
each method is fitted on the whole training split, in its own timed loop over the splits after one
untimed warm-up fit:

* ``hkes``: HKES, which holds out a stratified third and keeps the weights of the other two thirds;
* ``hkes_cv``: ``cv``-fold cross-validated stopping iteration, then HK refitted on all the data;
* ``hkesa`` / ``hkesa_cv``: the same with absolute errors (IRLS);
* LinearSVC (scikit-learn's default squared hinge) tuned by ``GridSearchCV`` with 5 stratified
  folds over the paper's 11 coarse values C = 2^-10, 2^-8, ..., 2^10, then refitted.

Prints per data set the mean test errors and times, the ratio hkes_cv / hkes (goal <= cv + 1.5) and
the ratio GridSearchCV(LinearSVC) / hkes_cv (goal >= 10).  BLAS runs on one thread (tiny problems;
see ``bench_hkes_protocol.py``).
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from linsep import make_classifier
from linsep.datasets import BENCHMARKS, benchmark_splits
from linsep.experiments.protocol import coarse_grid


def grid_linear_svc(X, y, seed):
    return GridSearchCV(LinearSVC(), {"C": coarse_grid()}, cv=5).fit(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", type=int, default=20, help="realizations per data set")
    parser.add_argument("--datasets", nargs="*", default=list(BENCHMARKS))
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--blas-threads", type=int, default=1)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        run(args)


def run(args):
    methods = {
        "hkes": lambda X, y, seed: make_classifier("hkes", random_state=seed).fit(X, y),
        "hkes_cv": lambda X, y, seed: make_classifier("hkes_cv", cv=args.cv, random_state=seed).fit(X, y),
        "hkesa": lambda X, y, seed: make_classifier("hkesa", random_state=seed).fit(X, y),
        "hkesa_cv": lambda X, y, seed: make_classifier("hkesa_cv", cv=args.cv, random_state=seed).fit(X, y),
        "svc_grid": grid_linear_svc,
    }
    X, y, _, _ = next(benchmark_splits("titanic", 1))
    for fit in methods.values():  # untimed warm-up: loads the compiled loops
        fit(X, y, 0)
    totals = dict.fromkeys(methods, 0.0)
    budget = args.cv + 1.5
    print(f"{'data set':<14}{'HKES %':>8}{'HKES-CV %':>10}{'HKESA %':>9}{'HKESA-CV %':>11}{'SVC-grid %':>11}"
          f"{'HKES s':>9}{'CV/HKES':>9}{'CVA/HKESA':>10}{'grid/CV':>9}")
    for name in args.datasets:
        splits = list(benchmark_splits(name, args.splits))
        times, errors = {}, {}
        for key, fit in methods.items():
            start = time.perf_counter()
            models = [fit(X_train, y_train, seed) for seed, (X_train, y_train, _, _) in enumerate(splits)]
            times[key] = time.perf_counter() - start
            totals[key] += times[key]
            errors[key] = np.mean([100 * np.mean(m.predict(X_test) != y_test)
                                   for m, (_, _, X_test, y_test) in zip(models, splits)])
        print(f"{name:<14}{errors['hkes']:>8.2f}{errors['hkes_cv']:>10.2f}{errors['hkesa']:>9.2f}"
              f"{errors['hkesa_cv']:>11.2f}{errors['svc_grid']:>11.2f}{times['hkes']:>9.3f}"
              f"{times['hkes_cv'] / times['hkes']:>9.2f}{times['hkesa_cv'] / times['hkesa']:>10.2f}"
              f"{times['svc_grid'] / times['hkes_cv']:>9.0f}")
    ratio, ratio_a = totals["hkes_cv"] / totals["hkes"], totals["hkesa_cv"] / totals["hkesa"]
    print(f"total: HKES {totals['hkes']:.3f} s, HKES-CV {totals['hkes_cv']:.3f} s, HKESA {totals['hkesa']:.3f} s, "
          f"HKESA-CV {totals['hkesa_cv']:.3f} s, GridSearchCV(LinearSVC, 11 C, 5 folds) {totals['svc_grid']:.2f} s")
    print(f"  HKES-CV / HKES = {ratio:.2f}   (goal <= cv + 1.5 = {budget:g})")
    print(f"  HKESA-CV / HKESA = {ratio_a:.2f}")
    print(f"  GridSearchCV(LinearSVC) / HKES-CV = {totals['svc_grid'] / totals['hkes_cv']:.0f}   (goal >= 10)")


if __name__ == "__main__":
    main()
