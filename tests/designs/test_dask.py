"""The Dask backend: the same fits as in memory, blockwise, on a small LocalCluster."""

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from linsep import HoKashyapClassifier, LagrangianSVMClassifier, MSEClassifier  # noqa: E402
from linsep.designs import dask as dask_design, dask_data  # noqa: E402
from linsep._core.certificates import FIT_PROOF_RTOL, is_proof  # noqa: E402
from dask_problems import CHUNKS, RTOL, assert_same_fit, dask_pair, fit_both, pair_data  # noqa: E402

@pytest.mark.parametrize("kind, expected", [("separable", "separable"), ("xor", "not_separable")])
def test_hk_verdicts_equal(client, kind, expected):
    X, y = pair_data(kind)
    memory, on_dask = fit_both(lambda: HoKashyapClassifier(max_iter=300), X, y)
    assert memory.status_ == expected
    assert_same_fit(memory, on_dask)
    np.testing.assert_allclose(on_dask.margin_vector_.compute(), memory.margin_vector_, rtol=RTOL, atol=1e-12)
    if expected == "not_separable":
        # the certificate stays on the workers; it is a valid proof for the in-memory check too
        u = on_dask.certificate_.compute()
        np.testing.assert_allclose(u, memory.certificate_, rtol=1e-6, atol=1e-12 * u.max())
        assert is_proof(X, np.where(y == 1, 1.0, -1.0), u, FIT_PROOF_RTOL)


def test_hk_max_iter_warns(client):
    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    with pytest.warns(ConvergenceWarning):
        on_dask = HoKashyapClassifier(max_iter=4).fit(Xd, yd)
    memory = HoKashyapClassifier(max_iter=4)
    with pytest.warns(ConvergenceWarning):
        memory.fit(X, y)
    assert on_dask.status_ == "max_iter"
    assert_same_fit(memory, on_dask)


MHKS, MHKA, MODIFIED = dict(C=1.0, max_iter=12), dict(C=1.0, loss="absolute", max_iter=8), dict(update="weights", max_iter=12)


# One-vs-rest is the same code for every variant: MHKS and MHKA cover it.
@pytest.fixture(params=[None, 1], ids=["chained", "per-iteration"])
def per_round_trip(request):
    """Iterations per round trip: chains (small data) or one, each pass one task per worker's group of blocks."""
    with dask.config.set({"linsep.iterations-per-round-trip": request.param}):
        yield request.param


@pytest.mark.parametrize("params, kind", [(MHKS, "noisy"), (MHKA, "noisy"), (MODIFIED, "noisy"), (MHKS, "three"),
                                          (MHKA, "three")],
                         ids=["mhks", "mhka", "modified_hk", "mhks-ovr", "mhka-ovr"])
def test_hk_variants_equal(client, params, kind, per_round_trip):
    X, y = pair_data(kind)
    memory, on_dask = fit_both(lambda: HoKashyapClassifier(**params), X, y)
    assert_same_fit(memory, on_dask)


@pytest.mark.parametrize("loss", ["squared", "absolute"], ids=["hkes", "hkesa"])
def test_early_stopping_with_validation_data_equal(client, loss, per_round_trip):
    X, y = pair_data("noisy", seed=1)
    X_val, y_val = pair_data("noisy", n=60, seed=2)
    make = lambda: HoKashyapClassifier(early_stopping=True, loss=loss, max_iter=12)  # noqa: E731
    memory, on_dask = fit_both(make, X, y, X_val=X_val, y_val=y_val)
    assert_same_fit(memory, on_dask)
    assert on_dask.best_iter_ == memory.best_iter_
    np.testing.assert_allclose(on_dask.history_["validation_error"], memory.history_["validation_error"])


def test_early_stopping_blockwise_split(client):
    # Without X_val, each row block holds out a stratified third, seeded by (random_state, block):
    # the in-memory fit on the same split gives the same model.
    X, y = pair_data("three", seed=3)
    Xd, yd = dask_pair(X, y)
    make = lambda: HoKashyapClassifier(early_stopping=True, max_iter=6, random_state=7)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        on_dask = make().fit(Xd, yd)
        starts = np.cumsum((0,) + CHUNKS)
        held = np.concatenate([start + dask_data._held_out_block(y[a:b], np.unique(y), 1 / 3, 7, i)[1]
                               for i, (start, a, b) in enumerate(zip(starts, starts[:-1], starts[1:]))])
        keep = np.setdiff1d(np.arange(len(y)), held)
        memory = make().fit(X[keep], y[keep], X_val=X[held], y_val=y[held])
    assert 0.25 < held.size / len(y) < 0.4
    assert_same_fit(memory, on_dask)
    np.testing.assert_array_equal(on_dask.best_iter_, memory.best_iter_)


@pytest.mark.parametrize("kind", ["noisy", "three"])
def test_mse_equal(client, kind):
    X, y = pair_data(kind)
    memory, on_dask = fit_both(lambda: MSEClassifier(C=0.5), X, y)
    assert_same_fit(memory, on_dask)
    np.testing.assert_array_equal(on_dask.margin_vector_.compute(), memory.margin_vector_)
    b = np.linspace(0.5, 2.0, len(y))
    memory, on_dask = fit_both(lambda: MSEClassifier(), X, y, margin=b)
    assert_same_fit(memory, on_dask)


@pytest.mark.parametrize("kind", ["noisy", "three"])
def test_lsvm_equal(client, kind):
    X, y = pair_data(kind)
    memory, on_dask = fit_both(lambda: LagrangianSVMClassifier(C=2.0, tol=1e-3, max_iter=20), X, y)
    assert_same_fit(memory, on_dask)
    alpha = on_dask.alpha_.compute()
    np.testing.assert_allclose(alpha, memory.alpha_, rtol=0, atol=RTOL * np.abs(memory.alpha_).max())


def test_predict_is_blockwise(client):
    X, y = pair_data("three")
    Xd, yd = dask_pair(X, y, dask_y=False)  # NumPy labels with dask X
    clf = MSEClassifier().fit(Xd, yd)
    scores, labels = clf.decision_function(Xd), clf.predict(Xd)
    assert isinstance(scores, da.Array) and isinstance(labels, da.Array)
    assert scores.chunks[0] == CHUNKS
    np.testing.assert_allclose(scores.compute(), clf.decision_function(X), rtol=1e-12)
    np.testing.assert_array_equal(labels.compute(), clf.predict(X))


def test_one_pass_per_iteration_and_only_small_results(client, per_round_trip):
    # Per iteration at most one persist (the fused block pass) and one compute, whose results are p-sized.
    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    with dask_design.round_trips() as trips, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = HoKashyapClassifier(C=1.0, max_iter=12).fit(Xd, yd)
    n_iter = clf.n_iter_
    # the fused passes, plus a fixed number of set-up and checking round trips
    assert trips.persists <= n_iter + 2
    assert trips.computes <= n_iter + 6
    assert trips.largest <= (X.shape[1] + 1) ** 2  # the Gram matrix: nothing N-sized
    if per_round_trip is None:  # chains of 2, 4, 8 iterates
        assert trips.computes <= 3 + 6


def test_refused_inputs(client):
    X, y = pair_data("noisy")
    yd = da.from_array(y, chunks=(CHUNKS,))
    by_columns = da.from_array(X, chunks=(CHUNKS, 2))
    # column chunks are merged when the row blocks stay small
    np.testing.assert_allclose(MSEClassifier().fit(by_columns, yd).coef_, MSEClassifier().fit(X, y).coef_,
                               rtol=1e-10)
    too_big = da.zeros((4, 2**28), chunks=(4, 2**20))
    with pytest.raises(ValueError, match="chunked by columns"):
        MSEClassifier().fit(too_big, np.array([0, 1, 0, 1]))
    unknown = da.from_array(X, chunks=(CHUNKS, 4))
    unknown = unknown[unknown[:, 0] > -10]
    with pytest.raises(ValueError, match="unknown size"):
        HoKashyapClassifier().fit(unknown, y)
    with pytest.raises(ValueError, match="one label per row"):
        HoKashyapClassifier().fit(da.from_array(X, chunks=(CHUNKS, 4)), y[:-1])
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LagrangianSVMClassifier().fit(da.from_array(bad, chunks=(CHUNKS, 4)), yd)
    with pytest.raises(ValueError, match="record_history"):
        HoKashyapClassifier(record_history=True).fit(da.from_array(X, chunks=(CHUNKS, 4)), yd)
    collinear = np.column_stack([X, X[:, 0]])
    with pytest.raises(ValueError, match="singular"):
        MSEClassifier().fit(da.from_array(collinear, chunks=(CHUNKS, 5)), yd)


def test_wide_x_is_refused_before_any_pass_where_a_gram_matrix_is_needed(client):
    # MSE and IRLS solve from a dense (d+1)×(d+1) Gram matrix: wide X is refused up front, naming the fits
    # that take it (HK with squared errors and the LSVM: distributed CG, tests/designs/test_dask_text.py).
    wide = da.zeros((6, 2000), chunks=(3, 2000))
    labels = np.array([0, 1] * 3)
    for make in (MSEClassifier, lambda: HoKashyapClassifier(loss="absolute")):
        with dask_design.round_trips() as trips, pytest.raises(
                ValueError, match="2000 features, too many for .* on the dask backend.*LagrangianSVMClassifier"):
            make().fit(wide, labels)
        assert trips.persists == trips.computes == 0


@pytest.mark.parametrize("make", [lambda: HoKashyapClassifier(C=1.0, max_iter=12), lambda: MSEClassifier(),
                                  lambda: LagrangianSVMClassifier(C=2.0, tol=1e-3, max_iter=20)],
                         ids=["mhks", "mse", "lsvm"])
def test_float32_gives_the_in_memory_float32_model(client, make):
    X, y = pair_data("three")
    X32 = X.astype(np.float32)
    memory, on_dask = fit_both(make, X32, y)
    assert on_dask.coef_.dtype == memory.coef_.dtype == np.float32
    assert on_dask.intercept_.dtype == memory.intercept_.dtype == np.float32
    # the same fit up to the float32 rounding of the weights (and of the in-memory float32 products)
    W_mem = np.column_stack([memory.coef_, memory.intercept_]).astype(float)
    W_dask = np.column_stack([on_dask.coef_, on_dask.intercept_]).astype(float)
    np.testing.assert_allclose(W_dask, W_mem, rtol=0, atol=1e-5 * np.abs(W_mem).max())
    np.testing.assert_array_equal(np.atleast_1d(on_dask.status_), np.atleast_1d(memory.status_))


def test_bench_on_a_dask_scheduler(client, tmp_path, capsys):
    import dask

    from linsep.cli import main

    argv = ["bench", "--datasets", "thyroid", "--methods", "hk", "mse", "--splits", "2", "--no-progress"]
    assert main(argv + ["--out", str(tmp_path / "dask"), "--scheduler", client.scheduler.address]) == 0
    assert "4 runs computed" in capsys.readouterr().out
    assert main(argv + ["--out", str(tmp_path / "local")]) == 0
    capsys.readouterr()
    on_dask, local = ({(r["dataset"], r["method"], r["split"]): r["test_error"]
                       for r in json.loads((tmp_path / name / "results.json").read_text())}
                      for name in ("dask", "local"))
    assert on_dask == local and len(local) == 4  # seeded by (seed, split): the same wherever they ran
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):  # shorter than linsep's 10 s: waited instead
        assert main(argv + ["--out", str(tmp_path / "x"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err


def test_a_block_separates_only_beyond_the_rounding_bound():
    # 0.1 + 0.2 - 0.3 is 5.6e-17 in float64 and 0 exactly: the first point is on the hyperplane x1 + x2 = 0.3,
    # within its rounding bound τ = γ_3 (0.1 + 0.2 + 0.3) ≈ 2e-16, so the block is not strictly separated
    # (the in-memory verdict's rule, linsep._core.certificates.side_tolerance); moved off it, it is
    from linsep.designs.dask import _separates_block

    X = np.array([[0.1, 0.2], [1.0, 1.0], [-1.0, -1.0]])
    labels = np.array([1, 1, 0])
    coef, intercept = np.array([1.0, 1.0]), -0.3
    assert X[0] @ coef + intercept > 0
    assert not _separates_block(X, labels, 1, None, coef, intercept)
    assert _separates_block(X + [[0.01, 0.0], [0.0, 0.0], [0.0, 0.0]], labels, 1, None, coef, intercept)


def _linsep_calls(fit):
    """``(calls, model)``: linsep's Python calls made by ``fit()`` in order, ``(module, code)`` each, every task
    in this thread (synchronous scheduler).

    Observed with ``sys.setprofile``, as ``benchmarks/trace_fit_flow.py`` traces a fit: nothing in linsep is
    replaced.
    """
    import sys

    calls = []

    def profile(frame, event, arg):
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.startswith("linsep"):
                calls.append((module, frame.f_code))

    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sys.setprofile(profile)
        try:
            model = fit()
        finally:
            sys.setprofile(None)
    return calls, model


def _signed_views_built(fit):
    """How many ``SignedDesign``s ``fit()`` builds (the calls of its ``__init__``, :func:`_linsep_calls`)."""
    from linsep._core.signed_design import SignedDesign

    calls, model = _linsep_calls(fit)
    return sum(code is SignedDesign.__init__.__code__ for _, code in calls), model


@pytest.mark.parametrize("params", [dict(C=1.0), dict(C=1.0, loss="absolute")], ids=["mhks", "mhka"])
def test_hk_builds_each_block_view_once_per_problem(params):
    # A dask fit signs each block once per problem (DaskDesign.signed_blocks) and every pass reads that view:
    # the views built do not grow with the iterations (the old passes rebuilt one per block per iteration).
    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    assert Xd.numblocks[0] >= 2
    few, short = _signed_views_built(lambda: HoKashyapClassifier(max_iter=3, tol=1e-14, **params).fit(Xd, yd))
    many, long = _signed_views_built(lambda: HoKashyapClassifier(max_iter=40, tol=1e-14, **params).fit(Xd, yd))
    assert long.n_iter_ > short.n_iter_ + 20
    assert many == few
    assert few <= 4 * Xd.numblocks[0]  # the Gram pass's, the passes' own, a certificate's: a few per block


def _module_crossings(fit):
    """``(crossings, model)``: how often ``fit()``'s consecutive linsep calls change module (:func:`_linsep_calls`),
    as ``benchmarks/trace_fit_flow.py`` counts them."""
    calls, model = _linsep_calls(fit)
    return sum(a[0] != b[0] for a, b in zip(calls, calls[1:])), model


@pytest.mark.parametrize("params", [dict(C=1.0), dict(update="weights")], ids=["mhks", "weights"])
def test_hk_iterates_cross_no_module(params):
    # A chained dask fit runs each iterate inside solvers/ho_kashyap/step.py (block_chain: the blocks' passes,
    # the margin update, the sums, the W-step's LAPACK solve bound once per chain), and the driver takes the
    # chain's iterates from one list per round trip and applies the rules beside it (rules.iterate_in_python):
    # no module crossing an iterate.  The longer fit's 40 more iterates cost one more round trip (5 crossings
    # measured); the chain before crossed 5 times an iterate (driver 3, worker 2), the one before it ~17.
    X, y = pair_data("noisy")
    Xd, yd = dask_pair(X, y)
    few, short = _module_crossings(lambda: HoKashyapClassifier(max_iter=20, tol=1e-14, **params).fit(Xd, yd))
    many, long = _module_crossings(lambda: HoKashyapClassifier(max_iter=60, tol=1e-14, **params).fit(Xd, yd))
    iterates = long.n_iter_ - short.n_iter_
    assert iterates >= 30
    assert many - few <= 20, (many - few, iterates)


def test_a_float32_block_keeps_no_float64_copy_for_the_fit():
    # The prepared block keeps its signed view only where the view shares the block's memory (float64); a
    # float32 block's view is a float64 copy, made per pass and dropped, so a persisted float32 X is held once.
    from linsep.designs.dask import _SignedBlock

    X = np.random.default_rng(0).standard_normal((6, 3))
    labels = np.array([0, 1, 1, 0, 1, 0])
    kept = _SignedBlock(X, labels, 1, None)
    made_per_pass = _SignedBlock(X.astype(np.float32), labels, 1, None)
    assert kept._Y is not None and made_per_pass._Y is None
    W = np.arange(1.0, 5.0)
    np.testing.assert_allclose(made_per_pass.Y @ W, kept.Y @ W.astype(np.float32).astype(np.float64), rtol=1e-6)
