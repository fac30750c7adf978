"""Kernel LSVM on many samples in few dimensions, one positive among them, against libsvm.

The case: ``N`` standard normal samples in ``d`` dimensions, a single sample
labelled positive, RBF kernel with ``gamma="scale"``, ``C = 1``.  Few
constraints are active at the optimum, so iteration (22) needs hundreds of
steps (the inactive entries of ``α`` decay by ``1 − μ/λ`` per step for the
eigenvalues ``λ`` of ``Q``, which reach about ``N``); with a factor of the
whole ``N × N`` matrix ``Q`` each step is two triangular solves over ``N²``
numbers, and a fit at ``N = 10 000`` took over a minute.  With the Gram
matrix factored as ``K = F Fᵀ`` to rounding (:func:`linsep.kernels.low_rank_gram_factor`,
rank about 300 in the plane) a step is ``O(N r)``.  Where ``K`` has no such
factor (``--d 5``: rank about 8 800), the estimator solves for the same fixed
point by active sets from kernel columns
(:func:`linsep.solvers.lsvm.active_set_kernel_lagrangian_svm`): ``n_iter`` is
then the number of active-set solves.

Prints the fit time of ``kernel_lsvm`` and of ``SVC`` (same kernel, ``C``),
their ratio, iterations, status and the path taken, and the load average.

Usage::

    python benchmarks/bench_kernel_lsvm_imbalanced.py [N] [--d D] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.svm import SVC

from linsep import make_classifier
from linsep.estimators.lsvm import ACTIVE_SET_MIN_SAMPLES
from linsep.kernels import low_rank_gram_factor, resolve_gamma


def make_data(n, d, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    y = np.zeros(n, dtype=int)
    y[0] = 1
    return X, y


def best_time(fit, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - start)
    return min(times), model


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", nargs="?", type=int, default=10_000)
    parser.add_argument("--d", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="best of R timings")
    args = parser.parse_args()
    X, y = make_data(args.n, args.d)
    gamma = resolve_gamma("scale", X)
    many = args.n >= ACTIVE_SET_MIN_SAMPLES
    probe = make_classifier("kernel_lsvm", C=1.0)
    probe._gamma = gamma  # as fit sets it
    factor = (low_rank_gram_factor(X, kernel="rbf", gamma=gamma)
              if not many or probe._low_rank_on_a_subsample(X) else None)  # the estimator's own choice
    path = (f"low-rank factor of K, rank {factor.shape[1]}" if factor is not None
            else "active sets from kernel columns" if many else "the N×N factor of Q")
    print(f"N={args.n} d={args.d} gamma={gamma:.4g}; path: {path}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        linsep_time, model = best_time(lambda: make_classifier("kernel_lsvm", C=1.0).fit(X, y), args.repeat)
    svc_time, svc = best_time(lambda: SVC(kernel="rbf", gamma="scale", C=1.0).fit(X, y), args.repeat)
    print(f"kernel_lsvm {linsep_time:.2f} s (n_iter {model.n_iter_}, status {model.status_}, "
          f"{len(caught)} warnings, training accuracy {model.score(X, y):.4f})")
    print(f"SVC         {svc_time:.2f} s (training accuracy {svc.score(X, y):.4f})")
    print(f"ratio kernel_lsvm / SVC: {linsep_time / svc_time:.2f}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
