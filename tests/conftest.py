"""Shared test problems and the private path choices (plans) the tests run under.

Problems are small (the suite must stay fast) and seeded.  Tests that must
run a given code path pass the solvers' private ``_plan`` argument (see
:func:`linsep.solvers.ho_kashyap.ho_kashyap`) instead of changing module
globals: ``PLANS`` names them, and the ``hk_plan`` fixture runs a test under
each Ho–Kashyap driver.
"""

import contextlib

import numpy as np
import pytest

PLANS = {
    "compiled": None,                                   # the default: the compiled segment where it applies
    "compiled_by_rows": {"by_columns_max_entries": 0},  # its pass by rows (the layout of large data)
    "python": {"driver": "python"},                     # the Python driver over the design
}


@pytest.fixture(params=sorted(PLANS))
def hk_plan(request):
    """Each Ho–Kashyap driver's private plan (``ho_kashyap(..., _plan=hk_plan)``)."""
    return PLANS[request.param]


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


@pytest.fixture
def problem():
    """A small noisy two-class problem (N = 40, d = 3)."""
    return random_problem(0)


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


@pytest.fixture(scope="module")
def client():
    """A two-worker in-process dask cluster for a test module (``local_dask_client``)."""
    with local_dask_client(2) as dask_client:
        yield dask_client
