"""The compiled Ho–Kashyap passes (:mod:`linsep._loops`): HKES by rows reads its held-out rows inside the
training pass (one read of X per iteration) and gives the fit of the separate passes.

The compiled segment as a whole is compared with the Python driver in ``test_ho_kashyap.py`` (the
``_plan={"driver": ...}`` cases); the sequential rules' loops are tested through their estimators
(``test_perceptron.py``, ``test_mse.py``, ``test_stream.py``).
"""

import numpy as np
import pytest

from linsep._design import SignedDesign
from linsep.solvers.ho_kashyap import ho_kashyap


def _split(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = np.where(X @ rng.standard_normal(d) + 2.0 * rng.standard_normal(n) > 0, 1.0, -1.0)
    held_out = np.zeros(n, dtype=bool)
    held_out[rng.permutation(n)[: n // 3]] = True
    return X, y, np.flatnonzero(~held_out), np.flatnonzero(held_out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n", "threads"), [(3_000, 1), (40_000, 1), (40_000, 2)])
@pytest.mark.parametrize("absolute", [False, True])
def test_merged_validation_pass_gives_the_separate_passes_fit(dtype, n, threads, absolute):
    # Validation rows of the same X (HKES's own split) are counted inside the training pass; a copy of X
    # for the validation rows takes the separate count.  Same iterates, same validation curve, bit for bit.
    X, y, fit_rows, val_rows = _split(n, 8, dtype)
    plan = {"by_columns_max_entries": 0, "threads": threads}
    kwargs = {"C": 0.5, "max_iter": 25, "tol": 0.0, "loss": "absolute" if absolute else "squared",
              "stop_at_separation": False, "_plan": plan}
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
    kwargs = {"C": 0.5, "max_iter": 10, "tol": 0.0, "stop_at_separation": False, "_plan": plan}
    merged = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows), Y_val=SignedDesign(X, y[val_rows], val_rows),
                        **kwargs)
    separate = ho_kashyap(SignedDesign(X, y[fit_rows], fit_rows),
                          Y_val=SignedDesign(X.copy(), y[val_rows], val_rows), **kwargs)
    np.testing.assert_array_equal(merged.history["validation_error"], separate.history["validation_error"])
    np.testing.assert_array_equal(merged.weights, separate.weights)
