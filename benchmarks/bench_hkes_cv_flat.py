"""How often ``HoKashyapClassifierCV``'s grid of ``C`` is flat: every ``C`` within one standard error of the best.

``python benchmarks/bench_hkes_cv_flat.py [--splits 10] [--grid 7] [--datasets ...]``
    Per IDA set of ``linsep.datasets`` (the quick protocol's splits, ``linsep.experiments.protocol.load_split``:
    the whole training split, fitting and tuning parts, as ``linsep bench``'s † columns), ``HoKashyapClassifierCV
    (Cs=grid)`` with its defaults, and per split :func:`linsep.estimators.ho_kashyap_cv.flat_grid` of
    ``cv_results_["best_validation_error"]`` on the split's training rows: the splits where the grid is flat
    (spread of the best errors over ``C`` at most one standard error — what ``verbose`` reports), the median
    spread and standard error, the training rows per feature, and the splits whose search ended before the
    grid's end (``search_stopped_``, :func:`linsep.estimators.ho_kashyap_cv.flat_search_end`: none where the
    folds train on fewer than ``SEARCH_END_ROWS_PER_COLUMN`` rows per column, as on every IDA set).

The large set (800 000 × 100) is measured by ``benchmarks/bench_hkes_cv_large.py``, which prints the same
spread and standard error.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from linsep import HoKashyapClassifierCV
from linsep.datasets import BENCHMARKS
from linsep.estimators.ho_kashyap_cv import flat_grid
from linsep.experiments.protocol import load_split


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--grid", type=int, default=7)
    parser.add_argument("--datasets", nargs="+", default=list(BENCHMARKS))
    args = parser.parse_args(argv)
    print(f"Cs = {args.grid}, cv = 5, {args.splits} splits per set (quick protocol, fitting + tuning parts)")
    print(f"{'data set':14s} {'N/d':>6s} {'flat':>6s} {'median spread':>13s} {'median se':>9s} {'ended':>6s}")
    total = flat_total = ended_total = 0
    for dataset in args.datasets:
        flats, spreads, ses, ratio, ended = 0, [], [], 0.0, 0
        for split in range(args.splits):
            X_fit, y_fit, X_tune, y_tune, _, _ = load_split(dataset, split)
            X, y = np.vstack([X_fit, X_tune]), np.concatenate([y_fit, y_tune])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                clf = HoKashyapClassifierCV(Cs=args.grid, random_state=split).fit(X, y)
            spread, se, flat = flat_grid(clf.cv_results_["best_validation_error"], len(y))
            flats += flat
            ended += clf.search_stopped_ is not None
            spreads.append(spread)
            ses.append(se)
            ratio = X.shape[0] / X.shape[1]
        total += args.splits
        flat_total += flats
        ended_total += ended
        print(f"{dataset:14s} {ratio:6.0f} {flats:>3d}/{args.splits:<2d} {np.median(spreads):13.4f} "
              f"{np.median(ses):9.4f} {ended:>3d}/{args.splits:<2d}", flush=True)
    print(f"flat on {flat_total} of {total} splits; the search ended early on {ended_total}")


if __name__ == "__main__":
    main()
