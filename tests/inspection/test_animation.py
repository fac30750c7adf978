"""Animations of traces: one frame per shown iteration, the hyperplane of that iteration, GIF files, the CLI."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation, writers  # noqa: E402
from PIL import Image  # noqa: E402

from linsep import HoKashyapClassifier, KernelPerceptronClassifier, PerceptronClassifier  # noqa: E402
from linsep.cli import main  # noqa: E402
from linsep.inspection import animate_trace, frame_rows, plot_trace  # noqa: E402

X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
Y12 = np.array([1, 1, 2, 2])


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def lecture():
    clf = HoKashyapClassifier(pos_label=1, learning_rate=0.9, b0=1.0, record_history=True)
    return clf.fit(X, Y12, coef_init=[1, 1], intercept_init=1)


def test_frame_rows_keep_first_and_last():
    assert frame_rows(5) == [0, 1, 2, 3, 4]
    rows = frame_rows(104, 12)
    assert len(rows) == 12 and rows[0] == 0 and rows[-1] == 103 and rows == sorted(rows)
    with pytest.raises(ValueError, match="max_frames"):
        frame_rows(10, 1)


def test_lecture_animation_draws_each_iterate_and_writes_a_gif(lecture, tmp_path):
    anim = animate_trace(lecture, X, Y12, max_frames=12)
    assert isinstance(anim, FuncAnimation)
    assert len(anim.rows_) == 12 and anim.iterations_[0] == 1 and anim.iterations_[-1] == 104
    path = anim.write(tmp_path / "hk.gif")
    gif = Image.open(path)
    assert gif.format == "GIF" and gif.n_frames == 12      # the held last frame is one longer frame
    # after writing, the last frame shows a(104): its line, no point ringed, the verdict in the title
    w1, w2, w0 = lecture.history_["weights"][-1]
    xs, ys = anim.ax_.lines[0].get_data()
    np.testing.assert_allclose(w1 * np.asarray(xs) + w2 * np.asarray(ys) + w0, 0, atol=1e-9)
    assert "k = 104" in anim.ax_.get_title() and "separable" in anim.ax_.get_title()
    assert len(anim.ax_.collections[0].get_offsets()) == 0
    with pytest.raises(ValueError, match=".gif"):
        anim.write(tmp_path / "hk.png")


def test_notebooks_show_the_player(lecture):
    anim = animate_trace(lecture, X, Y12, max_frames=3, hold=0)
    html = anim._repr_html_()
    assert "<script" in html and "animation" in html.lower()


def test_display_animates_its_estimator_and_kernel_regions(tmp_path):
    clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True).fit(X, Y12)
    anim = plot_trace(clf, X, Y12).animate(max_frames=5)
    assert anim.iterations_ == [1, 2, 3]
    Xx = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    kernel = KernelPerceptronClassifier(kernel="rbf", gamma=2.0, record_history=True).fit(Xx, [0, 0, 1, 1])
    anim = animate_trace(kernel, Xx, [0, 0, 1, 1])
    assert Image.open(anim.write(tmp_path / "xor.gif")).n_frames == len(anim.rows_)
    assert anim.ax_.collections  # the zero level set of the expansion


def test_animation_refusals():
    clf = PerceptronClassifier().fit(X, Y12)
    with pytest.raises(ValueError, match="record_history"):
        animate_trace(clf, X, Y12)
    X3 = np.c_[X, X[:, 0]]
    traced = PerceptronClassifier(record_history=True).fit(X3, Y12)
    with pytest.raises(ValueError, match="two"):
        animate_trace(traced, X3, Y12)


def test_cli_trace_animate(tmp_path, capsys):
    data = tmp_path / "lecture.csv"
    data.write_text("x1,x2,label\n6,9,1\n5,7,1\n5,9,2\n0,10,2\n")
    out = tmp_path / "hk.gif"
    assert main(["trace", "hk", str(data), "--param", "learning_rate=0.9", "--init-weights", "1,1,1", "--b0", "1",
                 "--positive", "1", "--steps", "1", "--animate", str(out), "--frames", "12"]) == 0
    assert f"animation -> {out} (12 frames, k = 1 … 104)" in capsys.readouterr().out
    assert Image.open(out).n_frames == 12
    if not writers.is_available("ffmpeg"):
        assert main(["trace", "hk", str(data), "--animate", str(tmp_path / "hk.mp4")]) == 2
        assert "ffmpeg" in capsys.readouterr().err
    assert main(["trace", "hk", str(data), "--animate", str(tmp_path / "hk.png")]) == 2
    assert ".gif" in capsys.readouterr().err
