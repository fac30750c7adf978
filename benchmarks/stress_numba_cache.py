"""Stress test: hundreds of processes sharing ONE numba cache over time, in several configurations.

``stress_cold_start.py`` gives every round a new, empty cache; the crash of 2026-11-28 needed a cache that
earlier processes had filled (one process cached the threaded Ho–Kashyap pass, a later one compiled another
segment over it, and the process after that loaded that segment alone: SIGSEGV).  This script keeps one
``NUMBA_CACHE_DIR`` for the whole run:

1. **Writers.**  ``--processes`` fresh processes, ``--jobs`` at a time, each in one of the configurations of
   :data:`CONFIGS` (numba threads 1, 2 and 4, BLAS threads 1 and 2, hash seeds, a second interpreter given with
   ``--python``, and ``linsep warm-up`` racing the fits), each running a random handful of the compiled
   variants of :data:`VARIANTS` (every compiled loop: the Ho–Kashyap segment by columns, by rows, in chunks,
   on 3 threads, squared and absolute errors, float64 and float32; the LSVM pass likewise; the perceptron,
   LMS, Kozinec and SK loops) in a random order: they compile into the cache, or load what the others wrote.
2. **Readers.**  Then, for every variant and configuration, a fresh process over the same cache runs that
   variant alone (so nothing else has started numba's threads or compiled a callee first).
3. **References.**  One process per configuration with a cache of its own, empty: a fresh compile of every
   variant.

Every process's exit code is recorded (negative: killed by that signal, -11 = SIGSEGV), and every writer's
and reader's result is compared bit for bit with the fresh compile's of its configuration.  Exit status 1 if
any process crashed or failed or any result differed.

    python benchmarks/stress_numba_cache.py                          # 200 writers, 2 at a time: ~15 min
    python benchmarks/stress_numba_cache.py --python /other/venv/bin/python   # a second environment too
    python benchmarks/stress_numba_cache.py --quick                  # CI's form: ~1 min
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

from stress_cold_start import _digest, _signal_name  # the same digest of a fit and name of a signal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (kind, arguments).  "hk": ho_kashyap(loss, dtype, n, d, threads, by_columns) on one design with
# validation rows; "lsvm": lagrangian_svm(dtype, n, d, threads); "est": make_classifier(name).fit on dense data.
SMALL, CHUNKED = (600, 5), (70_000, 4)  # CHUNKED: over 2^18 entries, the pass sums its rows in chunks
VARIANTS = {}
for _loss in ("squared", "absolute"):
    for _dtype in ("float64", "float32"):
        VARIANTS[f"hk {_loss} {_dtype} by columns"] = ("hk", (_loss, _dtype, *SMALL, 1, True))
        for _size, _label in ((SMALL, "by rows"), (CHUNKED, "in chunks")):
            for _threads in (1, 3):
                VARIANTS[f"hk {_loss} {_dtype} {_label} threads={_threads}"] = (
                    "hk", (_loss, _dtype, *_size, _threads, False))
for _dtype in ("float64", "float32"):
    for _size, _label in ((SMALL, "small"), (CHUNKED, "chunks")):
        for _threads in (1, 3):
            VARIANTS[f"lsvm {_dtype} {_label} threads={_threads}"] = ("lsvm", (_dtype, *_size, _threads))
    for _method in ("perceptron", "batch_perceptron", "lms", "widrow_hoff", "kozinec", "sk", "kernel_perceptron",
                    "kernel_sk"):
        VARIANTS[f"{_method} {_dtype}"] = ("est", (_method, _dtype))
# CI's form: the squared- and absolute-error segments by rows on 3 threads, float64 (the report's crash)
QUICK_VARIANTS = [name for name in VARIANTS if name.startswith("hk") and name.endswith("float64 by rows threads=3")]

# name -> (environment, writer runs linsep warm-up instead of variants).  "python2": the second interpreter.
CONFIGS = {
    "threads1": {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    "threads2": {"NUMBA_NUM_THREADS": "2", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    "threads4-blas2": {"NUMBA_NUM_THREADS": "4", "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2",
                       "PYTHONHASHSEED": "12345"},
    "python2": {"NUMBA_NUM_THREADS": "2", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
}


# ----------------------------------------------------------------------------------------------- child


def _data(dtype, n, d, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = np.where(X[:, 0] + 0.4 * rng.standard_normal(n) > 0.1, 1.0, -1.0)
    return X, y


def run_variant(name):
    """Run one variant and return a digest of what it computed."""
    import warnings

    import numpy as np

    kind, args = VARIANTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "hk":
            from linsep._core.signed_design import SignedDesign
            from linsep.solvers.ho_kashyap.solver import ho_kashyap

            loss, dtype, n, d, threads, by_columns = args
            X, y = _data(dtype, n, d)
            val = np.arange(1, n, 4)  # held-out rows of the same X (HKES's layout): merged into the pass
            fit = np.setdiff1d(np.arange(n), val)
            plan = {"driver": "compiled", "threads": threads}
            if not by_columns:
                plan["by_columns_max_entries"] = 0
            run = ho_kashyap(SignedDesign(X, y[fit], fit), Y_val=SignedDesign(X, y[val], val), loss=loss, C=0.5,
                             max_iter=25, plan=plan)
            assert run.extra["plan"]["driver"] == "compiled", run.extra["plan"]
            return _digest(run.weights, run.margin)
        if kind == "lsvm":
            from linsep.solvers.lsvm.solver import lagrangian_svm

            dtype, n, d, threads = args
            X, y = _data(dtype, n, d)
            run = lagrangian_svm(X, y, C=1.0, max_iter=40, plan={"threads": threads})
            return _digest(run.weights)
        from linsep import make_classifier

        method, dtype = args
        X, y = _data(dtype, 120, 3)
        params = make_classifier(method).get_params()
        model = make_classifier(method, **({"max_iter": 30} if "max_iter" in params else {}),
                                **({"random_state": 0} if "random_state" in params else {})).fit(X, y)
        return _digest(model.decision_function(X))


def _compiled_in_this_process():
    """How many signatures linsep's dispatchers compiled here (0: everything came from the disk cache)."""
    from linsep._core.numba_cache import _cached_dispatchers

    return sum(sum(d.stats.cache_misses.values()) for d in _cached_dispatchers())


def child(names, warm_up):
    import linsep._core.threads as threads

    threads._machine_busy = lambda: False  # the stress run loads the machine: let the threaded passes run
    results = {}
    if warm_up:
        from linsep.warmup import warm_up as run_warm_up

        run_warm_up(progress=False, parallel=True)
    for name in names:
        results[name] = run_variant(name)
    print(json.dumps({"results": results, "compiled": _compiled_in_this_process()}))


# ---------------------------------------------------------------------------------------------- parent


def _launch(python, config, cache, names, warm_up=False):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONFAULTHANDLER="1", **CONFIGS[config])
    env.pop("NUMBA_DISABLE_JIT", None)
    # a second interpreter imports linsep from this checkout (not from wherever it was installed)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(ROOT, "src"), env.get("PYTHONPATH")]))
    cmd = [python, os.path.abspath(__file__), "--child", json.dumps(names)] + (["--warm-up"] if warm_up else [])
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _run_all(tasks, jobs, timeout, label):
    """Run ``tasks`` (dicts with python, config, cache, names, warm_up) ``jobs`` at a time; return records."""
    records, running, queue = [], [], list(tasks)
    while queue or running:
        while queue and len(running) < jobs:
            task = queue.pop(0)
            running.append((task, time.perf_counter(),
                            _launch(task["python"], task["config"], task["cache"], task["names"], task["warm_up"])))
        time.sleep(0.05)
        for item in list(running):
            task, start, proc = item
            if proc.poll() is None and time.perf_counter() - start < timeout:
                continue
            running.remove(item)
            if proc.poll() is None:
                proc.kill()
            out, err = proc.communicate()
            code = proc.returncode if time.perf_counter() - start < timeout else "timeout"
            info = next((json.loads(line) for line in reversed(out.splitlines()) if line.startswith("{")), {})
            record = {**{k: v for k, v in task.items() if k != "cache"}, "phase": label, "code": code,
                      "seconds": round(time.perf_counter() - start, 2), "results": info.get("results", {}),
                      "compiled": info.get("compiled"), "stderr": err[-1500:] if code != 0 else ""}
            records.append(record)
            if code != 0:
                print(f"  {label} {task['config']} {task['names'] if not task['warm_up'] else 'warm-up'}: "
                      f"exit {code} {_signal_name(code)}\n    " + "\n    ".join(err[-1500:].splitlines()[-12:]),
                      flush=True)
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=200, help="writer processes (default 200)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at once (default 2)")
    parser.add_argument("--python", default=None,
                        help="a second interpreter (another virtual environment with linsep's dependencies) "
                             "for the 'python2' configuration (default: this one)")
    parser.add_argument("--quick", action="store_true",
                        help="CI's form: 8 writers over the two threaded float64 Ho–Kashyap variants, every "
                             "configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a process may run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child), args.warm_up)
        return 0
    rng = random.Random(args.seed)
    variants = QUICK_VARIANTS if args.quick else list(VARIANTS)
    processes = 8 if args.quick else args.processes
    pythons = {config: (args.python or sys.executable) if config == "python2" else sys.executable
               for config in CONFIGS}
    work = tempfile.mkdtemp(prefix="linsep-cache-stress-")
    shared = os.path.join(work, "shared")
    os.makedirs(shared)
    print(f"{processes} writers, then {len(variants) * len(CONFIGS)} readers ({len(variants)} variants x "
          f"{len(CONFIGS)} configurations), {args.jobs} at a time, over one NUMBA_CACHE_DIR {shared}; "
          f"then {len(CONFIGS)} fresh compiles; interpreters: {sorted(set(pythons.values()))}", flush=True)
    start = time.perf_counter()
    configs = list(CONFIGS)
    writers = []
    for k in range(processes):
        config = configs[k % len(configs)]
        warm_up = not args.quick and k % 25 == 7  # linsep warm-up racing the fits now and then
        names = rng.sample(variants, min(len(variants), rng.randint(1, 6)))
        writers.append({"python": pythons[config], "config": config, "cache": shared, "names": names,
                        "warm_up": warm_up})
    # The first writer runs one variant alone: later writers find its callees in the cache and compile the other
    # variants over them (the order of the crash of 2026-11-28, made sure of rather than left to the draw).
    writers[0]["names"] = ["hk absolute float64 by rows threads=3"]
    records = _run_all(writers[:1], 1, args.timeout, "writer") + _run_all(writers[1:], args.jobs, args.timeout,
                                                                          "writer")
    print(f"writers done in {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    readers = [{"python": pythons[config], "config": config, "cache": shared, "names": [name], "warm_up": False}
               for name in variants for config in configs]
    rng.shuffle(readers)
    records += _run_all(readers, args.jobs, args.timeout, "reader")
    print(f"readers done in {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    references = [{"python": pythons[config], "config": config, "cache": os.path.join(work, f"fresh-{config}"),
                   "names": variants, "warm_up": False} for config in configs]
    records += _run_all(references, args.jobs, args.timeout, "fresh")
    total = time.perf_counter() - start

    fresh = {rec["config"]: rec["results"] for rec in records if rec["phase"] == "fresh"}
    mismatches = collections.Counter()
    compared = collections.Counter()
    for rec in records:
        if rec["phase"] == "fresh":
            continue
        for name, digest in rec["results"].items():
            compared[rec["phase"]] += 1
            if fresh.get(rec["config"], {}).get(name) != digest:
                mismatches[rec["phase"]] += 1
                print(f"  differs from a fresh compile: {rec['phase']} {rec['config']} {name}", flush=True)
    crashed = [rec for rec in records if rec["code"] != 0]
    readers_loaded = sum(1 for rec in records if rec["phase"] == "reader" and rec["compiled"] == 0)
    print(f"\nSummary: {len(records)} processes in {total / 60:.1f} min, up to {args.jobs} at once, one shared cache")
    print(f"{'phase':<8s} {'config':<15s} {'runs':>5s}  exit codes")
    table = collections.defaultdict(collections.Counter)
    for rec in records:
        table[(rec["phase"], rec["config"])][rec["code"]] += 1
    for (phase, config), codes in sorted(table.items()):
        shown = ", ".join(f"{c}{' (' + _signal_name(c) + ')' if _signal_name(c) else ''}: {n}"
                          for c, n in sorted(codes.items(), key=str))
        print(f"{phase:<8s} {config:<15s} {sum(codes.values()):>5d}  {shown}")
    print(f"warm-ups racing the fits: {sum(1 for rec in records if rec['warm_up'])}")
    print(f"readers that loaded everything from the shared cache (compiled nothing): {readers_loaded} of "
          f"{sum(1 for rec in records if rec['phase'] == 'reader')}")
    print(f"results compared with a fresh compile of their configuration: {dict(compared)}; "
          f"differing: {dict(mismatches) or 0}")
    print(f"crashed or failed processes: {len(crashed)}")
    with open(os.path.join(work, "records.json"), "w") as f:
        json.dump(records, f, indent=1)
    print(f"records: {os.path.join(work, 'records.json')}")
    return 1 if crashed or mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
