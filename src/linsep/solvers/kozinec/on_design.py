"""Kozinec and Schlesinger–Kozinec on a design's namespace: the steps of the NumPy solver as array operations.

:func:`schlesinger_kozinec_on_designs` runs, for each ``±1`` problem of one
``X``, the iteration of :func:`linsep.solvers.kozinec.schlesinger_kozinec`
(both formulations, both rules, hard margin or :math:`G + I/C`) with every
N-sized quantity in the design's namespace and on its device (e.g. a CUDA
tensor's): the projections :math:`f_1, f_2` (two-hull) or
:math:`p_i = \\langle \\omega, \\xi_i \\rangle` (augmented), the convex
coefficients and the Gram column of each step
(:class:`linsep.designs.array_api_kozinec.DeviceGramColumns`, float64 as in
memory).  One step is the paper's: one Gram column (an :math:`N \\cdot d`
matrix-vector product), the worst point :math:`\\operatorname{argmin}_i m(x_i)`
(the first index among ties, as the compiled scan takes), the step size
:math:`k` and the products :math:`A, B, C` (or :math:`\\lVert \\omega \\rVert^2`)
updated as 0-d arrays on the device, and :math:`O(N)` vector updates.

**Each step reads a few scalars, in one copy**: the worst point's index, its
score, the training-error count, :math:`A, B, C` (or
:math:`\\lVert \\omega \\rVert^2`), the largest diagonal entry seen, the class
of the worst point and the previous step's :math:`k` (nine numbers; five for
the augmented form);
the stopping rules, the touch test and the pocket are then decided on the
host in the NumPy solver's own float64 arithmetic, so the iterates, ``n_iter``
and ``status`` are those of the NumPy fit (the products are summed in the
device's order: rounding apart).  At the end the weights (``d + 1`` numbers,
with the centre for the two-hull form) cross once.  A ``not_separable``
verdict's certificate (the convex coefficients) stays on the device; the
estimator checks it on the host (an explicit copy of the rows, on that
verdict only).  No trace is recorded here.
"""

from __future__ import annotations

import numpy as np

from linsep._core.certificates import rounding_bound
from linsep._core.result import MAX_ITER, NOT_SEPARABLE, SolveResult
from linsep.designs.array_api import read_scalars, to_host
from linsep.designs.array_api_kozinec import DeviceGramColumns
from linsep.solvers.kozinec.loops import _TOUCH_RTOL
from linsep.solvers.kozinec.solver import FORMULATIONS, RULES, _stopped

__all__ = ["schlesinger_kozinec_on_designs"]


def schlesinger_kozinec_on_designs(designs, *, formulation="two_hull", rule="sk", C=None, epsilon=None, tol=1e-2,
                                   max_iter=100_000):
    """Kozinec / SK for each design (one ``±1`` problem of the same ``X`` each), on the designs' device.

    Parameters
    ----------
    designs : list of design
        Objects with ``X`` (N, d), labels ``y`` (±1, both present), ``xp``
        and ``device`` (:class:`linsep.designs.array_api.ArrayAPIDesign`), all
        of one ``X``: they share its Gram columns.
    formulation, rule, C, epsilon, tol, max_iter
        As in :func:`linsep.solvers.kozinec.schlesinger_kozinec`.

    Returns
    -------
    list of SolveResult
        One per design, as :func:`~linsep.solvers.kozinec.schlesinger_kozinec`
        returns it: ``weights`` :math:`(w, b)` on the host (float64), ``status``,
        ``n_iter``, ``certificate`` (the convex coefficients on the device, for
        ``"not_separable"``), ``extra`` with ``margin``, ``margin_upper_bound``
        and ``coefficients`` (on the device).
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
    first = designs[0]
    columns = DeviceGramColumns(first.X, first.xp, first.device, centred=formulation == "two_hull")
    solve = _two_hull if formulation == "two_hull" else _augmented
    shift = 0.0 if C is None else 1.0 / float(C)
    return [solve(columns, design.xp.astype(design.y, design.xp.float64), rule, shift, epsilon, tol, int(max_iter))
            for design in designs]


def _two_hull(columns, y, rule, shift, epsilon, tol, max_iter):
    """The two-hull steps of ``_kernel_sk_plain`` (SK update, linear kernel on centred rows) on the device."""
    xp = columns.xp
    n = y.shape[0]
    positive = y > 0
    i1, i2 = (int(v) for v in read_scalars(xp, [xp.argmax(xp.astype(positive, xp.int32)),
                                                 xp.argmax(xp.astype(~positive, xp.int32))]))  # first of each class
    f1 = _shifted(columns.column(i1), i1, shift)
    f2 = _shifted(columns.column(i2), i2, shift)
    A, B, Cr = f1[i1], f2[i2], f1[i2]  # ⟨w1,w1⟩, ⟨w2,w2⟩, ⟨w1,w2⟩: 0-d arrays on the device
    scale = xp.maximum(A, B)  # largest K_tt seen: the yardstick of rounding in ‖w‖²
    beta = xp.zeros(n, dtype=xp.float64, device=columns.device)
    beta[i1] = 1.0
    beta[i2] = 1.0
    shrink = {True: 1.0, False: 1.0}  # α_i = shrink[class] · beta_i, as in memory
    status, margin, upper_bound = MAX_ITER, 0.0, 0.0
    errors, pocket, pending = n + 1, None, None
    gamma = rounding_bound(n + 1)
    k = xp.zeros((), dtype=xp.float64, device=columns.device)
    n_iter = 0
    for n_iter in range(max_iter + 1):
        # the scan: m_i ‖w‖ = ±(f1_i - f2_i) + const, its argmin (first index) and the errors, all on the device
        norm2 = A - 2.0 * Cr + B
        norm = xp.sqrt(xp.clip(norm2, min=0.0))
        safe = xp.where(norm > 0.0, norm, xp.ones_like(norm))
        floor = gamma * (2.0 * scale + 0.5 * xp.abs(B - A)) / safe  # margin_floor, in the same order
        gap = f1 - f2
        m = xp.where(positive, gap + (B - Cr), (A - Cr) - gap)  # (f2 - f1) + c, the compiled scan's numbers
        del gap
        t_dev = xp.argmin(m)
        values = read_scalars(xp, [t_dev, xp.min(m), xp.count_nonzero(m <= 0.5 * norm2 + floor * norm),
                                   A, B, Cr, scale, k, xp.take(y, xp.reshape(t_dev, (1,)))[0]])  # one copy
        t, m_t, count, A_h, B_h, Cr_h, scale_h, k_h, y_t = values
        t, count = int(t), int(count)
        if pending is not None:  # the previous step's coefficients, with its k now on the host
            beta = _moved_coefficients(xp, beta, positive, shrink, k_h, *pending)
        norm2_h = A_h - 2.0 * Cr_h + B_h
        if norm2_h <= _TOUCH_RTOL * scale_h:  # the hulls touch, to rounding
            status, errors = NOT_SEPARABLE, n + 1
            break
        norm_h = np.sqrt(norm2_h)
        floor_h = gamma * (2.0 * scale_h + 0.5 * abs(B_h - A_h)) / norm_h
        errors = count
        margin, upper_bound = m_t / norm_h - 0.5 * norm_h, 0.5 * norm_h
        stop = _stopped(rule, margin, upper_bound, epsilon, tol, floor_h)
        if stop is not None:
            status = stop
            break
        if n_iter == max_iter:
            break
        if pocket is None or errors < pocket[0]:  # the iterate with the fewest errors so far (strict decrease)
            pocket = (errors, _alpha(xp, beta, positive, shrink, columns.device), A_h, B_h, margin, upper_bound)
        cls = y_t > 0  # x_t's class (read with the scan's scalars)
        col = columns.column(t)
        k_tt = col[t] + shift
        scale = xp.maximum(scale, k_tt)
        f1_t, f2_t = f1[t], f2[t]
        if cls:
            num, den = A - Cr - f1_t + f2_t, A - 2.0 * f1_t + k_tt
        else:
            num, den = B - Cr - f2_t + f1_t, B - 2.0 * f2_t + k_tt
        positive_den = den > 0.0
        k = xp.where(positive_den, xp.clip(num / xp.where(positive_den, den, xp.ones_like(den)), min=0.0, max=1.0),
                     xp.zeros_like(den))
        if cls:
            A = (1 - k) ** 2 * A + 2 * k * (1 - k) * f1_t + k * k * k_tt
            Cr = (1 - k) * Cr + k * f2_t
            f1 = _shifted((1.0 - k) * f1 + k * col, t, k * shift if shift else 0.0)
        else:
            B = (1 - k) ** 2 * B + 2 * k * (1 - k) * f2_t + k * k * k_tt
            Cr = (1 - k) * Cr + k * f1_t
            f2 = _shifted((1.0 - k) * f2 + k * col, t, k * shift if shift else 0.0)
        pending = (t, cls)
    alpha = _alpha(xp, beta, positive, shrink, columns.device)
    certificate = alpha if status == NOT_SEPARABLE else None
    A_out, B_out = A_h, B_h
    if status in (MAX_ITER, NOT_SEPARABLE) and pocket is not None and pocket[0] < errors:
        _, alpha, A_out, B_out, margin, upper_bound = pocket
    w_and_center = to_host(xp.concat([columns.rmatvec(alpha * y), columns.center]), xp)  # 2d numbers, once
    d = w_and_center.size // 2
    w, center = w_and_center[:d], w_and_center[d:]
    intercept = 0.5 * (B_out - A_out) - float(w @ center)
    return SolveResult(weights=np.append(w, intercept), n_iter=n_iter, status=status, certificate=certificate,
                       extra={"margin": float(margin), "margin_upper_bound": float(upper_bound),
                              "coefficients": alpha})


def _augmented(columns, y, rule, shift, epsilon, tol, max_iter):
    """The augmented-form steps of ``_augmented`` (:math:`\\xi_i = y_i (x_i, 1)`) on the device."""
    xp = columns.xp
    n = y.shape[0]
    alpha = xp.zeros(n, dtype=xp.float64, device=columns.device)  # convex coefficients: ω = Yᵀα
    alpha[0] = 1.0
    p = _shifted(y * y[0] * (columns.column(0) + 1.0), 0, shift)
    norm2 = p[0]
    scale = norm2  # largest ‖ξ_k‖² seen: the yardstick of rounding in ‖ω‖²
    status, margin, upper_bound = MAX_ITER, 0.0, 0.0
    errors, pocket = n + 1, None
    gamma = rounding_bound(n + 1)
    n_iter = 0
    for n_iter in range(max_iter + 1):
        k_dev = xp.argmin(p)
        values = read_scalars(xp, [k_dev, xp.min(p), xp.count_nonzero(p <= gamma * scale), norm2,
                                   scale])  # the step's few scalars: one copy
        k, p_k, count, norm2_h, scale_h = values
        k = int(k)
        if norm2_h <= _TOUCH_RTOL * scale_h:  # the origin is in the hull, to rounding
            status, errors = NOT_SEPARABLE, n + 1
            break
        norm_h = np.sqrt(norm2_h)
        margin, upper_bound = p_k / norm_h, norm_h
        floor = gamma * scale_h
        errors = int(count)
        stop = _stopped(rule, margin, upper_bound, epsilon, tol, floor / norm_h)
        if stop is not None:
            status = stop
            break
        if n_iter == max_iter:
            break
        if pocket is None or errors < pocket[0]:
            pocket = (errors, xp.asarray(alpha, copy=True), margin, upper_bound)
        g = _shifted(y * (y[k] * (columns.column(k) + 1.0)), k, shift)  # G[:, k]
        g_k, p_kd = g[k], p[k]
        scale = xp.maximum(scale, g_k)
        num = norm2 - p_kd
        den = norm2 - 2.0 * p_kd + g_k
        positive_den = den > 0.0
        t = xp.where(positive_den, xp.clip(num / xp.where(positive_den, den, xp.ones_like(den)), min=0.0, max=1.0),
                     xp.zeros_like(den))
        norm2 = (1 - t) ** 2 * norm2 + 2 * t * (1 - t) * p_kd + t * t * g_k
        p = p * (1.0 - t) + t * g
        alpha = alpha * (1.0 - t)
        alpha[k] = alpha[k] + t
    certificate = xp.asarray(alpha, copy=True) if status == NOT_SEPARABLE else None
    if status in (MAX_ITER, NOT_SEPARABLE) and pocket is not None and pocket[0] < errors:
        _, alpha, margin, upper_bound = pocket
    weighted = alpha * y
    omega = to_host(xp.concat([columns.rmatvec(weighted), xp.reshape(xp.sum(weighted), (1,))]), xp)  # d + 1, once
    return SolveResult(weights=omega, n_iter=n_iter, status=status, certificate=certificate,
                       extra={"margin": float(margin), "margin_upper_bound": float(upper_bound),
                              "coefficients": alpha})


def _shifted(vector, j, amount):
    """``vector`` with ``amount`` (a number or a 0-d array) added to entry ``j`` (nothing added for 0)."""
    if isinstance(amount, float) and amount == 0.0:
        return vector
    vector[j] = vector[j] + amount
    return vector


def _alpha(xp, beta, positive, shrink, device):
    """The convex coefficients ``α = shrink[class] · beta`` (a new array on the device)."""
    return beta * xp.where(positive, xp.asarray(shrink[True], dtype=xp.float64, device=device),
                           xp.asarray(shrink[False], dtype=xp.float64, device=device))


def _moved_coefficients(xp, beta, positive, shrink, k, t, cls):
    """``beta`` after a step of size ``k`` (read on the host) towards ``x_t`` of class ``cls``, as in memory."""
    own = positive if cls else ~positive
    if k >= 1.0:  # the class's point jumps to x_t: restart its coefficients
        beta = xp.where(own, xp.zeros_like(beta), beta)
        shrink[cls] = 1.0
        beta[t] = 1.0
        return beta
    shrink[cls] *= 1.0 - k
    beta[t] = beta[t] + k / shrink[cls]
    if shrink[cls] < 1e-150:  # renormalise before underflow
        beta = xp.where(own, beta * shrink[cls], beta)
        shrink[cls] = 1.0
    return beta

