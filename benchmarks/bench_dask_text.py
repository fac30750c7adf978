"""Dask for text (issue 32): an iteration on sparse TF-IDF chunks and on 10 000-feature dense chunks, against memory.

    PYTHONPATH=src python benchmarks/bench_dask_text.py [--quick] [--docs 15000] [--dense-rows 4000] [--repeat 3]
    PYTHONPATH=src python benchmarks/bench_dask_text.py --problems dense --max-iter 60

A ``distributed.LocalCluster`` with 2 worker processes (one thread each).  Two problems, each fitted by
``HoKashyapClassifier(C=1)`` (MHKS) and ``LagrangianSVMClassifier(C=1)``, in memory and on dask:

* **sparse**: ``linsep.datasets.make_topic_corpus`` (2 topics), ``TfidfVectorizer(min_df=2,
  sublinear_tf=True)``; the CSR rows are scattered to the workers in 4 blocks (``client.scatter``, then
  ``da.from_delayed``: the data never travel inside a task graph);
* **dense wide**: ``--dense-rows`` × 10 000 standard normal entries drawn on the workers
  (``dask.array.random``, 4 row chunks), labelled by a noisy linear rule; the in-memory twin is that
  array computed to the client.

Both are wider than the direct factorisation takes (``d + 1 > 2000``): the W-steps are conjugate gradients,
in memory and on dask (each product one pass over the blocks, no ``(d+1)²`` Gram matrix).  The time of an
iteration is the difference of two fits' times (``max_iter`` 3 and 8) over the difference of their
iterations (set-up and checks cancel), each the best of ``--repeat`` fits; the table gives it on dask,
in memory, and their ratio.  Then each method is fitted to convergence (default ``max_iter``) on dask and in
memory: ``gap`` is the largest relative difference of their weights, beside ``gap (rows permuted)``, that of two
in-memory fits whose rows come in another order: the same problem summed in another order, which bounds how
closely any two implementations can agree (inexact W-steps carry rounding differences into the iterates).
"""

import argparse
import os
import warnings

import numpy as np
from bench_dask import timed_fit  # the same timing as the large-data benchmark (this folder is on sys.path)
from sklearn.exceptions import ConvergenceWarning

SHORT, LONG = 3, 8


def per_iteration(make, X, y, repeat):
    """Seconds per iteration: ``max_iter`` LONG against SHORT, each the best of ``repeat`` fits (bench_dask's timing)."""
    (short, short_iter), (long, long_iter) = (timed_fit(make, X, y, max_iter, repeat) for max_iter in (SHORT, LONG))
    return (long - short) / max(int(np.max(long_iter) - np.max(short_iter)), 1)


def relative_gap(a, b):
    Wa, Wb = np.column_stack([a.coef_, a.intercept_]), np.column_stack([b.coef_, b.intercept_])
    return float((np.abs(Wa - Wb).max(axis=1) / np.abs(Wa).max(axis=1)).max())


def sparse_problem(client, n_docs, blocks=4):
    import dask
    import dask.array as da
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer

    from linsep.datasets import make_topic_corpus

    docs, y = make_topic_corpus(n_docs, 2, random_state=0)
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs).tocsr()
    bounds = np.linspace(0, X.shape[0], blocks + 1).astype(int)
    parts = [X[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    futures = client.scatter(parts)
    Xd = da.concatenate([da.from_delayed(dask.delayed(f), shape=part.shape, dtype=np.float64,
                                         meta=sp.csr_matrix((0, X.shape[1])))
                         for f, part in zip(futures, parts)])
    return X, Xd, y


def dense_problem(n_rows, n_features=10_000, blocks=4):
    import dask.array as da

    rs = da.random.RandomState(0)
    Xd = rs.standard_normal((n_rows, n_features), chunks=(n_rows // blocks, n_features)).persist()
    w = np.random.default_rng(1).standard_normal(n_features) / np.sqrt(n_features)
    noise = rs.standard_normal(n_rows, chunks=(n_rows // blocks,))
    y = ((Xd @ w + 0.5 * noise) > 0).astype(int).compute()
    return Xd.compute(), Xd, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 000 documents, 1 000 dense rows")
    parser.add_argument("--docs", type=int, default=15_000)
    parser.add_argument("--dense-rows", type=int, default=4_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--problems", nargs="+", default=["sparse", "dense"], choices=["sparse", "dense"])
    parser.add_argument("--max-iter", type=int, default=None,
                        help="budget of the fits compared for the gap (default: the estimators'; MHKS on the dense "
                             "problem, d > N, runs hundreds of iterations)")
    args = parser.parse_args()
    if args.quick:
        args.docs, args.dense_rows, args.repeat = 3000, 1000, 1
    logging_quiet()
    from distributed import Client, LocalCluster

    from linsep import HoKashyapClassifier, LagrangianSVMClassifier

    methods = {"mhks": lambda m=None: HoKashyapClassifier(C=1.0, **({} if m is None else {"max_iter": m})),
               "lsvm": lambda m=None: LagrangianSVMClassifier(C=1.0, **({} if m is None else {"max_iter": m}))}
    print(f"bench_dask_text: load {os.getloadavg()[0]:.2f}; 2 worker processes; iteration = fit({LONG}) − "
          f"fit({SHORT}) over the iterations between; best of {args.repeat}")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        problems = {}
        if "sparse" in args.problems:
            problems["sparse"] = sparse_problem(client, args.docs)
        if "dense" in args.problems:
            problems["dense wide"] = dense_problem(args.dense_rows)
        print(f"{'problem':<11} {'shape':>16} {'method':>6} {'dask s/it':>10} {'memory s/it':>12} {'ratio':>6} "
              f"{'n_iter':>7} {'gap':>8} {'gap (rows permuted)':>20}")
        for problem, (X, Xd, y) in problems.items():
            order = np.random.default_rng(0).permutation(X.shape[0])
            for name, make in methods.items():
                on_dask = per_iteration(make, Xd, y, args.repeat)
                in_memory = per_iteration(make, X, y, args.repeat)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    memory_model, dask_model = make(args.max_iter).fit(X, y), make(args.max_iter).fit(Xd, y)
                    permuted = make(args.max_iter).fit(X[order], y[order])
                print(f"{problem:<11} {str(X.shape):>16} {name:>6} {on_dask:10.4f} {in_memory:12.4f} "
                      f"{on_dask / in_memory:6.1f} {int(np.max(dask_model.n_iter_)):7d} "
                      f"{relative_gap(memory_model, dask_model):8.1e} {relative_gap(memory_model, permuted):20.1e}",
                      flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")


def logging_quiet():
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)


if __name__ == "__main__":
    main()
