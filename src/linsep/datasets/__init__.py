"""The nine IDA benchmark data sets of Lauer & Bloch (2006), shipped with linsep.

Each set is a gzip CSV (header ``x1,...,xd,y``, labels ±1) inside the
package, so nothing is fetched at run time.  The original predefined splits
are not available; :func:`benchmark_splits` draws random splits of the
paper's sizes, seeded per realization, and standardises each with its training
statistics.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from importlib import resources

import numpy as np
from sklearn.preprocessing import StandardScaler

from ._files import SVMLIGHT_SUFFIXES, DataFileError, read_data_file


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str
    n_samples: int
    n_features: int
    n_train: int
    n_test: int
    n_realizations: int


BENCHMARKS = {
    info.name: info
    for info in [
        BenchmarkInfo("diabetis", 768, 8, 468, 300, 100),
        BenchmarkInfo("heart", 270, 13, 170, 100, 100),
        BenchmarkInfo("breast_cancer", 277, 9, 200, 77, 100),
        BenchmarkInfo("splice", 3175, 60, 1000, 2175, 20),
        BenchmarkInfo("image", 2310, 18, 1300, 1010, 20),
        BenchmarkInfo("german", 1000, 20, 700, 300, 100),
        BenchmarkInfo("flare_solar", 1066, 9, 666, 400, 100),
        BenchmarkInfo("thyroid", 215, 5, 140, 75, 100),
        BenchmarkInfo("titanic", 2201, 3, 150, 2051, 100),
    ]
}
"""Sizes and realization counts of the IDA protocol, in the paper's table order."""


def _info(name):
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}") from None


def load_benchmark(name):
    """Return ``X`` (N, d) float64 and ``y`` (N,) with labels in {-1, +1}."""
    info = _info(name)
    path = resources.files(__package__) / "data" / f"{name}.csv.gz"
    with path.open("rb") as raw, gzip.open(raw, "rt") as handle:
        data = np.loadtxt(handle, delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    if X.shape != (info.n_samples, info.n_features):  # pragma: no cover - packaging error
        raise RuntimeError(f"{name}: expected shape {(info.n_samples, info.n_features)}, read {X.shape}")
    return X, y.astype(int)


def split_indices(name, split, random_state=0):
    """Indices ``(train, test)`` of realization ``split`` (independent of how many are drawn)."""
    info = _info(name)
    rng = np.random.default_rng([int(random_state), int(split)])
    order = rng.permutation(info.n_samples)
    return order[: info.n_train], order[info.n_train: info.n_train + info.n_test]


def benchmark_splits(name, n_splits=None, random_state=0):
    """Yield ``(X_train, y_train, X_test, y_test)`` for each realization of ``name``.

    Parameters
    ----------
    name : str
        One of :data:`BENCHMARKS`.
    n_splits : int or None
        Number of realizations; ``None`` gives the protocol's (100, or 20 for
        image and splice).
    random_state : int
        Seed; realization ``i`` is the same whatever ``n_splits`` is.
    """
    info = _info(name)
    X, y = load_benchmark(name)
    for split in range(info.n_realizations if n_splits is None else int(n_splits)):
        train, test = split_indices(name, split, random_state)
        scaler = StandardScaler().fit(X[train])
        yield scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]


__all__ = [
    "BENCHMARKS",
    "SVMLIGHT_SUFFIXES",
    "BenchmarkInfo",
    "DataFileError",
    "benchmark_splits",
    "load_benchmark",
    "read_data_file",
    "split_indices",
]
