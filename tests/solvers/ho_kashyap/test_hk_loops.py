"""The compiled Ho–Kashyap passes (:mod:`linsep.solvers.ho_kashyap.loops`): HKES by rows reads its held-out rows inside the
training pass (one read of X per iteration) and gives the fit of the separate passes.

The compiled segment as a whole is compared with the Python driver in ``test_ho_kashyap.py`` (the
``plan={"driver": ...}`` cases); the sequential rules' loops are tested through their estimators
(``test_perceptron.py``, ``test_mse.py``, ``test_stream.py``).
"""

import numpy as np
import pytest

from linsep._core.signed_design import SignedDesign
from linsep.solvers.ho_kashyap.solver import ho_kashyap


def _split(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = np.where(X @ rng.standard_normal(d) + 2.0 * rng.standard_normal(n) > 0, 1.0, -1.0)
    held_out = np.zeros(n, dtype=bool)
    held_out[rng.permutation(n)[: n // 3]] = True
    return X, y, np.flatnonzero(~held_out), np.flatnonzero(held_out)


@pytest.mark.numerics
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n", "threads"), [(3_000, 1), (40_000, 1), (40_000, 2)])
@pytest.mark.parametrize("absolute", [False, True])
def test_merged_validation_pass_gives_the_separate_passes_fit(dtype, n, threads, absolute):
    # Validation rows of the same X (HKES's own split) are counted inside the training pass; a copy of X
    # for the validation rows takes the separate count.  Same iterates, same validation curve, bit for bit.
    X, y, fit_rows, val_rows = _split(n, 8, dtype)
    plan = {"by_columns_max_entries": 0, "threads": threads}
    kwargs = {"C": 0.5, "max_iter": 25, "tol": 0.0, "loss": "absolute" if absolute else "squared",
              "stop_at_separation": False, "plan": plan}
    merged = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                        Y_val=SignedDesign(X, y[val_rows], val_rows), **kwargs)
    separate = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                          Y_val=SignedDesign(X.copy(), y[val_rows], val_rows), **kwargs)
    assert merged.extra["plan"]["driver"] == separate.extra["plan"]["driver"] == "compiled"
    np.testing.assert_array_equal(merged.weights, separate.weights)
    np.testing.assert_array_equal(merged.history["validation_error"], separate.history["validation_error"])
    np.testing.assert_array_equal(merged.history["criterion"], separate.history["criterion"])
    assert merged.n_iter == separate.n_iter
    assert merged.best_iter == separate.best_iter


def test_merged_pass_counts_validation_rows_outside_the_training_range():
    # Held-out rows before the first and after the last training row belong to the first and last chunks.
    X, y, _, _ = _split(40_000, 8, np.float64, seed=3)
    fit_rows, val_rows = np.arange(5_000, 35_000), np.r_[np.arange(5_000), np.arange(35_000, 40_000)]
    plan = {"by_columns_max_entries": 0, "threads": 2}
    kwargs = {"C": 0.5, "max_iter": 10, "tol": 0.0, "stop_at_separation": False, "plan": plan}
    merged = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows), Y_val=SignedDesign(X, y[val_rows], val_rows),
                        **kwargs)
    separate = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                          Y_val=SignedDesign(X.copy(), y[val_rows], val_rows), **kwargs)
    np.testing.assert_array_equal(merged.history["validation_error"], separate.history["validation_error"])
    np.testing.assert_array_equal(merged.weights, separate.weights)


_COMPILED_PARTS = """
import json, sys
import numpy as np
from linsep.solvers.ho_kashyap import loops as _loops, rows as _hk_rows
from linsep._core.signed_design import SignedDesign, sign_normalized
from linsep.solvers.ho_kashyap.solver import ho_kashyap

rng = np.random.default_rng(0)
X = rng.standard_normal((2000, 8)).astype(sys.argv[1])
y = np.where(X[:, 0] + rng.standard_normal(2000) > 0, 1.0, -1.0)
plan = {"driver": "compiled", "by_columns_max_entries": 0 if sys.argv[2] == "rows" else 10**9, "threads": 1}
ho_kashyap(sign_normalized(X, y) if sys.argv[2] == "columns" else SignedDesign(X, y), C=0.5, loss=sys.argv[3],
           max_iter=5, plan=plan)
names = ["_pass_by_columns", "_pass_by_rows_chunked", "_pass_by_rows_parallel", "_count_rows_parallel",
         "_reweighted_factor", "_weighted_gram_parallel", "_pass_merged_wide"]
compiled = {name: len(getattr(_loops, name).signatures) > 0 for name in names}
compiled["_pass_merged_narrow"] = len(_hk_rows._pass_merged_narrow.signatures) > 0
print(json.dumps(compiled))
"""


@pytest.mark.parametrize(("dtype", "layout", "loss", "expected"), [
    ("float64", "columns", "squared", {"_pass_by_columns"}),
    ("float64", "columns", "absolute", {"_pass_by_columns", "_reweighted_factor"}),
    ("float64", "rows", "squared", {"_pass_merged_wide"}),
    ("float32", "rows", "absolute", {"_pass_merged_narrow", "_reweighted_factor"}),
])
def test_a_fit_compiles_only_the_parts_it_runs(tmp_path, dtype, layout, loss, expected):
    # A fresh process with an empty numba cache: the segment's None selectors and the pass chosen by X's
    # type leave every part this fit does not run (the other layout, the chunked and parallel passes,
    # IRLS, the other type's pass) uncompiled.
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _COMPILED_PARTS, dtype, layout, loss], env=env, check=True,
                         capture_output=True, text=True).stdout
    compiled = {name for name, done in json.loads(out.splitlines()[-1]).items() if done}
    assert compiled == expected


def _folds_of(n, n_folds, seed):
    """A random partition of ``n`` rows into folds: ``fold_of`` and each fold's sorted (train, validation)."""
    fold_of = np.random.default_rng(seed).integers(0, n_folds, n)
    return fold_of, [(np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in range(n_folds)]


@pytest.mark.numerics
@pytest.mark.parametrize("threads", [1, 2])
def test_runs_in_lockstep_are_the_runs_alone_bit_for_bit(threads):
    # A wave of (C, fold) runs on views of one float32 X: the lockstep reads X once per iteration for all of
    # them (``threads`` groups of runs), each run applies its own rules to its own statistics.  Chunks (40 000
    # training rows: several), float32 blocks, C = None on a singular system (eigh) and early stops at
    # different iterations all enter; every number must be the run's alone.
    from linsep.solvers.ho_kashyap.segments import Lockstep

    X, y, _, _ = _split(50_000, 7, np.float32, seed=5)
    X = np.ascontiguousarray(np.c_[X, X[:, 0] - X[:, 1]])  # YᵀY singular: C = None takes the eigh factor
    fold_of, folds = _folds_of(X.shape[0], 4, seed=6)
    kwargs = {"max_iter": 60, "n_iter_no_change": 8, "plan": {"singular": "eigh", "by_columns_max_entries": 0}}
    lockstep = Lockstep(X, y, fold_of, threads=threads)
    tasks = [(C, f) for C in (None, 0.5) for f in range(4)]

    def run(C, f, **extra):
        train, validation = folds[f]
        return ho_kashyap(SignedDesign(X, y[train], train), Y_val=SignedDesign(X, y[validation], validation), C=C,
                          **{**kwargs, **extra})

    together = lockstep.results([run(C, f, plan=dict(kwargs["plan"], lockstep=(lockstep, f))) for C, f in tasks])
    assert len(lockstep.runs) == len(tasks)  # every run was left to the lockstep
    n_iters = set()
    for (C, f), shared in zip(tasks, together):
        alone = run(C, f)
        assert shared.extra["plan"]["lockstep"] and "lockstep" not in alone.extra["plan"]
        assert shared.extra["plan"]["driver"] == alone.extra["plan"]["driver"] == (
            "compiled (eigh)" if C is None else "compiled")
        assert (shared.status, shared.n_iter, shared.best_iter) == (alone.status, alone.n_iter, alone.best_iter)
        np.testing.assert_array_equal(shared.weights, alone.weights)
        np.testing.assert_array_equal(shared.margin, alone.margin)
        for name, trace in alone.history.items():
            if name == "criterion":
                # J = ‖e‖² is summed by the lockstep's own statistics function, not by the segment: LLVM may contract
                # its multiply-adds otherwise (numba 0.61 gave one ulp on one of 14 values). The iterates above, which
                # decide the fit, are equal bit for bit; the criterion agrees to a few units of roundoff.
                np.testing.assert_allclose(shared.history[name], trace, rtol=4 * np.finfo(float).eps, err_msg=name)
            else:
                np.testing.assert_array_equal(shared.history[name], trace, err_msg=name)
        n_iters.add(alone.n_iter)
    assert len(n_iters) > 1  # the runs stopped at different iterations: the lockstep went on without the stopped


def test_lockstep_leaves_runs_it_cannot_serve_alone():
    # Rows that are not a fold's (a subset), float64 X, or IRLS: ho_kashyap runs them itself, as without it.
    from linsep.solvers.ho_kashyap.segments import Lockstep

    X, y, _, _ = _split(50_000, 7, np.float32, seed=7)
    fold_of, folds = _folds_of(X.shape[0], 4, seed=8)
    lockstep = Lockstep(X, y, fold_of)
    plan = {"by_columns_max_entries": 0}  # views, read by rows (what the lockstep serves)
    train, validation = folds[0]
    Y_val = SignedDesign(X, y[validation], validation)
    for Y, extra in ((SignedDesign(X, y[train[1:]], train[1:]), {}),
                     (SignedDesign(X, y[train], train), {"loss": "absolute"})):
        result = ho_kashyap(Y, Y_val=Y_val, C=0.5, max_iter=5, plan=dict(plan, lockstep=(lockstep, 0)), **extra)
        assert result.extra["plan"]["driver"] == "compiled" and "lockstep" not in result.extra["plan"]
    assert not lockstep.runs
    served = ho_kashyap(SignedDesign(X, y[train], train), Y_val=Y_val, C=0.5, max_iter=5, plan=dict(plan, lockstep=(lockstep, 0)))
    assert len(lockstep.runs) == 1 and lockstep.results([served])[0].extra["plan"]["lockstep"]
    assert not Lockstep.serves(X.astype(np.float64)) and Lockstep.serves(X)
