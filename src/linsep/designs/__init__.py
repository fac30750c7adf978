"""Where the data of a fit live: one :class:`~linsep.designs.base.Design` protocol, one class per place.

The solvers of the Ho–Kashyap family, MSE and the linear LSVM touch the data
only through a design (:mod:`linsep.designs.base`):

* :class:`~linsep.designs.memory.InMemoryDesign` — a NumPy array, a
  :class:`~linsep._core.signed_design.SignedDesign` view or a SciPy sparse matrix; its
  dense form also offers the compiled Ho–Kashyap segment (the fast path);
* :class:`~linsep.designs.dask.DaskDesign` — ``dask.array`` data chunked by
  rows, persisted on the workers (imported only for dask input).

The rule every design follows: ``N``-sized vectors (the margin vector ``B``,
the IRLS weights ``D``, LSVM's ``α``) stay with the data; only ``p = d + 1``
sized vectors, the ``p × p`` Gram matrix and scalars come back to the driver.
"""

from linsep.designs.base import Design
from linsep.designs.memory import InMemoryDesign, as_design

__all__ = ["Design", "InMemoryDesign", "as_design"]
