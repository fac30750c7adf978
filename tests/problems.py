"""Problems and helpers shared by the test modules (imported as ``from problems import ...``).

Plain functions, not fixtures: a test module imports them by name.  They live
here and not in ``conftest.py`` because a test folder with a ``conftest.py`` of
its own (``tests/playground/``) would shadow the root one under the module
name ``conftest``.
"""

import contextlib
import sys
from fractions import Fraction

import numpy as np
import scipy.sparse as sp


def random_problem(seed, n=40, d=3, separable=False):
    """Gaussian ``X`` and ±1 labels from a random hyperplane (label noise unless ``separable``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    score = X @ w + 0.3
    if separable:
        keep = np.abs(score) > 0.3
        X, score = X[keep], score[keep]
        y = np.where(score > 0, 1, -1)
    else:
        y = np.where(score + rng.normal(scale=1.0, size=score.size) > 0, 1, -1)
    return X, y


def three_overlapping_classes(seed=0, n_per_class=30):
    """Three overlapping Gaussian classes labelled 2, 5, 7 (one-vs-rest problems that need the budget)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n_per_class, 2))
    return X, np.repeat(np.array([2, 5, 7]), n_per_class)


def wide_margin_data(seed=0, n=24, d=3):
    """Two classes 4 apart along the first axis: every estimator separates them at scale 1."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.uniform(-1, 1, size=(n, d))
    X[:, 0] += np.where(y == 1, 2.5, -2.5)
    return X, y


def sparse_problem(n, d, density=0.2, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    score = X @ rng.standard_normal(d)
    y = (score > np.median(score)).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def duplicated_csr():
    """A CSR matrix whose cell (0, 0) is stored twice, 1e10 and 3 - 1e10 (value 3), with its dense twin."""
    data = np.array([1e10, 3.0 - 1e10, 2.0, 2.0])
    indices = np.array([0, 0, 1, 1])
    indptr = np.array([0, 3, 4])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 2))
    assert not X.has_canonical_format
    return X, X.toarray()


def overwrite(path, data):
    """Write ``data`` to ``path`` in place: the same bytes as ``path.write_bytes(data)``, about 100 times faster.

    ``write_bytes`` opens with ``O_TRUNC``; ext4 (``auto_da_alloc``) flushes a
    file truncated to zero and rewritten, about 5 ms a write, which the
    damage tests (thousands of variants of one file) spent most of their time on.
    """
    with open(path, "r+b" if path.exists() else "wb") as handle:
        handle.write(data)
        handle.truncate()


@contextlib.contextmanager
def local_dask_client(n_workers):
    """A ``distributed`` client of an in-process LocalCluster with ``n_workers`` one-thread workers, closed after.

    One worker holds every row block (the dask design then chains iterations); two spread them.
    """
    import distributed

    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def exact_proof_residual(X, signs, u):
    """max_j |Σ u_i y_i Y_ij| / Σ u_i |Y_ij| in exact rational arithmetic (bias column included)."""
    u = [Fraction(float(v)) for v in np.ravel(u)]
    assert all(v >= 0 for v in u) and any(v > 0 for v in u)
    worst = Fraction(0)
    columns = [list(map(float, X[:, j])) for j in range(X.shape[1])] + [[1.0] * X.shape[0]]
    for column in columns:
        terms = [ui * int(s) * Fraction(x) for ui, s, x in zip(u, signs, column)]
        magnitude = sum(abs(t) for t in terms)
        if magnitude:
            worst = max(worst, abs(sum(terms)) / magnitude)
    return float(worst)


@contextlib.contextmanager
def calls_of(*functions):
    """The arguments of every call of each Python ``function`` made in the block, one list per function.

    Observed with ``sys.setprofile``: nothing is replaced, and a call counts wherever it comes from.
    """
    codes = {f.__code__: [] for f in functions}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            codes[frame.f_code].append(dict(frame.f_locals))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield list(codes.values())
    finally:
        sys.setprofile(previous)


def traced_peak(call):
    """The peak of the Python-traced allocations (NumPy's included) while ``call()`` runs, in bytes."""
    import tracemalloc

    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
