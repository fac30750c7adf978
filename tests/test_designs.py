"""The Design protocol (linsep.designs): the in-memory and the dask design give the drivers the same numbers."""

import numpy as np
import pytest

from linsep._design import sign_normalized
from linsep._params import HK_CONSTRAINTS, HKParams, refuse_unsupported
from linsep.designs import InMemoryDesign, as_design
from linsep.solvers.ho_kashyap import ho_kashyap

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from linsep import make_classifier
from linsep._dask import prepare
from linsep.designs.dask import DaskDesign

CHUNKS = (40, 25, 35)


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):  # no cluster: the blockwise code runs in this process
        yield


def problem(seed=0, n=sum(CHUNKS), d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1, 0)
    return X, y


def designs(X, y):
    memory = as_design(sign_normalized(X, np.where(y == 1, 1.0, -1.0)))
    estimator = make_classifier("mhks")
    blocks = prepare(estimator, da.from_array(X, chunks=(CHUNKS, X.shape[1])), da.from_array(y, chunks=(CHUNKS,)))
    return memory, DaskDesign(blocks, 1)


@pytest.mark.parametrize("irls", [False, True])
def test_pass_statistics_and_steps_agree(irls):
    X, y = problem()
    memory, on_dask = designs(X, y)
    assert isinstance(memory, InMemoryDesign) and memory.shape == on_dask.shape
    W = np.array([0.5, -0.2, 0.1, 0.05])
    options = dict(offset=1.0, two_mu=0.8, tol=1e-6, update="margin", irls=irls)
    first = [d.hk_pass(W, d.constant_vector(1e-3), None, **options) for d in (memory, on_dask)]
    for name in ("J", "wrong", "separated", "max_e", "min_e", "max_b", "fixed_point"):
        np.testing.assert_allclose(getattr(first[1], name), getattr(first[0], name), rtol=1e-12, err_msg=name)
    factors = [d.least_squares_solver(0.5) for d in (memory, on_dask)]
    if irls:
        factors = [state.reweighted(f, 1e-6)[0] for state, f in zip(first, factors)]
    steps = [state.solve_margin(f) for state, f in zip(first, factors)]
    np.testing.assert_allclose(steps[1], steps[0], rtol=1e-10)
    np.testing.assert_allclose(on_dask.host(first[1].B_next).compute(), first[0].B_next, rtol=1e-14)


@pytest.mark.parametrize("kw", [dict(), dict(C=1.0, loss="absolute"), dict(update="weights")])
def test_one_driver_gives_the_same_fit_on_both_designs(kw):
    X, y = problem(1)
    memory, on_dask = designs(X, y)
    kw = dict(kw, max_iter=25)
    expected = ho_kashyap(memory, **kw, _plan={"driver": "python"})
    got = ho_kashyap(on_dask, **kw)
    assert (got.status, got.n_iter) == (expected.status, expected.n_iter)
    assert got.extra["plan"]["driver"] == "python"
    np.testing.assert_allclose(got.weights, expected.weights, rtol=1e-8)
    np.testing.assert_allclose(got.margin.compute(), expected.margin, rtol=1e-8)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
@pytest.mark.parametrize("name", ["mhks", "mhka", "lsvm", "mse", "hk"])
def test_dask_refuses_columns_the_in_memory_fit_would_rescale(name, scale):
    """The in-memory test of linsep._design.column_shifts, on the blocks' column maxima; the cause is named."""
    X, y = problem(2)
    with pytest.raises(ValueError, match=r"column 0 of X has magnitudes up to .*outside 2\^±53.*does not rescale"):
        make_classifier(name).fit(da.from_array(X * np.array([scale, 1.0, 1.0]), chunks=(CHUNKS, 3)), y)


def test_one_constraint_table_for_every_hk_estimator():
    from linsep import HoKashyapClassifier, HoKashyapClassifierCV

    for cls in (HoKashyapClassifier, HoKashyapClassifierCV):
        for name in set(HK_CONSTRAINTS) & set(cls._parameter_constraints):
            assert cls._parameter_constraints[name] == HK_CONSTRAINTS[name], (cls.__name__, name)
    params = HKParams.from_estimator(HoKashyapClassifier(C=0.5, early_stopping=True))
    assert params.C == 0.5 and params.stop_at_separation is False
    assert set(params.solver_kwargs()) <= set(ho_kashyap.__code__.co_varnames)


def test_a_parameter_a_backend_cannot_honour_is_refused_generically():
    from dataclasses import dataclass

    from linsep._dask import HK_SUPPORTED

    @dataclass(frozen=True)
    class WithMomentum(HKParams):  # a parameter added to the solver, not declared by the dask backend
        momentum: float = 0.0

    refuse_unsupported(WithMomentum(), WithMomentum.neutral(), "dask input", HK_SUPPORTED)
    with pytest.raises(ValueError, match="momentum=0.3 is not available for dask input"):
        refuse_unsupported(WithMomentum(momentum=0.3), WithMomentum.neutral(), "dask input", HK_SUPPORTED)
    with pytest.raises(ValueError, match="record_history=True is not available"):
        make_classifier("hk", record_history=True).fit(*[da.from_array(a, chunks=50) for a in problem()])
