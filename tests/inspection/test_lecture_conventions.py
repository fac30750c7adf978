"""The lecture's conventions: the positive class (pos_label), starting weights, 1-based samples, noise as 0, LaTeX/HTML."""

import warnings

import numpy as np
import pytest

from linsep import (BatchPerceptronClassifier, HoKashyapClassifier, HoKashyapClassifierCV, KernelHoKashyapClassifier,
                    KernelHoKashyapClassifierCV, KernelLagrangianSVMClassifier, KernelPerceptronClassifier,
                    KernelSchlesingerKozinecClassifier, KozinecClassifier, LagrangianSVMClassifier, LMSClassifier,
                    MSEClassifier, PerceptronClassifier, SchlesingerKozinecClassifier, WidrowHoffClassifier)
from linsep.cli import main
from linsep.inspection import TraceTable, trace_positive_class, trace_table

# The lecture's four points: "class 1" (the first two) is the positive class there.
X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
Y12 = np.array([1, 1, 2, 2])
YPM = np.array([1, 1, -1, -1])
LECTURE = dict(learning_rate=0.9, b0=1.0, record_history=True)


def lecture_hk(y, **params):
    return HoKashyapClassifier(**LECTURE, **params).fit(X, y, coef_init=[1, 1], intercept_init=1)


def test_pos_label_reproduces_the_lecture_with_its_labels():
    reference = lecture_hk(YPM)
    clf = lecture_hk(Y12, pos_label=1)
    assert clf.n_iter_ == reference.n_iter_ == 104 and clf.status_ == "separable"
    assert str(trace_table(clf)) == str(trace_table(reference))
    for got, want in zip(trace_table(clf).to_records(), trace_table(reference).to_records()):
        assert got == want
    assert trace_table(clf).to_records()[1]["b"] == (28.0, 22.6, 1.0, 1.0)
    # scikit-learn's side of the model: classes_ sorted, decision_function > 0 means classes_[1] = 2
    np.testing.assert_array_equal(clf.classes_, [1, 2])
    np.testing.assert_array_equal(clf.predict(X), Y12)
    assert np.all((clf.decision_function(X) > 0) == (Y12 == 2))
    np.testing.assert_allclose(clf.coef_, -reference.coef_)
    np.testing.assert_allclose(clf.intercept_, -reference.intercept_)
    np.testing.assert_allclose(clf.margin_vector_, reference.margin_vector_)
    assert trace_positive_class(clf) == 1 and trace_positive_class(reference) == 1


def test_without_pos_label_the_larger_label_is_positive():
    clf = lecture_hk(Y12)
    assert clf.n_iter_ == 94 and trace_positive_class(clf) == 2   # another run: a(1) = 1 on the other side
    same = lecture_hk(Y12, pos_label=2)
    assert same.n_iter_ == 94
    np.testing.assert_allclose(same.coef_, clf.coef_)


def test_pos_label_with_string_labels_and_its_refusals():
    y = np.array(["good", "good", "bad", "bad"])
    clf = lecture_hk(y, pos_label="good")
    assert clf.n_iter_ == 104 and (clf.predict(X) == y).all() and list(clf.classes_) == ["bad", "good"]
    with pytest.raises(ValueError, match="not a class"):
        lecture_hk(Y12, pos_label=3)
    X3 = np.r_[X, [[1.0, 1.0], [2.0, 1.0]]]
    with pytest.raises(ValueError, match="two-class"):
        HoKashyapClassifier(pos_label=1).fit(X3, [1, 1, 2, 2, 3, 3])
    with pytest.raises(ValueError, match="two-class"):
        MSEClassifier(pos_label=1).fit(X3, [1, 1, 2, 2, 3, 3])


@pytest.mark.parametrize("make", [
    lambda: PerceptronClassifier(shuffle=False, record_history=True),
    lambda: BatchPerceptronClassifier(schedule="constant", record_history=True),
    lambda: LMSClassifier(shuffle=False, record_history=True),
    lambda: WidrowHoffClassifier(record_history=True, max_iter=50),
    lambda: MSEClassifier(record_history=True),
])
def test_pos_label_keeps_the_model_and_signs_the_trace(make):
    """From a(0) = 0 these rules are sign-equivariant: pos_label changes the trace's sign only."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = make().fit(X, Y12)
        flipped = make().set_params(pos_label=1).fit(X, Y12)
    np.testing.assert_allclose(flipped.coef_, plain.coef_, atol=1e-9)
    np.testing.assert_allclose(flipped.intercept_, plain.intercept_, atol=1e-9)
    np.testing.assert_allclose(flipped.history_["weights"], -plain.history_["weights"], atol=1e-9)
    shown = trace_table(flipped, pos_label=2).to_records()
    for got, want in zip(shown, trace_table(plain).to_records()):
        np.testing.assert_allclose(got["a"], want["a"], atol=1e-9)


def test_trace_table_pos_label_shows_the_run_in_the_other_convention():
    clf = lecture_hk(Y12, pos_label=1)
    mine, other = trace_table(clf).to_records(), trace_table(clf, pos_label="2").to_records()
    assert other[0]["a"] == (-1.0, -1.0, -1.0)
    assert [r["b"] for r in other] == [r["b"] for r in mine] and [r["e"] for r in other] == [r["e"] for r in mine]
    with pytest.raises(ValueError, match="not a label"):
        trace_table(clf, pos_label=5)


def perceptron_oracle(X, y, a, max_passes=100):
    """The lecture's single-sample perceptron, samples in order: a ← a + y_i (x_i, 1) when aᵗy_i <= 0."""
    Y = y[:, None] * np.c_[X, np.ones(len(X))]
    for _ in range(max_passes):
        mistakes = 0
        for row in Y:
            if row @ a <= 0:
                a, mistakes = a + row, mistakes + 1
        if not mistakes:
            return a
    raise AssertionError("no separation")


def test_perceptron_starts_from_coef_init():
    start = np.array([-2.0, 1.0, 3.0])   # [w1, w2, w0]
    clf = PerceptronClassifier(shuffle=False, record_history=True, pos_label=1)
    clf.fit(X, Y12, coef_init=start[:2], intercept_init=start[2])
    np.testing.assert_allclose(clf.history_["weights"][0], start)   # k = 0: the starting weights
    final = perceptron_oracle(X, YPM.astype(float), start)
    np.testing.assert_allclose(clf.history_["weights"][-1], final)
    np.testing.assert_allclose(np.r_[clf.coef_[0], clf.intercept_], -final)   # classes_[1] = 2 positive
    plain = PerceptronClassifier(shuffle=False).fit(X, YPM)
    assert not np.allclose(np.r_[plain.coef_[0], plain.intercept_], final)    # the start mattered


@pytest.mark.parametrize("make", [
    lambda: BatchPerceptronClassifier(schedule="constant", record_history=True),
    lambda: LMSClassifier(shuffle=False, record_history=True, max_iter=3),
    lambda: WidrowHoffClassifier(record_history=True, max_iter=3),
])
def test_rules_start_from_coef_init_even_on_rescaled_columns(make):
    start = np.array([0.5, -0.25, 2.0])
    for scale in (1.0, 2.0 ** 12):   # 2^12: the MSE rules rescale such columns by powers of two
        Xs = X * [scale, 1.0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = make().fit(Xs, YPM, coef_init=start[:2] / [scale, 1.0], intercept_init=start[2])
        np.testing.assert_allclose(clf.history_["weights"][0], np.r_[start[:2] / [scale, 1.0], start[2]])


def test_starting_weights_are_checked():
    with pytest.raises(ValueError, match="3 entries"):
        PerceptronClassifier().fit(X, YPM, coef_init=[1, 2, 3])
    X3 = np.r_[X, [[1.0, 1.0], [2.0, 1.0]]]
    with pytest.raises(ValueError, match="two-class"):
        LMSClassifier().fit(X3, [1, 1, 2, 2, 3, 3], coef_init=[1, 1])


def test_stream_with_pos_label_matches_the_plain_stream():
    a = PerceptronClassifier(shuffle=False, pos_label=1)
    b = PerceptronClassifier(shuffle=False)
    for _ in range(3):
        a.partial_fit(X, Y12, classes=[1, 2])
        b.partial_fit(X, Y12, classes=[1, 2])
    np.testing.assert_allclose(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_one_based_samples_noise_as_zero_latex_and_html():
    clf = PerceptronClassifier(shuffle=False, record_history="updates", pos_label=1).fit(X, Y12)
    zero_based = [r["sample"] for r in trace_table(clf).to_records()]
    one_based = [r["sample"] for r in trace_table(clf, first_sample=1).to_records()]
    assert [s + 1 for s in zero_based if s is not None] == [s for s in one_based if s is not None]
    assert min(s for s in one_based if s is not None) >= 1
    with pytest.raises(ValueError, match="first_sample"):
        trace_table(clf, first_sample=2)

    table = TraceTable(["k", "e", "criterion"], ["k", "e(k)", "J"], [(1, (1.0, 4.440892098500626e-16), 3e-17)])
    assert str(table).splitlines()[1] == "1  [1, 0]  0"
    raw = TraceTable(["k", "e", "criterion"], ["k", "e(k)", "J"], [(1, (1.0, 4.440892098500626e-16), 3e-17)],
                     zero_tol=0)
    assert "4.441e-16" in str(raw) and "3e-17" in str(raw)
    small = TraceTable(["k", "e"], ["k", "e(k)"], [(1, (2e-9, 1e-9))])     # small but not noise: its own scale
    assert str(small).splitlines()[1] == "1  [2e-09, 1e-09]"

    lecture = trace_table(lecture_hk(Y12, pos_label=1), precision=3).head(2)
    latex = lecture.to_latex()
    assert latex.startswith(r"\begin{tabular}{rlllrr}") and latex.rstrip().endswith(r"\end{tabular}")
    assert r"$\mathbf{a}(k) = [w_0, \mathbf{w}]$" in latex
    assert r"2 & $[34.6, 2.68, -3.79]$ & $[28, 22.6, 1, 1]$ & $[-11.4, -1.14, -14.9, 2.29]$ & 359 & 1 \\" in latex
    assert latex.count(r"\\") == 3
    html = lecture.to_html()
    assert html.startswith('<table class="linsep-trace">') and "<td>[28, 22.6, 1, 1]</td>" in html
    assert lecture._repr_html_() == html


def test_cli_positive_runs_the_estimator_with_pos_label(tmp_path, capsys):
    data = tmp_path / "lecture.csv"
    data.write_text("x1,x2,label\n6,9,1\n5,7,1\n5,9,2\n0,10,2\n")
    assert main(["trace", "perceptron", str(data), "--positive", "1", "--init-weights", "1,1,1",
                 "--param", "shuffle=false", "--steps", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("0  [1, 1, 1]")     # a(0): the starting weights, bias first


# --- pos_label on the Kozinec/SK, LSVM, kernel perceptron, kernel HK and cross-validated HK estimators ---

_RNG = np.random.default_rng(0)
X_NOISY = _RNG.normal(size=(40, 2))
Y_NOISY = np.where(X_NOISY[:, 0] + 0.8 * _RNG.normal(size=40) > 0, 2, 1)   # overlapping classes 1 and 2
X_TWICE, Y_TWICE = np.r_[X, X + 0.1], np.r_[Y12, Y12]                        # enough rows for 2 folds

OTHER_FAMILIES = {
    "kozinec": lambda: KozinecClassifier(record_history=True, max_iter=300),
    "sk": lambda: SchlesingerKozinecClassifier(record_history=True, max_iter=2000),
    "sk_augmented": lambda: SchlesingerKozinecClassifier(record_history=True, formulation="augmented", max_iter=2000),
    "kernel_sk": lambda: KernelSchlesingerKozinecClassifier(record_history=True, gamma=1.0),
    "lsvm": lambda: LagrangianSVMClassifier(record_history=True),
    "kernel_lsvm": lambda: KernelLagrangianSVMClassifier(record_history=True, gamma=1.0),
    "kernel_perceptron": lambda: KernelPerceptronClassifier(record_history=True, gamma=1.0, max_iter=20),
    "kernel_hk": lambda: KernelHoKashyapClassifier(record_history=True, gamma=1.0),
    "kernel_hkes": lambda: KernelHoKashyapClassifier(record_history=True, gamma=1.0, early_stopping=True,
                                                     random_state=0),
    "hk_cv": lambda: HoKashyapClassifierCV(cv=2, record_history=True, random_state=0),
    "hk_cv_Cs": lambda: HoKashyapClassifierCV(cv=2, Cs=3, record_history=True, random_state=0),
    "hk_cv_no_refit": lambda: HoKashyapClassifierCV(cv=2, refit=False, random_state=0),
    "kernel_hk_cv": lambda: KernelHoKashyapClassifierCV(cv=2, gamma=1.0, record_history=True, random_state=0),
}


def _fit_quietly(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


@pytest.mark.parametrize("problem", ["separable", "noisy"])
@pytest.mark.parametrize("name", sorted(OTHER_FAMILIES))
def test_pos_label_keeps_the_model_of_the_other_families(name, problem):
    """These rules are sign-symmetric: pos_label=classes_[0] keeps every prediction and score, the trace changes sign."""
    make = OTHER_FAMILIES[name]
    Xd, yd = (X_NOISY, Y_NOISY) if problem == "noisy" else (X_TWICE, Y_TWICE) if "cv" in name else (X, Y12)
    plain = _fit_quietly(make(), Xd, yd)
    flipped = _fit_quietly(make().set_params(pos_label=1), Xd, yd)
    np.testing.assert_array_equal(flipped.classes_, [1, 2])
    np.testing.assert_array_equal(flipped.predict(Xd), plain.predict(Xd))
    np.testing.assert_allclose(flipped.decision_function(Xd), plain.decision_function(Xd), atol=1e-9)
    assert np.all((flipped.decision_function(Xd) > 0) == (flipped.predict(Xd) == 2))  # scikit-learn's sign
    np.testing.assert_array_equal(flipped.status_, plain.status_)
    if not flipped.record_history:
        return
    assert trace_positive_class(flipped) == 1 and trace_positive_class(plain) == 2
    mine, shown, reference = (trace_table(flipped).to_records(), trace_table(flipped, pos_label=2).to_records(),
                              trace_table(plain).to_records())
    assert len(shown) == len(reference)
    keys = [key for key in ("a", "dual_coef", "intercept") if key in reference[0]]
    assert keys
    for raw, got, want in zip(mine, shown, reference):
        for key in keys:
            np.testing.assert_allclose(np.asarray(got[key], dtype=float), np.asarray(want[key], dtype=float),
                                       atol=1e-8)
            np.testing.assert_allclose(np.asarray(raw[key], dtype=float), -np.asarray(want[key], dtype=float),
                                       atol=1e-8)   # recorded with class 1 as +1


@pytest.mark.parametrize("name", sorted(OTHER_FAMILIES))
def test_pos_label_of_the_other_families_is_checked(name):
    make = OTHER_FAMILIES[name]
    with pytest.raises(ValueError, match="not a class"):
        _fit_quietly(make().set_params(pos_label=3), X_TWICE, Y_TWICE)
    with pytest.raises(ValueError, match="two-class"):
        _fit_quietly(make().set_params(pos_label=1), np.r_[X_NOISY, X_NOISY[:12] + 4.0],
                     np.r_[Y_NOISY, np.full(12, 3)])
    with pytest.raises(ValueError, match="pos_label"):
        make().set_params(pos_label=[1]).fit(X_TWICE, Y_TWICE)   # the constraint: a label, not a list


def test_kernel_perceptron_stream_with_pos_label_matches_the_plain_stream():
    a = KernelPerceptronClassifier(shuffle=False, gamma=0.5, pos_label=1, record_history=True)
    b = KernelPerceptronClassifier(shuffle=False, gamma=0.5, record_history=True)
    for start in (0, 20):
        a.partial_fit(X_NOISY[start:start + 20], Y_NOISY[start:start + 20], classes=[1, 2])
        b.partial_fit(X_NOISY[start:start + 20], Y_NOISY[start:start + 20], classes=[1, 2])
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_)
    np.testing.assert_allclose(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.predict(X_NOISY), b.predict(X_NOISY))
    np.testing.assert_allclose(a.history_["dual_coef"], -np.asarray(b.history_["dual_coef"]))


def test_lsvm_refuses_pos_label_for_dask_input():
    da = pytest.importorskip("dask.array")
    Xd = da.from_array(X_NOISY, chunks=20)
    LagrangianSVMClassifier().fit(Xd, Y_NOISY)   # without pos_label: the blockwise fit
    with pytest.raises(ValueError, match="pos_label=1 is not available for dask input"):
        LagrangianSVMClassifier(pos_label=1).fit(Xd, Y_NOISY)
