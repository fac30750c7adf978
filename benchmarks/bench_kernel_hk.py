"""Kernel Ho–Kashyap against kernel SK and libsvm's SVC: fit time and held-out accuracy.

Data sets (all deterministic):

* ``digits``: scikit-learn's 8×8 digits (1 797 × 64, 10 classes), a stratified
  70 / 30 split (``random_state=0``): 1 257 training samples.
* ``classification``: ``make_classification(n_samples=2N, random_state=0)``
  (scikit-learn's defaults: 20 features of which 2 informative and 2
  redundant, two clusters per class, 1 % flipped labels), half for training.
* ``moons``: ``make_moons(n_samples=2N, noise=0.3, random_state=0)``, half for
  training (a 2-D problem with overlapping classes).

Every model runs with its defaults (RBF kernel, ``gamma="scale"``).  Kernel HK
is also run with the settings that were its defaults before the truncated map
(``C=None, map_tol=0, tol=1e-6``: plain HK on the exact map) with ``--old``;
that takes minutes on digits.  Times are wall clock on a machine shared with
other jobs: compare the ratios printed in one run.

Usage::

    python benchmarks/bench_kernel_hk.py [--n N] [--sets digits,classification,moons] [--old] [--no-sk]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits, make_classification, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from linsep import KernelHoKashyapClassifier, make_classifier


def load(name, n):
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    if name == "classification":
        X, y = make_classification(n_samples=2 * n, random_state=0)
    elif name == "moons":
        X, y = make_moons(n_samples=2 * n, noise=0.3, random_state=0)
    else:
        raise ValueError(name)
    return train_test_split(X, y, train_size=n, random_state=0, stratify=y)


def timed(model, X, y, X_test, y_test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - t0
    return seconds, model.score(X_test, y_test)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5000, help="training samples of the binary sets")
    parser.add_argument("--sets", default="digits,classification,moons")
    parser.add_argument("--old", action="store_true", help="also run C=None, map_tol=0, tol=1e-6 (slow)")
    parser.add_argument("--no-sk", dest="sk", action="store_false", help="skip kernel SK")
    args = parser.parse_args()

    # compile the numba loops once (cached on disk afterwards), outside the timings
    X0, _, y0, _ = load("moons", 60)
    KernelHoKashyapClassifier().fit(X0, y0)
    make_classifier("kernel_sk").fit(X0, y0)

    for name in args.sets.split(","):
        X, X_test, y, y_test = load(name, args.n)
        print(f"\n{name}: {X.shape[0]} training × {X.shape[1]} features, {len(np.unique(y))} classes, "
              f"{X_test.shape[0]} held out")
        models = [("kernel_hk", KernelHoKashyapClassifier())]
        if args.old:
            models.append(("kernel_hk old defaults", KernelHoKashyapClassifier(C=None, map_tol=0.0, tol=1e-6)))
        if args.sk:
            models.append(("kernel_sk", make_classifier("kernel_sk")))
        models.append(("SVC", SVC()))
        results = {}
        for label, model in models:
            seconds, accuracy = timed(model, X, y, X_test, y_test)
            results[label] = seconds
            extra = ""
            if isinstance(model, KernelHoKashyapClassifier):
                iters = np.atleast_1d(model.n_iter_)
                extra = (f"  rank {model.rank_}, {len(model.support_)} support, iterations "
                         f"{iters.min()}–{iters.max()}")
            print(f"  {label:24s} {seconds:8.2f} s  accuracy {accuracy:.4f}{extra}", flush=True)
        base = results["kernel_hk"]
        print("  time ratios to kernel_hk: " + ", ".join(f"{k} {v / base:.2f}" for k, v in results.items()
                                                        if k != "kernel_hk"))


if __name__ == "__main__":
    main()
