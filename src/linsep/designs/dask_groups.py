"""Task-level pieces of the dask design: row blocks grouped by worker, group vectors, chained Ho–Kashyap iterations.

A scheduler round trip, and every task in it, costs milliseconds (more on a
loaded machine), while a pass over a small row block costs microseconds.
:mod:`linsep.designs.dask` therefore runs one task per *group* of row blocks
(the blocks one worker holds, ``worker_groups``) instead of one per
block, and, for small ``X`` (``chain_length``), runs several Ho–Kashyap
iterations in one task over every block, wherever they are held
(``chain_task``, the solver's ``block_chain`` run on the blocks): a driver then pays one round trip per
chunk of iterations, and each iterate on the worker runs inside the solver's step module.
Inside a group, every block is computed by the same per-block function as before, and sums over blocks are taken in block order
on the same per-block parts, so the numbers do not depend on the grouping or
on the chunking.

This module does not import :mod:`linsep.designs.dask` (which imports it):
the per-block functions come with the design (``DaskDesign.block_functions``).
Every scheduler round trip of the dask design goes through ``_compute``
and ``_persist``, which the private hook ``round_trips`` counts.
"""

from __future__ import annotations

import contextlib
from numbers import Integral, Real

import numpy as np

from linsep._core.linalg import GramOnly, least_squares_solver

__all__ = ["GroupVec", "RoundTrips", "block_values", "chain_length", "chain_task", "chained", "group_map",
           "round_trips", "worker_groups"]


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


def chain_task(chain, blocks, B_next, E, D, paths, W, rhs, eabs_max, factor, validation, *, steps, shape, functions,
               options, block_weights):
    """Up to ``steps`` Ho–Kashyap iterates over every block, in one task (runs on a worker; small ``X``).

    ``chain``: the solver's :func:`linsep.solvers.ho_kashyap.step.block_chain`, run here on the blocks'
    runs of rows and signs, read once per task from their signed views (``blocks``, ``DaskDesign.signed_blocks``,
    made once per design); every iterate runs inside it.  The pass state it starts from: :math:`B_{k+1}`
    (``B_next``), :math:`E_k` (IRLS), :math:`D_k` (group items with their ``paths``), ``W_k``, the summed
    right-hand side ``rhs`` (not IRLS), ``max|E_k|`` and the factor.  ``functions``: the design's
    ``(IRLS pass, count)`` per-block functions, which the chain calls back for IRLS's second pass and the
    validation rows (``validation``: ``(blocks, block_weights)`` of those rows, or ``None``).  ``options``:
    the pass's (``offset``, ``two_mu``, ``tol``, ``update``, ``irls``) and the step's (``learning_rate``,
    ``irls_floor``); ``block_weights``: per block, its weight keywords (``DaskDesign.block_weights``).
    Returns ``block_chain``'s result.
    """
    n = len(blocks)
    irls = options["irls"]
    irls_block, count_block = functions
    o = options
    pass_options = dict(offset=o["offset"], two_mu=o["two_mu"], tol=o["tol"], update=o["update"], irls=irls)
    step_options = {name: o[name] for name in ("update", "learning_rate", "irls_floor", "irls")}

    def reweigh(E, B_next, irls_floor, eabs_max):
        return [irls_block(block, e, b, irls_floor=irls_floor, eabs_max=eabs_max, offset=o["offset"],
                           update=o["update"], **kw)
                for block, kw, e, b in zip(blocks, block_weights, E, B_next)]

    count = None
    if validation is not None:
        val_blocks, val_weights = validation

        def count(W):
            return validation_errors([count_block(block, W, **kw) for block, kw in zip(val_blocks, val_weights)])

    return chain([block.parts() for block in blocks], block_values(B_next, paths[0], n),
                 block_values(E, paths[1], n) if irls else [None] * n, block_values(D, paths[2], n), W, rhs,
                 eabs_max, factor, steps=steps, shape=shape, pass_options=pass_options, step_options=step_options,
                 reweigh=reweigh if irls else None, count=count)


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
        second = _persist(*design.group_tasks(design.block_functions.irls, ("D", "sums"), E.items, B_next.items, paths=(E.path, B_next.path),
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
        parts = design.group_tasks(design.block_functions.certificate, None, B.items, D.items, groups=groups,
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
        outs = _persist(*design.group_tasks(design.block_functions.hk, ("B_next", "E", "stats"), B.items, D.items,
                                            paths=(B.path, D.path), W=W, offset=offset, two_mu=two_mu, tol=tol,
                                            update=update, irls=irls, block_pass=blockwise.block_pass))
        pending = [_delayed(_item)(out, "stats") for out in outs]
        if validation is not None:
            pending += validation.group_tasks(validation.block_functions.count, None, W=W)
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
    step (``blockwise.chain``); :meth:`iterates` yields them as :func:`linsep.solvers.ho_kashyap.step.hk_iterates` does,
    then raises the error of a step that failed, if the driver asks for that step.
    """

    def __init__(self, design, blockwise, state, W, D, factor, count, options):
        self.design, self.options = design, options
        self.groups = [list(range(len(design.counts)))]  # one task for every block (chain_length: small X)
        B_next, E, D = (design.grouped(v, self.groups) for v in (state.B_next, state._E, D))
        validation = options["validation"]
        val = None if validation is None else (validation.signed_blocks(),
                                                [validation.block_weights(b) for b in range(len(validation.counts))])
        functions = design.block_functions
        chain_options = {name: options[name] for name in ("update", "learning_rate", "irls_floor", "offset",
                                                          "two_mu", "tol", "irls")}
        (group,) = self.groups
        signed = design.signed_blocks()
        (self.out,) = _persist(_delayed(chain_task)(
            blockwise.chain, [signed[b] for b in group], B_next.items[0], E.items[0], D.items[0],
            (B_next.path, E.path, D.path), W, state._rhs, state.eabs_max, factor, val, steps=count,
            shape=design.shape, functions=(functions.irls, functions.count), options=chain_options,
            block_weights=[design.block_weights(b) for b in group]))
        (self.summary,) = _compute(_delayed(_chain_summary)(self.out))
        self.factor = factor

    def iterates(self):
        irls, factor, out = self.options["irls"], self.factor, self.out
        last = len(self.summary["iterates"]) - 1
        for i, iterate in enumerate(self.summary["iterates"]):
            if irls:
                factor = iterate["factor"]
            D = GroupVec([out], ("D", i), self.groups) if irls else None
            state = _ChainedState(self.design, iterate, GroupVec([out], ("B", i), self.groups), D, self.options)
            state.B_next = GroupVec([out], ("B_next",) if i == last else ("B", i + 1), self.groups)
            state._E = GroupVec([out], ("E", i), self.groups)
            yield iterate["W"], state.B, D, factor, state
        if self.summary["error"] is not None:
            raise self.summary["error"]


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

    One generator in this module, so that the driver's every ``next`` resumes it here (:meth:`_Chain.iterates`).
    """
    steps, left = 2, np.inf if limit is None else limit
    while True:
        count = int(max(1, min(steps, longest, left)))
        for iterate in _Chain(design, blockwise, state, W, D, factor, count, options).iterates():
            left -= 1
            yield iterate
        W, _, D, factor, state = iterate  # the chain's last: the next one starts there
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
