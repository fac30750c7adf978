"""Sparse, high-dimensional text-like data: linsep's iterative W-step against scikit-learn.

A text-like problem: ``N = 2·10⁵`` documents, ``d = 5·10⁴`` terms, density
``2·10⁻⁴`` (about 10 terms per document), Zipf-like term frequencies,
tf-idf-like positive values (rows of unit norm), labels from a sparse linear
rule on 500 terms plus 5 % label noise; fixed seed, 80/20 split.  Fits
linsep's ``hk``, ``hkes``, ``mhks`` and ``lsvm`` (every one on the matrix-free
conjugate-gradient W-step: ``d + 1`` is far above the direct solver's 2000
columns) and scikit-learn's ``LinearSVC`` and ``RidgeClassifier(solver="sparse_cg")``.

``lsvm (C=2)`` and ``mhks (C=0.5)`` put the same weight on the squared margin violations against
``½‖w‖²`` as ``LinearSVC(C=1)`` (squared hinge loss, its bias penalised as a feature with ``intercept_scaling=1``):
the LSVM minimises ``½‖W‖² + (C/2)‖ξ‖²``, MHKS ``‖YW − B‖² + C‖w‖² ∝ ½‖w‖² + ‖YW − B‖²/(2C)``; at ``C = 1``
both are twice as regularised as ``LinearSVC(C=1)``.

Each fit runs in a fresh subprocess (the data are written once to a
temporary ``.npz``) that reports its fit time, its test error (compared with ``LinearSVC``'s row by row:
McNemar's exact test says whether the difference exceeds the test set's noise), ``n_iter`` /
``status``, the CG iterations per Ho–Kashyap iteration (and, without ``C``, how
the returned weights were mapped to the minimum norm) and the process's
peak resident memory (``ru_maxrss``; also its increase over the memory held
after loading the data).  Time ratios are against LinearSVC and Ridge in the
same run; the machine may be shared, so the load average is printed, and so are the CPU times
(``time.process_time``, all threads of the fit's process) and their ratios, which a loaded machine
disturbs far less than the wall-clock times.

    PYTHONPATH=src python benchmarks/bench_sparse_text.py            # full size (minutes)
    PYTHONPATH=src python benchmarks/bench_sparse_text.py --quick    # N = 10⁴, d = 3·10³ (seconds)
    PYTHONPATH=src python benchmarks/bench_sparse_text.py --problem zipf-frequent   # rare-signal, raw-counts
    PYTHONPATH=src python benchmarks/bench_sparse_text.py --threads 2   # linsep's products on 2 threads
    PYTHONPATH=src python benchmarks/bench_sparse_text.py --repeat 3    # each method's best of 3 rounds
    PYTHONPATH=src python benchmarks/bench_sparse_text.py --warm-up     # time each method's second fit

By default each timed fit is its process's first: it includes importing the estimator's modules and loading
any compiled (numba) code it uses, about 0.2 s (here only ``hk`` and ``hkes`` load any), as a script that fits once
pays.  ``--warm-up`` times the
second fit instead (a first, untimed fit on 2000 rows before it, for every method alike): the cost of each
further fit in a session (cross-validation, a grid, one-vs-rest classes).  With ``--repeat`` the ratios to
``LinearSVC`` are also printed round by round (median and largest), which the machine's changing load
disturbs less than the ratio of two best times.

Every fit runs on one thread by default (``OMP_NUM_THREADS=1`` and the like in its process), as
scikit-learn's ``LinearSVC`` (liblinear) does; ``--threads N`` lets linsep's fits use ``N`` threads (their
sparse CG products, ``linsep._core.threads.RowSplitCSR``) while the scikit-learn fits keep one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.stats import binomtest
from sklearn.base import clone

METHODS = {
    "linsep hk": ("linsep", "hk", {"max_iter": 200}),
    "linsep hkes": ("linsep", "hkes", {"max_iter": 200, "random_state": 0}),
    "linsep mhks": ("linsep", "mhks", {"C": 1.0, "max_iter": 200}),
    "linsep lsvm": ("linsep", "lsvm", {"C": 1.0}),
    # LinearSVC(C=1)'s own objective ½‖w̃‖² + Σ max(0, 1 − y f(x))² (squared hinge, bias penalised like a
    # feature): the LSVM's ½‖W‖² + (C/2)‖ξ‖² at C = 2, MHKS's ‖YW − B‖² + C‖w‖² at C = 1/2 (see the docstring)
    "linsep lsvm (C=2)": ("linsep", "lsvm", {"C": 2.0}),
    "linsep mhks (C=0.5)": ("linsep", "mhks", {"C": 0.5, "max_iter": 200}),
    "sklearn LinearSVC": ("sklearn", "LinearSVC", {"C": 1.0}),
    "sklearn Ridge(sparse_cg)": ("sklearn", "RidgeClassifier", {"solver": "sparse_cg", "alpha": 1.0}),
}


WARM_UP_ROWS = 2000
"""Rows of the untimed first fit of ``--warm-up``."""

PROBLEMS = {
    # name: (N, d, density, make_text_data keywords); --quick scales N and d down
    "text": (200_000, 50_000, 2e-4, {}),
    "zipf-frequent": (125_000, 50_000, 2e-4, {"exponent": 1.0, "n_rule_terms": 3000, "rule_columns": (0, 3000)}),
    "rare-signal": (200_000, 50_000, 3e-4, {"exponent": 0.8, "n_rule_terms": 20_000,
                                            "rule_columns": (5_000, 50_000)}),
    "raw-counts": (200_000, 50_000, 1e-3, {"values": "counts"}),
}
"""The text-like problems: ``text`` (the rule on 500 of the 2000 most frequent terms), ``zipf-frequent`` (Zipf
frequencies ``1/rank``, the label carried by the 3000 most frequent of 5·10⁴ terms, 10⁵ training documents) and
``rare-signal`` (a flatter law, the rule on 2·10⁴ terms of frequency ranks 5000 to 5·10⁴: rare terms carry it) and
``raw-counts`` (longer documents, about 50 terms each, as raw term counts: unscaled values, rows of norm ~10)."""


def make_text_data(n_samples, n_features, density, seed=0, n_rule_terms=500, label_noise=0.05, exponent=1.1,
                   rule_columns=None, values="tfidf"):
    """Documents × terms: Zipf-like term frequencies, tf-idf-like values, labels from a sparse rule.

    Term ``j`` (by frequency rank) has probability ``∝ (j + 10)^−exponent``; the rule's ``n_rule_terms`` terms
    are drawn from the ranks ``rule_columns = (lo, hi)`` (default ``(0, 4·n_rule_terms)``).  ``values``:
    ``"tfidf"`` (sublinear tf times idf, rows of unit norm) or ``"counts"`` (the raw term counts, unscaled).
    """
    rng = np.random.default_rng(seed)
    frequency = 1.0 / (np.arange(n_features) + 10.0) ** exponent
    frequency /= frequency.sum()
    per_doc = np.maximum(rng.poisson(density * n_features, n_samples), 1)
    rows = np.repeat(np.arange(n_samples), per_doc)
    terms = rng.choice(n_features, size=rows.size, p=frequency)
    counts = sp.csr_matrix((np.ones(rows.size), (rows, terms)), shape=(n_samples, n_features))
    counts.sum_duplicates()
    document_frequency = np.bincount(counts.indices, minlength=n_features)
    idf = np.log((1.0 + n_samples) / (1.0 + document_frequency)) + 1.0
    X = counts.copy()
    if values == "tfidf":
        X.data = (1.0 + np.log(counts.data)) * idf[counts.indices]
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / norms) @ X
    elif values != "counts":
        raise ValueError(f"values must be 'tfidf' or 'counts', got {values!r}")
    rule = np.zeros(n_features)
    # by default the rule's terms among the 4·500 most frequent, so that almost every document has some
    lo, hi = (0, min(n_features, 4 * n_rule_terms)) if rule_columns is None else rule_columns
    chosen = lo + rng.choice(hi - lo, size=n_rule_terms, replace=False)
    rule[chosen] = rng.standard_normal(n_rule_terms)
    score = X @ rule
    y = (score > np.median(score)).astype(np.int64)
    flip = rng.random(n_samples) < label_noise
    y[flip] = 1 - y[flip]
    split = rng.permutation(n_samples)
    n_train = int(0.8 * n_samples)
    train, test = split[:n_train], split[n_train:]
    return sp.csr_matrix(X[train]), y[train], sp.csr_matrix(X[test]), y[test]


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _predictions_path(path, label):
    return os.path.join(os.path.dirname(path), "wrong-" + "".join(c if c.isalnum() else "_" for c in label) + ".npy")


def mcnemar_p_value(wrong, reference_wrong):
    """Exact two-sided McNemar p-value of two classifiers' errors on the same test rows.

    Only the rows where exactly one of them errs count: under equal error rates each such row is a fair coin's
    toss (``scipy.stats.binomtest``).  A large p-value: the two error rates do not differ beyond the test set's noise.
    """
    only_this, only_reference = int(np.sum(wrong & ~reference_wrong)), int(np.sum(~wrong & reference_wrong))
    if only_this + only_reference == 0:
        return 1.0
    return float(binomtest(only_this, only_this + only_reference, 0.5).pvalue)


def worker(label, path, warm_up=False):
    """Fit one method on the saved data and print one JSON line of measurements.

    ``warm_up``: fit the same estimator on the first :data:`WARM_UP_ROWS` training rows first, untimed, so that
    the timed fit finds the modules imported and the compiled code loaded, as every fit after a process's first does.
    """
    data = np.load(path)
    X = sp.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=tuple(data["shape"]))
    Xt = sp.csr_matrix((data["t_data"], data["t_indices"], data["t_indptr"]), shape=tuple(data["t_shape"]))
    y, yt = data["y"], data["yt"]
    library, name, params = METHODS[label]
    stats = {}
    if library == "linsep":
        import linsep.estimators.ho_kashyap as hk_estimators
        import linsep.estimators.lsvm as lsvm_estimators
        from linsep import make_classifier

        def recording(solver):  # keep the solver's CG counts (SolveResult.extra) of the fit
            def run(*args, **kwargs):
                result = solver(*args, **kwargs)
                stats.update({k: float(v) for k, v in result.extra.items() if k.startswith("cg_")})
                stats["factorization"] = result.extra.get("factorization")
                if result.extra.get("minimum_norm_map"):  # Ho–Kashyap without C: how the weights were projected
                    stats["minimum_norm_map"] = result.extra["minimum_norm_map"]
                return result
            return run

        hk_estimators.ho_kashyap = recording(hk_estimators.ho_kashyap)
        lsvm_estimators.lagrangian_svm = recording(lsvm_estimators.lagrangian_svm)
        model = make_classifier(name, **params)
    else:
        import sklearn.linear_model
        import sklearn.svm

        model = getattr(sklearn.svm if name == "LinearSVC" else sklearn.linear_model, name)(**params)
    if warm_up:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(model).fit(X[:WARM_UP_ROWS], y[:WARM_UP_ROWS])
        stats.clear()
    before = _rss_mib()
    start, cpu_start = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    peak = _rss_mib()
    predicted = model.predict(Xt)
    error = float(np.mean(predicted != yt))
    np.save(_predictions_path(path, label), predicted != yt)  # which test rows it gets wrong (McNemar's test)
    n_iter = getattr(model, "n_iter_", None)
    n_iter = np.nan if n_iter is None else float(np.ravel(n_iter)[0])
    out = {"label": label, "seconds": seconds, "cpu_seconds": cpu_seconds, "test_error": error, "n_iter": n_iter,
           "status": str(getattr(model, "status_", "-")), "peak_mib": peak, "data_mib": before,
           "warnings": sorted({type(w.message).__name__ for w in caught})}
    out.update(stats)
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 10⁴, d = 3·10³ (a few seconds)")
    parser.add_argument("--only", nargs="*", help="labels of the methods to run (default: all)")
    parser.add_argument("--problem", choices=PROBLEMS, default="text", help="the text-like problem (PROBLEMS)")
    parser.add_argument("--threads", type=int, default=1, help="threads of linsep's fits (scikit-learn's: 1)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds over all methods; each method's fastest fit is kept (a shared machine's noise)")
    parser.add_argument("--warm-up", action="store_true",
                        help="time each method's second fit in its process (a first, untimed fit on "
                             f"{WARM_UP_ROWS} rows imports and loads its code): the steady state of repeated fits")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.worker[2] == "warm")
        return
    n_samples, n_features, density, keywords = PROBLEMS[args.problem]
    if args.quick:
        shrink = n_features / 3_000  # d = 3000: still above the direct solver's 2000 columns
        keywords = dict(keywords)
        if "rule_columns" in keywords:
            keywords["rule_columns"] = tuple(int(c / shrink) for c in keywords["rule_columns"])
            keywords["n_rule_terms"] = max(int(keywords["n_rule_terms"] / shrink), 10)
        n_samples, n_features, density = n_samples // 20, 3_000, density * 15
    start = time.perf_counter()
    X, y, Xt, yt = make_text_data(n_samples, n_features, density, **keywords)
    print(f"problem {args.problem}: N = {n_samples} ({X.shape[0]} train / {Xt.shape[0]} test), d = {n_features}, "
          f"density {X.nnz / (X.shape[0] * X.shape[1]):.2e}, nnz(train) = {X.nnz}, "
          f"class balance {y.mean():.3f}, generated in {time.perf_counter() - start:.1f} s")
    print(f"load average before: {os.getloadavg()}; linsep threads: {args.threads}, scikit-learn threads: 1")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "text.npz")
        np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y,
                 t_data=Xt.data, t_indices=Xt.indices, t_indptr=Xt.indptr, t_shape=Xt.shape, yt=yt)
        results, rounds = {}, []
        labels = args.only or list(METHODS)
        for round_ in range(args.repeat):  # rounds over all methods: each sees the machine's load alike
            rounds.append({})
            for label in labels:
                threads = str(args.threads if METHODS[label][0] == "linsep" else 1)
                env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
                           MKL_NUM_THREADS=threads, NUMBA_NUM_THREADS=threads)
                run = subprocess.run([sys.executable, __file__, "--worker", label, path,
                                      "warm" if args.warm_up else "cold"], capture_output=True, text=True, env=env)
                if run.returncode != 0:
                    print(f"{label}: failed\n{run.stderr[-2000:]}")
                    continue
                r = json.loads(run.stdout.strip().splitlines()[-1])
                rounds[-1][label] = r["seconds"]
                if label not in results or r["seconds"] < results[label]["seconds"]:
                    results[label] = r
        print("timed: each method's " + ("second fit in its process (--warm-up)" if args.warm_up else
                                          "first fit in a fresh process (imports and compiled-code loading included)"))
        if args.repeat > 1:
            print(f"best of {args.repeat} rounds (each round fits every method once, in turn):")
        for label, r in results.items():
            cg = ""
            if "cg_iterations" in r:
                cg = f"  CG its {r['cg_iterations']} ({r['cg_iterations'] / max(r['n_iter'], 1):.1f} per iteration)"
            if "minimum_norm_map" in r:
                cg += f", map: {r['minimum_norm_map']}"
            print(f"{label:26s} fit {r['seconds']:8.2f} s (CPU {r['cpu_seconds']:6.2f} s)  test error {r['test_error']:.4f}  n_iter {r['n_iter']:g}  "
                  f"status {r['status']:13s} peak RSS {r['peak_mib']:7.0f} MiB (data loaded: {r['data_mib']:.0f})"
                  f"{cg}  {' '.join(r['warnings'])}", flush=True)
        reference = "sklearn LinearSVC"
        if reference in results:
            # The test errors against LinearSVC's, row by row: the difference in points and whether it exceeds the
            # test set's noise (McNemar's exact test on the rows where exactly one of the two errs).
            reference_wrong = np.load(_predictions_path(path, reference))
            print("test error − LinearSVC's (McNemar p): " + ", ".join(
                f"{label}: {100 * (r['test_error'] - results[reference]['test_error']):+.2f} points "
                f"({mcnemar_p_value(np.load(_predictions_path(path, label)), reference_wrong):.2f})"
                for label, r in results.items() if label.startswith("linsep")))
    print(f"load average after: {os.getloadavg()}")
    for ref in ("sklearn LinearSVC", "sklearn Ridge(sparse_cg)"):
        if ref in results:
            ratios = ", ".join(f"{k}: {r['seconds'] / results[ref]['seconds']:.2f}"
                               for k, r in results.items() if k.startswith("linsep"))
            print(f"time / {ref}: {ratios}")
            ratios = ", ".join(f"{k}: {r['cpu_seconds'] / results[ref]['cpu_seconds']:.2f}"
                               for k, r in results.items() if k.startswith("linsep"))
            print(f"CPU time / {ref}: {ratios}")
    if args.repeat > 1 and "sklearn LinearSVC" in results:
        # Ratios within a round (fits close in time share the machine's load), over the rounds: less noisy than
        # the ratio of two best times, which may come from rounds under different loads.
        paired = {label: [r[label] / r["sklearn LinearSVC"] for r in rounds if label in r and "sklearn LinearSVC" in r]
                  for label in results if label.startswith("linsep")}
        print("time / sklearn LinearSVC within each round, median [max]: " + ", ".join(
            f"{label}: {np.median(v):.2f} [{max(v):.2f}]" for label, v in paired.items() if v))


if __name__ == "__main__":
    main()
