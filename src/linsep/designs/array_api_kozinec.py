"""Gram columns of array-API data on their device, in float64, for Kozinec and Schlesinger–Kozinec.

The linear Kozinec and SK solvers run on inner products
(:mod:`linsep.solvers.kozinec`): one step needs one column
:math:`G_{:, j} = \\tilde X \\tilde x_j` of the Gram matrix of the rows
:math:`\\tilde x_i = x_i - c` (:math:`c` the mean row for the two-hull
formulation, none for the augmented one).  The NumPy fit works on a float64
copy of ``X`` (float32 data are converted by its validation), centred in a
second copy; :class:`DeviceGramColumns` computes the same numbers on the
device without either copy of the whole of ``X``: the rows are taken a block
at a time (:data:`COLUMN_ROW_BLOCKS` blocks where ``X`` is large), each block
converted to float64 and centred, then multiplied.  A float32 ``X`` thus stays
float32 — the device holds at most one float64 block (a sixteenth of ``X``'s
bytes), centred in place, beside it — and the columns are the float64
ones of the NumPy fit (the products of float32 values are exact in float64),
so that the solvers' touch test and rounding floors, which compare to float64
rounding, mean what they mean in memory.  Float64 data without centring are
multiplied as they are (one matrix-vector product, no block).  Nothing
crosses to the host here.
"""

from __future__ import annotations

__all__ = ["COLUMN_ROW_BLOCKS", "DeviceGramColumns"]

COLUMN_ROW_BLOCKS = 16
"""The blocks of rows a column is computed over where ``X`` holds more than :data:`ONE_BLOCK` numbers (twice as
many for float32): the float64 (centred) copy of a block, at most a sixteenth of ``X``'s bytes, never of ``X``,
is what the device holds beside ``X``."""

ONE_BLOCK = 1 << 16
"""Up to this many entries of ``X`` (512 KiB in float64) the float64 (centred) copy is made whole, once per
column: a small temporary, and one product instead of sixteen."""


class DeviceGramColumns:
    """``G[:, j] = (X - c)(x_j - c)`` and ``(X - c)ᵀ v`` of ``X`` (namespace ``xp``) in float64 on its device.

    Parameters
    ----------
    X : array of shape (N, d)
        The samples, of any real floating type; never copied whole.
    xp : namespace
        ``X``'s namespace (scikit-learn's ``get_namespace``).
    device : device
        ``X``'s device.
    centred : bool
        Subtract the mean row :math:`c` (float64, from float64 sums of the
        rows): the two-hull formulation's centring.  ``False``: :math:`c = 0`.
    """

    def __init__(self, X, xp, device, *, centred):
        self.X, self.xp, self.device = X, xp, device
        n, d = X.shape
        self.float64 = xp.float64
        self._plain = X.dtype == xp.float64 and not centred  # one product, no block
        # the float64 block at most 1/COLUMN_ROW_BLOCKS of X's bytes: twice as many blocks for float32
        widening = max(1, 8 // _itemsize(xp, X.dtype))
        blocks = 1 if n * d <= ONE_BLOCK else min(n, COLUMN_ROW_BLOCKS * widening)
        step = -(-n // blocks)
        self._bounds = [(start, min(n, start + step)) for start in range(0, n, step)]
        self.center = None
        if centred:
            total = None
            for block in self._blocks(None):
                part = xp.sum(block, axis=0)
                total = part if total is None else total + part
            self.center = total / float(n)

    def _blocks(self, center):
        """The float64 rows, a block at a time (centred by ``center`` when given)."""
        xp = self.xp
        for start, stop in self._bounds:
            rows = xp.astype(self.X[start:stop, :], self.float64)  # a copy (astype copies by default)
            if center is not None:
                rows -= center  # in place: the copy is this block's own
            yield rows

    def row(self, j):
        """The float64 (centred) row ``x_j - c``: ``d`` numbers on the device."""
        xp = self.xp
        row = xp.astype(self.X[j, :], self.float64)
        return row if self.center is None else row - self.center  # (the same rounding as the blocks' rows)

    def column(self, j):
        """``G[:, j]`` (N numbers, float64, on the device): one pass over ``X``."""
        if self._plain:
            return self.X @ self.X[j, :]
        v = self.row(j)
        parts = [block @ v for block in self._blocks(self.center)]
        return parts[0] if len(parts) == 1 else self.xp.concat(parts)

    def rmatvec(self, v):
        """``(X - c)ᵀ v`` for a float64 ``v`` of N numbers: ``d`` numbers, float64, on the device."""
        if self._plain:
            return self.X.T @ v
        total = None
        for (start, stop), block in zip(self._bounds, self._blocks(self.center)):
            part = block.T @ v[start:stop]
            total = part if total is None else total + part
        return total


def _itemsize(xp, dtype):
    """Bytes per entry of a real floating ``dtype`` of ``xp``."""
    return xp.finfo(dtype).bits // 8
