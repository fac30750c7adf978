"""The Ho–Kashyap rules written once for every driver, and the Python driver's own steps (:mod:`linsep.solvers.ho_kashyap.rules`)."""

import warnings

import numpy as np
import pytest

from linsep._core.certificates import nonseparability_certificate
from linsep.solvers.ho_kashyap.rules import NO_PATIENCE, patience_spent, polished, validation_improved


def test_patience_rule():
    assert not patience_spent(100, 0, NO_PATIENCE)
    assert not patience_spent(9, 0, 10) and patience_spent(10, 0, 10)
    inf = np.inf
    assert validation_improved(0.1, 0.2, inf, 0.0) and not validation_improved(0.2, 0.2, inf, 0.0)
    assert not validation_improved(0.15, 0.2, inf, 0.1)
    # a reference another run reached: only an error below it (and below the run's own best) improves
    assert not validation_improved(0.1, 0.2, 0.05, 0.0) and validation_improved(0.04, 0.2, 0.05, 0.0)
    assert validation_improved(0.1, 0.15, 0.3, 0.0) and not validation_improved(0.2, 0.15, 0.3, 0.0)


def test_nonseparability_certificate_is_the_clipped_negative_error_times_the_weights():
    E = np.array([-2.0, 0.0, 1e-3, -0.5])
    D = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(nonseparability_certificate(E), [2.0, 0.0, 0.0, 0.5])
    np.testing.assert_array_equal(nonseparability_certificate(E, D), [2.0, 0.0, 0.0, 2.0])
    xp = pytest.importorskip("array_api_strict")
    # the 2023.12 standard (clip) at least, as scikit-learn's dispatch asks of array-api-strict: 2.0 defaults to 2022.12
    flags = {"api_version": "2023.12"} if xp.get_array_api_strict_flags()["api_version"] < "2023.12" else {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The 2023.12 version of the array API specification is still preliminary")
        with xp.ArrayAPIStrictFlags(**flags):
            u = nonseparability_certificate(xp.asarray(E), xp.asarray(D), xp=xp)  # an array-API design's E
    np.testing.assert_array_equal(np.asarray(u), [2.0, 0.0, 0.0, 2.0])


@pytest.mark.parametrize("reference", [np.inf, 0.0, 0.3])
def test_both_drivers_apply_the_patience_reference_alike(reference):
    # HoKashyapClassifierCV's early exit: only errors below the reference (and the run's own best) reset the
    # patience, in the compiled segment and in the Python driver alike; k̂ is still the run's own argmin.
    from linsep._core.signed_design import sign_normalized
    from linsep.solvers.ho_kashyap import ho_kashyap

    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 20))  # its validation error falls until iterate 9 of 14 (patience 5)
    y = np.where(X @ rng.normal(size=20) + rng.normal(scale=0.3, size=160) > 0, 1.0, -1.0)
    Y = sign_normalized(X, y)
    runs = [ho_kashyap(Y[:110], Y_val=Y[110:], C=1.0, stop_at_separation=False, n_iter_no_change=5,
                       plan={"driver": driver, "validation_reference": reference}) for driver in ("auto", "python")]
    compiled, python = runs
    assert compiled.extra["plan"]["driver"] != "python"
    np.testing.assert_array_equal(compiled.history["validation_error"], python.history["validation_error"])
    assert (compiled.n_iter, compiled.best_iter) == (python.n_iter, python.best_iter)
    curve = compiled.history["validation_error"]
    assert compiled.best_iter == int(np.argmin(curve)) + 1
    free = ho_kashyap(Y[:110], Y_val=Y[110:], C=1.0, stop_at_separation=False, n_iter_no_change=5)
    if reference == 0.0:  # nothing comes below 0: the run stops once the patience from its first iterate is spent
        assert compiled.n_iter == 1 + 5 < free.n_iter
        np.testing.assert_array_equal(curve, free.history["validation_error"][:len(curve)])
    if reference == np.inf:
        np.testing.assert_array_equal(free.history["validation_error"], curve)


class _RecordingFactor:
    """A stand-in for an inexact W-step solver: records the right-hand sides of the full solves."""

    tol, converged = 1e-10, True

    def __init__(self):
        self.solved = []

    def solve(self, rhs, tol=None, x0=None):
        self.solved.append(np.array(rhs))
        return 2.0 * rhs


@pytest.mark.parametrize("case", ["no early stopping", "best is last", "best is earlier", "separating"])
def test_polish_re_solves_only_the_returned_weights(case):
    # After inexact W-steps the returned weights are solved in full; with early stopping the last
    # iterate is not returned unless it is the choice, and is not re-solved (a full CG solve each).
    W, B, best_W, best_B = np.ones(3), np.arange(3.0), np.zeros(3), np.full(3, 5.0)
    factor = _RecordingFactor()
    early = case != "no early stopping"
    from linsep.designs.memory import InMemoryDesign

    design = InMemoryDesign(np.eye(3))  # its solve_target hands the margins to the factor's solve
    out_W, out_best, exact = polished(design, factor, W, B, best_W if early else None, best_B if early else None,
                                       case == "best is last", 0.0, keep_separating=case == "separating")
    expected = {"no early stopping": [B], "best is last": [B], "best is earlier": [best_B], "separating": [best_B]}
    assert [r.tolist() for r in factor.solved] == [r.tolist() for r in expected[case]]
    assert exact
    if case in ("best is earlier", "separating"):
        assert out_W is W  # the last iterate kept as it is
        np.testing.assert_array_equal(out_best, 2.0 * best_B)
    else:
        np.testing.assert_array_equal(out_W, 2.0 * B)
        if early:
            assert out_best is out_W
