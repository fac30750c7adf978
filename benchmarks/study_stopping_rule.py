"""Why the relative stopping rule with tol = 1e-6 is linsep's default for Ho–Kashyap.

    PYTHONPATH=src python benchmarks/study_stopping_rule.py [--problems 1500] [--splits 30]

Part 1 — HK's promise.  Random linearly separable problems (N from 20 to 200, d from 2 to 10,
points uniform in [-1, 1]^d, those within a margin of a random hyperplane removed, the margin
log-uniform between 0.1 % and 10 % of the data range) are solved by HK with the relative rule at
tol = 1e-6 and tol = 1e-4 (max_iter = 50 000).  Prints how many end separated, how many stop
``converged`` before separating (a broken promise) and how many run out of iterations.

Part 2 — early stopping.  HKES on the first ``--splits`` realizations of each IDA data set with
tol = 1e-6 and tol = 1e-4: mean test error and total iterations of each.
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

import numpy as np

from linsep import make_classifier
from linsep.datasets import BENCHMARKS, benchmark_splits


def separable_problem(rng):
    n, d = int(rng.integers(20, 201)), int(rng.integers(2, 11))
    margin = 2.0 * 10 ** rng.uniform(-3, -1)  # a fraction of the range [-1, 1]
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    bias = rng.uniform(-0.3, 0.3)
    X = np.empty((0, d))
    while X.shape[0] < n:
        candidates = rng.uniform(-1, 1, size=(4 * n, d))
        keep = np.abs(candidates @ w + bias) > margin / 2
        X = np.vstack([X, candidates[keep]])
    X = X[:n]
    y = np.where(X @ w + bias > 0, 1, -1)
    if np.unique(y).size < 2:
        y[0] = -y[0]
        X[0] = X[0] - 2 * (X[0] @ w + bias) * w  # mirror the point across the hyperplane
    return X, y


def promise(n_problems):
    rng = np.random.default_rng(0)
    problems = [separable_problem(rng) for _ in range(n_problems)]
    print(f"Part 1: {n_problems} separable problems, HK with the relative rule, max_iter = 50 000")
    for tol in (1e-6, 1e-4):
        outcomes = Counter()
        for X, y in problems:
            clf = make_classifier("hk", tol=tol, max_iter=50_000).fit(X, y)
            separated = np.all(clf.predict(X) == y)
            outcomes["separated" if separated else f"unseparated, status {clf.status_}"] += 1
        print(f"  tol = {tol:g}: " + ", ".join(f"{count} {what}" for what, count in sorted(outcomes.items())))


def early_stopping(n_splits):
    print(f"Part 2: HKES on the first {n_splits} splits of each data set")
    print(f"  {'data set':<14}{'err % 1e-6':>11}{'err % 1e-4':>11}{'iters 1e-6':>12}{'iters 1e-4':>12}")
    for name in BENCHMARKS:
        errors, iterations = {1e-6: [], 1e-4: []}, {1e-6: 0, 1e-4: 0}
        for seed, (X, y, X_test, y_test) in enumerate(benchmark_splits(name, n_splits)):
            for tol in errors:
                clf = make_classifier("hkes", tol=tol, random_state=seed).fit(X, y)
                errors[tol].append(100 * np.mean(clf.predict(X_test) != y_test))
                iterations[tol] += clf.n_iter_
        print(f"  {name:<14}{np.mean(errors[1e-6]):>11.2f}{np.mean(errors[1e-4]):>11.2f}"
              f"{iterations[1e-6]:>12}{iterations[1e-4]:>12}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=1500)
    parser.add_argument("--splits", type=int, default=30)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    promise(args.problems)
    early_stopping(args.splits)


if __name__ == "__main__":
    main()
