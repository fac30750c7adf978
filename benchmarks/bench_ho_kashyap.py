"""Cost of one Ho–Kashyap iteration and of the one-time factorisation, as ratios.

    python benchmarks/bench_ho_kashyap.py                  # all cores (the README's numbers)
    python benchmarks/bench_ho_kashyap.py --threads 1      # one thread everywhere
    python benchmarks/bench_ho_kashyap.py [--n 1000000] [--d 100] [--repeat 3] [--dtype float32] [--pinv-n N]

``Y = diag(y)[X, 1]`` is the view the estimators pass (:class:`linsep._core.signed_design.SignedDesign`): the compiled
loop reads ``X`` and the labels, and splits the rows over its threads.  Prints, measured in one run on the
same data, with the BLAS thread count and the HK pass's thread count:
* one HK iteration / (one X@v + one Xᵀ@u)          (goal <= 1.3)
* one HK iteration / one X@v                        (moonshot goal <= 1.3)
* the same iteration on one thread, and one pass by row blocks through threaded BLAS
  (the alternative to the compiled threads: Z = X_b w and g += X_bᵀ t per block of rows)
* the compiled pass alone (the iteration's whole O(Nd) work), timed directly as the minimum over
  5 × --repeat calls on 1 thread and on all threads, against X@v and X@v + Xᵀ@u with as many BLAS
  threads: a shared machine disturbs these far less than the difference of two long fits
* the load averages before and after (a load at or above the core count keeps the fit's pass serial)
* linsep's factorisation / plain Cholesky of YᵀY (YᵀY formed + scipy cho_factor)   (goal <= 1.3)
* numpy.linalg.pinv(Y) / plain Cholesky of YᵀY      (for reference)
Timings are the minimum over ``--repeat`` runs; machines here are shared, so ratios are more
trustworthy than seconds.
"""

import argparse
import os
import time

import numba
import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_info, threadpool_limits

from linsep._core.signed_design import SignedDesign, sign_normalized
from linsep._core.linalg import LeastSquaresFactor
from linsep.solvers.ho_kashyap.loops import _pass_by_rows_chunked, _pass_by_rows_parallel
from linsep._core.threads import pass_threads
from linsep.solvers.ho_kashyap.solver import ho_kashyap


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
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--pinv-n", type=int, default=200_000, help="N for the pinv reference (d=50)")
    parser.add_argument("--threads", type=int, default=None,
                        help="thread limit for BLAS and so for the HK pass (default: all cores)")
    args = parser.parse_args()
    with threadpool_limits(limits=args.threads):
        run(args)


def blocked_blas_pass(X, y, W, B, block=8192):
    """One HK pass by row blocks in NumPy: the products go to (threaded) BLAS, the vector work stays serial."""
    g = np.zeros(W.shape[0])
    for start in range(0, X.shape[0], block):
        rows = slice(start, start + block)
        z = X[rows] @ W[:-1]
        z += W[-1]
        z *= y[rows]
        e = z - B[rows]
        t = B[rows] + 0.8 * np.maximum(e, 0.0)
        t *= y[rows]
        g[:-1] += t @ X[rows]
        g[-1] += t.sum()
    return g


def direct_pass(X, y, threads, repeat):
    """Minimum time of one compiled HK pass by rows (its fixed row chunks on one thread, or on ``threads``)."""
    n, d = X.shape
    W, B = np.random.default_rng(1).normal(size=d + 1), np.ones(n, dtype=X.dtype)
    E, B_next, g = np.empty_like(B), np.empty_like(B), np.empty(d + 1)
    rows, D = np.empty(0, dtype=np.intp), np.empty(0)
    labels = y.astype(X.dtype)
    if threads > 1:
        def one():
            return _pass_by_rows_parallel(X, labels, rows, W, B, 0.0, 0.8, 1e-6, D, E, B_next, g, threads, labels[:0], rows)
    else:
        def one():
            return _pass_by_rows_chunked(X, labels, rows, W, B, 0.0, 0.8, 1e-6, D, E, B_next, g, labels[:0], rows)
    one()
    return best_time(one, repeat)


def run(args):
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    rng = np.random.default_rng(0)
    dtype = np.dtype(args.dtype)
    X = rng.standard_normal(size=(args.n, args.d), dtype=dtype)
    y = np.where(X @ rng.normal(size=args.d).astype(dtype) + rng.normal(scale=3.0, size=args.n) > 0, 1, -1)
    Y = SignedDesign(X, y)
    v, u = rng.normal(size=args.d).astype(dtype), rng.normal(size=args.n).astype(dtype)

    matvec = best_time(lambda: X @ v, args.repeat)
    both = best_time(lambda: (X @ v, X.T @ u), args.repeat)

    lo, hi = 5, 45  # far apart: the difference must dominate the noise of a shared machine
    # No stopping rule can fire: exactly lo or hi updates are timed.
    kw = dict(tol=0.0, stopping="paper", stop_at_separation=False)
    assert ho_kashyap(Y, max_iter=lo, **kw).n_iter == lo + 1

    def iteration(plan=None):
        t_lo = best_time(lambda: ho_kashyap(Y, max_iter=lo, **kw, plan=plan), args.repeat)
        t_hi = best_time(lambda: ho_kashyap(Y, max_iter=hi, **kw, plan=plan), args.repeat)
        return (t_hi - t_lo) / (hi - lo)

    per_iter = iteration()
    threads = pass_threads(X.size)
    per_iter_serial = iteration({"threads": 1})  # the private plan: the compiled pass on one thread
    W, B = rng.normal(size=args.d + 1), np.ones(args.n)
    blocked = best_time(lambda: blocked_blas_pass(X, y, W, B), args.repeat)

    factor = best_time(lambda: LeastSquaresFactor(Y), args.repeat)
    Yd = Y.toarray()
    plain = best_time(lambda: sla.cho_factor(Yd.T @ Yd), args.repeat)
    del Yd

    blas = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    print(f"BLAS threads: {max(blas, default=1)}; HK pass threads: {threads} (the fit's choice: 1 while the load "
          f"average reaches the core count)")
    print(f"N={args.n}, d={args.d}, {dtype.name}: X@v {matvec * 1e3:.1f} ms, X@v + Xᵀ@u {both * 1e3:.1f} ms, "
          f"HK iteration {per_iter * 1e3:.1f} ms ({threads} threads), {per_iter_serial * 1e3:.1f} ms (1 thread)")
    print(f"  HK iteration / (X@v + Xᵀ@u) = {per_iter / both:.2f}   (goal <= 1.3)")
    print(f"  HK iteration / X@v           = {per_iter / matvec:.2f}   (moonshot goal <= 1.3)")
    print(f"  HK iteration, 1 thread / {threads} threads = {per_iter_serial / per_iter:.2f}")
    print(f"  pass by row blocks through BLAS / HK iteration = {blocked / per_iter:.2f}   "
          f"({blocked * 1e3:.1f} ms)")
    print(f"  factorisation / Cholesky of YᵀY = {factor / plain:.2f}   (goal <= 1.3; "
          f"{factor * 1e3:.0f} ms vs {plain * 1e3:.0f} ms)")

    # The compiled pass alone, against the BLAS floor at the same thread count.
    all_threads = max(1, min(numba.get_num_threads(), max(blas, default=1)))
    for count in sorted({1, all_threads}):
        with threadpool_limits(limits=count, user_api="blas"):
            mv = best_time(lambda: X @ v, 5 * args.repeat)
            mv_both = best_time(lambda: (X @ v, X.T @ u), 5 * args.repeat)
        one_pass = direct_pass(X, y, count, 5 * args.repeat)
        print(f"  one compiled pass, {count} thread(s) (BLAS {count}): {one_pass * 1e3:.1f} ms = "
              f"{one_pass / mv:.2f} × X@v ({mv * 1e3:.1f} ms), {one_pass / mv_both:.2f} × (X@v + Xᵀ@u) "
              f"({mv_both * 1e3:.1f} ms)")

    Xp = rng.normal(size=(args.pinv_n, 50))
    Yp = sign_normalized(Xp, np.where(Xp[:, 0] > 0, 1, -1))
    pinv = best_time(lambda: np.linalg.pinv(Yp), 1)
    chol = best_time(lambda: sla.cho_factor(Yp.T @ Yp), args.repeat)
    print(f"  reference, N={args.pinv_n}, d=50: pinv / Cholesky of YᵀY = {pinv / chol:.1f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
