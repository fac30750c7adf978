"""Honest verdicts at every data scale: every estimator, check_separability, the shared rescaling.

The reference checks here are independent of linsep: exact rational arithmetic (``fractions``) for
certificates, plain NumPy for the rest.
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import linsep.separability as separability
from linsep import check_separability, make_classifier
from linsep._certificates import PROOF_RTOL, is_proof
from linsep._design import column_shifts, scale_columns, unscale_coef
from linsep._registry import available_classifiers
from linsep._result import CONVERGED, NOT_SEPARABLE, SEPARABLE, SolveResult
from linsep.estimators.ho_kashyap import HoKashyapClassifier

NAMES = sorted(available_classifiers())
KERNEL = {name for name in NAMES if name.startswith("kernel_")}
# Estimators whose problem depends on the data's scale through a penalty C (Łęski's MHKS/MHKA,
# the Lagrangian SVM): inside the representable range a tiny scale makes C dominate, and the
# bias-only answer is the correct one for that problem.
PENALISED = {"mhks", "mhka", "lsvm", "kernel_lsvm"}
SCALES = [1e-300, 1e-200, 1e-4, 1.0, 1e4, 1e200, 1e300]


def wide_margin_data(seed=0, n=24, d=3):
    """Two classes 4 apart along the first axis: every estimator separates them at scale 1."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.uniform(-1, 1, size=(n, d))
    X[:, 0] += np.where(y == 1, 2.5, -2.5)
    return X, y


def assert_honest(clf, X, y):
    """The returned model never contradicts its status; scores are finite."""
    scores = clf.decision_function(X)
    assert np.all(np.isfinite(scores))
    if clf.status_ == SEPARABLE:
        signs = np.where(y == clf.classes_[1], 1.0, -1.0)
        assert np.all(signs * scores > 0), "status 'separable' but a training point is not on its side"


def fit_quietly(name, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return make_classifier(name).fit(X, y)


def _matrix_params():
    for name in NAMES:
        for scale in SCALES + ["mixed"]:
            yield pytest.param(name, scale, id=f"{name}-{scale}")


@pytest.mark.parametrize("name,scale", list(_matrix_params()))
def test_every_estimator_at_every_scale(name, scale):
    X, y = wide_margin_data()
    if scale == "mixed":  # one column per extreme, the bias in between
        Xs = X * np.array([1e-300, 1e300, 1.0])
        representable = name not in KERNEL
    else:
        Xs = X * scale
        representable = name not in KERNEL or 1e-4 <= scale <= 1e4
    if not representable:
        with pytest.raises(ValueError, match="Rescale"):
            fit_quietly(name, Xs, y)
        return
    clf = fit_quietly(name, Xs, y)
    assert_honest(clf, Xs, y)
    if name in PENALISED and scale == 1e-4:
        return  # the penalty decides here (see PENALISED); honesty is all that is asserted
    assert np.mean(clf.predict(Xs) == y) == np.mean(fit_quietly(name, X, y).predict(X) == y) == 1.0


def test_in_range_data_are_neither_copied_nor_rescaled():
    X, _ = wide_margin_data()
    assert column_shifts(X) is None
    assert column_shifts(X.astype(np.float32)) is None
    assert column_shifts(np.zeros((3, 2))) is None


@pytest.mark.parametrize("dtype,p", [(np.float64, 53), (np.float32, 24)])
def test_rescaling_is_exact_and_keeps_the_dtype(dtype, p):
    X, _ = wide_margin_data()
    X = X.astype(dtype)
    for k in (p + 1, -(p + 3)):
        Xk = np.ldexp(X, k).astype(dtype)
        shifts = column_shifts(Xk)
        assert shifts is not None
        scaled = scale_columns(Xk, shifts)
        assert scaled.dtype == dtype
        assert np.array_equal(np.ldexp(scaled, -shifts.astype(np.int32)), Xk)  # no bit lost
        largest = np.abs(scaled).max(axis=0)
        assert np.all((largest >= 0.5) & (largest < 1))


def test_a_column_too_wide_to_rescale_exactly_is_refused():
    X = np.array([[1e300, 1.0], [1e-40, 2.0], [-1e300, 3.0]])  # 2^-997 would make 1e-40 subnormal
    with pytest.raises(ValueError, match="orders of magnitude"):
        column_shifts(X)
    with pytest.raises(ValueError, match="orders of magnitude"):
        make_classifier("hk").fit(X, [0, 1, 0])


def test_a_column_scaled_down_keeps_its_small_entries_normal():
    X = np.array([[1e300, 1.0], [1e-20, 2.0], [-1e300, 3.0]])  # a shift of -955, not -997
    shifts = column_shifts(X)
    scaled = scale_columns(X, shifts)
    assert abs(scaled[1, 0]) >= np.finfo(float).tiny
    assert np.array_equal(np.ldexp(scaled, -shifts.astype(np.int32)), X)


@pytest.mark.parametrize("name", ["hk", "hkes", "mhka", "mse", "perceptron", "batch_perceptron", "kozinec", "lms"])
def test_weights_map_back_exactly(name):
    # X 2^-1000 is rescaled to exactly X 2^k0 (in range), so the solver sees the same numbers
    # and coef_ must be the in-range coef_ times 2^(1000 + k0), bit for bit.
    X, y = wide_margin_data(3)
    k0 = -np.frexp(np.abs(X).max(axis=0))[1]
    in_range = np.ldexp(X, k0)
    params = {"random_state": 0} if "random_state" in make_classifier(name).get_params() else {}
    reference = make_classifier(name, **params).fit(in_range, y)
    tiny = make_classifier(name, **params).fit(np.ldexp(X, -1000), y)
    assert np.array_equal(tiny.coef_, np.ldexp(reference.coef_, 1000 + k0))
    assert np.array_equal(tiny.intercept_, reference.intercept_)
    assert tiny.status_ == reference.status_ and tiny.n_iter_ == reference.n_iter_


def test_unrepresentable_weights_are_refused():
    with pytest.raises(ValueError, match="overflow"), np.errstate(over="ignore"):
        unscale_coef(np.array([[1e300, 1.0]]), np.array([1000, 0]))


def test_multiclass_linear_machine_and_validation_data_follow_the_scaling():
    rng = np.random.default_rng(1)
    centers = np.array([[0, 0], [6, 0], [0, 6]])
    y = np.repeat([0, 1, 2], 10)
    X = centers[y] + rng.uniform(-1, 1, size=(30, 2))
    for scale in (1e-250, 1e250):
        assert np.mean(make_classifier("mse").fit(X * scale, y).predict(X * scale) == y) == 1.0
        clf = HoKashyapClassifier(early_stopping=True).fit(X * scale, y, X_val=X * scale, y_val=y)
        assert np.all(np.asarray(clf.status_) == SEPARABLE)


def test_starting_weights_follow_the_scaling():
    X, y = wide_margin_data(4)
    scale = 2.0**-1000
    start = np.array([1.0, -2.0, 0.5])
    reference = HoKashyapClassifier().fit(X, y, coef_init=start, intercept_init=0.1)
    tiny = HoKashyapClassifier().fit(X * scale, y, coef_init=start / scale, intercept_init=0.1)
    assert tiny.status_ == reference.status_ == SEPARABLE
    assert np.array_equal(tiny.predict(X * scale), reference.predict(X))


# --- verdicts are checked on the returned model ---------------------------------------------------

def test_a_separable_claim_the_weights_contradict_is_demoted(monkeypatch):
    X, y = wide_margin_data()
    monkeypatch.setattr(HoKashyapClassifier, "_solve_binary",
                        lambda self, X, y, **kw: SolveResult(np.zeros(X.shape[1] + 1), 1, SEPARABLE))
    assert HoKashyapClassifier().fit(X, y).status_ == CONVERGED


def test_an_unchecked_proof_is_demoted(monkeypatch):
    X, y = wide_margin_data()
    monkeypatch.setattr(HoKashyapClassifier, "_solve_binary",
                        lambda self, X, y, **kw: SolveResult(np.zeros(X.shape[1] + 1), 1, NOT_SEPARABLE,
                                                             certificate=np.ones(X.shape[0])))
    clf = HoKashyapClassifier().fit(X, y)
    assert clf.status_ == CONVERGED and clf.certificate_ is None


def test_a_true_proof_is_kept_at_every_scale():
    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0.0]])  # XOR
    y = [0, 0, 1, 1]
    for scale in (1e-300, 1e-200, 1.0, 1e200, 1e300):
        clf = make_classifier("hk").fit(X * scale, y)
        assert clf.status_ == NOT_SEPARABLE
        assert exact_proof_residual(X * scale, np.where(np.array(y) == 1, 1, -1), clf.certificate_) <= PROOF_RTOL


# --- IRLS fixed point --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mhka", "hkesa"])
@pytest.mark.parametrize("compiled", [True, False])
def test_irls_stops_at_its_fixed_point_on_separable_data(name, compiled):
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(4, 10)) * 10
    y = np.repeat(np.arange(4), 15)
    X = centers[y] + rng.normal(size=(60, 10))
    clf = make_classifier(name, random_state=0)
    clf._solver_plan = None if compiled else {"driver": "python"}  # private: the driver to run
    clf.fit(X, y)  # ran all 10 000 iterations per class before
    assert np.all(np.asarray(clf.status_) == SEPARABLE)
    assert np.max(clf.n_iter_) < 200


# --- check_separability ------------------------------------------------------------------------------

def exact_proof_residual(X, signs, u):
    """max_j |Σ u_i y_i Y_ij| / Σ u_i |Y_ij| in exact rational arithmetic (bias column included)."""
    u = [Fraction(float(v)) for v in np.ravel(u)]
    assert all(v >= 0 for v in u) and any(v > 0 for v in u)
    worst = Fraction(0)
    columns = [list(map(float, X[:, j])) for j in range(X.shape[1])] + [[1.0] * X.shape[0]]
    for column in columns:
        terms = [ui * int(s) * Fraction(x) for ui, s, x in zip(u, signs, column)]
        magnitude = sum(abs(t) for t in terms)
        if magnitude:
            worst = max(worst, abs(sum(terms)) / magnitude)
    return float(worst)


def exactly_separates(X, signs, coef, intercept):
    coef = [Fraction(float(c)) for c in np.ravel(coef)]
    b = Fraction(float(intercept))
    return all(int(s) * (sum(c * Fraction(float(x)) for c, x in zip(coef, row)) + b) > 0
               for row, s in zip(X, signs))


@st.composite
def problems(draw):
    n = draw(st.integers(4, 24))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    normal = rng.normal(size=d)
    side = X @ normal
    X = X[np.abs(side) > 0.1] if np.count_nonzero(np.abs(side) > 0.1) >= 2 else X
    y = (X @ normal > 0).astype(int)
    separable = draw(st.booleans()) and len(np.unique(y)) == 2
    if not separable:  # one point under both labels: not separable, whatever else
        X = np.vstack([X, X[:1]])
        y = np.append(y, 1 - y[0])
    shifts = draw(st.lists(st.integers(-1000, 1000), min_size=d, max_size=d))
    return np.ldexp(X, np.array(shifts, dtype=np.int32)), y, separable


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_check_separability_never_returns_an_unchecked_certificate(problem):
    X, y, separable = problem
    if len(np.unique(y)) < 2:
        return
    result = check_separability(X, y)
    signs = np.where(y == result.classes[1], 1, -1)
    if result.separable is None:
        assert result.certificate is None and result.status == "undecided"
        return
    assert result.separable == separable
    if result.separable:
        assert exactly_separates(X, signs, result.certificate.coef, result.certificate.intercept)
    else:
        assert exact_proof_residual(X, signs, result.certificate.u) <= PROOF_RTOL


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e300])
def test_check_separability_at_extreme_scales(scale):
    X, y = wide_margin_data()
    result = check_separability(X * scale, y)
    assert result.separable is True and result.status == SEPARABLE
    assert exactly_separates(X * scale, np.where(y == 1, 1, -1), result.certificate.coef,
                             result.certificate.intercept)
    one_column = check_separability([[1e308], [-1e308], [1e308]], [0, 1, 0])
    assert one_column.separable is True


def test_the_old_false_proof_is_not_a_proof():
    # What Ho–Kashyap returned for X·1e-200 before the rescaling: u = -E on every point, which
    # the old residual (against the largest column, the bias) accepted.
    X, y = wide_margin_data()
    signs = np.where(y == 1, 1.0, -1.0)
    u = np.ones(len(y))
    assert not is_proof(X * 1e-200, signs, u)
    assert exact_proof_residual(X * 1e-200, signs.astype(int), u) > PROOF_RTOL


def test_undecided_when_no_candidate_passes(monkeypatch, capsys):
    from types import SimpleNamespace

    X, y = wide_margin_data()
    monkeypatch.setattr(separability, "ho_kashyap", lambda Y, **kw: SolveResult(
        np.zeros(Y.shape[1]), 3, NOT_SEPARABLE, certificate=np.ones(Y.shape[0])))
    monkeypatch.setattr(separability, "linprog", lambda *a, **kw: SimpleNamespace(status=2, x=None))
    result = check_separability(X, y)
    assert result.separable is None and result.certificate is None and result.status == "undecided"
    assert result.summary().startswith("undecided")


def test_cli_reports_undecided_with_its_own_exit_status(monkeypatch, tmp_path, capsys):
    from linsep import cli

    path = tmp_path / "d.csv"
    path.write_text("a,label\n0,0\n1,1\n")
    monkeypatch.setattr(separability, "check_separability",
                        lambda X, y: separability.SeparabilityResult(None, None, "linear_programming",
                                                                     np.array([0, 1]), 0))
    assert cli.main(["separable", str(path)]) == cli.EXIT_UNDECIDED == 3
    assert capsys.readouterr().out.splitlines()[0] == "undecided"


def test_traced_weights_are_in_the_original_columns():
    X, y = wide_margin_data(5)
    k0 = -np.frexp(np.abs(X).max(axis=0))[1]
    reference = make_classifier("hk", record_history=True).fit(np.ldexp(X, k0), y)
    tiny = make_classifier("hk", record_history=True).fit(np.ldexp(X, -1000), y)
    expected = np.array(reference.history_["weights"], dtype=float)
    expected[:, :-1] = np.ldexp(expected[:, :-1], 1000 + k0)
    assert np.array_equal(tiny.history_["weights"], expected)
    assert np.array_equal(tiny.history_["weights"][-1, :-1], tiny.coef_[0])
