"""Early stopping: the patience rule (both drivers, memory and dask), verdicts on every row passed to fit.

The rule's own unit test is in ``test_hk_rules.py``; cross-validation over ``(C, k)`` in
``test_ho_kashyap_cv.py``.  The ``noisy`` problem is a fixture of ``conftest.py``.
"""

import re

import numpy as np
import pytest

from linsep import HoKashyapClassifier, KernelHoKashyapClassifier
from linsep._core.signed_design import sign_normalized
from linsep.cli import main
from linsep.solvers.ho_kashyap.solver import ho_kashyap


@pytest.fixture(scope="module")
def wide_random():
    """More features than fitting rows and random labels: the fitting rows are always separated, the rest not."""
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 60)), rng.integers(0, 2, 40)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("n_iter_no_change", [None, 3, 20])
def test_both_drivers_stop_alike(noisy, loss, n_iter_no_change):
    X, y = noisy
    Y = sign_normalized(X, y)
    runs = [ho_kashyap(Y[:100], Y_val=Y[100:], stop_at_separation=False, loss=loss,
                       n_iter_no_change=n_iter_no_change, plan={"driver": driver})
            for driver in ("compiled", "python")]
    assert runs[0].extra["plan"]["driver"] == "compiled" and runs[1].extra["plan"]["driver"] == "python"
    assert (runs[0].n_iter, runs[0].best_iter, runs[0].status) == (runs[1].n_iter, runs[1].best_iter, runs[1].status)
    np.testing.assert_allclose(runs[0].weights, runs[1].weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(runs[0].history["validation_error"], runs[1].history["validation_error"])


def test_patience_ends_the_run_after_the_last_improvement(noisy):
    X, y = noisy
    Y = sign_normalized(X, y)
    paper = ho_kashyap(Y[:100], Y_val=Y[100:], stop_at_separation=False, loss="absolute")
    patient = ho_kashyap(Y[:100], Y_val=Y[100:], stop_at_separation=False, loss="absolute", n_iter_no_change=3)
    assert patient.n_iter == patient.best_iter + 3 < paper.n_iter
    assert patient.status == "converged"
    # The iterates run are the paper's: the same curve, cut short.
    curve = patient.history["validation_error"]
    np.testing.assert_array_equal(curve, paper.history["validation_error"][:curve.size])
    assert patient.best_iter == int(np.argmin(curve)) + 1


def test_validation_tol_counts_only_large_falls(noisy):
    X, y = noisy
    Y = sign_normalized(X, y)
    run = ho_kashyap(Y[:100], Y_val=Y[100:], stop_at_separation=False, n_iter_no_change=4, validation_tol=0.99)
    assert run.n_iter == 5  # nothing counts as an improvement: four iterates after the first
    assert run.best_iter == int(np.argmin(run.history["validation_error"])) + 1


def test_patience_without_validation_rows_is_ignored(noisy):
    X, y = noisy
    Y = sign_normalized(X, y)
    assert ho_kashyap(Y, n_iter_no_change=1).n_iter == ho_kashyap(Y).n_iter


def test_none_keeps_the_paper_rule(noisy):
    X, y = noisy
    paper = HoKashyapClassifier(early_stopping=True, n_iter_no_change=None, random_state=0).fit(X, y)
    patient = HoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)
    assert patient.n_iter_ <= paper.n_iter_
    assert paper.n_iter_ == HoKashyapClassifier(early_stopping=True, n_iter_no_change=10**6,
                                                random_state=0).fit(X, y).n_iter_


def test_patience_on_dask_matches_memory(noisy):
    da = pytest.importorskip("dask.array")
    X, y = noisy
    kwargs = dict(early_stopping=True, n_iter_no_change=3, loss="absolute")
    memory = HoKashyapClassifier(**kwargs).fit(X[:100], y[:100], X_val=X[100:], y_val=y[100:])
    dask = HoKashyapClassifier(**kwargs).fit(da.from_array(X[:100], chunks=50), y[:100],
                                             X_val=X[100:], y_val=y[100:])
    assert (dask.n_iter_, dask.best_iter_) == (memory.n_iter_, memory.best_iter_)
    np.testing.assert_allclose(dask.coef_, memory.coef_, rtol=1e-8)


# ------------------------------------------------------------------ verdicts on every row

@pytest.mark.parametrize("make", [
    lambda: HoKashyapClassifier(early_stopping=True, random_state=0),
    lambda: HoKashyapClassifier(early_stopping=True, loss="absolute", random_state=0),
    lambda: KernelHoKashyapClassifier(kernel="linear", C=None, map_tol=0, early_stopping=True, random_state=0),
])
def test_held_out_rows_take_part_in_the_verdict(wide_random, make):
    X, y = wide_random
    est = make().fit(X, y)
    errors = int(np.sum(est.predict(X) != y))
    assert errors > 0  # all on the held-out rows: the fitting rows are separated
    assert est.status_ != "separable"


def test_held_out_rows_take_part_in_the_verdict_on_dask():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-3, 0.5, (30, 2)), rng.normal(3, 0.5, (30, 2))])
    y = np.repeat([0, 1], 30)
    y[0] = 1  # one row on the wrong side: separable fitting rows whenever it is held out
    for seed in range(8):
        est = HoKashyapClassifier(early_stopping=True, random_state=seed).fit(da.from_array(X, chunks=60), y)
        assert (est.status_ == "separable") == bool(np.all(est.predict(X) == y))


def test_separable_data_stay_separable_with_held_out_rows():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-4, 1, (30, 2)), rng.normal(4, 1, (30, 2))])
    y = np.repeat([0, 1], 30)
    est = HoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)
    assert est.status_ == "separable" and est.score(X, y) == 1.0


def test_a_proof_on_the_fitting_rows_covers_every_row():
    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]] * 6, dtype=float)  # XOR: no hyperplane
    y = np.array([0, 0, 1, 1] * 6)
    est = HoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)
    assert est.status_ == "not_separable"
    u = est.certificate_
    assert u.shape == (X.shape[0],) and np.all(u >= 0) and u.any()
    Y = sign_normalized(X, np.where(y == 1, 1, -1))
    np.testing.assert_allclose(Y.T @ u, 0, atol=1e-8 * np.abs(u).sum())


def test_cli_status_agrees_with_the_training_error(tmp_path, capsys, wide_random):
    X, y = wide_random
    data = tmp_path / "wide.csv"
    header = [f"x{j}" for j in range(X.shape[1])] + ["label"]
    data.write_text("\n".join([",".join(header)] + [",".join([*map(repr, map(float, row)), str(label)])
                                                      for row, label in zip(X, y)]) + "\n")
    assert main(["fit", "hkes", str(data), "-o", str(tmp_path / "m.model"), "--param", "random_state=0"]) == 0
    out = capsys.readouterr().out
    status = re.search(r"status (\w+)", out).group(1)
    error = float(re.search(r"training error ([\d.]+)%", out).group(1))
    assert error > 0 and status != "separable"
