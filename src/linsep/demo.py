"""A short demonstration: the Ho–Kashyap family on one bundled benchmark.

``python -m linsep.demo [DATASET]`` fits HK, modified HK, MHKS, MHKA, HKES and
HKESA on the first split of a benchmark and prints the test error, the
verdict (status) and the iterations of each.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from . import make_classifier
from .datasets import benchmark_splits

METHODS = ("hk", "modified_hk", "mhks", "mhka", "hkes", "hkesa")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    name = argv[0] if argv else "heart"
    X_train, y_train, X_test, y_test = next(benchmark_splits(name, n_splits=1))
    print(f"{name}: {X_train.shape[0]} training / {X_test.shape[0]} test samples, {X_train.shape[1]} features")
    print(f"{'method':<12} {'test error %':>12} {'status':>14} {'n_iter':>7}")
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = make_classifier(method, random_state=0).fit(X_train, y_train)
        error = 100 * np.mean(clf.predict(X_test) != y_test)
        print(f"{method:<12} {error:>12.2f} {clf.status_:>14} {clf.n_iter_:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
