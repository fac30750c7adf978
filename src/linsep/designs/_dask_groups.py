"""Task-level pieces of the dask design: row blocks grouped by worker, group vectors, chained Ho–Kashyap iterations.

A scheduler round trip, and every task in it, costs milliseconds (more on a
loaded machine), while a pass over a small row block costs microseconds.
:mod:`linsep.designs.dask` therefore runs one task per *group* of row blocks
(the blocks one worker holds, :func:`worker_groups`) instead of one per
block, and, when a single group holds every block, runs several Ho–Kashyap
iterations in one task (:func:`hk_chain`): a driver then pays one round trip
per chunk of iterations.  Inside a group, every block is computed by the same
per-block function as before, and sums over blocks are taken in block order
on the same per-block parts, so the numbers do not depend on the grouping or
on the chunking.

This module does not import :mod:`linsep.designs.dask` (which imports it):
the per-block functions are passed in.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._linalg import GramOnly, least_squares_solver

__all__ = ["GroupVec", "block_values", "group_map", "hk_chain", "pass_summary", "worker_groups"]


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
    """An ``N``-vector of the dask design, by groups: per group a number (the constant) or a task result.

    ``path`` (keys) leads from a group's task result to its list of per-block arrays
    (:func:`block_values`).
    """

    def __init__(self, items, path=()):
        self.items = list(items)
        self.path = tuple(path)

    def constant(self):
        """The value if every group holds the same number, else ``None``."""
        if all(isinstance(item, Real) for item in self.items) and len(set(self.items)) == 1:
            return float(self.items[0])
        return None


def block_values(item, path, n):
    """A group's per-block values: ``n`` copies of a number, or the list at ``path`` in a task result."""
    if item is None or isinstance(item, Real):
        return [item] * n
    for key in path:
        item = item[key]
    return item


def group_map(function, names, Xs, labels, positive, rows, *vectors, paths=(), **constants):
    """``function(X_b, labels_b, positive, rows_b, *vectors_b, **constants)`` for each block of a group.

    ``vectors``: group items of :class:`GroupVec` with their ``paths`` (:func:`block_values`).
    Returns the list of results, or (``names`` given, for functions returning tuples) a dict
    name → list over blocks.
    """
    per_block = [block_values(item, path, len(Xs)) for item, path in zip(vectors, paths)]
    results = [function(X, y, positive, r, *(values[b] for values in per_block), **constants)
               for b, (X, y, r) in enumerate(zip(Xs, labels, rows))]
    if names is None:
        return results
    return {name: [result[i] for result in results] for i, name in enumerate(names)}


def pass_summary(parts, irls):
    """The pass statistics from the blocks' parts (in block order), as :class:`~linsep.designs.base.HKPassState` names.

    ``rhs`` is the summed right-hand side share (``None`` for IRLS, whose right-hand side
    comes with ``D_k`` in the second pass).
    """
    return {
        "J": float(np.sum([p["J"] for p in parts])),
        "wrong": int(np.sum([p["wrong"] for p in parts])),
        "separated": all(p["separated"] for p in parts),
        "max_e": max(p["emax"] for p in parts),
        "min_e": min(p["emin"] for p in parts),
        "max_b": max(p["bscale"] for p in parts),
        "fixed_point": all(p["fixed_point"] for p in parts),
        "eabs_max": max(p["eabs_max"] for p in parts),
        "rhs": None if irls else np.sum([p["g"] for p in parts], axis=0),
    }


def hk_chain(Xs, labels, positive, rows, B_next, E, D, paths, W, rhs, eabs_max, factor, validation, *, steps,
             shape, functions, update, learning_rate, irls_floor, offset, two_mu, tol, irls):
    """Up to ``steps`` Ho–Kashyap iterates on one group holding every block (runs on a worker).

    Starts from a pass state given by its ``B_{k+1}`` (``B_next``), ``E_k`` (IRLS), ``D_k``
    (group items with their ``paths``), the weights ``W_k``, the summed right-hand side
    ``rhs`` (not IRLS), ``max|E_k|`` and the factor; each step is
    :meth:`linsep.designs.base.Design.hk_iterates`' step, with the same per-block
    ``functions`` (``(hk pass, IRLS pass, count)``) and the same sums as one round trip per
    iteration.  ``validation``: ``(Xs, labels, positive, rows)`` of the validation rows, or ``None``.

    Returns ``{"iterates": [...], "error": exception or None, "B": [...], "D": [...], "E": [...],
    "B_next": [...]}``: per iterate its ``W``, factor (IRLS) and statistics, and its pass's
    per-block ``B``, ``D`` (IRLS) and ``E`` (IRLS); ``B_next`` of the last.  A step that raises
    ends the chain; the driver re-raises the error only if it gets that far.
    """
    hk_block, irls_block, count_block = functions
    n = len(Xs)
    B_next, D = block_values(B_next, paths[0], n), block_values(D, paths[2], n)
    E = block_values(E, paths[1], n) if irls else [None] * n
    out = {"iterates": [], "error": None, "B": [], "D": [], "E": [], "B_next": None}
    for _ in range(steps):
        try:
            if irls:
                second = [irls_block(X, y, positive, r, e, b, irls_floor=irls_floor, eabs_max=eabs_max,
                                     offset=offset, update=update)
                          for X, y, r, e, b in zip(Xs, labels, rows, E, B_next)]
                D = [s[0] for s in second]
                rhs = np.sum([s[1]["g"] for s in second], axis=0)
                factor = least_squares_solver(GramOnly(shape), None, factor.ridge,
                                              gram=np.sum([s[1]["gram"] for s in second], axis=0))
            if update == "weights":
                W = W + learning_rate * factor.solve_normal(rhs)
            B = B_next
            if update == "margin":
                W = factor.solve_normal(rhs)
            parts = [hk_block(X, y, positive, r, b, d, W, offset=offset, two_mu=two_mu, tol=tol, update=update,
                              irls=irls) for X, y, r, b, d in zip(Xs, labels, rows, B, D)]
            stats = pass_summary([p[2] for p in parts], irls)
            if validation is not None:
                counts = group_map(count_block, None, *validation, W=W)
                stats["val_errors"] = int(np.sum([c for c, _, _ in counts]))
        except Exception as exc:  # noqa: BLE001 - handed to the driver, raised where a serial run raises
            out["error"] = exc
            break
        B_next, E = [p[0] for p in parts], [p[1] for p in parts]
        rhs, eabs_max = stats["rhs"], stats["eabs_max"]
        out["iterates"].append({"W": W, "factor": factor if irls else None, "stats": stats})
        out["B"].append(B)
        out["D"].append(D)
        out["E"].append(E)
    out["B_next"] = B_next
    return out
