"""Where the compiled Ho–Kashyap segment pays for itself: its iterations against the Python driver's.

The fit plan (``linsep.solvers.ho_kashyap.solver``) hands a dense fit to the compiled
segment unless one of these measurements says the Python driver is as good:

* toy problems (fewer than ``COMPILED_MIN_ENTRIES`` entries of ``Y``): a whole
  fit takes milliseconds in Python, less than loading compiled code;
* IRLS (``loss="absolute"``) on ``Y`` wider than ``COMPILED_IRLS_MAX_COLUMNS``
  columns: each iteration refactors ``YᵀDY``, and LAPACK's Cholesky beats the
  segment's scalar one;
* the kernel HK family (``--kernel``): the kernel map is most of the fit.

Prints, for each shape and loss, the time of one iteration with each driver
(``max_iter`` iterations minus a fit with ``max_iter=0``, best of ``--repeat``)
and their ratio (Python / compiled: above 1, the compiled segment is faster).
With ``--kernel``, whole fits of the kernel estimators with either driver.
The compiled code is compiled before anything is timed.  Run with one BLAS
thread (``OMP_NUM_THREADS=1``) to compare the drivers' own work::

    OMP_NUM_THREADS=1 python benchmarks/bench_hk_drivers.py [--repeat 3] [--max-iter 100] [--kernel]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from linsep._core.signed_design import sign_normalized
from linsep.solvers.ho_kashyap.solver import ho_kashyap

SHAPES = [(150, 4), (500, 10), (2000, 20), (2000, 100), (2000, 128), (20000, 20), (20000, 128), (2000, 600),
          (10000, 600), (1000, 1000)]


def per_iteration(Y, driver, loss, max_iter, repeat):
    """Seconds per iteration of ``driver`` on ``Y`` (the fit's set-up, a fit with ``max_iter=0``, subtracted)."""
    kw = dict(tol=0.0, stopping="paper", C=1.0, loss=loss, stop_at_separation=False, plan={"driver": driver})
    ho_kashyap(Y, max_iter=2, **kw)  # compiled (or loaded) before the timing
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        ho_kashyap(Y, max_iter=0, **kw)
        set_up = time.perf_counter() - start
        start = time.perf_counter()
        ho_kashyap(Y, max_iter=max_iter, **kw)
        best = min(best, (time.perf_counter() - start - set_up) / max_iter)
    return best


def kernel_fits(repeat):
    """Whole fits of the kernel HK estimators, the Python driver against the compiled segment."""
    import functools

    import linsep.solvers.ho_kashyap.kernel as kernel_module
    from linsep import make_classifier

    solver = kernel_module.ho_kashyap
    rng = np.random.default_rng(0)
    for n in (1000, 2000):
        X = rng.normal(size=(n, 20))
        y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
        for name in ("kernel_hk", "kernel_hkes", "kernel_hkes_cv"):
            times = {}
            for driver in ("compiled", "python"):
                # The kernel solver asks for the Python driver; its private plan is overridden here alone.
                kernel_module.ho_kashyap = functools.partial(solver, plan={"driver": driver})
                try:
                    make_classifier(name, random_state=0).fit(X, y)
                    best = np.inf
                    for _ in range(repeat):
                        start = time.perf_counter()
                        make_classifier(name, random_state=0).fit(X, y)
                        best = min(best, time.perf_counter() - start)
                finally:
                    kernel_module.ho_kashyap = solver
                times[driver] = best
            print(f"{name:15s} N={n:5d}  compiled {times['compiled']:7.3f} s  python {times['python']:7.3f} s  "
                  f"python / compiled {times['python'] / times['compiled']:5.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--kernel", action="store_true", help="whole kernel HK fits instead of iterations")
    args = parser.parse_args()
    if args.kernel:
        kernel_fits(args.repeat)
        return
    rng = np.random.default_rng(0)
    print("one iteration (ms): compiled, python, python / compiled")
    for n, d in SHAPES:
        X = rng.normal(size=(n, d))
        y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
        Y = sign_normalized(X, y)
        for loss in ("squared", "absolute"):
            compiled = per_iteration(Y, "compiled", loss, args.max_iter, args.repeat)
            python = per_iteration(Y, "python", loss, args.max_iter, args.repeat)
            print(f"{n:6d} x {d:4d}  {loss:8s}  {1e3 * compiled:9.3f}  {1e3 * python:9.3f}  {python / compiled:6.2f}")


if __name__ == "__main__":
    main()
