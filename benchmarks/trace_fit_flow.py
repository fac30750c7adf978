"""How a fit travels through linsep's modules: functions, modules, calls and module crossings, traced.

    python benchmarks/trace_fit_flow.py                 # dense, sparse CSR and dask (two blocks)
    python benchmarks/trace_fit_flow.py --data dense    # one of them
    python benchmarks/trace_fit_flow.py --data dense --modules   # and what each module is visited for

``sys.setprofile`` records every Python call made inside ``HoKashyapClassifier(C=1.0).fit`` on a 200 × 5
problem (dask: the synchronous scheduler, so that every task runs in the traced thread), after one warm fit
(compiled code loaded, caches filled), as the architecture review traced it.  Only calls into linsep's own
modules count.  A *crossing* is a call whose module differs from the module of the previous linsep call;
*estimator ⇄ base* counts the crossings between the family's estimator module (``linsep.estimators.ho_kashyap``)
and ``linsep.estimators.base`` either way.  ``SignedDesign built`` counts the
calls of ``linsep._core.signed_design.SignedDesign.__init__`` during the fit (a dask fit should build its blocks'
designs once, not once per iteration).

The fit-flow redesign's targets (dense): at most 8 linsep modules and at most 6 estimator ⇄ base crossings; dask:
no SignedDesign rebuilt per iteration and at most 200 crossings.  Measured (issue 42; 133 iterates): dask 2324
crossings before the pass and chain moved into ``solvers/ho_kashyap/step.py``, 1024 after; 155 once no iterate
crossed a module (the Python driver beside the rules it applies in ``rules.py``, the chain's iterates handed over
as one list per round trip, the worker's W-step a LAPACK solve bound once per chain) and the dask design's
groups and chains joined ``designs/dask.py``; 6 SignedDesigns built.  Dense 58 crossings in 18 modules, sparse
676: see docs/performance_notes.md.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections import Counter

import numpy as np


def problem(kind):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(200) > 0).astype(int)
    if kind == "sparse":
        import scipy.sparse as sp

        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    elif kind == "dask":
        import dask.array as da

        X = da.from_array(X, chunks=(100, 5))
    return X, y


def trace_fit(kind):
    from linsep import HoKashyapClassifier

    X, y = problem(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        HoKashyapClassifier(C=1.0).fit(X, y)  # warm: compiled code loaded, caches filled

    calls, calls_named, functions, modules = [], [], set(), Counter()

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("linsep"):
            return
        name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
        calls.append(module)
        calls_named.append((module, name))
        functions.add((module, name))
        modules[module] += 1

    scheduler = contextlib.nullcontext()
    if kind == "dask":  # every task in this thread, where the profile function sees it
        import dask

        scheduler = dask.config.set(scheduler="synchronous")
    with warnings.catch_warnings(), scheduler:
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            HoKashyapClassifier(C=1.0).fit(X, y)
        finally:
            sys.setprofile(None)

    crossings = sum(a != b for a, b in zip(calls, calls[1:]))
    family, base = "linsep.estimators.ho_kashyap", "linsep.estimators.base"
    estimator_base = sum({a, b} == {family, base} for a, b in zip(calls, calls[1:]))
    signed_designs = calls_named.count(("linsep._core.signed_design", "SignedDesign.__init__"))
    return {"data": kind, "functions": len(functions), "modules": len(modules), "calls": len(calls),
            "crossings": crossings, "estimator_base": estimator_base, "signed_designs": signed_designs,
            "by_module": modules, "functions_by_module": functions}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=("dense", "sparse", "dask"), nargs="*",
                        default=["dense", "sparse", "dask"])
    parser.add_argument("--modules", action="store_true",
                        help="list the calls per module and the functions called there")
    args = parser.parse_args(argv)
    print(f"{'data':<7s} {'functions':>9s} {'modules':>7s} {'calls':>6s} {'crossings':>9s} "
          f"{'estimator⇄base':>14s} {'SignedDesign built':>18s}")
    for kind in args.data:
        try:
            row = trace_fit(kind)
        except ImportError as error:  # dask is an optional extra
            print(f"{kind:<7s} skipped: {error}")
            continue
        print(f"{row['data']:<7s} {row['functions']:>9d} {row['modules']:>7d} {row['calls']:>6d} "
              f"{row['crossings']:>9d} {row['estimator_base']:>14d} {row['signed_designs']:>18d}")
        if args.modules:
            for module, count in row["by_module"].most_common():
                names = sorted(name for where, name in row["functions_by_module"] if where == module)
                shown = ", ".join(name.replace(".<locals>", "") for name in names[:6])
                more = f" (+{len(names) - 6} more)" if len(names) > 6 else ""
                print(f"        {count:>6d}  {module}: {shown}{more}")


if __name__ == "__main__":
    main()
