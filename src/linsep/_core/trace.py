"""Teaching traces: the per-iteration record behind ``record_history``.

Every iterative estimator of linsep takes ``record_history`` (``False`` by
default).  When it is truthy, the estimator hands its solver a
:class:`TraceRecorder`; the solver calls :meth:`TraceRecorder.record` with
the iterate's vectors and merges :meth:`TraceRecorder.as_dict` into
``SolveResult.history``, so that ``history_`` holds, next to the scalar keys
the solver has always kept (``"criterion"``, ``"training_errors"``,
``"validation_error"``, ``"mistakes"``, ``"margin"``, ``"objective"``...),
the quantities a worked example of the lecture shows.  This module is the
one place that decides what is kept.

Trace format
------------
``history_`` is a dict of str to ndarray per binary problem (a list of such
dicts, one per class, for one-vs-rest).  The trace keys, present where the
algorithm has the quantity, share one row per *recorded* iterate:

=================  ===============  ==============================================
key                shape            meaning
=================  ===============  ==============================================
``iteration``      (n_rec,) int     iteration number ``k`` of each row
``weights``        (n_rec, d + 1)   augmented ``a(k) = [w, w0]`` (bias last),
                                    primal models
``dual_coef``      (n_rec, N)       ``α_i y_i`` of kernel models
``intercept``      (n_rec,)         their bias
``margin_vector``  (n_rec, N)       ``b(k)``, Ho–Kashyap and MSE-type rules
``error_vector``   (n_rec, N)       ``e(k) = Y a(k) − b(k)`` (Łęski's rules:
                                    ``Y a(k) − 1 − b(k)``)
``sample``         (n_rec,) int     index of the sample the step that produced
                                    the row corrected (−1: none or several)
``pass``           (n_rec,) int     update-level traces: the pass of each update
``returned``       (n_rec,) bool    only when the model is an earlier iterate
                                    (below): ``True`` on the last row
=================  ===============  ==============================================

The last row is always the fitted model.  Iteration numbers follow each
solver's ``n_iter_``, so the last row of the iterations is the final
iterate, ``iteration[~returned][-1] == n_iter_``:

* Ho–Kashyap family (and kernel HK): the lecture's numbering, ``k = 1`` is
  the starting point ``a(1), b(1)``; rows ``1 … n_iter_``.
* Every other rule counts steps (or passes) from a starting point
  ``k = 0``: rows ``0 … n_iter_`` (one more row than ``n_iter_``).  Rules
  that count passes (perceptron, LMS, kernel perceptron) record the
  weights after each pass; ``sample`` is then the last sample corrected in
  the pass.
* Kernel Schlesinger–Kozinec records a row per step too: a traced fit runs
  the plain steps, not the ``shrinking`` working set (whose compiled block
  would hide them).
* MSE (one solve) has the single row ``k = 1``.

When the model is not the final iterate (early stopping returns iterate
``k̂ = best_iter_``; Kozinec/SK on non-separable data the pocket, the
iterate of fewest training errors met), the solver adds it with
:meth:`TraceRecorder.record_returned`: one more row, after the final
iterate's, numbered with the returned iterate's ``k`` and marked in
``returned`` (``n_iter_`` unchanged).

The scalar keys keep their own length (one entry per iteration, whatever
was recorded) and end at the final iteration, so ``criterion[-1]`` belongs
to the final iterate (a returned row takes the entries of its ``k``).
Rules that do not otherwise count training errors
(MSE, Widrow–Hoff, LMS, the three perceptrons, LSVM) add the scalar key
``training_errors`` to a traced run; MSE adds its ``criterion`` too.
``training_errors`` counts what the fitted model's verdict counts, on every
row given to ``fit`` (early stopping's held-out rows too, unweighted): the
points not strictly on their side, ``y_i f(x_i) <= τ_i`` with ``τ_i`` the
rounding bound of ``linsep._core.certificates.side_tolerance`` (a point on
the hyperplane is an error whichever side ``predict`` breaks the tie to;
``signed_errors``, ``sample_errors``), and of ``f`` itself (a kernel SK soft
margin's ``K + I/C`` aside).  So the last row's count is the model's.  The
kernel perceptron's count is of ``<= 0`` (its scores are kept incrementally,
without the kernel rows a bound needs).

Update-level traces
-------------------
``record_history="updates"`` records a row after every change of the
weights.  For the single-sample rules (perceptron, kernel perceptron, LMS)
that is the lecture's update-by-update table: row ``k`` is the ``k``-th
update (``k = 0`` the start), ``sample`` the sample it corrected and
``pass`` the pass it belongs to; the perceptron updates on mistakes only,
LMS at every visited sample.  ``iteration`` then counts updates, not
``n_iter_`` (passes), and the per-pass scalar keys (``mistakes``,
``training_errors``, ``criterion``) keep one entry per pass.  Every other
rule changes its weights once per iteration, so ``"updates"`` records
what ``True`` records.

Memory bound
------------
``record_history=True`` records every iterate; ``record_history=n``
(an int ``>= 1``) every ``n``-th (``k ≡ k_0 mod n``, ``k_0`` the first
iteration).  The final iterate is always recorded.  Whatever the stride,
the trace keys never hold much more than :data:`TRACE_BUDGET_BYTES`
(64 MiB): when a new row would pass it, every other row is dropped and the
stride doubles, so a long run keeps an evenly spaced subsample of its
whole course (Ho–Kashyap on N = 10⁵ samples, two N-vectors per row, keeps
34 of 1 000 iterations in 52 MiB).  The budget holds per binary problem;
the scalar keys are not subsampled.
"""

from __future__ import annotations

import contextlib
import contextvars
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["TRACE_BUDGET_BYTES", "TRACE_KEYS", "RECORD_HISTORY_CONSTRAINT", "TraceRecorder", "make_recorder"]

UPDATES = "updates"
"""``record_history="updates"``: a row after every change of the weights (see the module)."""

TRACE_BUDGET_BYTES = 64 * 2**20
"""Largest size of the trace keys of one binary problem (every other row dropped beyond it)."""

TRACE_KEYS = ("iteration", "weights", "dual_coef", "intercept", "margin_vector", "error_vector", "sample", "pass",
              "returned")
"""The keys a :class:`TraceRecorder` adds to ``history_``, in table order."""

RECORD_HISTORY_CONSTRAINT = ["boolean", Interval(Integral, 0, None, closed="left"), StrOptions({UPDATES})]
"""``_parameter_constraints`` entry of ``record_history``: a bool, a stride ``n >= 1`` (0: off), or ``"updates"``."""


_BUDGET_BYTES = contextvars.ContextVar("linsep_trace_budget_bytes", default=TRACE_BUDGET_BYTES)


@contextlib.contextmanager
def trace_budget(budget_bytes):
    """Private: the recorders :func:`make_recorder` makes in this block keep ``budget_bytes`` (tests: a small budget).

    Scoped to the block and to the current thread's context, as ``linsep._core.linalg.solver_limits``.
    """
    token = _BUDGET_BYTES.set(int(budget_bytes))
    try:
        yield
    finally:
        _BUDGET_BYTES.reset(token)


def make_recorder(record_history, budget_bytes=None):
    """A :class:`TraceRecorder` for an estimator's ``record_history``, or ``None`` when it is falsy.

    ``budget_bytes``: :data:`TRACE_BUDGET_BYTES`, or that of a :func:`trace_budget` block, unless given.
    """
    if not record_history:
        return None
    if budget_bytes is None:
        budget_bytes = _BUDGET_BYTES.get()
    if record_history == UPDATES:
        return TraceRecorder(stride=1, budget_bytes=budget_bytes, per_update=True)
    stride = 1 if record_history is True else int(record_history)
    return TraceRecorder(stride=stride, budget_bytes=budget_bytes)


class TraceRecorder:
    """Collect trace rows under the stride and byte budget of the module docstring.

    Parameters
    ----------
    stride : int
        Keep iterations ``k`` with ``(k - k_0) % stride == 0``.
    budget_bytes : int
        Size beyond which every other row is dropped and the stride doubled.
    per_update : bool
        The single-sample rules record a row per update (:meth:`record_update`)
        instead of one per pass.
    """

    def __init__(self, stride=1, budget_bytes=TRACE_BUDGET_BYTES, per_update=False):
        if stride < 1:
            raise ValueError(f"the trace stride must be >= 1, got {stride}")
        self.stride = int(stride)
        self.budget_bytes = int(budget_bytes)
        self._first = None
        self._rows = []
        self._nbytes = 0
        self.per_update = bool(per_update)
        self._updates = 0
        self._skipped_update = None
        self._returned = None

    def record_update(self, **values):
        """Record the row of the next update, numbered ``1, 2, …`` (the start is row 0, :meth:`record`).

        An update the stride skips is held until the next one, so that the
        last update is always kept (as :meth:`as_dict` adds it).
        """
        self._updates += 1
        if self.wants(self._updates):
            self.record(self._updates, **values)
            self._skipped_update = None
        else:
            self._skipped_update = (self._updates, self._kept(values))

    def wants(self, k):
        """Whether :meth:`record` would keep iteration ``k`` (lets solvers skip building a row)."""
        return self._first is None or (k - self._first) % self.stride == 0

    def record(self, k, *, final=False, **values):
        """Keep iteration ``k``'s ``values`` (arrays are copied) if the stride wants it, or if ``final``.

        A final row replaces a row of the same iteration already kept.
        """
        if not (final or self.wants(k)):
            return
        if self._first is None:
            self._first = int(k)
        if self._rows and self._rows[-1][0] == k:
            self._nbytes -= self._rows.pop()[1]
        row = self._kept(values)
        size = sum(8 * int(np.prod(v.shape)) for v in row.values()) + 16  # float64 entries
        if self._rows and self._nbytes + size > self.budget_bytes:
            self._thin()
        self._rows.append((int(k), size, row))
        self._nbytes += size

    def record_returned(self, k, **values):
        """Add the row of the returned model when it is not the final iterate (the trace then ends with it).

        Early stopping returns iterate ``k̂`` (``best_iter_``), a pocket the
        best iterate met: ``k`` is that iterate's number and ``values`` the
        returned model's vectors (the same keys as every other row).  The row
        escapes the stride and the budget's thinning and is marked in the
        ``returned`` key of :meth:`as_dict`.
        """
        self._returned = (int(k), self._kept(values))

    def _kept(self, values):
        """A row as kept: a float64 copy of each value (a recorder of device data keeps them on the device)."""
        return {name: np.array(value, dtype=float, copy=True) for name, value in values.items()}

    def _thin(self):
        # Every other recorded iterate goes; rows off the old stride (a final row) go too.
        self.stride *= 2
        kept = [r for r in self._rows if (r[0] - self._first) % self.stride == 0]
        self._rows = kept
        self._nbytes = sum(r[1] for r in kept)

    def as_dict(self, consume=False):
        """The trace keys as arrays with one row per recorded iterate (empty dict if none).

        ``consume`` frees each key's rows once stacked, so that building the
        arrays needs one key's worth of memory beyond the budget, not twice it;
        the recorder is then empty.
        """
        if self._skipped_update is not None:  # the last update, skipped by the stride
            k, values = self._skipped_update
            self._skipped_update = None
            self.record(k, final=True, **values)
        if not self._rows:
            return {}
        rows = self._rows if self._returned is None else [*self._rows, (self._returned[0], 0, self._returned[1])]
        out = {"iteration": np.array([r[0] for r in rows], dtype=np.int64)}
        for name in list(rows[0][2]):
            out[name] = np.stack([r[2][name] for r in rows])
            if consume:
                for r in rows:
                    del r[2][name]
        if self._returned is not None:
            out["returned"] = np.arange(len(rows)) == len(rows) - 1
        for name in ("sample", "pass"):
            if name in out:
                out[name] = out[name].astype(np.int64)
        if consume:
            self._rows, self._nbytes, self._first, self._returned = [], 0, None, None
        return out

    def merge_into(self, history):
        """``history`` (a dict, or ``None``) with the trace keys added; the recorder is emptied."""
        return {**(history or {}), **self.as_dict(consume=True)}
