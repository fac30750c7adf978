"""Displays of linsep.inspection: what they draw is what the fit and the verdict say."""

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from linsep import HoKashyapClassifier, HoKashyapClassifierCV, check_separability, make_classifier  # noqa: E402
from linsep.inspection import (SeparabilityDisplay, TraceDisplay, ValidationErrorDisplay,  # noqa: E402
                               plot_separability, plot_trace, plot_validation_curve)

X4 = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
Y4 = np.array([1, 1, -1, -1])


@pytest.fixture(autouse=True)
def _no_show(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a display called plt.show()")
    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")


def fitted_with_trace(weights, iterations, **scalars):
    """An HK fit whose history_ is replaced by a hand-made trace in the agreed format."""
    est = HoKashyapClassifier().fit(X4, Y4)
    est.history_ = {"iteration": np.asarray(iterations), "weights": np.asarray(weights, dtype=float), **scalars}
    return est


def on_line(line, w, b):
    x, y = line.get_xdata(), line.get_ydata()
    return np.allclose(w[0] * np.asarray(x) + w[1] * np.asarray(y) + b, 0, atol=1e-9)


def test_trace_draws_the_requested_hyperplanes_and_curves():
    # lines through the data's box (x1 in [0, 6], x2 in [7, 10]), but for k = 2
    W = np.array([[1.0, 1.0, -14.0], [1.0, 1.0, 100.0], [0.5, -3.0, 26.0], [-1.0, 0.2, 3.0]])
    est = fitted_with_trace(W, [1, 2, 3, 4], criterion=np.array([4.0, 2.0, 1.0, 0.5]),
                            training_errors=np.array([2, 1, 1, 0]))
    disp = plot_trace(est, X4, Y4, iterations=[1, 3])
    assert isinstance(disp, TraceDisplay)
    iterate_lines = [ln for ln in disp.lines_ if ln.get_label().startswith("k = ")]
    assert [ln.get_label() for ln in iterate_lines] == ["k = 1", "k = 3"]
    assert plot_trace(est, X4, Y4, iterations=[2]).lines_[0].get_label() == "k = 2 (out of view)"
    assert on_line(iterate_lines[0], W[0, :2], W[0, 2]) and on_line(iterate_lines[1], W[2, :2], W[2, 2])
    fitted = [ln for ln in disp.lines_ if ln.get_label() == "fitted"][0]
    assert on_line(fitted, est.coef_[0], est.intercept_[0])
    assert len(disp.ax_) == 3   # data, criterion, errors
    crit = disp.ax_[1].get_lines()[0]
    np.testing.assert_array_equal(crit.get_xdata(), [1, 2, 3, 4])
    np.testing.assert_array_equal(crit.get_ydata(), [4.0, 2.0, 1.0, 0.5])
    assert disp.figure_ is disp.ax_[0].figure


def test_trace_default_rows_keep_first_and_last_and_draw_on_given_axes():
    W = np.c_[np.linspace(1, 2, 50), -np.ones(50), np.zeros(50)]
    est = fitted_with_trace(W, np.arange(50))
    fig, axes = plt.subplots(1, 2)
    disp = TraceDisplay.from_estimator(est, X4, Y4, n_lines=5, ax=axes)
    labels = [ln.get_label().split(" (")[0] for ln in disp.lines_ if ln.get_label().startswith("k = ")]
    assert labels[0] == "k = 0" and labels[-1] == "k = 49" and len(labels) <= 5
    assert disp.figure_ is fig


def test_trace_refuses_what_it_cannot_draw():
    est = HoKashyapClassifier().fit(X4, Y4)
    with pytest.raises(ValueError, match="record_history"):
        plot_trace(est, X4, Y4)
    est.history_ = {"criterion": np.ones(3)}
    with pytest.raises(ValueError, match="weights"):
        plot_trace(est, X4, Y4)
    est = fitted_with_trace(np.ones((2, 3)), [1, 2])
    with pytest.raises(ValueError, match="not recorded"):
        plot_trace(est, X4, Y4, iterations=[7])
    with pytest.raises(ValueError, match="two-dimensional"):
        TraceDisplay(weights=np.ones((1, 3)), iterations=[1], X=np.ones((4, 3)), y=Y4, curves={})
    est.history_ = [est.history_, est.history_]
    with pytest.raises(ValueError, match="class_index"):
        plot_trace(est, X4, Y4)


def test_validation_curve_is_the_recorded_error_with_the_kept_iterate():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + rng.normal(scale=1.0, size=150) > 0).astype(int)
    hkes = make_classifier("hkes", random_state=0).fit(X, y)
    disp = plot_validation_curve(hkes, n_train=100)
    assert isinstance(disp, ValidationErrorDisplay)
    ge = hkes.history_["validation_error"]
    np.testing.assert_allclose(disp.line_.get_ydata(), 100 * ge)
    np.testing.assert_array_equal(disp.line_.get_xdata(), np.arange(1, len(ge) + 1))
    kept = [ln for ln in disp.ax_.get_lines() if "kept" in ln.get_label()][0]
    assert kept.get_xdata()[0] == hkes.best_iter_
    # the kept iterate is the first minimum of the curve (history index k̂ - 1)
    assert hkes.best_iter_ - 1 == int(np.argmin(ge))
    with pytest.raises(ValueError, match="validation_error"):
        plot_validation_curve(HoKashyapClassifier(record_history=True).fit(X, y))


def test_separability_display_draws_the_certified_hyperplane_and_its_margin():
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal([-2, 0], 0.5, (20, 2)), rng.normal([2, 0], 0.5, (20, 2))]
    y = np.repeat([0, 1], 20)
    verdict = check_separability(X, y)
    assert verdict.separable
    disp = plot_separability(verdict, X, y)
    assert isinstance(disp, SeparabilityDisplay)
    c = verdict.certificate
    lines = {ln.get_label(): ln for ln in disp.ax_.get_lines()}
    assert on_line(lines["certified hyperplane"], c.coef, c.intercept)
    # the margin lines lie at geometric distance `margin` on either side
    offsets = []
    for ln in disp.ax_.get_lines()[1:]:
        pts = np.c_[ln.get_xdata(), ln.get_ydata()]
        offsets.append(np.unique(np.round((pts @ c.coef + c.intercept) / np.linalg.norm(c.coef), 9)))
    np.testing.assert_allclose(sorted(float(o[0]) for o in offsets), [-c.margin, c.margin])
    assert disp.common_point_ is None


def test_separability_display_shows_the_points_carrying_the_proof():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [3.0, 3.0]])
    y = np.array([1, 1, 0, 0, 1])
    verdict = check_separability(X, y)
    assert not verdict.separable
    disp = SeparabilityDisplay.from_verdict(verdict, X, y)
    u = verdict.certificate.u
    pos, neg = (y == verdict.classes[1]) & (u > 0), (y == verdict.classes[0]) & (u > 0)
    # Σ u_i y_i (x_i, 1) = 0: the u-weighted means of the two classes' carriers coincide
    np.testing.assert_allclose(disp.common_point_, u[pos] @ X[pos] / u[pos].sum(), atol=1e-9)
    np.testing.assert_allclose(disp.common_point_, u[neg] @ X[neg] / u[neg].sum(), atol=1e-9)
    carriers = [c for c in disp.ax_.collections if "carriers" in c.get_label()][0]
    assert len(carriers.get_offsets()) == np.count_nonzero(u > 0)


def test_separability_display_of_an_undecided_verdict_draws_the_data_only():
    from linsep.separability import SeparabilityResult

    undecided = SeparabilityResult(separable=None, certificate=None, method="linear_programming",
                                   classes=np.array([0, 1]), n_iter=1000)
    X = np.array([[0.0, 0.0], [1.0, 1.0]])
    disp = plot_separability(undecided, X, [0, 1])
    assert disp.common_point_ is None and not disp.ax_.get_lines()
    assert disp.ax_.get_title().startswith("undecided")


def test_cli_trace_plot_writes_the_figure_or_says_why_not(tmp_path, capsys):
    from linsep.cli import main

    data = tmp_path / "lecture.csv"
    data.write_text("x1,x2,y\n6,9,1\n5,7,1\n5,9,2\n0,10,2\n")
    out = tmp_path / "trace.png"
    assert main(["trace", "hk", str(data), "--param", "learning_rate=0.9", "--init-weights", "1,1,1",
                 "--b0", "1", "--positive", "1", "--steps", "2", "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["trace", "kernel_perceptron", str(data), "--plot", str(tmp_path / "k.png")]) == 2
    assert "--plot" in capsys.readouterr().err


def test_cli_trace_plot_draws_the_chosen_one_vs_rest_problem(tmp_path):
    from linsep.cli import main
    from linsep.inspection import plot_trace

    data = tmp_path / "three.csv"
    data.write_text("x1,x2,y\n0,0,a\n0,1,a\n3,0,b\n3,1,b\n0,5,c\n1,5,c\n")
    drawn = []
    from linsep._core.plan import forced_plan

    with forced_plan(plot_trace=lambda *a, **k: drawn.append(k) or plot_trace(*a, **k)):  # observes the CLI's call
        assert main(["trace", "hk", str(data), "--class", "b", "--plot", str(tmp_path / "b.png")]) == 0
    assert drawn == [{"class_index": 1}] and (tmp_path / "b.png").exists()


def test_cv_surface_plot(noisy):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from linsep.inspection import plot_cv_surface

    X, y = noisy
    display = plot_cv_surface(HoKashyapClassifierCV(Cs=[None, 1.0], random_state=0).fit(X, y))
    assert len(display.lines_) == 2
    matplotlib.pyplot.close(display.figure_)
