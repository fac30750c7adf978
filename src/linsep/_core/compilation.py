"""linsep's compiled code at first use: a one-line notice while numba compiles (:func:`prepare`).

A handful of linsep's loops are compiled by numba (the Ho–Kashyap segment,
the LSVM pass, the perceptron and LMS epochs, the Kozinec and SK loops).
numba compiles a loop the first time it runs on a kind of data (dtype,
layout, threads) and keeps the machine code in its disk cache, so only the
first fit of that kind on a machine waits; later processes load it.

* :func:`prepare` compiles (or loads) a loop before it runs and, when that
  takes longer than :data:`NOTICE_DELAY` seconds, says so in one line on the
  ``linsep.compilation`` logger (level WARNING: shown by Python's default
  handler; ``logging.getLogger("linsep.compilation").setLevel(logging.ERROR)``
  silences it), once per loop and process.
* :func:`linsep.warmup.warm_up` (``linsep warm-up`` on the command line)
  compiles them all ahead of time, with a progress bar.
"""

from __future__ import annotations

import contextlib
import logging
import threading

__all__ = ["NOTICE_DELAY", "logger", "notices_paused", "prepare"]

logger = logging.getLogger("linsep.compilation")

NOTICE_DELAY = 1.0
"""Seconds a compilation runs before :func:`prepare` says that it does."""

_announced = set()  # the loops whose notice this process has printed
_prepared = set()  # (dispatcher, key) pairs ready in this process: the next fit of that kind skips the look-up
_announced_lock = threading.Lock()
_paused = threading.Event()  # set while linsep.warmup runs: its progress bar says what is compiled


def _announce(what):
    with _announced_lock:
        if what in _announced or _paused.is_set():
            return
        _announced.add(what)
    logger.warning("linsep: compiling %s for this kind of data (once per machine: numba keeps it on disk; "
                   "`linsep warm-up` compiles everything ahead of time)", what)


def prepare(dispatcher, args, what, *, key=None, delay=NOTICE_DELAY):
    """Have the numba ``dispatcher`` ready for ``args`` before they are passed to it.

    The signature numba would compile for ``args`` is looked up among the
    dispatcher's loaded versions; if it is missing, it is compiled now (or
    loaded from numba's disk cache, which is quick), and if that takes longer
    than :data:`NOTICE_DELAY` seconds a one-line notice naming ``what`` is
    logged while it runs (once per ``what`` and process).

    Parameters
    ----------
    dispatcher : numba dispatcher
        A function decorated with ``numba.njit``.
    args : tuple
        The arguments of the coming call.
    what : str
        What is compiled, for the notice (e.g. ``"the Ho–Kashyap loop"``).
    key : hashable or None, default=None
        What decides the signature of ``args`` for this caller (e.g. the dtypes
        of its arrays and its ``None`` selectors), cheap to form.  Once a key
        is ready, later calls with it return at once: typing every argument
        the way numba does costs a few microseconds each, a noticeable share
        of a small fit.  ``None``: always look the signature up.
    delay : float, default=NOTICE_DELAY
        Seconds a compilation runs before the notice is logged (tests pass ``0`` to see it at once, or a long
        delay to see that a quick compilation logs none).
    """
    if key is not None and (dispatcher, key) in _prepared:
        return
    signature = tuple(dispatcher.typeof_pyval(arg) for arg in args)
    if signature not in dispatcher.overloads:
        timer = threading.Timer(delay, _announce, (what,))
        timer.daemon = True
        timer.start()
        try:
            dispatcher.compile(signature)
        finally:
            timer.cancel()
    if key is not None:
        _prepared.add((dispatcher, key))


@contextlib.contextmanager
def notices_paused():
    """No compilation notice inside this block (:func:`linsep.warmup.warm_up` shows its own progress)."""
    _paused.set()
    try:
        yield
    finally:
        _paused.clear()
