"""The playground's logic without a browser: presets, traced fits, certificates, exports, the Bokeh document."""

import io
import subprocess
import sys

import numpy as np
import pytest

import linsep
from linsep.playground import PRESETS, fit_run, method_parameters, points_csv, preset_points
from linsep.playground.exports import animation_gif, figure_bytes, frame_positions, trace_csv, trace_latex
from linsep.playground.session import (DEFAULT_SEED, accepts_start, is_randomised, method_label, parse_value,
                                      parse_vector, runnable_methods, why_not_runnable)

LECTURE_PARAMS = {"learning_rate": "0.9", "b0": "1"}


@pytest.fixture(scope="module")
def lecture():
    X, y = preset_points("lecture")
    return fit_run(X, y, "hk", LECTURE_PARAMS, start=[1, 1, 1])


def test_lecture_rows_and_verdict(lecture):
    assert len(lecture) == 104
    assert lecture.row(1)["b"] == ("b(k)", "[28, 22.6, 1, 1]")
    assert lecture.records[1]["a"] == pytest.approx((34.5942, 2.6759, -3.7883), abs=1e-4)
    assert lecture.row(0)["a"][1] == "[1, 1, 1]"                      # a(1) = the starting weights
    assert lecture.verdict() == "separable at k = 104: every point strictly on its side"
    cert = lecture.certificate()
    assert cert["kind"] == "hyperplane" and cert["margin"] > 0
    assert len(lecture.misclassified(103)) == 0 and len(lecture.misclassified(1)) == 1
    assert "separating hyperplane" in lecture.certificate_text()


def test_xor_proof():
    X, y = preset_points("xor")
    run = fit_run(X, y, "hk", {})
    assert run.status == linsep.NOT_SEPARABLE
    cert = run.certificate()
    assert cert["kind"] == "proof" and list(cert["rows"]) == [0, 1, 2, 3]
    assert (cert["u"] >= 0).all() and np.abs(cert["residual"]).max() <= 1e-9 * cert["u"].max()
    assert "u1 = 1, u2 = 1, u3 = 1, u4 = 1" in run.certificate_text()


def test_sk_nearest_hull_points():
    X, y = preset_points("perceptron")
    run = fit_run(X, y, "sk", {})
    p, q = run.certificate()["hull_points"]
    # the maximal margin is half the distance of the nearest hull points; SK's margin is at most that
    assert run.certificate()["margin"] <= np.linalg.norm(p - q) / 2 + 1e-9
    assert np.linalg.norm(p - q) / 2 == pytest.approx(run.estimator.margin_upper_bound_, rel=0.05)


def test_perceptron_exercise():
    X, y = preset_points("perceptron")
    preset = PRESETS["perceptron"]
    run = fit_run(X, y, preset.method, preset.params, preset.start)
    assert run.status == linsep.SEPARABLE and len(run) > 10


@pytest.mark.parametrize("method", linsep.available_classifiers())
def test_every_method_runs_on_a_projected_ida_set(method):
    X, y = preset_points("thyroid")
    assert X.shape == (60, 2) and set(y.tolist()) == {-1, 1}
    run = fit_run(X, y, method, {"max_iter": "200"} if "max_iter" in method_parameters(method) else {})
    assert len(run) >= 1
    for i in (0, len(run) - 1):
        grid = run.grid(i, (-3, 3), (-3, 3), size=20)
        assert grid.shape == (20, 20) and np.isfinite(grid).all()
        assert set(run.row(i)) >= {"k"}
    # the last row is the returned model, also where it is an earlier iterate (early stopping's k̂, the pocket)
    assert np.allclose(run.decision(len(run) - 1, X), run.estimator.decision_function(X), atol=1e-8)
    run.certificate_text()


@pytest.mark.parametrize("method", ["kozinec", "hkes"])
def test_the_last_step_is_the_returned_model(method):
    # thyroid: Kozinec's hulls touch (it returns its pocket), HKES keeps k̂ (the default seed) before its final iterate
    X, y = preset_points("thyroid")
    run = fit_run(X, y, method)
    estimator, last = run.estimator, len(run) - 1
    assert run.returned(last) and not any(run.returned(i) for i in range(last))
    w, w0 = run.weights(last)
    np.testing.assert_allclose(np.r_[w, w0], np.r_[estimator.coef_.ravel(), estimator.intercept_], rtol=1e-12)
    # the ringed points are the model's training errors, the last row's count
    assert len(run.misclassified(last)) == run.records[last]["training_errors"]
    assert len(run.misclassified(last)) == np.count_nonzero(estimator.predict(X) != y)
    assert run.row(last)["note"][1].startswith("returned")
    assert f"k = {estimator.n_iter_}" in run.verdict()  # the verdict's k: the final iterate, not the returned one
    assert "returned" in trace_csv(run).splitlines()[-1]


def test_parameters_and_starting_weights():
    assert "margin" in method_parameters("lms") and "kernel" in method_parameters("kernel_hk")
    assert {"learning_rate", "b0", "C", "max_iter"} <= set(method_parameters("hk"))
    assert accepts_start("hk") and not accepts_start("kernel_hk")
    X, y = preset_points("lecture")
    run = fit_run(X, y, "kernel_hk", {"kernel": "poly", "degree": "2", "gamma": "1"})
    assert run.kernel and run.estimator.degree == 2 and run.estimator.kernel == "poly"
    run = fit_run(X, y, "perceptron", {"shuffle": "False", "learning_rate": "1", "margin": "0.5"})
    assert run.estimator.shuffle is False and run.estimator.margin == 0.5
    with pytest.raises(ValueError, match="both classes"):
        fit_run(X[:2], y[:2], "hk", {})
    assert parse_value("") is None and parse_value("0.9") == 0.9 and parse_value("10") == 10
    assert parse_value("scale") == "scale" and parse_value("False") is False
    assert parse_vector("[1, 1, 1]", 3) == [1, 1, 1] and parse_vector(" ") is None
    with pytest.raises(ValueError, match="3 numbers"):
        parse_vector("1 2", 3)


def test_exports(lecture, tmp_path):
    X, y = preset_points("lecture")
    text = trace_csv(lecture)
    lines = text.splitlines()
    assert lines[0] == "k,a0,a1,a2,b1,b2,b3,b4,e1,e2,e3,e4,J,errors" and len(lines) == 105
    assert lines[2].startswith("2,34.59") and ",28,22.6,1,1," in lines[2]
    latex = trace_latex(lecture)
    assert latex.startswith(r"\begin{longtable}") and r"$[28, 22.6, 1, 1]$" in latex and latex.count(r"\\") == 105
    png = figure_bytes(lecture, 103, X, y, (-1, 11), (-1, 11), fmt="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    svg = figure_bytes(lecture, 1, X, y, (-1, 11), (-1, 11), fmt="svg")
    assert b"<svg" in svg[:400]
    assert len(frame_positions(104, 12)) == 12 and frame_positions(5) == [0, 1, 2, 3, 4]
    from PIL import Image

    gif = Image.open(io.BytesIO(animation_gif(lecture, X, y, (-1, 11), (-1, 11), max_frames=12, dpi=40)))
    assert gif.format == "GIF" and gif.n_frames == 12


def test_points_csv_is_read_by_linsep_fit(tmp_path):
    X, y = preset_points("lecture")
    path = tmp_path / "points.csv"
    path.write_text(points_csv(X, y))
    from linsep.cli import main

    assert main(["fit", "hk", str(path), "-o", str(tmp_path / "model.npz")]) == 0
    assert (linsep.load(tmp_path / "model.npz").predict(X) == y).all()


def test_document_without_a_browser():
    """The page's state machine, driven as the browser would drive it."""
    pytest.importorskip("bokeh")
    from bokeh.document import Document

    from linsep.playground import make_document

    page = make_document(Document())
    X, y = preset_points("lecture")
    page.points.data = {"x": X[:, 0].tolist(), "y": X[:, 1].tolist(), "cls": ["+1", "+1", "-1", "-1"]}
    page.params["learning_rate"].value = "0.9"
    page.params["b0"].value = "1"
    page.start.value = "1, 1, 1"
    page.step_forward()
    page.step_forward()
    assert "[28, 22.6, 1, 1]" in page.table.text and page.slider.value == 2
    assert len(page.line.data["x0"]) == 1 and len(page.wrong.data["x"]) == 1
    page.go(10**12)
    assert "separable at k = 104" in page.verdict.text and len(page.margins.data["x0"]) == 2
    page.scrubbed(50)
    # a middle row of a finished fit: the box says where the page is, never "running"
    assert page.pos == 49 and "paused at row 50 of 104" in page.verdict.text and "running" not in page.verdict.text
    page.toggle_play()                                                 # play from row 50 …
    assert page.play.label == "pause" and page._timer is not None
    page._tick()
    assert page.pos == 50 and "playing at row 51 of 104" in page.verdict.text
    page.toggle_play()                                                 # … and pause
    assert page.play.label == "play" and page._timer is None and "paused at row 51" in page.verdict.text
    page.go(-1)
    assert page.table.text == "" and page.regions.data["image"] == [] and "shown before row 1" in page.verdict.text
    page.export("trace_csv")
    assert page.download.data["name"] == ["hk_trace.csv"]
    page.params["learning_rate"].value = "0.5"                         # a change of settings: fit again
    assert page.run is None
    page.load_preset("xor")
    assert page.method.value == "hk" and len(page.points.data["x"]) == 4
    page.go(10**12)
    assert "not separable" in page.verdict.text and len(page.proof.data["x"]) == 4
    page.method.value = "kernel_hk"
    assert page.params["kernel"].visible and not page.start.visible and not page.params["schedule"].visible
    page.go(10**12)
    assert "kernel decision regions" in page.certificate.text
    page.method.value = "hkes_cv"                                      # 4 points, 5 folds: said on the page
    assert "cannot run on these points: cv=5 folds" in page.message.text
    page.step_forward()
    assert "folds" in page.message.text and page.run is None
    page.points.selected.indices = [0]
    page.delete_selected()
    assert len(page.points.data["x"]) == 3


def test_runnable_methods_follow_the_estimators_own_rules():
    """Four points: the 5-fold methods cannot run (the folds' own message); two points: nor can early stopping."""
    X, y = preset_points("lecture")
    reasons = runnable_methods(X, y)
    assert list(reasons) == list(linsep.available_classifiers())
    blocked = {name for name, reason in reasons.items() if reason}
    assert blocked == {"hkes_cv", "hkes_cv_c", "hkesa_cv", "kernel_hkes_cv"}
    assert reasons["hkes_cv"] == "cv=5 folds need at least 5 samples, got 4"
    for name in blocked:                                              # the reason is the error fit_run would raise
        with pytest.raises(ValueError, match="folds need at least 5 samples"):
            fit_run(X, y, name, {})
    assert why_not_runnable("hkes", X[1:3], y[1:3]).startswith("early stopping needs a validation set")
    assert why_not_runnable("hk", X[1:3], y[1:3]) is None
    X6 = np.r_[X, [[1.0, 1.0], [2.0, 9.0]]]                            # six points: every method runs
    assert not any(runnable_methods(X6, np.r_[y, -1, 1]).values())


def test_hkes_gives_the_same_run_twice_and_the_seed_changes_it():
    """The page's default seed makes every randomised fit reproducible; another seed may split otherwise."""
    assert DEFAULT_SEED == 0
    assert {"random_state"} <= set(method_parameters("hkes")) and "random_state" not in method_parameters("hk")
    assert is_randomised("hkes_cv") and is_randomised("perceptron") and not is_randomised("mhks")
    X, y = preset_points("thyroid")
    first, again = fit_run(X, y, "hkes", {}), fit_run(X, y, "hkes", {})
    assert first.estimator.random_state == DEFAULT_SEED
    assert first.verdict() == again.verdict() and len(first) == len(again)
    assert fit_run(X, y, "hkes", {"random_state": "0"}).verdict() == first.verdict()
    others = {fit_run(X, y, "hkes", {"random_state": str(seed)}).verdict() for seed in (1, 2, 3)}
    assert others - {first.verdict()}                                  # some other split gives another k̂
    with pytest.raises(ValueError, match="whole number"):
        fit_run(X, y, "hkes", {"random_state": "1.5"})


def test_methods_are_named_in_words_with_their_code():
    assert method_label("hk") == "Ho–Kashyap (hk)"
    assert method_label("kernel_hkes_cv") == ("kernel Ho–Kashyap with early stopping by cross-validation "
                                              "(kernel_hkes_cv)")


def test_proof_labels_clear_their_rings():
    """XOR's labels sit outside the rings they name, their text running away from the ring."""
    pytest.importorskip("bokeh")
    from linsep.playground.app import proof_labels

    X, _ = preset_points("xor")
    sizes = [46.0, 46.0, 46.0, 46.0]
    placed = proof_labels(X, range(4), sizes)
    for i, size in enumerate(sizes):
        dx, dy = placed["dx"][i], placed["dy"][i]
        assert np.hypot(dx, dy) > size / 2 + 1.5                       # beyond the ring's radius and half its line
        # the text extends away from the point: left-aligned to the right of it, bottom-aligned above it
        assert (placed["align"][i] == "left") == (dx > 0)
        assert (placed["baseline"][i] == "bottom") == (dy < 0)
        assert min(abs(dx), abs(dy)) > 0                               # never across the ring's centre line


def test_import_linsep_does_not_import_the_playground():
    code = "import sys, linsep; assert 'bokeh' not in sys.modules and 'linsep.playground' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_server_serves_loopback_only():
    pytest.importorskip("bokeh")
    from linsep.playground.server import make_server, serve

    server = make_server(port=0)
    try:
        assert server.port > 0 and server.address == "127.0.0.1"
    finally:
        server.stop() if hasattr(server, "_started") and server._started else None
    with pytest.raises(ValueError, match="loopback"):
        serve(port=0, host="0.0.0.0", open_browser=False)


def test_cli_subcommand():
    from linsep.cli import build_parser

    args = build_parser().parse_args(["playground", "--port", "0", "--no-browser"])
    assert (args.port, args.host, args.browser, args.func.__name__) == (0, "127.0.0.1", False, "_cmd_playground")
    from linsep.cli import main

    assert main(["playground", "--port", "0", "--no-browser", "--host", "192.0.2.1"]) == 2   # loopback only


def test_docs_page_examples():
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "playground.rst"
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0
    static = page.parents[1] / "_static" / "playground"
    for image in ("playground_lecture.png", "playground_xor.png", "playground_kernel.png",
                  "playground_800x600.png", "playground_1280x800.png", "playground_1920x1080.png"):
        assert f"../_static/playground/{image}" in page.read_text()
        assert 10_000 < (static / image).stat().st_size < 150_000      # small enough to ship in the repository
