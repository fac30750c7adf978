"""The batch perceptron and batch Widrow–Hoff written with a design's products, for designs that keep their rows.

:func:`batch_perceptron_on_design` and :func:`widrow_hoff_on_design` are the
iterations of :func:`linsep.solvers.perceptron.solver.batch_perceptron` and
:func:`linsep.solvers.mse.widrow_hoff` over an
:class:`~linsep.designs.array_api.ArrayAPIDesign` (``design.scores``,
``design.rmatvec``): the weights stay with the data (on the input's device)
and each iteration reads a few numbers (``read_scalars``: one copy for all
of them).  The NumPy solvers stay the reference; the fits of array-API
input call these.

With a ``trace`` (a :class:`~linsep.designs.array_api.DeviceTraceRecorder`)
they record the NumPy solvers' rows, kept on the device and brought to the
host once at the end, and ``training_errors``: the count of ``y_i f(x_i) <=
0`` read with the iteration's other numbers (the NumPy trace counts within
the rounding bound of ``signed_errors``, which would need ``|X|``, a copy of
``X``, on the device: the two differ only for a point within rounding of the
hyperplane).
"""

from __future__ import annotations

import numpy as np

from linsep._core.plan import dtype_plan
from linsep._core.result import CONVERGED, MAX_ITER, SEPARABLE, SolveResult
from linsep.designs.array_api import read_scalars
from linsep.solvers.perceptron.solver import step_size

__all__ = ["batch_perceptron_on_design", "widrow_hoff_on_design"]


def _starting(design, start):
    xp = design.xp
    return xp.zeros(design.shape[1], dtype=xp.float64, device=design.device) if start is None else \
        xp.asarray(start, dtype=xp.float64, device=design.device)


def batch_perceptron_on_design(design, *, learning_rate, schedule, margin, max_iter, initial_weights=None,
                               trace=None):
    """The batch rule ``a ← a + η_k Yᵀ 1_M`` over the mistakes ``M = {i : aᵗy_i <= b}``, on the design.

    Each iteration reads one number, the count of mistakes (``history["mistakes"]``), two with a ``trace``.
    """
    xp, margin = design.xp, float(margin)
    a = _starting(design, initial_weights)
    mistakes, errors, status = [], [], MAX_ITER
    if trace is not None:
        trace.record(0, weights=a)
    for k in range(1, max_iter + 1):
        scores = design.scores(a)
        wrong = xp.astype(scores <= margin, design.X.dtype)
        if trace is None:
            (count,) = read_scalars(xp, [xp.sum(wrong)])
        else:
            count, error_count = read_scalars(xp, [xp.sum(wrong), xp.count_nonzero(scores <= 0)])
            errors.append(int(error_count))
        mistakes.append(int(count))
        if count == 0:
            status = SEPARABLE
            break
        a = a + step_size(learning_rate, schedule, k) * design.rmatvec(wrong)
        if trace is not None and trace.wants(k):
            trace.record(k, weights=a)
    scores = design.scores(a)
    smallest, finite, final_errors = read_scalars(xp, [xp.min(scores), xp.all(xp.isfinite(a)),
                                                       xp.count_nonzero(scores <= 0)])
    if status == MAX_ITER and smallest > margin:
        status = SEPARABLE
    if not finite:
        raise FloatingPointError("the batch perceptron's weights overflow; scale the features")
    history = {"mistakes": np.asarray(mistakes, dtype=np.int64)}
    if trace is not None:
        trace.record(len(mistakes), final=True, weights=a)
        errors.append(int(final_errors))
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    return SolveResult(weights=design.host_weights(a, design.dtype), n_iter=len(mistakes), status=status,
                       history=history, extra={"plan": dtype_plan(design.dtype)})


def widrow_hoff_on_design(design, b, *, learning_rate, schedule, max_iter, tol, initial_weights=None, trace=None):
    """Batch gradient descent ``a ← a − η_k Yᵀ(Ya − b)`` on the design, to ``‖Yᵀ(Ya − b)‖ <= tol ‖Yᵀb‖``.

    ``learning_rate`` is :math:`\\eta_1` (already chosen); each iteration reads
    two numbers (the criterion and the gradient's norm) in one copy (three with a ``trace``).
    """
    xp = design.xp
    a = _starting(design, initial_weights)
    (norm_b,) = read_scalars(xp, [xp.linalg.vector_norm(design.rmatvec(b))])
    target = tol * norm_b
    criterion, errors, status, k = [], [], MAX_ITER, 0
    while True:
        r = design.scores(a) - b
        g = design.rmatvec(r)
        statistics = [xp.sum(r * r), xp.linalg.vector_norm(g), xp.all(xp.isfinite(a))]
        if trace is not None:
            statistics.append(xp.count_nonzero(r + b <= 0))
        J, norm_g, finite, *counted = read_scalars(xp, statistics)
        if trace is not None:
            errors.append(int(counted[0]))
            if trace.wants(k):
                trace.record(k, weights=a, margin_vector=b, error_vector=r)
        if not finite:
            raise FloatingPointError(
                f"Widrow–Hoff diverged at iteration {k}: the learning rate is too large for this data; "
                "use learning_rate=None (automatic) or a smaller value, or scale the features")
        criterion.append(J)
        if norm_g <= target:
            status = CONVERGED
            break
        if k >= max_iter:
            break
        k += 1
        a = a - step_size(learning_rate, schedule, k) * g
    (smallest,) = read_scalars(xp, [xp.min(r + b)])
    history = {"criterion": np.asarray(criterion)}
    if trace is not None:
        trace.record(k, final=True, weights=a, margin_vector=b, error_vector=r)
        history = trace.merge_into({**history, "training_errors": np.asarray(errors, dtype=np.int64)})
    return SolveResult(weights=design.host_weights(a, design.dtype), n_iter=k,
                       status=SEPARABLE if smallest > 0 else status, margin=b,
                       history=history, extra={"plan": dtype_plan(design.dtype)})
