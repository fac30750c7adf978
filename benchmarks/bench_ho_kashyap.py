"""Cost of one Ho–Kashyap iteration and of the one-time factorisation, as ratios.

    python benchmarks/bench_ho_kashyap.py --blas-threads 1   # the README's numbers (also with 2)
    python benchmarks/bench_ho_kashyap.py [--n 1000000] [--d 100] [--repeat 3] [--blas-threads T] [--pinv-n N]

Prints, measured in one run on the same data:
* one HK iteration / (one X@v + one Xᵀ@u)          (goal <= 1.3)
* one HK iteration / one X@v                        (moonshot goal <= 1.3)
* linsep's factorisation / plain Cholesky of YᵀY (YᵀY formed + scipy cho_factor)   (goal <= 1.3)
* numpy.linalg.pinv(Y) / plain Cholesky of YᵀY      (for reference)
Timings are the minimum over ``--repeat`` runs; machines here are shared, so ratios are more
trustworthy than seconds.
"""

import argparse
import time

import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

from linsep._design import sign_normalized
from linsep._linalg import LeastSquaresFactor
from linsep.solvers.ho_kashyap import ho_kashyap


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pinv-n", type=int, default=200_000, help="N for the pinv reference (d=50)")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="BLAS threads for the NumPy references (default: all cores); the HK pass is one thread")
    args = parser.parse_args()
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        run(args)


def run(args):

    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, args.d))
    y = np.where(X @ rng.normal(size=args.d) + rng.normal(scale=3.0, size=args.n) > 0, 1, -1)
    Y = sign_normalized(X, y)
    v, u = rng.normal(size=args.d), rng.normal(size=args.n)

    matvec = best_time(lambda: X @ v, args.repeat)
    both = best_time(lambda: (X @ v, X.T @ u), args.repeat)

    lo, hi = 5, 45  # far apart: the difference must dominate the noise of a shared machine
    # No stopping rule can fire: exactly lo or hi updates are timed.
    kw = dict(tol=0.0, stopping="paper", stop_at_separation=False)
    assert ho_kashyap(Y, max_iter=lo, **kw).n_iter == lo + 1
    t_lo = best_time(lambda: ho_kashyap(Y, max_iter=lo, **kw), args.repeat)
    t_hi = best_time(lambda: ho_kashyap(Y, max_iter=hi, **kw), args.repeat)
    per_iter = (t_hi - t_lo) / (hi - lo)

    factor = best_time(lambda: LeastSquaresFactor(Y), args.repeat)
    plain = best_time(lambda: sla.cho_factor(Y.T @ Y), args.repeat)

    print(f"BLAS threads: {args.blas_threads or 'all'}")
    print(f"N={args.n}, d={args.d}: X@v {matvec * 1e3:.1f} ms, X@v + Xᵀ@u {both * 1e3:.1f} ms, "
          f"HK iteration {per_iter * 1e3:.1f} ms")
    print(f"  HK iteration / (X@v + Xᵀ@u) = {per_iter / both:.2f}   (goal <= 1.3)")
    print(f"  HK iteration / X@v           = {per_iter / matvec:.2f}   (moonshot goal <= 1.3)")
    print(f"  factorisation / Cholesky of YᵀY = {factor / plain:.2f}   (goal <= 1.3; "
          f"{factor * 1e3:.0f} ms vs {plain * 1e3:.0f} ms)")

    Xp = rng.normal(size=(args.pinv_n, 50))
    Yp = sign_normalized(Xp, np.where(Xp[:, 0] > 0, 1, -1))
    pinv = best_time(lambda: np.linalg.pinv(Yp), 1)
    chol = best_time(lambda: sla.cho_factor(Yp.T @ Yp), args.repeat)
    print(f"  reference, N={args.pinv_n}, d=50: pinv / Cholesky of YᵀY = {pinv / chol:.1f}")


if __name__ == "__main__":
    main()
