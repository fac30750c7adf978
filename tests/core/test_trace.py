"""Teaching traces: the lecture's worked examples, the trace of every iterative estimator, the memory bound."""

import warnings

import numpy as np
import pytest

from linsep import HoKashyapClassifier, MSEClassifier, available_classifiers, make_classifier
from linsep._core.trace import TRACE_BUDGET_BYTES, TraceRecorder, make_recorder
from linsep.cli import main
from linsep.inspection import get_trace, trace_table

# The lecture's four points; class 1 is the positive class there.
LECTURE_X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
LECTURE_Y = np.array([1, 1, -1, -1])


def _lecture_csv(path, last_point=(0, 10)):
    rows = ["x1,x2,label", "6,9,1", "5,7,1", "5,9,2", f"{last_point[0]},{last_point[1]},2"]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_lecture_ho_kashyap_example_in_the_trace():
    clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True)
    clf.fit(LECTURE_X, LECTURE_Y, coef_init=[1, 1], intercept_init=1)
    records = trace_table(clf).to_records()
    assert [r["k"] for r in records] == list(range(1, clf.n_iter_ + 1))
    np.testing.assert_allclose(records[0]["a"], [1, 1, 1])
    np.testing.assert_allclose(records[0]["e"], [15, 12, -16, -12])
    np.testing.assert_allclose(records[1]["b"], [28, 22.6, 1, 1])
    np.testing.assert_allclose(records[1]["a"], [34.6, 2.7, -3.8], atol=0.05)  # the lecture's rounding
    # "After 104 iterations converged": a = [-34.9, 27.3, -11.3], b = [28, 23, 1, 147]
    assert clf.n_iter_ == 104 and clf.status_ == "separable"
    np.testing.assert_allclose(records[-1]["a"], [-34.9, 27.3, -11.3], atol=0.05)
    np.testing.assert_allclose(records[-1]["b"], [28, 23, 1, 147], atol=0.5)


def test_lecture_ho_kashyap_example_through_the_cli(tmp_path, capsys):
    data = _lecture_csv(tmp_path / "lecture.csv")
    code = main(["trace", "hk", str(data), "--param", "learning_rate=0.9", "--init-weights", "1,1,1",
                 "--b0", "1", "--positive", "1", "--steps", "2", "--digits", "3"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["k", "a(k)"]
    assert lines[1].startswith("1  [1, 1, 1]") and "[15, 12, -16, -12]" in lines[1]
    assert lines[2].startswith("2  [34.6, 2.68, -3.79]") and "[28, 22.6, 1, 1]" in lines[2]
    assert "104  [-34.9, 27.3, -11.3]" in out and "[28, 22.6, 1, 147]" in out
    assert "n_iter_ = 104, status separable" in out


@pytest.mark.parametrize("last_point, margin, expected, separable", [
    ((0, 4), None, [2.7, 1.0, -0.9], True),           # b = 1 separates
    ((0, 10), None, [3.2, 0.2, -0.4], False),          # the far point spoils it ...
    ((0, 10), "1,1,1,10", [-1.1, 1.7, -0.9], True),    # ... unless its margin is 10
])
def test_lecture_mse_examples_through_the_cli(tmp_path, capsys, last_point, margin, expected, separable):
    data = _lecture_csv(tmp_path / "mse.csv", last_point)
    argv = ["trace", "mse", str(data), "--positive", "1"] + (["--b0", margin] if margin else [])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ("status separable" in out) == separable
    X = LECTURE_X.copy()
    X[3] = last_point
    b = None if margin is None else [1, 1, 1, 10]
    clf = MSEClassifier(record_history=True).fit(X, LECTURE_Y, margin=b)
    (record,) = trace_table(clf).to_records()
    np.testing.assert_allclose(record["a"], expected, atol=0.06)
    Y = LECTURE_Y[:, None] * np.c_[np.ones(4), X]
    np.testing.assert_allclose(record["e"], Y @ np.array(record["a"]) - (b or 1))


def _data(seed=0, n=30, separable=True):
    rng = np.random.RandomState(seed)
    shift = 2.5 if separable else 0.3
    X = np.r_[rng.randn(n, 2) + shift, rng.randn(n, 2) - shift]
    return X, np.r_[np.ones(n), -np.ones(n)]


def _model_vector(clf):
    if hasattr(clf, "coef_"):
        return np.r_[clf.coef_.ravel(), clf.intercept_]
    return np.r_[clf.dual_coef_.ravel(), clf.intercept_]


def _row_vector(trace, row):
    if "weights" in trace:
        return trace["weights"][row]
    return np.r_[trace["dual_coef"][row], trace["intercept"][row]]


TRACED = sorted(set(available_classifiers()))


@pytest.mark.parametrize("name", TRACED)
def test_every_iterative_estimator_traces_every_iteration(name):
    clf = make_classifier(name)
    if "record_history" not in clf.get_params():
        pytest.skip(f"{name} is not iterative")
    clf.set_params(record_history=True)
    if "random_state" in clf.get_params():
        clf.set_params(random_state=0)
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    trace = get_trace(clf)
    k = trace["iteration"]
    returned = trace.get("returned", np.zeros(k.shape[0], dtype=bool))
    steps = k[~returned]  # the iterations; a returned row (an earlier iterate, the model) may end the trace
    assert steps[-1] == clf.n_iter_ and returned[:-1].sum() == 0
    assert steps[0] in (0, 1)
    np.testing.assert_array_equal(steps, np.arange(steps[0], clf.n_iter_ + 1))  # kernel SK too: a row per step
    n_rows = k.shape[0]
    for key in ("weights", "dual_coef", "intercept", "margin_vector", "error_vector", "sample"):
        if key in trace:
            assert trace[key].shape[0] == n_rows, key
    assert ("weights" in trace) == hasattr(clf, "coef_")
    if getattr(clf, "best_iter_", None) is not None:  # early stopping keeps the best iterate
        assert k[-1] == clf.best_iter_
        np.testing.assert_allclose(_row_vector(trace, int(np.flatnonzero(k == clf.best_iter_)[0])),
                                   _model_vector(clf), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(_row_vector(trace, -1), _model_vector(clf), rtol=1e-9, atol=1e-9)
    if "error_vector" in trace and "weights" in trace and name in ("hk", "mse", "widrow_hoff", "lms"):
        Y = y[:, None] * np.c_[X, np.ones(len(y))]
        np.testing.assert_allclose(trace["error_vector"], trace["weights"] @ Y.T - trace["margin_vector"],
                                   atol=1e-9)
    assert len(trace_table(clf)) == n_rows
    if name in ("hk", "mse", "widrow_hoff", "lms", "perceptron", "kernel_perceptron", "batch_perceptron", "lsvm",
                "kernel_lsvm"):
        assert trace["training_errors"][-1] == np.count_nonzero(y * clf.decision_function(X) <= 0)
    # every method: cross_cutting/test_trace_counts.py (the last row counts the model's errors)


def test_registered_iterative_estimators_all_take_record_history():
    iterative = {"hk", "modified_hk", "mhks", "mhka", "hkes", "hkesa", "kernel_hk", "kernel_hkes", "widrow_hoff",
                 "lms", "perceptron", "batch_perceptron", "kernel_perceptron", "kozinec", "sk", "kernel_sk",
                 "lsvm", "kernel_lsvm", "mse"}
    for name in iterative & set(available_classifiers()):
        assert "record_history" in make_classifier(name).get_params(), name


def test_traced_ho_kashyap_matches_the_untraced_fit():
    X, y = _data(3, separable=False)
    for name in ("hk", "mhks", "mhka"):
        plain = make_classifier(name).fit(X, y)
        traced = make_classifier(name, record_history=True).fit(X, y)
        assert plain.n_iter_ == traced.n_iter_
        np.testing.assert_allclose(traced.coef_, plain.coef_, rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(traced.history_["criterion"], plain.history_["criterion"]
                                   if hasattr(plain, "history_") else traced.history_["criterion"])


def test_single_sample_rules_name_the_corrected_sample():
    X, y = _data(1, separable=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = make_classifier("perceptron", record_history=True, max_iter=5, random_state=0).fit(X, y)
        plain = make_classifier("perceptron", max_iter=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.coef_, plain.coef_)  # the traced pass is the compiled one's
    sample = clf.history_["sample"]
    assert sample[0] == -1 and np.all((sample[1:] >= 0) & (sample[1:] < len(y)))
    sk = make_classifier("kozinec", record_history=True).fit(*_data(2))
    assert sk.history_["sample"][0] == -1 and np.all(sk.history_["sample"][1:] >= 0)


def test_stride_keeps_every_nth_iteration_and_the_last():
    X, y = _data(4, separable=False)
    full = make_classifier("widrow_hoff", record_history=True, max_iter=50, tol=0.0)
    every = make_classifier("widrow_hoff", record_history=7, max_iter=50, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full.fit(X, y)
        every.fit(X, y)
    k = every.history_["iteration"]
    np.testing.assert_array_equal(k, np.r_[np.arange(0, 50, 7), 50])
    np.testing.assert_allclose(every.history_["weights"], full.history_["weights"][k])
    assert every.history_["criterion"].shape == full.history_["criterion"].shape  # scalars not thinned


def test_recorder_budget_thins_evenly_and_bounds_memory():
    row = np.zeros(1000)  # 8 kB per key
    recorder = TraceRecorder(budget_bytes=200_000)
    for k in range(1, 1001):
        recorder.record(k, margin_vector=row, error_vector=row)
    recorder.record(1000, final=True, margin_vector=row, error_vector=row)
    trace = recorder.as_dict()
    size = sum(v.nbytes for v in trace.values())
    assert size <= 200_000 + 2 * row.nbytes + 8 * trace["iteration"].size
    k = trace["iteration"]
    assert k[0] == 1 and k[-1] == 1000 and len(k) >= 6
    steps = np.diff(k[:-1])
    assert np.all(steps == steps[0])  # evenly spaced before the final row
    assert make_recorder(False) is None and make_recorder(True).stride == 1 and make_recorder(5).stride == 5
    assert TRACE_BUDGET_BYTES < 100 * 2**20


def test_ho_kashyap_trace_stays_within_the_budget():
    from linsep._core.trace import trace_budget

    X, y = _data(5, n=1000, separable=False)
    clf = HoKashyapClassifier(C=1.0, record_history=True, max_iter=300, tol=0.0, stopping="paper",
                              stop_at_separation=False)  # C: no non-separability proof ends it early
    with warnings.catch_warnings(), trace_budget(400_000):
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    trace = clf.history_
    kept = sum(trace[key].nbytes for key in ("iteration", "weights", "margin_vector", "error_vector"))
    assert kept <= 400_000 + 2 * 16_100
    assert trace["iteration"][-1] == clf.n_iter_ == 301 and trace["criterion"].size == 301
    assert trace["iteration"].size < 301 // 8  # thinned
    np.testing.assert_allclose(trace["weights"][-1], np.r_[clf.coef_.ravel(), clf.intercept_])


def test_one_vs_rest_traces_one_table_per_class():
    rng = np.random.RandomState(0)
    X = np.r_[rng.randn(15, 2) + [4, 0], rng.randn(15, 2) - [4, 0], rng.randn(15, 2) + [0, 6]]
    y = np.repeat([0, 1, 2], 15)
    clf = make_classifier("batch_perceptron", record_history=True, schedule="constant").fit(X, y)
    assert isinstance(clf.history_, list) and len(clf.history_) == 3
    for c in range(3):
        table = trace_table(clf, problem=c)
        assert table.to_records()[-1]["k"] == clf.n_iter_[c]
        np.testing.assert_allclose(table.to_records()[-1]["a"], np.r_[clf.intercept_[c], clf.coef_[c]])


def test_cli_trace_one_vs_rest_class(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = np.r_[rng.randn(15, 2) + [4, 0], rng.randn(15, 2) - [4, 0], rng.randn(15, 2) + [0, 6]]
    labels = np.repeat(["a", "b", "c"], 15)
    data = tmp_path / "three.csv"
    data.write_text("x1,x2,label\n" + "".join(f"{u},{v},{c}\n" for (u, v), c in zip(X, labels)))
    assert main(["trace", "batch_perceptron", str(data), "--class", "c", "--param", "schedule=constant"]) == 0
    out = capsys.readouterr().out
    clf = make_classifier("batch_perceptron", schedule="constant").fit(X, labels)
    assert f"n_iter_ = {clf.n_iter_[2]}, status separable (class 'c' against the rest)" in out
    assert main(["trace", "batch_perceptron", str(data), "--class", "z"]) == 2
    assert "'z' is not a label" in capsys.readouterr().err


def test_trace_table_refuses_a_fit_without_trace():
    clf = HoKashyapClassifier().fit(LECTURE_X, LECTURE_Y)
    with pytest.raises(ValueError, match="record_history"):
        trace_table(clf)


def test_trace_table_formats_and_exports():
    clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True)
    clf.fit(LECTURE_X, LECTURE_Y, coef_init=[1, 1], intercept_init=1)
    table = trace_table(clf, bias_first=False, precision=3, max_entries=2)
    text = str(table.head(2)).splitlines()
    assert text[0].startswith("k  a(k) = [w, w0]")
    assert text[2].startswith("2  [2.68, -3.79, … (3)]")
    pd = pytest.importorskip("pandas")
    frame = table.to_dataframe()
    assert isinstance(frame, pd.DataFrame) and list(frame.index[:2]) == [1, 2]
    assert frame.loc[2, "b"] == (28.0, 22.6, 1.0, 1.0)


def test_cli_trace_refusals(tmp_path, capsys):
    data = _lecture_csv(tmp_path / "lecture.csv")
    for argv in (["trace", "kozinec", data, "--init-weights", "1,1,1"],
                 ["trace", "hk", data, "--init-weights", "1,1"],
                 ["trace", "hk", data, "--b0", "1,2,3,4"],
                 ["trace", "hk", data, "--positive", "7"],
                 ["trace", "hk", data, "--b0", "x"]):
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "error:" in err


def test_cli_trace_plot_goes_through_inspection(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    data = _lecture_csv(tmp_path / "lecture.csv")
    out_png = tmp_path / "trace.png"
    assert main(["trace", "batch_perceptron", str(data), "--positive", "1", "--plot", str(out_png)]) == 0
    assert out_png.read_bytes().startswith(b"\x89PNG") and f"plot -> {out_png}" in capsys.readouterr().out
