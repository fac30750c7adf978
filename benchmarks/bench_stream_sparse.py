"""Sparse input and partial_fit of the perceptron and LMS against scikit-learn.

Usage::

    PYTHONPATH=src python benchmarks/bench_stream_sparse.py [--n 50000] [--d 50000] [--nnz 50] [--chunks 10]

On a CSR matrix of ``n × d`` with about ``nnz`` stored entries per row (the
dense copy would need ``8 n d`` bytes: 20 GB at the defaults), times in one run:

* ``fit`` with one shuffled epoch (``max_iter=1``) on the CSR matrix,
  ``PerceptronClassifier`` against ``sklearn.linear_model.Perceptron`` and
  ``LMSClassifier`` against ``SGDClassifier(loss="squared_error")``;
* ``partial_fit`` over ``--chunks`` CSR chunks, the same pairs.

Every timing is the minimum over ``--repeat`` runs, the calls interleaved (the
machine may be shared); numba is warmed up first.  Ratios < 1 mean linsep is
faster.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron, SGDClassifier

from linsep import LMSClassifier, PerceptronClassifier


def best_times(fns, repeat):
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, bucket in zip(fns, times):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [min(bucket) for bucket in times]


def stream(est, chunks, classes):
    for X, y in chunks:
        est.partial_fit(X, y, classes=classes)
    return est


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--d", type=int, default=50_000)
    parser.add_argument("--nnz", type=int, default=50)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.RandomState(0)
    # nnz random columns per row, built directly (scipy.sparse.random is slow at this size)
    X = sp.csr_matrix((rng.randn(args.n * args.nnz), rng.randint(0, args.d, args.n * args.nnz),
                       np.arange(0, args.n * args.nnz + 1, args.nnz)), shape=(args.n, args.d))
    X.sum_duplicates()
    y = np.where(X @ rng.randn(args.d) + 0.1 * rng.randn(args.n) > 0, 1, 0)
    bounds = np.linspace(0, args.n, args.chunks + 1).astype(int)
    chunks = [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    classes = np.array([0, 1])

    warnings.simplefilter("ignore", ConvergenceWarning)  # one epoch is the point here
    PerceptronClassifier(max_iter=1).fit(X[:100], y[:100])  # warm-up (compile or load the loops)
    LMSClassifier(max_iter=1).fit(X[:100], y[:100])

    pairs = [
        ("perceptron", lambda: PerceptronClassifier(max_iter=1, random_state=0),
         lambda: Perceptron(max_iter=1, tol=None, random_state=0), "Perceptron"),
        ("lms", lambda: LMSClassifier(max_iter=1, tol=0.0, random_state=0),
         lambda: SGDClassifier(loss="squared_error", max_iter=1, tol=None, random_state=0),
         'SGDClassifier(loss="squared_error")'),
    ]
    print(f"CSR n = {args.n}, d = {args.d}, {X.nnz / args.n:.0f} entries per row "
          f"(dense copy: {8 * args.n * args.d / 2**30:.0f} GiB), min of {args.repeat} runs")
    print(f"{'rule':<11}{'what':<22}{'linsep':>10}{'sklearn':>10}{'ratio':>8}  sklearn estimator")
    for name, ours, theirs, label in pairs:
        fit_ours, fit_theirs, pf_ours, pf_theirs = best_times([
            lambda: ours().fit(X, y),
            lambda: theirs().fit(X, y),
            lambda: stream(ours(), chunks, classes),
            lambda: stream(theirs(), chunks, classes),
        ], args.repeat)
        for what, a, b in (("fit, 1 epoch", fit_ours, fit_theirs),
                           (f"partial_fit x {args.chunks}", pf_ours, pf_theirs)):
            print(f"{name:<11}{what:<22}{a * 1e3:>8.1f}ms{b * 1e3:>8.1f}ms{a / b:>7.2f}x  {label}")


if __name__ == "__main__":
    main()
