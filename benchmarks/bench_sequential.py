"""Single-sample perceptron and LMS: one epoch at N = 1e5, d = 100 against scikit-learn.

Usage::

    PYTHONPATH=src python benchmarks/bench_sequential.py [--n 100000] [--d 100] [--repeat 9]

Compares, in one run and on the same data,

* ``PerceptronClassifier(max_iter=1).fit`` with ``sklearn.linear_model.Perceptron(max_iter=1, tol=None)``;
* ``LMSClassifier(max_iter=1).fit`` with ``SGDClassifier(loss="squared_error", max_iter=1, tol=None)``;

both full fits (validation, label encoding, one shuffled epoch, verdict), plus
the bare compiled epoch of linsep (``linsep.solvers.ho_kashyap.loops``) for reference.  Every
timing is the minimum over ``--repeat`` runs (the machine may be shared; the
minimum is the least disturbed).  numba is warmed up first, so compilation is
not timed.  Ratios < 1 mean linsep is faster.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron, SGDClassifier

from linsep import LMSClassifier, PerceptronClassifier
from linsep.solvers.lms import lms_epoch
from linsep.solvers.perceptron.loops import perceptron_epoch


def best_times(fns, repeat):
    """Minimum wall time of each function; the calls are interleaved so load spikes hit all alike."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, bucket in zip(fns, times):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [min(bucket) for bucket in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()

    rng = np.random.RandomState(0)
    X = rng.randn(args.n, args.d)
    # a noisy linear rule: not separable, so every epoch keeps correcting
    y = np.where(X @ rng.randn(args.d) + 0.5 * rng.randn(args.n) > 0, 1, 0)
    y_pm = np.where(y == 1, 1.0, -1.0)
    b = np.ones(args.n)
    order = rng.permutation(args.n).astype(np.int64)

    warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter=1 is the point here
    # warm-up: compile (or load from the on-disk cache) every loop once
    small = slice(0, 100)
    PerceptronClassifier(max_iter=1).fit(X[small], y[small])
    LMSClassifier(max_iter=1).fit(X[small], y[small])

    rows = []

    w = np.zeros(args.d + 1)
    ours_epoch, ours_fit, skl_fit = best_times([
        lambda: perceptron_epoch(X, y_pm, order, w, 1.0, 0.0),
        lambda: PerceptronClassifier(max_iter=1, random_state=0).fit(X, y),
        lambda: Perceptron(max_iter=1, tol=None, random_state=0).fit(X, y),
    ], args.repeat)
    rows.append(("perceptron", ours_epoch, ours_fit, skl_fit, "Perceptron"))

    eta = 1.0 / (1.0 + float(np.einsum("ij,ij->i", X, X).max()))
    w = np.zeros(args.d + 1)
    ours_epoch, ours_fit, skl_fit = best_times([
        lambda: lms_epoch(X, y_pm, b, order, w, eta),
        lambda: LMSClassifier(max_iter=1, tol=0.0, random_state=0).fit(X, y),
        lambda: SGDClassifier(loss="squared_error", max_iter=1, tol=None, random_state=0).fit(X, y),
    ], args.repeat)
    rows.append(("lms", ours_epoch, ours_fit, skl_fit, 'SGDClassifier(loss="squared_error")'))

    print(f"N = {args.n}, d = {args.d}, min of {args.repeat} runs, one shuffled epoch per fit")
    print(f"{'rule':<11}{'linsep epoch':>14}{'linsep fit':>12}{'sklearn fit':>13}"
          f"{'fit ratio':>11}{'epoch/sk':>10}  sklearn estimator")
    for name, epoch, fit, skl, label in rows:
        print(f"{name:<11}{epoch * 1e3:>12.1f}ms{fit * 1e3:>10.1f}ms{skl * 1e3:>11.1f}ms"
              f"{fit / skl:>10.2f}x{epoch / skl:>9.2f}x  {label}")


if __name__ == "__main__":
    main()
