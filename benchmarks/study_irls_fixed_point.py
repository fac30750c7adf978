"""MHKA and HKESA on a wide-margin many-class problem: iterations and time per fit.

Run: ``PYTHONPATH=src python benchmarks/study_irls_fixed_point.py [--classes 50 --samples 500 --features 50]``.
Every one-vs-rest problem is separable with a wide margin; before the IRLS fixed-point stop each ran to
``max_iter`` (10 000).  Prints the time, the largest and median ``n_iter_`` and the statuses.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from linsep import make_classifier


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--features", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(args.classes, args.features)) * 10
    y = np.arange(args.samples) % args.classes
    X = centers[y] + rng.normal(size=(args.samples, args.features))
    for name in ("mhka", "hkesa"):
        make_classifier(name).fit(X[:60], y[:60] % 2)  # compile / load the loops outside the timing
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            start = time.perf_counter()
            clf = make_classifier(name, random_state=0).fit(X, y)
            elapsed = time.perf_counter() - start
        statuses = dict(zip(*np.unique(clf.status_, return_counts=True)))
        print(f"{name}: {elapsed:.2f} s, n_iter_ max {np.max(clf.n_iter_)} median {np.median(clf.n_iter_):.0f}, "
              f"statuses {statuses}, training accuracy {np.mean(clf.predict(X) == y):.3f}")


if __name__ == "__main__":
    main()
