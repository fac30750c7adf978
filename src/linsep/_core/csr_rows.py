"""One row of a CSR matrix in compiled loops: its score ``[x_i, 1] · w`` and the update ``w += step · [x_i, 1]``.

Shared by the sequential epochs of the perceptron (:mod:`linsep.solvers.perceptron.loops`) and of LMS
(:mod:`linsep.solvers.lms`).
"""

from __future__ import annotations

from numba import njit

__all__ = ["FAST", "csr_row_add", "csr_row_score"]

FAST = {"reassoc", "contract", "arcp", "nsz"}
"""The fast-math flags of the sequential loops, as ``linsep.solvers.ho_kashyap.rows`` (reassociation vectorises the
dot products; no nnan/ninf)."""


@njit(cache=True, nogil=True, fastmath=FAST)
def csr_row_score(indptr, indices, data, i, w):
    """``[x_i, 1] · w`` for row ``i`` of a CSR matrix (bias last in ``w``)."""
    s = w[w.shape[0] - 1]
    for p in range(indptr[i], indptr[i + 1]):
        s += data[p] * w[indices[p]]
    return s


@njit(cache=True, nogil=True, fastmath=FAST)
def csr_row_add(indptr, indices, data, i, w, step):
    """``w += step · [x_i, 1]`` for row ``i`` of a CSR matrix, in place."""
    for p in range(indptr[i], indptr[i + 1]):
        w[indices[p]] += step * data[p]
    w[w.shape[0] - 1] += step
