"""Dask backend: the HK family, MSE and the linear LSVM on ``dask.array`` data chunked by rows.

Imported by the estimators only when they receive a dask collection
(:func:`linsep._base.is_dask_collection` tests the type's module name, so
``import linsep`` never imports this module nor dask).

Layout
------
``X`` (N, d) is chunked by rows, with all ``d`` columns in one chunk (a
column-chunked ``X`` is rechunked, if the row blocks stay below
:data:`MAX_BLOCK_BYTES`); ``y`` (dask or NumPy) is brought to the same row
chunks.  Both are persisted once: every later pass reads the blocks where
they live.  The design ``Y = diag(y)[X, 1]`` is never formed: each task forms
its block's signed rows, in float64, from ``X_b``, the labels and the class
taken as ``+1``.  On the client live only ``p = d + 1``-sized vectors, the
``p × p`` Gram matrix and its factor (the in-memory solvers' W-step factory
:func:`~linsep._linalg.least_squares_solver` given ``gram=``, which takes the
direct :class:`~linsep._linalg.LeastSquaresFactor`), and the scalars of the
stopping rules.
``N``-sized vectors (the margin vector ``B``, the IRLS weights ``D``, LSVM's
``α`` and ``r``) stay on the workers, one persisted block per row chunk; the
returned margin vector, certificate and ``α`` are dask arrays.

One pass per iteration
----------------------
Ho–Kashyap (:func:`ho_kashyap`): from ``W_k`` (sent with the tasks) and the
persisted ``B_k``, each block computes ``Z = Y_b W_k``, ``E = Z − offset − B``,
its ``B_{k+1} = B_k + 2μ max(E, 0)`` (kept on the worker), its share of the
next right-hand side ``Yᵀ(B_{k+1} + offset)`` (``Yᵀ|E|`` for the weights
update) and of the scalars of every rule (``J``, the count and minimum of
``Z``, ``max E``, ``min E``, ``max |B|``, the fixed-point test, ``max |E|``);
validation blocks count ``Y_val W_k <= 0`` in the same round.  The client
then applies the rules of :func:`linsep.solvers.ho_kashyap.ho_kashyap` in
the same order and solves the small system.  IRLS (MHKA, HKESA) needs the
global ``max |E_k|`` for the floor of ``D_k``, so its weighted Gram matrix
``YᵀD_kY`` and right-hand side take a second pass over the blocks, as the
in-memory compiled loop does.  The LSVM iteration (22) is likewise one pass
(:class:`_LSVMStep`, the blockwise twin of the in-memory fused step).

Verdicts are checked blockwise: a ``not_separable`` certificate with the
per-column test of :mod:`linsep._certificates`, ``separable`` on the
returned weights.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._base import is_dask_collection
from ._certificates import (FIT_PROOF_RTOL, column_largest, power_of_two_shifts, proof_block_sums,
                            residuals_from_sums)
from ._design import SignedDesign, augmented_weights, signed_scores, solution_dtype
from ._linalg import least_squares_solver, too_wide_for_direct
from ._loops import is_nonseparability_proof
from ._result import CONVERGED, NOT_SEPARABLE, SEPARABLE, SolveResult
from .solvers.lsvm import _LinearStep

MAX_BLOCK_BYTES = 1 << 30
"""Largest row block (all columns, float64) that a column-chunked ``X`` is rechunked into."""


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - a dask object cannot exist without dask
        raise ImportError("dask input needs the dask extra: pip install 'linsep[dask]'") from exc
    return dask, da


# Every scheduler round trip goes through these two, so that tests can count them and check that
# only small results come back to the client.
def _compute(*objects):
    dask, _ = _dask()
    return dask.compute(*objects)


def _persist(*objects):
    dask, _ = _dask()
    return dask.persist(*objects)


def _delayed(function):
    dask, _ = _dask()
    return dask.delayed(function, pure=False)


# --- The data: row blocks -------------------------------------------------------------------------

class RowBlocks:
    """Persisted row blocks of ``X`` (all columns) and of the labels, with their sizes."""

    def __init__(self, X, labels):
        dask, _ = _dask()
        X, labels = dask.persist(X, labels)
        self.X = X
        self.labels = labels
        self.X_parts = X.to_delayed().ravel().tolist()
        self.label_parts = labels.to_delayed().ravel().tolist()
        self.sizes = [int(n) for n in X.chunks[0]]
        self.n_features = int(X.shape[1])
        self.dtype = solution_dtype(X)  # of the fitted weights, as in memory (float32 for float32 X)


def _check_row_chunked(X, name="X"):
    """``X`` as a 2-d dask array chunked by rows only; clear errors for what cannot be handled."""
    _, da = _dask()
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a dask array (or a NumPy array), got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (samples × features), got {X.ndim} dimension(s)")
    if any(np.isnan(c) for chunks in X.chunks for c in chunks):
        raise ValueError(f"{name} has chunks of unknown size (e.g. after boolean indexing); "
                         f"call {name}.compute_chunk_sizes() first")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if len(X.chunks[1]) > 1:
        largest = max(X.chunks[0]) * X.shape[1] * 8
        if largest > MAX_BLOCK_BYTES:
            raise ValueError(
                f"{name} is chunked by columns and a row block with all {X.shape[1]} columns would take "
                f"{largest / 2**20:.0f} MiB (limit {MAX_BLOCK_BYTES / 2**20:.0f} MiB); rechunk it by rows, "
                f"e.g. {name}.rechunk({{0: 'auto', 1: -1}})")
        X = X.rechunk({1: -1})
    return X


def _labels_like(y, X, name="y"):
    """``y`` as a 1-d dask array with the row chunks of ``X``."""
    _, da = _dask()
    if is_dask_collection(y):
        if not isinstance(y, da.Array):
            raise TypeError(f"{name} must be a dask or NumPy array, got {type(y).__name__}")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or any(np.isnan(c) for c in y.chunks[0]):
            raise ValueError(f"{name} must be a 1-d array with known chunk sizes")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {y.shape[0]} labels for {X.shape[0]} rows of X")
        return y if y.chunks[0] == X.chunks[0] else y.rechunk((X.chunks[0],))
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"{name} must be 1-d with one label per row of X ({X.shape[0]}), got shape {y.shape}")
    return da.from_array(y, chunks=(X.chunks[0],))


def _classes(labels):
    """The sorted distinct labels (computed: small), checked as class labels."""
    from sklearn.utils.multiclass import check_classification_targets

    _, da = _dask()
    (classes,) = _compute(da.unique(labels))
    classes = np.unique(classes)
    check_classification_targets(classes)
    return classes


# --- Per-block work (runs on the workers) -------------------------------------------------------------

def _signed_rows(X, labels, positive, rows):
    """``(X_b, y_b)`` in float64 for the rows ``rows`` (``None``: all) of a block, ``y = ±1``."""
    if rows is not None:
        X, labels = X[rows], labels[rows]
    return np.asarray(X, dtype=np.float64), np.where(labels == positive, 1.0, -1.0)


def _signed_block(X, labels, positive, rows):
    """The block's rows of ``Y`` as a :class:`linsep._design.SignedDesign` (products, Gram matrices; never formed)."""
    return SignedDesign(*_signed_rows(X, labels, positive, rows))


def _gram_block(X, labels, positive, rows, margin, rhs=None, gram=True):
    """A block's ``[X_b, 1]ᵀ[X_b, 1]`` (if ``gram``), its share of ``Yᵀ rhs``, and the input checks' scalars.

    ``rhs``: ``None`` (no right-hand side), ``("constant", c)`` for ``r = c 1``,
    ``("margin", c)`` for ``r = margin_b + c`` or ``("labels", classes)`` for the
    linear machine's ``[X, 1]ᵀ B`` (``B_ik = margin_i`` for the sample's class).
    """
    Y = _signed_block(X, labels, positive, rows)
    out = {"gram": Y.gram(), "finite": bool(np.isfinite(Y.X).all())} if gram else {}
    b = None if margin is None else np.asarray(margin if rows is None else margin[rows], dtype=np.float64)
    if b is not None:
        out["margin_ok"] = bool(np.isfinite(b).all() and b.min(initial=np.inf) > 0)
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
            out["g"] = SignedDesign(Y.X, np.ones(n)).T @ target
    return out


def _hk_block(X, labels, positive, rows, B, D, W, b0, offset, two_mu, tol, update, irls):
    """One Ho–Kashyap pass over a block: ``(B_{k+1}, E_k or None, scalars)`` (see the module).

    The margin update runs the in-memory compiled loop's own pass by rows
    (:func:`linsep._loops._pass_by_rows`: ``X_b`` read once, the row subset
    read in place); the weights update (modified HK) the NumPy expressions.
    """
    from ._loops import _pass_by_rows

    n = labels.shape[0] if rows is None else len(rows)
    if B is None:
        B = np.full(n, float(b0))
    if update == "margin":
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.where((labels if rows is None else labels[rows]) == positive, 1.0, -1.0)
        E, B_next, g = np.empty(n), np.empty(n), np.empty(X.shape[1] + 1)
        J, fixed_point, wrong, separated, max_e, max_b = _pass_by_rows(
            X, y, _ALL_ROWS if rows is None else np.asarray(rows, dtype=np.intp), W, B, offset, two_mu, tol,
            _NO_WEIGHTS if D is None else D, E, B_next, g, 0, n)
        stats = {"J": float(J), "wrong": int(wrong), "separated": bool(separated), "emax": float(max_e),
                 "bscale": float(max_b), "fixed_point": bool(fixed_point)}
    else:
        Y = _signed_block(X, labels, positive, rows)
        Z = Y @ W
        E = Z - B if offset == 0.0 else Z - offset - B
        target = B + offset
        stats = {
            "J": float(E @ E) if D is None else float(E @ (D * E)),
            "wrong": int(np.count_nonzero(Z <= 0)),
            "separated": bool(Z.min(initial=np.inf) > 0),
            "emax": float(E.max(initial=-np.inf)),
            "bscale": float(np.abs(B).max(initial=0.0)),
            "fixed_point": bool(np.all((target > 0) & (np.abs(E) <= tol * target))),
        }
        step = np.maximum(E, 0.0)
        step *= two_mu
        B_next = B + step
        g = Y.T @ np.abs(E)
    stats["emin"] = float(E.min(initial=np.inf))
    stats["eabs_max"] = float(np.abs(E).max(initial=0.0))
    stats["finite"] = bool(np.isfinite(E).all())
    if not irls:  # IRLS takes the right-hand side in its second pass, with D_k
        stats["g"] = g
    return B_next, (E if irls else None), stats


_ALL_ROWS = np.empty(0, dtype=np.intp)
_NO_WEIGHTS = np.empty(0)


def _irls_block(X, labels, positive, rows, E, B_next, irls_floor, eabs_max, offset, update):
    """IRLS second pass: ``D_k`` (kept), the block's ``[X, 1]ᵀD_k[X, 1]`` and ``YᵀD_k r``.

    ``D_k`` is :func:`linsep.solvers.ho_kashyap.irls_weights` with the floor
    from the global ``max |E_k|`` (``eabs_max``).
    """
    from .solvers.ho_kashyap import irls_weights

    Y = _signed_block(X, labels, positive, rows)
    D = irls_weights(E, irls_floor, eabs_max)
    r = (B_next if offset == 0.0 else B_next + offset) if update == "margin" else np.abs(E)
    return D, {"gram": Y.gram(D), "g": Y.T @ (r * D)}


def _count_block(X, labels, positive, rows, W):
    """``(number of Y_b W <= 0, min Y_b W, all finite)`` for a block."""
    Z = _signed_block(X, labels, positive, rows) @ W
    return int(np.count_nonzero(Z <= 0)), float(Z.min(initial=np.inf)), bool(np.isfinite(Z).all())


def _certificate_block(X, labels, positive, rows, B, D, W, b0, offset):
    """``u_b = max(−E_b, 0)`` (times ``D_b`` for IRLS): a block of the non-separability certificate."""
    Y = _signed_block(X, labels, positive, rows)
    if B is None:
        B = np.full(Y.shape[0], float(b0))
    Z = Y @ W
    E = Z - B if offset == 0.0 else Z - offset - B
    u = np.maximum(-E, 0.0)
    return u if D is None else u * D


def _proof_support_block(X, labels, positive, rows, u):
    """First pass of the proof check: column maxima on the support of ``u``, and ``u``'s own checks."""
    X, _ = _signed_rows(X, labels, positive, rows)
    u = np.asarray(u, dtype=np.float64)
    support = u > 0
    return {"largest": column_largest(X[support]), "umax": float(u.max(initial=0.0)),
            "valid": bool(np.isfinite(u).all() and u.min(initial=0.0) >= 0)}


def _proof_sums_block(X, labels, positive, rows, u, umax, shifts):
    """Second pass of the proof check: the block's share of the signed and absolute column sums."""
    X, y = _signed_rows(X, labels, positive, rows)
    support = u > 0
    weights = (y * u)[support] / umax
    signed, magnitude = proof_block_sums(X[support], weights, shifts)
    return np.append(signed, weights.sum()), np.append(magnitude, np.abs(weights).sum())


def _lsvm_block(X, labels, positive, rows, r, alpha, W, C, mu, first):
    """One LSVM pass over a block: :func:`linsep.solvers.lsvm.linear_pass` on its rows."""
    from .solvers.lsvm import linear_pass

    X, y = _signed_rows(X, labels, positive, rows)
    alpha, r_next, g, step_sq, alpha_sq, objective = linear_pass(
        X, y, W, np.ones(X.shape[0]) if r is None else r, None if first else alpha, C, mu)
    return r_next, alpha, {"step_sq": step_sq, "alpha_sq": alpha_sq, "objective": objective, "g": g}


def _held_out_block(labels, classes, fraction, seed, index):
    """Stratified held-out rows of one block: ``(fit rows, validation rows)``."""
    rng = np.random.default_rng([seed, index])
    held_out = np.zeros(labels.shape[0], dtype=bool)
    for label in classes:
        members = np.flatnonzero(labels == label)
        n_val = min(members.size - 1, int(round(fraction * members.size)))
        if n_val > 0:
            held_out[rng.permutation(members)[:n_val]] = True
    return np.flatnonzero(~held_out), np.flatnonzero(held_out)


# --- The blockwise design -------------------------------------------------------------------------------

class DaskDesign:
    """``Y = diag(y)[X_R, 1]`` over persisted row blocks, never formed: the blocks the tasks run on.

    ``positive`` is the label mapped to ``+1`` (all others to ``−1``);
    ``rows`` optionally selects rows of each block (a list of delayed index
    arrays, with ``counts`` their lengths).  Each task signs its block's rows
    itself (:func:`_signed_block`); only ``p``-sized results come back.
    """

    def __init__(self, blocks, positive, rows=None, counts=None):
        self.blocks = blocks
        self.positive = positive
        self.rows = [None] * len(blocks.sizes) if rows is None else rows
        self.counts = list(blocks.sizes) if counts is None else [int(c) for c in counts]
        self.shape = (sum(self.counts), blocks.n_features + 1)

    def with_positive(self, positive):
        return DaskDesign(self.blocks, positive, self.rows, self.counts)

    def tasks(self, function, *per_block, **constants):
        """One delayed ``function(X_b, labels_b, positive, rows_b, *per_block[b], **constants)`` per block."""
        call = _delayed(function)
        return [call(X, labels, self.positive, rows, *(values[b] for values in per_block), **constants)
                for b, (X, labels, rows) in enumerate(zip(self.blocks.X_parts, self.blocks.label_parts, self.rows))]

    def from_blocks(self, parts):
        """A dask array (N,) from delayed per-block vectors of this design's row counts."""
        _, da = _dask()
        return da.concatenate([da.from_delayed(part, shape=(n,), dtype=np.float64)
                               for part, n in zip(parts, self.counts)])


def _sum_parts(parts, name):
    return np.sum([part[name] for part in parts], axis=0)


def _none_per_block(design):
    """``None`` for each block: the tasks' default (``B = b0 1``, ``D = I``, ``r = 1``, no margin)."""
    return [None] * len(design.counts)


def _factor(design, ridge, gram):
    """The shared W-step solver (:func:`linsep._linalg.least_squares_solver`) from ``gram``: the direct factor.

    ``Y`` itself is never formed; the factory takes the direct path whenever it is given the Gram matrix.
    """
    return least_squares_solver(_FactorShape(design.shape), None, ridge, gram=gram)


class _FactorShape:
    """What :class:`~linsep._linalg.LeastSquaresFactor` reads of ``Y`` when given ``gram``: its shape.

    Its SVD path (rank-deficient ``Y`` without ``C``) needs ``Y`` itself, which
    a dask design never forms: that path raises a clear error instead.
    """

    def __init__(self, shape):
        self.shape = shape

    def __array__(self, *args, **kwargs):
        raise ValueError(
            "the dask backend solves the least-squares steps from the Gram matrix, which is (numerically) "
            "singular here (collinear features, or fewer samples than columns): give C > 0 "
            "(MHKS / MHKA), remove the collinear features, or fit the data in memory")


def _prepared_gram(design, rhs=None, margin_parts=None):
    """One pass: ``YᵀY`` and, if ``rhs`` is given, ``Yᵀ rhs`` (else ``None``), with the input checks."""
    margins = margin_parts if margin_parts is not None else _none_per_block(design)
    parts = _compute(*design.tasks(_gram_block, margins, rhs=rhs))
    if not all(part["finite"] for part in parts):
        raise ValueError("Input X contains NaN or infinity.")
    if margin_parts is not None and not all(part["margin_ok"] for part in parts):
        raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
    gram = _sum_parts(parts, "gram")
    _check_scale(gram, design.shape[0])
    return gram, (_sum_parts(parts, "g") if rhs is not None else None)


def _right_hand_side(design, rhs):
    """One pass for ``Yᵀ rhs`` alone (``rhs`` as in :func:`_gram_block`), when ``YᵀY`` is known already."""
    return _sum_parts(_compute(*design.tasks(_gram_block, _none_per_block(design), rhs=rhs, gram=False)), "g")


def _check_scale(gram, n_samples):
    # The in-memory estimators rescale columns beyond 2^±53 by powers of two; the squared column
    # norms (the Gram diagonal) tell whether any column may be that far out (the sufficient test of
    # linsep._design._surely_in_range; all-zero columns need no scaling), and such data are refused.
    p = np.finfo(np.float64).nmant + 1
    squares = gram.diagonal()[:-1]
    if not np.all((squares == 0) | ((squares >= n_samples * 2.0 ** (-2 * p)) & (squares <= 2.0 ** (2 * p)))):
        raise ValueError("some column of X may lie beyond 2^±53 in magnitude; the dask backend does not rescale "
                         "columns (the in-memory fit does): rescale them before fitting")


# --- Ho–Kashyap --------------------------------------------------------------------------------------------

def ho_kashyap(Y, *, learning_rate=0.4, b0=1e-6, max_iter=10_000, tol=1e-6, stopping="relative",
               stop_at_separation=True, update="margin", C=None, loss="squared", irls_floor=1e-6,
               initial_weights=None, Y_val=None, gram=None):
    """:func:`linsep.solvers.ho_kashyap.ho_kashyap` on a :class:`DaskDesign` (blockwise, one pass per iteration).

    The same iterates, rules and verdicts as the in-memory solver's NumPy
    loop (:func:`linsep.solvers.ho_kashyap._iterate_numpy`), in the same
    order: separation, the non-separability proof, the fixed point (and, for
    IRLS, the weights standing still), the change of ``J``, the budget.
    ``margin`` and ``certificate`` of the result are dask arrays.  Rank-
    deficient ``Y`` without ``C`` (the in-memory SVD path) is refused.
    """
    from .solvers.ho_kashyap import _PROOF_RTOL, STOPPING_RULES, _check_finite, stopping_status

    if stopping not in STOPPING_RULES:
        raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {stopping!r}")
    if tol is None:
        tol = 0.5 * b0**2 if stopping == "paper" else 1e-6
    max_iter = int(max_iter)
    relative = stopping == "relative"
    ridge = 0.0 if C is None else float(C)
    offset = 0.0 if C is None else 1.0
    absolute = loss == "absolute"
    regularized = C is not None
    can_prove = ridge == 0.0

    if gram is None:
        gram, g = _prepared_gram(Y, rhs=("constant", float(b0) + offset))
    else:
        g = _right_hand_side(Y, ("constant", float(b0) + offset))
    factor = _factor(Y, ridge, gram)
    W = factor.solve_normal(g) if initial_weights is None else np.array(initial_weights, dtype=float)
    D_parts = None
    B_parts = _none_per_block(Y)  # B_0 = b0 1, made on the workers

    def run_pass(W, B_parts, D_parts):
        D_list = D_parts if D_parts is not None else _none_per_block(Y)
        outs = _persist(*Y.tasks(_hk_block, B_parts, D_list, W=W, b0=b0, offset=offset,
                                 two_mu=2.0 * learning_rate, tol=tol, update=update, irls=absolute))
        pending = [out[2] for out in outs]
        if Y_val is not None:
            pending += Y_val.tasks(_count_block, W=W)
        results = _compute(*pending)
        parts = results[:len(outs)]
        stats = {
            "J": float(np.sum([p["J"] for p in parts])),
            "wrong": int(np.sum([p["wrong"] for p in parts])),
            "separated": all(p["separated"] for p in parts),
            "emax": max(p["emax"] for p in parts),
            "emin": min(p["emin"] for p in parts),
            "bscale": max(p["bscale"] for p in parts),
            "fixed_point": all(p["fixed_point"] for p in parts),
            "eabs_max": max(p["eabs_max"] for p in parts),
            "finite": all(p["finite"] for p in parts),
            "g": None if absolute else _sum_parts(parts, "g"),
        }
        if Y_val is not None:
            stats["val_errors"] = int(np.sum([count for count, _, _ in results[len(outs):]]))
        return outs, stats

    def criterion(stats, W):
        J = stats["J"]
        return J + ridge * float(W[:-1] @ W[:-1]) if regularized else J

    outs, stats = run_pass(W, B_parts, D_parts)
    J = criterion(stats, W)
    history = {"criterion": [J], "training_errors": [stats["wrong"]]}
    best_W, best_iter = None, 0
    if Y_val is not None:
        n_val = Y_val.shape[0]
        history["validation_error"] = [stats["val_errors"] / n_val]
        best_W = W
    k = 0
    J_prev = None
    W_prev = np.full_like(W, np.nan)
    certificate = None
    while True:
        if stop_at_separation and stats["separated"]:
            status = SEPARABLE
            break
        if can_prove and stats["emax"] <= _PROOF_RTOL * stats["bscale"] and is_nonseparability_proof(
                np.array([stats["emax"], stats["emin"]]), np.array([stats["bscale"]]), _PROOF_RTOL):
            certificate = Y.from_blocks(Y.tasks(_certificate_block, B_parts, D_parts or _none_per_block(Y),
                                                W=W, b0=b0, offset=offset))
            (certificate,) = _persist(certificate)
            status = NOT_SEPARABLE
            break
        status = stopping_status(relative=relative, absolute=absolute, fixed_point=stats["fixed_point"],
                                 separated=stats["separated"], W=W, W_prev=W_prev, tol=tol, J=J, J_prev=J_prev,
                                 k=k, max_iter=max_iter)
        if status is not None:
            break

        B_next_parts = [out[0] for out in outs]
        if absolute:
            second = _persist(*Y.tasks(_irls_block, [out[1] for out in outs], B_next_parts, irls_floor=irls_floor,
                                       eabs_max=stats["eabs_max"], offset=offset, update=update))
            parts = _compute(*[part[1] for part in second])
            D_parts = [part[0] for part in second]
            factor = _factor(Y, ridge, _sum_parts(parts, "gram"))
            rhs = _sum_parts(parts, "g")
        else:
            rhs = stats["g"]
        W_prev = W
        if update == "weights":
            W = W + learning_rate * factor.solve_normal(rhs)
        B_parts = B_next_parts
        if update == "margin":
            W = factor.solve_normal(rhs)
        outs, stats = run_pass(W, B_parts, D_parts)
        J_prev, J = J, criterion(stats, W)
        k += 1
        _check_finite(J, k, factor)
        history["criterion"].append(J)
        history["training_errors"].append(stats["wrong"])
        if Y_val is not None:
            error = stats["val_errors"] / n_val
            history["validation_error"].append(error)
            if error < history["validation_error"][best_iter]:
                best_W, best_iter = W, k

    early_stopping = Y_val is not None
    weights = best_W if early_stopping else W
    if early_stopping and best_iter != k:
        _, zmin, finite = _combine_counts(_compute(*Y.tasks(_count_block, W=weights)))
        separated = zmin > 0
    else:
        separated, finite = stats["separated"], stats["finite"]
    if not finite:
        raise FloatingPointError("Ho–Kashyap's weights overflow the scores Y W; rescale the data or the starting weights")
    if separated:
        status = SEPARABLE
    elif status == SEPARABLE:
        status = CONVERGED
    margin = Y.from_blocks(B_parts) if B_parts[0] is not None else None
    if margin is None:
        _, da = _dask()
        margin = da.full(Y.shape[0], float(b0), chunks=(tuple(Y.counts),))
    return SolveResult(
        weights=weights, n_iter=k + 1, status=status, margin=margin, certificate=certificate,
        history={name: np.asarray(values) for name, values in history.items()} if early_stopping else None,
        best_iter=best_iter + 1 if early_stopping else None, extra=factor.stats)


def _combine_counts(parts):
    return (int(np.sum([c for c, _, _ in parts])), min(z for _, z, _ in parts), all(f for _, _, f in parts))


# --- MSE and the LSVM ------------------------------------------------------------------------------------

def mse(Y, margin_parts=None, *, C=0.0):
    """:func:`linsep.solvers.mse.mse` on a :class:`DaskDesign`: one pass for ``YᵀY`` and ``Yᵀb``, one for the verdict."""
    gram, g = _prepared_gram(Y, rhs=("margin", 0.0), margin_parts=margin_parts)
    factor = _factor(Y, C, gram)
    a = factor.solve_normal(g)
    _, zmin, _ = _combine_counts(_compute(*Y.tasks(_count_block, W=a)))
    return SolveResult(weights=a, n_iter=1, status=SEPARABLE if zmin > 0 else CONVERGED,
                       extra=factor.stats)


def _gap_block(X, labels, positive, rows, W, classes):
    """Smallest ``own discriminant − largest other`` over a block (the linear machine's verdict)."""
    X = np.asarray(X, dtype=np.float64)
    scores = X @ W[:-1] + W[-1]
    own = np.searchsorted(classes, labels)
    index = np.arange(X.shape[0])
    mine = scores[index, own]
    scores[index, own] = -np.inf
    return float((mine - scores.max(axis=1)).min(initial=np.inf))


def mse_linear_machine(A, classes, margin_parts=None, *, C=0.0):
    """:func:`linsep.solvers.mse.mse_linear_machine` on the row blocks of ``A`` (a design with no signs)."""
    gram, G = _prepared_gram(A, rhs=("labels", classes), margin_parts=margin_parts)
    factor = _factor(A, C, gram)
    W = factor.solve_normal(G)
    gap = min(_compute(*A.tasks(_gap_block, W=W, classes=classes)))
    return W, SEPARABLE if gap > 0 else CONVERGED, factor.method


class _LSVMStep(_LinearStep):
    """The LSVM update (22) over persisted blocks: :class:`linsep.solvers.lsvm._LinearStep` with a blockwise pass.

    ``r`` and ``α`` stay on the workers; ``W_{k+1} = S⁻¹Hᵗr_k`` is solved on
    the client from the ``p``-vector each pass returns; the step itself
    (``__call__``) is the in-memory one.
    """

    def __init__(self, design, pd_factor, C, mu):
        self.design, self.f, self.C, self.mu = design, pd_factor, C, mu
        self.weights = pd_factor.solve(_right_hand_side(design, ("constant", 1.0)))  # Hᵗ1 = [X, 1]ᵗy
        self._r = _none_per_block(design)
        self._alpha = _none_per_block(design)
        self._next = None
        self.objective = self._pass(first=True)[4]

    def _pass(self, first=False):
        outs = _persist(*self.design.tasks(_lsvm_block, self._r, self._alpha, W=self.weights, C=self.C,
                                           mu=self.mu, first=first))
        parts = _compute(*[out[2] for out in outs])
        self._r = [out[0] for out in outs]
        self._alpha = [out[1] for out in outs]
        self._next = self.f.solve(_sum_parts(parts, "g"))
        step_sq = float(np.sum([p["step_sq"] for p in parts]))
        alpha_sq = float(np.sum([p["alpha_sq"] for p in parts]))
        objective = float(np.sum([p["objective"] for p in parts]))
        return step_sq, alpha_sq, 0.0, 0.0, objective

    @property
    def alpha(self):
        return self.design.from_blocks(self._alpha)


def lsvm_factor(design, C):
    """``S = I/C + [X, 1]ᵗ[X, 1]`` factored (:class:`linsep.solvers.lsvm._PDFactor`), from one blockwise pass."""
    from .solvers.lsvm import _PDFactor

    gram, _ = _prepared_gram(design)
    gram[np.diag_indices_from(gram)] += 1.0 / C
    return _PDFactor(gram, 1.0 / C)


def lagrangian_svm(design, *, C=1.0, mu=None, tol=1e-6, max_iter=10_000, factor=None, record_history=False):
    """:func:`linsep.solvers.lsvm.lagrangian_svm` on a :class:`DaskDesign` (``extra["alpha"]`` a dask array)."""
    from .solvers.lsvm import _check_params, _iterate

    C, mu = _check_params(C, mu, tol, max_iter)
    if factor is None:
        factor = lsvm_factor(design, C)
    step = _LSVMStep(design, factor, C, mu)
    n_iter, status, history = _iterate(step, tol, max_iter, record_history)
    return SolveResult(weights=step.weights, n_iter=n_iter, status=status, history=history,
                       extra={"alpha": step.alpha, "factorization": factor.method})


# --- Verdict checks ------------------------------------------------------------------------------------------

def is_proof(design, u, rtol=FIT_PROOF_RTOL):
    """:func:`linsep._certificates.is_proof` blockwise: ``u`` (a dask array) proves ``design`` not separable."""
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


def _decision_block(X, coef, intercept):
    return np.asarray(X, dtype=np.float64) @ coef.T + intercept


def _separates_block(X, labels, positive, rows, coef, intercept):
    X, y = _signed_rows(X, labels, positive, rows)
    with np.errstate(over="ignore", invalid="ignore"):
        signed = signed_scores(X, y, augmented_weights(coef, intercept))
    return bool(np.all(np.isfinite(signed)) and signed.min(initial=np.inf) > 0)


def _checked_verdicts(estimator, results, designs):
    """Demote verdicts whose evidence fails its blockwise check (as the in-memory estimators do)."""
    checked = []
    for result, design in zip(results, designs):
        if result.status == NOT_SEPARABLE and not is_proof(design, result.certificate):
            result = replace(result, status=CONVERGED, certificate=None)
        checked.append(result)
    return checked


def _check_separation(estimator, designs):
    statuses = np.array(np.atleast_1d(estimator.status_), dtype=object)
    for k, design in enumerate(designs):
        if statuses[k] == SEPARABLE and not all(_compute(*design.tasks(
                _separates_block, coef=estimator.coef_[k], intercept=float(estimator.intercept_[k])))):
            statuses[k] = CONVERGED
    estimator.status_ = statuses[0] if statuses.size == 1 else statuses


# --- Estimators -----------------------------------------------------------------------------------------------

def _prepare(estimator, X, y):
    """Validate ``X, y``, set ``n_features_in_`` and ``classes_``; return the row blocks."""
    if getattr(estimator, "record_history", False):
        raise ValueError("record_history is not available for dask input (its traces hold N-vectors); "
                         "fit in memory to record them")
    X = _check_row_chunked(X)
    p = X.shape[1] + 1
    if too_wide_for_direct(p):
        # every block task would build a dense p × p Gram matrix, and the client factor it
        raise ValueError(
            f"X has {X.shape[1]} features, too many for the dask backend: it solves from the (d+1)×(d+1) "
            f"Gram matrix ({8 * p**2 / 2**30:.2g} GiB here, built in every block task), beyond what is "
            f"factored directly; fit wide X in memory (e.g. as a scipy.sparse matrix), where conjugate "
            f"gradients never form it")
    if X.shape[0] < 2:
        raise ValueError(f"{type(estimator).__name__} needs at least 2 samples, got {X.shape[0]}")
    if X.shape[1] < 1:
        raise ValueError("X needs at least one feature")
    labels = _labels_like(y, X)
    blocks = RowBlocks(X, labels)
    classes = _classes(blocks.labels)
    if classes.size < 2:
        raise ValueError(f"{type(estimator).__name__} needs samples of at least 2 classes in the data, "
                         f"but the data contain only one class: {classes.tolist()[0]!r}")
    estimator.n_features_in_ = blocks.n_features
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.classes_ = classes
    return blocks


def _positives(classes):
    """The label taken as ``+1`` in each binary problem (``classes[1]``, or each class one-vs-rest)."""
    return [classes[1]] if classes.size == 2 else list(classes)


def _store(estimator, results, blocks):
    """The linear model (NumPy), its weights rounded to the in-memory fit's type (float32 for float32 ``X``)."""
    from ._base import BaseLinearSeparator

    BaseLinearSeparator._store(estimator, [replace(r, weights=np.asarray(r.weights).astype(blocks.dtype, copy=False))
                                           for r in results])


def _finish(estimator, results, designs):
    """Checks of the verdicts, the common attributes and the linear model."""
    results = _checked_verdicts(estimator, results, designs)
    estimator._unpack_common(results)
    _store(estimator, results, designs[0].blocks)
    _check_separation(estimator, designs)
    return results


def _pick(results, values):
    return values[0] if len(results) == 1 else list(values)


def validation_split(blocks, classes, fraction, random_state):
    """Stratified held-out rows per block: lists of delayed ``(fit rows, validation rows)`` and their counts.

    Each block holds out ``round(fraction · n_c)`` of its ``n_c`` samples of
    each class (at most ``n_c − 1``), with a generator seeded by
    ``(seed, block index)``; the seed is ``random_state`` itself (an int), a
    draw from it (a ``RandomState``) or from NumPy's global generator (``None``).
    """
    if isinstance(random_state, (int, np.integer)):
        seed = int(random_state)
    else:
        rng = random_state if isinstance(random_state, np.random.RandomState) else np.random.mtrand._rand
        seed = int(rng.randint(np.iinfo(np.int32).max))
    split = _delayed(_held_out_block)
    pairs = _persist(*[split(labels, classes, fraction, seed, b) for b, labels in enumerate(blocks.label_parts)])
    counts = _compute(*[_delayed(_pair_sizes)(pair) for pair in pairs])
    fit_rows = [pair[0] for pair in pairs]
    val_rows = [pair[1] for pair in pairs]
    return fit_rows, [c[0] for c in counts], val_rows, [c[1] for c in counts]


def _pair_sizes(pair):
    return len(pair[0]), len(pair[1])


def fit_ho_kashyap(estimator, X, y, X_val=None, y_val=None, coef_init=None, intercept_init=None):
    """:meth:`linsep.HoKashyapClassifier.fit` for dask ``X`` (see the module and the estimator's docs)."""
    from .estimators.ho_kashyap import resolve_stop_at_separation

    if (X_val is None) != (y_val is None):
        raise ValueError("give both X_val and y_val, or neither")
    if X_val is not None and not estimator.early_stopping:
        raise ValueError("X_val / y_val are only used with early_stopping=True")
    blocks = _prepare(estimator, X, y)
    classes = estimator.classes_
    fit_rows = fit_counts = val_design = None
    if estimator.early_stopping:
        if X_val is None:
            fit_rows, fit_counts, val_rows, val_counts = validation_split(
                blocks, classes, estimator.validation_fraction, estimator.random_state)
            if sum(val_counts) == 0:
                raise ValueError("early stopping needs a validation set, but validation_fraction="
                                 f"{estimator.validation_fraction} holds out none; give X_val/y_val or more samples")
            val_design = DaskDesign(blocks, None, val_rows, val_counts)
        else:
            _, da = _dask()
            X_val = X_val if is_dask_collection(X_val) else da.from_array(np.asarray(X_val, dtype=np.float64))
            X_val = _check_row_chunked(X_val, "X_val")
            if X_val.shape[1] != blocks.n_features:
                raise ValueError(f"X_val has {X_val.shape[1]} features, but {type(estimator).__name__} "
                                 f"is expecting {blocks.n_features} features as input")
            val_blocks = RowBlocks(X_val, _labels_like(y_val, X_val, "y_val"))
            unknown = np.setdiff1d(_classes(val_blocks.labels), classes)
            if unknown.size:
                raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
            val_design = DaskDesign(val_blocks, None)
    initial_weights = None
    if coef_init is not None or intercept_init is not None:
        if classes.size != 2:
            raise ValueError("coef_init / intercept_init are supported for two-class problems only")
        coef = np.zeros(blocks.n_features) if coef_init is None else np.asarray(coef_init, dtype=float).ravel()
        if coef.shape[0] != blocks.n_features:
            raise ValueError(f"coef_init has {coef.shape[0]} entries, X has {blocks.n_features} features")
        initial_weights = np.append(coef, 0.0 if intercept_init is None else float(intercept_init))
        if not np.all(np.isfinite(initial_weights)):
            raise ValueError("coef_init and intercept_init must be finite")
    base = DaskDesign(blocks, None, fit_rows, fit_counts)
    gram, _ = _prepared_gram(base)  # shared by the one-vs-rest problems (signs do not change it)
    designs, results = [], []
    for positive in _positives(classes):
        design = base.with_positive(positive)
        results.append(ho_kashyap(
            design, learning_rate=estimator.learning_rate, b0=estimator.b0, max_iter=estimator.max_iter,
            tol=estimator.tol, stopping=estimator.stopping, stop_at_separation=resolve_stop_at_separation(estimator),
            update=estimator.update, C=estimator.C, loss=estimator.loss, irls_floor=estimator.irls_floor,
            initial_weights=initial_weights,
            Y_val=None if val_design is None else val_design.with_positive(positive), gram=gram))
        designs.append(design)
    results = _finish(estimator, results, designs)
    estimator.certificate_ = _pick(results, [r.certificate for r in results])
    estimator.margin_vector_ = _pick(results, [r.margin for r in results])
    if estimator.early_stopping:
        estimator.best_iter_ = results[0].best_iter if len(results) == 1 else np.array([r.best_iter for r in results])
    return estimator


def _margin_parts(margin, blocks):
    """``None``, a positive number, or ``N`` values (NumPy or dask) → ``(b, its per-block parts)``, persisted.

    The caller keeps ``b``: its persisted blocks live as long as it does.
    """
    if margin is None:
        return None, None
    _, da = _dask()
    if not is_dask_collection(margin) and np.ndim(margin) == 0:
        value = float(margin)
        if not (np.isfinite(value) and value > 0):
            raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
        margin = da.full(sum(blocks.sizes), value, chunks=(tuple(blocks.sizes),))
    elif not is_dask_collection(margin):
        margin = np.asarray(margin, dtype=np.float64)
        if margin.shape != (sum(blocks.sizes),):
            raise ValueError(f"margin must be a number or have one entry per sample ({sum(blocks.sizes)}), "
                             f"got shape {margin.shape}")
        margin = da.from_array(margin, chunks=(tuple(blocks.sizes),))
    elif margin.shape != (sum(blocks.sizes),):
        raise ValueError(f"margin must be a number or have one entry per sample ({sum(blocks.sizes)}), "
                         f"got shape {margin.shape}")
    (margin,) = _persist(margin.astype(np.float64).rechunk((tuple(blocks.sizes),)))
    return margin, margin.to_delayed().ravel().tolist()


def fit_mse(estimator, X, y, margin=None):
    """:meth:`linsep.MSEClassifier.fit` for dask ``X``: ``Y⁺b`` (two classes) or the linear machine ``[X, 1]⁺B``."""
    blocks = _prepare(estimator, X, y)
    classes = estimator.classes_
    margin, margin_parts = _margin_parts(margin, blocks)
    design = DaskDesign(blocks, classes[-1])
    _, da = _dask()
    b = da.ones(design.shape[0], chunks=(tuple(design.counts),)) if margin is None else margin
    if classes.size == 2:
        results = [mse(design.with_positive(classes[1]), margin_parts, C=estimator.C)]
        designs = [design.with_positive(classes[1])]
        margins = [b]
    else:
        W, status, method = mse_linear_machine(design, classes, margin_parts, C=estimator.C)
        results = [SolveResult(weights=W[:, k], n_iter=1, status=status, extra={"factorization": method})
                   for k in range(classes.size)]
        designs = [design.with_positive(c) for c in classes]
        own = blocks.labels[:, None] == da.from_array(classes[None, :])
        margins = [da.where(own, b[:, None], 0.0)]
    estimator._unpack_common(results)
    _store(estimator, results, blocks)
    if classes.size == 2:
        _check_separation(estimator, designs)
    estimator.margin_vector_ = margins[0]
    return estimator


def fit_lsvm(estimator, X, y):
    """:meth:`linsep.LagrangianSVMClassifier.fit` for dask ``X`` (``alpha_`` a dask array)."""
    blocks = _prepare(estimator, X, y)
    classes = estimator.classes_
    design = DaskDesign(blocks, None)
    factor = lsvm_factor(design, float(estimator.C))
    designs = [design.with_positive(positive) for positive in _positives(classes)]
    results = [lagrangian_svm(d, C=estimator.C, mu=estimator.mu, tol=estimator.tol, max_iter=estimator.max_iter,
                              factor=factor) for d in designs]
    _finish(estimator, results, designs)
    _, da = _dask()
    alphas = [r.extra["alpha"] for r in results]
    estimator.alpha_ = alphas[0] if len(results) == 1 else da.stack(alphas)
    return estimator


# --- Prediction ------------------------------------------------------------------------------------------------

def decision_function(estimator, X):
    """Blockwise ``X coefᵀ + intercept`` (a dask array: (N,) for two classes, (N, K) otherwise)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    X = _check_row_chunked(X)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input")
    coef, intercept = np.asarray(estimator.coef_, dtype=np.float64), np.asarray(estimator.intercept_, dtype=np.float64)
    scores = X.map_blocks(_decision_block, coef=coef, intercept=intercept, chunks=(X.chunks[0], (coef.shape[0],)),
                          dtype=np.float64)
    return scores[:, 0] if coef.shape[0] == 1 else scores


def _labels_block(scores, classes):
    if scores.ndim == 1:
        return classes[(scores > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


def predict(estimator, X):
    """Blockwise predicted labels (a dask array)."""
    scores = decision_function(estimator, X)
    classes = estimator.classes_
    if scores.ndim == 1:
        return scores.map_blocks(_labels_block, classes=classes, dtype=classes.dtype)
    return scores.map_blocks(_labels_block, classes=classes, drop_axis=1, dtype=classes.dtype)
