"""HKES on a large float32 problem: fit time, time per iteration against one pass, peak memory against X.nbytes.

    /usr/bin/time -v python benchmarks/bench_hkes_large.py [--n 10000000] [--d 50] [--threads T] [--full]
        [--iterations 25] [--repeat 2]

``X`` (N × d, float32: 2 GB at the defaults) is drawn directly in float32 and fitted by
``make_classifier("hkes")`` with its default held-out third.  Prints, measured in one run:
* the BLAS threads and the HK pass's threads;
* the floor: one ``X@v`` and one ``X@v + Xᵀ@u`` (float32 BLAS, same threads);
* fit times with ``max_iter`` = 5 and 25 (no stopping rule) and the time per iteration from their difference (an iteration
  reads the training rows once and the validation rows once: one pass over ``X``), against the floor;
* with ``--full``, the fit to HK's own stopping point;
* the peak resident memory of the process (``ru_maxrss``, as ``/usr/bin/time -v`` reports it) less what it
  held before ``X`` was drawn, against ``X.nbytes``: the goal is <= 1.5 × X.nbytes + O(N);
* ``coef_``'s dtype, and the load averages before and after (a load at or above the core count keeps the
  pass serial).
The machine may be shared: times are minima over a few runs and are noisy; the memory is exact.
"""

import argparse
import os
import resource
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from linsep import make_classifier
from linsep._core.threads import pass_threads


def peak_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def best_time(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=float, default=1e7)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--threads", type=int, default=None, help="BLAS (and so HK pass) thread limit")
    parser.add_argument("--full", action="store_true", help="also fit to HK's own stopping point")
    parser.add_argument("--iterations", type=int, default=25,
                        help="the longer timed fit's max_iter (the shorter one: 5); more: less noise per iteration")
    parser.add_argument("--repeat", type=int, default=2, help="best of this many fits per timing")
    args = parser.parse_args()
    with threadpool_limits(limits=args.threads):
        run(args)


def run(args):
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    n, d = int(args.n), args.d
    make_classifier("hkes", max_iter=2, random_state=0).fit(  # compiled code loaded before the baseline
        np.random.default_rng(1).standard_normal((20_000, d), dtype=np.float32), np.arange(20_000) % 2)
    baseline = peak_bytes()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d), dtype=np.float32)
    score = X @ rng.standard_normal(d, dtype=np.float32)
    score += rng.standard_normal(n, dtype=np.float32) * np.float32(np.sqrt(d))
    y = np.where(score > 0, 1, -1).astype(np.int8)
    del score
    v, u = np.ones(d, dtype=np.float32), np.ones(n, dtype=np.float32)
    matvec = best_time(lambda: X @ v)
    both = best_time(lambda: (X @ v, X.T @ u))
    del u
    blas = max((lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"), default=1)
    print(f"N = {n}, d = {d}, float32, X.nbytes = {X.nbytes / 2**30:.2f} GiB; "
          f"BLAS threads: {blas}; HK pass threads: {pass_threads(X.size)}")
    print(f"floor: X@v {matvec * 1e3:.0f} ms, X@v + Xᵀ@u {both * 1e3:.0f} ms")

    lo, hi = 5, max(6, args.iterations)
    times, fits = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached on purpose
        for k in (lo, hi):
            # No stopping rule can fire: exactly k updates are timed.
            clf = make_classifier("hkes", max_iter=k, tol=0.0, stopping="paper", random_state=0)
            times[k] = best_time(lambda: clf.fit(X, y), args.repeat)
            fits[k] = clf
    per_iter = (times[hi] - times[lo]) / (hi - lo)
    print(f"HKES fit, max_iter={lo}: {times[lo]:.2f} s; max_iter={hi}: {times[hi]:.2f} s "
          f"(n_iter_ {fits[hi].n_iter_}, status {fits[hi].status_})")
    print(f"time per iteration {per_iter * 1e3:.0f} ms = {per_iter / both:.2f} × (X@v + Xᵀ@u) "
          f"= {per_iter / matvec:.2f} × X@v; set-up (validation, split, Gram, factor, final scores) "
          f"{times[lo] - (lo + 1) * per_iter:.2f} s")
    if args.full:
        clf = make_classifier("hkes", random_state=0)
        start = time.perf_counter()
        clf.fit(X, y)
        full = time.perf_counter() - start
        print(f"HKES fit to its stopping point: {full:.1f} s, n_iter_ {clf.n_iter_}, best_iter_ {clf.best_iter_}, "
              f"status {clf.status_}, training accuracy {np.mean(clf.predict(X) == y):.4f}")
    extra = peak_bytes() - baseline
    print(f"peak memory beyond the interpreter and libraries: {extra / 2**30:.2f} GiB = "
          f"{extra / X.nbytes:.3f} × X.nbytes ({(extra - X.nbytes) / n:.0f} bytes per sample beyond X; "
          f"goal <= 1.5 × X.nbytes + O(N))")
    print(f"coef_ dtype: {fits[hi].coef_.dtype}, intercept_ dtype: {fits[hi].intercept_.dtype}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
