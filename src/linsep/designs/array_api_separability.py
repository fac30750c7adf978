"""``check_separability`` on array-API input: Ho–Kashyap and the hyperplane's check on the input's device.

With ``sklearn.set_config(array_api_dispatch=True)``, an ``X`` of another
array-API namespace (PyTorch on any device, CuPy, array-api-strict) is
decided where it lives.  :class:`DeviceSeparability` validates it as the
estimators' device fits do (:class:`~linsep.designs.array_api_fit.ArrayAPIFit`:
shape, finite values, the columns' range, the classes: the distinct labels
are the one copy of the labels to the host) and offers one
:class:`DeviceSeparabilityProblem` per two-class problem (a class against
the rest, or a pair of classes).  Each problem is the NumPy function's:

* Ho–Kashyap (``b0 = 1``, ``tol = 0``, stopping at separation) on the
  row-normalised design :math:`Y_i / \\lVert Y_i \\rVert`, run by the one
  namespace pass on the device (:class:`~linsep.designs.array_api.ArrayAPIDesign`
  with its rows scaled: ``X`` is not copied; one ``p × p`` Gram matrix for
  every class against the rest);
* a separating ``W`` is checked on the device (:meth:`DeviceSeparabilityProblem.hyperplane`):
  every :math:`y_i (w \\cdot x_i + w_0)` finite and above the rounding bound
  :math:`\\tau_i` of :func:`linsep._core.certificates.side_tolerance`,
  computed in float64 block by block (:data:`~linsep.designs.array_api.GRAM_ROW_BLOCKS`
  blocks: the device holds a float64 copy of one block of rows, never of
  ``X``); two numbers are read.

What crosses to the host, each an explicit copy
(:func:`~linsep.designs.array_api.host_copy`): per Ho–Kashyap iteration the
pass's statistics (as in the device fits); per problem the ``p`` weights
and the hyperplane check's two numbers.  **Only when Ho–Kashyap on the
device does not end with a checked hyperplane** (a candidate proof of
non-separability, or the budget spent) are the rows brought to the host:
``X`` (in its own type, float64 on the host) and the labels, once per call (:meth:`DeviceSeparability.host_rows`,
shared by every problem that needs them), with the candidate ``u`` (``N``
numbers) and, for a pair of classes, its rows (``N`` booleans); the exact
check of the proof (and its reduction to ``d + 2`` rows), or the linear
programs that decide what Ho–Kashyap left open, then run on the host as for
NumPy input (scipy's HiGHS has no device).  Columns that the NumPy function
would rescale by powers of two are refused (rescale ``X`` first).
"""

from __future__ import annotations

import numpy as np

from linsep._core.certificates import rounding_bound
from linsep.designs.array_api import GRAM_ROW_BLOCKS, ArrayAPIDesign, host_copy, read_scalars, to_host
from linsep.designs.backend import is_array_api_input

__all__ = ["DeviceSeparability", "DeviceSeparabilityProblem", "separability_where_data_live"]

OWNER = "check_separability"


def separability_where_data_live(X, y):
    """:class:`DeviceSeparability` for array-API ``X``; ``None`` for data in memory (decided there).

    An array-API ``y`` with an ``X`` in memory is refused in one line
    (nothing is copied implicitly): pass both on the device, or both as NumPy.
    """
    if is_array_api_input(X):
        return DeviceSeparability(X, y)
    if y is not None and is_array_api_input(y):
        raise TypeError(f"{OWNER} got array-API labels y with an X that is not: pass X on y's device too, or copy y "
                        "to NumPy yourself (tensor.cpu().numpy(), cupy.asnumpy(a))")
    return None


class DeviceSeparability:
    """The data of one :func:`~linsep.check_separability` call on their device (see the module).

    Attributes
    ----------
    classes : ndarray
        The distinct labels, sorted (NumPy: the one copy of the labels made to find them).
    n_samples : int
    """

    def __init__(self, X, y):
        from linsep.designs.array_api_fit import ArrayAPIFit

        data = ArrayAPIFit(X, y, OWNER)  # shape, finite, the columns' range, the labels on X's device
        self.xp, self.device, self.X, self.labels = data.xp, data.device, data.X, data.labels
        self.classes = data.classes
        self.n_samples = int(self.X.shape[0])
        self._host = None
        self._gram = None

    def one_vs_rest(self, positive):
        """The problem of ``positive`` (a label of :attr:`classes`) against every other row."""
        return DeviceSeparabilityProblem(self, self.X, self.labels == positive.item(), rows=None, shared_gram=True)

    def pair(self, negative, positive):
        """The problem of the rows of two classes (``positive`` on the positive side).

        Its rows are a copy on the device (boolean indexing), made for this
        problem only.
        """
        labels = self.labels
        rows = (labels == negative.item()) | (labels == positive.item())
        return DeviceSeparabilityProblem(self, self.X[rows], labels[rows] == positive.item(), rows=rows,
                                         shared_gram=False)

    def host_rows(self):
        """``(X, labels)`` on the host, ``X`` as float64: one explicit copy of each (``X`` in its type), once per call."""
        if self._host is None:
            self._host = (to_host(self.X, self.xp), host_copy(self.labels, self.xp))
        return self._host


class DeviceSeparabilityProblem:
    """One two-class problem on the device: the row-normalised design, its Ho–Kashyap run and checks.

    ``positive`` is a boolean device vector over the problem's rows ``X``;
    ``rows`` (a boolean device vector over all rows, or ``None``: all of
    them) places them among the call's rows.
    """

    def __init__(self, data, X, positive, *, rows, shared_gram):
        xp = data.xp
        self.data, self.xp, self.X, self.rows = data, xp, X, rows
        one = xp.ones(positive.shape, dtype=X.dtype, device=data.device)
        self.signs = xp.where(positive, one, -one)
        signed = ArrayAPIDesign(X, self.signs, xp, data.device)
        # ‖Y_i‖ = ‖(x_i, 1)‖: positive row scaling changes neither separability nor any certificate's sign,
        # and keeps Ho–Kashyap as well scaled as the NumPy function's row-normalised Y (the labels carry it)
        norms = xp.sqrt(_row_squares(xp, X) + 1.0)
        self.design = signed.scaled(1.0 / norms)
        self._shared_gram = shared_gram

    def solve(self, ho_kashyap, max_iter):
        """Ho–Kashyap as the NumPy function runs it (``ho_kashyap``: the solver to call), on the device."""
        gram = None
        if self._shared_gram:  # every class against the rest has the same YᵀY: row scales squared, signs gone
            if self.data._gram is None:
                self.data._gram = self.design.gram()
            gram = self.data._gram
        return ho_kashyap(self.design, b0=1.0, max_iter=max_iter, tol=0.0, stop_at_separation=True, gram=gram)

    def hyperplane(self, W):
        """``(coef, intercept, margin)`` (NumPy, floats) if ``W`` strictly separates the rows, checked here; else ``None``.

        Each row must have a finite :math:`y_i f(x_i)` above
        :math:`\\tau_i = \\gamma_{d+1} (\\sum_j |x_{ij}| |w_j| + |w_0|)`
        (float64 scores of the float64 weights, block by block): the test of
        the NumPy function (``separates`` with ``side_tolerance``).  The
        margin is :math:`\\min_i y_i f(x_i) / \\lVert w \\rVert`.
        """
        W = np.asarray(W, dtype=np.float64)
        bias = float(W[-1])
        if not np.all(np.isfinite(W)):
            return None
        xp, X = self.xp, self.X
        coef = xp.asarray(W[:-1], device=self.data.device)
        magnitude = xp.abs(coef)
        gamma = rounding_bound(W.shape[0], np.float64)
        n = X.shape[0]
        step = max(1, -(-n // GRAM_ROW_BLOCKS))
        apart, smallest = None, None
        for start in range(0, n, step):
            stop = min(n, start + step)
            block = xp.astype(X[start:stop, :], xp.float64)
            signed = xp.astype(self.signs[start:stop], xp.float64) * (block @ coef + bias)
            tolerance = gamma * (xp.abs(block) @ magnitude + abs(bias))
            ok = xp.all(xp.isfinite(signed) & (signed > tolerance))
            low = xp.min(signed)
            apart = ok if apart is None else apart & ok
            smallest = low if smallest is None else xp.minimum(smallest, low)
        separated, least = read_scalars(xp, [apart, smallest])
        if not separated:
            return None
        coef = W[:-1].copy()
        largest = np.abs(coef).max(initial=0.0)
        norm = 0.0 if largest == 0 else float(largest * np.linalg.norm(coef / largest))
        return coef, bias, (float(least / norm) if norm > 0 else np.inf)

    def host_problem(self, certificate):
        """``(X, signs, u, rows)`` on the host: this problem's rows, labels ±1, the candidate ``u`` and row indices.

        ``X`` and the labels come from :meth:`DeviceSeparability.host_rows`
        (one copy per call); ``certificate`` (the device candidate for the
        row-normalised rows, or ``None``) is copied (``N`` numbers), and a
        pair's rows (``N`` booleans); ``rows`` is ``None`` for all rows.
        """
        X, labels = self.data.host_rows()
        rows = None
        if self.rows is not None:
            rows = np.flatnonzero(host_copy(self.rows, self.xp))
            X = X[rows]
        signs = to_host(self.signs, self.xp)
        u = None if certificate is None else to_host(certificate, self.xp)
        return X, signs, u, rows


def _row_squares(xp, X):
    """``Σ_j x_ij²`` in float64, block by block (no float64 copy of all of ``X`` beside it)."""
    n = X.shape[0]
    step = max(1, -(-n // GRAM_ROW_BLOCKS))
    parts = []
    for start in range(0, n, step):
        block = xp.astype(X[min(n, start):min(n, start + step), :], xp.float64)
        parts.append(xp.sum(block * block, axis=1))
    return xp.concat(parts)
