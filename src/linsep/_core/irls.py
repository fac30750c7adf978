"""IRLS weights of the absolute-error criterion (MHKA, HKESA), written once.

Łęski's reweighting minimises ``Σ|e_i|`` as a sequence of weighted least
squares: ``|e_i| = e_i² / |e_i|``, so each iteration solves with
``D = diag(1/|e_i|)``, floored where the error vanishes.  The compiled
Ho–Kashyap segment calls :func:`irls_weights_into`; every design (in memory,
array API, dask blocks) calls :func:`irls_weights`; both run the same source.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["irls_weights", "irls_weights_into"]


def _irls_weights_into(E, irls_floor, largest, D):
    """``D = 1 / max(|E|, floor · largest + tiny)`` written into ``D`` (see :func:`irls_weights`).

    Written with the division's ``out`` argument, which numba compiles without
    the broadcasting checks of a slice assignment ``D[:] = …`` (a third of the time).
    """
    np.divide(1.0, np.maximum(np.abs(E), irls_floor * largest + np.finfo(np.float64).tiny), D)


irls_weights_into = njit(cache=True, nogil=True)(_irls_weights_into)


def irls_weights(E, irls_floor, largest=None, *, xp=None):
    """IRLS weights of the absolute-error criterion: ``D_i = 1 / max(|E_i|, floor · max|E| + tiny)``.

    Łęski's reweighting for ``Σ|e_i|``: ``|e_i| = e_i² / |e_i|``; the relative
    floor keeps the weights finite where the error vanishes.  ``largest`` is
    ``max |E|`` over all samples when ``E`` is one block of them (default:
    ``E``'s own maximum).  Runs the rule's source as NumPy (no compilation);
    ``xp``: the namespace of an array-API ``E`` (its weights stay there, of ``E``'s type).
    """
    if xp is not None and xp is not np:
        if largest is None:
            largest = float(xp.max(xp.abs(E)))
        return 1.0 / xp.clip(xp.abs(E), float(irls_floor * largest + np.finfo(np.float64).tiny), None)
    E = np.asarray(E)
    if largest is None:
        largest = float(np.abs(E).max(initial=0.0))
    D = np.empty(E.shape[0])
    _irls_weights_into(E, float(irls_floor), float(largest), D)
    return D
