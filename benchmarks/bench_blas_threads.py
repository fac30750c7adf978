"""BLAS threads and small fits: where threads pay, and what a busy machine does to small fits.

    python benchmarks/bench_blas_threads.py crossover     # idle machine: 1 vs all BLAS threads by size
    python benchmarks/bench_blas_threads.py load          # HKES on 10 splits of the nine IDA sets, busy machine
    python benchmarks/bench_blas_threads.py large         # a 10^6 x 100 dense fit, idle machine

``crossover``: for X of N x d (float64) the BLAS work of a Ho–Kashyap fit — the Gram matrix ``XᵀX``, the
economic QR of X (the rank-deficient path), the products ``X w`` and ``Xᵀ v`` — timed with one BLAS
thread and with all of them (threadpoolctl), medians of repeated calls.  Where all threads stop winning is
``linsep._core.threads.BLAS_SERIAL_MAX_ENTRIES``.

``load``: ``make_classifier("hkes", random_state=0)`` on ten splits of each of the nine data sets (the
paper's protocol, ``linsep.datasets.benchmark_splits``), in a child process with the default BLAS threads
and in one with ``OPENBLAS_NUM_THREADS=1``, while ``--busy`` CPU-bound processes (default twice the cores)
load the machine; alternated ``--rounds`` times, medians printed with their ratio (the goal: at most 1.5).

``large``: ``HoKashyapClassifier(C=1.0, max_iter=...)`` (MHKS) on a 10^6 x 100 float64 problem, median of
``--repeat`` fits, with the BLAS thread counts seen inside the fit: a fit that large keeps its threads.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np


def _median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def crossover(args):
    import scipy.linalg as sla
    from threadpoolctl import threadpool_info, threadpool_limits

    threads = max(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")
    print(f"BLAS threads available: {threads}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'N':>8s} {'d':>4s} {'entries':>10s}  {'work':<6s} {'1 thread':>10s} {f'{threads} threads':>10s} {'ratio':>6s}")
    rng = np.random.default_rng(0)
    for d in (5, 20, 60, 100):
        for n in (200, 1000, 5000, 20_000, 100_000, 400_000):
            X = rng.standard_normal((n, d + 1))
            w, v = rng.standard_normal(d + 1), rng.standard_normal(n)
            repeat = max(3, min(200, int(2e7 / (n * d))))
            work = {"gram": lambda: X.T @ X, "qr": lambda: sla.qr(X, mode="economic", check_finite=False),
                    "Xw": lambda: X @ w, "Xtv": lambda: X.T @ v}
            for name, fn in work.items():
                fn()
                with threadpool_limits(1, user_api="blas"):
                    one = _median_time(fn, repeat)
                many = _median_time(fn, repeat)
                print(f"{n:>8d} {d:>4d} {n * (d + 1):>10d}  {name:<6s} {one * 1e3:>9.3f}m {many * 1e3:>9.3f}m "
                      f"{many / one:>6.2f}", flush=True)


HKES_CHILD = """
import json, time, warnings
from linsep import make_classifier
from linsep.datasets import BENCHMARKS, benchmark_splits
from threadpoolctl import threadpool_info
splits = {name: list(benchmark_splits(name, n_splits=10)) for name in BENCHMARKS}
make_classifier("hkes", random_state=0).fit(*splits["heart"][0][:2])  # loads the compiled loop
t0 = time.perf_counter()
errors = []
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, parts in splits.items():
        for X, y, Xt, yt in parts:
            errors.append(1 - make_classifier("hkes", random_state=0).fit(X, y).score(Xt, yt))
seconds = time.perf_counter() - t0
blas = max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
print(json.dumps({"seconds": seconds, "mean_error": sum(errors) / len(errors), "blas_threads": blas}))
"""


def _spin(stop):
    x = 0
    while not stop.is_set():
        for i in range(100_000):
            x += i * i


def load(args):
    busy = args.busy if args.busy is not None else 2 * (os.cpu_count() or 1)
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(busy)]
    for proc in spinners:
        proc.start()
    time.sleep(args.settle)
    results = {"default": [], "one": []}
    try:
        for r in range(args.rounds):
            for label in ("default", "one"):
                env = dict(os.environ)
                for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                    env.pop(name, None)
                if label == "one":
                    env["OPENBLAS_NUM_THREADS"] = "1"
                run = subprocess.run([sys.executable, "-c", HKES_CHILD], env=env, capture_output=True, text=True,
                                     check=True)
                info = json.loads(run.stdout.splitlines()[-1])
                info["load"] = os.getloadavg()[0]
                results[label].append(info)
                print(f"round {r}: {label:<7s} BLAS threads {info['blas_threads']}: {info['seconds']:.3f} s "
                      f"(mean error {100 * info['mean_error']:.2f} %, load average {info['load']:.1f})", flush=True)
    finally:
        stop.set()
        for proc in spinners:
            proc.join()
    default = statistics.median(i["seconds"] for i in results["default"])
    one = statistics.median(i["seconds"] for i in results["one"])
    print(f"\nHKES, 10 splits x 9 sets, {busy} busy processes on {os.cpu_count()} cores: default BLAS threads "
          f"{default:.3f} s, OPENBLAS_NUM_THREADS=1 {one:.3f} s, ratio {default / one:.2f} (goal <= 1.5)")


def large(args):
    from threadpoolctl import threadpool_info

    from linsep import HoKashyapClassifier

    rng = np.random.default_rng(0)
    n, d = args.rows, args.columns
    X = rng.standard_normal((n, d))
    y = np.where(X[:, :5].sum(axis=1) + rng.standard_normal(n) > 0, 1, 0)
    seen = []
    from linsep.solvers.ho_kashyap.loops import ho_kashyap_segment as segment

    class ObservedSegment:  # the compiled segment, recording the BLAS threads it runs under
        def __getattr__(self, name):  # numba's dispatcher API, for linsep._core.compilation.prepare
            return getattr(segment, name)

        def __call__(self, *segment_args):
            seen.append(max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"))
            return segment(*segment_args)

    def fit():
        model = HoKashyapClassifier(C=1.0, max_iter=args.max_iter)
        model._solver_plan = {"segment": ObservedSegment()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        return model

    fit()  # loads the compiled loop
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - t0)
    print(f"MHKS on {n} x {d} float64, max_iter={args.max_iter}: median {statistics.median(times):.3f} s over "
          f"{args.repeat} fits ({', '.join(f'{t:.3f}' for t in times)}); {model.n_iter_} iterations; BLAS threads "
          f"inside the fit: {sorted(set(seen))}; load average {os.getloadavg()[0]:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("crossover")
    busy = sub.add_parser("load")
    busy.add_argument("--busy", type=int, default=None, help="CPU-bound processes (default: twice the cores)")
    busy.add_argument("--rounds", type=int, default=3)
    busy.add_argument("--settle", type=float, default=20.0, help="seconds for the load average to rise")
    big = sub.add_parser("large")
    big.add_argument("--rows", type=int, default=1_000_000)
    big.add_argument("--columns", type=int, default=100)
    big.add_argument("--max-iter", type=int, default=20)
    big.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    {"crossover": crossover, "load": load, "large": large}[args.what](args)


if __name__ == "__main__":
    main()
