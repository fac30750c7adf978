"""Serve the playground on the loopback address with Bokeh's server, fully offline.

BokehJS (scripts and style sheets; Bokeh loads no web font) is served by the
same server from the installed ``bokeh`` package (resources mode
``"server"``), so the page makes no request to another host.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import webbrowser

__all__ = ["serve", "make_server", "main"]

LOOPBACK = "127.0.0.1"


def _free_port(host):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_server(port=5006, host=LOOPBACK):
    """A started-to-be Bokeh ``Server`` with the playground at ``/`` (``port=0``: a free port).

    Parameters
    ----------
    port : int, default=5006
        The port; 0 picks a free one (read it back from ``server.port``).
    host : str, default="127.0.0.1"
        The address served.

    Returns
    -------
    bokeh.server.server.Server
        Not started: call ``start()`` then ``io_loop.start()`` (or ``run_until_shutdown()``).
    """
    from bokeh.application import Application
    from bokeh.application.handlers.function import FunctionHandler
    from bokeh.server.server import Server
    from bokeh.settings import settings

    from .app import make_document

    settings.resources.set_value("server")  # BokehJS from this server, never from a CDN
    if port == 0:
        port = _free_port(host)
    names = {host, f"{host}:{port}", f"localhost:{port}", f"{LOOPBACK}:{port}"}
    application = Application(FunctionHandler(make_document))
    return Server({"/": application}, address=host, port=port, num_procs=1,
                  allow_websocket_origin=sorted(n for n in names if ":" in n))


def serve(port=5006, host=LOOPBACK, open_browser=True):
    """Serve the playground until interrupted (``linsep playground``).

    Parameters
    ----------
    port : int, default=5006
        The port (0: a free one, printed).
    host : str, default="127.0.0.1"
        The address served; anything but a loopback address is refused (the
        playground is a local app).
    open_browser : bool, default=True
        Open the page in the default web browser.
    """
    if not _is_loopback(host):
        raise ValueError(f"the playground serves the loopback address only (127.0.0.1, ::1, localhost), not {host!r}")
    server = make_server(port, host)
    server.start()
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{server.port}/"
    print(f"linsep playground: {url}  (Ctrl+C stops it)", flush=True)
    if open_browser:
        server.io_loop.add_callback(webbrowser.open, url)
    try:
        server.io_loop.start()
    except KeyboardInterrupt:
        print("linsep playground stopped", file=sys.stderr)
    finally:
        server.stop()


def main(argv=None):
    """``python -m linsep.playground [--port N] [--host H] [--no-browser]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="linsep playground", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_from_arguments(args)


def add_arguments(parser):
    """The options of ``linsep playground`` (shared by the CLI and ``python -m linsep.playground``)."""
    parser.add_argument("--port", type=int, default=5006, help="port to serve on (0: a free one; default 5006)")
    parser.add_argument("--host", default=LOOPBACK, help="loopback address to serve on (default 127.0.0.1)")
    parser.add_argument("--no-browser", dest="browser", action="store_false",
                        help="do not open the page in a web browser")


def run_from_arguments(args):
    """Serve with parsed arguments of :func:`add_arguments`; exit status 2 when the extra is missing."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        print("linsep playground needs Bokeh: in linsep's checkout, pip install -e '.[playground]'", file=sys.stderr)
        return 2
    try:
        serve(args.port, args.host, args.browser)
    except ValueError as exc:
        print(f"linsep playground: {exc}", file=sys.stderr)
        return 2
    return 0
