"""ConvergenceWarnings of every primal estimator in an ordinary 5-fold CV on scikit-learn's breast_cancer.

Run: ``PYTHONPATH=src python benchmarks/study_convergence_warnings.py [--standardize] [names ...]``.
Prints, per estimator with default settings, the number of ConvergenceWarnings over the 5 folds, the mean CV
accuracy and the time.  Estimators that shuffle or hold out data at random (hkes, hkesa, lms, perceptron) vary
by about one warning between runs.
"""

import argparse
import time
import warnings

from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from linsep import make_classifier

NAMES = ["hk", "hkes", "hkesa", "mhks", "mhka", "sk", "kozinec", "perceptron", "batch_perceptron", "lms",
         "widrow_hoff", "lsvm", "mse"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=NAMES)
    parser.add_argument("--standardize", action="store_true", help="StandardScaler before each estimator")
    args = parser.parse_args()
    X, y = load_breast_cancer(return_X_y=True)
    for name in args.names:
        model = make_classifier(name)
        if args.standardize:
            model = make_pipeline(StandardScaler(), model)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            scores = cross_val_score(model, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
            elapsed = time.perf_counter() - start
        count = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        print(f"{name:18s} warnings {count}  accuracy {scores.mean():.3f}  {elapsed:.1f} s", flush=True)


if __name__ == "__main__":
    main()
