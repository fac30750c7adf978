"""Compiled O(N) steps of kernel Schlesinger–Kozinec (Franc & Hlaváč 2003).

The single-pass scan, weight moves, SK / MDM step formulas and the dense
working-set solver behind :func:`linsep.solvers.kozinec.kernel_schlesinger_kozinec`,
plus the working-set helpers of its shrinking driver.

.. [1] V. Franc and V. Hlaváč, "An iterative algorithm learning the maximal
   margin classifier", Pattern Recognition 36(9):1985–1996, 2003.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# The hulls "touch" when the squared distance between the current points,
# a difference of numbers of the size of the largest squared norm seen, is
# within ~100 ulps of that size: the search direction is then rounding noise,
# and the convex coefficients prove overlap up to that rounding.
_TOUCH_RTOL = 1e-14


# The O(N) work of one kernel SK step, fused into single passes: the step
# itself is inherently sequential, and NumPy would make ~10 passes (and
# temporaries) over N floats for what is one scan and one axpy.
@njit(cache=True)
def _scan(f1, f2, positive, const_pos, const_neg, half_norm2):
    """``m_i‖w‖ = ±(f1_i - f2_i) + const``: argmin and training errors."""
    t, m_t, errors = 0, np.inf, 0
    for i in range(f1.shape[0]):
        m = f1[i] - f2[i] + const_pos if positive[i] else f2[i] - f1[i] + const_neg
        if m < m_t:
            t, m_t = i, m
        if m <= half_norm2:
            errors += 1
    return t, m_t, errors


@njit(cache=True)
def margin_floor(gamma, scale, A, B, norm):
    """The geometric margin below which a two-hull iterate does not separate: ``τ / ‖w‖``.

    ``τ = γ (2·s + |b|)`` bounds the rounding of a score
    :math:`y_i f(x_i) = m_i \\lVert w \\rVert - \\lVert w \\rVert^2 / 2` computed from
    the projections: :math:`f(x_i) = \\sum_j \\alpha_j y_j K_{ij} + b` has
    :math:`\\sum_j \\alpha_j |K_{ij}| \\le 2 \\cdot s` (each hull's coefficients sum
    to 1, :math:`|K_{ij}| \\le s`, the largest :math:`K_{tt}` seen) and
    :math:`b = (B - A) / 2`; ``γ`` is
    :func:`linsep._core.certificates.rounding_bound` of the terms summed —
    the tolerance of :func:`linsep._core.certificates.side_tolerance` in the
    solver's own arithmetic, so that Kozinec never stops on a point that
    rounding alone puts on its side.
    """
    return gamma * (2.0 * scale + 0.5 * abs(B - A)) / norm


@njit(cache=True)
def _move_weight(f, lam, col_t, col_r, t, r, shift):
    """``f += λ (K̃[:, t] - K̃[:, r])`` with ``K̃ = K + I·shift``."""
    for i in range(f.shape[0]):
        f[i] += lam * (col_t[i] - col_r[i])
    f[t] += lam * shift
    f[r] -= lam * shift


@njit(cache=True)
def _sk_step(cls, A, B, Cr, f1_t, f2_t, k_tt):
    """The Schlesinger–Kozinec step towards ``x_t`` of class ``cls`` (True: the first hull).

    Returns the step ``k ∈ [0, 1]`` minimising the distance between the hulls along the
    segment from the class's point to ``x_t``, and the updated products ``A = ‖p‖²``,
    ``B = ‖q‖²``, ``Cr = ⟨p, q⟩``, from ``f1_t = ⟨p, x_t⟩``, ``f2_t = ⟨q, x_t⟩`` and
    ``k_tt = ‖x_t‖²``.
    """
    if cls:
        num = A - Cr - f1_t + f2_t
        den = A - 2.0 * f1_t + k_tt
    else:
        num = B - Cr - f2_t + f1_t
        den = B - 2.0 * f2_t + k_tt
    k = min(1.0, max(0.0, num / den)) if den > 0.0 else 0.0
    if cls:
        A = (1 - k) ** 2 * A + 2 * k * (1 - k) * f1_t + k * k * k_tt
        Cr = (1 - k) * Cr + k * f2_t
    else:
        B = (1 - k) ** 2 * B + 2 * k * (1 - k) * f2_t + k * k * k_tt
        Cr = (1 - k) * Cr + k * f1_t
    return k, A, B, Cr


@njit(cache=True)
def _shrink_towards(f, k, col):
    """``f ← (1 - k) f + k col``."""
    for i in range(f.shape[0]):
        f[i] = (1.0 - k) * f[i] + k * col[i]


@njit(cache=True)
def _pair(f1, f2, positive, alpha_scaled, scale_c, t, m_t, const, col_t, diag, shift):
    """MDM partner of the worst point ``t``: the support point ``r`` of its class (second order).

    Moving ``λ`` of weight from ``r`` to ``t`` changes ``‖w‖²`` by
    ``-(2λg - λ²d)`` with ``g = m_r - m_t`` (margins times ``‖w‖``),
    ``d = ‖φ_t - φ_r‖²`` and ``λ = min(α_r, g/d)``; ``r`` maximises that
    decrease, as libsvm's second-order working-set selection does (Fan, Chen
    & Lin 2005).  ``α = scale_c · alpha_scaled``; ``diag`` holds ``K_ii``
    without ``shift`` for the support.  Returns ``(-1, -inf)`` when no
    support point lies above ``m_t``.
    """
    cls = positive[t]
    k_tt = col_t[t] + shift
    best, r, m_r = 0.0, -1, -np.inf
    for i in range(f1.shape[0]):
        if alpha_scaled[i] > 0.0 and positive[i] == cls and i != t:
            g = (f1[i] - f2[i] if cls else f2[i] - f1[i]) + const - m_t
            if g > 0.0:
                d = k_tt + diag[i] + shift - 2.0 * col_t[i]
                a = scale_c * alpha_scaled[i]
                lam = min(a, g / d) if d > 0.0 else a
                gain = 2.0 * lam * g - lam * lam * d
                if gain > best:
                    best, r, m_r = gain, i, g + m_t
    return r, m_r


@njit(cache=True)
def _solve_block(K, positive, alpha, f1, f2, A, B, Cr, max_steps, mdm, first_separating, eps_abs, tol,
                 scale, gamma):
    """SK / MDM steps on a working set whose Gram block ``K`` (shift on its diagonal) is dense.

    The same steps as :func:`kernel_schlesinger_kozinec` without shrinking,
    restricted to the working set; ``alpha``, ``f1``, ``f2`` are updated in
    place.  Returns ``(steps, code, A, B, Cr)`` with code 1 when the stopping
    rule holds *on the working set* (ε of the rule ``eps_abs``, or
    ``tol · upper bound`` when ``eps_abs < 0``), 2 when the hulls touch, 0
    when ``max_steps`` ran out.  A margin counts as positive above
    :func:`margin_floor` (``gamma`` the rounding bound of the scores).
    """
    n = K.shape[0]
    diag = np.diag(K).copy()
    for step in range(max_steps + 1):
        norm2 = A - 2.0 * Cr + B
        if norm2 <= _TOUCH_RTOL * scale:
            return step, 2, A, B, Cr
        norm = np.sqrt(norm2)
        const_pos, const_neg = B - Cr, A - Cr
        t, m_t = 0, np.inf
        for i in range(n):
            m = f1[i] - f2[i] + const_pos if positive[i] else f2[i] - f1[i] + const_neg
            if m < m_t:
                t, m_t = i, m
        margin, upper = m_t / norm - 0.5 * norm, 0.5 * norm
        if margin > margin_floor(gamma, scale, A, B, norm):
            if first_separating:
                return step, 1, A, B, Cr
            eps = eps_abs if eps_abs >= 0.0 else tol * upper
            if upper - margin <= eps:
                return step, 1, A, B, Cr
        if step == max_steps:
            return step, 0, A, B, Cr
        cls = positive[t]
        Kt = K[t]
        r, m_r = -1, -np.inf
        if mdm:
            r, m_r = _pair(f1, f2, positive, alpha, 1.0, t, m_t, const_pos if cls else const_neg, Kt,
                           diag, 0.0)
        if r >= 0:
            Kr = K[r]
            dist2 = Kt[t] + Kr[r] - 2.0 * Kt[r]
            a_r = alpha[r]
            lam = min(a_r, (m_r - m_t) / dist2) if dist2 > 0.0 else a_r
            if cls:
                A += 2.0 * lam * (f1[t] - f1[r]) + lam * lam * dist2
                Cr += lam * (f2[t] - f2[r])
                for i in range(n):
                    f1[i] += lam * (Kt[i] - Kr[i])
            else:
                B += 2.0 * lam * (f2[t] - f2[r]) + lam * lam * dist2
                Cr += lam * (f1[t] - f1[r])
                for i in range(n):
                    f2[i] += lam * (Kt[i] - Kr[i])
            alpha[t] += lam
            alpha[r] = 0.0 if lam >= a_r else a_r - lam
            continue
        k, A, B, Cr = _sk_step(cls, A, B, Cr, f1[t], f2[t], Kt[t])
        if cls:
            for i in range(n):
                f1[i] = (1.0 - k) * f1[i] + k * Kt[i]
        else:
            for i in range(n):
                f2[i] = (1.0 - k) * f2[i] + k * Kt[i]
        for i in range(n):
            if positive[i] == cls:
                alpha[i] = 0.0 if k >= 1.0 else (1.0 - k) * alpha[i]
        alpha[t] += k
    return max_steps, 0, A, B, Cr


def _hull_products(f1, f2, alpha, positive):
    """``A = ⟨w1,w1⟩``, ``B = ⟨w2,w2⟩``, ``C = ⟨w1,w2⟩`` from the projections ``f``."""
    a1, a2 = np.where(positive, alpha, 0.0), np.where(positive, 0.0, alpha)
    return float(a1 @ f1), float(a2 @ f2), float(a1 @ f2)


# Working-set sizes of the shrinking solver: the first working set, and the
# smallest number of candidate points (beyond the support) it keeps.
_WORKING_SET = 256
_MIN_CANDIDATES = 128
# inner ε on a proper subset, as a fraction of the asked one: a pass on W
# then rarely fails on all points (measured: 0.5–0.8 are equally fast)
_INNER = 0.8


def _initial_working_set(positive, size):
    """``size`` points spread evenly over each class (in proportion), deterministic."""
    n = positive.size
    if n <= size:
        return np.arange(n)
    parts = []
    for members in (np.flatnonzero(positive), np.flatnonzero(~positive)):
        k = max(1, min(members.size, round(size * members.size / n)))
        parts.append(members[np.linspace(0, members.size - 1, k).round().astype(int)])
        parts.append(members[:1])  # the plain solver's starting point
    return np.unique(np.concatenate(parts))
