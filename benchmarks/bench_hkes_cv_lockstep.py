"""A cross-validation wave's runs in lockstep against the same runs alone, on float32 views of ``X``.

    nice python benchmarks/bench_hkes_cv_lockstep.py [--n 200000] [--d 100] [--repeat 3]

Two measures on ``make_classification(n, d, random_state=0)`` rounded to float32, the first 80 % fitted:

* **one pass**: :func:`linsep.solvers.ho_kashyap.loops.lockstep_pass` for the five runs of a wave (five
  folds, ``X`` read once) against the compiled pass of each run alone
  (``linsep.solvers.ho_kashyap.loops._pass_by_rows_chunked``, five reads of ``X``), fastest of ``--repeat``;
* **one fit**: ``HoKashyapClassifierCV(Cs=[1.0])`` (one wave) with the lockstep and without it
  (``_lockstep_runs = False``), in one process after a fit that loads the compiled code; the two fits give the
  same model bit for bit (asserted).

The machine may be shared: the load averages are printed before and after.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import numpy as np
    from sklearn.datasets import make_classification

    from linsep import HoKashyapClassifierCV
    from linsep._core.threads import row_chunks
    from linsep.solvers.ho_kashyap.loops import _pass_by_rows_chunked, lockstep_pass
    from linsep.solvers.ho_kashyap.rows import LockstepParts, LockstepRuns

    print(f"N = {args.n} ({int(0.8 * args.n)} fitted), d = {args.d}, float32; load {os.getloadavg()[0]:.2f}",
          flush=True)
    X, y = make_classification(args.n, args.d, random_state=0)
    n_fit = int(0.8 * args.n)
    X, y = np.ascontiguousarray(X[:n_fit], dtype=np.float32), y[:n_fit]
    signs = np.where(y > 0, 1.0, -1.0).astype(np.float32)

    # one pass: five runs (folds) of one wave
    rng = np.random.default_rng(0)
    runs = 5
    fold_of = rng.integers(0, runs, n_fit).astype(np.int64)
    run_fold = np.arange(runs, dtype=np.int64)
    n_train = np.array([np.count_nonzero(fold_of != f) for f in run_fold], dtype=np.int64)
    p = args.d + 1
    W = rng.standard_normal((runs, p)) * 0.01
    B = np.ones((runs, int(n_train.max())), dtype=np.float32)
    E, B_next = np.zeros_like(B), np.zeros_like(B)
    chunks = row_chunks.py_func(int(n_train.max()), args.d)
    parts, reals = np.zeros((runs, chunks, p)), np.zeros((runs, chunks, 3))
    flags, counts = np.zeros((runs, chunks, 4), dtype=np.int64), np.zeros(runs, dtype=np.int64)
    active = np.arange(runs, dtype=np.int64)
    folds = [(np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in range(runs)]
    D = np.empty(0, dtype=np.float32)

    def together():
        lockstep_pass(X, signs, fold_of, active, LockstepRuns(W, B, E, B_next, n_train, np.ones(runs), run_fold),
                      LockstepParts(parts, reals, flags, counts), 0.2, 1e-6)

    def alone():
        for k, (train, validation) in enumerate(folds):
            n = n_train[k]
            _pass_by_rows_chunked(X, signs[train], train, W[k], B[k, :n], 1.0, 0.2, 1e-6, D, E[k, :n],
                                  B_next[k, :n], np.empty(p), signs[validation], validation)

    for name, call in (("lockstep pass, 5 runs", together), ("5 passes alone", alone)):
        call()  # compile or load
        best = min(_seconds(call) for _ in range(args.repeat))
        print(f"{name:>24}: {1e3 * best:7.1f} ms", flush=True)

    # one fit: a wave of five runs, with and without the lockstep
    warm = HoKashyapClassifierCV(Cs=[None, 1.0], max_iter=5, random_state=0)
    warm._fold_design = "views"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its five iterations do not converge: it only loads the code
        warm.fit(X[:20_000], y[:20_000])
    fits = {}
    for lockstep in (True, False):
        clf = HoKashyapClassifierCV(Cs=[1.0], random_state=0)
        clf._fold_design, clf._lockstep_runs = "views", lockstep
        seconds = _seconds(lambda: clf.fit(X, y))
        fits[lockstep] = clf
        print(f"{'fit, ' + ('lockstep' if lockstep else 'runs alone'):>24}: {seconds:7.2f} s "
              f"(fold iterations {int(clf.cv_results_['fold_n_iter'].sum())})", flush=True)
    assert np.array_equal(fits[True].coef_, fits[False].coef_)
    print(f"load {os.getloadavg()[0]:.2f}")


def _seconds(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
