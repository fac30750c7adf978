"""HKES with cross-validated early stopping and refit (HoKashyapClassifierCV, "hkes_cv", "hkesa_cv"), CV over (C, k)."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold

from linsep import (HoKashyapClassifier, HoKashyapClassifierCV, KernelHoKashyapClassifier, KernelHoKashyapClassifierCV,
                    make_classifier)
from linsep._core.signed_design import sign_normalized
from linsep.estimators.ho_kashyap_cv import (default_C_grid, early_exit_reference, gram_range_floor,
                                             mean_validation_curve, penalty_order, run_best_error, stratified_folds)
from problems import calls_of, traced_peak

# the references stopped at k̂ report their spent budget; that is the point of them
REFERENCE_AT_BUDGET = pytest.mark.filterwarnings("ignore:.*HoKashyapClassifier reached max_iter")


def noisy_problem(seed=0, n=90, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(scale=1.5, size=n) > 0, 1, -1)
    return X, y


def hkes_fold_models(X, y, folds, **params):
    """HKES fitted on each fold's training rows, validated on its held-out rows (the reference)."""
    return [HoKashyapClassifier(early_stopping=True, **params).fit(X[tr], y[tr], X_val=X[va], y_val=y[va])
            for tr, va in folds]


def padded_mean(curves):
    """Each curve extended with its last value to the longest, then averaged (20-line reference)."""
    length = max(len(c) for c in curves)
    rows = [list(c) + [c[-1]] * (length - len(c)) for c in curves]
    return np.array(rows), np.array(rows).mean(axis=0)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("C", [None, 0.5])
def test_cv_curve_is_the_mean_of_hkes_curves_on_the_same_folds(loss, C):
    X, y = noisy_problem()
    clf = HoKashyapClassifierCV(loss=loss, C=C, random_state=3).fit(X, y)
    folds = stratified_folds(y, 5, 3)
    models = hkes_fold_models(X, y, folds, loss=loss, C=C)
    per_fold, mean = padded_mean([m.history_["validation_error"] for m in models])
    assert len({len(m.history_["validation_error"]) for m in models}) > 1 or loss == "squared"
    np.testing.assert_array_equal(clf.cv_curves_, per_fold)
    np.testing.assert_array_equal(clf.cv_curve_, mean)
    assert clf.best_iter_ == int(np.flatnonzero(mean == mean.min())[0]) + 1  # first minimiser


@REFERENCE_AT_BUDGET
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_refit_is_ho_kashyap_on_all_data_stopped_at_best_iter(loss):
    X, y = noisy_problem(0)
    clf = HoKashyapClassifierCV(loss=loss, random_state=0).fit(X, y)
    k = clf.best_iter_
    assert k > 1  # the problem is chosen so that the refit makes margin updates
    # best_iter_ counts iterates from k = 1 (the first least-squares solution):
    # W_k̂ is reached after k̂ - 1 margin updates.
    ref = HoKashyapClassifier(max_iter=k - 1, stop_at_separation=False, loss=loss).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)
    np.testing.assert_array_equal(clf.intercept_, ref.intercept_)
    assert clf.n_iter_ == ref.n_iter_ == k
    np.testing.assert_array_equal(clf.margin_vector_, ref.margin_vector_)
    assert clf.status_ == ("separable" if ref.status_ == "separable" else "converged")


def test_refit_false_averages_the_fold_hkes_models():
    X, y = noisy_problem(2)
    clf = HoKashyapClassifierCV(refit=False, random_state=1).fit(X, y)
    models = hkes_fold_models(X, y, stratified_folds(y, 5, 1))
    np.testing.assert_allclose(clf.coef_, np.mean([m.coef_ for m in models], axis=0), rtol=1e-12)
    np.testing.assert_allclose(clf.intercept_, np.mean([m.intercept_ for m in models], axis=0), rtol=1e-12)
    scores = np.mean([m.decision_function(X) for m in models], axis=0)
    np.testing.assert_allclose(clf.decision_function(X), scores, rtol=1e-10, atol=1e-12)
    assert clf.n_iter_ == max(m.n_iter_ for m in models) and not hasattr(clf, "margin_vector_")


@REFERENCE_AT_BUDGET
def test_multiclass_one_best_iter_per_class():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 1.2, (30, 2)) for c in ((0, 0), (2, 0), (0, 2))])
    y = np.repeat(["a", "b", "c"], 30)
    clf = HoKashyapClassifierCV(cv=4, random_state=2).fit(X, y)
    assert clf.best_iter_.shape == (3,) and len(clf.cv_curve_) == len(clf.cv_curves_) == 3
    folds = stratified_folds(y, 4, 2)  # folds stratified on the original labels, shared by the classes
    for k, label in enumerate(clf.classes_):
        binary = np.where(y == label, 1, -1)
        models = hkes_fold_models(X, binary, folds)
        _, mean = padded_mean([m.history_["validation_error"] for m in models])
        np.testing.assert_array_equal(clf.cv_curve_[k], mean)
        ref = HoKashyapClassifier(max_iter=clf.best_iter_[k] - 1, stop_at_separation=False).fit(X, binary)
        np.testing.assert_array_equal(clf.coef_[k], ref.coef_[0])
    assert clf.score(X, y) > 0.7


def test_stratified_folds_partition_and_balance():
    y = np.array([0] * 23 + [1] * 9 + [2] * 5)
    folds = stratified_folds(y, 5, 0)
    held = np.concatenate([va for _, va in folds])
    np.testing.assert_array_equal(np.sort(held), np.arange(y.size))
    for tr, va in folds:
        assert np.intersect1d(tr, va).size == 0 and tr.size + va.size == y.size
        assert va.size in (7, 8)
        assert all(abs(np.sum(y[va] == c) - np.sum(y == c) / 5) < 1 for c in range(3))
    again = stratified_folds(y, 5, 0)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    with pytest.raises(ValueError, match="at least 5 samples"):
        stratified_folds(y[:4], 5)


def test_splitter_and_index_pairs_as_cv():
    X, y = noisy_problem(5)
    splitter = KFold(3, shuffle=True, random_state=0)
    a = HoKashyapClassifierCV(cv=splitter).fit(X, y)
    b = HoKashyapClassifierCV(cv=list(splitter.split(X, y))).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.cv_curves_.shape[0] == 3
    models = hkes_fold_models(X, y, list(splitter.split(X, y)))
    np.testing.assert_array_equal(a.cv_curve_, padded_mean([m.history_["validation_error"] for m in models])[1])


@pytest.mark.parametrize("cv", [[1], {"a": 1}, [([0, 1], [2.5])], [([0, 1], [500])], [([], [0, 1])]])
def test_malformed_cv_is_refused(cv):
    X, y = noisy_problem(5)
    with pytest.raises(ValueError, match="cv|cross-validation"):
        HoKashyapClassifierCV(cv=cv).fit(X, y)


@pytest.mark.numerics
def test_parallel_folds_match_serial():
    X, y = noisy_problem(6)
    serial = HoKashyapClassifierCV(random_state=0).fit(X, y)
    threads = HoKashyapClassifierCV(random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(serial.coef_, threads.coef_)
    np.testing.assert_array_equal(serial.cv_curves_, threads.cv_curves_)


def test_pickle_and_clone():
    X, y = noisy_problem(7)
    clf = HoKashyapClassifierCV(cv=3, random_state=0).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    np.testing.assert_array_equal(again.cv_curve_, clf.cv_curve_)
    fresh = clone(clf)
    assert not hasattr(fresh, "coef_") and fresh.get_params() == clf.get_params()
    np.testing.assert_array_equal(fresh.fit(X, y).coef_, clf.coef_)


def test_registry_presets():
    assert make_classifier("hkes_cv").loss == "squared"
    assert make_classifier("hkesa_cv").loss == "absolute"
    assert isinstance(make_classifier("hkes_cv"), HoKashyapClassifierCV)


def test_separable_data_end_separable():
    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(-3, 0.5, (20, 2)), rng.normal(3, 0.5, (20, 2))])
    y = np.repeat([0, 1], 20)
    clf = HoKashyapClassifierCV(random_state=0).fit(X, y)
    assert clf.status_ == "separable" and clf.score(X, y) == 1.0


def test_not_separable_certificate_covers_all_data():
    # XOR repeated: every fold's training part is non-separable, and HK proves it at once
    X = np.tile([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]], (5, 1))
    y = np.tile([1, 1, -1, -1], 5)
    clf = HoKashyapClassifierCV(random_state=0).fit(X, y)
    assert clf.status_ == "not_separable"
    u = clf.certificate_
    Y = sign_normalized(X, y)
    assert u.shape == (20,) and (u >= 0).all() and u.sum() > 0
    np.testing.assert_allclose(Y.T @ u, 0, atol=1e-9 * u.max())


def test_fold_budget_spent_warns():
    X, y = noisy_problem(9)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        clf = HoKashyapClassifierCV(max_iter=2, random_state=0).fit(X, y)
    assert clf.status_ == "max_iter" and clf.best_iter_ <= 3 and clf.cv_curve_.size <= 3


def test_sparse_input_matches_dense():
    from scipy import sparse

    X, y = noisy_problem(10)
    dense = HoKashyapClassifierCV(random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sp = HoKashyapClassifierCV(random_state=0).fit(sparse.csr_matrix(X), y)
    assert sp.best_iter_ == dense.best_iter_
    np.testing.assert_allclose(sp.coef_, dense.coef_, rtol=1e-8, atol=1e-10)


def test_does_not_modify_input():
    X, y = noisy_problem(11)
    X0, y0 = X.copy(), y.copy()
    HoKashyapClassifierCV(random_state=0).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


# --------------------------------------------------------------------------- CLI and experiment
def test_cli_model_file_round_trip(tmp_path, capsys):
    from linsep.cli import load_model, main

    X, y = noisy_problem(12)
    lines = ["x0,x1,x2,x3,label"] + [",".join([*map(repr, map(float, row)), str(label)]) for row, label in zip(X, y)]
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    assert main(["fit", "hkes_cv", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.npz"),
                 "--param", "random_state=0", "--param", "cv=4"]) == 0
    assert main(["predict", str(tmp_path / "m.npz"), str(tmp_path / "train.csv")]) == 0
    out = capsys.readouterr().out.split()
    expected = HoKashyapClassifierCV(random_state=0, cv=4).fit(X, y)
    assert out[-len(y):] == [str(v) for v in expected.predict(X)]
    model, meta = load_model(tmp_path / "m.npz")
    assert meta["algorithm"] == "hkes_cv" and model.best_iter_ == expected.best_iter_
    np.testing.assert_array_equal(model.cv_curves_, expected.cv_curves_)
    np.testing.assert_array_equal(model.cv_curve_, expected.cv_curve_)


def test_experiment_fits_the_whole_training_split():
    from linsep.experiments import default_methods, get_method, load_split, run_one
    from linsep.experiments.methods import LABELS

    assert get_method("hkes_cv").tuning == get_method("hkesa_cv").tuning == "cv"
    assert {"hkes_cv", "hkesa_cv"} <= set(default_methods(quick=True)) and "†" in LABELS["hkes_cv"]
    X_fit, y_fit, X_tune, y_tune, X_test, y_test = load_split("thyroid", 0)
    r = run_one("thyroid", "hkes_cv", 0, keep_curve=True)
    est = make_classifier("hkes_cv", random_state=0).fit(np.vstack([X_fit, X_tune]), np.r_[y_fit, y_tune])
    assert r["best_iter"] == est.best_iter_ and r["n_fits"] == 1
    assert r["test_error"] == 100 * np.mean(est.predict(X_test) != y_test)
    assert r["tuning_error"] == pytest.approx(100 * est.cv_curve_.min()) == min(r["iter_curve"])
    # Table 3's protocol: the whole training split again, never the test split
    X_train, y_train, *_ = load_split("thyroid", 0, "test")
    test = run_one("thyroid", "hkes_cv", 0, protocol="test")
    est = make_classifier("hkes_cv", random_state=0).fit(X_train, y_train)
    assert test["test_error"] == 100 * np.mean(est.predict(X_test) != y_test)


def test_bench_tables_label_the_extension(tmp_path, capsys):
    from linsep.cli import main

    assert main(["bench", "--datasets", "titanic", "--methods", "hkes", "hkes_cv", "hkesa_cv", "--splits", "2",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    capsys.readouterr()
    md = (tmp_path / "table1.md").read_text()
    assert "HKES-CV†" in md and "HKESA-CV†" in md and "extension beyond the paper" in md
    row = [line for line in md.splitlines() if line.startswith("| ↳ paper")][0]
    assert row.rstrip(" |").endswith("—")  # no paper value for the extension
    assert "HKES-CV†" in (tmp_path / "table2.md").read_text()


# --------------------------------------------------------------------------- kernel variant
def ring_problem(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(np.hypot(*X.T) + rng.normal(scale=0.3, size=n) > 1.1, 1, -1)
    return X, y


@REFERENCE_AT_BUDGET
def test_kernel_variant_matches_kernel_hkes_folds_and_kernel_hk_refit():
    X, y = ring_problem()
    # a numeric gamma: the folds' kernel is the refit's; HKES's tol (kernel HK's default is 1e-3)
    params = dict(kernel="rbf", gamma=1.0, C=0.1, tol=1e-6, map_tol=0.3)
    clf = KernelHoKashyapClassifierCV(random_state=0, **params).fit(X, y)
    folds = stratified_folds(y, 5, 0)
    models = [KernelHoKashyapClassifier(early_stopping=True, **params).fit(X[tr], y[tr], X_val=X[va], y_val=y[va])
              for tr, va in folds]
    per_fold, mean = padded_mean([m.history_["validation_error"] for m in models])
    np.testing.assert_array_equal(clf.cv_curves_, per_fold)
    assert clf.best_iter_ == int(np.argmin(mean)) + 1 > 1
    ref = KernelHoKashyapClassifier(max_iter=clf.best_iter_ - 1, stop_at_separation=False, **params).fit(X, y)
    np.testing.assert_allclose(clf.dual_coef_, ref.dual_coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-10, atol=1e-12)
    assert clf.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(clf.support_, ref.support_)  # the refit map's pivots
    # without refit: the average of the fold models' decision functions
    avg = KernelHoKashyapClassifierCV(random_state=0, refit=False, **params).fit(X, y)
    scores = np.mean([m.decision_function(X) for m in models], axis=0)
    np.testing.assert_allclose(avg.decision_function(X), scores, rtol=1e-9, atol=1e-10)
    # its support: the union of the fold models' pivots, the only rows with nonzero dual coefficients
    np.testing.assert_array_equal(avg.support_, np.unique(np.concatenate([tr[m.support_]
                                                                          for m, (tr, _) in zip(models, folds)])))
    off = np.setdiff1d(np.arange(len(y)), avg.support_)
    assert off.size and np.all(avg.dual_coef_[:, off] == 0.0) and np.all(clf.dual_coef_[:, np.setdiff1d(
        np.arange(len(y)), clf.support_)] == 0.0)


def test_kernel_variant_precomputed_equals_rbf():
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = ring_problem(1)
    a = KernelHoKashyapClassifierCV(gamma=0.5, random_state=0).fit(X, y)
    b = KernelHoKashyapClassifierCV(kernel="precomputed", random_state=0).fit(rbf_kernel(X, gamma=0.5), y)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(b.predict(rbf_kernel(X, X, gamma=0.5)), a.predict(X))
    assert make_classifier("kernel_hkes_cv").kernel == "rbf"


# ------------------------------------------------------------------ CV over (C, k) (the noisy problem: conftest.py)

@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the reference stops at k̂ by design
def test_cv_over_C_and_k(noisy):
    X, y = noisy
    grid = [None, 0.1, 10.0]
    est = HoKashyapClassifierCV(Cs=grid, random_state=0).fit(X, y)
    surface = est.cv_results_
    assert surface["mean_validation_error"].shape[0] == 3
    chosen = int(np.argmin(surface["best_validation_error"]))
    assert est.C_ == grid[chosen] and est.best_iter_ == surface["best_iter"][chosen]
    np.testing.assert_array_equal(surface["best_iter"], np.argmin(surface["mean_validation_error"], axis=1) + 1)
    # The refit is Ho–Kashyap on all rows with the chosen C, stopped at k̂.
    refit = HoKashyapClassifier(C=est.C_, max_iter=est.best_iter_ - 1, stop_at_separation=False).fit(X, y)
    np.testing.assert_allclose(est.coef_, refit.coef_, rtol=1e-9)


def test_cs_none_and_a_grid_of_none_agree(noisy):
    X, y = noisy
    plain = HoKashyapClassifierCV(random_state=0).fit(X, y)
    grid = HoKashyapClassifierCV(Cs=[None], random_state=0).fit(X, y)
    assert plain.C_ is None and plain.best_iter_ == grid.best_iter_
    np.testing.assert_allclose(plain.coef_, grid.coef_)
    np.testing.assert_array_equal(plain.cv_results_["mean_validation_error"][0], plain.cv_curve_)


def test_int_cs_is_the_default_grid(noisy):
    X, y = noisy
    est = HoKashyapClassifierCV(Cs=4, random_state=0).fit(X, y)
    assert len(default_C_grid(4)) == 4 and default_C_grid(4)[0] is None
    assert est.cv_results_["C"].shape == (4,)


def test_cv_over_C_one_vs_rest_and_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = np.argmax(X, axis=1)
    est = HoKashyapClassifierCV(Cs=[None, 1.0, 100.0], cv=3, random_state=0).fit(X, y)
    assert len(est.cv_results_) == 3 and est.best_iter_.shape == (3,)
    # One C for all problems: the one with the least summed error at each problem's own k̂.
    summed = np.sum([surface["best_validation_error"] for surface in est.cv_results_], axis=0)
    assert est.C_ == [None, 1.0, 100.0][int(np.argmin(summed))]
    alone = HoKashyapClassifierCV(Cs=[est.C_], cv=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.coef_, alone.coef_)
    kernel = KernelHoKashyapClassifierCV(Cs=[None, 1.0], cv=3, random_state=0).fit(X, y)
    assert kernel.C_ in (None, 1.0) and kernel.score(X, y) > 0.8


def test_bad_cs_is_refused(noisy):
    X, y = noisy
    with pytest.raises(ValueError, match="Cs"):
        HoKashyapClassifierCV(Cs=[-1.0]).fit(X, y)


# ------------------------------------------------------------------ early exit of hopeless (C, fold) runs

def test_penalty_order_runs_the_largest_penalty_first_and_no_penalty_last():
    assert penalty_order([None, 0.01, 1.0, 100.0, 0.0]) == [3, 2, 1, 4, 0]


def test_early_exit_reference_is_the_folds_best_error_plus_z_standard_errors():
    from types import SimpleNamespace

    def run(*errors):
        return SimpleNamespace(history={"validation_error": np.array(errors)})

    assert early_exit_reference([], 100, 2.0) == np.inf  # the first wave has none
    runs = [run(0.3, 0.2, 0.25), run(0.4, 0.1, 0.15)]
    assert early_exit_reference(runs, 100, 2.0) == pytest.approx(0.1 + 2 * np.sqrt(0.1 * 0.9 / 100))
    assert early_exit_reference(runs, 100, 0.0) == pytest.approx(0.1)
    # a best of 0 still leaves the margin of one row's share; p(1 - p) is at most 1/4, even on few rows
    assert early_exit_reference([run(0.5, 0.0)], 100, 2.0) == pytest.approx(2 * np.sqrt(0.01 * 0.99 / 100))
    assert early_exit_reference([run(0.7)], 100, 1.0) == pytest.approx(0.7 + np.sqrt(0.25 / 100))
    assert early_exit_reference([run(0.0)], 0.5, 1.0) == pytest.approx(np.sqrt(0.25 / 0.5))  # weights' sum < 1


class _RecordedReferences(HoKashyapClassifierCV):
    """HoKashyapClassifierCV recording each fold run's ``(C, fold, reference, run)`` in the order they ran."""

    def _run_fold(self, fit, f, y, C, reference=np.inf):
        run = super()._run_fold(fit, f, y, C, reference)
        self.recorded_.append((C, f, reference, run))
        return run


def test_early_exit_references_are_the_rule_over_every_earlier_run_kept_as_a_running_best():
    # On this problem early_exit cuts 27 of the 60 (C, fold) runs short (patience 3, z = 0): the references matter
    X, y = noisy_problem(2, n=150, d=6)
    kw = dict(Cs=12, n_iter_no_change=3, random_state=0)
    cut = _RecordedReferences(early_exit=0.0, **kw)
    cut.recorded_ = []
    with calls_of(run_best_error, mean_validation_curve) as (scans, curves):
        cut.fit(X, y)
    full = HoKashyapClassifierCV(early_exit=None, **kw).fit(X, y)
    assert (cut.cv_results_["fold_n_iter"] != full.cv_results_["fold_n_iter"]).sum() > 10
    # the oracle, early_exit's definition: each run's reference is that of every run before it on its fold
    # (one C per wave, so the runs before it on its fold are those of the earlier waves); the running best
    # takes the same exact minimum, hence the same floats
    n_val = {f: len(validation) for f, (_, validation) in enumerate(stratified_folds(y, 5, 0))}
    earlier = {f: [] for f in n_val}
    for C, f, reference, run in cut.recorded_:
        assert reference == early_exit_reference(earlier[f], n_val[f], 0.0)
        earlier[f].append(run)
    assert [C for C, f, _, _ in cut.recorded_[::5]] == [default_C_grid(12)[c] for c in penalty_order(default_C_grid(12))]
    # incremental: each run's curve is scanned once, not once per later wave (quadratic in the number of C)
    assert len(scans) == len(cut.recorded_) == 12 * 5
    # and the search's end is not weighed here (150 rows: far from N >> d): the mean curves are read once per C,
    # for the choice, not once per wave
    assert len(curves) == 12


@pytest.mark.numerics
def test_early_exit_stops_the_runs_that_stay_behind_and_keeps_the_choice():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from linsep.datasets import make_topic_corpus

    docs, topics = make_topic_corpus(600, 2, random_state=0)
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)
    kw = dict(Cs=[None, 0.01, 1.0, 100.0], n_iter_no_change=10, random_state=0)
    full = HoKashyapClassifierCV(early_exit=None, **kw).fit(X, topics)
    cut = HoKashyapClassifierCV(early_exit=0.0, **kw).fit(X, topics)
    n_full, n_cut = full.cv_results_["fold_n_iter"], cut.cv_results_["fold_n_iter"]
    assert n_full.shape == (4, 5)
    # Waves C = 100, 1, 0.01, None.  On fold 4, C = 0.01 falls for 25 iterations without ever coming below
    # C = 1's error there: with the reference it stops once the patience from its first iterate is spent.
    assert n_full[1, 3] == 25 and n_cut[1, 3] == 1 + 10
    np.testing.assert_array_equal(np.delete(n_cut, 3, axis=1), np.delete(n_full, 3, axis=1))
    assert (cut.C_, cut.best_iter_) == (full.C_, full.best_iter_) == (1.0, 4)
    np.testing.assert_array_equal(cut.coef_, full.coef_)
    # the references come from the waves before: the same runs on any number of threads
    threads = HoKashyapClassifierCV(early_exit=0.0, n_jobs=2, **kw).fit(X, topics)
    np.testing.assert_array_equal(threads.cv_results_["fold_n_iter"], n_cut)
    np.testing.assert_array_equal(threads.coef_, cut.coef_)


# ------------------------------------------------------------------ large data: views of X, float32

def _views_and_formed(X, y, **params):
    fits = {}
    for path in ("formed", "views"):
        clf = HoKashyapClassifierCV(random_state=0, **params)
        clf._fold_design = path
        fits[path] = clf.fit(X, y)
    return fits["formed"], fits["views"]


@pytest.mark.parametrize("refit", [True, False])
@pytest.mark.parametrize("classes", [2, 3])
def test_runs_on_views_of_X_match_the_runs_on_a_formed_Y(classes, refit):
    rng = np.random.default_rng(classes)
    X = rng.normal(size=(240, 5))
    y = np.digitize(X @ rng.normal(size=5) + rng.normal(scale=1.0, size=240),
                    [0.0] if classes == 2 else [-0.7, 0.7])
    formed, views = _views_and_formed(X, y, Cs=[None, 0.1, 10.0], refit=refit)
    assert views.C_ == formed.C_
    np.testing.assert_array_equal(views.best_iter_, formed.best_iter_)
    for a, b in zip(np.atleast_1d(views.cv_results_), np.atleast_1d(formed.cv_results_)):
        np.testing.assert_array_equal(a["best_iter"], b["best_iter"])
        np.testing.assert_array_equal(a["fold_n_iter"], b["fold_n_iter"])
    # The views' fold Gram matrices are G - G_f (view_grams) instead of sums over the training rows: they
    # differ by rounding, eps ‖G‖, and the solutions by that times cond(G) (about 10 for these Gaussian columns)
    np.testing.assert_allclose(views.coef_, formed.coef_, rtol=1e-10, atol=1e-10 * np.abs(formed.coef_).max())
    np.testing.assert_allclose(views.intercept_, formed.intercept_, rtol=1e-10, atol=1e-10)


def test_view_grams_subtract_each_fold_from_one_pass_or_sum_overlapping_folds_on_their_own():
    from sklearn.model_selection import ShuffleSplit

    from linsep.estimators.ho_kashyap_cv import view_grams

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    A = np.c_[X.astype(float), np.ones(50)]
    folds = stratified_folds(rng.integers(0, 2, 50), 5, 0)
    fold_grams, full = view_grams(X, folds)
    np.testing.assert_allclose(full, A.T @ A, rtol=1e-12)
    for (train, _), gram in zip(folds, fold_grams):
        np.testing.assert_allclose(gram, A[train].T @ A[train], rtol=1e-12, atol=1e-12 * np.abs(full).max())
    overlapping = [(np.asarray(t), np.asarray(v)) for t, v in ShuffleSplit(3, test_size=0.3, random_state=0).split(X)]
    fold_grams, full = view_grams(X, overlapping)
    assert full is None  # the validation sets do not partition the rows: the refit builds its own
    for (train, _), gram in zip(overlapping, fold_grams):
        np.testing.assert_allclose(gram, A[train].T @ A[train], rtol=1e-12)


def test_float32_data_give_a_float32_model_of_the_same_choice():
    X, y = noisy_problem(3, n=200, d=5)
    X32 = X.astype(np.float32)
    for params in ({"Cs": 4}, {"Cs": 4, "refit": False}, {}):
        single = HoKashyapClassifierCV(random_state=0, **params).fit(X32, y)
        double = HoKashyapClassifierCV(random_state=0, **params).fit(X32.astype(np.float64), y)
        assert single.coef_.dtype == single.intercept_.dtype == np.float32
        assert single.decision_function(X32).dtype == np.float32
        # small data: the runs form Y in float64 from the same numbers, so only the model's rounding differs
        assert (single.C_, single.best_iter_) == (double.C_, double.best_iter_)
        np.testing.assert_array_equal(single.coef_, double.coef_.astype(np.float32))


def test_large_float32_data_run_on_views_without_copying_X():
    from linsep.estimators.ho_kashyap_cv import VIEW_MIN_ENTRIES

    rng = np.random.default_rng(0)
    n, d = VIEW_MIN_ENTRIES // 100 + 1, 99  # Y has 2^22 entries: the views by default
    X = rng.standard_normal((n, d), dtype=np.float32)
    y = (X[:, :5].sum(axis=1) + rng.standard_normal(n, dtype=np.float32) > 0).astype(int)
    clf = HoKashyapClassifierCV(Cs=[None, 1.0], n_iter_no_change=3, max_iter=20, random_state=0)
    warm = HoKashyapClassifierCV(Cs=[None, 1.0], max_iter=5, random_state=0)
    warm._fold_design = "views"
    warm.fit(X[:20_000], y[:20_000])  # compile (or load) the views' code first, the lockstep's included
    peak = traced_peak(lambda: clf.fit(X, y))
    assert clf.coef_.dtype == np.float32
    # a formed Y (float64) alone would be twice X.nbytes, and each fold's Y[train] 1.6 times more; the views
    # allocate O(N) vectors (margins, errors, folds' indices) and the Gram matrices.  A wave's five runs side by
    # side (lockstep) hold theirs at once: B, E, the next B, the starting B and the labels, float32, about
    # 5 × 0.8 × 20 bytes a row, 0.2 × X.nbytes at d = 99 (0.6 to 0.76 of X.nbytes in all, by the run)
    assert peak < 1.0 * X.nbytes, peak / X.nbytes


# ------------------------------------------------------------------ a grid that cannot tell its values of C apart

def test_flat_grid_compares_the_spread_of_the_best_errors_with_one_standard_error():
    from linsep.estimators.ho_kashyap_cv import flat_grid

    spread, se, flat = flat_grid([0.10, 0.102, 0.101], 10_000)
    assert spread == pytest.approx(0.002) and se == pytest.approx(np.sqrt(0.1 * 0.9 / 10_000)) and flat
    assert flat_grid([0.10, 0.102, 0.101], 1_000)[2]  # one standard error 0.0095
    assert not flat_grid([0.10, 0.15], 1_000)[2]
    assert flat_grid([0.0, 0.0], 50)[1] == pytest.approx(np.sqrt(0.02 * 0.98 / 50))  # a best of 0: one row's share


def test_verbose_says_when_one_fixed_C_would_do(capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6000, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] + rng.normal(size=6000) > 0, 1, -1)
    clf = HoKashyapClassifierCV(Cs=4, random_state=0, verbose=2, early_exit=None).fit(X, y)
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("[HoKashyapClassifierCV] the best validation errors of all 4 values of C lie within ")
    assert f"C={clf.C_}) would do" in last
    from sklearn.datasets import make_classification

    X, y = make_classification(200, 10, n_informative=4, n_classes=3, random_state=0)  # few rows, 3 problems
    HoKashyapClassifierCV(Cs=4, random_state=0, verbose=2).fit(X, y)
    assert "above one standard error" in capsys.readouterr().out.splitlines()[-1]


def test_views_factor_a_singular_system_without_C_from_its_gram_matrix():
    # a column that is the sum of two others: YᵀY is singular, and without C the minimum-norm W-steps of the
    # formed Y come from its QR and SVD (a dense copy), those of the views from the eigenvectors of YᵀY
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4))
    X = np.c_[X, X[:, 0] + X[:, 1]]
    y = np.where(X[:, :4] @ rng.normal(size=4) + rng.normal(size=300) > 0, 1, 0)
    formed, views = _views_and_formed(X, y, Cs=[None])
    assert views.best_iter_ == formed.best_iter_
    np.testing.assert_array_equal(views.cv_results_["fold_n_iter"], formed.cv_results_["fold_n_iter"])
    # the eigenvalues square the singular values: the minimum-norm solutions agree to eps cond(YᵀY), the
    # columns' condition about 10² here (the null direction is cut on both paths)
    np.testing.assert_allclose(views.coef_, formed.coef_, rtol=1e-8, atol=1e-8 * np.abs(formed.coef_).max())
    w = views.coef_[0]
    assert abs(w[0] + w[1] - w[4]) < 1e-8 * np.abs(w).max()  # minimum norm: orthogonal to the null (1, 1, 0, 0, -1)


@pytest.mark.parametrize(("classes", "early_exit"), [(2, 2.0), (2, None), (3, 2.0)])
def test_waves_in_lockstep_give_the_fit_of_runs_alone(classes, early_exit, capsys):
    # Views of float32 X (forced: these data are below VIEW_MIN_ENTRIES), folds large enough to be read by
    # rows: the runs of each wave (one C's folds with early_exit, every (C, fold) without) share one read of X
    # per iteration, and each run is the run alone, bit for bit, so the whole fit is.  C = None runs on the
    # singular system of a collinear column (the eigh factor), the others on Cholesky factors.
    rng = np.random.default_rng(classes)
    X = rng.normal(size=(80_000, 8)).astype(np.float32)  # 16 000 validation rows × 10: above BY_COLUMNS_MAX_ENTRIES
    X = np.ascontiguousarray(np.c_[X, X[:, 0] + X[:, 1]])
    y = np.digitize(X[:, :4].sum(axis=1) + 3 * rng.normal(size=80_000), [0.0] if classes == 2 else [-1.0, 1.0])
    fits = {}
    for lockstep in (False, True):
        clf = HoKashyapClassifierCV(Cs=[None, 0.1, 10.0], early_exit=early_exit, max_iter=200, random_state=0,
                                    verbose=2)
        clf._fold_design, clf._lockstep_runs = "views", lockstep
        fits[lockstep] = clf.fit(X, y)
        lines = capsys.readouterr().out.splitlines()
        runs = [line for line in lines if " fold " in line]
        # with early_exit the search ends after two values of C on these data (flat_search_end: 6 400 rows
        # per column); the runs it makes are the same alone and together
        n_run = sum(int(np.sum(~np.isnan(r["best_validation_error"]))) for r in np.atleast_1d(clf.cv_results_))
        assert n_run == (3 if early_exit is None else 2) * (1 if classes == 2 else classes)
        assert len(runs) == 5 * n_run
        stops = clf.search_stopped_ if classes > 2 else [clf.search_stopped_]
        assert len(stops) == (classes if classes > 2 else 1)
        # one entry per one-vs-rest problem; with early_exit each problem's search ended after C = 10 and 0.1
        assert all((stop is None) == (early_exit is None) for stop in stops)
        assert all(stop["not_run"] == [None] for stop in stops if stop is not None)
        assert all(("in lockstep" in line) == lockstep for line in runs)
    alone, together = fits[False], fits[True]
    assert together.C_ == alone.C_
    np.testing.assert_array_equal(together.best_iter_, alone.best_iter_)
    np.testing.assert_array_equal(together.coef_, alone.coef_)
    np.testing.assert_array_equal(together.intercept_, alone.intercept_)
    for a, b in zip(np.atleast_1d(together.cv_results_), np.atleast_1d(alone.cv_results_)):
        for key in ("mean_validation_error", "best_iter", "best_validation_error", "fold_n_iter"):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_view_grams_see_a_repeated_training_row_as_no_partition():
    from linsep.estimators.ho_kashyap_cv import view_grams

    X = np.random.default_rng(1).normal(size=(20, 2)).astype(np.float32)
    folds = [(np.r_[np.arange(10, 20)], np.arange(10)), (np.r_[np.arange(9), 9], np.arange(10, 20))]
    assert view_grams(X, folds)[1] is not None  # a partition: one pass
    folds[1] = (np.r_[np.arange(9), 8], np.arange(10, 20))  # row 8 twice, row 9 never: the sizes still match
    assert view_grams(X, folds)[1] is None


def test_view_images_are_each_folds_training_rows_signed_sum():
    from linsep.estimators.ho_kashyap_cv import view_images

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    folds = stratified_folds(y, 4, 0)
    fold_of = np.empty(60, dtype=np.int64)
    for f, (_, validation) in enumerate(folds):
        fold_of[validation] = f
    A = np.c_[X.astype(float), np.ones(60)]
    for (train, _), image in zip(folds, view_images(X, y, fold_of)):
        # G - G_f's twin: a difference of float64 sums of 60 terms of size ~3, exact to ~1e-13
        np.testing.assert_allclose(image, A[train].T @ y[train], rtol=0, atol=1e-12)


def _flat_law(n):
    """Three informative columns, few rows in error whatever C: a flat grid once n is large."""
    from sklearn.datasets import make_classification

    return make_classification(n, 3, n_informative=3, n_redundant=0, random_state=0)


def test_search_ends_where_the_grid_is_flat_and_the_rest_is_a_weak_penalty(capsys):
    # 4 800 training rows per fold over 4 columns (1 200 per column); the folds' least Gram eigenvalue is
    # about 4 000: after C = 1000 and 100 (shares 0.25, 0.025) the search goes on, after C = 10 (0.0025) the
    # three values run agree within one standard error and the four smaller ones are not run
    X, y = _flat_law(6000)
    with calls_of(mean_validation_curve, gram_range_floor) as (curves, floors):
        clf = HoKashyapClassifierCV(Cs=7, random_state=0, verbose=2).fit(X, y)
    # each value of C run: its mean curve read once by the search's end, once for the choice
    assert len(curves) == 2 * 3
    assert len(floors) == 5  # each fold's λ⁺ once per fit, not once per wave
    out = capsys.readouterr().out
    stopped = clf.search_stopped_
    grid = default_C_grid(7)  # [None, 0.01, 0.1, ..., 1000] as this NumPy's logspace rounds them (0.1 may not be)
    assert stopped["after_C"] == grid[4] == pytest.approx(10.0) and stopped["not_run"] == grid[:4]
    assert stopped["spread"] <= stopped["standard_error"] and stopped["penalty_share"] <= 1e-2
    assert "search ended after C=10" in out and "the 3 values of C run lie within" in out
    results = clf.cv_results_
    best = results["best_validation_error"]
    assert np.isnan(best[:4]).all() and not np.isnan(best[4:]).any()
    assert np.isnan(results["mean_validation_error"][:4]).all()
    assert (results["fold_n_iter"][:4] == 0).all() and (results["fold_n_iter"][4:] > 0).all()
    assert clf.C_ in grid[4:]
    # what it ran is the search over the values it ran: the same waves, references and runs, the same fit
    sub = HoKashyapClassifierCV(Cs=grid[4:], random_state=0).fit(X, y)
    assert sub.search_stopped_ is None  # nothing left to skip
    assert (sub.C_, sub.best_iter_) == (clf.C_, clf.best_iter_)
    np.testing.assert_array_equal(sub.coef_, clf.coef_)
    np.testing.assert_array_equal(sub.cv_results_["best_validation_error"], results["best_validation_error"][4:])
    # early_exit=None: one wave, the whole grid
    full = HoKashyapClassifierCV(Cs=7, random_state=0, early_exit=None).fit(X, y)
    assert full.search_stopped_ is None and (full.cv_results_["fold_n_iter"] > 0).all()


@pytest.mark.parametrize("case", ["few rows per column", "absolute loss"])
def test_search_runs_the_whole_grid_without_n_much_larger_than_d_or_with_irls(case):
    # 2 400 training rows per fold over 4 columns: 600 per column, below SEARCH_END_ROWS_PER_COLUMN; IRLS
    # reweights the Gram matrices the bound is about
    X, y = _flat_law(3000) if case == "few rows per column" else _flat_law(6000)
    loss = "absolute" if case == "absolute loss" else "squared"
    clf = HoKashyapClassifierCV(Cs=4, random_state=0, loss=loss).fit(X, y)
    assert clf.search_stopped_ is None
    assert (clf.cv_results_["fold_n_iter"] > 0).all()


def test_flat_search_end_needs_rows_a_weak_penalty_agreement_and_the_waves_order():
    from linsep.estimators.ho_kashyap_cv import SEARCH_END_ROWS_PER_COLUMN, flat_search_end, gram_range_floor

    # a Gram matrix with a null direction (a column the sum of two others): λ⁺ is the least of the others
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3)) * 2.0
    A = np.c_[X, X[:, 0] + X[:, 1], np.ones(4000)]
    gram = A.T @ A
    floor = gram_range_floor(gram, 4000)
    assert floor == pytest.approx(np.sort(np.linalg.eigvalsh(gram))[1], rel=1e-9)
    grams = [gram] * 5
    last = 0.01 * floor  # the largest share that ends a search
    end = flat_search_end([10 * last, last], [0.2, 0.201], 5000, grams, 5 * SEARCH_END_ROWS_PER_COLUMN, [None])
    assert end["after_C"] == last and end["not_run"] == [None] and end["penalty_share"] <= 1e-2
    kept = dict(tried=[10 * last, last], best_errors=[0.2, 0.201], n_val=5000, fold_grams=grams,
                n_train=5 * SEARCH_END_ROWS_PER_COLUMN, remaining=[None])
    for change in ({"n_train": 5 * SEARCH_END_ROWS_PER_COLUMN - 1},  # N ≫ d not met
                   {"tried": [10 * last, 1.5 * last]},  # a penalty too large against λ⁺
                   {"best_errors": [0.2, 0.25]},  # the values run disagree
                   {"tried": [last], "best_errors": [0.2]},  # one value is no evidence
                   {"tried": [last, 10 * last]},  # not the waves' order
                   {"remaining": [2 * last]},  # a larger value left: the bound says nothing of it
                   {"remaining": []}):
        assert flat_search_end(**dict(kept, **change)) is None, change


def test_the_benchmark_sets_never_end_a_search_early():
    # linsep bench's results rest on whole searches: every bundled IDA set has far fewer training rows per
    # column than flat_search_end asks for (at most 74 rows per feature in the whole training split)
    from linsep.datasets import BENCHMARKS
    from linsep.estimators.ho_kashyap_cv import SEARCH_END_ROWS_PER_COLUMN
    from linsep.experiments.protocol import load_split

    for dataset in BENCHMARKS:
        X_fit, _, X_tune, _, _, _ = load_split(dataset, 0)
        rows = X_fit.shape[0] + X_tune.shape[0]
        assert rows / (X_fit.shape[1] + 1) < SEARCH_END_ROWS_PER_COLUMN / 10, dataset
