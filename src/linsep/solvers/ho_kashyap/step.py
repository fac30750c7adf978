"""The Ho–Kashyap step, written once for NumPy-like namespaces: the pass, the margin update, IRLS → W → B → pass.

One iteration of the margin-update rule (Ho & Kashyap 1965; Łęski 2004, eqs. 6–9) from the iterate
:math:`(W_k, B_k, D_k)`:

.. math::

    E_k = Y W_k - \\mathit{offset} - B_k, \\qquad
    B_{k+1} = B_k + \\mu (E_k + |E_k|) = B_k + 2\\mu \\max(E_k, 0),

    W_{k+1} = (Y^t D Y + C \\tilde I)^{-1} Y^t D (B_{k+1} + \\mathit{offset})
    \\quad\\text{(or } W_k + \\mu (Y^t D Y + C \\tilde I)^{-1} Y^t D |E_k| \\text{, modified HK)},

with :math:`D = I` (squared errors) or the IRLS weights :math:`D_{k+1}` of :math:`E_k` (absolute errors,
:func:`linsep._core.irls.irls_weights`).  The designs (:mod:`linsep.designs`) only move data and compute
products (``Y W``, ``Yᵀ v``, Gram matrices, the W-step's solve); what is done with them is here:

* :func:`next_margin` — the margin update, in any namespace (NumPy, an array-API namespace, a dask block's
  NumPy arrays).  Its two other homes are compiled: the float64 pass of :mod:`.loops`
  (``_pass_by_columns``) and the row update of :mod:`.rows` (``_margin_update``, shared by the float64 and
  float32 passes by rows); ``tests/solvers/ho_kashyap/test_step.py`` pins the three equal.
* :class:`NamespacePass` — one pass over a design whose products are arrays of a namespace (memory, array API):
  ``E``, :math:`B_{k+1}` and the rules' statistics.
* :func:`hk_pass` — the pass of any design: :class:`NamespacePass`, or the design's own fused pass where one
  round trip per pass matters (dask: every block computes its share with :func:`next_margin` where it lives).
* :func:`hk_step` and :func:`hk_iterates` — the step and the iterates the Python driver
  (:func:`linsep.solvers.ho_kashyap.rules.iterate_in_python`) takes one at a time; a design that chains several
  iterates per round trip (dask) runs :func:`hk_step` itself, on its workers.
* :data:`BLOCKWISE` — the same pass and step on row blocks held in memory (a dask worker's): the fused pass
  of one block (:func:`block_pass`), the pass statistics from the blocks' parts (:func:`pass_summary`) and
  up to ``steps`` iterates over every block in one call (:func:`block_chain`).  The dask design takes them
  as handed down (``designs`` never import ``solvers``), so an iterate on a worker runs inside this module:
  its W-step's solve is LAPACK's, bound once per chain (:meth:`linsep._core.linalg.LeastSquaresFactor.normal_solver`),
  and it calls out only for IRLS (the design's second pass, a new factor) or validation rows (their counts).
"""

from __future__ import annotations

from functools import cached_property
from numbers import Real
from types import SimpleNamespace

import numpy as np

from linsep._core.certificates import nonseparability_certificate
from linsep._core.irls import irls_weights
from linsep._core.linalg import GramOnly, IterativeLeastSquares, least_squares_solver

__all__ = ["BLOCKWISE", "NamespacePass", "block_chain", "block_pass", "hk_iterates", "hk_pass", "hk_step",
           "next_margin", "pass_summary"]


def next_margin(B, E, two_mu, xp=np):
    """:math:`B_{k+1} = B_k + 2\\mu \\max(E_k, 0)`: the margin grows only where ``Y W`` exceeds its target.

    ``μ (E + |E|) = 2μ max(E, 0)`` (Ho & Kashyap 1965); ``two_mu`` is :math:`2\\mu`.  ``B`` and ``E`` are
    arrays of the namespace ``xp`` (a NumPy array, an array-API array, one dask block's rows).
    """
    # (NumPy's own maximum: its clip costs twice as much on the small vectors of the Python driver)
    return B + two_mu * (np.maximum(E, 0.0) if xp is np else xp.clip(E, 0.0, None))


class NamespacePass:
    """One Ho–Kashyap pass for the iterate ``(W_k, B_k, D_k)`` on a design whose products are arrays.

    ``design`` offers ``xp`` (its namespace), ``scores(W)`` (``Y W``), ``read_scalars`` (0-d arrays as host
    numbers, in one copy where that costs a device sync), ``reweighted_factor(factor, D)`` and
    ``solve_weighted(factor, r, D)`` (:math:`(Y^t D Y + C \\tilde I)^{-1} Y^t D r`).

    Attributes: ``J = E_kᵀ D_k E_k`` (no penalty), ``wrong`` (count of ``Y W_k <= 0``), ``separated``
    (all ``Y W_k > 0``), ``max_e``, ``min_e`` (of ``E_k``), ``max_b`` (``max |B_k|``), ``fixed_point``
    (``|E_k| <= tol (B_k + offset)`` componentwise), ``val_errors`` (the validation count, or ``None``),
    ``weight_norm_sq`` (:math:`\\lVert w_k \\rVert^2`, the bias left out: the penalised criterion's; on a
    device read with the others),
    ``E`` and ``B_next`` (:func:`next_margin`).  ``fitted``: ``Y W_k`` where the W-step's solver kept it
    (:meth:`linsep._core.linalg.IterativeLeastSquares.fitted_values`), sparing the product.
    """

    def __init__(self, design, W, B, D, *, offset, two_mu, tol, validation=None, fitted=None):
        xp = design.xp
        self.design, self.xp, self.B, self.D, self.offset, self.two_mu, self.tol = design, xp, B, D, offset, two_mu, tol
        self.Z = Z = design.scores(W) if fitted is None else fitted
        self.E = Z - B if offset == 0.0 else Z - offset - B
        if xp is np:  # on the host each statistic the rules do not read every pass is computed when asked for
            self.J, self.wrong = float(self._statistic("J")), int(self._statistic("wrong"))
            self.weight_norm_sq = float(W[:-1] @ W[:-1])  # p numbers: as cheap as asking for it
        else:  # a device: the other statistics come to the host with these, in one copy (one sync)
            names = ("J", "wrong", "min_z", "max_e", "min_e", "max_b", "fixed_point")
            values = design.read_scalars([self._statistic(name) for name in names] + [W[:-1] @ W[:-1]])
            values, weight_norm_sq = dict(zip(names, values)), values[-1]
            self.J, self.wrong = values["J"], int(values["wrong"])
            self.__dict__.update(separated=values["min_z"] > 0, max_e=values["max_e"], min_e=values["min_e"],
                                 max_b=values["max_b"], fixed_point=bool(values["fixed_point"]),
                                 weight_norm_sq=weight_norm_sq)
        self.val_errors = None if validation is None else validation.count_nonpositive(W)[0]
        self._step_weights = D  # the D of the next W-step: D_k, or D_{k+1} once reweighted

    def _statistic(self, name):
        """The statistic ``name`` as an array of the namespace (a 0-d array, or a NumPy number)."""
        xp, E, B, Z = self.xp, self.E, self.B, self.Z
        if name == "J":
            return E @ E if self.D is None else E @ (self.D * E)
        if name == "wrong":
            return xp.count_nonzero(Z <= 0)
        if name in ("min_z", "max_e", "min_e"):
            return (xp.min if name != "max_e" else xp.max)(Z if name == "min_z" else E)
        if name == "max_b":
            return xp.max(xp.abs(B))
        # |E| <= tol (B + offset) componentwise moves no B_i by more than 2μ·tol of itself and, for tol < 1,
        # gives Y W = B + E > 0 already
        target = B + self.offset
        return xp.all((target > 0) & (xp.abs(E) <= self.tol * target))

    @cached_property
    def separated(self):
        return bool(self._statistic("min_z") > 0)

    @cached_property
    def max_e(self):
        return float(self._statistic("max_e"))

    @cached_property
    def min_e(self):
        return float(self._statistic("min_e"))

    @cached_property
    def max_b(self):
        return float(self._statistic("max_b"))

    @cached_property
    def fixed_point(self):
        return bool(self._statistic("fixed_point"))

    @cached_property
    def B_next(self):
        return next_margin(self.B, self.E, self.two_mu, self.xp)

    def reweighted(self, factor, irls_floor):
        """IRLS: (the factor of :math:`Y^t D_{k+1} Y + C \\tilde I`, :math:`D_{k+1}`) from this pass's ``E``."""
        # max |E| from the statistics (no extra device sync where they were read at once)
        largest = max(self.max_e, -self.min_e)
        D = irls_weights(self.E, irls_floor, largest, xp=self.xp)
        self._step_weights = D
        return self.design.reweighted_factor(factor, D), D

    def solve_margin(self, factor):
        """:math:`W_{k+1} = (Y^t D Y + C \\tilde I)^{-1} Y^t D (B_{k+1} + \\mathit{offset})`."""
        target = self.B_next if self.offset == 0.0 else self.B_next + self.offset
        return self.design.solve_weighted(factor, target, self._step_weights)

    def solve_increment(self, factor):
        """``(YᵀDY + CĨ)⁻¹ YᵀD |E_k|``: modified HK's increment of ``W``."""
        return self.design.solve_weighted(factor, self.xp.abs(self.E), self._step_weights)

    def certificate(self):
        """``u = D_k max(−E_k, 0)``: the non-separability certificate."""
        return nonseparability_certificate(self.E, self.D, xp=None if self.xp is np else self.xp)


def hk_pass(design, W, B, D, *, offset, two_mu, tol, update, irls, validation=None, fitted=None):
    """The pass of ``(W_k, B_k, D_k)`` on ``design``: its fused pass (``fused_margin_pass``, dask), else :class:`NamespacePass`."""
    fused = getattr(design, "fused_margin_pass", None)
    if fused is not None:
        return fused(W, B, D, blockwise=BLOCKWISE, offset=offset, two_mu=two_mu, tol=tol, update=update, irls=irls,
                     validation=validation)
    return NamespacePass(design, W, B, D, offset=offset, two_mu=two_mu, tol=tol, validation=validation,
                         fitted=fitted)


def hk_step(state, W, D, factor, *, update, learning_rate, irls_floor, irls, next_pass):
    """One Ho–Kashyap step after the pass ``state`` of ``(W_k, B_k, D_k)``: returns ``(W, B, D, factor, state)``.

    IRLS (``irls``): ``(factor, D) = state.reweighted(factor, irls_floor)``; then
    :math:`W_{k+1} = W_k + \\mu (Y^t D Y + C \\tilde I)^{-1} Y^t D |E_k|` (``update="weights"``) or
    :math:`W_{k+1} = (Y^t D Y + C \\tilde I)^{-1} Y^t D (B_{k+1} + \\mathit{offset})`,
    :math:`B_{k+1}` = ``state.B_next``, and ``next_pass(W, B, D, fitted)``, the pass of the new iterate
    (``fitted``: ``Y W`` from an iterative solver's own products, or ``None``).
    """
    if irls:
        factor, D = state.reweighted(factor, irls_floor)
    if update == "weights":
        W = W + learning_rate * state.solve_increment(factor)
    B = state.B_next
    fitted = None
    if update == "margin":
        W = state.solve_margin(factor)
        if isinstance(factor, IterativeLeastSquares):  # Y W from CG's own products Y d, if it kept them
            fitted = factor.fitted_values(W)
    return W, B, D, factor, next_pass(W, B, D, fitted)


def hk_iterates(design, state, W, B, D, factor, *, update, learning_rate, irls_floor, pass_options, limit=None):
    """The iterates after ``state`` (the pass of ``(W_k, B_k, D_k)``): an iterator of ``(W, B, D, factor, state)``.

    Each is :func:`hk_step` with the pass :func:`hk_pass` (``pass_options``).  The driver takes them one at a
    time and stops when a rule ends the fit; at most ``limit`` are taken (``None``: no bound).  A design whose
    round trips cost more than a pass (dask) may compute several per round trip
    (``design.chained_iterates``, running :func:`block_chain` where the data live): the iterates are the same, bit
    for bit, and an error raised by a step the driver does not reach does not surface.
    """
    options = dict(update=update, learning_rate=learning_rate, irls_floor=irls_floor, irls=pass_options["irls"])
    chained = getattr(design, "chained_iterates", None)
    if chained is not None:
        iterates = chained(BLOCKWISE, state, W, D, factor, dict(pass_options, **options), limit)
        if iterates is not None:
            return iterates
    if getattr(design, "fused_margin_pass", None) is None:  # the namespace pass, called directly
        namespace_options = {name: pass_options.get(name) for name in ("offset", "two_mu", "tol", "validation")}

        def next_pass(W, B, D, fitted):
            return NamespacePass(design, W, B, D, fitted=fitted, **namespace_options)
    else:
        def next_pass(W, B, D, fitted):
            return hk_pass(design, W, B, D, fitted=fitted, **pass_options)
    return _stepped(state, W, D, factor, next_pass, options)


def _stepped(state, W, D, factor, next_pass, options):
    """:func:`hk_step` after ``state``, again and again (see :func:`hk_iterates`)."""
    while True:
        W, B, D, factor, state = hk_step(state, W, D, factor, next_pass=next_pass, **options)
        yield W, B, D, factor, state


# --- Row blocks held in memory (a dask worker's) ------------------------------------------------------------

def block_pass(runs, y, B, D, W, *, offset, two_mu, tol, update, irls):
    """One Ho–Kashyap pass over a block of rows: (:math:`B_{k+1}`, :math:`E_k` or ``None``, its statistics).

    ``runs``: ``(slice of the block's rows, the matching rows of X)`` for each run of rows of ``Y_b =
    diag(y)[X_b, 1]`` (``Y_b`` never formed); ``y``: the block's signs (times a scaled design's row weights);
    ``B``: the block's :math:`B_k` (a number: the starting margin, made here); ``D``: its ``D_k`` or ``None``.
    NumPy products, ``Y_b W`` and ``Y_bᵀ r`` for each run while it is in cache (``X_b`` read once), the margin
    update :func:`next_margin`: the numbers of :class:`NamespacePass` to rounding.  The statistics are the
    block's share of :func:`pass_summary`'s, with ``g``, its share of ``Yᵀ r`` (not for IRLS, whose
    right-hand side comes with ``D_{k+1}`` in the second pass).
    """
    n = y.shape[0]
    if isinstance(B, Real):  # the starting margin, made where the block lives
        B = np.full(n, float(B))
    E, B_next = np.empty(n), np.empty(n)
    g = np.zeros(W.shape[0])
    wrong = 0
    for part, X_run in runs:  # each run's vectors stay in cache: a few operations each, in place
        z = X_run @ W[:-1]
        z += W[-1]
        z *= y[part]
        wrong += int(np.count_nonzero(z <= 0))
        e = np.subtract(z, B[part], out=z)
        if offset:
            e -= offset
        b_next = next_margin(B[part], e, two_mu)
        # the signed share y_i r_i of the next right-hand side
        r = (b_next + offset if offset else b_next.copy()) if update == "margin" else np.abs(e)
        r *= y[part]
        g[:-1] += X_run.T @ r
        g[-1] += r.sum()
        E[part], B_next[part] = e, b_next
    emax, emin = float(E.max(initial=-np.inf)), float(E.min(initial=np.inf))
    eabs_max = max(emax, -emin, 0.0)
    bscale = max(float(B.max(initial=0.0)), -float(B.min(initial=0.0)))
    # fixed point: |E_i| <= tol (B_i + offset) for every i; impossible when max |E| exceeds tol max(B + offset)
    fixed_point = eabs_max <= tol * (bscale + offset)
    if fixed_point:
        target = B + offset
        fixed_point = bool(np.all((target > 0) & (np.abs(E) <= tol * target)))
    finite = n == 0 or bool(np.isfinite(emax) and np.isfinite(emin))  # NaN and ±inf reach the extremes
    stats = {"J": float(E @ E) if D is None else float(E @ (D * E)), "wrong": wrong, "separated": wrong == 0 and finite,
             "emax": emax, "bscale": bscale, "fixed_point": fixed_point, "emin": emin, "eabs_max": eabs_max,
             "finite": finite}
    if not irls:
        stats["g"] = g
    return B_next, (E if irls else None), stats


def pass_summary(parts, irls):
    """The pass statistics from the blocks' :func:`block_pass` statistics (in block order), as :class:`NamespacePass`
    names them, and ``rhs``: the summed right-hand side (``None`` for IRLS)."""
    return {
        "J": float(np.sum([p["J"] for p in parts])),
        "wrong": int(np.sum([p["wrong"] for p in parts])),
        "separated": all([p["separated"] for p in parts]),
        "max_e": max([p["emax"] for p in parts]),
        "min_e": min([p["emin"] for p in parts]),
        "max_b": max([p["bscale"] for p in parts]),
        "fixed_point": all([p["fixed_point"] for p in parts]),
        "eabs_max": max([p["eabs_max"] for p in parts]),
        "rhs": None if irls else np.sum([p["g"] for p in parts], axis=0),
    }


def block_chain(blocks, B_next, E, D, W, rhs, eabs_max, factor, *, steps, shape, pass_options, step_options,
                reweigh=None, count=None):
    """Up to ``steps`` iterates of :func:`hk_step` over row blocks held in memory, in one call (a dask task).

    Starts from a pass state given by its per-block :math:`B_{k+1}` (``B_next``), :math:`E_k` (IRLS) and
    :math:`D_k`, the weights ``W_k``, the summed right-hand side ``rhs`` (not IRLS), ``max|E_k|`` and the
    factor.  ``blocks``: per block ``(runs, y)`` of :func:`block_pass`; ``pass_options``: its keywords
    (``offset``, ``two_mu``, ``tol``, ``update``, ``irls``); ``step_options``: :func:`hk_step`'s.  The
    design's own work, where a step needs it: ``reweigh(E, B_next, irls_floor, eabs_max)``, the IRLS second
    pass (per block ``(D_{k+1}, {"gram", "g"})``), and ``count(W)``, the validation rows' errors (``None``:
    none).  The sums are those of one round trip per pass (block order), so the iterates are the same.

    Returns ``{"iterates": [...], "error": exception or None, "B": [...], "D": [...], "E": [...],
    "B_next": [...]}``: per iterate its ``W``, factor (IRLS) and statistics, and its pass's per-block ``B``,
    ``D`` (IRLS) and ``E`` (IRLS); ``B_next`` of the last.  A step that raises ends the chain (the driver
    re-raises the error only if it gets that far).
    """
    rows = _BlockRows(blocks, shape, pass_options, reweigh, count)
    state = _BlocksPass(rows, B_next, E, rhs, eabs_max, None)
    out = {"iterates": [], "error": None, "B": [], "D": [], "E": [], "B_next": None}
    irls = pass_options["irls"]
    for _ in range(steps):
        try:
            W, B, D, factor, state = hk_step(state, W, D, factor, next_pass=rows.next_pass, **step_options)
        except Exception as exc:  # noqa: BLE001 - handed to the driver, raised where a serial run raises
            out["error"] = exc
            break
        out["iterates"].append({"W": W, "factor": factor if irls else None, "stats": state.stats})
        out["B"].append(B)
        out["D"].append(D)
        out["E"].append(state.E)
    out["B_next"] = state.B_next
    return out


class _BlockRows:
    """The blocks of a :func:`block_chain` and what a pass over them needs (the same every iterate)."""

    def __init__(self, blocks, shape, pass_options, reweigh, count):
        self.blocks, self.shape, self.options, self.reweigh, self.count = blocks, shape, pass_options, reweigh, count
        self._factor = self._solve = None

    def solve_normal(self, factor, rhs):
        """``(YᵀDY + CĨ)⁻¹ rhs`` with the factor's solver, bound once per factor (every iterate of a chain shares
        the factor, but IRLS: :meth:`linsep._core.linalg.LeastSquaresFactor.normal_solver`)."""
        if factor is not self._factor:
            self._factor, self._solve = factor, factor.normal_solver()
        solution, info = self._solve(rhs)
        if info != 0:  # pragma: no cover - LAPACK's potrs, only on invalid arguments
            raise np.linalg.LinAlgError(f"potrs failed with info={info}")
        return solution

    def next_pass(self, W, B, D, fitted=None):
        """The pass of ``(W, B, D)`` over every block (``fitted``: unused, a direct factor's)."""
        o = self.options
        parts = [block_pass(runs, y, b, d, W, **o) for (runs, y), b, d in zip(self.blocks, B, D)]
        stats = pass_summary([p[2] for p in parts], o["irls"])
        if self.count is not None:
            stats["val_errors"] = self.count(W)
        return _BlocksPass(self, [p[0] for p in parts], [p[1] for p in parts], stats["rhs"], stats["eabs_max"],
                           stats)


class _BlocksPass:
    """A pass over a chain's blocks, as :func:`hk_step` reads one: ``B_next``, ``E``, the W-step's right-hand
    side and the IRLS second pass."""

    def __init__(self, rows, B_next, E, rhs, eabs_max, stats):
        self.rows, self.B_next, self.E, self.rhs, self.eabs_max, self.stats = rows, B_next, E, rhs, eabs_max, stats

    def reweighted(self, factor, irls_floor):
        """``D_k`` per block, ``Yᵀ D_k r`` and the factor of ``YᵀD_kY + CĨ`` (floor from the global ``max|E_k|``)."""
        second = self.rows.reweigh(self.E, self.B_next, irls_floor, self.eabs_max)
        self.rhs = np.sum([s[1]["g"] for s in second], axis=0)
        factor = least_squares_solver(GramOnly(self.rows.shape), None, factor.ridge,
                                      gram=np.sum([s[1]["gram"] for s in second], axis=0))
        return factor, [s[0] for s in second]

    def solve_margin(self, factor):
        return self.rows.solve_normal(factor, self.rhs)

    def solve_increment(self, factor):
        return self.rows.solve_normal(factor, self.rhs)


BLOCKWISE = SimpleNamespace(block_pass=block_pass, summary=pass_summary, chain=block_chain)
"""The step's work on row blocks held in memory, handed to a design that runs it where its blocks live (dask):
:func:`block_pass`, :func:`pass_summary`, :func:`block_chain`."""
