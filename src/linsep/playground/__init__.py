"""The playground: linsep's algorithms on points you click, in a local web page (``linsep playground``).

Click to add points of either class, drag or delete them, or load a preset
(the lecture's four points, XOR, a perceptron exercise, IDA sets projected
to two features); pick any registered method and its parameters; step, play,
rewind or scrub through the recorded iterations and watch the hyperplane (or
the kernel decision regions), the current table row, the verdict and its
certificate.  Exports: the trace (CSV, LaTeX), the figure (PNG, SVG), an
animation (GIF) and the points (a CSV that ``linsep fit`` reads).

The page is a Bokeh server application, served on the loopback address with
BokehJS from the installed package: it works offline and asks no other host
for anything.  It needs the optional extra ``playground`` (Bokeh,
matplotlib: ``pip install -e '.[playground]'`` in the checkout); ``import linsep`` never imports it.

>>> from linsep.playground import fit_run, preset_points
>>> X, y = preset_points("lecture")
>>> run = fit_run(X, y, "hk", {"learning_rate": 0.9, "b0": 1.0}, start=[1, 1, 1])
>>> run.row(1)["b"]
('b(k)', '[28, 22.6, 1, 1]')
>>> run.verdict()
'separable at k = 104: every point strictly on its side'

Functions
---------
serve(port=5006, host="127.0.0.1", open_browser=True)
    Serve the page until interrupted (``linsep playground``).
show(notebook_url="localhost:8888")
    The same app inside a Jupyter notebook.
make_document(doc)
    Build the page in a Bokeh document (to embed it in a Bokeh server of your own).
"""

from __future__ import annotations

from .session import PRESETS, Preset, Run, fit_run, method_parameters, points_csv, preset_points

__all__ = ["PRESETS", "Preset", "Run", "fit_run", "method_parameters", "points_csv", "preset_points",
           "make_document", "serve", "show"]


def make_document(doc):
    """Build the playground in a Bokeh document; see :func:`linsep.playground.app.make_document`.

    Parameters
    ----------
    doc : bokeh.document.Document
        The document.

    Returns
    -------
    linsep.playground.app.Playground
        The page's state.
    """
    from .app import make_document as build

    return build(doc)


def serve(port=5006, host="127.0.0.1", open_browser=True):
    """Serve the playground on the loopback address until interrupted; see :func:`linsep.playground.server.serve`.

    Parameters
    ----------
    port : int, default=5006
        The port (0: a free one).
    host : str, default="127.0.0.1"
        A loopback address.
    open_browser : bool, default=True
        Open the page in the default browser.
    """
    from .server import serve as run

    run(port, host, open_browser)


def show(notebook_url="localhost:8888"):
    """Show the playground in a Jupyter notebook cell (Bokeh runs its server inside the kernel).

    BokehJS is put inline into the notebook (``INLINE`` resources), so this
    works offline too.

    Parameters
    ----------
    notebook_url : str, default="localhost:8888"
        The address of the Jupyter server the notebook runs on (Bokeh's
        ``show(app, notebook_url=…)``), e.g. ``"localhost:8889"``.
    """
    from bokeh.io import output_notebook
    from bokeh.io import show as bokeh_show
    from bokeh.resources import INLINE

    from .app import make_document as build

    output_notebook(INLINE, hide_banner=True)
    bokeh_show(build, notebook_url=notebook_url)
