"""Which backend holds some data, by type name only (a leaf module: it imports nothing of linsep).

The estimators hand dask collections to :mod:`linsep.designs.dask`, which
is imported only then, so ``import linsep`` never imports dask.
"""

from __future__ import annotations

__all__ = ["is_dask_collection"]


def is_dask_collection(obj):
    """Whether ``obj`` is a dask collection, by its type's module name (dask itself is not imported)."""
    module = type(obj).__module__ or ""
    return module == "dask" or module.startswith("dask.")
