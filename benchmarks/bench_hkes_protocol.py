"""The paper's validation protocol with HKES vs scikit-learn's tuned linear models, as time ratios.

    python benchmarks/bench_hkes_protocol.py --splits 20     # the README's numbers
    python benchmarks/bench_hkes_protocol.py [--splits N] [--datasets heart thyroid ...] [--blas-threads 1]

(default: all splits, 100 per data set, 20 for image and splice).  For every split of every data
set (``linsep.datasets.benchmark_splits``):

* HKES through the public estimator: ``make_classifier("hkes").fit(X_train, y_train)`` holds out a
  stratified third of the training split (its own random split) and tunes its stopping iteration
  in the same fit;
* LinearSVC tuned like the paper tunes C: fit on a stratified 2/3 (``train_test_split``), choose C
  on the other 1/3 over C = 2^-10, 2^-8, ..., 2^10 and then 9 values 2^t, t evenly spaced in
  [p-1, p+1] around the best 2^p (20 fits, the grid of ``linsep bench``), both with scikit-learn's
  default squared hinge and with the hinge loss (ℓ1 slacks, the paper's SVM);
* RidgeClassifierCV over 21 alphas 2^-10 ... 2^10 with its efficient leave-one-out.

Each method runs over all splits of a data set in its own timed loop, after one untimed warm-up
fit of each (for HKES it loads the compiled Ho–Kashyap loop, about 0.2 s once per process).
Prints the mean test error of HKES beside the paper's Table 1 value and the total time of each
method, with the ratios LinearSVC / HKES (goal >= 100) and RidgeClassifierCV / HKES (goal >= 3).

BLAS runs on one thread for every method (``--blas-threads``): the problems are tiny (at most
1300 samples, 60 features), liblinear is single-threaded anyway, and on a busy machine the
wake-up latency of idle BLAS threads (milliseconds) would otherwise dominate every small matrix
product.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import RidgeClassifierCV
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from linsep import make_classifier
from linsep.datasets import BENCHMARKS, benchmark_splits
from linsep.experiments.protocol import coarse_grid, fine_grid

PAPER_HKES = {"diabetis": 23.75, "heart": 17.17, "breast_cancer": 28.19, "splice": 16.93, "image": 16.99,
              "german": 24.39, "flare_solar": 33.65, "thyroid": 11.89, "titanic": 22.81}


def tuned_linear_svc(X, y, seed, loss):
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=1 / 3, stratify=y, random_state=seed)

    def error(C):
        return np.mean(LinearSVC(C=C, loss=loss).fit(X_fit, y_fit).predict(X_val) != y_val)

    # the paper's two-step grid, as `linsep bench` tunes C: 2^-10, 2^-8, ..., 2^10, then 9 values 2^t
    # with t evenly spaced in [p - 1, p + 1] around the best 2^p
    coarse = coarse_grid()
    p = int(np.log2(coarse[int(np.argmin([error(C) for C in coarse]))]).round())
    fine = fine_grid(p)
    C = fine[int(np.argmin([error(C) for C in fine]))]
    return LinearSVC(C=C, loss=loss).fit(X_fit, y_fit)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", type=int, default=None, help="realizations per data set (default: all)")
    parser.add_argument("--datasets", nargs="*", default=list(BENCHMARKS))
    parser.add_argument("--blas-threads", type=int, default=1)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        run(args)


def warm_up():
    """Fit each method once, untimed: loads numba's compiled loops and first-call caches; returns seconds."""
    X, y, _, _ = next(benchmark_splits("titanic", 1))
    start = time.perf_counter()
    make_classifier("hkes", random_state=0).fit(X, y)
    hkes = time.perf_counter() - start
    tuned_linear_svc(X, y, 0, "squared_hinge")
    RidgeClassifierCV(alphas=2.0 ** np.arange(-10, 11)).fit(X, y)
    return hkes


def run(args):
    print(f"one-time warm-up of HKES (loading the compiled loops, not counted): {warm_up():.2f} s")
    methods = {
        "hkes": lambda X, y, seed: make_classifier("hkes", random_state=seed).fit(X, y),
        "svc": lambda X, y, seed: tuned_linear_svc(X, y, seed, "squared_hinge"),
        "svc_hinge": lambda X, y, seed: tuned_linear_svc(X, y, seed, "hinge"),
        "ridge": lambda X, y, seed: RidgeClassifierCV(alphas=2.0 ** np.arange(-10, 11)).fit(X, y),
    }
    totals = dict.fromkeys(methods, 0.0)
    print(f"{'data set':<14}{'HKES err %':>11}{'paper':>8}{'HKES s':>9}{'LinearSVC s':>13}"
          f"{'(hinge) s':>11}{'Ridge s':>9}")
    for name in args.datasets:
        splits = list(benchmark_splits(name, args.splits))
        times, models = {}, {}
        # Each method runs the whole protocol over the splits in its own timed loop.
        for key, fit in methods.items():
            start = time.perf_counter()
            models[key] = [fit(X_train, y_train, seed) for seed, (X_train, y_train, _, _) in enumerate(splits)]
            times[key] = time.perf_counter() - start
            totals[key] += times[key]
        errors = [100 * np.mean(model.predict(X_test) != y_test)
                  for model, (_, _, X_test, y_test) in zip(models["hkes"], splits)]
        print(f"{name:<14}{np.mean(errors):>11.2f}{PAPER_HKES[name]:>8.2f}{times['hkes']:>9.3f}"
              f"{times['svc']:>13.2f}{times['svc_hinge']:>11.2f}{times['ridge']:>9.3f}")
    print(f"total: HKES {totals['hkes']:.3f} s, LinearSVC (20-value C grid) {totals['svc']:.2f} s "
          f"(hinge: {totals['svc_hinge']:.2f} s), RidgeClassifierCV {totals['ridge']:.3f} s")
    print(f"  LinearSVC / HKES = {totals['svc'] / totals['hkes']:.0f}, "
          f"hinge LinearSVC / HKES = {totals['svc_hinge'] / totals['hkes']:.0f}   (goal >= 100)")
    print(f"  RidgeClassifierCV / HKES = {totals['ridge'] / totals['hkes']:.1f}   (goal >= 3)")


if __name__ == "__main__":
    main()
