"""Ho–Kashyap family: lecture example, textbook oracles, verdicts, early stopping."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from problems import random_problem, traced_peak
from linsep import HoKashyapClassifier, make_classifier
from linsep._core.signed_design import SignedDesign, sign_normalized
from linsep._core.result import SEPARABLE
from linsep.solvers.ho_kashyap.solver import ho_kashyap

# The lecture's example: class 1 {(6,9),(5,7)}, class 2 {(5,9),(0,10)}.
LECTURE_X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
LECTURE_Y = np.array([1, 1, -1, -1])
XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([1, 1, -1, -1])


def lecture_to_ours(a):
    """The lecture puts the bias first; linsep puts it last."""
    return np.r_[a[1:], a[0]]


# --------------------------------------------------------------------------- oracles
def oracle_hk(Y, b, mu, n_updates, w=None, C=None, absolute=False, modified=False):
    """Textbook HK / MHK loop with an explicit pseudo-inverse (tests only)."""
    p = Y.shape[1]
    offset = 0.0 if C is None else 1.0
    reg = np.zeros((p, p)) if C is None else C * np.diag(np.r_[np.ones(p - 1), 0.0])
    D = np.ones(len(b))

    def solve(rhs):
        return np.linalg.pinv(Y.T @ (D[:, None] * Y) + reg) @ Y.T @ (D * rhs)

    w = solve(b + offset) if w is None else w
    for _ in range(n_updates):
        e = Y @ w - offset - b
        if absolute:
            D = 1 / np.maximum(np.abs(e), 1e-6 * np.abs(e).max())
        w = w + mu * solve(np.abs(e)) if modified else solve(b + mu * (e + np.abs(e)) + offset)
        b = b + mu * (e + np.abs(e))
    return w, b


# --------------------------------------------------------------------------- lecture
def test_lecture_first_iteration():
    Y = sign_normalized(LECTURE_X, LECTURE_Y)
    r = ho_kashyap(Y, learning_rate=0.9, initial_weights=np.ones(3), initial_margin=np.ones(4),
                   max_iter=1, tol=0.0, stop_at_separation=False)
    np.testing.assert_allclose(r.margin, [28, 22.6, 1, 1])
    np.testing.assert_allclose(r.weights, lecture_to_ours(np.array([34.6, 2.7, -3.8])), atol=0.05)
    assert r.n_iter == 2  # a(1) given, a(2) computed


def test_lecture_reaches_separation_after_about_104_iterations():
    Y = sign_normalized(LECTURE_X, LECTURE_Y)
    r = ho_kashyap(Y, learning_rate=0.9, initial_weights=np.ones(3), initial_margin=np.ones(4))
    assert r.status == "separable"
    assert r.n_iter in (103, 104)
    np.testing.assert_allclose(r.weights, lecture_to_ours(np.array([-34.9, 27.3, -11.3])), atol=0.05)
    np.testing.assert_allclose(r.margin, [28, 23, 1, 147], atol=0.5)
    assert (Y @ r.weights > 0).all()


def test_lecture_example_through_the_estimator():
    clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0).fit(
        LECTURE_X, LECTURE_Y, coef_init=[1.0, 1.0], intercept_init=1.0)
    assert clf.status_ == "separable" and clf.n_iter_ in (103, 104)
    assert clf.score(LECTURE_X, LECTURE_Y) == 1.0


def test_paper_rule_stops_before_separation_relative_rule_separates():
    """The issue's measured fact: eps = 0.5 b0^2 on the raw J is loose."""
    Y = sign_normalized(LECTURE_X, LECTURE_Y)
    paper = ho_kashyap(Y, stopping="paper", tol=None)
    assert paper.status == "converged" and (Y @ paper.weights <= 0).any()
    relative = ho_kashyap(Y)
    assert relative.status == "separable" and (Y @ relative.weights > 0).all()


# --------------------------------------------------------------------------- oracles
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hk_matches_textbook_oracle(seed):
    X, y = random_problem(seed)
    Y = sign_normalized(X, y)
    r = ho_kashyap(Y, max_iter=25, tol=0.0, stop_at_separation=False)
    w, b = oracle_hk(Y, np.full(len(y), 1e-6), 0.4, r.n_iter - 1)
    np.testing.assert_allclose(r.weights, w, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(r.margin, b, rtol=1e-9, atol=1e-15)


def test_modified_hk_equals_hk_from_least_squares_start_and_oracle_otherwise():
    X, y = random_problem(3)
    Y = sign_normalized(X, y)
    kw = dict(max_iter=15, tol=0.0, stop_at_separation=False)
    hk = ho_kashyap(Y, **kw)
    modified = ho_kashyap(Y, update="weights", **kw)
    np.testing.assert_allclose(modified.weights, hk.weights, rtol=1e-6, atol=1e-12)
    w0 = np.array([1.0, -1.0, 0.5, 0.2])
    start = ho_kashyap(Y, update="weights", initial_weights=w0, **kw)
    w, _ = oracle_hk(Y, np.full(len(y), 1e-6), 0.4, 15, w=w0, modified=True)
    np.testing.assert_allclose(start.weights, w, rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_mhk_matches_oracle(loss):
    X, y = random_problem(4)
    Y = sign_normalized(X, y)
    r = ho_kashyap(Y, C=0.5, loss=loss, max_iter=10, tol=0.0, stop_at_separation=False)
    w, b = oracle_hk(Y, np.full(len(y), 1e-6), 0.4, 10, C=0.5, absolute=loss == "absolute")
    np.testing.assert_allclose(r.weights, w, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- verdicts
def check_proof(Y, u):
    assert (u >= 0).all() and u.sum() > 0
    assert np.abs(Y.T @ u).max() <= 1e-9 * (np.abs(Y).T @ u).max()


def test_xor_is_proved_not_separable():
    clf = make_classifier("hk").fit(XOR_X, XOR_Y)
    assert clf.status_ == "not_separable"
    Y = sign_normalized(XOR_X, np.where(XOR_Y == clf.classes_[1], 1, -1))
    u = clf.certificate_
    check_proof(Y, u)
    E = -u  # the certificate is -E: E <= 0, E != 0, Yᵀ E = 0
    assert (E <= 0).all() and np.any(E < 0)


def test_irls_variant_proof_is_valid():
    X = np.r_[XOR_X, XOR_X + 0.05]
    y = np.r_[XOR_Y, XOR_Y]
    r = ho_kashyap(sign_normalized(X, y), loss="absolute")
    assert r.status == "not_separable"
    check_proof(sign_normalized(X, y), r.certificate)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 60), d=st.integers(1, 6))
def test_separable_data_end_separated(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10)
    w = rng.normal(size=d)
    score = X @ w + rng.normal()
    margin = 0.1 * np.abs(score).max()
    keep = np.abs(score) > margin
    if len(np.unique(np.sign(score[keep]))) < 2:
        return
    X, y = X[keep], np.where(score[keep] > 0, 1, -1)
    clf = HoKashyapClassifier(max_iter=50_000).fit(X, y)
    assert clf.status_ == "separable"
    assert clf.score(X, y) == 1.0


def test_max_iter_status_and_warning():
    X, y = random_problem(5, n=200)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf = HoKashyapClassifier(max_iter=1, tol=0.0).fit(X, y)
    assert clf.status_ == "max_iter"


def test_converged_status_without_verdict():
    X, y = random_problem(6, n=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = HoKashyapClassifier().fit(X, y)
    assert clf.status_ in ("converged", "not_separable")


def test_multiclass_status_per_class():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [6, 0], [0, 6]])
    X = np.vstack([c + rng.normal(size=(20, 2)) for c in centers])
    y = np.repeat(["a", "b", "c"], 20)
    clf = make_classifier("hk").fit(X, y)
    assert clf.coef_.shape == (3, 2) and clf.status_.shape == (3,)
    assert clf.score(X, y) > 0.95


# --------------------------------------------------------------------------- early stopping
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_hkes_keeps_first_argmin_of_its_recorded_curve(loss):
    X, y = random_problem(7, n=150, d=5)
    X_val, y_val = random_problem(8, n=80, d=5)
    clf = HoKashyapClassifier(early_stopping=True, loss=loss).fit(X, y, X_val=X_val, y_val=y_val)
    curve = clf.history_["validation_error"]
    assert clf.best_iter_ == int(np.argmin(curve)) + 1
    assert len(curve) == clf.n_iter_
    # the kept weights are those of iterate best_iter_: rerun HK exactly that far
    rerun = ho_kashyap(sign_normalized(X, np.where(y == clf.classes_[1], 1, -1)), loss=loss,
                       max_iter=clf.best_iter_ - 1, tol=0.0, stop_at_separation=False)
    np.testing.assert_allclose(np.r_[clf.coef_.ravel(), clf.intercept_], rerun.weights, rtol=1e-8)
    assert np.mean(clf.predict(X_val) != y_val) == pytest.approx(curve.min())


def test_hkes_splits_validation_off_the_training_data_reproducibly():
    X, y = random_problem(9, n=120, d=4)
    a = make_classifier("hkes", random_state=0).fit(X, y)
    b = make_classifier("hkes", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.history_["validation_error"].size == a.n_iter_


def test_validation_arguments_need_early_stopping():
    X, y = random_problem(10)
    with pytest.raises(ValueError, match="early_stopping"):
        HoKashyapClassifier().fit(X, y, X_val=X, y_val=y)
    with pytest.raises(ValueError, match="both"):
        HoKashyapClassifier(early_stopping=True).fit(X, y, X_val=X)


# The private plans that force the compiled loop (whatever the size; "auto" leaves toy problems to the Python
# driver) and its pass by rows (the layout of data larger than the cache).
COMPILED = {"driver": "compiled"}
BY_ROWS = {False: COMPILED, True: {**COMPILED, "by_columns_max_entries": 0}}
PYTHON = {"driver": "python"}

COMPILED_CASES = [
    dict(),
    dict(C=0.3),
    dict(C=0.0, stop_at_separation=False),
    dict(stopping="paper", tol=None, b0=1e-3),
    dict(stop_at_separation=False, tol=0.0, stopping="paper", max_iter=40),
    dict(initial_weights=np.array([1.0, -2.0, 0.5, 0.0, 3.0])),
    dict(learning_rate=0.9, record_history=True),
    dict(loss="absolute"),                                     # HKESA with validation data
    dict(loss="absolute", C=0.5),                              # MHKA
    dict(loss="absolute", C=1e-3, stop_at_separation=False, max_iter=60),
]


@pytest.mark.parametrize("kw", COMPILED_CASES)
@pytest.mark.parametrize("with_validation", [False, True])
@pytest.mark.parametrize("by_rows", [False, True])
def test_compiled_loop_reproduces_the_numpy_loop(kw, with_validation, by_rows):
    """Dense runs with the margin update take the compiled loop; it must give the NumPy loop's iterates.

    Segments of 3 iterations exercise the hand-over of the state between calls; small data are
    swept by columns unless the size limit is lowered to force the by-rows pass of large data.
    IRLS runs must finish in the compiled loop (no hand-over to NumPy on these well-posed data).
    """
    plan = {"segment_steps": 3, **BY_ROWS[by_rows]}
    X, y = random_problem(11, n=300, d=4)
    Y = sign_normalized(X, y)
    X_val, y_val = random_problem(12, n=100, d=4)
    kw = dict(kw, Y_val=sign_normalized(X_val, y_val) if with_validation else None)
    compiled = ho_kashyap(Y, **kw, plan=plan)
    assert compiled.extra["plan"]["driver"] == "compiled"  # no hand-over to the Python driver
    reference = ho_kashyap(Y, **kw, plan={**plan, "driver": "python"})
    assert reference.extra["plan"]["driver"] == "python"
    assert compiled.n_iter > 4  # several segments
    assert (compiled.status, compiled.n_iter, compiled.best_iter) == (reference.status, reference.n_iter, reference.best_iter)
    np.testing.assert_allclose(compiled.weights, reference.weights, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(compiled.margin, reference.margin, rtol=1e-8, atol=1e-14)
    assert (compiled.history is None) == (reference.history is None)
    for name, trace in (reference.history or {}).items():
        np.testing.assert_allclose(compiled.history[name], trace, rtol=1e-8, err_msg=name)


@pytest.mark.parametrize("design", ["duplicated_column", "wide"])
@pytest.mark.parametrize("with_validation", [False, True])
@pytest.mark.parametrize("by_rows", [False, True])
def test_compiled_loop_on_rank_deficient_data(design, with_validation, by_rows):
    """Rank-deficient Y iterates in the basis of its right singular vectors; same iterates as W = Y⁺B."""
    X, y = random_problem(14, n=120, d=3)
    if design == "duplicated_column":
        X = np.c_[X, X[:, :1], 2 * X[:, 1:2] - X[:, 2:3]]
    else:
        X, y = X[:6], np.r_[1, -1, 1, -1, 1, -1]
        X = np.c_[X, X @ np.ones((3, 5))]
    Y = sign_normalized(X, y)
    Y_val = sign_normalized(X[::2] + 0.1, -y[::2]) if with_validation else None
    kw = dict(stop_at_separation=False, tol=0.0, stopping="paper", max_iter=30, record_history=True, Y_val=Y_val)
    compiled = ho_kashyap(Y, **kw, plan=BY_ROWS[by_rows])
    reference = ho_kashyap(Y, **kw, plan={**BY_ROWS[by_rows], **PYTHON})
    assert compiled.extra["plan"]["driver"] == "compiled (svd basis)"
    assert compiled.extra["factorization"] == reference.extra["factorization"] == "svd"
    assert (compiled.status, compiled.n_iter, compiled.best_iter) == (reference.status, reference.n_iter, reference.best_iter)
    np.testing.assert_allclose(compiled.weights, reference.weights, rtol=1e-7, atol=1e-12)
    for name, trace in reference.history.items():
        np.testing.assert_allclose(compiled.history[name], trace, rtol=1e-7, atol=1e-20, err_msg=name)


def _collinear_problem():
    """A column that duplicates another: YᵀY singular (eigh without C), or (with a tiny C) refused by Cholesky."""
    X, y = random_problem(15, n=150, d=3)
    return np.c_[X, X[:, :1]], y


@pytest.mark.parametrize("case", ["singular", "penalised", "initial_weights"])
@pytest.mark.parametrize("with_validation", [False, True])
@pytest.mark.parametrize("by_rows", [False, True])
def test_compiled_loop_with_an_eigh_factor(case, with_validation, by_rows):
    """An eigh factor runs compiled where ``plan["singular"]`` is ``"eigh"``: W-steps M Mᵀ g, the NumPy loop's iterates.

    Without C the duplicated column makes YᵀY singular; C = 1e-12 leaves a penalised system whose Cholesky
    pivot ratio (about √(C / ‖x‖²)) fails the test, so the eigh factor of the scaled system serves it.
    Starting weights with a null-space component keep it (the loop works in the original coordinates).
    """
    X, y = _collinear_problem()
    Y = sign_normalized(X, y)
    X_val, y_val = random_problem(16, n=60, d=3)
    Y_val = sign_normalized(np.c_[X_val, X_val[:, :1]], y_val) if with_validation else None
    kw = dict(stop_at_separation=False, tol=0.0, stopping="paper", max_iter=30, record_history=True, Y_val=Y_val)
    if case == "penalised":
        kw["C"] = 1e-12
    if case == "initial_weights":
        kw["initial_weights"] = np.array([0.5, -1.0, 0.25, 2.0, 0.1])
    plan = {"singular": "eigh", "segment_steps": 7, **({"by_columns_max_entries": 0} if by_rows else {})}
    compiled = ho_kashyap(Y, **kw, plan=plan)  # driver "auto": 150 × 5 entries are above COMPILED_MIN_ENTRIES
    reference = ho_kashyap(Y, **kw, plan={**plan, **PYTHON})
    assert compiled.extra["plan"]["driver"] == "compiled (eigh)"
    assert compiled.extra["factorization"] == reference.extra["factorization"] == "eigh"
    assert reference.extra["plan"]["driver"] == "python"
    assert (compiled.status, compiled.n_iter, compiled.best_iter) == (reference.status, reference.n_iter, reference.best_iter)
    # M Mᵀ g regroups S V Λ⁻¹ Vᵀ S g: the same products, rounded otherwise; on the kept directions the
    # error is eps cond (cond(YᵀY) about 10² on these columns), and the iteration carries it along
    for name, trace in reference.history.items():
        np.testing.assert_allclose(compiled.history[name], trace, rtol=1e-7, atol=1e-20, err_msg=name)
    scores = Y @ reference.weights
    np.testing.assert_allclose(Y @ compiled.weights, scores, rtol=0, atol=1e-7 * np.abs(scores).max())
    if case == "penalised":
        # the direction x_0 − x_3 has the eigenvalue C = 1e-12 of about 1e13 times less: its weights are known to
        # eps · 1e13 relative on either path, and the two differ there by that much (Y W above does not see it)
        return
    np.testing.assert_allclose(compiled.weights, reference.weights, rtol=0, atol=1e-7 * np.abs(reference.weights).max())


def test_eigh_factor_of_a_formed_y_keeps_the_python_driver_unless_asked():
    # The paper's data sets (formed Y) keep the driver their results were computed with: an eigh factor runs
    # compiled under "auto" only with plan["singular"] = "eigh" (HoKashyapClassifierCV's views), or forced.
    X, y = _collinear_problem()
    Y = sign_normalized(X, y)
    auto = ho_kashyap(Y, C=1e-12, max_iter=20)
    assert (auto.extra["factorization"], auto.extra["plan"]["driver"]) == ("eigh", "python")
    assert ho_kashyap(Y, C=1e-12, max_iter=20, plan=COMPILED).extra["plan"]["driver"] == "compiled (eigh)"
    irls = ho_kashyap(Y, C=1e-12, max_iter=20, loss="absolute", plan={"singular": "eigh"})
    assert irls.extra["plan"]["driver"] != "compiled (eigh)"  # IRLS refactors by Cholesky: not this path


@pytest.mark.parametrize("max_iter", [0, 1, 7, 8, 20])
@pytest.mark.parametrize("by_rows", [False, True])
def test_compiled_loop_budget_and_proof(max_iter, by_rows):
    """max_iter across segment boundaries, and the non-separability proof, match the NumPy loop."""
    plan = {"segment_steps": 7, **BY_ROWS[by_rows]}
    X, y = random_problem(13, n=200, d=3)
    xor = sign_normalized(np.r_[XOR_X, XOR_X + 0.01, XOR_X - 0.01], np.r_[XOR_Y, XOR_Y, XOR_Y])
    for Y in (sign_normalized(X, y), xor):
        # stopping="paper" with tol=0 never fires: the budget and the verdicts decide, not rounding
        kw = dict(max_iter=max_iter, tol=0.0, stopping="paper", record_history=True)
        compiled = ho_kashyap(Y, **kw, plan=plan)
        reference = ho_kashyap(Y, **kw, plan={**plan, **PYTHON})
        assert (compiled.status, compiled.n_iter) == (reference.status, reference.n_iter)
        assert compiled.history["criterion"].size == compiled.n_iter
        np.testing.assert_allclose(compiled.weights, reference.weights, rtol=1e-8, atol=1e-14)
    proof = ho_kashyap(xor)
    assert proof.status == "not_separable"
    check_proof(xor, proof.certificate)


@pytest.mark.parametrize("compiled", [True, False])
def test_fixed_point_ends_runs_that_do_not_stop_at_separation(compiled):
    """Separable data: |E| <= tol (B + offset) ends HKES-style runs (no max_iter, no warning)."""
    X, y = random_problem(15, n=200, d=3, separable=True)
    Y = sign_normalized(X, y)
    result = ho_kashyap(Y, stop_at_separation=False, max_iter=100_000, record_history=True,
                        plan=COMPILED if compiled else PYTHON)
    assert result.status == "separable" and result.n_iter < 100_000
    E = Y @ result.weights - result.margin
    assert np.all(np.abs(E) <= 1e-6 * result.margin)
    # J still shrinks geometrically: the relative-change rule alone would not have stopped here
    J = result.history["criterion"]
    assert abs(J[-1] - J[-2]) > 1e-6 * J[-2]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = make_classifier("hkes", random_state=0).fit(X, y)
    assert clf.status_ in ("separable", "converged")


@pytest.mark.parametrize("bad", [
    dict(max_iter=-1), dict(max_iter=2.5), dict(initial_weights=np.ones(3)), dict(initial_margin=np.ones(5)),
    dict(Y_val=np.empty((0, 4))), dict(Y_val=np.ones((3, 2))), dict(initial_weights=np.r_[1.0, np.nan, 0, 0]),
])
def test_solver_refuses_bad_arguments(bad):
    """The compiled loop trusts its shapes: the solver checks them first."""
    X, y = random_problem(16, n=30, d=3)
    with pytest.raises(ValueError):
        ho_kashyap(sign_normalized(X, y), **bad)


def test_non_finite_starting_weights_are_refused():
    X, y = random_problem(18, n=30, d=2)
    with pytest.raises(ValueError, match="finite"):
        HoKashyapClassifier().fit(X, y, coef_init=[np.nan, 1.0])
    with pytest.raises(ValueError, match="finite"):
        HoKashyapClassifier().fit(X, y, intercept_init=np.inf)


def test_irls_runs_compiled_and_hands_ill_conditioned_systems_to_numpy():
    """MHKA/HKESA take the compiled loop; an IRLS system that needs more than Cholesky reruns in NumPy."""
    X, y = random_problem(19, n=150, d=4)
    Y = sign_normalized(X, y)
    kw = dict(loss="absolute", C=0.1, record_history=True)
    compiled = ho_kashyap(Y, **kw)
    assert compiled.extra["plan"]["driver"] == "compiled", "the compiled loop was not used for IRLS"
    reference = ho_kashyap(Y, **kw, plan=PYTHON)
    # a pivot tolerance no factor meets: the first reweighted system is refused, NumPy takes over
    fallback = ho_kashyap(Y, **kw, plan={**COMPILED, "pivot_tol": 2.0})
    assert fallback.extra["plan"]["driver"] == "compiled, then python"
    for result in (compiled, fallback):
        assert (result.status, result.n_iter) == (reference.status, reference.n_iter)
        np.testing.assert_allclose(result.weights, reference.weights, rtol=1e-8)
    np.testing.assert_array_equal(fallback.weights, reference.weights)


def test_compiled_loop_is_safe_from_several_threads():
    """The compiled loop keeps no global state (and releases the GIL): concurrent fits agree with serial ones."""
    from concurrent.futures import ThreadPoolExecutor

    problems = [random_problem(20 + i, n=300, d=5) for i in range(6)]

    def fit(problem):
        clf = make_classifier("hkes", random_state=0).fit(*problem)
        return np.r_[clf.coef_.ravel(), clf.intercept_], clf.n_iter_

    serial = [fit(p) for p in problems]
    with ThreadPoolExecutor(max_workers=3) as pool:
        threaded = list(pool.map(fit, problems))
    for (w_serial, k_serial), (w_threaded, k_threaded) in zip(serial, threaded):
        assert k_serial == k_threaded
        np.testing.assert_array_equal(w_serial, w_threaded)


def test_irls_certificate_carries_the_weights():
    """An IRLS proof found after reweighting is u = -D E, with Yᵀu = 0 for the current weights D."""
    X = np.array([[0.7712193621153433], [1.150088000505753], [0.7354942141085169], [1.4479647542823046]])
    Y = sign_normalized(X, np.array([1, -1, -1, -1]))
    for plan in (None, PYTHON):
        result = ho_kashyap(Y, loss="absolute", C=0.0, tol=0.0, max_iter=300, plan=plan)
        assert result.status == "not_separable" and result.n_iter > 1  # proved after reweighting
        check_proof(Y, result.certificate)


@pytest.mark.parametrize("compiled", [True, False])
def test_overflowing_starting_weights_raise(compiled):
    X = np.array([[2.0, -2.0], [1.0, 0.5], [-1.0, 0.3], [0.2, -1.0], [0.5, 0.5]])
    Y = sign_normalized(X, np.array([1, 1, -1, -1, 1]))
    with pytest.raises(FloatingPointError), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ho_kashyap(Y, C=0.1, initial_weights=np.array([1.7e308, 1.7e308, 0.0]), max_iter=20,
                   plan=COMPILED if compiled else PYTHON)


# --------------------------------------------------------------------------- threads, float32, memory
THREAD_CASES = [dict(), dict(C=0.3, stop_at_separation=False), dict(loss="absolute", C=0.5),
                dict(stopping="paper", tol=0.0, stop_at_separation=False, max_iter=30)]


@pytest.mark.parametrize("kw", THREAD_CASES)
@pytest.mark.parametrize("with_validation", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_threaded_pass_reproduces_the_serial_pass(kw, with_validation, dtype):
    """Rows split over 3 chunks (the pass, and the IRLS Gram matrix) give the serial iterates, up to the order of the sums."""
    X, y = random_problem(31, n=500, d=4)
    X_val, y_val = random_problem(32, n=150, d=4)
    Y = SignedDesign(X.astype(dtype), y)
    kw = dict(kw, Y_val=SignedDesign(X_val.astype(dtype), y_val) if with_validation else None)
    serial = ho_kashyap(Y, **kw, plan={**BY_ROWS[True], "threads": 1})
    threaded = ho_kashyap(Y, **kw, plan={**BY_ROWS[True], "threads": 3})
    assert (serial.extra["plan"]["threads"], threaded.extra["plan"]["threads"]) == (1, 3)
    assert (threaded.status, threaded.n_iter, threaded.best_iter) == (serial.status, serial.n_iter, serial.best_iter)
    assert threaded.weights.dtype == serial.weights.dtype == dtype
    rtol = 1e-9 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(threaded.weights, serial.weights, rtol=rtol, atol=1e-12)
    # IRLS weights 1/|e_i| amplify rounding where e_i is small: compare on the margin vector's scale
    np.testing.assert_allclose(threaded.margin, serial.margin, rtol=rtol, atol=rtol * np.abs(serial.margin).max())
    for name, trace in (serial.history or {}).items():
        np.testing.assert_allclose(threaded.history[name], trace, rtol=rtol, err_msg=name)


def test_irls_keeps_blas_to_one_thread_inside_the_compiled_loop():
    """Large-data IRLS runs its per-block Gram products on one BLAS thread (the rows go to the chunks)."""
    from threadpoolctl import threadpool_info

    from linsep._core.threads import serial_blas
    from linsep.solvers.ho_kashyap.loops import ho_kashyap_segment as segment

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    with serial_blas():
        assert set(blas_threads()) <= {1}
    with serial_blas(False):
        assert blas_threads() == before
    assert blas_threads() == before
    seen = []

    class RecordingSegment:  # the compiled segment, which also records the BLAS limit it runs under
        def __getattr__(self, name):  # numba's dispatcher API (linsep._core.compilation.prepare compiles through it)
            return getattr(segment, name)

        def __call__(self, *args):
            seen.append(blas_threads())
            return segment(*args)

    X, y = random_problem(36, n=300, d=4)  # the segment called observes the BLAS limit inside
    ho_kashyap(SignedDesign(X, y), loss="absolute", C=0.5, plan={**BY_ROWS[True], "segment": RecordingSegment()})
    assert seen and all(set(threads) <= {1} for threads in seen)
    assert blas_threads() == before


@pytest.mark.parametrize("chunks", [1, 2])
def test_overlapping_irls_fits_in_threads_restore_the_blas_threads(chunks):
    """Two MHKA fits in threads whose one-thread BLAS limits overlap (A in, B in, A out, B out) leave BLAS as it was.

    ``chunks=2``: one fit holds the lock of the parallel pass, the other runs
    its pass serially; ``chunks=1``: neither takes it.
    """
    import contextlib
    import threading

    from threadpoolctl import threadpool_info, threadpool_limits

    from linsep._core.threads import serial_blas

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    def set_blas_threads(limits):
        # from a thread that then ends, as a program that never limited BLAS would have it: threadpoolctl
        # lets only one live Python thread set OpenBLAS's (process-wide) count
        setter = threading.Thread(target=threadpool_limits, kwargs=dict(limits=limits, user_api="blas"))
        setter.start()
        setter.join()

    first_in, first_out = threading.Event(), threading.Event()
    both_in = threading.Barrier(2, timeout=60)
    inside, errors = [], []

    @contextlib.contextmanager
    def overlapping(active=True):
        second = threading.current_thread().name == "second"
        if active and second:
            first_in.wait(timeout=60)
        with serial_blas(active):
            if active:
                first_in.set()
                both_in.wait()
                inside.append(blas_threads())
            yield
            if active and second:
                first_out.wait(timeout=60)
        if not second:
            first_out.set()

    # by rows: the IRLS Gram products limit BLAS, through the limit given (the real one, made to overlap)
    plan = {**BY_ROWS[True], "threads": chunks, "blas_limit": overlapping}

    def fit(seed):
        try:
            ho_kashyap(SignedDesign(*random_problem(seed, n=300, d=4)), loss="absolute", C=0.5, plan=plan)
        except BaseException as error:  # reported by the main thread
            errors.append(error)
            both_in.abort()
        finally:
            first_in.set()
            first_out.set()

    original = blas_threads()
    set_blas_threads(2)
    try:
        before = blas_threads()
        if max(before, default=1) < 2:
            pytest.skip("BLAS runs one thread here whatever the limit")
        threads = [threading.Thread(target=fit, args=(40 + i,), name=name) for i, name in enumerate(["first", "second"])]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        after = blas_threads()
    finally:
        set_blas_threads(min(original, default=1))
    assert not errors
    assert len(inside) >= 2 and [1] * len(before) in inside  # the fits' Gram products ran on one BLAS thread
    assert after == before


@pytest.mark.parametrize("by_rows", [False, True])
def test_design_view_gives_the_iterates_of_the_formed_matrix(by_rows):
    """The SignedDesign view (rows of X, labels, a row subset) iterates like the formed Y = diag(y)[X_R, 1]."""
    X, y = random_problem(33, n=400, d=5)
    rows = np.flatnonzero(np.arange(400) % 3 != 0)
    val = np.flatnonzero(np.arange(400) % 3 == 0)
    for kw in (dict(), dict(loss="absolute", C=0.2)):
        view = ho_kashyap(SignedDesign(X, y[rows], rows), Y_val=SignedDesign(X, y[val], val), **kw,
                          plan=BY_ROWS[by_rows])
        formed = ho_kashyap(sign_normalized(X[rows], y[rows]), Y_val=sign_normalized(X[val], y[val]), **kw,
                            plan=BY_ROWS[by_rows])
        assert (view.status, view.n_iter, view.best_iter) == (formed.status, formed.n_iter, formed.best_iter)
        np.testing.assert_allclose(view.weights, formed.weights, rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("name", ["hk", "hkes", "mhks", "mhka"])
@pytest.mark.parametrize("n", [60, 20_000])  # swept by columns (formed in float64), by rows (read as float32)
def test_float32_data_fit_in_float32(name, n):
    rng = np.random.default_rng(34)
    X = rng.normal(size=(n, 8))
    y = np.where(X @ rng.normal(size=8) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    kw = dict(random_state=0) if name == "hkes" else dict(C=0.1) if name.startswith("mhk") else {}
    ref = make_classifier(name, **kw).fit(X, y)
    clf = make_classifier(name, **kw).fit(X.astype(np.float32), y)
    assert clf.coef_.dtype == clf.intercept_.dtype == np.float32
    assert ref.coef_.dtype == np.float64
    assert clf.decision_function(X.astype(np.float32)).dtype == np.float32
    W, W_ref = np.r_[clf.coef_.ravel(), clf.intercept_], np.r_[ref.coef_.ravel(), ref.intercept_]
    # float32 data differ from the float64 data by their rounding; the fits agree to a few float32 ulps.
    # IRLS stops where |ΔJ|/J first drops below tol, a few iterations earlier or later for data
    # rounded to float32 even when fitted in float64 (about 1 % apart on these data).
    tol = 5e-2 if name == "mhka" else 1e-4
    assert np.abs(W - W_ref).max() <= tol * np.abs(W_ref).max()
    assert np.mean(clf.predict(X) == ref.predict(X)) > 0.99


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_float32_fit_makes_no_float64_copy_of_the_data():
    """HKES on float32 data allocates at most half the size of X beyond O(N) vectors (no copy of X or Y)."""
    rng = np.random.default_rng(35)
    n, d = 40_000, 100
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(X[:, :5].sum(axis=1) + rng.normal(size=n) > 0, 1, -1)
    clf = make_classifier("hkes", max_iter=5, random_state=0)
    # Compiled code loaded outside the measurement: a fit of more than one chunk of rows, as the measured one
    # (the one-chunk variant of the segment is compiled apart).
    clf.fit(X[:6000], y[:6000])
    peak = traced_peak(lambda: clf.fit(X, y))
    assert clf.coef_.dtype == np.float32
    vectors = 16 * 8 * n  # a generous count of N-vectors of float64
    assert peak <= 0.5 * X.nbytes + vectors, (peak, X.nbytes)


# --------------------------------------------------------------------------- IRLS fixed point, the recorded plan
@pytest.mark.parametrize("name", ["mhka", "hkesa"])
@pytest.mark.parametrize("compiled", [True, False])
def test_irls_stops_at_its_fixed_point_on_separable_data(name, compiled):
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(4, 10)) * 10
    y = np.repeat(np.arange(4), 15)
    X = centers[y] + rng.normal(size=(60, 10))
    clf = make_classifier(name, random_state=0)
    clf._solver_plan = COMPILED if compiled else PYTHON  # private: the driver to run
    clf.fit(X, y)  # ran all 10 000 iterations per class before
    assert np.all(np.asarray(clf.status_) == SEPARABLE)
    assert np.max(clf.n_iter_) < 200


def test_the_plan_that_ran_is_recorded(hk_plan):
    """Every driver records its path; the compiled and the Python driver give the same fit."""
    from linsep._core.signed_design import sign_normalized

    X, y = random_problem(3, n=200)
    Y = sign_normalized(X, y)
    result = ho_kashyap(Y, C=0.5, loss="absolute", plan=hk_plan)
    reference = ho_kashyap(Y, C=0.5, loss="absolute", plan={"driver": "python"})
    plan = result.extra["plan"]
    assert plan["driver"] == ("python" if hk_plan == {"driver": "python"} else "compiled")
    assert plan["factorization"] == "cholesky" and plan["dtype"] == "float64" and plan["threads"] == 1
    assert result.n_iter == reference.n_iter
    np.testing.assert_allclose(result.weights, reference.weights, rtol=1e-8)


@pytest.mark.parametrize(("n", "d", "loss", "driver"), [
    (4, 2, "squared", "python"),       # the README's four points: no compiled code to wait for
    (100, 3, "squared", "compiled"),   # the paper's smallest fits (titanic's, C tuned on 100 rows)
    (150, 3, "absolute", "compiled"),
    (400, 99, "absolute", "compiled"),  # IRLS up to COMPILED_IRLS_MAX_COLUMNS columns of Y
    (400, 100, "absolute", "python"),   # wider IRLS: LAPACK refactors Yᵀ D Y
    (400, 100, "squared", "compiled"),
])
def test_auto_plan_compiles_where_the_compiled_loop_pays(n, d, loss, driver):
    from linsep.solvers.ho_kashyap.solver import COMPILED_IRLS_MAX_COLUMNS, COMPILED_MIN_ENTRIES

    assert 4 * 3 < COMPILED_MIN_ENTRIES <= 100 * 4 and COMPILED_IRLS_MAX_COLUMNS == 100
    X, y = random_problem(3, n=n, d=d)
    result = ho_kashyap(sign_normalized(X, y), C=0.5, loss=loss, max_iter=20)
    assert result.extra["plan"]["driver"] == driver
    forced = ho_kashyap(sign_normalized(X, y), C=0.5, loss=loss, max_iter=20, plan=COMPILED)
    assert forced.extra["plan"]["driver"] == "compiled"  # the private plan still forces it
    np.testing.assert_allclose(result.weights, forced.weights, rtol=1e-6, atol=1e-10)


def test_kernel_ho_kashyap_iterates_in_python():
    from linsep.kernels import kernel_matrix
    from linsep.solvers.ho_kashyap.kernel import kernel_ho_kashyap

    X, y = random_problem(4, n=200, d=3)
    K = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
    result = kernel_ho_kashyap(K, y, C=0.3, max_iter=50)
    compiled = kernel_ho_kashyap(K, y, C=0.3, max_iter=50, plan=COMPILED)
    assert (result.extra["plan"]["driver"], compiled.extra["plan"]["driver"]) == ("python", "compiled")
    assert result.n_iter == compiled.n_iter
    np.testing.assert_allclose(result.weights, compiled.weights, rtol=1e-6, atol=1e-9)  # the dual coefficients


@pytest.mark.parametrize("C", [None, 0.5])
def test_first_image_gives_the_first_w_step_without_a_pass_of_its_own(C):
    # HKPlan.first_image = Yᵀ1 of the run's rows: W_1 = (YᵀY + CĨ)⁻¹ (b0 + offset) Yᵀ1 from it, on the
    # Cholesky (C) and the eigh (C = None, a singular column) factors; the same run as the one that forms Yᵀ1
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3)).astype(np.float32)
    X = np.ascontiguousarray(np.c_[X, X[:, 0] + X[:, 1]])
    y = np.where(X[:, :3] @ [1.0, -1.0, 0.5] + rng.normal(size=400) > 0, 1.0, -1.0)
    rows = np.arange(0, 400, 2)
    Y = SignedDesign(X, y[rows], rows)
    image = Y.T @ np.ones(len(rows))
    plan = {"singular": "eigh", "driver": "python"}
    given = ho_kashyap(Y, C=C, max_iter=30, plan=dict(plan, first_image=image))
    own = ho_kashyap(Y, C=C, max_iter=30, plan=plan)
    assert given.extra["plan"]["first_solve"] == "image" and "first_solve" not in own.extra["plan"]
    assert given.n_iter == own.n_iter
    # the same sums in another order: rounding of Yᵀ1 (float64 over 200 rows), times the system's conditioning
    np.testing.assert_allclose(given.weights, own.weights, rtol=1e-9, atol=1e-9 * np.abs(own.weights).max())
    # with an initial margin the image of B_0 is not Yᵀ1 times a constant: ignored
    started = ho_kashyap(Y, C=C, max_iter=30, initial_margin=np.full(len(rows), 0.5),
                         plan=dict(plan, first_image=image))
    assert "first_solve" not in started.extra["plan"]
