"""trace_table and the plots refuse bad indices and mismatched data with one clear ValueError."""

import warnings

import numpy as np
import pytest

from linsep import check_separability, make_classifier
from linsep.inspection import (
    get_trace,
    plot_separability,
    plot_trace,
    plot_validation_curve,
    trace_table,
)

RNG = np.random.default_rng(0)
X3 = np.r_[RNG.normal(0, 1, (10, 2)), RNG.normal(3, 1, (10, 2)), RNG.normal([0, 5], 1, (10, 2))]
Y3 = np.repeat([0, 1, 2], 10)


def _fit(name, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_classifier(name, record_history=True, **params).fit(X, y)


@pytest.fixture(scope="module")
def one_vs_rest():
    return _fit("hk", X3, Y3)


@pytest.mark.parametrize("problem", [3, -1, 1.5, True])
def test_trace_table_problem_out_of_range(one_vs_rest, problem):
    with pytest.raises(ValueError, match="not a class index .* for the classes \\[0, 1, 2\\]"):
        trace_table(one_vs_rest, problem=problem)


def test_problem_of_a_two_class_fit():
    with pytest.raises(ValueError, match="one-vs-rest fits only"):
        get_trace(_fit("hk", X3[:20], Y3[:20]), problem=1)


def test_multiclass_mse_traces_each_class_of_its_linear_machine():
    clf = _fit("mse", X3, Y3)
    assert isinstance(clf.history_, list) and len(clf.history_) == 3
    A = np.c_[X3, np.ones(len(X3))]
    W = np.c_[clf.coef_, clf.intercept_].T  # (d + 1, K)
    B = (Y3[:, None] == clf.classes_).astype(float)  # the lecture's indicator right-hand side
    for k, history in enumerate(clf.history_):
        np.testing.assert_allclose(history["weights"][-1], W[:, k], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(history["error_vector"][-1], A @ W[:, k] - B[:, k], atol=1e-10)
        assert len(trace_table(clf, problem=k)) == 1
    total = sum(h["criterion"][-1] for h in clf.history_)  # the machine's ‖AW − B‖²
    np.testing.assert_allclose(total, np.sum((A @ W - B) ** 2), rtol=1e-10)
    assert len(trace_table(_fit("mse", X3[:20], Y3[:20]))) == 1  # two classes: the one solve's row


def test_no_trace_names_record_history():
    with pytest.raises(ValueError, match="record_history=True"):
        trace_table(make_classifier("mse").fit(X3, Y3))


def test_plots_refuse_bad_indices_and_mismatched_rows(one_vs_rest):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    with pytest.raises(ValueError, match="class_index=5 is not a class index"):
        plot_trace(one_vs_rest, X3, Y3, class_index=5)
    two = _fit("hkes", X3[:20], Y3[:20], random_state=0)
    with pytest.raises(ValueError, match="non-empty list"):
        plot_trace(two, X3[:20], Y3[:20], iterations=[])
    with pytest.raises(ValueError, match="20 rows and y 10 labels"):
        plot_trace(two, X3[:20], Y3[:10])
    with pytest.raises(ValueError, match="class_index=7 is not a class index"):
        plot_validation_curve(_fit("hkes", X3, Y3, random_state=0), class_index=7)
    xor = check_separability([[0, 0], [1, 1], [0, 1], [1, 0]], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="proof weighs the 4 rows"):
        plot_separability(xor, X3[:5], Y3[:5])
    with pytest.raises(ValueError, match="one two-class verdict"):
        plot_separability(check_separability(X3, Y3), X3, Y3)


def test_one_vs_rest_verdict_is_drawn_with_the_users_labels():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    labels = np.array(["red", "green", "blue"])[Y3]
    verdict = check_separability(X3, labels).one_vs_rest["green"]
    display = plot_separability(verdict, X3, labels)
    legend = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    assert "class green" in legend and "class rest" in legend


def test_trace_plot_legend_shows_the_users_labels():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    labels = np.array(["setosa", "virginica"])[Y3[:20]]
    display = plot_trace(_fit("batch_perceptron", X3[:20], labels), X3[:20], labels)
    texts = [t.get_text() for ax in display.figure_.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert "class setosa" in texts and "class virginica" in texts and "class -1" not in texts
