"""HK, MHKS and MSE on a dask array larger than any one worker's memory limit.

    PYTHONPATH=src python benchmarks/bench_dask.py [--quick] [--n 7500000] [--d 20] [--memory-limit 1GB] [--repeat 3]

A ``distributed.LocalCluster`` with 2 worker processes (one thread each), each
with ``memory_limit`` below ``X.nbytes`` (defaults: X = 7.5·10⁶ × 20 float64 =
1.2 GB, 1 GiB = 1.07 GB per worker), so no worker could hold ``X``: it is drawn on the
workers with ``dask.array.random`` (chunks of 250 000 rows), labelled there
(a noisy linear rule: not separable, so HK runs its full budget) and
persisted, half on each worker.  Prints, measured in one run:

* per estimator (HK, MHKS with ``C = 1``, MSE): the fit time, ``n_iter_``, and
  the time per iteration from two fits with different ``max_iter`` (their
  difference over the difference of iterations: set-up and checks cancel;
  each the best of ``--repeat`` fits, on dask as in memory);
* the same per-iteration time in memory on a row subsample (1/4 of X, fitted
  by the NumPy estimator in this process; best of 3), scaled to all rows, and the ratio;
* the client process's peak RSS (``ru_maxrss``; the LocalCluster's scheduler
  runs in it too) against ``X.nbytes``: ``X`` never comes to the client;
* the load average before and after (the machine may be shared with other
  jobs: times are noisy).
"""

import argparse
import logging
import os
import resource
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def labels_of(block, w):
    rng = np.random.default_rng(int(abs(block[0, 0]) * 1e6))
    return (block @ w + 0.5 * rng.standard_normal(block.shape[0]) > 0).astype(np.int8)


def timed_fit(make, X, y, max_iter, repeat=1):
    """Best time of ``repeat`` fits, and ``n_iter_`` (the fitted model is dropped: on dask data its margin
    vector would hold worker memory)."""
    best = np.inf
    for _ in range(repeat):
        estimator = make(max_iter)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            estimator.fit(X, y)
        best = min(best, time.perf_counter() - start)
    return best, estimator.n_iter_


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 200 000 (a small check of the script)")
    parser.add_argument("--n", type=int, default=7_500_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--memory-limit", default="1GiB", help="per worker (default 1GiB = 1.07 GB)")
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many fits per timing (a loaded machine)")
    args = parser.parse_args()
    n = 200_000 if args.quick else args.n
    chunk = min(args.chunk_rows, n // 4) if args.quick else args.chunk_rows

    import dask
    import dask.array as da
    from dask.utils import parse_bytes
    from distributed import Client, LocalCluster

    from linsep import HoKashyapClassifier, MSEClassifier

    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    # X is the workers' managed memory: keep it in RAM (no spilling to disk below 90 % of the limit).
    with dask.config.set({"distributed.worker.memory.target": False, "distributed.worker.memory.spill": 0.9,
                          "distributed.worker.memory.pause": 0.95, "distributed.worker.memory.terminate": 0.99}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=args.memory_limit,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
        client = Client(cluster)
        try:
            X = da.random.RandomState(0).standard_normal((n, args.d), chunks=(chunk, args.d))
            w = np.linspace(1.0, -1.0, args.d)
            y = X.map_blocks(labels_of, w, drop_axis=1, dtype=np.int8)
            X, y = client.persist([X, y])
            client.wait_for_workers(2)
            from distributed import wait
            wait([X, y])
            limit = parse_bytes(args.memory_limit)
            print(f"X: {n} x {args.d} float64 = {X.nbytes / 1e9:.2f} GB in {X.numblocks[0]} row chunks; "
                  f"2 workers, memory_limit {limit / 1e9:.2f} GB each (X.nbytes / limit = {X.nbytes / limit:.2f})")
            held = {k: v["metrics"]["memory"] for k, v in client.scheduler_info()["workers"].items()}
            print("worker RSS after persisting X: " + ", ".join(f"{m / 1e9:.2f} GB" for m in held.values()))
            rss_before = peak_rss()

            cases = [
                ("HK", lambda m: HoKashyapClassifier(max_iter=m), (2, 12)),
                ("MHKS", lambda m: HoKashyapClassifier(C=1.0, max_iter=m), (2, 12)),
                ("MSE", lambda m: MSEClassifier(), (None, None)),
            ]
            timed_fit(cases[0][1], X, y, 1)  # warm-up: the workers import linsep
            on_dask = {}
            for name, make, (a, b) in cases:  # the dask fits first: the peak RSS below is theirs
                if a is None:  # MSE: one solve; compare whole fits
                    fit_time, n_iter = timed_fit(make, X, y, None, repeat=args.repeat)
                    on_dask[name] = (fit_time, n_iter, fit_time)
                else:
                    t_a, n_a = timed_fit(make, X, y, a, repeat=args.repeat)
                    fit_time, n_b = timed_fit(make, X, y, b, repeat=args.repeat)
                    on_dask[name] = (fit_time, n_b, (fit_time - t_a) / (n_b - n_a))
            rss_fits = peak_rss()

            sub = n // 4
            # Block by block to the client: X[:sub].compute() would first concatenate 0.3 GB on one
            # worker already holding half of X, beyond its memory limit (the nanny kills it).
            X_parts = dask.compute(*X[:sub].to_delayed().ravel())
            y_parts = dask.compute(*y[:sub].to_delayed().ravel())
            X_sub, y_sub = np.concatenate(X_parts), np.concatenate(y_parts)
            timed_fit(cases[0][1], X_sub, y_sub, 1)  # warm-up: the compiled loop's first call
            print(f"\n{'method':<6} {'fit (s)':>8} {'n_iter_':>7} {'s/iter':>8} {'in memory s/iter (all rows)':>28} "
                  f"{'ratio':>6}")
            for name, make, (a, b) in cases:
                if a is None:
                    memory = timed_fit(make, X_sub, y_sub, None, repeat=args.repeat)[0] * n / sub
                else:
                    m_a, n_a = timed_fit(make, X_sub, y_sub, a, repeat=args.repeat)
                    m_b, n_b = timed_fit(make, X_sub, y_sub, b, repeat=args.repeat)
                    memory = (m_b - m_a) / (n_b - n_a) * n / sub
                fit_time, n_iter, per_iter = on_dask[name]
                print(f"{name:<6} {fit_time:8.2f} {n_iter:7d} {per_iter:8.3f} {memory:28.3f} {per_iter / memory:6.2f}")
            print(f"\nclient peak RSS during the dask fits: {rss_fits / 1e9:.2f} GB (after persisting X: "
                  f"{rss_before / 1e9:.2f} GB); X.nbytes = {X.nbytes / 1e9:.2f} GB. In-memory rows: 1/4 of X "
                  f"({X_sub.nbytes / 1e9:.2f} GB), times scaled by 4.")
        finally:
            client.close()
            cluster.close()
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
