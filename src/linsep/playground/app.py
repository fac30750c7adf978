"""The playground's page: a Bokeh document built by :func:`make_document`.

One document per browser tab (or notebook cell).  The points live in a
``ColumnDataSource`` edited by Bokeh's ``PointDrawTool`` (click to add, drag
to move, select and Backspace to delete); every other action runs in Python
on the server: a fit with a full trace, then stepping, playing, rewinding or
scrubbing through its rows (:class:`linsep.playground.session.Run`).
"""

from __future__ import annotations

import base64
import html

import numpy as np

from bokeh.layouts import column, row
from bokeh.models import (Button, Checkbox, ColumnDataSource, CustomJS, Div, LinearColorMapper, PointDrawTool,
                          RadioButtonGroup, Range1d, Select, Slider, TextInput)
from bokeh.plotting import figure
from bokeh.transform import factor_cmap, factor_mark

import linsep

from . import exports
from .session import (CHOICES, KERNEL_PARAMETERS, PARAMETERS, PRESETS, accepts_start, fit_run,
                      method_parameters, parse_vector, preset_points)

__all__ = ["make_document", "Playground"]

DEFAULT_RANGE = (-1.0, 11.0)
GRID = 90
_DOWNLOAD_JS = """
const d = source.data;
const get = (key) => (d instanceof Map ? d.get(key) : d[key]);
const names = get("name");
if (!names || names.length == 0) { return; }
const bytes = Uint8Array.from(atob(get("content")[0]), c => c.charCodeAt(0));
const blob = new Blob([bytes], {type: get("mime")[0]});
const link = document.createElement("a");
link.href = URL.createObjectURL(blob);
link.download = names[0];
document.body.appendChild(link);
link.click();
setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
"""
# Snapping runs in the browser, where the points are edited: a server round trip could overwrite a point
# clicked meanwhile.  The grid step is a power of ten about 1/40 of the view's width (0.1 on the default view).
_SNAP_JS = """
if (!snap.active) { return; }
const d = source.data;
const get = (key) => Array.from(d instanceof Map ? d.get(key) : d[key]);
const xs = get("x"), ys = get("y"), cls = get("cls");
const step = Math.pow(10, Math.floor(Math.log10(Math.max(Math.abs(x_range.end - x_range.start), 1e-9) / 40)));
const round = (v) => parseFloat((Math.round(v / step) * step).toPrecision(10));
const sx = xs.map(round), sy = ys.map(round);
if (sx.every((v, i) => v === xs[i]) && sy.every((v, i) => v === ys[i])) { return; }
source.data = new Map([["x", sx], ["y", sy], ["cls", cls]]);
"""
_STYLE = """<style>
table.ls-row {border-collapse: collapse; font-size: 13px}
table.ls-row th {text-align: left; padding: 2px 8px 2px 0; font-weight: normal; color: #555; white-space: nowrap}
table.ls-row td {font-family: monospace; padding: 2px 0}
</style>"""


def _label(class_value):
    return "+1" if int(class_value) > 0 else "-1"


class Playground:
    """The page's widgets, plot and state; :attr:`layout` is the root put into the document.

    Parameters
    ----------
    doc : bokeh.document.Document
        The document the page lives in (for the play timer).
    """

    def __init__(self, doc):
        self.doc = doc
        self.run = None
        self.pos = -1
        self._timer = None
        self._busy = False
        self._build()

    # ------------------------------------------------------------------ layout
    def _build(self):
        self.points = ColumnDataSource({"x": [], "y": [], "cls": []}, name="points")
        self.regions = ColumnDataSource({"image": [], "x": [], "y": [], "dw": [], "dh": []}, name="regions")
        self.line = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []}, name="line")
        self.margins = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []}, name="margins")
        self.wrong = ColumnDataSource({"x": [], "y": []}, name="wrong")
        self.proof = ColumnDataSource({"x": [], "y": [], "size": [], "label": []}, name="proof")
        self.hull = ColumnDataSource({"x": [], "y": []}, name="hull")
        self.download = ColumnDataSource({"name": [], "content": [], "mime": []}, name="download")
        self.download.js_on_change("data", CustomJS(args={"source": self.download}, code=_DOWNLOAD_JS))

        p = figure(width=560, height=540, x_range=Range1d(*DEFAULT_RANGE), y_range=Range1d(*DEFAULT_RANGE),
                   tools="", toolbar_location="above", title="click: add a point · drag: move · "
                   "tap it, then Backspace: delete", name="canvas", css_classes=["ls-canvas"])
        p.xaxis.axis_label, p.yaxis.axis_label = "x1", "x2"
        # the sign of the score: -1 (red side), 0 (white: a zero model), +1 (blue side)
        mapper = LinearColorMapper(palette=["#fcd5d5", "#ffffff", "#c6dbef"], low=-1, high=1)
        p.image(image="image", x="x", y="y", dw="dw", dh="dh", source=self.regions, color_mapper=mapper,
                global_alpha=0.8, level="image")
        p.segment("x0", "y0", "x1", "y1", source=self.line, line_color="black", line_width=2)
        p.segment("x0", "y0", "x1", "y1", source=self.margins, line_color="black", line_width=1,
                  line_dash="dashed")
        p.scatter("x", "y", source=self.wrong, size=24, fill_alpha=0, line_color="#ff7f0e", line_width=3)
        p.scatter("x", "y", source=self.proof, size="size", fill_alpha=0, line_color="#2ca02c", line_width=3)
        p.text("x", "y", text="label", source=self.proof, x_offset=12, y_offset=-12, text_color="#2ca02c",
               text_font_size="12px")
        p.line("x", "y", source=self.hull, line_color="#2ca02c", line_dash="dotted", line_width=2)
        p.scatter("x", "y", source=self.hull, size=8, color="#2ca02c")
        renderer = p.scatter("x", "y", source=self.points, size=12, line_color="black",
                             fill_color=factor_cmap("cls", ["#1f77b4", "#d62728"], ["+1", "-1"]),
                             marker=factor_mark("cls", ["circle", "square"], ["+1", "-1"]))
        # New points take the chosen class: Bokeh >= 3.8 fills other columns from default_overrides
        # (a string column's inferred default '' comes before empty_value there), older ones from empty_value.
        overrides = {"default_overrides": {"cls": "+1"}} if "default_overrides" in PointDrawTool.properties() else {}
        self.draw_tool = PointDrawTool(renderers=[renderer], empty_value="+1", add=True, drag=True, **overrides)
        p.add_tools(self.draw_tool)
        p.toolbar.active_tap = self.draw_tool
        p.toolbar.active_drag = self.draw_tool
        self.plot = p

        self.preset = Select(title="preset", value="", options=[("", "— choose a preset —")] +
                             [(name, preset.title) for name, preset in PRESETS.items()], css_classes=["ls-preset"],
                             width=260)
        self.add_class = RadioButtonGroup(labels=["add class +1 ●", "add class −1 ■"], active=0,
                                          css_classes=["ls-class"])
        self.add_class.js_on_change("active", CustomJS(args={"tool": self.draw_tool, "radio": self.add_class}, code=(
            "const cls = radio.active == 0 ? '+1' : '-1';\n"
            "tool.empty_value = cls;\n"
            "if (tool.default_overrides !== undefined) { tool.default_overrides = new Map([['cls', cls]]); }")))
        self.snap = Checkbox(label="snap points to a round grid", active=True,
                             css_classes=["ls-snap"])
        self.clear = Button(label="clear points", css_classes=["ls-clear"], width=125)
        self.delete = Button(label="delete selected", css_classes=["ls-delete"], width=125)
        self.method = Select(title="method", value="hk", options=list(linsep.available_classifiers()),
                             css_classes=["ls-method"], width=260)
        self.params = {}
        for name, label in PARAMETERS.items():
            css = [f"ls-{name.replace('_', '-')}"]
            if name in CHOICES:
                self.params[name] = Select(title=label, value="", options=[("", "default")] + CHOICES[name],
                                           css_classes=css, width=260)
            else:
                self.params[name] = TextInput(title=label, value="", placeholder="default", css_classes=css,
                                              width=260)
        self.start = TextInput(title="starting weights a(1) = [w0, w1, w2]", value="", placeholder="default",
                               css_classes=["ls-start"], width=260)

        self.rewind = Button(label="|◀ rewind", css_classes=["ls-rewind"], width=90)
        self.back = Button(label="◀ back", css_classes=["ls-back"], width=80)
        self.step = Button(label="step ▶", button_type="primary", css_classes=["ls-step"], width=80)
        self.play = Button(label="play", css_classes=["ls-play"], width=70)
        self.end = Button(label="run to end ▶|", css_classes=["ls-end"], width=110)
        self.slider = Slider(title="row of the trace", start=1, end=2, value=1, step=1, disabled=True,
                             css_classes=["ls-slider"], width=540)

        self.message = Div(text="", css_classes=["ls-message"], width=430)
        self.table = Div(text="", css_classes=["ls-table"], width=430)
        self.verdict = Div(text="", css_classes=["ls-verdict-box"], width=430)
        self.certificate = Div(text="", css_classes=["ls-certificate-box"], width=430)
        self.export_buttons = {
            kind: Button(label=label, css_classes=[f"ls-export-{kind}"], width=135)
            for kind, label in [("trace_csv", "trace CSV"), ("trace_tex", "trace LaTeX"), ("png", "figure PNG"),
                                ("svg", "figure SVG"), ("gif", "animation GIF"), ("points_csv", "points CSV")]}

        controls = column(Div(text="<b>linsep playground</b>"), self.preset, self.add_class,
                          self.snap, row(self.clear, self.delete), self.method, *self.params.values(), self.start, width=280)
        middle = column(p, row(self.rewind, self.back, self.step, self.play, self.end), self.slider)
        buttons = list(self.export_buttons.values())
        right = column(self.message, self.table, self.verdict, self.certificate, Div(text="<b>export</b>"),
                       row(*buttons[:3]), row(*buttons[3:]), width=450)
        self.layout = row(controls, middle, right)

        self.points.js_on_change("data", CustomJS(args={"source": self.points, "snap": self.snap,
                                                        "x_range": p.x_range}, code=_SNAP_JS))
        self.points.on_change("data", lambda attr, old, new: self.invalidate())
        self.preset.on_change("value", lambda attr, old, new: self.load_preset(new))
        self.method.on_change("value", lambda attr, old, new: self.method_changed())
        for widget in [*self.params.values(), self.start]:
            widget.on_change("value", lambda attr, old, new: self.invalidate())
        self.clear.on_click(self.clear_points)
        self.delete.on_click(self.delete_selected)
        self.rewind.on_click(lambda: self.go(-1))
        self.back.on_click(lambda: self.go(self.pos - 1))
        self.step.on_click(self.step_forward)
        self.play.on_click(self.toggle_play)
        self.end.on_click(lambda: self.go(10**12))
        self.slider.on_change("value", lambda attr, old, new: self.scrubbed(new))
        for kind, button in self.export_buttons.items():
            button.on_click(lambda kind=kind: self.export(kind))
        self.method_changed()

    # ------------------------------------------------------------------ state
    def data(self):
        """``(X, y)`` of the points on the canvas (``y`` in ±1)."""
        d = self.points.data
        X = np.c_[np.asarray(d["x"], dtype=float), np.asarray(d["y"], dtype=float)].reshape(-1, 2)
        y = np.array([1 if str(c).strip() in ("+1", "1") else -1 for c in d["cls"]], dtype=int)
        return X, y

    def set_points(self, X, y, fit_view=True):
        X = np.asarray(X, dtype=float).reshape(-1, 2)
        self.points.data = {"x": X[:, 0].tolist(), "y": X[:, 1].tolist(), "cls": [_label(c) for c in y]}
        if fit_view and len(X):
            for axis, values in ((self.plot.x_range, X[:, 0]), (self.plot.y_range, X[:, 1])):
                low, high = float(values.min()), float(values.max())
                pad = max(0.15 * (high - low), 0.5)
                axis.start, axis.end = low - pad, high + pad

    def ranges(self):
        return (self.plot.x_range.start, self.plot.x_range.end), (self.plot.y_range.start, self.plot.y_range.end)

    def settings(self):
        """The parameters typed on the page, ``{name: text}`` (empty text: the default)."""
        return {name: widget.value for name, widget in self.params.items() if widget.visible and widget.value}

    def invalidate(self):
        """Points or settings changed: the next step fits again."""
        if self._busy:
            return
        self.stop_play()
        self.run, self.pos = None, -1
        self.render()

    def load_preset(self, name):
        if not name:
            return
        preset = PRESETS[name]
        self._busy = True
        try:
            self.method.value = preset.method
            self._show_parameters()
            for key, widget in self.params.items():
                widget.value = str(preset.params.get(key, ""))
            self.start.value = "" if preset.start is None else ", ".join(f"{v:g}" for v in preset.start)
            self.set_points(*preset_points(name))
        finally:
            self._busy = False
        self.invalidate()

    def _show_parameters(self):
        method = self.method.value
        shown = method_parameters(method)
        for name, widget in self.params.items():
            widget.visible = name in shown
            if name in shown:
                default = shown[name]
                text = "default" if default is None else f"default: {default}"
                if isinstance(widget, Select):
                    widget.options = [("", text)] + CHOICES[name]
                else:
                    widget.placeholder = text
        self.start.visible = accepts_start(method)

    def method_changed(self):
        self._busy = True
        try:
            self._show_parameters()
            for widget in [*self.params.values(), self.start]:
                widget.value = ""
        finally:
            self._busy = False
        self.invalidate()

    def clear_points(self):
        self.points.data = {"x": [], "y": [], "cls": []}

    def delete_selected(self):
        keep = sorted(set(range(len(self.points.data["x"]))) - set(self.points.selected.indices))
        X, y = self.data()
        self.points.selected.indices = []
        self.set_points(X[keep], y[keep], fit_view=False)

    def ensure_run(self):
        """Fit once (on the first step, play or jump); False, with the reason shown, when it cannot."""
        if self.run is not None:
            return True
        X, y = self.data()
        try:
            start = parse_vector(self.start.value, 3) if self.start.visible else None
            self.run = fit_run(X, y, self.method.value, self.settings(), start)
        except Exception as exc:  # a refused parameter or too few points: said on the page
            self.message.text = f"<span id='ls-message' style='color:#b00'>{html.escape(str(exc))}</span>"
            return False
        self.pos = -1
        return True

    def go(self, pos):
        """Show row ``pos`` (clipped; -1: before the first row)."""
        if pos >= 0 and not self.ensure_run():
            return
        if self.run is None:
            pos = -1
        else:
            pos = max(-1, min(pos, len(self.run) - 1))
        self.pos = pos
        self.render()

    def step_forward(self):
        self.go(self.pos + 1)

    def scrubbed(self, value):
        if self._busy or self.run is None:
            return
        self.go(int(value) - 1)

    def toggle_play(self):
        if self._timer is not None:
            self.stop_play()
            return
        if not self.ensure_run():
            return
        if self.pos >= len(self.run) - 1:
            self.pos = -1
        self.play.label = "pause"
        self._timer = self.doc.add_periodic_callback(self._tick, 120)

    def _tick(self):
        if self.run is None or self.pos >= len(self.run) - 1:
            self.stop_play()
            return
        stride = max(1, len(self.run) // 150)
        self.go(self.pos + stride)

    def stop_play(self):
        if self._timer is not None:
            try:
                self.doc.remove_periodic_callback(self._timer)
            except ValueError:
                pass
            self._timer = None
        self.play.label = "play"

    # ------------------------------------------------------------------ drawing
    def render(self):
        """Draw the current row: regions, hyperplane, wrong points, row table, verdict, certificate."""
        run, pos = self.run, self.pos
        self.proof.data = {"x": [], "y": [], "size": [], "label": []}
        self.hull.data = {"x": [], "y": []}
        self._busy = True
        try:
            if run is None:
                self.slider.disabled, self.slider.end, self.slider.value = True, 2, 1
            else:
                self.slider.disabled = len(run) < 2
                self.slider.end = max(len(run), 2)
                self.slider.value = max(pos + 1, 1)
        finally:
            self._busy = False
        if run is None or pos < 0:
            self.regions.data = {"image": [], "x": [], "y": [], "dw": [], "dh": []}
            self.line.data = self.margins.data = {"x0": [], "y0": [], "x1": [], "y1": []}
            self.wrong.data = {"x": [], "y": []}
            n = len(self.points.data["x"])
            self.message.text = (f"<span id='ls-message'>{n} point(s). Step ▶ fits {html.escape(self.method.value)}"
                                 " with a full trace and shows its first row.</span>")
            if run is not None:
                self.message.text = (f"<span id='ls-message'>{html.escape(run.method)}: {len(run)} rows recorded;"
                                     " step ▶ to see the first.</span>")
            self.table.text = self.verdict.text = self.certificate.text = ""
            return
        (x0, x1), (y0, y1) = self.ranges()
        scores = run.grid(pos, (x0, x1), (y0, y1), size=GRID)
        self.regions.data = {"image": [np.sign(scores)], "x": [x0], "y": [y0], "dw": [x1 - x0], "dh": [y1 - y0]}
        lines = {"x0": [], "y0": [], "x1": [], "y1": []}
        margins = {"x0": [], "y0": [], "x1": [], "y1": []}
        last = pos == len(run) - 1
        cert = run.certificate() if last else None
        if not run.kernel:
            w, w0 = run.weights(pos)
            levels = [0.0]
            if cert and cert["kind"] == "hyperplane":
                levels += [-cert["margin"] * np.linalg.norm(w), cert["margin"] * np.linalg.norm(w)]
            if np.linalg.norm(w) > 0:
                for level in levels:
                    xs, ys = exports.clipped_line(w, w0, level, (x0, x1), (y0, y1))
                    for key, value in zip(("x0", "y0", "x1", "y1"), (xs[0], ys[0], xs[1], ys[1])):
                        (lines if level == 0 else margins)[key].append(float(value))
        self.line.data, self.margins.data = lines, margins
        X, _ = self.data()
        wrong = run.misclassified(pos)
        self.wrong.data = {"x": X[wrong, 0].tolist(), "y": X[wrong, 1].tolist()}
        if cert and cert["kind"] == "proof":
            u = cert["u"] / cert["u"].max()
            rows = cert["rows"]
            self.proof.data = {"x": X[rows, 0].tolist(), "y": X[rows, 1].tolist(),
                               "size": (26 + 20 * u[rows]).tolist(), "label": [f"u{i + 1}={u[i]:.3g}" for i in rows]}
        if cert and "hull_points" in cert:
            p, q = cert["hull_points"]
            self.hull.data = {"x": [float(p[0]), float(q[0])], "y": [float(p[1]), float(q[1])]}
        self.message.text = (f"<span id='ls-message'>{html.escape(run.method)}: row {pos + 1} of {len(run)}, "
                             f"iteration k = {run.k(pos)}{', the returned model' if run.returned(pos) else ''}</span>")
        cells = "".join(f"<tr><th>{html.escape(header)}</th><td id='ls-{html.escape(column)}'>{html.escape(text)}"
                        "</td></tr>" for column, (header, text) in run.row(pos).items())
        self.table.text = f"{_STYLE}<table class='ls-row'>{cells}</table>"
        if last:
            self.verdict.text = f"<b>verdict</b>: <span id='ls-verdict'>{html.escape(run.verdict())}</span>"
            self.certificate.text = f"<span id='ls-certificate'>{html.escape(run.certificate_text())}</span>"
        else:
            self.verdict.text = "<span id='ls-verdict'>running…</span>"
            self.certificate.text = ""

    # ------------------------------------------------------------------ exports
    def export(self, kind):
        """Hand one export to the browser as a download."""
        X, y = self.data()
        if kind == "points_csv":
            self._send("points.csv", exports.points_csv(X, y), "text/csv")
            return
        if not self.ensure_run():
            return
        xlim, ylim = self.ranges()
        name = self.run.method
        if kind == "trace_csv":
            self._send(f"{name}_trace.csv", exports.trace_csv(self.run), "text/csv")
        elif kind == "trace_tex":
            self._send(f"{name}_trace.tex", exports.trace_latex(self.run), "text/x-tex")
        elif kind in ("png", "svg"):
            pos = self.pos if self.pos >= 0 else len(self.run) - 1
            content = exports.figure_bytes(self.run, pos, X, y, xlim, ylim, fmt=kind)
            self._send(f"{name}_k{self.run.k(pos)}.{kind}", content, "image/png" if kind == "png" else "image/svg+xml")
        elif kind == "gif":
            self._send(f"{name}.gif", exports.animation_gif(self.run, X, y, xlim, ylim), "image/gif")

    def _send(self, name, content, mime):
        if isinstance(content, str):
            content = content.encode("utf-8")
        self.download.data = {"name": [name], "content": [base64.b64encode(content).decode("ascii")], "mime": [mime]}


def make_document(doc):
    """Build the playground in ``doc`` (a Bokeh server document): the page of ``linsep playground``.

    Parameters
    ----------
    doc : bokeh.document.Document
        The session's document.

    Returns
    -------
    Playground
        The page's state (widgets, plot, current run).
    """
    page = Playground(doc)
    doc.add_root(page.layout)
    doc.add_root(page.download)  # drawn by no glyph: a root of its own, so that the browser holds it
    doc.title = "linsep playground"
    return page
