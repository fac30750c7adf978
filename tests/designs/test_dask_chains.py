"""The Dask backend's chained iterations (several per round trip) on a one-worker cluster: the in-memory fits.

A module of its own: its cluster must not overlap the other modules' clients (a client's scheduler setting is
restored when it closes, in the order clients were made).
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from linsep import HoKashyapClassifier  # noqa: E402
from linsep.designs import dask as backend  # noqa: E402
from linsep.designs import dask_data  # noqa: E402
from problems import local_dask_client  # noqa: E402

from dask_problems import RTOL, assert_same_fit, dask_pair, fit_both, pair_data  # noqa: E402


@pytest.fixture(scope="module")
def one_worker():
    """A cluster whose one worker holds every block: the iterations run in chains (several per round trip)."""
    with local_dask_client(1) as client:
        yield client


def _chain_boundaries(limit=200):
    """The iterate counts ``n_iter_`` at which a chunk of chained iterates ends (chunks of 2, 4, 8, …)."""
    ends, k, steps = set(), 0, 2
    while k < limit:
        k += min(steps, backend._CHAIN_MAX)
        ends.add(k + 1)  # n_iter_ counts the first iterate W_0's pass too
        steps *= 2
    return ends


CHAINED = [
    ("hk-xor", dict(max_iter=300), "xor"),
    ("hk-separable", dict(max_iter=300), "separable"),
    ("mhks", dict(C=1.0, max_iter=200), "noisy"),
    ("mhks-tol", dict(C=1.0, tol=1e-3, max_iter=200), "noisy"),
    ("mhka", dict(C=1.0, loss="absolute", max_iter=60), "noisy"),
    ("modified-hk", dict(update="weights", max_iter=40), "noisy"),
    ("mhks-ovr", dict(C=1.0, max_iter=200), "three"),
    ("mhka-ovr", dict(C=1.0, loss="absolute", max_iter=60), "three"),
]


@pytest.mark.parametrize("params, kind", [case[1:] for case in CHAINED], ids=[case[0] for case in CHAINED])
def test_chained_iterations_equal_in_memory(one_worker, params, kind):
    X, y = pair_data(kind)
    Xd, yd = dask_pair(X, y)
    assert len(dask_data.RowBlocks(Xd, yd).groups) == 1  # one worker: one group, chained iterations
    memory = HoKashyapClassifier(**params)
    with backend.round_trips() as trips, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        memory.fit(X, y)
        on_dask = HoKashyapClassifier(**params).fit(Xd, yd)
    assert_same_fit(memory, on_dask)
    n_iter = int(np.sum(on_dask.n_iter_))
    assert trips.computes < n_iter or n_iter < 12  # several iterations per round trip
    assert trips.largest <= (X.shape[1] + 1) ** 2
    if kind == "xor":
        assert on_dask.status_ == "not_separable"
        u = on_dask.certificate_.compute()
        np.testing.assert_allclose(u, memory.certificate_, rtol=1e-6, atol=1e-12 * u.max())
    if kind in ("xor", "separable"):
        np.testing.assert_allclose(on_dask.margin_vector_.compute(), memory.margin_vector_, rtol=RTOL, atol=1e-12)


def test_chained_fits_stop_inside_a_chunk(one_worker):
    # The stopping iterate falls inside a chunk of chained iterates (not at its end) for some of these
    # tolerances: the fit is still the in-memory one, to the iterate.
    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    inside = 0
    for tol in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4):
        memory, on_dask = (HoKashyapClassifier(C=1.0, tol=tol).fit(data, labels) for data, labels in ((X, y), (Xd, yd)))
        assert_same_fit(memory, on_dask)
        inside += int(on_dask.n_iter_) not in _chain_boundaries()
    assert inside >= 2


@pytest.mark.parametrize("loss", ["squared", "absolute"], ids=["hkes", "hkesa"])
@pytest.mark.parametrize("patience", [None, 3, 7])
def test_chained_early_stopping_and_patience_equal(one_worker, loss, patience):
    X, y = pair_data("noisy", seed=1)
    X_val, y_val = pair_data("noisy", n=60, seed=2)
    make = lambda: HoKashyapClassifier(early_stopping=True, loss=loss, n_iter_no_change=patience,  # noqa: E731
                                       max_iter=80)
    memory, on_dask = fit_both(make, X, y, X_val=X_val, y_val=y_val)
    assert_same_fit(memory, on_dask)
    assert on_dask.best_iter_ == memory.best_iter_
    np.testing.assert_allclose(on_dask.history_["validation_error"], memory.history_["validation_error"])


def test_hkes_three_classes_takes_few_round_trips(one_worker):
    # Issue 21's former hang: HKES on 3 tiny classes ran one round trip per iteration (patience 100 per
    # one-vs-rest column, ~300 iterations); chained, the round trips grow with log(iterations).
    from sklearn.datasets import make_blobs

    from linsep import make_classifier

    X, y = make_blobs(90, centers=3, random_state=0)
    Xd, yd = da.from_array(X, chunks=(30, 2)), da.from_array(y, chunks=30)
    with backend.round_trips() as trips, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = make_classifier("hkes", random_state=0).fit(Xd, yd)
    n_iter = int(np.sum(clf.n_iter_))
    assert n_iter > 150  # the patience of 100 per column
    assert trips.computes + trips.persists <= 60, (trips.computes, trips.persists, n_iter)


def test_fitted_margin_holds_its_blocks_only(one_worker):
    # The margin is picked from a chain's result (every iterate's B, D and E): persisted on its own, the
    # fitted attribute keeps one chunk per row block, not that result.
    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    on_dask = HoKashyapClassifier(C=1.0, max_iter=200).fit(Xd, yd)
    assert int(on_dask.n_iter_) > 8  # the last iterate comes from a chain
    margin = on_dask.margin_vector_
    assert len(dict(margin.__dask_graph__())) == margin.numblocks[0]


def test_iterations_per_round_trip_caps_the_chains(one_worker):
    import dask

    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    design = backend.DaskDesign(dask_data.RowBlocks(Xd, yd), 1)
    assert backend.chain_length(design) > 4
    with dask.config.set({"linsep.iterations-per-round-trip": 4}), backend.round_trips() as capped:
        HoKashyapClassifier(C=1.0, max_iter=200).fit(Xd, yd)
    with backend.round_trips() as free:
        fitted = HoKashyapClassifier(C=1.0, max_iter=200).fit(Xd, yd)
    assert int(fitted.n_iter_) > 40
    assert capped.computes > free.computes  # a cap of 4 iterates per round trip, below the size limit
    for bad in (0, -1, 2.5, True):
        with dask.config.set({"linsep.iterations-per-round-trip": bad}), pytest.raises(ValueError, match="integer >= 1"):
            HoKashyapClassifier(C=1.0, max_iter=20).fit(Xd, yd)
