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
from .session import (CHOICES, DEFAULT_SEED, KERNEL_PARAMETERS, PARAMETERS, PRESETS, accepts_start, fit_run,
                      method_label, method_parameters, parse_vector, preset_points, runnable_methods)

__all__ = ["make_document", "Playground"]

DEFAULT_RANGE = (-1.0, 11.0)
GRID = 90
# Widths in CSS pixels.  The three panels (controls, canvas, row and verdict) sit side by side from about 1250 px
# and wrap under one another on a narrower window, each no wider than 540 px: nothing ever needs a horizontal
# scrollbar on a projector's 800 x 600 (the browser tests check 800 x 600, 1280 x 800 and 1920 x 1080).
CONTROL_WIDTH = 250
PLOT_SIZE = 520
PANEL_WIDTH = 400
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
# Bokeh's Select has no disabled options: the server sends which methods cannot run on the points (and why) in
# the "runnable" source, and this greys their options, with the reason as the option's tooltip.  The <select> is
# found through the open shadow roots of BokehJS's views by its name; the options are matched by their text (the
# label).  Retried briefly: on the first load the views may not be rendered yet when it runs.
_RUNNABLE_JS = """
const d = source.data;
const get = (key) => Array.from(d instanceof Map ? d.get(key) : d[key]);
const labels = get("label"), reasons = get("reason");
const apply = (tries) => {
    const selects = [];
    const walk = (node) => {
        for (const el of node.querySelectorAll("*")) {
            if (el.tagName == "SELECT" && el.name == name) { selects.push(el); }
            if (el.shadowRoot) { walk(el.shadowRoot); }
        }
    };
    walk(document);
    for (const select of selects) {
        for (const option of select.options) {
            const i = labels.indexOf(option.textContent);
            const reason = i < 0 ? "" : reasons[i];
            option.disabled = reason != "";
            option.title = reason == "" ? "" : "cannot run on these points: " + reason;
        }
    }
    if (selects.length == 0 && tries < 100) { setTimeout(() => apply(tries + 1), 100); }
};
apply(0);
"""
_STYLE = """<style>
table.ls-row {border-collapse: collapse; font-size: 13px}
table.ls-row th {text-align: left; padding: 2px 8px 2px 0; font-weight: normal; color: #555; white-space: nowrap}
table.ls-row td {font-family: monospace; padding: 2px 0; overflow-wrap: anywhere}
</style>"""


_NO_PROOF = {"x": [], "y": [], "size": [], "label": [], "dx": [], "dy": [], "align": [], "baseline": []}


def proof_labels(X, rows, sizes, gap=6.0):
    """Where the proof's labels go: outside their rings, pointing away from the points' centre.

    Parameters
    ----------
    X : ndarray of shape (N, 2)
        The points, in screen orientation (x right, y up).
    rows : sequence of int
        The points that carry the proof.
    sizes : sequence of float
        Their rings' diameters in screen pixels.
    gap : float, default=6.0
        Pixels between a ring and its label.

    Returns
    -------
    dict
        Columns ``dx``, ``dy`` (pixel offsets, ``dy`` down as Bokeh's
        ``y_offset``), ``align`` and ``baseline``: the label's anchor sits
        diagonally out from the point, away from the points' mean,
        ``0.75 (size / 2 + gap)`` along each axis (so about ``size / 2 + gap``
        from the centre), and the text extends further away from the ring.
    """
    X = np.asarray(X, dtype=float)
    centre = X.mean(axis=0) if len(X) else np.zeros(2)
    scale = np.ptp(X, axis=0) if len(X) > 1 else np.ones(2)
    scale = np.where(scale > 0, scale, 1.0)  # the canvas's axes are about equally long on screen
    out = {"dx": [], "dy": [], "align": [], "baseline": []}
    for i, size in zip(rows, sizes):
        direction = (X[i] - centre) / scale
        if not np.any(direction):
            direction = np.array([1.0, -1.0])  # a point at the centre: below right
        ux, uy = np.sign(direction[0]) or 1.0, np.sign(direction[1]) or 1.0
        radius = size / 2 + gap
        # diagonally outward, at the ring's radius on each axis: the text's nearest corner clears the ring
        out["dx"].append(float(ux * radius * 0.75))
        out["dy"].append(float(-uy * radius * 0.75))
        out["align"].append("left" if ux > 0 else "right")
        out["baseline"].append("bottom" if uy > 0 else "top")
    return out


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
        self.proof = ColumnDataSource(_NO_PROOF, name="proof")
        self.hull = ColumnDataSource({"x": [], "y": []}, name="hull")
        self.download = ColumnDataSource({"name": [], "content": [], "mime": []}, name="download")
        self.download.js_on_change("data", CustomJS(args={"source": self.download}, code=_DOWNLOAD_JS))
        self.runnable = ColumnDataSource({"name": [], "label": [], "reason": []}, name="runnable")
        greying = CustomJS(args={"source": self.runnable, "name": "method"}, code=_RUNNABLE_JS)
        self.runnable.js_on_change("data", greying)
        self.doc.js_on_event("document_ready", greying)

        p = figure(width=PLOT_SIZE, height=PLOT_SIZE - 20, x_range=Range1d(*DEFAULT_RANGE),
                   y_range=Range1d(*DEFAULT_RANGE),
                   tools="", toolbar_location="above", title="click: add · drag: move · tap, Backspace: delete",
                   name="canvas", css_classes=["ls-canvas"])
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
        p.text("x", "y", text="label", source=self.proof, x_offset="dx", y_offset="dy", text_align="align",
               text_baseline="baseline", text_color="#2ca02c", text_font_size="12px")
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
                             width=CONTROL_WIDTH)
        self.add_class = RadioButtonGroup(labels=["add class +1 ●", "add class −1 ■"], active=0,
                                          css_classes=["ls-class"])
        self.add_class.js_on_change("active", CustomJS(args={"tool": self.draw_tool, "radio": self.add_class}, code=(
            "const cls = radio.active == 0 ? '+1' : '-1';\n"
            "tool.empty_value = cls;\n"
            "if (tool.default_overrides !== undefined) { tool.default_overrides = new Map([['cls', cls]]); }")))
        self.snap = Checkbox(label="snap points to a round grid", active=True,
                             css_classes=["ls-snap"])
        self.clear = Button(label="clear points", css_classes=["ls-clear"], width=CONTROL_WIDTH // 2 - 5)
        self.delete = Button(label="delete selected", css_classes=["ls-delete"], width=CONTROL_WIDTH // 2 - 5)
        self.method = Select(title="method", value="hk", name="method", css_classes=["ls-method"], width=CONTROL_WIDTH,
                             options=[(name, method_label(name)) for name in linsep.available_classifiers()])
        self.params = {}
        for name, label in PARAMETERS.items():
            css = [f"ls-{name.replace('_', '-')}"]
            if name in CHOICES:
                self.params[name] = Select(title=label, value="", options=[("", "default")] + CHOICES[name],
                                           css_classes=css, width=CONTROL_WIDTH)
            else:
                self.params[name] = TextInput(title=label, value="", placeholder="default", css_classes=css,
                                              width=CONTROL_WIDTH)
        self.start = TextInput(title="starting weights a(1) = [w0, w1, w2]", value="", placeholder="default",
                               css_classes=["ls-start"], width=CONTROL_WIDTH)

        self.rewind = Button(label="|◀ rewind", css_classes=["ls-rewind"], width=90)
        self.back = Button(label="◀ back", css_classes=["ls-back"], width=80)
        self.step = Button(label="step ▶", button_type="primary", css_classes=["ls-step"], width=80)
        self.play = Button(label="play", css_classes=["ls-play"], width=70)
        self.end = Button(label="run to end ▶|", css_classes=["ls-end"], width=110)
        self.slider = Slider(title="row of the trace", start=1, end=2, value=1, step=1, disabled=True,
                             css_classes=["ls-slider"], width=PLOT_SIZE - 20)

        self.message = Div(text="", css_classes=["ls-message"], width=PANEL_WIDTH)
        self.table = Div(text="", css_classes=["ls-table"], width=PANEL_WIDTH)
        self.verdict = Div(text="", css_classes=["ls-verdict-box"], width=PANEL_WIDTH)
        self.certificate = Div(text="", css_classes=["ls-certificate-box"], width=PANEL_WIDTH)
        self.export_buttons = {
            kind: Button(label=label, css_classes=[f"ls-export-{kind}"], width=PANEL_WIDTH // 3 - 10)
            for kind, label in [("trace_csv", "trace CSV"), ("trace_tex", "trace LaTeX"), ("png", "figure PNG"),
                                ("svg", "figure SVG"), ("gif", "animation GIF"), ("points_csv", "points CSV")]}

        controls = column(Div(text="<b>linsep playground</b>"), self.preset, self.add_class, self.snap,
                          row(self.clear, self.delete), self.method, *self.params.values(), self.start,
                          width=CONTROL_WIDTH + 10)
        middle = column(p, row(self.rewind, self.back, self.step, self.play, self.end), self.slider,
                        width=PLOT_SIZE + 10)
        buttons = list(self.export_buttons.values())
        right = column(self.message, self.table, self.verdict, self.certificate, Div(text="<b>export</b>"),
                       row(*buttons[:3]), row(*buttons[3:]), width=PANEL_WIDTH + 10)
        # as wide as the window, the panels wrapping under one another where they do not fit side by side
        self.layout = row(controls, middle, right, sizing_mode="stretch_width", styles={"flex-wrap": "wrap"})

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
        self.update_runnable()
        self.render()

    def update_runnable(self):
        """Send the page which methods cannot run on the current points, and why (greyed in the menu)."""
        reasons = runnable_methods(*self.data())
        self.runnable.data = {"name": list(reasons), "label": [method_label(name) for name in reasons],
                              "reason": list(reasons.values())}

    def why_not(self):
        """Why the chosen method cannot run on the points (``""``: it can)."""
        data = self.runnable.data
        return dict(zip(data["name"], data["reason"])).get(self.method.value, "")

    def load_preset(self, name):
        if not name:
            return
        preset = PRESETS[name]
        self._busy = True
        try:
            self.method.value = preset.method
            self._show_parameters()
            for key, widget in self.params.items():
                widget.value = str(preset.params.get(key, DEFAULT_SEED if key == "random_state" else ""))
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
        seed = self.params["random_state"]
        seed.placeholder = f"default: {DEFAULT_SEED}"

    def method_changed(self):
        self._busy = True
        try:
            self._show_parameters()
            for widget in [*self.params.values(), self.start]:
                widget.value = ""
            self.params["random_state"].value = str(DEFAULT_SEED)  # shown, so that a run says its seed
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
            self.render()  # the verdict box says "paused"
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
        self.proof.data = dict(_NO_PROOF)
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
            label = html.escape(method_label(self.method.value))
            reason = self.why_not()
            if reason:
                self.message.text = (f"<span id='ls-message' style='color:#b00'>{n} point(s). {label} cannot run "
                                     f"on these points: {html.escape(reason)}</span>")
                state = "cannot run on these points"
            else:
                self.message.text = (f"<span id='ls-message'>{n} point(s). Step ▶ fits {label}"
                                     " with a full trace and shows its first row.</span>")
                state = "not run yet: step ▶ fits it"
            if run is not None:
                self.message.text = (f"<span id='ls-message'>{html.escape(method_label(run.method))}: {len(run)} "
                                     "rows recorded; step ▶ to see the first.</span>")
                state = f"fitted ({len(run)} rows), shown before row 1"
            self.verdict.text = f"<span id='ls-verdict' class='ls-state'>{state}</span>"
            self.table.text = self.certificate.text = ""
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
            sizes = (26 + 20 * u[rows]).tolist()
            self.proof.data = {"x": X[rows, 0].tolist(), "y": X[rows, 1].tolist(), "size": sizes,
                               "label": [f"u{i + 1}={u[i]:.3g}" for i in rows], **proof_labels(X, rows, sizes)}
        if cert and "hull_points" in cert:
            p, q = cert["hull_points"]
            self.hull.data = {"x": [float(p[0]), float(q[0])], "y": [float(p[1]), float(q[1])]}
        self.message.text = (f"<span id='ls-message'>{html.escape(method_label(run.method))}: row {pos + 1} of "
                             f"{len(run)}, iteration k = {run.k(pos)}"
                             f"{', the returned model' if run.returned(pos) else ''}</span>")
        cells = "".join(f"<tr><th>{html.escape(header)}</th><td id='ls-{html.escape(column)}'>{html.escape(text)}"
                        "</td></tr>" for column, (header, text) in run.row(pos).items())
        self.table.text = f"{_STYLE}<table class='ls-row'>{cells}</table>"
        if last:
            self.verdict.text = f"<b>verdict</b>: <span id='ls-verdict'>{html.escape(run.verdict())}</span>"
            self.certificate.text = f"<span id='ls-certificate'>{html.escape(run.certificate_text())}</span>"
        else:
            # The fit ran to its end at the first step; a middle row is a recorded iterate, not a fit in progress.
            doing = "playing" if self._timer is not None else "paused"
            self.verdict.text = (f"<span id='ls-verdict' class='ls-state'>{doing} at row {pos + 1} of {len(run)}: "
                                 "the verdict is at the last row (run to end ▶|)</span>")
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
    doc.add_root(page.runnable)  # likewise: the menu's greying follows its changes
    doc.title = "linsep playground"
    return page
