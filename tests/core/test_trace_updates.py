"""Update-by-update traces of the single-sample rules, reproducible shuffling, the lecture's sign convention."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from linsep import (
    HoKashyapClassifier,
    LMSClassifier,
    PerceptronClassifier,
    make_classifier,
)
from linsep.cli import main
from linsep.inspection import positive_class_labels, trace_table

X = np.array([[1.0, 2.0], [2.0, 0.0], [3.0, 1.0], [-1.0, -1.0], [0.0, -2.0], [-2.0, 1.0]])
Y = np.array(["A", "A", "A", "B", "B", "B"])


def _perceptron_updates(X, signs, margin=0.0, max_passes=100):
    """The lecture's rule written out: a ← a + y_i (x_i, 1) on each mistake, samples in order."""
    a, rows = np.zeros(X.shape[1] + 1), [(0, np.zeros(X.shape[1] + 1), None)]
    for _ in range(max_passes):
        corrected = False
        for i, (x, s) in enumerate(zip(X, signs)):
            if s * (a[:-1] @ x + a[-1]) <= margin:
                a = a + s * np.r_[x, 1.0]
                rows.append((len(rows), a.copy(), i))
                corrected = True
        if not corrected:
            return rows
    return rows


@pytest.mark.parametrize("sparse", [False, True])
def test_perceptron_records_every_update(sparse):
    clf = PerceptronClassifier(shuffle=False, record_history="updates")
    clf.fit(sp.csr_matrix(X) if sparse else X, Y)
    records = trace_table(clf).to_records()
    expected = _perceptron_updates(X, np.where(Y == "B", 1, -1))
    assert [r["k"] for r in records] == [k for k, _, _ in expected]
    for record, (_, a, sample) in zip(records, expected):
        np.testing.assert_allclose(record["a"], np.r_[a[-1], a[:-1]])  # the table shows [w0, w]
        assert record["sample"] == sample
    assert records[-1]["pass"] <= clf.n_iter_
    np.testing.assert_allclose(np.r_[clf.coef_.ravel(), clf.intercept_], expected[-1][1])


def test_update_traces_fit_as_untraced():
    noisy = np.r_[X, [[0.5, 0.5], [1.0, -1.0]]]
    labels = np.r_[Y, ["B", "A"]]
    for cls, params in ((PerceptronClassifier, {"max_iter": 7}), (LMSClassifier, {"max_iter": 5})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = cls(**params).fit(noisy, labels)
            traced = cls(**params, record_history="updates").fit(noisy, labels)
        np.testing.assert_allclose(traced.coef_, plain.coef_, rtol=1e-12, atol=1e-12)
        rows = trace_table(traced).to_records()
        np.testing.assert_allclose(rows[-1]["a"], np.r_[traced.intercept_, traced.coef_.ravel()], atol=1e-12)


def test_lms_updates_at_every_sample():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LMSClassifier(shuffle=False, max_iter=3, record_history="updates").fit(X, Y)
    records = trace_table(clf).to_records()
    assert len(records) == 1 + X.shape[0] * clf.n_iter_
    assert [r["sample"] for r in records[1:7]] == list(range(6)) and records[6]["pass"] == 1


def test_kernel_perceptron_records_every_update():
    clf = make_classifier("kernel_perceptron", kernel="linear", shuffle=False, record_history="updates").fit(X, Y)
    records = trace_table(clf).to_records()
    assert len(records) == 1 + int(clf.alpha_.sum())
    assert all(r["sample"] is not None for r in records[1:])


def test_updates_equal_true_for_rules_that_update_once_per_iteration():
    kwargs = {"learning_rate": 0.9, "b0": 1.0}
    by_iteration = HoKashyapClassifier(**kwargs, record_history=True).fit(X, Y)
    by_update = HoKashyapClassifier(**kwargs, record_history="updates").fit(X, Y)
    assert str(trace_table(by_update)) == str(trace_table(by_iteration))


@pytest.mark.parametrize("name", ["perceptron", "kernel_perceptron", "lms"])
def test_shuffling_estimators_are_reproducible_by_default(name):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(40, 3))
    labels = (data[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    assert make_classifier(name).get_params()["random_state"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = make_classifier(name, max_iter=3).fit(data, labels).decision_function(data)
        second = make_classifier(name, max_iter=3).fit(data, labels).decision_function(data)
    np.testing.assert_array_equal(first, second)


def test_positive_class_labels_is_the_python_side_of_the_positive_option(capsys, tmp_path):
    assert positive_class_labels(Y, "A").tolist() == [1, 1, 1, -1, -1, -1]
    assert positive_class_labels([1, 2, 2], "2").tolist() == [-1, 1, 1]
    with pytest.raises(ValueError, match="not a label"):
        positive_class_labels(Y, "C")
    data = tmp_path / "lecture.csv"
    data.write_text("x1,x2,class\n" + "".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, Y)))
    assert main(["trace", "perceptron", str(data), "--param", "shuffle=false", "--positive", "A"]) == 0
    printed = capsys.readouterr().out.splitlines()
    clf = PerceptronClassifier(shuffle=False, record_history="updates").fit(X, positive_class_labels(Y, "A"))
    table = str(trace_table(clf)).splitlines()
    assert printed[:len(table)] == table and printed[0].split() == ["k", "a(k)", "=", "[w0,", "w]", "sample", "pass"]
    assert len(table) == 1 + len(_perceptron_updates(X, np.where(Y == "A", 1, -1)))


def test_command_line_trace_shows_one_row_per_update(capsys, tmp_path):
    data = tmp_path / "lecture.csv"
    data.write_text("x1,x2,class\n" + "".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, Y)))
    assert main(["trace", "perceptron", str(data), "--param", "shuffle=false"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # without --positive: the first label, "A" (no label 1), as the lecture's class 1 — and the output says so
    expected = _perceptron_updates(X, np.where(Y == "A", 1, -1))
    assert len(lines) == 1 + len(expected) + 2  # header, a row per update (and the start), summary, positive class
    assert [int(line.split()[0]) for line in lines[1:-2]] == list(range(len(expected)))
    assert f"{len(expected) - 1} updates" in lines[-2] and lines[-1].startswith("positive class (+1): A")


def test_thinned_update_trace_keeps_the_last_update():
    from linsep._core.trace import TraceRecorder

    recorder = TraceRecorder(per_update=True, budget_bytes=600)  # a few rows of 3 weights: thinned early
    recorder.record(0, weights=np.zeros(3), sample=-1, **{"pass": 0})
    for update in range(1, 41):
        recorder.record_update(weights=np.full(3, update), sample=update % 6, **{"pass": 1 + update // 6})
    trace = recorder.as_dict()
    assert recorder.stride > 1 and trace["iteration"][-1] == 40 and trace["weights"][-1].tolist() == [40.0] * 3
    assert np.all(np.diff(trace["iteration"]) > 0)
