"""The dask design: ``dask.array`` data chunked by rows, with the operations of :class:`~linsep.designs.base.Design`.

Imported only for dask input (:func:`linsep.designs.backend.is_dask_collection`
tests the type's module name, so ``import linsep`` never imports dask).

Layout
------
``X`` (N, d) is chunked by rows, with all ``d`` columns in one chunk (a
column-chunked ``X`` is rechunked, if the row blocks stay below
:data:`linsep.designs.dask_data.MAX_BLOCK_BYTES`); ``y`` (dask or NumPy) is brought to the same row
chunks.  Both are persisted once: every later pass reads the blocks where
they live.  The design ``Y = diag(y)[X, 1]`` is never formed: each task forms
its block's signed rows, in float64, from ``X_b``, the labels and the class
taken as ``+1``; blocks may be dense or ``scipy.sparse`` (:class:`linsep._core.signed_design.SparseSignedRows`
then).  On the client live only ``p = d + 1``-sized vectors, the
``p × p`` Gram matrix and its factor (for wide ``X``, beyond the direct
factorisation's limit, not even those: :class:`DistributedLeastSquares` solves
by conjugate gradients whose every product is a pass over the blocks), and the scalars of the rules;
``N``-sized vectors (``B``, ``D``, LSVM's ``α`` and ``r``) stay on the
workers, one persisted block per row chunk.

The drivers are the in-memory ones (:mod:`linsep.solvers.ho_kashyap`,
:mod:`linsep.solvers.mse`, :mod:`linsep.solvers.lsvm`); this module only
supplies the blockwise operations and moves the data.  Ho–Kashyap's pass
(:meth:`DaskDesign.fused_margin_pass`) is one round trip: each block runs the solver's
:func:`linsep.solvers.ho_kashyap.step.block_pass` (handed down by the solver) where it lives, computing
``E``, its :math:`B_{k+1}` (kept on the worker), its share of the next right-hand side and of every rule's
scalars with NumPy products over the block (no compiled code on the workers), in one task per worker's
group of blocks; IRLS (MHKA, HKESA) needs the global ``max |E_k|`` for the floor of ``D_k``, so its
weighted Gram matrix takes a second pass, as the in-memory compiled loop does.  For small ``X`` several
iterations run in one task per round trip: the solver's
:func:`linsep.solvers.ho_kashyap.step.block_chain` over every block (:meth:`DaskDesign.chained_iterates`).

Round trips and groups of blocks
--------------------------------
A scheduler round trip, and every task in it, costs milliseconds (more on a
loaded machine), while a pass over a small row block costs microseconds.  The
design therefore runs one task per *group* of row blocks (the blocks one worker
holds, :func:`worker_groups`) instead of one per block; a vector made by those
tasks is a :class:`GroupVec` (per group, the task's result and the path to its
per-block list).  For small ``X`` (:func:`chain_length`) several Ho–Kashyap
iterations run in one task over every block, wherever they are held
(:func:`chain_task`, the solver's ``block_chain`` run on the blocks): the driver
pays one round trip per chunk of iterations and takes the chunk's iterates from
a list (:func:`chained`), and each iterate on the worker runs inside the solver's
step module.  Inside a group every block is computed by the same per-block
function, and sums over blocks are taken in block order on the same per-block
parts, so the numbers do not depend on the grouping or on the chunking.  Every
round trip goes through ``_compute`` and ``_persist``, which the private hook
:func:`round_trips` counts.

Verdicts are checked blockwise: a ``not_separable`` certificate with the
per-column test of :mod:`linsep._core.certificates`, ``separable`` on the
returned weights.
"""

from __future__ import annotations

import contextlib
import itertools
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from linsep.designs.backend import is_dask_collection
from linsep._core.certificates import (
    FIT_PROOF_RTOL,
    column_largest,
    power_of_two_shifts,
    proof_block_sums,
    residuals_from_sums,
    separates,
    side_tolerance,
)
from linsep._core.signed_design import (
    SignedDesign,
    SparseSignedRows,
    augment,
    augmented_weights,
    column_maxabs,
    columns_out_of_range,
    safe_exponent,
    signed_scores,
)
from linsep._core.plan import FLOAT64_ONLY, working_dtype
from linsep._core.certificates import nonseparability_certificate
from linsep._core.irls import irls_weights
from linsep._core.krylov import conjugate_gradients, column_squares
from linsep._core.linalg import (GramOnly, IterativeLeastSquares, PositiveDefiniteFactor, iteration_forcing,
                                 least_squares_solver, too_wide_for_direct)
from linsep._core.lsvm_update import LinearStepping, linear_pass
from linsep.designs.base import Design
from linsep.designs.weights import validation_weight_factor

__all__ = [
    "DaskDesign",
    "DaskLSVMFactor",
    "DistributedLeastSquares",
    "GroupVec",
    "RoundTrips",
    "block_values",
    "chain_length",
    "chain_task",
    "chained",
    "group_map",
    "is_proof",
    "round_trips",
    "worker_groups",
]


# --- Round trips ---------------------------------------------------------------------------------

def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - a dask object cannot exist without dask
        raise ImportError("dask input needs the dask extra: pip install -e '.[dask]' in linsep's checkout") from exc
    return dask, da


# Every scheduler round trip goes through these two, so that tests can count them (round_trips) and
# check that only small results come back to the client.
def _compute(*objects):
    dask, _ = _dask()
    results = dask.compute(*objects)
    for counter in _COUNTERS:
        counter.computes += 1
        counter.largest = max(counter.largest, _largest_array(results))
    return results


def _persist(*objects):
    dask, _ = _dask()
    for counter in _COUNTERS:
        counter.persists += 1
    return dask.persist(*objects)


_COUNTERS = []


class RoundTrips:
    """What ``round_trips`` counted: ``computes``, ``persists`` and the ``largest`` array computed (entries)."""

    def __init__(self):
        self.computes = self.persists = self.largest = 0


@contextlib.contextmanager
def round_trips():
    """Private hook for tests and benchmarks: count the round trips (and the largest result) inside the block."""
    counter = RoundTrips()
    _COUNTERS.append(counter)
    try:
        yield counter
    finally:
        _COUNTERS.remove(counter)


def _largest_array(value, depth=0):
    """The most entries of an array inside ``value`` (nested containers and objects' attributes)."""
    if isinstance(value, np.ndarray):
        return value.size
    if depth > 4:
        return 1
    if isinstance(value, dict):
        value = list(value.values())
    elif not isinstance(value, (list, tuple)):
        value = list(vars(value).values()) if hasattr(value, "__dict__") else []
    return max([_largest_array(v, depth + 1) for v in value], default=1)


def _delayed(function):
    dask, _ = _dask()
    return dask.delayed(function, pure=False)


def _sum_parts(parts, name):
    return np.sum([part[name] for part in parts], axis=0)


# --- Per-block work (runs on the workers) -------------------------------------------------------------

def _signed_labels(labels, positive, rows, scale=None):
    """``y = ±1`` (times ``scale``) for the rows ``rows`` (``None``: all) of a block."""
    y = np.where((labels if rows is None else labels[rows]) == positive, 1.0, -1.0)
    return y if scale is None else y * scale


def _as_float(X):
    """A block in float64 (float32 kept for dense blocks, as in memory): CSR for a sparse block, else an ndarray."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=working_dtype(X, FLOAT64_ONLY))


def _signed_rows(X, labels, positive, rows, scale=None):
    """``(X_b, y_b)`` in float64 for the rows ``rows`` (``None``: all) of a block (see :func:`_signed_labels`)."""
    X = X if rows is None else X[rows]
    return _as_float(X), _signed_labels(labels, positive, rows, scale)


def _signed_view(X, y, rows):
    """``diag(y) [X_R, 1]`` never formed: a :class:`SignedDesign` (dense ``X``) or :class:`SparseSignedRows`."""
    if sp.issparse(X):
        return SparseSignedRows(X, y, rows)
    return SignedDesign(_as_float(X), y, rows)


def _signed_block(X, labels, positive, rows, scale=None):
    """The block's rows of ``Y`` as a signed view (:func:`_signed_view`; a dense row subset read in place)."""
    return _signed_view(X, _signed_labels(labels, positive, rows, scale), rows)


class _SignedBlock:
    """A block's signed rows, made once per design on the worker that holds the block, read by every pass.

    ``Y``: the view :func:`_signed_block` (dense blocks in float64, signs times a scaled design's ``scale``);
    ``X``: the block as given (the input checks read it).  The per-iteration functions (:func:`_hk_block`,
    :func:`_irls_block`, :func:`_count_block`, …) take it, so that no pass rebuilds a block's view or its runs
    of rows: :meth:`runs` are the view's runs, kept when they are views of ``X`` (all rows taken) and made per
    pass for a row subset (copies, which a persisted block would hold twice).
    """

    def __init__(self, X, labels, positive, rows, scale=None):
        self.X = X
        self._parts = (labels, positive, rows, scale)
        # A float64 block's view shares the block's memory: kept for the whole fit.  A block of another type
        # (float32) is copied to float64 by the view: that copy is made per pass and dropped, so that the
        # persisted block is not held twice (a float32 fit would otherwise hold X three times its size).
        self._Y = _signed_block(X, labels, positive, rows, scale) if X.dtype == np.float64 else None
        self._runs = list(self._Y._blocks()) if rows is None and self._Y is not None else None

    @property
    def Y(self):
        """The block's signed view: the kept one, or (a block not in float64) one made for this pass."""
        return self._Y if self._Y is not None else _signed_block(self.X, *self._parts)

    def runs(self):
        """``(slice of the block's rows, the matching rows of X)`` for each run of rows (see ``_blocks``)."""
        return self._runs if self._runs is not None else self.Y._blocks()

    def parts(self):
        """``(runs, signs)``: what :func:`linsep.solvers.ho_kashyap.step.block_pass` reads of the block (one view)."""
        Y = self.Y  # a block not in float64: its view made once for the caller
        # a list: a chain reads the runs every iterate (a row subset's are copies, held for the call only)
        return (self._runs if self._runs is not None else list(Y._blocks())), Y.y


def _all_finite(X):
    """Whether every entry of a block (dense, or the stored ones of a sparse block) is finite."""
    return bool(np.isfinite(X.data if sp.issparse(X) else X).all())


def _gram_of(Y, scale, D=None):
    """``YᵀDY``: the view's Gram matrix leaves the labels out, so scaled rows ``r_i y_i`` weigh it by ``r²``."""
    return Y.gram(D) if scale is None else Y.gram(scale * scale if D is None else D * (scale * scale))


def _gram_block(X, labels, positive, rows, margin, rhs=None, gram=True, scale=None):
    """A block's ``YᵀY`` (if ``gram``; ``[X_b, 1]ᵀ[X_b, 1]`` unscaled), its share of ``Yᵀ rhs``, and the checks' scalars.

    ``rhs``: ``None`` (no right-hand side), ``("constant", c)`` for ``r = c 1``,
    ``("margin", c)`` for ``r = margin_b + c`` or ``("labels", classes)`` for the
    linear machine's ``[X, 1]ᵀ B`` (``B_ik = margin_i`` for the sample's class;
    rows ``r_i (x_i, 1)`` on a scaled design).  ``margin`` has one entry per
    row of the design (the block's selected rows); ``margin_ok`` tests the
    target ``margin + c`` (``margin`` for the linear machine).
    """
    Y = _signed_block(X, labels, positive, rows, scale)
    out = {"gram": _gram_of(Y, scale), "finite": _all_finite(Y.X), "largest": column_maxabs(X)} if gram else {}
    b = None if margin is None else np.asarray(margin, dtype=np.float64)
    if b is not None:
        shift = rhs[1] if rhs is not None and rhs[0] == "margin" else 0.0
        out["margin_ok"] = bool(np.isfinite(b).all() and (b + shift).min(initial=np.inf) > 0)
    if rhs is not None:
        kind, value = rhs
        n = Y.shape[0]
        if kind == "constant":
            out["g"] = Y.T @ np.full(n, float(value))
        elif kind == "margin":
            out["g"] = Y.T @ ((np.ones(n) if b is None else b) + value)
        else:  # the linear machine: A = [X, 1] unsigned, B the class indicator times b
            target = np.zeros((n, len(value)))
            own = np.searchsorted(value, labels if rows is None else labels[rows])
            target[np.arange(n), own] = 1.0 if b is None else b
            out["g"] = _signed_view(Y.X, np.ones(n) if scale is None else scale, Y.rows).T @ target
    return out


def _hk_block(block, B, D, W, *, block_pass, scale=None, **options):
    """One Ho–Kashyap pass over a block: the solver's ``block_pass`` on the block's runs of rows and signs.

    ``block``: the block's :class:`_SignedBlock`, made once per design (its signs carry ``scale``);
    ``block_pass``: :func:`linsep.solvers.ho_kashyap.step.block_pass`, handed down by the solver (NumPy
    products: a worker loads no compiled code, about 45 MB of its memory limit for the whole fit).
    """
    return block_pass(*block.parts(), B, D, W, **options)


def _irls_block(block, E, B_next, irls_floor, eabs_max, offset, update, scale=None):
    """IRLS second pass: ``D_k`` (kept), the block's ``[X, 1]ᵀD_k[X, 1]`` and ``YᵀD_k r``.

    ``D_k`` is :func:`linsep._core.irls.irls_weights` with the floor
    from the global ``max |E_k|`` (``eabs_max``); ``block``: the block's :class:`_SignedBlock`.
    """
    Y = block.Y
    D = irls_weights(E, irls_floor, eabs_max)
    r = (B_next if offset == 0.0 else B_next + offset) if update == "margin" else np.abs(E)
    return D, {"gram": _gram_of(Y, scale, D), "g": Y.T @ (r * D)}


def _normal_block(block, v, scale=None):
    """The block's share of ``YᵀY v`` (rows ``r_i y_i (x_i, 1)`` on a scaled design: ``r²`` weighs it)."""
    Y = block.Y
    return Y.T @ (Y @ v)


def _wide_checks_block(block, scale=None):
    """A wide block's input checks and its share of ``diag(YᵀY)`` (the Jacobi preconditioner): no Gram matrix."""
    Y, X = block.Y, block.X
    weights = None if scale is None else scale * scale
    if isinstance(Y, SparseSignedRows):
        squares = column_squares(augment(Y.X), weights)
    else:
        squares = column_squares(Y, weights)
    stored = Y.X.nnz + Y.shape[0] if isinstance(Y, SparseSignedRows) else None  # Y's stored entries, bias included
    return {"finite": _all_finite(Y.X), "largest": column_maxabs(X), "squares": squares, "stored": stored}


def _count_block(block, W, scale=None, count_weight=None):
    """``(number of Y_b W <= 0 (or their count_weight's sum), min Y_b W, all finite)`` for a block (:class:`_SignedBlock`)."""
    Z = block.Y @ W
    count = int(np.count_nonzero(Z <= 0)) if count_weight is None else float(np.sum(count_weight[Z <= 0]))
    return count, float(Z.min(initial=np.inf)), bool(np.isfinite(Z).all())


def _certificate_block(block, B, D, W, offset, scale=None):
    """``u_b = max(−E_b, 0)`` (times ``D_b`` for IRLS): a block of the non-separability certificate."""
    Y = block.Y
    if isinstance(B, Real):
        B = np.full(Y.shape[0], float(B))
    Z = Y @ W
    E = Z - B if offset == 0.0 else Z - offset - B
    return nonseparability_certificate(E, D)


def _proof_support_block(X, labels, positive, rows, u):
    """First pass of the proof check: column maxima on the support of ``u``, and ``u``'s own checks."""
    X, _ = _signed_rows(X, labels, positive, rows)
    u = np.asarray(u, dtype=np.float64)
    support = u > 0
    if sp.issparse(X):
        rows_u = X[support]
        largest = np.zeros(X.shape[1])
        np.maximum.at(largest, rows_u.indices, np.abs(rows_u.data))
    else:
        largest = column_largest(X[support])
    return {"largest": largest, "umax": float(u.max(initial=0.0)),
            "valid": bool(np.isfinite(u).all() and u.min(initial=0.0) >= 0)}


def _proof_sums_block(X, labels, positive, rows, u, umax, shifts):
    """Second pass of the proof check: the block's share of the signed and absolute column sums."""
    X, y = _signed_rows(X, labels, positive, rows)
    support = u > 0
    weights = (y * u)[support] / umax
    if sp.issparse(X):  # the stored entries only, each column rescaled as a dense block's would be
        rows_u = X[support]
        terms = np.ldexp(rows_u.data, shifts[rows_u.indices]) * np.repeat(weights, np.diff(rows_u.indptr))
        signed = np.bincount(rows_u.indices, weights=terms, minlength=X.shape[1])
        magnitude = np.bincount(rows_u.indices, weights=np.abs(terms), minlength=X.shape[1])
    else:
        signed, magnitude = proof_block_sums(X[support], weights, shifts)
    return np.append(signed, weights.sum()), np.append(magnitude, np.abs(weights).sum())


def _lsvm_block(X, labels, positive, rows, r, alpha, W, C, mu, first, scale=None):
    """One LSVM pass over a block: :func:`linsep.solvers.lsvm.linear_pass` on its rows (scaled: ``c = r_0 = √s``)."""
    X, y = _signed_rows(X, labels, positive, rows, scale)
    start = np.ones(X.shape[0]) if scale is None else scale
    alpha, r_next, g, step_sq, alpha_sq, objective = linear_pass(
        X, y, W, start if r is None else r, None if first else alpha, C, mu, linear_term=scale)
    return r_next, alpha, {"step_sq": step_sq, "alpha_sq": alpha_sq, "objective": objective, "g": g}


# --- The blockwise design -------------------------------------------------------------------------------

class DaskDesign(Design):
    """``Y = diag(y)[X_R, 1]`` over persisted row blocks, never formed: the blocks the tasks run on.

    ``positive`` is the label mapped to ``+1`` (all others to ``−1``; ``None``:
    no signs, ``[X_R, 1]``); ``rows`` optionally selects rows of each block
    (a list of delayed index arrays, with ``counts`` their lengths).  Each
    task signs its block's rows itself (:func:`_signed_block`); only
    ``p``-sized results come back.  A ``Vec`` of this design is a list with
    one entry per block (a persisted delayed vector, or a number standing for
    that constant, made on the worker), or, as the Ho–Kashyap passes make
    them, a :class:`GroupVec` (one entry per
    group of blocks).  The Ho–Kashyap pass runs one task per group
    (``blocks.groups``); for small ``X`` (``chain_length``) several iterations
    run in one task over every block (:meth:`chained_iterates`).

    Sample weights (``linsep.designs.weights``): a scaled design (:meth:`scaled`)
    has the rows ``r_i y_i (x_i, 1)``, ``r`` a persisted part per block that
    every task applies (``scale=``, :meth:`block_weights`); a weighted
    validation design sums the weights of its errors (``count_weight=``).
    Rows of weight 0 would still count in the rules' statistics: they leave
    through ``rows``.
    """

    offers_compiled = False
    dtype = FLOAT64_ONLY[0]  # every task computes in float64 (_signed_rows); estimators round to X's type
    ndim = 2
    chain_max = None  # most iterates per round trip (chained_iterates); None: chain_length(self); private, for tests

    def __init__(self, blocks, positive, rows=None, counts=None, scale=None, count_weight=None):
        self.blocks = blocks
        self.positive = positive
        self.rows = [None] * len(blocks.sizes) if rows is None else rows
        self.counts = list(blocks.sizes) if counts is None else [int(c) for c in counts]
        self.shape = (sum(self.counts), blocks.n_features + 1)
        self.scale = scale  # (dask array (N_R,), its per-block parts) or None
        self.count_weight = count_weight  # (dask array (N_R,), its per-block parts) or None
        self._held = []
        self._signed = None  # the blocks' _SignedBlock, persisted at the first group task (signed_blocks)

    def with_positive(self, positive):
        return DaskDesign(self.blocks, positive, self.rows, self.counts, self.scale, self.count_weight)

    def scaled(self, weight, power):
        """The rows ``s_i^power y_i (x_i, 1)`` (``linsep.designs.weights.scaled_labels``); ``weight``: dask, one per row."""
        scale = weight if power == 1 else (np.sqrt(weight) if power == 0.5 else weight ** power)
        (scale,) = _persist(scale.rechunk((tuple(self.counts),)))
        return DaskDesign(self.blocks, self.positive, self.rows, self.counts,
                          (scale, scale.to_delayed().ravel().tolist()), self.count_weight)

    def counted_with(self, weight):
        """This design counting its errors with the weights ``weight`` (dask, one per row)."""
        (weight,) = _persist(weight.rechunk((tuple(self.counts),)))
        return DaskDesign(self.blocks, self.positive, self.rows, self.counts, self.scale,
                          (weight, weight.to_delayed().ravel().tolist()))

    def counted_with_weights(self, weight):
        """:meth:`counted_with` the weights normalised to sum to the rows (as :class:`linsep.designs.weights.WeightedValidation`)."""
        (total,) = _compute(weight.sum())
        return self.counted_with(weight * validation_weight_factor(total, self.shape[0]))

    def gram(self):
        """``YᵀY`` (``[X, 1]ᵀ[X, 1]`` weighed by a scaled design's rows): one blockwise pass, shared by any labels."""
        return _prepared_gram(self)[0]

    def is_proof(self, u, rtol=FIT_PROOF_RTOL):
        """Whether ``u`` (a dask array, one entry per row) proves this design not separable (:func:`is_proof`)."""
        return is_proof(self, u, rtol)

    def separates(self, coef, intercept):
        """Whether ``y_i (coef·x_i + intercept) > τ_i``, finite, on every row (the stored model's check).

        ``τ_i``: :func:`linsep._core.certificates.side_tolerance`, the rounding bound of the score.
        """
        return all(_compute(*self.tasks(_separates_block, coef=coef, intercept=float(intercept))))

    def tasks(self, function, *per_block, **constants):
        """One delayed ``function(X_b, labels_b, positive, rows_b, *per_block[b], **constants)`` per block (+ weights)."""
        call = _delayed(function)
        return [call(X, labels, self.positive, rows, *(values[b] for values in per_block), **constants,
                     **self.block_weights(b))
                for b, (X, labels, rows) in enumerate(zip(self.blocks.X_parts, self.blocks.label_parts, self.rows))]

    def block_weights(self, b):
        """Block ``b``'s weight keywords for the per-block functions: ``scale``, ``count_weight`` (none unweighted)."""
        return {name: parts[1][b] for name, parts in (("scale", self.scale), ("count_weight", self.count_weight))
                if parts is not None}

    def signed_blocks(self):
        """Each block's :class:`_SignedBlock`, persisted where the block lives: made once per design (per problem).

        Every pass of a fit (Ho–Kashyap's, IRLS's, the counts, the certificate, the distributed CG products)
        reads these, so no iteration rebuilds a block's signed view.  On a scheduler that computes ``persist``
        at once (threads, synchronous) they are built here; on a ``distributed`` client with the first pass.
        """
        if self._signed is None:
            call = _delayed(_SignedBlock)
            self._signed = list(_persist(*[
                call(X, labels, self.positive, rows, **{k: v for k, v in self.block_weights(b).items() if k == "scale"})
                for b, (X, labels, rows) in enumerate(zip(self.blocks.X_parts, self.blocks.label_parts, self.rows))]))
        return self._signed

    def group_tasks(self, function, names, *per_group, groups=None, **constants):
        """One delayed :func:`group_map` of ``function`` per group of blocks, on their
        :meth:`signed_blocks`.

        ``groups``: block-index lists (default ``blocks.groups``, by worker).
        """
        call, signed = _delayed(group_map), self.signed_blocks()
        return [call(function, names, [signed[b] for b in group], *(values[g] for values in per_group),
                     block_weights=[self.block_weights(b) for b in group], **constants)
                for g, group in enumerate(self.blocks.groups if groups is None else groups)]

    def grouped(self, vector, groups=None):
        """``vector`` (a ``Vec``, or ``None``) as a :class:`GroupVec` over ``groups``.

        ``groups`` defaults to ``blocks.groups``; a vector made over other groups is picked block by block.
        """
        groups = self.blocks.groups if groups is None else groups
        if isinstance(vector, GroupVec):
            if vector.groups == groups:
                return vector
            vector = self._block_parts(vector)
        if vector is None or (all(isinstance(part, Real) for part in vector) and len(set(vector)) == 1):
            return GroupVec([None if vector is None else vector[0]] * len(groups), (), groups)
        return GroupVec([[vector[b] for b in group] for group in groups], (), groups)

    def _block_parts(self, vector):
        """A :class:`GroupVec` as per-block parts (numbers, or delayed picks)."""
        parts = [None] * len(self.counts)
        for item, group in zip(vector.items, vector.groups):
            for j, b in enumerate(group):
                parts[b] = item if isinstance(item, Real) else _delayed(_block_of)(item, vector.path, j)
        return parts

    def from_blocks(self, parts):
        """A dask array (N,) from per-block vectors (delayed, or numbers for constants) of this design's row counts."""
        _, da = _dask()
        return da.concatenate([da.full(n, float(part), chunks=(n,)) if isinstance(part, Real)
                               else da.from_delayed(part, shape=(n,), dtype=np.float64)
                               for part, n in zip(parts, self.counts)])

    # --- the Design protocol ----------------------------------------------------------------------
    def least_squares_solver(self, ridge, gram=None, minimum_norm=True):
        """The direct factor of ``YᵀY + CĨ`` from the Gram matrix (one pass, with the input checks, if not given).

        Wide ``Y`` (``p`` beyond :func:`linsep._core.linalg.too_wide_for_direct`): :class:`DistributedLeastSquares`,
        conjugate gradients whose products are blockwise passes; no ``p × p`` matrix anywhere.
        """
        if gram is None and too_wide_for_direct(self.shape[1]):
            return DistributedLeastSquares(self, ridge, minimum_norm=minimum_norm)
        if gram is None:  # the same pass gives Yᵀ1, the right-hand side of a constant target (MSE's b = 1)
            gram, self._ones_rhs = _prepared_gram(self, rhs=("constant", 1.0))
        return least_squares_solver(GramOnly(self.shape), None, ridge, gram=gram)

    def constant_vector(self, value):
        return [float(value)] * len(self.counts)

    def vector(self, values):
        """``values`` as per-block parts: already such parts (one per block), or a dask array of this design's rows."""
        if isinstance(values, list) and len(values) == len(self.counts):
            return values
        if is_dask_collection(values) and values.shape == (self.shape[0],):
            (values,) = _persist(values.astype(np.float64).rechunk((tuple(self.counts),)))
            self._held.append(values)  # its persisted blocks live as long as the design (the fit)
            return values.to_delayed().ravel().tolist()
        raise ValueError("a given N-vector (initial_margin) is not available for dask data; fit in memory")

    def solve_target(self, factor, B, offset, **solve):
        if isinstance(B, GroupVec):  # margins a pass left on the workers (a re-solve of the iterative path)
            B = self._block_parts(B)
        if all(isinstance(part, Real) for part in B) and len(set(B)) == 1:
            if B[0] + offset == 1.0 and getattr(self, "_ones_rhs", None) is not None:
                return factor.solve_normal(self._ones_rhs, **solve)
            return factor.solve_normal(_right_hand_side(self, ("constant", B[0] + offset)), **solve)
        return factor.solve_normal(_right_hand_side(self, ("margin", offset), B), **solve)

    def fused_margin_pass(self, W, B, D, *, blockwise, offset, two_mu, tol, update, irls, validation=None):
        """The Ho–Kashyap pass in one round trip: each block runs ``blockwise.block_pass`` (``Y_b W``, ``E_b``,
        :math:`B_{k+1}` kept on its worker, its share of ``Yᵀ r`` and of the statistics; :func:`_hk_block`),
        the client sums the shares (``blockwise.summary``).  ``blockwise``: the solver's
        :data:`linsep.solvers.ho_kashyap.step.BLOCKWISE`."""
        return _DaskPass(self, W, B, D, offset, two_mu, tol, update, irls, validation, blockwise)

    def count_nonpositive(self, W):
        parts = [part for group in _compute(*self.group_tasks(_count_block, None, W=W)) for part in group]
        return (int(np.sum([c for c, _, _ in parts])), min(z for _, z, _ in parts), all(f for _, _, f in parts))

    def chained_iterates(self, blockwise, state, W, D, factor, options, limit=None):
        """For small ``X``, up to ``chain_length`` iterates per round trip, run in one task; else ``None``.

        ``blockwise.chain`` (:func:`linsep.solvers.ho_kashyap.step.block_chain`, the solver's step over
        row blocks held in memory) runs on the worker over every block (:func:`chain_task`);
        ``options``: the pass's and the step's.
        """
        longest = chain_length(self) if self.chain_max is None else self.chain_max
        if longest < 2 or isinstance(factor, IterativeLeastSquares):  # (its products are round trips themselves)
            return None
        return chained(self, blockwise, state, W, D, factor, options, longest, limit)

    def host(self, vector, dtype=None):
        if isinstance(vector, GroupVec):  # persisted: it holds its blocks, not the pass (or chain) result
            (vector,) = _persist(self.from_blocks(self._block_parts(vector)))
            return vector
        return self.from_blocks(vector)

    def checked_certificate(self, u):
        """``u`` as it is: the fit checks its verdicts blockwise afterwards (``is_proof``, the per-column test)."""
        return u

    # --- MSE's linear machine and the LSVM --------------------------------------------------------
    def linear_machine(self, classes, margin=None, C=0.0):
        """``W = argmin ‖[X, 1] W − B‖² + C‖W̃‖²`` for the class indicator ``B`` (times ``b``), and its gap.

        Returns ``(W, factor, gap)``: the smallest ``own discriminant − largest other`` over the samples.
        """
        gram, G = _prepared_gram(self, rhs=("labels", classes), margin_parts=margin)
        factor = least_squares_solver(GramOnly(self.shape), None, C, gram=gram)
        W = factor.solve_normal(G)
        gap = min(_compute(*self.tasks(_gap_block, W=W, classes=classes)))
        return W, factor, gap

    def lsvm_factor(self, C, cg_forcing=0.0):
        """:class:`DaskLSVMFactor`: ``S = I/C + [X, 1]ᵗ[X, 1]`` from one blockwise pass (wide ``X``: distributed CG,
        its solves inside the iteration inexact by ``cg_forcing`` on large data, as in memory)."""
        return DaskLSVMFactor(self, C, cg_forcing)


class _BlockwiseY:
    """The shape (and, for sparse blocks, the stored entries) of a dask design's ``Y``: what the iterative
    solver reads of ``Y`` itself (:func:`linsep._core.linalg.iteration_forcing`)."""

    def __init__(self, shape, nnz=None):
        self.shape = shape
        if nnz is not None:
            self.nnz = nnz


class DistributedLeastSquares(IterativeLeastSquares):
    """:class:`~linsep._core.linalg.IterativeLeastSquares` on a :class:`DaskDesign`: each product a blockwise pass.

    The operator ``v ↦ YᵀY v + CĨ v`` is one round trip: every group task
    returns its blocks' ``Y_bᵀ(Y_b v)`` (a ``p``-vector), summed on the client
    in block order; the Jacobi diagonal comes from one pass of column
    squares, with the input checks.  Everything else (warm starts, inexact
    solves and their recycled steps, tolerances) is the in-memory solver's,
    so a fit follows the in-memory iterates to the rounding of the sums.
    ``Y``-sized vectors never reach the client: right-hand sides ``Yᵀ r``
    come from the design's passes (``DaskDesign.solve_target``), and the
    minimum-norm map of ``C = 0`` is plain CG from zero on
    ``YᵀY W' = YᵀY W`` (its iterates in the row space of ``Y``).
    """

    def __init__(self, design, ridge, *, minimum_norm=True, penalize_bias=False, forcing=0.0):
        self.design = design
        parts = _compute(*design.group_tasks(_wide_checks_block, None))
        checks = _in_block_order(design, parts)
        if not all(part["finite"] for part in checks):
            raise ValueError("Input X contains NaN or infinity.")
        _check_scale(np.max([part["largest"] for part in checks], axis=0), design.blocks.dtype)
        self._squares = np.sum([part["squares"] for part in checks], axis=0)
        nnz = None if checks[0]["stored"] is None else sum(part["stored"] for part in checks)
        super().__init__(_BlockwiseY(design.shape, nnz), None, ridge, penalize_bias=penalize_bias,
                         minimum_norm=minimum_norm, forcing=forcing)

    def _products(self, Y):
        return None, None  # products are passes over the blocks (_matvec)

    def _normal_diagonal(self):
        return self._squares

    def _matvec(self, v):
        design = self.design
        parts = _in_block_order(design, _compute(*design.group_tasks(_normal_block, None, v=np.asarray(v))))
        out = np.sum(parts, axis=0)
        self._image_of_last = None  # Y v stays on the workers
        if self.ridge > 0:
            out += self._penalty * v
        return out

    def solve(self, rhs, tol=None, x0=None):
        raise TypeError("a distributed solve takes Yᵀ r (solve_normal); the design computes it blockwise")

    def reweighted(self, sample_weight):
        raise TypeError("IRLS weights of dask data are not supported by the distributed solver")

    def minimum_norm_part(self, W, tol=None):
        """``Y⁺ Y W``: plain CG from zero on ``YᵀY W' = YᵀY W`` (``C = 0``; iterates in the row space)."""
        tol = self.tol if tol is None else float(tol)
        g = self._matvec(np.asarray(W, dtype=float))
        start = np.zeros(self.design.shape[1])
        out, n_iter, self.residual, self.converged = conjugate_gradients(self._matvec, g, start, None, tol, self.max_iter)
        self.iterations += n_iter
        self.solves += 1
        self.exact = self.residual <= self.tol
        self.minimum_norm_map = "cg"
        return out


def _prepared_gram(design, rhs=None, margin_parts=None):
    """One pass: ``YᵀY`` and, if ``rhs`` is given, ``Yᵀ rhs`` (else ``None``), with the input checks."""
    margins = margin_parts if margin_parts is not None else [None] * len(design.counts)
    parts = _compute(*design.tasks(_gram_block, margins, rhs=rhs))
    if not all(part["finite"] for part in parts):
        raise ValueError("Input X contains NaN or infinity.")
    if margin_parts is not None and not all(part["margin_ok"] for part in parts):
        raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
    _check_scale(np.max([part["largest"] for part in parts], axis=0), design.blocks.dtype)
    return _sum_parts(parts, "gram"), (_sum_parts(parts, "g") if rhs is not None else None)


def _right_hand_side(design, rhs, margin_parts=None):
    """One pass for ``Yᵀ rhs`` alone (``rhs`` as in :func:`_gram_block`), when ``YᵀY`` is known already."""
    margins = margin_parts if margin_parts is not None else [None] * len(design.counts)
    parts = _compute(*design.tasks(_gram_block, margins, rhs=rhs, gram=False))
    if margin_parts is not None and not all(part["margin_ok"] for part in parts):
        raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
    return _sum_parts(parts, "g")


def _check_scale(largest, dtype):
    """Refuse columns that the in-memory fit would rescale (:func:`linsep._core.signed_design.column_shifts`' test).

    The in-memory estimators rescale columns whose largest magnitude lies outside ``[2^-p, 2^p]`` by
    powers of two; the dask backend does not, and refuses such data with the cause.
    """
    p = safe_exponent(dtype)
    outside = np.flatnonzero(columns_out_of_range(largest, p))
    if outside.size:
        j = int(outside[0])
        raise ValueError(
            f"column {j} of X has magnitudes up to {largest[j]:.3g}, outside 2^±{p} ({np.dtype(dtype).name}); "
            f"the dask backend does not rescale columns (the in-memory fit rescales them exactly by powers "
            f"of two): rescale X before fitting, or fit it in memory")


def _gap_block(X, labels, positive, rows, W, classes, scale=None):
    """Smallest ``own discriminant − largest other`` over a block's rows (the linear machine's verdict; unscaled)."""
    if rows is not None:
        X, labels = X[rows], labels[rows]
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    scores = np.asarray(X @ W[:-1]) + W[-1]
    own = np.searchsorted(classes, labels)
    index = np.arange(X.shape[0])
    mine = scores[index, own]
    scores[index, own] = -np.inf
    return float((mine - scores.max(axis=1)).min(initial=np.inf))


class DaskLSVMFactor:
    """The linear LSVM's factor on a dask design: :class:`linsep.solvers.lsvm.LSVMFactor`'s interface.

    ``S = I/C + [X, 1]ᵗ[X, 1]`` does not depend on the labels: one factor
    serves every one-vs-rest problem (``stepper`` takes the signed design).
    """

    def __init__(self, design, C, cg_forcing=0.0):
        self.C = float(C)
        if too_wide_for_direct(design.shape[1]):  # wide X: S by distributed CG, never formed
            self._factor = _DistributedS(design, self.C, cg_forcing)
        else:
            gram, _ = _prepared_gram(design)
            gram[np.diag_indices_from(gram)] += 1.0 / self.C
            self._factor = PositiveDefiniteFactor(gram, 1.0 / self.C)
        self.method = self._factor.method
        self.stats = {"factorization": self.method}

    def stepper(self, design, mu):
        """The update (22) on ``design`` (signed by its ``positive`` class), started at ``α_0 = Q⁻¹1``."""
        return _LSVMStep(design, self._factor, self.C, mu)


class _DistributedS:
    """``S⁻¹ g`` for ``S = I/C + HᵗH`` of wide dask data: :class:`DistributedLeastSquares`.

    As in memory (``linsep.solvers.lsvm.solver._IterativeS``): on large data the solves inside the
    iteration stop at the forcing target ``default_forcing`` (:func:`linsep._core.linalg.iteration_forcing`),
    and the returned weights are re-solved in full (``_LSVMStep.polish``).
    """

    method = "cg"

    def __init__(self, design, C, default_forcing):
        self.solver = DistributedLeastSquares(design, 1.0 / C, penalize_bias=True)
        self.solver.forcing = iteration_forcing(self.solver.Y, None, default=default_forcing)

    def solve(self, g, exact=False, x0=None):
        return self.solver.solve_normal(g, self.solver.tol if exact else None, x0)

    @property
    def converged(self):
        return self.solver.converged


class _LSVMStep(LinearStepping):
    """The LSVM update (22) over persisted blocks: the in-memory step's :class:`linsep._core.lsvm_update.LinearStepping` over a blockwise pass.

    ``r`` and ``α`` stay on the workers; :math:`W_{k+1} = S^{-1} H^t r_k` is solved on
    the client from the ``p``-vector each pass returns; the step itself
    (``__call__``) is the in-memory one.
    """

    def __init__(self, design, pd_factor, C, mu):
        self.design, self.f, self.C, self.mu = design, pd_factor, C, mu
        self.solves_converged = True  # every S⁻¹g met its tolerance (a direct factor always does)
        if design.scale is None:
            self._rhs = _right_hand_side(design, ("constant", 1.0))  # Hᵗ1 = [X, 1]ᵗy
        else:  # the weighted dual: H̃ᵗ√s on the rows √s_i h_i (_lsvm_block)
            self._rhs = _right_hand_side(design, ("margin", 0.0), design.scale[1])
        self.weights = self._solve(self._rhs)
        self._r = [None] * len(design.counts)
        self._alpha = [None] * len(design.counts)
        self._next = None
        self.objective = self._pass(first=True)[4]

    def _pass(self, first=False):
        outs = _persist(*self.design.tasks(_lsvm_block, self._r, self._alpha, W=self.weights, C=self.C,
                                           mu=self.mu, first=first))
        parts = _compute(*[out[2] for out in outs])
        self._r = [out[0] for out in outs]
        self._alpha = [out[1] for out in outs]
        self._next_rhs = _sum_parts(parts, "g")
        self._next = self._solve(self._next_rhs)
        step_sq = float(np.sum([p["step_sq"] for p in parts]))
        alpha_sq = float(np.sum([p["alpha_sq"] for p in parts]))
        objective = float(np.sum([p["objective"] for p in parts]))
        return step_sq, alpha_sq, 0.0, 0.0, objective

    def _solve(self, g):
        out = self.f.solve(g)
        self.solves_converged &= getattr(self.f, "converged", True)
        return out

    def polish(self):
        """Re-solve the final weights :math:`W_k = S^{-1} g_{k-1}` in full after inexact distributed solves."""
        if isinstance(self.f, _DistributedS) and self.f.solver.forcing > 0:
            self.weights = self.f.solve(self._rhs, exact=True, x0=self.weights)
            self.solves_converged &= self.f.converged

    @property
    def alpha(self):
        """``α`` (a dask array): ``√s β`` on a scaled design, as :func:`linsep.solvers.lsvm.lagrangian_svm` returns."""
        alpha = self.design.from_blocks(self._alpha)
        return alpha if self.design.scale is None else alpha * self.design.scale[0]


# --- Verdict checks ------------------------------------------------------------------------------------------

def is_proof(design, u, rtol=FIT_PROOF_RTOL):
    """:func:`linsep._core.certificates.is_proof` blockwise: ``u`` (a dask array) proves ``design`` not separable."""
    _, da = _dask()
    if u is None or u.shape != (design.shape[0],):
        return False
    u_parts = da.asarray(u).rechunk((tuple(design.counts),)).to_delayed().ravel().tolist()
    first = _compute(*design.tasks(_proof_support_block, u_parts))
    umax = max(part["umax"] for part in first)
    if not (all(part["valid"] for part in first) and umax > 0):
        return False
    largest = np.max([part["largest"] for part in first], axis=0)
    shifts = power_of_two_shifts(largest)
    sums = _compute(*design.tasks(_proof_sums_block, u_parts, umax=umax, shifts=shifts))
    residuals = residuals_from_sums(np.sum([s for s, _ in sums], axis=0), np.sum([m for _, m in sums], axis=0),
                                    largest)
    return bool(np.all(residuals <= rtol))


def _separates_block(X, labels, positive, rows, coef, intercept):
    X, y = _signed_rows(X, labels, positive, rows)
    with np.errstate(over="ignore", invalid="ignore"):
        signed = signed_scores(X, y, augmented_weights(coef, intercept))
    # strictly on its side: beyond the rounding bound of the score, as the in-memory verdict checks it
    return separates(signed, np.ones_like(signed), side_tolerance(X, coef, intercept))


# --- Groups of blocks: one task per worker's blocks --------------------------------------------------

def worker_groups(X, n_blocks):
    """The row blocks grouped by the worker that holds them (a list of ascending block-index lists).

    On a ``distributed`` client that is dask's current scheduler, the blocks of the
    persisted ``X`` are grouped by the first worker holding each (groups in the order of
    their first block); with any other scheduler (threads, synchronous) all blocks form one group.
    """
    try:
        import dask
        from dask.core import flatten
        from distributed import default_client, futures_of, wait
        client = default_client()
    except (ImportError, ValueError):  # no distributed, or no client
        return [list(range(n_blocks))]
    if getattr(dask.base.get_scheduler(), "__self__", None) is not client:
        return [list(range(n_blocks))]
    futures = futures_of(X)
    wait(futures)
    holders = client.who_has(futures)
    where = {}
    for b, key in enumerate(flatten(X.__dask_keys__())):
        workers = holders.get(key) or holders.get(str(key)) or ("",)
        where.setdefault(sorted(workers)[0], []).append(b)
    return sorted(where.values(), key=lambda blocks: blocks[0])


class GroupVec:
    """An ``N``-vector of the dask design, by groups of blocks: per group a number (the constant) or a task result.

    ``path`` (keys) leads from a group's task result to its list of per-block arrays
    (``block_values``); ``groups`` are the groups' block indices (those of the tasks that made it).
    """

    def __init__(self, items, path, groups):
        self.items = list(items)
        self.path = tuple(path)
        self.groups = groups


def block_values(item, path, n):
    """A group's per-block values: ``n`` copies of a number, or the list at ``path`` in a task result."""
    if item is None or isinstance(item, Real):
        return [item] * n
    for key in path:
        item = item[key]
    return item


def group_map(function, names, blocks, *vectors, paths=(), block_weights=None, **constants):
    """``function(block_b, *vectors_b, **constants, **block_weights[b])`` for each block.

    ``blocks``: the blocks' signed views, made once per design (``DaskDesign.signed_blocks``);
    ``vectors``: group items of ``GroupVec`` with their ``paths`` (``block_values``);
    ``block_weights``: per block, its weight keywords (``DaskDesign.block_weights``).
    Returns the list of results, or (``names`` given, for functions returning tuples) a dict
    name → list over blocks.
    """
    per_block = [block_values(item, path, len(blocks)) for item, path in zip(vectors, paths)]
    block_weights = block_weights or [{}] * len(blocks)
    results = [function(block, *(values[b] for values in per_block), **constants, **block_weights[b])
               for b, block in enumerate(blocks)]
    if names is None:
        return results
    return {name: [result[i] for result in results] for i, name in enumerate(names)}


def validation_errors(counts):
    """The validation errors from the blocks' ``(count, _, _)``: an int, or a float when the rows are weighted."""
    return sum(count for count, _, _ in counts)


def chain_task(chain, blocks, B_next, E, D, paths, W, rhs, eabs_max, factor, validation, *, steps, shape, options,
               block_weights):
    """Up to ``steps`` Ho–Kashyap iterates over every block, in one task (runs on a worker; small ``X``).

    ``chain``: the solver's :func:`linsep.solvers.ho_kashyap.step.block_chain`, run here on the blocks'
    runs of rows and signs, read once per task from their signed views (``blocks``, ``DaskDesign.signed_blocks``,
    made once per design); every iterate runs inside it.  The pass state it starts from: :math:`B_{k+1}`
    (``B_next``), :math:`E_k` (IRLS), :math:`D_k` (group items with their ``paths``), ``W_k``, the summed
    right-hand side ``rhs`` (not IRLS), ``max|E_k|`` and the factor.  The chain calls back this design's
    per-block functions for IRLS's second pass (``_irls_block``) and the validation rows' counts
    (``_count_block``; ``validation``: ``(blocks, block_weights)`` of those rows, or ``None``).  ``options``:
    the pass's (``offset``, ``two_mu``, ``tol``, ``update``, ``irls``) and the step's (``learning_rate``,
    ``irls_floor``); ``block_weights``: per block, its weight keywords (``DaskDesign.block_weights``).
    Returns ``block_chain``'s result.
    """
    n = len(blocks)
    irls = options["irls"]
    o = options
    pass_options = dict(offset=o["offset"], two_mu=o["two_mu"], tol=o["tol"], update=o["update"], irls=irls)
    step_options = {name: o[name] for name in ("update", "learning_rate", "irls_floor", "irls")}

    def reweigh(E, B_next, irls_floor, eabs_max):
        return [_irls_block(block, e, b, irls_floor=irls_floor, eabs_max=eabs_max, offset=o["offset"],
                           update=o["update"], **kw)
                for block, kw, e, b in zip(blocks, block_weights, E, B_next)]

    count = None
    if validation is not None:
        val_blocks, val_weights = validation

        def count(W):
            return validation_errors([_count_block(block, W, **kw) for block, kw in zip(val_blocks, val_weights)])

    return chain([block.parts() for block in blocks], block_values(B_next, paths[0], n),
                 block_values(E, paths[1], n) if irls else [None] * n, block_values(D, paths[2], n), W, rhs,
                 eabs_max, factor, steps=steps, shape=shape, pass_options=pass_options, step_options=step_options,
                 reweigh=reweigh if irls else None, count=count)


# --- Ho–Kashyap pass states ---------------------------------------------------------------------------

class _PassState:
    """What a dask Ho–Kashyap pass state offers the driver, whatever computed it (:class:`_DaskPass`, ``_Chain``).

    Subclasses set ``W`` and then the statistics (``linsep.solvers.ho_kashyap.step.pass_summary``'s
    names, ``val_errors``, ``weight_norm_sq``), ``B``, ``D``, ``B_next`` and ``_E`` (group vectors) and ``_rhs``.
    """

    E = None  # never brought to the client

    def _set_statistics(self, stats):
        for name in ("J", "wrong", "separated", "max_e", "min_e", "max_b", "fixed_point", "eabs_max"):
            setattr(self, name, stats[name])
        self.weight_norm_sq = float(self.W[:-1] @ self.W[:-1])  # ‖w_k‖², the regularised criterion's (W: client)
        self._rhs = stats["rhs"]
        self.val_errors = stats.get("val_errors")

    def reweighted(self, factor, irls_floor):
        """IRLS second pass: ``D_k`` (kept on the workers), ``YᵀD_kY`` and ``YᵀD_k r`` (floor from the global ``max|E_k|``)."""
        design, E, B_next = self.design, self._E, self.B_next
        second = _persist(*design.group_tasks(_irls_block, ("D", "sums"), E.items, B_next.items, paths=(E.path, B_next.path),
                                              irls_floor=irls_floor, eabs_max=self.eabs_max, offset=self.offset,
                                              update=self.update))
        parts = _in_block_order(design, _compute(*[_delayed(_item)(out, "sums") for out in second]))
        self._rhs = _sum_parts(parts, "g")
        factor = least_squares_solver(GramOnly(design.shape), None, factor.ridge, gram=_sum_parts(parts, "gram"))
        return factor, GroupVec(second, ("D",), design.blocks.groups)

    def solve_margin(self, factor):
        return factor.solve_normal(self._rhs)

    def solve_increment(self, factor):
        return factor.solve_normal(self._rhs)

    def certificate(self):
        design = self.design
        groups = self.B.groups if isinstance(self.B, GroupVec) else design.blocks.groups  # where B lives
        B, D = design.grouped(self.B, groups), design.grouped(self.D, groups)
        parts = design.group_tasks(_certificate_block, None, B.items, D.items, groups=groups,
                                   paths=(B.path, D.path), W=self.W, offset=self.offset)
        (certificate,) = _persist(design.host(GroupVec(parts, (), groups)))
        return certificate


class _DaskPass(_PassState):
    """One Ho–Kashyap pass over the blocks (one persist, one compute; one task per group of blocks).

    See :class:`linsep.solvers.ho_kashyap.step.NamespacePass` for what the statistics are.
    """

    def __init__(self, design, W, B, D, offset, two_mu, tol, update, irls, validation, blockwise):
        self.design, self.W, self.offset, self.update = design, W, offset, update
        self.B, self.D = B, D
        B, D = design.grouped(B), design.grouped(D)
        outs = _persist(*design.group_tasks(_hk_block, ("B_next", "E", "stats"), B.items, D.items,
                                            paths=(B.path, D.path), W=W, offset=offset, two_mu=two_mu, tol=tol,
                                            update=update, irls=irls, block_pass=blockwise.block_pass))
        pending = [_delayed(_item)(out, "stats") for out in outs]
        if validation is not None:
            pending += validation.group_tasks(_count_block, None, W=W)
        results = _compute(*pending)
        stats = blockwise.summary(_in_block_order(design, results[:len(outs)]), irls)
        if validation is not None:
            stats["val_errors"] = validation_errors([count for part in results[len(outs):] for count in part])
        self._set_statistics(stats)
        self.B_next = GroupVec(outs, ("B_next",), design.blocks.groups)
        self._E = GroupVec(outs, ("E",), design.blocks.groups)


class _Chain:
    """Up to ``count`` Ho–Kashyap iterates after ``state`` in one task (one persist, one compute).

    :func:`chain_task` on all the design's blocks, in one task (the
    scheduler runs it where most of them are; small ``X``, ``chain_length``), each iterate the solver's
    step (``blockwise.chain``); :meth:`iterates` lists them with the error of a step that failed (raised by
    :func:`chained` only if the driver asks for that step).
    """

    def __init__(self, design, blockwise, state, W, D, factor, count, options):
        self.design, self.options = design, options
        self.groups = [list(range(len(design.counts)))]  # one task for every block (chain_length: small X)
        B_next, E, D = (design.grouped(v, self.groups) for v in (state.B_next, state._E, D))
        validation = options["validation"]
        val = None if validation is None else (validation.signed_blocks(),
                                                [validation.block_weights(b) for b in range(len(validation.counts))])
        chain_options = {name: options[name] for name in ("update", "learning_rate", "irls_floor", "offset",
                                                          "two_mu", "tol", "irls")}
        (group,) = self.groups
        signed = design.signed_blocks()
        (self.out,) = _persist(_delayed(chain_task)(
            blockwise.chain, [signed[b] for b in group], B_next.items[0], E.items[0], D.items[0],
            (B_next.path, E.path, D.path), W, state._rhs, state.eabs_max, factor, val, steps=count,
            shape=design.shape, options=chain_options,
            block_weights=[design.block_weights(b) for b in group]))
        (self.summary,) = _compute(_delayed(_chain_summary)(self.out))
        self.factor = factor

    def iterates(self):
        """The chain's iterates, as :func:`linsep.solvers.ho_kashyap.step.hk_iterates` gives them: a list of
        ``(W, B, D, factor, state)``; ``error``: the exception of a step that failed after them, or ``None``."""
        irls, factor, out = self.options["irls"], self.factor, self.out
        last = len(self.summary["iterates"]) - 1
        iterates = []
        for i, iterate in enumerate(self.summary["iterates"]):
            if irls:
                factor = iterate["factor"]
            D = GroupVec([out], ("D", i), self.groups) if irls else None
            state = _ChainedState(self.design, iterate, GroupVec([out], ("B", i), self.groups), D, self.options)
            state.B_next = GroupVec([out], ("B_next",) if i == last else ("B", i + 1), self.groups)
            state._E = GroupVec([out], ("E", i), self.groups)
            iterates.append((iterate["W"], state.B, D, factor, state))
        return iterates, self.summary["error"]


class _ChainedState(_PassState):
    """A pass state computed inside a ``_Chain`` (its vectors stay in the chain's result on the worker)."""

    def __init__(self, design, iterate, B, D, options):
        self.design, self.W, self.B, self.D = design, iterate["W"], B, D
        self.offset, self.update = options["offset"], options["update"]
        self._set_statistics(iterate["stats"])


_CHAIN_BYTES = 1 << 28
"""Most bytes a chain of iterations reads and keeps (``X`` once per iterate, and the iterates' vectors)."""
_CHAIN_MAX = 64
"""Most iterations per round trip."""


def chained(design, blockwise, state, W, D, factor, options, longest, limit):
    """The iterates after ``state`` (``DaskDesign.chained_iterates``), in chunks of 2, 4, 8, … (at most
    ``longest``, and ``limit`` in all) per round trip: a fit that stops soon computes few it does not use.

    An iterator over one list per round trip (:func:`_round_trips`): the driver's ``next`` takes an iterate
    from the list it holds, and comes back to this module only for the next round trip.
    """
    return itertools.chain.from_iterable(_round_trips(design, blockwise, state, W, D, factor, options, longest,
                                                      limit))


def _round_trips(design, blockwise, state, W, D, factor, options, longest, limit):
    """Each round trip's iterates (a list); then the error of a step that failed, raised only when the driver
    asks for that step (the list before it is taken first)."""
    steps, left = 2, np.inf if limit is None else limit
    while True:
        count = int(max(1, min(steps, longest, left)))
        iterates, error = _Chain(design, blockwise, state, W, D, factor, count, options).iterates()
        left -= len(iterates)
        yield iterates
        if error is not None:
            raise error
        W, _, D, factor, state = iterates[-1]  # the chain's last: the next one starts there
        steps *= 2


def chain_length(design):
    """Most iterates per round trip: 1 when a pass costs more than a round trip (``X`` beyond a fraction of
    :data:`_CHAIN_BYTES`), up to :data:`_CHAIN_MAX` for small data; at most dask.config's
    ``linsep.iterations-per-round-trip`` (an integer >= 1) when it is set."""
    n, p = sum(design.blocks.sizes), design.shape[1]
    longest = int(min(_CHAIN_MAX, max(1, _CHAIN_BYTES // (8 * n * (p + 3)))))
    dask, _ = _dask()
    cap = dask.config.get("linsep.iterations-per-round-trip", None)
    if cap is None:
        return longest
    if isinstance(cap, bool) or not isinstance(cap, Integral) or cap < 1:
        raise ValueError(f"dask.config 'linsep.iterations-per-round-trip' must be an integer >= 1, got {cap!r}")
    return min(longest, int(cap))


def _chain_summary(out):
    """The small part of a chain's result: the iterates' weights, factors and statistics, and its error."""
    return {"iterates": out["iterates"], "error": out["error"]}


def _item(value, key):
    return value[key]


def _block_of(item, path, j):
    """Block ``j``'s vector of a group item (the path leads to the per-block list)."""
    return block_values(item, path, j + 1)[j]


def _in_block_order(design, group_results):
    """Per-group lists of per-block results as one list in block order (sums are taken in this order)."""
    ordered = [None] * len(design.blocks.sizes)
    for group, results in zip(design.blocks.groups, group_results):
        for b, result in zip(group, results):
            ordered[b] = result
    return ordered
