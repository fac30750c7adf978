"""The playground in a real headless Chromium: clicks on the canvas, the lecture's numbers, XOR's proof.

Every request the page makes (scripts, style sheets, the websocket) must go to
the loopback address.  With ``LINSEP_SCREENSHOTS=DIR`` the tests also save
their screenshots there (the docs' images are made with
``LINSEP_SCREENSHOTS=docs/_static/playground``), as 128-colour PNGs.

The layout tests open the page at 800 × 600 (a projector), 1280 × 800 and
1920 × 1080 and check that every control a lesson needs is *reachable*: after
at most scrolling the page vertically to it, its bounding box lies inside the
viewport, and the page never has a horizontal scrollbar (its scroll width is
its client width, and it stays scrolled fully left).
"""

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from linsep.playground import PRESETS
from linsep.playground.session import method_label

LECTURE = [((6, 9), "+1"), ((5, 7), "+1"), ((5, 9), "-1"), ((0, 10), "-1")]


def numbers(text):
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text.replace("−", "-"))]


def only_loopback(requests):
    assert requests, "the page made no request at all"
    outside = [url for url in requests if urlsplit(url).hostname != "127.0.0.1"]
    assert not outside, f"requests outside 127.0.0.1: {outside}"


def screenshot(page, name, tmp_path, full_page=False):
    folder = Path(os.environ.get("LINSEP_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    page.page.screenshot(path=str(path), full_page=full_page)
    from PIL import Image

    with Image.open(path) as image:  # a screenshot's few colours in a palette: a third of the bytes
        small = image.convert("RGB").quantize(colors=128)
    small.save(path, optimize=True)
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
    page.choose("ls-method", method_label("hk"))
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
    page.choose("ls-method", method_label("kernel_hk"))
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


# What a lesson needs on screen: the canvas, the step controls and slider, the table row, the verdict and its
# certificate, the six exports.
REACHABLE = [".ls-canvas", ".ls-rewind", ".ls-back", ".ls-step", ".ls-play", ".ls-end", ".ls-slider", ".ls-table",
             ".ls-verdict-box", ".ls-certificate-box", ".ls-export-trace_csv", ".ls-export-trace_tex",
             ".ls-export-png", ".ls-export-svg", ".ls-export-gif", ".ls-export-points_csv"]


def assert_reachable(page, selector):
    """The element is inside the viewport once the page is scrolled vertically to it, and never horizontally."""
    viewport = page.page.viewport_size
    element = page.locator(selector).first
    box = element.bounding_box()
    assert box is not None, f"{selector} is not shown"
    page.page.evaluate("(top) => window.scrollTo(0, Math.max(0, window.scrollY + top - 8))", box["y"])
    page.page.wait_for_timeout(50)
    box = element.bounding_box()
    scroll = page.page.evaluate("() => [window.scrollX, document.documentElement.scrollWidth,"
                                " document.documentElement.clientWidth]")
    assert scroll[0] == 0 and scroll[1] <= scroll[2], f"a horizontal scrollbar: scrollX, widths {scroll}"
    inside = (box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= viewport["width"]
              and box["y"] + box["height"] <= viewport["height"])
    assert inside, f"{selector} at {box} is outside the {viewport['width']} x {viewport['height']} viewport"


@pytest.mark.parametrize("width, height", [(800, 600), (1280, 800), (1920, 1080)])
def test_layout_fits_the_window(open_page, tmp_path, width, height):
    """No horizontal scrollbar, and every control a lesson needs is reachable by vertical scrolling alone."""
    page = open_page(width, height)
    page.choose("ls-preset", PRESETS["lecture"].title)
    page.wait_text("#ls-message", "4 point(s)")
    page.press("ls-end")
    page.wait_text("#ls-verdict", "separable at k = 104")
    page.wait_text("#ls-certificate", "separating hyperplane")
    screenshot(page, f"playground_{width}x{height}.png", tmp_path, full_page=True)  # the whole stacked page
    for selector in REACHABLE:
        assert_reachable(page, selector)
    page.page.evaluate("() => window.scrollTo(0, 0)")


def test_hkes_gives_the_same_verdict_twice(page):
    """The seed field (0 by default) makes HKES's validation split, and so its verdict, the same on every run."""
    page.choose("ls-preset", PRESETS["thyroid"].title)
    page.wait_text("#ls-message", "60 point(s)")
    verdicts = []
    for _ in range(2):                                   # choosing the method again discards the run: a new fit
        page.choose("ls-method", method_label("hk"))
        page.wait_text("#ls-message", "Step ▶ fits Ho–Kashyap (hk)")
        page.choose("ls-method", method_label("hkes"))
        page.wait_text("#ls-message", "Step ▶ fits Ho–Kashyap with early stopping (hkes)")
        assert page.locator(".ls-random-state input").input_value() == "0"
        page.press("ls-end")
        verdicts.append(page.wait_text("#ls-verdict", "early stopping returns"))
    assert verdicts[0] == verdicts[1]
    page.set_text("ls-random-state", "2")                # another split: here another k̂ (the run may differ)
    page.wait_text("#ls-message", "Step ▶ fits")
    page.press("ls-end")
    other = page.wait_text("#ls-verdict", "early stopping returns")
    assert other != verdicts[0]


def test_methods_that_cannot_run_are_greyed_with_the_reason(page):
    """Four points: the 5-fold methods are greyed, the folds' rule as their tooltip; a fifth point frees them."""
    page.choose("ls-preset", PRESETS["xor"].title)
    page.wait_text("#ls-message", "4 point(s)")
    reason = "cannot run on these points: cv=5 folds need at least 5 samples, got 4"
    expected = {method_label(name): reason for name in ("hkes_cv", "hkes_cv_c", "hkesa_cv", "kernel_hkes_cv")}

    def greyed():
        return {text: title for text, disabled, title in page.method_options() if disabled}

    def wait_greyed(wanted):
        for _ in range(100):                             # the menu follows the points' websocket update
            if greyed() == wanted:
                return
            page.page.wait_for_timeout(100)
        assert greyed() == wanted

    wait_greyed(expected)
    texts = [text for text, _, _ in page.method_options()]
    assert method_label("hk") in texts and "hk" not in texts                 # words with the code, never bare
    page.locator(".ls-class button").nth(0).click()                           # a fifth point, of class +1
    page.page.wait_for_timeout(400)
    page.click_point(0.5, 0.5)
    page.wait_points(5)
    page.wait_text("#ls-message", "5 point(s)")
    wait_greyed({})


def test_verdict_box_says_paused_on_a_middle_row(page):
    """A middle row of a finished fit is a recorded iterate: the box says so, never "running…"."""
    page.choose("ls-preset", PRESETS["lecture"].title)
    page.wait_text("#ls-message", "4 point(s)")
    page.press("ls-step")
    page.press("ls-step")
    text = page.wait_text("#ls-verdict", "paused at row 2 of 104")
    assert "running" not in text
