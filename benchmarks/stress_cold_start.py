"""Stress test: many fresh processes compiling linsep's Ho–Kashyap loops at once into one empty numba cache.

Issue 29 reported one segmentation fault inside ``solvers/_hk_compiled.py:_run_segments`` (dense float32
MHKS, 10 000 × 256, 4 classes) right after another process had compiled into the same numba cache.  This
script runs ``--processes`` fresh Python processes, ``--jobs`` at a time; each group of ``--jobs``
processes (a *round*) shares one new, empty ``NUMBA_CACHE_DIR``, so every fit in it is a cold start and
the processes race on the same cache files (the same signatures when the round runs one scenario in
every process, different signatures of the same functions when it mixes scenarios; some processes start
a little late, so that they load entries the others are writing).  Each process runs one scenario (a few
dense float32/float64 fits of MHKS, HK and MHKA: by columns, by rows, in chunks, on numba threads, with
merged validation rows), on one numba/OpenMP thread or two (then with ``_machine_busy`` patched off so the
threaded passes run on a loaded machine), and prints a digest of every fitted model.

It records every child's exit code (negative: killed by that signal, -11 = SIGSEGV), its stderr tail,
and checks that every fit of one kind gave the same bits in every process (a process running code
compiled for another signature may return garbage instead of crashing).  Exit status 1 if any child
crashed, failed or disagreed.

    python benchmarks/stress_cold_start.py                       # 100 processes, 2 at a time
    python benchmarks/stress_cold_start.py --jobs 4 --processes 40
    python benchmarks/stress_cold_start.py --boundscheck         # NUMBA_BOUNDSCHECK=1: bad indices raise
    python benchmarks/stress_cold_start.py --report-shape        # the report's 10 000 × 256 float32 MHKS

``--boundscheck`` compiles every loop with numba's bounds checks (an out-of-bounds index raises
IndexError instead of reading or corrupting memory), the tool to find a bad loop bound or buffer index.
A full default run takes about 10-15 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Each scenario: the fits one child runs, in order.  ("est", method, dtype, n, d, classes): the public
# estimator, make_classifier(method, max_iter=...).fit; ("solver", loss, dtype, n, d, threads): the
# solver on a row subset with merged validation rows (HKES's layout) and a forced by-rows plan.
BIG = (4000, 128)  # 512 k entries: by rows, 4 chunks, threaded when numba has 2 threads
SMALL = (400, 12)  # by columns
SCENARIOS = {
    "mhks-f32": [("est", "mhks", "float32", *BIG, 4)],
    "mhks-f64": [("est", "mhks", "float64", *BIG, 4)],
    "hk-f32": [("est", "hk", "float32", *BIG, 3)],
    "hk-f64": [("est", "hk", "float64", *BIG, 3)],
    "mhka-f32": [("est", "mhka", "float32", *BIG, 2)],
    "mhka-f64": [("est", "mhka", "float64", *BIG, 2)],
    "small": [("est", "mhks", "float64", *SMALL, 3), ("est", "hk", "float32", *SMALL, 2),
              ("est", "mhka", "float64", *SMALL, 2)],
    "merged-f32": [("solver", "squared", "float32", 6000, 64, None), ("solver", "absolute", "float32", 6000, 64, None)],
    "merged-f64": [("solver", "squared", "float64", 6000, 64, None)],
    # two Python threads fitting at once in one process (parallel launches from two threads; the
    # second compiles while the first runs)
    "pythreads": [("threads", ("est", "mhks", "float32", *BIG, 4), ("est", "mhks", "float64", *BIG, 4))],
}
REPORT = {"report": [("est", "mhks", "float32", 10_000, 256, 4)]}
MAX_ITER = 30
THREADED = False  # set in a child run with 2 threads


# ----------------------------------------------------------------------------------------------- child


def _data(dtype, n, d, classes, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = np.argmax(X[:, :classes] + 0.5 * rng.standard_normal((n, classes)), axis=1) if classes > 2 else \
        (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def _digest(*arrays):
    import numpy as np

    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
    return h.hexdigest()[:16]


def _threads_of(plans):
    """The largest thread count the fit's plans record (1 if none)."""
    threads = [plan.get("threads", 1) for plan in (plans or []) if isinstance(plan, dict)]
    return max([t for t in threads if isinstance(t, int)] or [1])


def _run_fit(fit):
    import warnings

    kind = fit[0]
    if kind == "threads":
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(fit) - 1) as pool:
            return [d for part in pool.map(_run_fit, fit[1:]) for d in part]
    if kind == "est":
        from linsep import make_classifier

        _, method, dtype, n, d, classes = fit
        X, y = _data(dtype, n, d, classes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make_classifier(method, max_iter=MAX_ITER).fit(X, y)
        return [(f"{method} {dtype} {n}x{d} c{classes}", _digest(model.coef_, model.intercept_),
                 _threads_of(getattr(model, "_fit_plans", None)))]
    if kind == "solver":
        import numpy as np

        from linsep._core.signed_design import SignedDesign
        from linsep.solvers.ho_kashyap.solver import ho_kashyap

        _, loss, dtype, n, d, threads = fit
        X, y = _data(dtype, n, d, 2)
        y = np.where(y > 0, 1.0, -1.0)
        fit_rows, val_rows = np.arange(0, n, 2), np.arange(1, n, 2)
        plan = {"driver": "compiled", "by_columns_max_entries": 0}
        if threads is not None or THREADED:
            plan["threads"] = threads or 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows), C=0.5, loss=loss, max_iter=MAX_ITER,
                             Y_val=SignedDesign(X, y[val_rows], val_rows), plan=plan)
        return [(f"solver {loss} {dtype} {n}x{d}", _digest(res.weights), _threads_of([res.extra.get("plan")]))]
    raise ValueError(kind)


def child(scenario, threaded):
    global THREADED
    THREADED = threaded
    if threaded:
        # The threaded passes run only on a machine with an idle core; this one is loaded by the stress
        # test itself, so say it is idle.
        import linsep._core.threads as th

        th._machine_busy = lambda: False
    t0 = time.perf_counter()
    results = []
    for fit in ({**SCENARIOS, **REPORT})[scenario]:
        results.extend(_run_fit(fit))
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel region ran
        layer = None
    print(json.dumps({"results": results, "seconds": time.perf_counter() - t0, "layer": layer,
                      "numba_threads": numba.get_num_threads()}))


# ---------------------------------------------------------------------------------------------- parent


def _launch(scenario, threaded, cache, boundscheck, log):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONFAULTHANDLER="1")
    threads = "2" if threaded else "1"
    # BLAS limits cap linsep's pass threads (linsep._core.threads.pass_threads): the same count for both
    env.update(NUMBA_NUM_THREADS=threads, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    if boundscheck:
        env["NUMBA_BOUNDSCHECK"] = "1"
    cmd = [sys.executable, os.path.abspath(__file__), "--child", scenario] + (["--threaded"] if threaded else [])
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=log, text=True)


def _signal_name(code):
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return ""


def plan_rounds(processes, jobs, scenarios, seed):
    """Rounds of ``jobs`` (scenario, threaded, delay) triples: alternately one scenario in every process
    (the same signatures racing) and different scenarios (different signatures of the same functions)."""
    rng = random.Random(seed)
    rounds = []
    made = 0
    r = 0
    while made < processes:
        size = min(jobs, processes - made)
        if r % 2 == 0:
            names = [scenarios[(r // 2) % len(scenarios)]] * size
        else:
            names = rng.sample(scenarios, size) if size <= len(scenarios) else rng.choices(scenarios, k=size)
        threaded = (r // 2) % 2 == 1  # pairs of rounds alternate 1 and 2 threads
        delays = [0.0] + [rng.choice([0.0, 0.0, 0.5, 1.5, 3.0]) for _ in range(size - 1)]
        rounds.append([(name, threaded, delay) for name, delay in zip(names, delays)])
        made += size
        r += 1
    return rounds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=100, help="fresh processes in all (default 100)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at once, sharing one cache (default 2, max 4)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help="comma-separated scenarios to draw from (default all): " + ", ".join(SCENARIOS))
    parser.add_argument("--report-shape", action="store_true",
                        help="every process fits the report's float32 MHKS, 10 000 × 256, 4 classes")
    parser.add_argument("--threads", choices=["both", "1", "2"], default="both",
                        help="numba/OpenMP threads per process (default: alternate rounds of 1 and 2)")
    parser.add_argument("--boundscheck", action="store_true", help="NUMBA_BOUNDSCHECK=1 in every child")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a child may run")
    parser.add_argument("--keep-cache", action="store_true", help="keep each round's cache folder")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--threaded", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.threaded)
        return 0
    if not 1 <= args.jobs <= 4:
        parser.error("--jobs must be 1 to 4 (this machine has few cores)")
    scenarios = ["report"] if args.report_shape else args.scenarios.split(",")
    rounds = plan_rounds(args.processes, args.jobs, scenarios, args.seed)
    if args.threads != "both":
        rounds = [[(name, args.threads == "2", delay) for name, _, delay in rnd] for rnd in rounds]
    work = tempfile.mkdtemp(prefix="linsep-stress-")
    print(f"{args.processes} processes in {len(rounds)} rounds of up to {args.jobs}, each round with a new empty "
          f"NUMBA_CACHE_DIR under {work}; boundscheck={'on' if args.boundscheck else 'off'}", flush=True)
    records = []
    start = time.perf_counter()
    for r, rnd in enumerate(rounds):
        cache = os.path.join(work, f"cache-{r:03d}")
        os.makedirs(cache)
        procs = []
        t_round = time.perf_counter()
        for k, (name, threaded, delay) in enumerate(sorted(rnd, key=lambda item: item[2])):
            wait = delay - (time.perf_counter() - t_round)
            if wait > 0:
                time.sleep(wait)
            log = open(os.path.join(work, f"r{r:03d}-p{k}.err"), "w+")
            procs.append((name, threaded, delay, log, time.perf_counter(), _launch(name, threaded, cache,
                                                                                   args.boundscheck, log)))
        for name, threaded, delay, log, t0, proc in procs:
            try:
                out, _ = proc.communicate(timeout=max(1.0, args.timeout - (time.perf_counter() - t0)))
                code = proc.returncode
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
                code = "timeout"
            log.seek(0)
            err = log.read()
            log.close()
            info = {}
            for line in reversed(out.splitlines()):
                if line.startswith("{"):
                    info = json.loads(line)
                    break
            records.append({"round": r, "scenario": name, "threads": 2 if threaded else 1, "delay": delay,
                            "code": code, "seconds": time.perf_counter() - t0, "results": info.get("results", []),
                            "layer": info.get("layer"), "stderr": err[-1500:]})
            status = "ok" if code == 0 else f"FAILED exit {code} {_signal_name(code) if code != 'timeout' else ''}"
            print(f"round {r:3d}  {name:<11s} threads={2 if threaded else 1} delay={delay:3.1f}s  "
                  f"{time.perf_counter() - t0:6.1f} s  {status}", flush=True)
            if code != 0:
                print("    stderr tail:\n      " + "\n      ".join(err[-1500:].splitlines()[-15:]), flush=True)
        if not args.keep_cache:
            shutil.rmtree(cache, ignore_errors=True)

    # Summary: exit codes per scenario and threads, and the digests of each kind of fit.
    total = time.perf_counter() - start
    print(f"\nSummary ({total / 60:.1f} min, {len(records)} processes, "
          f"{sum(len(rec['results']) for rec in records)} cold-start fits, up to {args.jobs} at once, "
          f"boundscheck={'on' if args.boundscheck else 'off'})")
    table = collections.defaultdict(collections.Counter)
    for rec in records:
        table[(rec["scenario"], rec["threads"])][rec["code"]] += 1
    print(f"{'scenario':<12s} {'threads':>7s} {'runs':>5s} {'fits':>5s}  exit codes")
    for (name, threads), codes in sorted(table.items()):
        runs = sum(codes.values())
        fits = sum(len(rec["results"]) for rec in records if rec["scenario"] == name and rec["threads"] == threads)
        shown = ", ".join(f"{c}{' (' + _signal_name(c) + ')' if isinstance(c, int) and c < 0 else ''}: {n}"
                          for c, n in sorted(codes.items(), key=str))
        print(f"{name:<12s} {threads:>7d} {runs:>5d} {fits:>5d}  {shown}")
    digests = collections.defaultdict(collections.Counter)
    for rec in records:
        for what, digest, _ in rec["results"]:
            digests[what][digest] += 1
    disagree = {what: dict(c) for what, c in digests.items() if len(c) > 1}
    layers = collections.Counter(rec["layer"] for rec in records)
    threaded_fits = sum(1 for rec in records for _, _, t in rec["results"] if t > 1)
    print(f"fits that ran a pass on 2 threads: {threaded_fits}")
    print(f"threading layers: {dict(layers)}")
    print(f"fit kinds: {len(digests)}; kinds whose processes disagree on the fitted bits: {len(disagree)}")
    for what, c in disagree.items():
        print(f"    {what}: {c}")
    crashed = [rec for rec in records if rec["code"] != 0]
    print(f"crashed or failed processes: {len(crashed)}")
    with open(os.path.join(work, "records.json"), "w") as f:
        json.dump(records, f, indent=1)
    print(f"records: {os.path.join(work, 'records.json')}")
    return 1 if crashed or disagree else 0


if __name__ == "__main__":
    sys.exit(main())
