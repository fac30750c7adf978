"""One place that decides the type a fit works in (the plan's ``dtype``).

Every path asks :func:`working_dtype`: the estimators' validation (``fit``,
``partial_fit``, validation data), the solvers (the type of the weights they
return), the in-memory, dask and array-API designs and the compiled
segment's row layout.  The rule, as in scikit-learn's linear models, is that
the coefficients follow the data: a path that reads float32 data as they are
(its sums, factorisations and weights kept in float64 inside) works in
float32 on float32 data and rounds its weights to float32 on return;
everything else works in float64.  Which type ran is recorded as
``SolveResult.extra["plan"]["dtype"]`` (:func:`dtype_plan`) and, per fitted
estimator, in its private ``_fit_plans``.

Where a path does not read float32 as it is, the reason lives with the path:
kernel and Kozinec estimators list only float64 (their verdicts compare
Gram-column sums at float64 rounding); a sparse ``Y`` formed by
``linsep._core.signed_design.sign_normalized`` is float64 (its products and Gram matrix
need float64 sums), so the rules that form one return float64 weights;
the compiled sweep by columns stores ``Yᵀ`` in float64 (a layout of cache-sized
data, not a working type: ``W`` is still rounded to the design's type).

A path that no caller chooses but a test must force, deep below the function
the test calls, is forced in a block, :func:`forced_plan` (read with
:func:`forced`): no function of linsep takes a private (underscore) parameter
as a test hook (``tests/cross_cutting/test_layout.py``).  Paths a caller does
choose travel as documented arguments (``ho_kashyap(..., plan=HKPlan(...))``,
``lagrangian_svm(..., plan=...)``).
"""

import contextlib
import contextvars
from types import MappingProxyType

import numpy as np

__all__ = ["FLOAT32", "FLOAT64", "FLOAT64_ONLY", "FORCEABLE", "READS_FLOAT32", "dtype_plan", "fit_plan", "forced",
           "forced_plan", "validation_dtypes", "working_dtype"]

FORCEABLE = {
    "separability": "a mapping with keys ``\"ho_kashyap\"``, ``\"linprog\"``: the solvers "
                    "``linsep.check_separability`` decides its verdicts with, in place of linsep's Ho–Kashyap and "
                    "SciPy's ``linprog`` (their candidates are checked all the same)",
    "plot_trace": "a callable that ``linsep trace --plot`` draws with, in place of "
                  "``linsep.inspection.plot_trace`` (a wrapper observes what the command draws)",
}
"""The paths :func:`forced_plan` forces: each entry's name and what it replaces."""

_FORCED = contextvars.ContextVar("linsep_forced_plan", default=MappingProxyType({}))


@contextlib.contextmanager
def forced_plan(**entries):
    """Force code paths inside this block (tests, benchmarks); outside it nothing changes.

    The entries (:data:`FORCEABLE`) reach the code that reads them (:func:`forced`) however deep below the
    caller, in this context (a context variable: whether a thread started inside the block sees them is Python's
    choice, ``sys.flags.thread_inherit_context``).
    Nested blocks add to the entries of the blocks around them.

    Parameters
    ----------
    **entries
        ``separability``: a mapping ``{"ho_kashyap": f, "linprog": g}`` (either key may be left out) of the
        solvers ``linsep.check_separability`` decides with; ``plot_trace``: what ``linsep trace --plot`` draws
        with.

    Raises
    ------
    ValueError
        For a name that is not in :data:`FORCEABLE`.
    """
    unknown = set(entries) - set(FORCEABLE)
    if unknown:
        raise ValueError(f"forced_plan: unknown entries {sorted(unknown)}; known: {sorted(FORCEABLE)}")
    token = _FORCED.set(MappingProxyType({**_FORCED.get(), **entries}))
    try:
        yield
    finally:
        _FORCED.reset(token)


def forced(name, default=None):
    """The entry ``name`` of the :func:`forced_plan` block around the caller, or ``default`` outside one.

    Parameters
    ----------
    name : str
        One of :data:`FORCEABLE`.
    default : object, default=None
        What the caller uses when no block forces ``name``.

    Returns
    -------
    object
    """
    if name not in FORCEABLE:
        raise ValueError(f"forced: unknown entry {name!r}; known: {sorted(FORCEABLE)}")
    return _FORCED.get().get(name, default)

FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
READS_FLOAT32 = (FLOAT64, FLOAT32)
"""The types of a path that reads float32 data as they are (float64 first: anything else is converted to it)."""
FLOAT64_ONLY = (FLOAT64,)
"""The types of a path that works in float64 whatever the data: kernel and Kozinec estimators, dask's
per-block tasks, the array-API design's weights (returned in the input's type by the estimator)."""


def working_dtype(X, accepted=READS_FLOAT32, *, stream=None, xp=None):
    """The type a fit on ``X`` works in: the type of the data it reads and of the weights it returns.

    Parameters
    ----------
    X : ndarray, sparse matrix, dask array, array-API array or design
        The data (anything with a ``dtype``).
    accepted : tuple of numpy dtypes, default=(float64, float32)
        The types the path reads as they are; the first is the one every
        other type is converted to.
    stream : numpy dtype or None, default=None
        The type a ``partial_fit`` stream fixed at its first chunk: later
        chunks are converted to it (float32 stays float32).
    xp : array namespace or None, default=None
        The namespace of an array-API ``X`` (its dtypes are not NumPy's).

    Returns
    -------
    numpy.dtype
        float32 when ``X`` (or the stream) is float32 and float32 is
        accepted, else ``accepted[0]``.
    """
    accepted = tuple(np.dtype(t) for t in accepted)
    if stream is not None and np.dtype(stream) in accepted:
        return np.dtype(stream)
    dtype = getattr(X, "dtype", None)
    if xp is not None:
        dtype = FLOAT32 if dtype == xp.float32 else FLOAT64
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return accepted[0]
    return dtype if dtype in accepted else accepted[0]


def validation_dtypes(accepted, stream=None):
    """The ``dtype`` argument of scikit-learn's validation for a path that accepts ``accepted``.

    scikit-learn keeps a type in the list and converts any other to the first,
    which is :func:`working_dtype`'s rule for inputs that have no ``dtype``
    yet (lists, data frames); a stream's first type fixes the later chunks'.

    Parameters
    ----------
    accepted : tuple of numpy dtypes
        The types the path reads as they are (the first: the conversion target).
    stream : numpy dtype or None, default=None
        The type fixed by a ``partial_fit`` stream's first chunk.

    Returns
    -------
    list of numpy.dtype or numpy.dtype
    """
    if stream is not None and np.dtype(stream) in tuple(np.dtype(t) for t in accepted):
        return np.dtype(stream)
    return list(accepted)


def dtype_plan(dtype, **more):
    """The ``extra["plan"]`` entry of a solver's result: the working type (by name) and the other choices.

    Parameters
    ----------
    dtype : numpy dtype
        The working type (:func:`working_dtype`).
    **more
        Further choices of the plan (driver, factorisation, threads).

    Returns
    -------
    dict
    """
    return {"dtype": np.dtype(dtype).name, **more}


def fit_plan(extra, dtype):
    """The plan of one solved problem, as an estimator keeps it (``_fit_plans``): ``extra["plan"]`` (or the bare
    :func:`dtype_plan` of ``dtype`` for solvers that record none) with the threads of the sparse CG products
    (``extra["cg_product_threads"]``) where a conjugate-gradient solver ran.

    Parameters
    ----------
    extra : dict or None
        A :class:`~linsep._core.result.SolveResult`'s ``extra``.
    dtype : numpy dtype
        The working type of a solver that records no plan.

    Returns
    -------
    dict
    """
    extra = extra or {}
    plan = dict(extra.get("plan") or dtype_plan(dtype))
    if "cg_product_threads" in extra:
        plan["cg_product_threads"] = extra["cg_product_threads"]
    return plan
