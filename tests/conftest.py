"""Shared test problems and the private path choices (plans) the tests run under.

Problems are small (the suite must stay fast) and seeded.  Tests that must
run a given code path pass the solvers' documented ``plan`` argument (see
:func:`linsep.solvers.ho_kashyap.ho_kashyap`) instead of changing module
globals: ``PLANS`` names them, and the ``hk_plan`` fixture runs a test under
each Ho–Kashyap driver; the ``iterative`` fixture sends every least-squares
system to conjugate gradients (the private ``linsep._core.linalg.solver_limits``
context, scoped to the test).
"""

import numpy as np
import pytest

from problems import local_dask_client, random_problem

PLANS = {
    "compiled": {"driver": "compiled"},                 # the compiled segment where it applies, any size
    "compiled_by_rows": {"driver": "compiled", "by_columns_max_entries": 0},  # its pass by rows (large data)
    "python": {"driver": "python"},                     # the Python driver over the design
}


@pytest.fixture(params=sorted(PLANS))
def hk_plan(request):
    """Each Ho–Kashyap driver's plan (``ho_kashyap(..., plan=hk_plan)``)."""
    return PLANS[request.param]


@pytest.fixture
def problem():
    """A small noisy two-class problem (N = 40, d = 3)."""
    return random_problem(0)


@pytest.fixture(scope="module")
def noisy():
    """A noisy two-class problem (N = 150, d = 8): the early-stopping, cross-validation and CV-plot tests."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 8))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=150) > 0, 1, -1)
    return X, y


@pytest.fixture
def iterative():
    """Every least-squares system (at least the bias and one feature) goes to the iterative solver."""
    from linsep._core.linalg import solver_limits

    with solver_limits(direct_max_columns=1):
        yield


@pytest.fixture(scope="module")
def client():
    """A two-worker in-process dask cluster for a test module (``local_dask_client``)."""
    with local_dask_client(2) as dask_client:
        yield dask_client


