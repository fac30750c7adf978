"""The nine IDA benchmark data sets of Lauer & Bloch (2006), shipped with linsep, and a generated text corpus.

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

from linsep.datasets._files import SVMLIGHT_SUFFIXES, DataFileError, read_data_file
from linsep.datasets.text import make_topic_corpus


@dataclass(frozen=True)
class BenchmarkInfo:
    """Size of one IDA data set and of its protocol's splits (a row of the paper's table).

    Parameters
    ----------
    name : str
        The data set's name (a key of :data:`BENCHMARKS`).
    n_samples : int
        Samples in the whole data set.
    n_features : int
        Features per sample.
    n_train : int
        Training samples of each realization.
    n_test : int
        Test samples of each realization.
    n_realizations : int
        Realizations of the protocol (100, or 20 for image and splice).

    See Also
    --------
    benchmark_splits : The realizations themselves.

    Examples
    --------
    >>> from linsep.datasets import BENCHMARKS
    >>> BENCHMARKS["heart"]
    BenchmarkInfo(name='heart', n_samples=270, n_features=13, n_train=170, n_test=100, n_realizations=100)
    """

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
    """Return ``X`` (N, d) float64 and ``y`` (N,) with labels in {-1, +1}.

    Parameters
    ----------
    name : str
        One of :data:`BENCHMARKS`.

    Returns
    -------
    X : ndarray of shape (N, d)
        The samples, as shipped (not standardised).
    y : ndarray of shape (N,)
        Their labels, ``-1`` or ``+1``.

    See Also
    --------
    benchmark_splits : Standardised train/test realizations of the protocol.

    Examples
    --------
    >>> from linsep.datasets import load_benchmark
    >>> X, y = load_benchmark("heart")
    >>> X.shape, sorted(set(y.tolist()))
    ((270, 13), [-1, 1])
    """
    info = _info(name)
    path = resources.files(__package__) / "data" / f"{name}.csv.gz"
    with path.open("rb") as raw, gzip.open(raw, "rt") as handle:
        data = np.loadtxt(handle, delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    if X.shape != (info.n_samples, info.n_features):  # pragma: no cover - packaging error
        raise RuntimeError(f"{name}: expected shape {(info.n_samples, info.n_features)}, read {X.shape}")
    return X, y.astype(int)


def split_indices(name, split, random_state=0):
    """Indices ``(train, test)`` of realization ``split`` (independent of how many are drawn).

    Parameters
    ----------
    name : str
        One of :data:`BENCHMARKS`.
    split : int
        The realization's number.
    random_state : int, default=0
        Seed; the realization is drawn from ``(random_state, split)``.

    Returns
    -------
    train, test : ndarray of int
        Row indices into :func:`load_benchmark`'s arrays, of the paper's sizes.

    See Also
    --------
    benchmark_splits : The same realizations as standardised arrays.

    Examples
    --------
    >>> from linsep.datasets import split_indices
    >>> train, test = split_indices("heart", split=0)
    >>> len(train), len(test)
    (170, 100)
    """
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

    Yields
    ------
    X_train : ndarray of shape (n_train, d)
        Training samples, standardised with their own mean and deviation.
    y_train : ndarray of shape (n_train,)
        Their labels (``±1``).
    X_test : ndarray of shape (n_test, d)
        Test samples, standardised with the training statistics.
    y_test : ndarray of shape (n_test,)
        Their labels.

    See Also
    --------
    split_indices : The row indices of a realization.
    linsep.experiments.run_benchmark : The paper's comparison over these splits.

    Examples
    --------
    >>> from linsep.datasets import benchmark_splits
    >>> for X_train, y_train, X_test, y_test in benchmark_splits("thyroid", n_splits=2):
    ...     print(X_train.shape, X_test.shape)
    (140, 5) (75, 5)
    (140, 5) (75, 5)
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
    "make_topic_corpus",
    "read_data_file",
    "split_indices",
]
