"""Kozinec and Schlesinger–Kozinec (SK): nearest points of convex hulls.

Both algorithms look for the point of a convex hull nearest to another point
(or hull) by moving, at every step, to the nearest point of a segment.  Two
formulations are implemented.

Augmented form (the seed note, Huber after [1]_)
    With :math:`\\xi_i = y_i (x_i, 1)` and :math:`\\omega = (w, b)`, a
    separating hyperplane is an :math:`\\omega` with
    :math:`\\langle \\omega, \\xi_i \\rangle > 0` for all :math:`i`.  Starting
    from :math:`\\omega = \\xi_1`,

    .. math::

        \\begin{aligned}
        \\omega &\\leftarrow (1 - t_*)\\,\\omega + t_*\\,\\xi_k, \\\\
        t_* &= \\min\\Bigl(1, \\frac{\\langle \\omega, \\omega - \\xi_k \\rangle}
                                {\\lVert \\omega - \\xi_k \\rVert^2}\\Bigr),
        \\end{aligned}

    i.e. :math:`\\omega` moves to the point of the segment
    :math:`[\\omega, \\xi_k]` nearest to the origin.  The iterates stay in
    :math:`\\operatorname{Conv}(\\Xi)`, :math:`\\Xi = \\{\\xi_i\\}`, and their
    norm decreases; the limit

    .. math::

        \\omega_* = \\operatorname*{argmin}_{\\omega \\in \\operatorname{Conv}(\\Xi)} \\lVert \\omega \\rVert

    is the maximal-margin hyperplane *through the origin of the augmented
    space*, so the bias is inside the norm (the margin is that of
    :math:`(w, b)` in :math:`\\mathbb{R}^{d+1}`).  :math:`\\lVert \\omega \\rVert`
    bounds the optimal (augmented) margin from above and
    :math:`\\min_i \\langle \\omega, \\xi_i \\rangle / \\lVert \\omega \\rVert` is
    the margin of :math:`\\omega`.

Two-hull form (Franc & Hlaváč [1]_, the default)
    :math:`w_1 \\in \\operatorname{Conv}\\{x_i : y_i = +1\\}`,
    :math:`w_2 \\in \\operatorname{Conv}\\{x_i : y_i = -1\\}`, started at one
    sample of each class.  With :math:`w = w_1 - w_2` and

    .. math::

        m(x_i) = \\begin{cases}
            \\dfrac{\\langle x_i - w_2, w \\rangle}{\\lVert w \\rVert}, & y_i = +1, \\\\[1ex]
            \\dfrac{\\langle w_1 - x_i, w \\rangle}{\\lVert w \\rVert}, & y_i = -1,
        \\end{cases}

    the point :math:`x_t = \\operatorname{argmin}_i m(x_i)` moves its own
    class's point (symmetrically for :math:`w_2`):

    .. math::

        \\begin{aligned}
        w_1 &\\leftarrow (1 - k)\\, w_1 + k\\, x_t, \\\\
        k   &= \\min\\Bigl(1, \\frac{\\langle w_1 - w_2, w_1 - x_t \\rangle}
                              {\\lVert w_1 - x_t \\rVert^2}\\Bigr).
        \\end{aligned}

    The hyperplane is the bisector of :math:`[w_2, w_1]`:

    .. math::

        f(x) = \\langle w, x \\rangle + b, \\qquad
        b = \\tfrac12 \\bigl( \\lVert w_2 \\rVert^2 - \\lVert w_1 \\rVert^2 \\bigr),

    whose geometric margin is
    :math:`\\min_i m(x_i) - \\lVert w \\rVert / 2`; half the distance
    :math:`\\lVert w \\rVert / 2` bounds the optimal margin from above.  The limit is the true
    maximal-margin (hard-margin SVM) hyperplane with an unpenalised bias.

Stopping rules
    Kozinec: stop at the first separating hyperplane (every point strictly on
    its side), status ``"separable"``.  SK: stop when the hyperplane is
    :math:`\\varepsilon`-optimal,
    :math:`\\mathit{margin\\_upper\\_bound} - \\mathit{margin} \\le \\varepsilon`
    with a positive margin, status ``"converged"``; :math:`\\varepsilon` is
    absolute (``epsilon``) or relative to the upper bound (``tol``), which
    makes the rule invariant to the data scale.  Both pick the worst point
    :math:`\\operatorname{argmin}_i m(x_i)` (for Kozinec any violator
    would do; the worst one is Franc & Hlaváč's choice and needs fewer steps).
    Non-separable data never satisfy either rule: the loop ends at
    ``max_iter`` (status ``"max_iter"``), unless the hulls are found to
    touch — :math:`\\lVert w \\rVert^2` (or :math:`\\lVert \\omega \\rVert^2`)
    at rounding level — which gives ``"not_separable"`` with the convex
    coefficients as certificate (:math:`u \\ge 0`, :math:`Y^t u \\approx 0`).  In both cases the iterate with the fewest
    training errors seen ("pocket") is returned rather than the last one,
    whose direction is meaningless once the hulls overlap.

Implementation
    All three forms run on inner products only: the augmented form keeps
    :math:`p_i = \\langle \\omega, \\xi_i \\rangle` and
    :math:`\\lVert \\omega \\rVert^2`, the two-hull form is the kernel one with
    the linear kernel (on centred data, where the hull distance is unchanged
    and rounding smaller).  A step then costs one Gram column (an
    :math:`O(Nd)` product, or nothing when cached) plus :math:`O(N)` vector
    updates.

Kernel two-hull SK (Franc & Hlaváč 2003, §5)
    :func:`~linsep.solvers.kozinec.kernel_schlesinger_kozinec` runs the two-hull SK on
    :math:`w_1 = \\sum_{y_i = +1} \\alpha_i \\varphi(x_i)`,
    :math:`w_2 = \\sum_{y_i = -1} \\alpha_i \\varphi(x_i)` and keeps only inner
    products: :math:`A = \\langle w_1, w_1 \\rangle`,
    :math:`B = \\langle w_2, w_2 \\rangle`, :math:`C = \\langle w_1, w_2 \\rangle`
    and, for every sample, :math:`f_1(i) = \\langle w_1, \\varphi(x_i) \\rangle`,
    :math:`f_2(i) = \\langle w_2, \\varphi(x_i) \\rangle`.  One step needs the
    single kernel column :math:`K_{:, t}`; with
    :math:`w_1 \\leftarrow (1 - k)\\, w_1 + k\\, \\varphi(x_t)`

    .. math::

        \\begin{aligned}
        A   &\\leftarrow (1 - k)^2 A + 2k(1 - k) f_1(t) + k^2 K_{tt}, \\\\
        C   &\\leftarrow (1 - k)\\, C + k f_2(t), \\\\
        f_1 &\\leftarrow (1 - k)\\, f_1 + k K_{:, t},
        \\end{aligned}

    and

    .. math::

        k = \\min\\Bigl(1, \\frac{A - C - f_1(t) + f_2(t)}{A - 2 f_1(t) + K_{tt}}\\Bigr).

    A soft margin with quadratic slacks (the L2-SVM) is the hard margin for
    the kernel :math:`K + I/C` [1]_ (§6): the column gains :math:`1/C` on its
    own row.

    Shrinking (as libsvm's): most points are settled far from the boundary,
    so a step need not scan them.  The steps run on a small working set with
    its dense Gram block, and the stopping rule is tested on all N points
    (projections recomputed from the support's columns) before it is
    accepted; a failed test brings the violators into the working set.

References
----------
.. [1] V. Franc and V. Hlaváč, "An iterative algorithm learning the maximal
   margin classifier", Pattern Recognition 36(9):1985–1996, 2003.
.. [2] M. I. Schlesinger and V. Hlaváč, Ten Lectures on Statistical and
   Structural Pattern Recognition, Springer, 2002, lecture 5.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from linsep.kernels import KernelColumnCache
from linsep._core.result import CONVERGED, MAX_ITER, NOT_SEPARABLE, SEPARABLE, SolveResult
from linsep._core.certificates import rounding_bound
from linsep._core.compilation import prepare
from linsep.solvers.kozinec.loops import (_INNER, _MIN_CANDIDATES, _TOUCH_RTOL, _WORKING_SET, _hull_products,
                             _initial_working_set, _move_weight, _pair, _scan, _shrink_towards,
                             _sk_step, _solve_block, margin_floor)

FORMULATIONS = ("two_hull", "augmented")
RULES = ("kozinec", "sk")
UPDATES = ("sk", "mdm")


def _threshold(epsilon, tol, upper_bound):
    """The ε of the SK rule: absolute ``epsilon`` if given, else ``tol · upper bound``."""
    return float(epsilon) if epsilon is not None else float(tol) * upper_bound


def _check_args(rule, formulation, y):
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
    y = np.asarray(y, dtype=float)
    if not (np.any(y > 0) and np.any(y < 0)):
        raise ValueError("both classes (+1 and -1) are needed")
    return y


def _stopped(rule, margin, upper_bound, epsilon, tol, floor=0.0):
    """Status if the stopping rule of ``rule`` holds, else None.

    A margin at most ``floor`` (the rounding bound of the scores divided by
    ``‖w‖``, :func:`~linsep.solvers.kozinec.loops.margin_floor`) is not
    positive: a point that close to the hyperplane is on it, never strictly
    on its side, so neither rule stops there.
    """
    if margin <= floor:
        return None
    if rule == "kozinec":
        return SEPARABLE
    if upper_bound - margin <= _threshold(epsilon, tol, upper_bound):
        return CONVERGED
    return None


def _record_and_check(hist, rule, margin, upper_bound, errors, epsilon, tol, floor=0.0):
    """Append the iterate's margin, bound and errors to ``hist`` (if kept); return :func:`_stopped`."""
    if hist is not None:
        hist["margin"].append(margin)
        hist["margin_upper_bound"].append(upper_bound)
        hist["training_errors"].append(errors)
    return _stopped(rule, margin, upper_bound, epsilon, tol, floor)


def _record_touch(hist, upper_bound, errors):
    """The scalar traces of the final iterate of touching hulls: no margin, ``‖w‖`` (at rounding level), its errors."""
    hist["margin"].append(0.0)
    hist["margin_upper_bound"].append(upper_bound)
    hist["training_errors"].append(errors)


def _augmented(X, y, rule, C, epsilon, tol, max_iter, record_history, trace=None):
    # ω = Σ α_i ξ_i is kept through p_i = ⟨ω, ξ_i⟩ and ‖ω‖², updated with one
    # column of G_ij = ⟨ξ_i, ξ_j⟩ = y_i y_j (⟨x_i, x_j⟩ + 1) (+ δ_ij / C) per step.
    cache = KernelColumnCache(X, kernel="linear")
    shift = 0.0 if C is None else 1.0 / float(C)
    alpha = np.zeros(X.shape[0])  # convex coefficients: ω = Yᵀα
    alpha[0] = 1.0
    p = y * y[0] * (cache.column(0) + 1.0)
    p[0] += shift
    norm2 = p[0]
    scale = norm2  # largest ‖ξ_k‖² seen: the yardstick of rounding in ‖ω‖²
    hist = {"margin": [], "margin_upper_bound": [], "training_errors": []}
    status, certificate = MAX_ITER, None
    margin = upper_bound = 0.0
    errors, pocket = X.shape[0] + 1, None
    n_iter, corrected = 0, -1
    # |p_i| = |Σ_k α_k G_ik| <= scale (convex α, |G_ik| <= scale): the rounding bound
    # of a score is γ · scale, as side_tolerance bounds that of the estimator's score
    gamma = rounding_bound(X.shape[0] + 1)

    def omega_of(alpha):
        return np.append(np.asarray(X.T @ (alpha * y)).ravel(), float(alpha @ y))  # Yᵀα

    for n_iter in range(max_iter + 1):
        if trace is not None and trace.wants(n_iter):
            trace.record(n_iter, weights=omega_of(alpha), sample=corrected)
        if norm2 <= _TOUCH_RTOL * scale:  # the origin is in the hull, to rounding
            status, certificate, errors = NOT_SEPARABLE, alpha.copy(), X.shape[0] + 1
            if record_history:  # the scalar traces end at the final iterate, as its row does
                _record_touch(hist, np.sqrt(max(norm2, 0.0)), int(np.count_nonzero(p <= gamma * scale)))
            break
        norm = np.sqrt(norm2)
        k = int(np.argmin(p))
        margin, upper_bound = p[k] / norm, norm
        floor = gamma * scale  # a score at most this is a point on the hyperplane
        errors = int(np.count_nonzero(p <= floor))
        stop = _record_and_check(hist if record_history else None, rule, margin, upper_bound, errors,
                                 epsilon, tol, floor / norm)
        if stop is not None:
            status = stop
            break
        if n_iter == max_iter:
            break
        if pocket is None or errors < pocket[0]:  # see kernel_schlesinger_kozinec
            pocket = (errors, alpha.copy(), margin, upper_bound, n_iter, corrected)
        g = y * (y[k] * (cache.column(k) + 1.0))  # G[:, k]
        g[k] += shift
        scale = max(scale, g[k])
        # t* = ⟨ω, ω - ξ_k⟩ / ‖ω - ξ_k‖², positive whenever the rule failed
        num = norm2 - p[k]
        den = norm2 - 2.0 * p[k] + g[k]
        t = min(1.0, max(0.0, num / den)) if den > 0 else 0.0
        norm2 = (1 - t) ** 2 * norm2 + 2 * t * (1 - t) * p[k] + t * t * g[k]
        p *= 1.0 - t
        p += t * g
        alpha *= 1.0 - t
        alpha[k] += t
        corrected = k
    if trace is not None:
        trace.record(n_iter, final=True, weights=omega_of(alpha), sample=corrected)
    if status in (MAX_ITER, NOT_SEPARABLE) and pocket is not None and pocket[0] < errors:
        _, alpha, margin, upper_bound, k_pocket, sample = pocket
        if trace is not None:  # the trace ends with the returned iterate
            trace.record_returned(k_pocket, weights=omega_of(alpha), sample=sample)
    omega = omega_of(alpha)
    history = {key: np.asarray(v) for key, v in hist.items()} if record_history else None
    if trace is not None:
        history = trace.merge_into(history)
    return SolveResult(weights=omega, n_iter=n_iter, status=status, certificate=certificate,
                       history=history,
                       extra={"margin": float(margin), "margin_upper_bound": float(upper_bound),
                              "coefficients": alpha})


def _two_hull(X, y, rule, C, epsilon, tol, max_iter, record_history, trace=None):
    # The linear two-hull SK is the kernel one with k(x, z) = ⟨x, z⟩: the
    # cached column form updates the projections ⟨w_j, x_i⟩ with one column
    # (a gemv, or nothing on a cache hit) instead of recomputing X @ w.
    if sp.issparse(X):
        center, Xc = np.zeros(X.shape[1]), X  # keep sparsity
    else:
        # The hull distance is translation invariant; centring keeps the inner
        # products free of the cancellation a large common offset would cause.
        center = X.mean(axis=0)
        Xc = X - center
    cache = KernelColumnCache(Xc, kernel="linear")
    result = kernel_schlesinger_kozinec(cache.column, y, rule=rule, C=C, epsilon=epsilon, tol=tol,
                                        max_iter=max_iter, record_history=record_history, trace=trace)
    w = np.asarray(Xc.T @ result.weights).ravel()  # w_1 - w_2 = Σ α_i y_i x_i
    intercept = result.intercept - float(w @ center)
    history = result.history
    if trace is not None:  # the traced dual coefficients, mapped to weights as above
        history = dict(history)
        w_rows = np.asarray(Xc.T @ history.pop("dual_coef").T).T
        history["weights"] = np.c_[w_rows, history.pop("intercept") - w_rows @ center]
    return replace(result, weights=np.append(w, intercept), intercept=None, history=history)


def kozinec(X, y, *, formulation="two_hull", max_iter=10_000, record_history=False, trace=None):
    """Kozinec's rule: the first separating hyperplane (see the module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
    y : ndarray of shape (N,)
        Labels in {-1, +1}, both present.
    formulation : {"two_hull", "augmented"}
        Nearest points of the two class hulls (bias unpenalised) or the
        seed note's :math:`\\xi_i = y_i (x_i, 1)` (bias inside the norm).
    max_iter : int
        Largest number of updates.
    record_history : bool
        Keep ``margin`` and ``margin_upper_bound`` per iteration.
    trace : trace recorder or None
        Record the weights ``(w, b)`` of every iterate and the sample the
        step towards it moved to (rows :math:`k = 0, \\dots, \\texttt{n_iter}`).

    Returns
    -------
    SolveResult
        ``weights`` :math:`= (w, b)` (bias last), ``n_iter`` updates, ``status``
        ``"separable"`` / ``"max_iter"`` / ``"not_separable"``, ``extra`` with
        ``margin``, ``margin_upper_bound`` and the convex ``coefficients``.

    See Also
    --------
    schlesinger_kozinec : Goes on to an :math:`\\varepsilon`-optimal maximal margin.
    linsep.KozinecClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> from linsep.solvers.kozinec.solver import kozinec
    >>> kozinec(X, y).status
    'separable'
    """
    return schlesinger_kozinec(X, y, formulation=formulation, C=None, max_iter=max_iter,
                               record_history=record_history, rule="kozinec", trace=trace)


def schlesinger_kozinec(X, y, *, formulation="two_hull", C=None, epsilon=None, tol=1e-2,
                        max_iter=100_000, record_history=False, rule="sk", trace=None):
    """Schlesinger–Kozinec: an ε-optimal maximal-margin hyperplane.

    Stops when
    :math:`\\mathit{margin\\_upper\\_bound} - \\mathit{margin} \\le \\varepsilon`
    with :math:`\\varepsilon` = ``epsilon`` if given, else
    :math:`\\varepsilon = \\mathit{tol} \\cdot \\mathit{margin\\_upper\\_bound}`
    (relative, scale free).  :math:`C` (a number) gives the quadratic-slack
    soft margin: :math:`\\xi_i` (or each hull point) gains the coordinate
    :math:`e_i / \\sqrt{C}`, i.e. the Gram matrix becomes :math:`G + I/C`
    (Franc & Hlaváč 2003, §6); ``None`` is the hard margin.
    Other parameters and the result as in :func:`kozinec`; ``rule="kozinec"``
    gives Kozinec's stopping rule instead.  One iteration costs one product
    ``X @ w`` (O(N d)).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, d)
        Samples.
    y : ndarray of shape (N,)
        Labels in {-1, +1}, both present.
    formulation : {"two_hull", "augmented"}, default="two_hull"
        As in :func:`kozinec`.
    C : float or None, default=None
        Soft margin with quadratic slacks; ``None``: hard margin.
    epsilon : float or None, default=None
        Absolute ε; replaces ``tol`` when given.
    tol : float, default=1e-2
        Relative ε.
    max_iter : int, default=100000
        Largest number of updates.
    record_history : bool, default=False
        Keep ``margin`` and ``margin_upper_bound`` per iteration.
    rule : {"sk", "kozinec"}, default="sk"
        The stopping rule.
    trace : trace recorder or None, default=None
        Record the iterates (as in :func:`kozinec`).

    Returns
    -------
    SolveResult
        As in :func:`kozinec`; ``extra["margin"]`` and
        ``extra["margin_upper_bound"]`` bracket the optimal margin.

    See Also
    --------
    kozinec : Stops at the first separating hyperplane.
    kernel_schlesinger_kozinec : The two-hull rule in a kernel space.
    linsep.SchlesingerKozinecClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y = 2 * y - 1                                        # labels in {-1, +1}
    >>> from linsep.solvers.kozinec.solver import schlesinger_kozinec
    >>> result = schlesinger_kozinec(X, y, tol=1e-3)
    >>> margin, bound = result.extra["margin"], result.extra["margin_upper_bound"]
    >>> bool(margin <= bound <= margin / (1 - 1e-3))
    True
    """
    y = _check_args(rule, formulation, y)
    solve = _two_hull if formulation == "two_hull" else _augmented
    return solve(X, y, rule, C, epsilon, tol, int(max_iter), record_history, trace=trace)


def _kernel_sk_shrinking(cache, y, positive, shift, rule, epsilon, tol, max_iter, record_history, mdm, trace=None):
    """Kernel SK with a shrunk working set; the stopping rule is checked on all points.

    Outer rounds: (1) solve on the working set ``W`` (which always holds the
    support ``α > 0``) with its dense Gram block, to a tighter ε than asked;
    (2) recompute ``f_1, f_2`` on *all* N points from the kernel columns of
    the support and test the rule there — ``margin_`` and the upper bound
    are therefore exact over the whole training set; (3) if it fails, the new
    ``W`` is the support plus the points of smallest margin (the violators
    first).  Iterates only move within ``conv`` of each class, so ``‖w‖``
    never increases across rounds, and a round that fails the test on all
    points brings its worst point into ``W``, where the next step moves.
    """
    n = y.size
    eps_abs = -1.0 if epsilon is None else float(epsilon)
    tol_in = float(tol)
    # the Gram block of W and the cache's columns share the memory budget
    # (as many floats in the block as in the cache, O(N · cache) in all)
    max_block = int(np.sqrt(cache.n_columns * n))
    n_min = min(_MIN_CANDIDATES, max_block // 2)
    alpha = np.zeros(n)
    alpha[np.flatnonzero(positive)[0]] = alpha[np.flatnonzero(~positive)[0]] = 1.0
    W = _initial_working_set(positive, min(_WORKING_SET, max_block))
    hist = {"margin": [], "margin_upper_bound": [], "training_errors": []}
    status, errors, pocket, scale = MAX_ITER, n + 1, None, 0.0
    n_iter, margin, upper_bound, idle, fallback = 0, 0.0, 0.0, 0, False
    gamma = rounding_bound(n + 1)  # of a score Σ_j α_j y_j K_ij + b (margin_floor)
    while True:
        full = W.size == n
        K = cache.block(W, W)
        K[np.diag_indices_from(K)] += shift
        scale = max(scale, float(K.diagonal().max()))
        pw, aw = positive[W], alpha[W]
        f1w, f2w = K @ np.where(pw, aw, 0.0), K @ np.where(pw, 0.0, aw)
        A, B, Cr = _hull_products(f1w, f2w, aw, pw)
        budget = max_iter - n_iter if full else min(max_iter - n_iter, 50 * W.size + 1000)
        frac = 1.0 if full else _INNER  # on W = all points: the rule itself
        args = (K, pw, aw, f1w, f2w, A, B, Cr, budget, mdm, rule == "kozinec", frac * eps_abs, frac * tol_in, scale,
                gamma)
        if n_iter == 0:
            prepare(_solve_block, args, "the kernel SK loop", key=(K.dtype, pw.dtype, aw.dtype))
        steps, code, A, B, Cr = _solve_block(*args)
        n_iter += steps
        alpha[W] = aw
        if code == 2:
            status = NOT_SEPARABLE
            break
        # the test on all points, from freshly computed projections
        support = np.flatnonzero(alpha)
        if full:
            f1, f2 = K @ np.where(pw, aw, 0.0), K @ np.where(pw, 0.0, aw)
        else:
            s1, s2 = support[positive[support]], support[~positive[support]]
            f1, f2 = cache.dot(s1, alpha[s1]), cache.dot(s2, alpha[s2])
            f1[s1] += shift * alpha[s1]
            f2[s2] += shift * alpha[s2]
        A, B, Cr = _hull_products(f1, f2, alpha, positive)
        norm2 = A - 2.0 * Cr + B
        if norm2 <= _TOUCH_RTOL * scale:
            status = NOT_SEPARABLE
            break
        norm = np.sqrt(norm2)
        m = np.where(positive, f1 - f2 + (B - Cr), f2 - f1 + (A - Cr))
        m_t = float(m.min())
        margin, upper_bound = m_t / norm - 0.5 * norm, 0.5 * norm
        floor = margin_floor(gamma, scale, A, B, norm)
        errors = int(np.count_nonzero(m <= 0.5 * norm2 + floor * norm))
        # the trace counts the errors of f itself (the scores without the I/C of a soft margin), as predict does
        shown = int(np.count_nonzero(m - 0.5 * norm2 - shift * alpha <= floor * norm)) if shift else errors
        if trace is not None:  # one row per check on all points (several steps apart)
            trace.record(n_iter, final=True, dual_coef=alpha * np.where(positive, 1.0, -1.0),
                         intercept=0.5 * (B - A), sample=-1)
        stop = _record_and_check(hist if record_history else None, rule, margin, upper_bound, shown,
                                 epsilon, tol, floor)
        if stop is not None:
            status = stop
            break
        idle = idle + 1 if steps == 0 else 0
        if n_iter >= max_iter or idle > 20:  # idle: rounding keeps W's test and N's apart
            break
        if pocket is None or errors < pocket[0]:
            pocket = (errors, alpha.copy(), A, B, margin, upper_bound)
        # next W: the support and the points of smallest margin, violators first
        n_cand = min(max(n_min, support.size), n - support.size)
        if support.size + n_cand > max_block:
            if max_block >= n:  # the whole problem fits the block budget
                W = np.arange(n)
                continue
            fallback = True  # support too large for a bounded block: plain steps on all N
            break
        rest = m.copy()
        rest[support] = np.inf
        # the n_cand smallest margins, ties to the lower index (a stable sort: argpartition's tie order
        # is introselect's and differs between NumPy versions)
        W = np.union1d(support, np.argsort(rest, kind="stable")[:n_cand] if n_cand else support)
    if fallback:
        result = _kernel_sk_plain(cache.column, y, positive, shift, rule, epsilon, tol, max_iter - n_iter,
                                  record_history, mdm, alpha0=alpha, trace=trace, first_iter=n_iter)
        if record_history:
            result.history.update({key: np.r_[hist[key], result.history[key]] for key in hist})
        return replace(result, n_iter=n_iter + result.n_iter)
    certificate = alpha.copy() if status == NOT_SEPARABLE else None
    if status in (MAX_ITER, NOT_SEPARABLE) and pocket is not None and pocket[0] < errors:
        _, alpha, A, B, margin, upper_bound = pocket
    history = {key: np.asarray(v) for key, v in hist.items()} if record_history else None
    if trace is not None:
        history = trace.merge_into(history)
    sign = np.where(positive, 1.0, -1.0)
    return SolveResult(weights=alpha * sign, n_iter=n_iter, status=status, intercept=0.5 * (B - A),
                       history=history, certificate=certificate,
                       extra={"margin": float(margin), "margin_upper_bound": float(upper_bound),
                              "coefficients": alpha})


def kernel_schlesinger_kozinec(column, y, *, C=None, epsilon=None, tol=1e-2, max_iter=100_000,
                               record_history=False, rule="sk", update="sk", shrinking=True, trace=None):
    """Two-hull SK in a kernel space (Franc & Hlaváč 2003), one kernel column per step.

    Parameters
    ----------
    column : callable or KernelColumnCache
        ``column(j)`` returns the kernel column ``K[:, j]`` (length N); it is
        read at once and never kept, so a bounded cache may recycle it.  A
        :class:`linsep.kernels.KernelColumnCache` (which also gives Gram
        blocks) enables ``shrinking``.  The full Gram matrix is never formed.
    y : ndarray of shape (N,)
        Labels in {-1, +1}, both present.
    C : float or None
        ``None``: hard margin.  A number: quadratic-slack soft margin, i.e.
        the hard margin for :math:`K + I/C`.
    epsilon, tol : float
        SK stop :math:`\\mathit{upper\\_bound} - \\mathit{margin} \\le \\varepsilon`
        with :math:`\\varepsilon` = ``epsilon`` if given, else
        :math:`\\mathit{tol} \\cdot \\mathit{upper\\_bound}`.
    max_iter : int
        Largest number of updates (steps, on the working set with shrinking).
    record_history : bool
        Keep ``margin`` and ``margin_upper_bound`` per iteration (with
        shrinking: per check on all N points).
    trace : trace recorder or None
        Record ``dual_coef`` :math:`\\alpha_i y_i`, ``intercept`` and the sample the
        step moved towards, per iteration (rows :math:`k = 0, \\dots, \\texttt{n_iter}`),
        so that the run can be stepped: a traced run takes the plain steps
        (``shrinking`` is not used; the same rule to the same ε, by a different
        path than an untraced run with shrinking).
    rule : {"sk", "kozinec"}
        ε-optimal stop, or stop at the first separating hyperplane
        (status ``"separable"``).
    update : {"sk", "mdm"}
        ``"sk"``: Franc & Hlaváč's step towards :math:`x_t` (the class point
        shrinks towards :math:`\\varphi(x_t)`).  ``"mdm"``: the Mitchell–Dem'yanov–
        Malozemov step of the same family: weight :math:`\\lambda` moves from a support
        point :math:`x_r` of :math:`x_t`'s class to :math:`x_t`,
        :math:`w_c \\leftarrow w_c + \\lambda \\bigl( \\varphi(x_t) - \\varphi(x_r) \\bigr)`,
        :math:`\\lambda = \\min\\bigl(\\alpha_r, (m_r - m_t) \\lVert w \\rVert /
        \\lVert \\varphi(x_t) - \\varphi(x_r) \\rVert^2\\bigr)` (two columns per
        step), with :math:`r` chosen by second order — the largest decrease of
        :math:`\\lVert w \\rVert^2` (MDM's original choice, the largest :math:`m_r`, needs several
        times more steps).  It can drop points from the support
        (:math:`\\alpha_r \\to 0`), which the SK step never does, and needs far fewer steps
        to the same ε; the stopping rule and its guarantee are unchanged.
    shrinking : bool
        With a :class:`~linsep.kernels.KernelColumnCache` as ``column``: run
        the steps on a working set ``W`` — the support and the points of
        smallest margin — with its dense Gram block (at most as many numbers
        as the cache holds), to :math:`0.8\\, \\varepsilon`; then recompute :math:`f_1, f_2` on all
        N points from the support's cached columns and apply the stopping
        rule there, and if it fails rebuild ``W`` around the new violators.
        The rule, ``margin`` and ``margin_upper_bound`` are thus always those
        of all N points.  A support too large for the block budget falls back
        to scanning all points at every step.  Ignored for a plain callable.

    Returns
    -------
    SolveResult
        ``weights`` :math:`= \\alpha_i y_i`
        (:math:`f(x) = \\sum_i \\alpha_i y_i k(x_i, x) + b`), ``intercept``
        :math:`= b = (\\lVert w_2 \\rVert^2 - \\lVert w_1 \\rVert^2) / 2`, ``status`` ``"converged"``
        (ε-optimal), ``"max_iter"`` (e.g. non-separable data with
        ``C=None``) or ``"not_separable"`` (hulls touching to rounding),
        ``extra`` with ``margin`` (in the feature space of ``K + I/C``) and
        ``margin_upper_bound``.

    See Also
    --------
    schlesinger_kozinec : The linear rule.
    linsep.kernels.KernelColumnCache : The bounded cache that serves the columns.
    linsep.KernelSchlesingerKozinecClassifier : The estimator over this solver.

    Examples
    --------
    >>> import numpy as np
    >>> from linsep.kernels import KernelColumnCache
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([-1, -1, 1, 1])                         # XOR
    >>> cache = KernelColumnCache(X, kernel="rbf", gamma=2.0)
    >>> from linsep.solvers.kozinec.solver import kernel_schlesinger_kozinec
    >>> result = kernel_schlesinger_kozinec(cache.column, y)
    >>> result.status, bool(result.extra["margin"] > 0)
    ('converged', True)
    """
    y = _check_args(rule, "two_hull", y)
    if update not in UPDATES:
        raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
    positive = y > 0
    shift = 0.0 if C is None else 1.0 / float(C)
    if shrinking and hasattr(column, "block") and trace is None:
        # a traced run takes the plain steps: a row per step, which the working set's compiled
        # block would hide (the same rule and ε, so the same guarantee, by a different path)
        return _kernel_sk_shrinking(column, y, positive, shift, rule, epsilon, tol, int(max_iter),
                                    record_history, update == "mdm", trace=trace)
    column = getattr(column, "column", column)
    return _kernel_sk_plain(column, y, positive, shift, rule, epsilon, tol, int(max_iter), record_history,
                            update == "mdm", trace=trace)


def _kernel_sk_plain(column, y, positive, shift, rule, epsilon, tol, max_iter, record_history, mdm,
                     alpha0=None, trace=None, first_iter=0):
    """Kernel SK scanning all N points at every step (from ``alpha0``, or one point per class).

    ``first_iter`` numbers the trace rows after steps already made (the shrinking solver's fallback).
    """
    if alpha0 is None:
        i1, i2 = int(np.flatnonzero(positive)[0]), int(np.flatnonzero(~positive)[0])
        f1 = np.array(column(i1), dtype=float)
        f1[i1] += shift
        f2 = np.array(column(i2), dtype=float)
        f2[i2] += shift
        A, B, Cr = f1[i1], f2[i2], f1[i2]  # ⟨w1,w1⟩, ⟨w2,w2⟩, ⟨w1,w2⟩
        scale = max(A, B)  # largest K_tt seen: the yardstick of rounding in ‖w‖²
        beta = np.zeros_like(f1)
        beta[i1] = beta[i2] = 1.0
        diag = np.zeros_like(f1)  # K_jj of the points whose column was read (the support)
        diag[i1], diag[i2] = A - shift, B - shift
    else:
        beta = np.array(alpha0, dtype=float)
        f1, f2, diag = np.zeros(y.size), np.zeros(y.size), np.zeros(y.size)
        for j in np.flatnonzero(beta):
            col = column(j)
            diag[j] = col[j]
            (f1 if positive[j] else f2)[:] += beta[j] * col
        f1[positive] += shift * beta[positive]
        f2[~positive] += shift * beta[~positive]
        A, B, Cr = _hull_products(f1, f2, beta, positive)
        scale = max(A, B)
    # α_i = shrink[class] · beta_i: the (1-k) shrink of a whole class is O(1).
    shrink = {True: 1.0, False: 1.0}
    sign = np.where(positive, 1.0, -1.0)
    hist = {"margin": [], "margin_upper_bound": [], "training_errors": []}
    status = MAX_ITER
    margin = upper_bound = 0.0
    errors, pocket = len(y) + 1, None
    n_iter, stepped = 0, -1  # stepped: the sample of the last step made
    gamma = rounding_bound(y.size + 1)  # of a score Σ_j α_j y_j K_ij + b (margin_floor)

    def record(final=False):
        if trace is not None and (final or trace.wants(first_iter + n_iter)):
            trace.record(first_iter + n_iter, final=final, sample=stepped, intercept=0.5 * (B - A),
                         dual_coef=beta * np.where(positive, shrink[True], shrink[False]) * sign)

    for n_iter in range(max_iter + 1):
        record()
        norm2 = A - 2.0 * Cr + B
        # norm2 is a difference of O(scale) numbers: below ~100 ulps it is noise.
        if norm2 <= _TOUCH_RTOL * scale:
            status, errors = NOT_SEPARABLE, len(y) + 1
            if record_history:  # the scalar traces end at the final iterate, as its row does
                m = np.where(positive, f1 - f2 + (B - Cr), f2 - f1 + (A - Cr))
                m -= shift * beta * np.where(positive, shrink[True], shrink[False])
                tau = gamma * (2.0 * scale + 0.5 * abs(B - A))  # margin_floor · ‖w‖, finite at ‖w‖ = 0
                _record_touch(hist, 0.5 * np.sqrt(max(norm2, 0.0)), int(np.count_nonzero(m - 0.5 * norm2 <= tau)))
            break
        norm = np.sqrt(norm2)
        floor = margin_floor(gamma, scale, A, B, norm)
        t, m_t, errors = _scan(f1, f2, positive, B - Cr, A - Cr, 0.5 * norm2 + floor * norm)
        margin, upper_bound = m_t / norm - 0.5 * norm, 0.5 * norm
        shown = errors
        if shift and record_history:
            # a soft margin's scores carry shift · α_i (K + I/C): the trace counts the errors of f itself,
            # as predict does (the pocket keeps those of K + I/C)
            m = np.where(positive, f1 - f2 + (B - Cr), f2 - f1 + (A - Cr))
            alpha_now = beta * np.where(positive, shrink[True], shrink[False])
            shown = int(np.count_nonzero(m - 0.5 * norm2 - shift * alpha_now <= floor * norm))
        stop = _record_and_check(hist if record_history else None, rule, margin, upper_bound, shown,
                                 epsilon, tol, floor)
        if stop is not None:
            status = stop
            break
        if n_iter == max_iter:
            break
        if pocket is None or errors < pocket[0]:
            # Pocket: the iterate with the fewest training errors so far, returned
            # if the rule is never met (non-separable data); snapshots only on a
            # strict decrease, so at most N of them.
            pocket = (errors, beta * np.where(positive, shrink[True], shrink[False]), A, B,
                      margin, upper_bound, first_iter + n_iter, stepped)
        cls = bool(positive[t])
        stepped = t
        if mdm:
            # r: the support point of x_t's class chosen by second order.  The
            # α-weighted mean of m over a class is ‖w‖², above m_t whenever
            # the rule failed, so some support point has m_r > m_t.
            col_t = np.array(column(t))  # copied: the next call may recycle its slot
            diag[t] = col_t[t]
            r, m_r = _pair(f1, f2, positive, beta, shrink[cls], t, m_t, (B - Cr) if cls else (A - Cr),
                           col_t, diag, shift)
            if r >= 0:
                col_r = column(r)
                k_tt, k_rr = col_t[t] + shift, col_r[r] + shift
                scale = max(scale, k_tt, k_rr)
                dist2 = k_tt + k_rr - 2.0 * col_t[r]  # ‖φ(x_t) - φ(x_r)‖²
                alpha_r = beta[r] * shrink[cls]
                lam = min(alpha_r, (m_r - m_t) / dist2) if dist2 > 0 else alpha_r
                if cls:
                    A += 2.0 * lam * (f1[t] - f1[r]) + lam * lam * dist2
                    Cr += lam * (f2[t] - f2[r])
                    _move_weight(f1, lam, col_t, col_r, t, r, shift)
                else:
                    B += 2.0 * lam * (f2[t] - f2[r]) + lam * lam * dist2
                    Cr += lam * (f1[t] - f1[r])
                    _move_weight(f2, lam, col_t, col_r, t, r, shift)
                beta[t] += lam / shrink[cls]
                beta[r] = 0.0 if lam >= alpha_r else beta[r] - lam / shrink[cls]
                continue
        col = column(t)
        diag[t] = col[t]
        k_tt = col[t] + shift
        scale = max(scale, k_tt)
        k, A, B, Cr = _sk_step(cls, A, B, Cr, f1[t], f2[t], k_tt)
        if cls:
            _shrink_towards(f1, k, col)
            f1[t] += k * shift
        else:
            _shrink_towards(f2, k, col)
            f2[t] += k * shift
        if k >= 1.0:  # the class's point jumps to x_t: restart its coefficients
            beta[positive == cls] = 0.0
            shrink[cls] = 1.0
            beta[t] = 1.0
        else:
            shrink[cls] *= 1.0 - k
            beta[t] += k / shrink[cls]
            if shrink[cls] < 1e-150:  # renormalise before underflow
                beta[positive == cls] *= shrink[cls]
                shrink[cls] = 1.0
    record(final=True)
    alpha = beta * np.where(positive, shrink[True], shrink[False])
    certificate = alpha if status == NOT_SEPARABLE else None
    if status in (MAX_ITER, NOT_SEPARABLE) and pocket is not None and pocket[0] < errors:
        _, alpha, A, B, margin, upper_bound, k_pocket, sample = pocket
        if trace is not None:  # the trace ends with the returned iterate
            trace.record_returned(k_pocket, sample=sample, intercept=0.5 * (B - A), dual_coef=alpha * sign)
    history = {key: np.asarray(v) for key, v in hist.items()} if record_history else None
    if trace is not None:
        history = trace.merge_into(history)
    return SolveResult(weights=alpha * sign, n_iter=n_iter, status=status, intercept=0.5 * (B - A),
                       history=history, certificate=certificate,
                       extra={"margin": float(margin), "margin_upper_bound": float(upper_bound),
                              "coefficients": alpha})
