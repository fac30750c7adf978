"""The playground in a real headless Chromium: clicks on the canvas, the lecture's numbers, XOR's proof.

Every request the page makes (scripts, style sheets, the websocket) must go to
the loopback address.  With ``LINSEP_SCREENSHOTS=DIR`` the tests also save
their screenshots there (the docs' images are made with
``LINSEP_SCREENSHOTS=docs/user_guide/images``).
"""

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from linsep.playground import PRESETS

LECTURE = [((6, 9), "+1"), ((5, 7), "+1"), ((5, 9), "-1"), ((0, 10), "-1")]


def numbers(text):
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text.replace("−", "-"))]


def only_loopback(requests):
    assert requests, "the page made no request at all"
    outside = [url for url in requests if urlsplit(url).hostname != "127.0.0.1"]
    assert not outside, f"requests outside 127.0.0.1: {outside}"


def screenshot(page, name, tmp_path):
    folder = Path(os.environ.get("LINSEP_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    page.page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path


def add_points(page, points):
    before = len(page.source("points")["x"])
    for n, ((x, y), cls) in enumerate(points, start=before + 1):
        page.locator(".ls-class button").nth(0 if cls == "+1" else 1).click()
        page.page.wait_for_timeout(400)  # two taps within 300 ms are one double tap to BokehJS
        page.click_point(x, y)
        page.wait_points(n)
    page.wait_text("#ls-message", f"{len(points)} point(s)")


def test_lecture_by_clicking(page, tmp_path):
    """The lecture's four points clicked in, HK with a(1) = [1, 1, 1], b = 1, η = 0.9: b(2), a(2), k = 104."""
    add_points(page, LECTURE)
    data = page.source("points")
    assert sorted(zip(data["x"], data["y"], data["cls"])) == sorted((x, y, c) for (x, y), c in LECTURE)  # snapped
    page.choose("ls-method", "hk")
    page.set_text("ls-learning-rate", "0.9")
    page.set_text("ls-b0", "1")
    page.set_text("ls-start", "1, 1, 1")
    page.press("ls-step")
    page.wait_text("#ls-k", "1")
    page.press("ls-step")
    page.wait_text("#ls-k", "2")
    assert page.text("#ls-b") == "[28, 22.6, 1, 1]"
    assert numbers(page.text("#ls-a")) == pytest.approx([34.6, 2.68, -3.79], rel=2e-3)
    assert page.text("#ls-training_errors") == "1"
    assert len(page.source("line")["x0"]) == 1                      # the hyperplane a(2) is drawn
    page.press("ls-end")
    verdict = page.wait_text("#ls-verdict", "separable at k = 104")
    assert "not" not in verdict
    assert "separating hyperplane" in page.text("#ls-certificate")
    assert page.source("wrong")["x"] == []                           # no point on the wrong side
    screenshot(page, "playground_lecture.png", tmp_path)
    page.press("ls-rewind")                                          # rewind, then scrub back by the slider
    page.wait_text("#ls-message", "rows recorded")
    only_loopback(page.requests)


def test_xor_not_separable_with_proof(page, tmp_path):
    """XOR's preset: HK says "not separable" and the proof u is drawn on the four points that carry it."""
    page.choose("ls-preset", PRESETS["xor"].title)
    page.wait_text("#ls-message", "4 point(s)")
    page.press("ls-end")
    page.wait_text("#ls-verdict", "not separable")
    certificate = page.text("#ls-certificate")
    assert "proof of non-separability" in certificate
    assert all(f"u{i} = 1" in certificate for i in range(1, 5))
    proof = page.source("proof")
    assert len(proof["x"]) == 4 and proof["label"][0].startswith("u1=")
    screenshot(page, "playground_xor.png", tmp_path)
    only_loopback(page.requests)


# The points' x column in the page: a ColumnDataSource's data is a Map in newer BokehJS (3.9), a plain object in 3.4
# (the playground's own callbacks read both alike)
POINTS_X = ("(d => (d instanceof Map ? d.get('x') : d['x']))"
            "(Bokeh.documents[0].get_model_by_name('points').data)")


def test_edit_points_kernel_and_export(page, tmp_path):
    """Drag and delete a point; a kernel method's regions on XOR; the points CSV comes back as a download."""
    add_points(page, [((2, 2), "+1"), ((8, 8), "-1")])
    start = page.to_screen(2, 2)
    end = page.to_screen(4, 3)
    page.page.mouse.move(*start)
    page.page.mouse.down()
    page.page.mouse.move(*end, steps=5)
    page.page.mouse.up()
    page.page.wait_for_function(f"() => {POINTS_X}[0] > 3")
    # Select the other point, then Backspace deletes it.  A tap within BokehJS's double-tap window of the drag,
    # on a loaded machine, may not select: tap again (at most three times) until one point is left.
    page.page.wait_for_timeout(400)
    for _ in range(3):
        page.click_point(8, 8)
        page.page.keyboard.press("Backspace")
        try:
            page.page.wait_for_function(
                f"() => {POINTS_X}.length == 1", timeout=5000)
            break
        except Exception:
            page.page.wait_for_timeout(400)
    page.wait_text("#ls-message", "1 point(s)")

    page.choose("ls-preset", PRESETS["xor"].title)
    page.wait_text("#ls-message", "4 point(s)")
    page.choose("ls-method", "kernel_hk")
    page.locator(".ls-kernel select").wait_for()
    page.choose("ls-kernel", "rbf")
    page.set_text("ls-gamma", "2")
    page.press("ls-end")
    page.wait_text("#ls-certificate", "kernel decision regions: 0 training point(s)")
    assert len(page.source("regions")["image"]) == 1
    screenshot(page, "playground_kernel.png", tmp_path)

    with page.page.expect_download() as download:
        page.press("ls-export-points_csv")
    text = Path(download.value.path()).read_text()
    assert text.splitlines()[0] == "x1,x2,y" and len(text.splitlines()) == 5
    only_loopback(page.requests)
