"""Fixtures of the playground's browser tests: the served page and headless Chromium.

The server is ``linsep playground --port 0 --no-browser`` in a child process
(the port it picked is read from its first line).  Chromium is Debian's
``/usr/bin/chromium`` driven by Playwright (never ``playwright install``:
nothing is downloaded).  Where Chromium or Playwright is missing the browser
tests skip, except under CI (``CI`` set), where they fail: ``.ci/run``
installs Chromium, and these tests must run there.
"""

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

CHROMIUM = os.environ.get("LINSEP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def _missing(reason):
    if os.environ.get("CI"):
        pytest.fail(f"the playground's browser tests must run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def playground_url():
    """URL of a playground served on a free loopback port for the whole session."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        _missing("Bokeh is not installed (in the checkout: pip install -e '.[playground]')")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "linsep", "playground", "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if not match:
            proc.kill()
            raise RuntimeError(f"the playground did not start: {line!r} {proc.stderr.read()[-2000:]}")
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium under Playwright (which gives each launch a fresh temporary profile)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (in the checkout: pip install -e '.[test]')")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Page:
    """A playground page with the requests it made (HTTP and websocket URLs)."""

    def __init__(self, page, url):
        self.page, self.url, self.requests = page, url, []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("websocket", lambda socket: self.requests.append(socket.url))
        page.goto(url)
        page.wait_for_selector(".ls-canvas canvas", timeout=30_000)
        self.wait_text("#ls-message", "point(s)")

    def locator(self, selector):
        return self.page.locator(selector)

    def text(self, selector):
        return self.page.locator(selector).inner_text()

    def wait_text(self, selector, expected, timeout=15_000):
        """Wait until the element's text contains ``expected``; return the text."""
        deadline = time.monotonic() + timeout / 1000
        text = None
        while time.monotonic() < deadline:
            locator = self.page.locator(selector)
            if locator.count():
                text = locator.first.inner_text()
                if expected in text:
                    return text
            self.page.wait_for_timeout(50)
        raise AssertionError(f"{selector}: {expected!r} not shown; last text {text!r}")

    def to_screen(self, x, y):
        """Page coordinates of the data point ``(x, y)`` of the canvas (from BokehJS's scales)."""
        return self.page.evaluate("""([x, y]) => {
            const model = Bokeh.documents[0].get_model_by_name("canvas");
            const view = Object.values(Bokeh.index)[0].owner.get_one(model);
            const box = view.canvas_view.el.getBoundingClientRect();
            return [box.left + view.frame.x_scale.compute(x), box.top + view.frame.y_scale.compute(y)];
        }""", [x, y])

    def click_point(self, x, y):
        self.page.mouse.click(*self.to_screen(x, y))

    def wait_points(self, n, timeout=10_000):
        """Wait until the canvas holds ``n`` points."""
        deadline = time.monotonic() + timeout / 1000
        while time.monotonic() < deadline:
            count = self.page.evaluate("() => Bokeh.documents[0].get_model_by_name('points').get_length()")
            if count == n:
                return
            self.page.wait_for_timeout(50)
        raise AssertionError(f"the canvas holds {count} points, not {n}: {self.source('points')}")

    def source(self, name):
        """The columns of a named ColumnDataSource as the browser holds them."""
        return self.page.evaluate("""(name) => {
            const data = Bokeh.documents[0].get_model_by_name(name).data;
            const out = {};
            for (const [key, value] of (data instanceof Map ? data.entries() : Object.entries(data))) {
                out[key] = Array.from(value);
            }
            return out;
        }""", name)

    def set_text(self, css_class, value):
        field = self.page.locator(f".{css_class} input")
        field.fill(value)
        field.press("Enter")

    def choose(self, css_class, label):
        """Choose the option shown as ``label`` (BokehJS gives each option its label as value)."""
        self.page.locator(f".{css_class} select").select_option(label=label)

    def press(self, css_class):
        self.page.locator(f".{css_class} button").click()

    def method_options(self):
        """``[(text, disabled, title)]`` of the method menu's options, as the browser shows them."""
        return self.page.locator(".ls-method select option").evaluate_all(
            "options => options.map(o => [o.textContent, o.disabled, o.title])")


@pytest.fixture
def open_page(browser, playground_url):
    """``open_page(width, height)``: a fresh playground page in a window of that size (closed after the test)."""
    contexts = []

    def open_one(width=1340, height=720):
        context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
        contexts.append(context)
        return Page(context.new_page(), playground_url)

    try:
        yield open_one
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def page(open_page):
    """A fresh playground page (its own browser context and Bokeh session) in a 1340 × 720 window."""
    return open_page()
