"""Multi-class topic classification of generated text: linsep's sparse fits against ``LinearSVC``.

A realistic text problem (issue 32): ``K`` topics (2, 4 and 8 by default), an 8 000-word common vocabulary
drawn by a Zipf law, 300 topic words per class (their own Zipf law) that make up ~12 % of each document, 5 % of
each document's words borrowed from the neighbouring topic ``(k + 1) mod K``, 20–80 words per document, labels
uniform over the topics.  The documents go through ``TfidfVectorizer(min_df=2, sublinear_tf=True)`` fitted on
the training documents; accuracy is measured on a held-out test set of ``--n-test`` documents.

Each round fits ``LinearSVC`` and the linsep presets ``hkes``, ``hkes_cv_c``, ``mhks`` and ``lsvm``
(:func:`linsep.make_classifier` names, their defaults) on the same data, in one process, in an order that
rotates from round to round; the table gives each method's test accuracy, its median fit time over the rounds
and the median over the rounds of its time divided by ``LinearSVC``'s in the same round (paired), with
``LinearSVC``'s accuracy beside it (a speed claim holds only at the peer's accuracy).  Every fit is warm: an
untimed fit on 500 rows of the same data precedes the rounds, for every method alike.

    PYTHONPATH=src python benchmarks/bench_text_multiclass.py                 # --quick: 3 000 training rows
    PYTHONPATH=src python benchmarks/bench_text_multiclass.py --full          # 15 000 training rows (long)
    PYTHONPATH=src python benchmarks/bench_text_multiclass.py --topics 4 --rounds 5 --seed 1
    PYTHONPATH=src python benchmarks/bench_text_multiclass.py --methods LinearSVC hkes mhks

The default (quick) run takes about a minute on two shared cores.  ``--full`` is the issue's size
(15 000 × ~9 000, ~0.6 M non-zeros); there ``hkes`` alone takes several seconds at K = 4 and half a minute
at K = 8 (one-vs-rest: one HK problem per class; measured times in ``docs/performance_notes.md``), and
``hkes_cv_c`` over a minute: run it with ``--topics 4 --rounds 1`` or leave it out (``--methods``).  ``hkes`` warns at fit on these wide problems
(``d + 1`` close to the fitted rows: early stopping does not regularise); the warnings are counted, not shown.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

METHODS = ("LinearSVC", "hkes", "hkes_cv_c", "mhks", "lsvm")
WARM_UP_ROWS = 500


def make_problem(n_train, n_test, n_topics, seed):
    from sklearn.feature_extraction.text import TfidfVectorizer

    from linsep.datasets import make_topic_corpus

    docs, y = make_topic_corpus(n_train + n_test, n_topics, random_state=seed)
    vectorizer = TfidfVectorizer(min_df=2, sublinear_tf=True)
    X = vectorizer.fit_transform(docs[:n_train])
    return X, y[:n_train], vectorizer.transform(docs[n_train:]), y[n_train:]


def make_method(name, seed):
    if name == "LinearSVC":
        from sklearn.svm import LinearSVC

        return LinearSVC()
    import linsep

    return linsep.make_classifier(name, random_state=seed)


def fit_timed(name, X, y, seed):
    model = make_method(name, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    return model, seconds, sum(issubclass(w.category, UserWarning) for w in caught)


def run(n_topics, args):
    X, y, X_test, y_test = make_problem(args.n_train, args.n_test, n_topics, args.seed)
    print(f"\nK = {n_topics}: train {X.shape[0]} × {X.shape[1]} ({X.nnz} non-zeros), test {X_test.shape[0]}",
          flush=True)
    for name in args.methods:  # warm-up: imports, compiled code, caches, for every method alike
        try:
            fit_timed(name, X[:WARM_UP_ROWS], y[:WARM_UP_ROWS], args.seed)
        except (ArithmeticError, np.linalg.LinAlgError):
            pass
    times = {name: [] for name in args.methods}
    accuracy, warned, failed = {}, {}, {}
    for r in range(args.rounds):
        order = list(args.methods[r % len(args.methods):]) + list(args.methods[:r % len(args.methods)])
        for name in order:
            try:
                model, seconds, n_warnings = fit_timed(name, X, y, args.seed)
            except (FloatingPointError, ArithmeticError, np.linalg.LinAlgError) as error:  # reported, not fatal
                failed[name] = f"{type(error).__name__}: {str(error)[:60]}"
                times[name].append(np.nan)
                continue
            times[name].append(seconds)
            accuracy[name] = float(np.mean(model.predict(X_test) == y_test))  # deterministic fits: same each round
            warned[name] = n_warnings
    reference = np.array(times.get("LinearSVC", [np.nan] * args.rounds))
    peer = accuracy.get("LinearSVC", np.nan)
    print(f"{'method':<11} {'accuracy':>8} {'fit s (median)':>15} {'× LinearSVC':>12} {'LinearSVC acc':>14} "
          f"{'warnings':>8}")
    for name in args.methods:
        if name in failed:
            print(f"{name:<11} failed: {failed[name]}")
            continue
        ratio = float(np.median(np.array(times[name]) / reference))
        print(f"{name:<11} {100 * accuracy[name]:7.1f}% {np.median(times[name]):15.3f} {ratio:12.1f} "
              f"{100 * peer:13.1f}% {warned[name]:8d}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="3 000 training rows (the default)")
    size.add_argument("--full", action="store_true", help="15 000 training rows (the issue's size; long)")
    parser.add_argument("--n-train", type=int, default=None, help="training rows (overrides --quick/--full)")
    parser.add_argument("--n-test", type=int, default=None, help="test rows (default: 1 000 quick, 5 000 full)")
    parser.add_argument("--topics", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds (median times)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.n_train is None:
        args.n_train = 15_000 if args.full else 3_000
    if args.n_test is None:
        args.n_test = 5_000 if args.full else 1_000
    print(f"bench_text_multiclass: N = {args.n_train}, test {args.n_test}, rounds {args.rounds}, seed {args.seed}, "
          f"load {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}")
    for n_topics in args.topics:
        run(n_topics, args)


if __name__ == "__main__":
    main()
