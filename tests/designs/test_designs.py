"""The Design protocol (linsep.designs): the in-memory and the dask design give the drivers the same numbers."""

import copy

import numpy as np
import pytest

from linsep._core.signed_design import sign_normalized
from linsep.designs import InMemoryDesign, as_design
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.ho_kashyap.step import hk_iterates, hk_pass

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from linsep import make_classifier
from linsep.designs.dask_fit import DaskFit
from linsep.designs.dask import DaskDesign
from dask_problems import design_problem

CHUNKS = (40, 25, 35)


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):  # no cluster: the blockwise code runs in this process
        yield


def designs(X, y):
    memory = as_design(sign_normalized(X, np.where(y == 1, 1.0, -1.0)))
    data = DaskFit(da.from_array(X, chunks=(CHUNKS, X.shape[1])), da.from_array(y, chunks=(CHUNKS,)), "test")
    return memory, DaskDesign(data.blocks, 1)


@pytest.mark.parametrize("irls", [False, True])
def test_pass_statistics_and_steps_agree(irls):
    X, y = design_problem()
    memory, on_dask = designs(X, y)
    assert isinstance(memory, InMemoryDesign) and memory.shape == on_dask.shape
    W = np.array([0.5, -0.2, 0.1, 0.05])
    options = dict(offset=1.0, two_mu=0.8, tol=1e-6, update="margin", irls=irls)
    first = [hk_pass(d, W, d.constant_vector(1e-3), None, **options) for d in (memory, on_dask)]
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
    X, y = design_problem(1)
    memory, on_dask = designs(X, y)
    kw = dict(kw, max_iter=25)
    expected = ho_kashyap(memory, **kw, plan={"driver": "python"})
    got = ho_kashyap(on_dask, **kw)
    assert (got.status, got.n_iter) == (expected.status, expected.n_iter)
    assert got.extra["plan"]["driver"] == "python"
    np.testing.assert_allclose(got.weights, expected.weights, rtol=1e-8)
    np.testing.assert_allclose(got.margin.compute(), expected.margin, rtol=1e-8)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
@pytest.mark.parametrize("name", ["mhks", "mhka", "lsvm", "mse", "hk"])
def test_dask_refuses_columns_the_in_memory_fit_would_rescale(name, scale):
    """The in-memory test of linsep._core.signed_design.column_shifts, on the blocks' column maxima; the cause is named."""
    X, y = design_problem(2)
    with pytest.raises(ValueError, match=r"column 0 of X has magnitudes up to .*outside 2\^±53.*does not rescale"):
        make_classifier(name).fit(da.from_array(X * np.array([scale, 1.0, 1.0]), chunks=(CHUNKS, 3)), y)


class _FailsAt:
    """A factor whose ``n``-th solve raises (a step a chained run computes ahead of the driver)."""

    def __init__(self, factor, n):
        self.factor, self.n, self.calls, self.ridge = factor, n, 0, factor.ridge

    def solve_normal(self, g):
        self.calls += 1
        if self.calls == self.n:
            raise np.linalg.LinAlgError(f"solve {self.n} fails")
        return self.factor.solve_normal(g)

    def normal_solver(self):  # the solve a chain binds once (LeastSquaresFactor.normal_solver: g -> (z, info))
        return lambda g: (self.solve_normal(g), 0)


def test_chained_iterates_are_the_serial_ones_and_defer_errors():
    # One group (synchronous scheduler): DaskDesign.chained_iterates runs chunks of 2, 4, … iterates in one task.
    X, y = design_problem(3)
    memory, on_dask = designs(X, y)
    assert len(on_dask.blocks.groups) == 1
    options = dict(offset=1.0, two_mu=0.8, tol=1e-6, update="margin", irls=False, validation=None)
    W = np.array([0.5, -0.2, 0.1, 0.05])
    steps = {}
    for name, design, fails in (("memory", memory, None), ("dask", on_dask, 4)):
        factor = design.least_squares_solver(0.5)
        factor = factor if fails is None else _FailsAt(factor, fails)
        state = hk_pass(design, W, design.constant_vector(1e-3), None, **options)
        steps[name] = hk_iterates(design, state, W, None, None, factor, update="margin", learning_rate=0.4,
                                  irls_floor=1e-6, pass_options=options)
    # solves 1-2 make the first chunk, solve 4 fails inside the second: iterate 3 comes, then the error
    for _ in range(3):
        (W_mem, B_mem, _, _, s_mem), (W_dask, B_dask, _, _, s_dask) = next(steps["memory"]), next(steps["dask"])
        np.testing.assert_allclose(W_dask, W_mem, rtol=1e-12)
        np.testing.assert_allclose(on_dask.host(B_dask).compute(), B_mem, rtol=1e-12)
        for name in ("J", "wrong", "separated", "max_e", "min_e", "max_b", "fixed_point"):
            np.testing.assert_allclose(getattr(s_dask, name), getattr(s_mem, name), rtol=1e-12, err_msg=name)
    with pytest.raises(np.linalg.LinAlgError, match="solve 4 fails"):
        next(steps["dask"])


@pytest.mark.parametrize("kw", [dict(C=1.0, tol=1e-3), dict(C=1.0, loss="absolute"), dict(update="weights"),
                                dict(C=1.0, Y_val=True, n_iter_no_change=4), dict(loss="absolute", Y_val=True)])
def test_chained_driver_stops_where_the_serial_one_does(kw):
    # Chained (one task for all blocks) and one round trip per iterate (step.hk_iterates' own loop, one task
    # per group of blocks) give the same fit, whatever iterate the rules stop at.
    X, y = design_problem(4)
    _, chained = designs(X, y)
    blocks = copy.copy(chained.blocks)
    blocks.groups = [[0], [2], [1]]  # as if three workers held them
    serial = DaskDesign(blocks, 1)
    serial.chain_max = 1  # one round trip per iterate: step.hk_iterates' own loop over the three groups
    kw = dict(kw, max_iter=60)
    if kw.pop("Y_val", False):
        X_val, y_val = design_problem(5)
        val = designs(X_val, y_val)[1]
        kw["Y_val"] = val
    results = [ho_kashyap(d, **kw) for d in (chained, serial)]
    assert (results[0].status, results[0].n_iter, results[0].best_iter) == \
        (results[1].status, results[1].n_iter, results[1].best_iter)
    np.testing.assert_array_equal(results[0].weights, results[1].weights)  # the same sums, bit for bit
