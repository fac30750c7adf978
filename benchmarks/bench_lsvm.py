"""Benchmark of the linear Lagrangian SVM (issue 3, performance).

Prints, on N × d Gaussian data with label noise (not separable):

1. the time of one LSVM iteration (22) against one pass ``X @ v`` plus one
   pass ``Xᵀ @ u`` (target ratio <= 1.3);
2. the total fit time of ``make_classifier("lsvm")`` against scikit-learn's
   ``LinearSVC(loss="squared_hinge")`` on the same data.  With
   ``C_svc = C/2`` and ``intercept_scaling=1`` LinearSVC minimises the same
   criterion (18) — squared hinge, penalised bias — so the two models are
   also compared.

The machine may be shared: every time is the minimum over ``--repeat`` runs,
and BLAS runs with ``--threads`` threads (default 1, like liblinear, which
LinearSVC uses) for every timed code alike: on a loaded 2-core machine,
multi-threaded BLAS calls mostly measure waits for a free core.

Usage::

    PYTHONPATH=src python benchmarks/bench_lsvm.py [--n 1000000] [--d 20] [--C 1.0] [--repeat 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from linsep import make_classifier
from linsep.solvers.lsvm.solver import DEFAULT_MU_FACTOR, LSVMFactor


def best_time(func, repeat):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.5 * np.sqrt(d) * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e6, help="number of samples N")
    parser.add_argument("--d", type=int, default=20, help="number of features d")
    parser.add_argument("--C", type=float, default=1.0, help="LSVM's C (LinearSVC gets C/2)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions; the minimum is kept")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: library default)")
    args = parser.parse_args(argv)
    if args.threads > 0:
        with threadpool_limits(limits=args.threads, user_api="blas"):
            return run_benchmark(args)
    return run_benchmark(args)


def run_benchmark(args):
    n, d = int(args.n), args.d
    X, y = make_data(n, d)
    print(f"N = {n}, d = {d}, C = {args.C}, min over {args.repeat} runs, BLAS threads: {args.threads or 'default'}")

    # 1. One iteration vs one pass X@v + Xᵀ@u: the update object that
    # lagrangian_svm's loop calls once per iteration, timed alone (the loop
    # adds two scalar tests).  Interleaved with the reference pass so that the
    # load of a shared machine affects both alike.
    v, u = np.ones(d), y.copy()
    factor = LSVMFactor(X, args.C)
    step = factor.stepper(y, DEFAULT_MU_FACTOR / args.C)
    t_pass = t_iter = np.inf
    for _ in range(args.repeat):
        t_pass = min(t_pass, best_time(lambda: (X @ v, X.T @ u), 3))
        t_iter = min(t_iter, best_time(step, 3))
    print(f"one pass X@v + X.T@u     : {1e3 * t_pass:8.2f} ms")
    print(f"one LSVM iteration (22)  : {1e3 * t_iter:8.2f} ms")
    print(f"ratio iteration / pass   : {t_iter / t_pass:8.2f}   (target <= 1.3)")

    # 2. Whole fits (validation, factor, iterations, weights).
    lsvm = make_classifier("lsvm", C=args.C)
    svc = LinearSVC(loss="squared_hinge", C=args.C / 2, intercept_scaling=1.0, tol=1e-4)
    t_lsvm = best_time(lambda: lsvm.fit(X, y), args.repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_svc = best_time(lambda: svc.fit(X, y), max(1, min(args.repeat, 3)))
    print(f"LSVM fit (tol={lsvm.tol:g})   : {t_lsvm:8.3f} s, {lsvm.n_iter_} iterations, status {lsvm.status_}"
          f" ({1e3 * t_lsvm / lsvm.n_iter_:.1f} ms per iteration, all included)")
    print(f"LinearSVC(squared_hinge) : {t_svc:8.3f} s (dual={svc.dual!r}, n_iter {svc.n_iter_})")
    print(f"ratio LSVM / LinearSVC   : {t_lsvm / t_svc:8.2f}")
    W_lsvm = np.append(lsvm.coef_.ravel(), lsvm.intercept_)
    W_svc = np.append(svc.coef_.ravel(), svc.intercept_)
    agree = np.mean(lsvm.predict(X) == svc.predict(X))
    print(f"same criterion (18): max |W_lsvm - W_svc| / max |W| = "
          f"{np.abs(W_lsvm - W_svc).max() / np.abs(W_svc).max():.1e}, predictions agree on {100 * agree:.3f}%")


if __name__ == "__main__":
    main()
